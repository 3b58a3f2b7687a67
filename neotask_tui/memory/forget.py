"""Forgetting: cut text out of a memory file (or tombstone a transcript chunk) and verify it is gone.

What a user means by "forget X" is the statement about X, not the paragraph around it. So the
passage a query matched is split into *units* — a list item (with its indented continuation lines),
a dated entry, a line of a code block, or a sentence of prose (a sentence runs on to the next line
only when that line starts in lower case) — and only the units that contain every word of the query
are cut (as the lexical index reads words: case, word endings and words such as "the" aside). A unit
that holds some of them, or that is only close in meaning, is never cut: "forget Thursday standup"
must not take "I deploy on Thursdays" with it, and what is cut is gone for good. Forgetting by id
cuts the passage's own lines (never a line outside it).
Headings are kept. Every line that lost text is named in the receipt with exactly what it lost, so
a cut the user did not mean is in front of them (nothing else keeps a copy: it was to be forgotten).

A transcript message is tombstoned (re-indexing skips it) and every row of its session is rebuilt
without it, so the neighbours that carried it as context (``etext``, ``ctx``) are re-embedded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from neotask_tui.memory.files import read_tombstones, write_tombstones
from neotask_tui.memory.index.chunking import FENCE, HEADING, chunk_markdown, strip_entry_tags
from neotask_tui.memory.index.indexer import Indexer, forgotten_key
from neotask_tui.memory.index.store import ChunkStore
from neotask_tui.memory.types import ForgetReceipt, MemoryFiles, MemorySearch
from neotask_tui.storage.atomic import atomic_write_text
from neotask_tui.text import lexical
from neotask_tui.text.secrets import redact

_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+\S")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)")
_OPEN_END = re.compile(r"[.!?…:;]+[\"'”’)\]]*\s*$")


class Forgetting(MemoryFiles, MemorySearch, Protocol):
    """What forgetting needs of the memory service: its files, its search (to verify), and the
    store and indexer it works through (the service satisfies it structurally)."""

    @property
    def indexer(self) -> Indexer:
        """The indexer bound to the store."""
        ...

    @property
    def store(self) -> ChunkStore:
        """The chunk store."""
        ...


@dataclass
class Unit:
    """One statement of a memory file: where it is (``(line, start, end)`` spans) and its text."""

    spans: list[tuple[int, int, int]] = field(default_factory=list)

    def text(self, lines: list[str]) -> str:
        return " ".join(lines[n - 1][a:b].strip() for n, a, b in self.spans)


def _sentences(line: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of one line (the last one may be open)."""
    out: list[tuple[int, int]] = []
    start = len(line) - len(line.lstrip())
    for m in _SENTENCE_END.finditer(line):
        if m.end() > start and line[start:m.end()].strip():
            out.append((start, m.end()))
        start = m.end()
        while start < len(line) and line[start].isspace():
            start += 1
    if line[start:].strip():
        out.append((start, len(line.rstrip())))
    return out


def units(lines: list[str], lo: int, hi: int) -> list[Unit]:
    """The units of lines ``lo..hi`` (1-based, inclusive) of a file's ``lines``."""
    out: list[Unit] = []
    in_fence = False
    item: Unit | None = None  # an open list item / entry
    item_indent = 0
    sentence: Unit | None = None  # a sentence open at the end of the previous line
    for n in range(1, min(hi, len(lines)) + 1):
        line = lines[n - 1]
        if FENCE.match(line):
            in_fence = not in_fence
            item = sentence = None
            continue
        if n < lo:
            continue
        if in_fence:
            if line.strip():
                out.append(Unit([(n, 0, len(line))]))
            continue
        if not line.strip() or HEADING.match(line):
            item = sentence = None
            continue
        bullet = _BULLET.match(line)
        indent = len(line) - len(line.lstrip())
        if bullet:
            item = Unit([(n, 0, len(line))])
            item_indent = len(bullet.group(1))
            sentence = None
            out.append(item)
            continue
        if item is not None and indent > item_indent:
            item.spans.append((n, 0, len(line)))
            continue
        item = None
        spans = _sentences(line)
        for k, (a, b) in enumerate(spans):
            if k == 0 and sentence is not None and line[a:a + 1].islower():
                sentence.spans.append((n, a, b))
            else:
                out.append(Unit([(n, a, b)]))
        last = line.rstrip()
        sentence = out[-1] if spans and not _OPEN_END.search(last) else None
    return out


