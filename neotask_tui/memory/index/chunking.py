"""Markdown chunking by tokens that respects headings, paragraphs and dated entries.

A memory file is parsed into *blocks*: heading lines, paragraphs (a fenced code block stays one
paragraph) and dated entries written by :func:`format_entry`::

    - 2025-06-01 14:03 [inbox scope=project:foo] Prefers dark themes.
      continuation lines are indented by two spaces

Blocks are packed into chunks of at most ``size`` tokens. A heading always starts a new chunk, and a
chunk never mixes entries of different source or scope (so scope filters stay exact). When a chunk
is closed only because it is full, the next one starts with the last ``overlap`` tokens of lines
of the previous one. A block larger than ``size`` is split by lines, and a huge line by words.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from neotask_tui.text.tokens import count_text
from neotask_tui.tuning import MEMORY_CHUNK_OVERLAP, MEMORY_CHUNK_TOKENS

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
ENTRY_RE = re.compile(
    r"^- (\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?) \[([a-z]+)(?: scope=(\S+))?\] ?"
)
_WORDS = re.compile(r"\w+|[^\w\s]")


def approx_tokens(text: str) -> int:
    """Rough cl100k token estimate (no tokenizer: for tests and tools that want a cheap count)."""
    n = 0
    for tok in _WORDS.findall(text):
        if tok.isascii():
            n += 1 + len(tok) // 6
        else:
            n += 1 + len(tok) // 3
    return n


def token_counter() -> Callable[[str], int]:
    """The token counter chunks are measured with: :func:`~neotask_tui.text.tokens.count_text`, the
    one the context budget uses."""
    return count_text


def format_entry(text: str, *, when: datetime, source: str, scope: str | None) -> str:
    """Render one dated entry (as appended by ``MemoryService.add``).

    Args:
        text: Entry body; later lines are indented so the entry stays one block.
        when: Entry time (local).
        source: ``user``, ``inbox``, ``agent``...
        scope: Explicit scope, or ``None`` for the file's default scope.

    Returns:
        The entry lines, ending with a newline.
    """
    body = [ln.rstrip() for ln in text.strip().splitlines()] or [""]
    tag = source if scope is None else f"{source} scope={scope}"
    first = f"- {when:%Y-%m-%d %H:%M} [{tag}] {body[0]}".rstrip()
    rest = [f"  {ln}" if ln else "  " for ln in body[1:]]
    return "\n".join([first, *rest]) + "\n"


REMEMBERED_HEADING = "## Remembered"
"""The section of a memory file that entries written by Neotask (``/remember``, ``memory add``, an
accepted inbox candidate) go to: created at the end of the file when missing, so an entry never
lands under whatever heading a user wrote last (the heading path is part of what is embedded)."""


def _entry_body(lines: list[str]) -> str:
    first = ENTRY_RE.sub("", lines[0], count=1) if ENTRY_RE.match(lines[0]) else lines[0].removeprefix("- ")
    return " ".join([first, *(ln.strip() for ln in lines[1:])])


def _same_text(text: str) -> str:
    """The form two entries are compared in (spacing, case and end punctuation ignored)."""
    return re.sub(r"\s+", " ", text).strip().strip(" .!…;,").casefold()


def find_entry(text: str, body: str) -> tuple[int, int] | None:
    """First and last line (1-based) of an entry or one-line bullet of ``text`` that says ``body``.

    Dates, source and scope tags do not count: the same words already written are the same memory,
    so writing them again would only make a duplicate that ``forget`` removes one copy of.
    """
    want = _same_text(body)
    if not want:
        return None
    for b in parse_blocks(text):
        if b.kind == "entry":
            if _same_text(_entry_body([ln for _, ln in b.lines])) == want:
                return b.lines[0][0], b.lines[-1][0]
        elif b.kind == "para":
            for n, ln in b.lines:
                if ln.startswith("- ") and _same_text(_entry_body([ln])) == want:
                    return n, n
    return None


def place_entry(old: str, entry: str) -> tuple[str, int]:
    """``old`` with ``entry`` appended to its :data:`REMEMBERED_HEADING` section (created if missing).

    Returns:
        The new text and the 1-based line the entry starts on.
    """
    lines = old.splitlines()
    title = REMEMBERED_HEADING.lstrip("#").strip().casefold()
    level = len(REMEMBERED_HEADING) - len(REMEMBERED_HEADING.lstrip("#"))
    start: int | None = None
    end = len(lines)
    fenced = False
    for i, ln in enumerate(lines):
        if FENCE.match(ln):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(ln)
        if m is None:
            continue
        if start is None:
            if len(m.group(1)) == level and m.group(2).casefold() == title:
                start = i
        elif len(m.group(1)) <= level:
            end = i
            break
    new_lines = entry.rstrip("\n").split("\n")
    if start is None:
        head = list(lines)
        while head and not head[-1].strip():
            head.pop()
        head += ["", REMEMBERED_HEADING, ""] if head else [REMEMBERED_HEADING, ""]
        return "\n".join(head + new_lines) + "\n", len(head) + 1
    cut = end
    while cut > start + 1 and not lines[cut - 1].strip():
        cut -= 1
    before = lines[:cut] + ([""] if cut == start + 1 else [])
    after = lines[end:]
    body = before + new_lines + (["", *after] if after else [])
    return "\n".join(body) + "\n", len(before) + 1


@dataclass
class Block:
    """A parsed unit of a markdown file."""

    lines: list[tuple[int, str]]
    heading: str
    kind: str  # "heading" | "para" | "entry"
    source: str = "memory"
    scope: str | None = None
    ts: float | None = None


@dataclass
class ChunkDraft:
    """A chunk before it is embedded: text plus where it came from."""

    text: str
    line_start: int
    own_start: int
    line_end: int
    heading: str
    source: str
    scope: str | None
    ts: float | None
    hash: str = ""
    lines: list[tuple[int, str]] = field(default_factory=list, repr=False)

    def plain_text(self) -> str:
        """The text without entry tags (``- 2025-06-01 14:03 [user]`` becomes ``2025-06-01 14:03``)."""
        return strip_entry_tags(self.text)

    def own_terms_text(self) -> str:
        """The text its ``lex`` terms are made of: :meth:`plain_text` without heading lines
        (:func:`without_headings`; the heading path is its ``ctx``)."""
        return strip_entry_tags(without_headings(self.text))

    def embed_text(self) -> str:
        """What the embedder sees: the heading path gives context to short passages."""
        body = self.plain_text()
        return f"{self.heading}\n{body}" if self.heading else body


def strip_entry_tags(text: str) -> str:
    """Drop the ``- `` bullet and ``[source scope=...]`` tag of entry lines (noise for ranking)."""
    return "\n".join(ENTRY_RE.sub(lambda m: f"{m.group(1)} ", ln) for ln in text.splitlines())


def without_headings(text: str) -> str:
    """A file passage's lines without its heading lines: its own words. A heading counts as the
    passage's heading path (the ``ctx`` terms, and what is embedded), not a second time as words of
    the passage: "## Food" over "- Likes pasta." must not outrank "I am allergic to peanuts." for
    "what food am I allergic to?" by holding "food" twice."""
    return "\n".join(ln for ln in text.splitlines() if not HEADING.match(ln))


def statements(text: str) -> str:
    """What a file passage says: its lines without heading lines and without entry tags (the
    ``- 2025-06-01 14:03 [user]`` stamp included). The same fact under two headings, in ``MEMORY.md``
    and in a ``memory/`` note, or as a dated entry and as a plain line, says the same thing."""
    return "\n".join(ENTRY_RE.sub("", ln) for ln in without_headings(text).splitlines())


def content_hash(*parts: str) -> str:
    """Short stable hash of the given strings."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:24]