def query_words(query: str) -> set[str]:
    """The words a statement must hold for ``query`` to cut it: all of the query's terms."""
    return set(lexical.terms(query))


def _holds(text: str, words: set[str]) -> bool:
    return bool(words) and words <= set(lexical.terms(strip_entry_tags(text)))


def _choose(found: list[Unit], lines: list[str], query: str) -> list[Unit]:
    """The units a query asks to forget: those holding every word of it (see the module docstring)."""
    words = query_words(query)
    return [u for u in found if _holds(u.text(lines), words)]


def holds_query(svc: Forgetting, agent_id: str, row: dict[str, Any], query: str) -> bool:
    """Whether ``row``'s passage has a statement (a transcript row: its message) holding every word
    of ``query``, i.e. whether a forget by that query may cut anything in it."""
    if row["source"] == "transcript":
        return _holds(str(row["text"]), query_words(query))
    lines = svc.read(agent_id, str(row["path"])).splitlines()
    return bool(_choose(units(lines, int(row["line_start"]), int(row["line_end"])), lines, query))


def _cut(lines: list[str], chosen: list[Unit]) -> tuple[list[str], list[tuple[int, str]], list[int]]:
    """``(new lines, [(line, text cut from it)], lines only partly cut)``."""
    per_line: dict[int, list[tuple[int, int]]] = {}
    for u in chosen:
        for n, a, b in u.spans:
            per_line.setdefault(n, []).append((a, b))
    removed: list[tuple[int, str]] = []
    partial: list[int] = []
    new_text: dict[int, str | None] = {}
    for n, spans in sorted(per_line.items()):
        line = lines[n - 1]
        spans.sort()
        cut = " ".join(line[a:b].strip() for a, b in spans)
        rest = ""
        prev = 0
        for a, b in spans:
            left = line[prev:a]
            rest = (rest.rstrip() + " " + left.strip()) if rest.strip() and left.strip() else rest + left
            prev = b
        tail = line[prev:]
        if tail.strip():
            rest = (rest.rstrip() + " " + tail.strip()) if rest.strip() else rest + tail.lstrip()
        if rest.strip():
            new_text[n] = rest.rstrip()
            partial.append(n)
        else:
            new_text[n] = None
        removed.append((n, cut if rest.strip() else line))
    out: list[str] = []
    after_cut = False
    for n, line in enumerate(lines, 1):
        if n in new_text:
            got = new_text[n]
            if got is None:
                after_cut = True
                continue
            line = got
        if after_cut and not line.strip() and (not out or not out[-1].strip()):
            after_cut = False  # the cut left two blank lines (or one at the top): keep one
            continue
        after_cut = False
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out, removed, partial


def _own_units(svc: Forgetting, row: dict[str, Any], text: str, lines: list[str]) -> list[Unit]:
    """Everything in the passage's own lines; for a passage that is only part of a very long line,
    the sentences of that line the passage holds."""
    lo, hi = int(row["own_start"]) or int(row["line_start"]), int(row["line_end"])
    found = units(lines, lo, hi)
    if lo != hi:
        return found
    idx = svc.indexer
    drafts = chunk_markdown(redact(text, keep_lines=True)[0], size=idx.size, overlap=idx.overlap, count=idx.count)
    mine = next((d for d in drafts if d.hash == row["hash"] and d.line_start == lo), None)
    whole = mine is None or all(redact(lines[n - 1], keep_lines=True)[0] == t for n, t in mine.lines)
    if whole:
        return found
    body = str(row["text"])
    inside = [u for u in found if redact(u.text(lines))[0].strip() in body]
    if not inside:
        raise ValueError(
            f"that passage is only part of line {lo} of {row['path']}, which is very long; "
            "forget it by a query or edit the file")
    return inside