def _entry_ts(stamp: str) -> float | None:
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(stamp, fmt).timestamp()
        except ValueError:
            continue
    return None


def parse_blocks(text: str) -> list[Block]:
    """Split markdown into heading / paragraph / entry blocks with 1-based line numbers."""
    lines = text.splitlines()
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    i = 0

    def heading_path() -> str:
        return " > ".join(t for _, t in stack)

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        m = HEADING.match(line)
        if m:
            level = len(m.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, m.group(2)))
            blocks.append(Block([(i + 1, line)], heading_path(), "heading"))
            i += 1
            continue
        em = ENTRY_RE.match(line)
        if em:
            cur = [(i + 1, line)]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                cur.append((i + 1, lines[i]))
                i += 1
            src = "inbox" if em.group(2) == "inbox" else "memory"
            blocks.append(Block(cur, heading_path(), "entry", src, em.group(3), _entry_ts(em.group(1))))
            continue
        cur = []
        in_fence = False
        while i < len(lines):
            ln = lines[i]
            if FENCE.match(ln):
                in_fence = not in_fence
            elif not in_fence and (not ln.strip() or HEADING.match(ln) or ENTRY_RE.match(ln)):
                break
            cur.append((i + 1, ln))
            i += 1
        blocks.append(Block(cur, heading_path(), "para"))
    return blocks


def _split_word(word: str, size: int, count: Callable[[str], int]) -> list[str]:
    """A word longer than ``size`` tokens (a pasted blob without spaces) cut into pieces of at most
    ``size`` tokens each, counted: a character may take several tokens (Han, emoji: two or three in
    cl100k), so a character count alone bounds nothing.

    Each piece is the longest prefix of the rest that fits, found by doubling from ``size``
    characters and then bisecting (a few counts of piece-sized strings per piece).
    """
    if count(word) <= size:
        return [word]
    out: list[str] = []
    i = 0
    while i < len(word):
        rest = len(word) - i
        lo, hi = 0, min(size, rest)  # lo fits (or is 0), hi is the next candidate
        while hi <= rest and count(word[i : i + hi]) <= size:
            lo = hi
            if hi == rest:
                break
            hi = min(2 * hi, rest)
        if lo < rest:  # bisect between a length that fits and one that does not
            bad = hi if lo < hi else lo + 1
            while bad - lo > 1:
                mid = (lo + bad) // 2
                if count(word[i : i + mid]) <= size:
                    lo = mid
                else:
                    bad = mid
        lo = max(lo, 1)  # a single character over budget still moves on
        out.append(word[i : i + lo])
        i += lo
    return out