def _forget_transcript(svc: Forgetting, agent_id: str, row: dict[str, Any], query: str,
                       by_id: bool) -> ForgetReceipt:
    role = str(row["heading"]).rsplit(" · ", 1)[-1]
    events = list(row["event_ids"] or [0])
    key = forgotten_key(int(events[0]), role, str(row["text"]))
    ws = svc.workspace(agent_id)
    tombstones = read_tombstones(ws) | {str(row["hash"]), key}
    write_tombstones(ws, tombstones)
    snap = svc.store.snapshot()
    # the same message in every session that holds it (a compaction copy is in two archives)
    copies = [
        i for i in range(len(snap.ids))
        if snap.cols["agent_id"][i] == agent_id and snap.cols["source"][i] == "transcript"
        and snap.cols["text"][i] == row["text"] and list(snap.cols["event_ids"][i] or [0]) == events
    ]
    ids = sorted({snap.ids[i] for i in copies} | {str(row["id"])})
    rewritten: list[str] = []
    for sid in sorted({str(snap.cols["session_id"][i]) for i in copies} | {str(row["session_id"])}):
        rewritten.extend(svc.indexer.rewrite_transcript(agent_id, sid, tombstones))
    after = svc.store.snapshot()
    svc.store.delete_ids([i for i in ids if i in after.index])  # whatever a rebuild could not drop
    verified = verify_gone(svc, agent_id, query if not by_id else str(row["text"])[:200], [str(row["text"])])
    return ForgetReceipt([str(row["text"])], ids, str(row["path"]), (0, 0), True, verified,
                         rewritten_ids=rewritten)


def forget_chunk(svc: Forgetting, agent_id: str, row: dict[str, Any], query: str) -> ForgetReceipt:
    """Remove ``row``'s text from its source and the index, then check a search cannot find it.

    Args:
        svc: The memory service (its lock is held by the caller).
        agent_id: The agent.
        row: The chunk row to forget.
        query: What the user asked to forget (the id itself, or a query).

    Returns:
        The receipt, naming every line that lost text and what it lost.

    Raises:
        ValueError: when nothing in the passage can be cut.
    """
    by_id = query.strip() == row["id"]
    if row["source"] == "transcript":
        return _forget_transcript(svc, agent_id, row, query, by_id)

    rel = row["path"]
    target = svc.resolve(agent_id, rel)
    text = svc.read(agent_id, rel)  # never through a link or a FIFO; a Latin-1 file is saved as UTF-8
    lines = text.splitlines()
    if by_id:
        chosen = _own_units(svc, row, text, lines)
    else:
        chosen = _choose(units(lines, int(row["line_start"]), int(row["line_end"])), lines, query)
    if not chosen:
        raise ValueError(f"nothing to forget in {rel}:{row['line_start']}-{row['line_end']} (headings are kept)")
    removed = [u.text(lines) for u in chosen]
    kept, removed_lines, partial = _cut(lines, chosen)
    newline = "\r\n" if "\r\n" in text else "\n"
    new = newline.join(kept) + newline if kept else ""
    old_ids = [
        r["id"] for r in svc.store.rows_where(
            f"agent_id = '{agent_id.replace(chr(39), chr(39) * 2)}' AND path = '{rel.replace(chr(39), chr(39) * 2)}'",
            ["id"],
        )
    ]
    atomic_write_text(target, new)
    svc.sync(agent_id, only=[rel])
    snap = svc.store.snapshot()
    gone = [i for i in old_ids if i not in snap.index]
    verified = verify_gone(svc, agent_id, query if not by_id else removed[0][:200], removed)
    nums = [n for n, _ in removed_lines]
    return ForgetReceipt(removed, gone, rel, (min(nums), max(nums)), False, verified,
                         removed_lines=removed_lines, partial_lines=partial)


def verify_gone(mem: MemorySearch, agent_id: str, query: str, texts: Sequence[str]) -> bool:
    """Whether a search for ``query`` and for each of ``texts`` returns none of ``texts`` any more."""
    probes = [query, *texts]
    for probe in probes:
        for h in mem.search(probe[:500], agent_id=agent_id, k=10, sources=("memory", "transcript")):
            if any(t.strip() and t.strip() in h.text for t in texts):
                return False
    return True