def _split_line(n: int, line: str, size: int, count: Callable[[str], int]) -> Iterator[tuple[int, str]]:
    """Cut a line longer than ``size`` tokens into pieces of at most about ``size`` tokens.

    Linear: each word is counted once (with the space before it) and the counts are summed, so a
    pasted megabyte is not re-counted word after word; a word longer than ``size`` is cut too.
    """
    cur: list[str] = []
    used = 0
    for w in line.split(" "):
        parts = _split_word(w, size, count)
        for k, part in enumerate(parts):
            glue = " " if k == 0 else ""  # the pieces of one long word are rejoined without spaces
            c = count(glue + part) if cur else count(part)
            if cur and used + c > size:
                yield n, "".join(cur)
                cur, used = [], 0
                c = count(part)
                glue = ""
            cur.append((glue if cur else "") + part)
            used += c
    if cur:
        yield n, "".join(cur)


def chunk_markdown(
    text: str, *, size: int = MEMORY_CHUNK_TOKENS, overlap: int = MEMORY_CHUNK_OVERLAP,
    count: Callable[[str], int] | None = None,
) -> list[ChunkDraft]:
    """Chunk a markdown document.

    Args:
        text: The file contents.
        size: Maximum chunk size in tokens (a hard bound, also for a line without spaces).
        overlap: Tokens of trailing lines repeated at the start of the next chunk when a chunk
            closes because it is full.
        count: Token counter (defaults to :func:`token_counter`).

    Returns:
        Chunks in file order, each with its line range, heading path, source, scope and hash.
    """
    count = count or token_counter()
    out: list[ChunkDraft] = []
    cur: list[tuple[int, str, int]] = []  # (line, text, tokens)
    cur_tokens = 0
    own_start = 0
    attrs: tuple[str, str | None] = ("memory", None)
    heading = ""
    ts: float | None = None

    def flush(with_overlap: bool) -> None:
        nonlocal cur, cur_tokens, own_start, ts
        spill: list[tuple[int, str, int]] = []
        if cur and any(t.strip() for _, t, _ in cur):
            body = "\n".join(t for _, t, _ in cur)
            # The sum of the lines' counts plus one per newline is the estimate; the joined text is
            # what is bounded (a tokenizer may merge across a line break): trailing lines that do
            # not fit move on to the next chunk.
            while len(cur) > 1 and count(body) > size:
                spill.insert(0, cur.pop())
                body = "\n".join(t for _, t, _ in cur)
            src, scope = attrs
            out.append(
                ChunkDraft(
                    text=body,
                    line_start=cur[0][0],
                    own_start=max(own_start, cur[0][0]),
                    line_end=cur[-1][0],
                    heading=heading,
                    source=src,
                    scope=scope,
                    ts=ts,
                    hash=content_hash(heading, src, scope or "", body),
                    lines=[(n, t) for n, t, _ in cur],
                )
            )
        keep: list[tuple[int, str, int]] = []
        if with_overlap and overlap > 0:
            total = 0
            for piece in reversed(cur):
                if total + piece[2] + bool(keep) > overlap or len(keep) + 1 >= len(cur):
                    break
                keep.insert(0, piece)
                total += piece[2] + bool(keep[1:])
        cur = keep
        cur_tokens = sum(p[2] for p in keep) + max(len(keep) - 1, 0)
        own_start = 0
        if not keep:
            ts = None
        for piece in spill:
            add(piece)
        if spill and not with_overlap:
            flush(False)

    def add(piece: tuple[int, str, int]) -> None:
        nonlocal cur_tokens, own_start
        if cur and cur_tokens + 1 + piece[2] > size:  # + 1: the newline that joins it on
            flush(True)
        if not own_start:
            own_start = piece[0]
        cur_tokens += piece[2] + bool(cur)
        cur.append(piece)

    for block in parse_blocks(text):
        if block.kind == "heading":
            if any(not HEADING.match(t) for _, t, _ in cur):
                flush(False)
            attrs = ("memory", None)
            heading = block.heading
            add((block.lines[0][0], block.lines[0][1], count(block.lines[0][1])))
            continue
        battrs = (block.source, block.scope)
        if battrs != attrs:
            if any(not HEADING.match(t) for _, t, _ in cur):
                flush(False)
            attrs = battrs
        heading = block.heading
        pieces = [(n, t, count(t)) for n, t in block.lines]
        btok = sum(p[2] for p in pieces) + len(pieces) - 1  # and the newlines that join them
        if cur and cur_tokens + 1 + btok > size and btok <= size:
            flush(True)
        if block.ts is not None:
            ts = max(ts or 0.0, block.ts)
        for n, t, c in pieces:
            if c > size:
                for m, part in _split_line(n, t, size, count):
                    add((m, part, count(part)))
            else:
                add((n, t, c))
    flush(False)
    return out
