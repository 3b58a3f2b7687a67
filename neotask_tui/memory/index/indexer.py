"""Incremental indexing of an agent's memory files and archived transcripts into the store.

Content hashes decide what to (re)embed: an unchanged file (same mtime and size, or same content
hash) costs nothing; a changed file re-embeds only chunks whose hash is new (moved chunks keep their
vectors and only have their rows rewritten); a deleted file's rows are removed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from neotask_tui.memory.files import SkipFile, Skipped, read_text, scan
from neotask_tui.memory.index.chunking import (
    ChunkDraft,
    chunk_markdown,
    content_hash,
    strip_entry_tags,
    token_counter,
    without_headings,
)
from neotask_tui.memory.search.relevance import unit_parts
from neotask_tui.memory.types import ReindexStats
from neotask_tui.storage.events import redacted_in_conversation, superseded_ids
from neotask_tui.text import lexical
from neotask_tui.text.secrets import redact
from neotask_tui.tuning import EXCHANGE_GAP_SECONDS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from neotask_tui.memory.index.embedder import Embedder
    from neotask_tui.memory.index.store import ChunkStore
    from neotask_tui.memory.search.termvec import TermVectors
    from neotask_tui.storage.events import Event

FILE_SOURCES = ("memory", "inbox")

Progress = Callable[[str, int, int], None]


def default_scope(agent_id: str) -> str:
    """The scope of an agent's own memory."""
    return f"agent:{agent_id}"


DEFAULT_MAX_FILE_BYTES = 1024 * 1024

TRANSCRIPT_MESSAGE_MAX_CHARS: Final = 16 * 1024
"""Characters of one transcript message that are indexed: a longer message (a pasted log or file)
is indexed as its first three quarters and last quarter of this many characters, each cut into
chunks of ``memory.chunk_tokens``; the rest stays in the transcript but is not searchable. A 100 KB
paste was 126 rows to embed (30 s and 3.6 GB inside a turn); capped it is about 26."""

CONTEXT_EXCERPT_CHARS: Final = 1024
"""Characters of a neighbouring message that go into a row's context columns: the end of the
message before it in ``etext`` (the embedder reads 256 tokens of it anyway) and a head-and-tail
excerpt of each neighbour in ``ctx``. A pasted neighbour never puts its whole text into every row."""


TERMS_PROGRESS_ROWS: Final = 1000
"""How often :func:`row_terms` reports progress (rows)."""


class Cancelled(Exception):
    """The service is closing: a long reindex stops at the next file or embedding batch."""


@dataclass
class FileState:
    """What the index knows about one file."""

    mtime: float
    size: int
    hash: str


def chunk_id(agent_id: str, path: str, chash: str, occurrence: int) -> str:
    """Stable chunk id: same text at the same path keeps its id when lines move."""
    return content_hash(agent_id, path, chash, str(occurrence))[:16]


class Indexer:
    """Turns files and transcripts into store rows, embedding only what is new.

    Args:
        store: The chunk store.
        embedder: The embedding model.
        chunk_tokens: Chunk size.
        chunk_overlap: Chunk overlap.
    """

    def __init__(
        self, store: ChunkStore, embedder: Embedder, chunk_tokens: int, chunk_overlap: int,
        terms: TermVectors | None = None, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        self.store = store
        self.max_file_bytes = max_file_bytes
        """Files larger than this are skipped (``memory.max_file_bytes``)."""
        self.cancel = threading.Event()
        """Set to stop a running :meth:`sync_files` at the next file or embedding batch."""
        self.terms = terms
        """Vocabulary word vectors, fed with the text of every row added (see :mod:`.termvec`)."""
        self.embedder = embedder
        self.size = chunk_tokens
        self.overlap = chunk_overlap
        self.count = token_counter()
        self.seen: dict[tuple[str, str], FileState] = {}

    # -- files ----------------------------------------------------------------------------------

    def _known(self, agent_id: str) -> dict[str, list[int]]:
        return self.store.snapshot().files_of(agent_id, FILE_SOURCES)

    def _prev_state(self, agent_id: str, rel: str, rows: list[int]) -> FileState | None:
        prev = self.seen.get((agent_id, rel))
        if prev is None and rows:
            c, r0 = self.store.snapshot().cols, rows[0]
            prev = FileState(c["file_mtime"][r0], c["file_size"][r0], c["file_hash"][r0])
        return prev

    def pending(self, agent_id: str, workspace: Path) -> tuple[list[str], dict[str, int]]:
        """What a sync would look at, from ``lstat`` alone (nothing is read or embedded).

        Returns:
            ``(every file path on disk or in the index, {changed or new file: its size})``.
        """
        known = self._known(agent_id)
        disk = scan(workspace, self.max_file_bytes).files
        changed: dict[str, int] = {}
        for rel, abspath in disk.items():
            try:
                st = abspath.lstat()
            except OSError:
                continue
            prev = self._prev_state(agent_id, rel, known.get(rel, []))
            if not (prev and prev.mtime == st.st_mtime and prev.size == st.st_size):
                changed[rel] = st.st_size
        return sorted(set(disk) | set(known)), changed

    def sync_files(
        self, agent_id: str, workspace: Path, *, full: bool = False, only: Sequence[str] | None = None,
        progress: Progress | None = None,
    ) -> ReindexStats:
        """Bring the agent's file rows up to date with the disk.

        Args:
            agent_id: The agent.
            workspace: The agent's workspace directory.
            full: Re-embed every chunk even if unchanged.
            only: Restrict to these workspace-relative paths (others untouched).
            progress: ``(phase, done, total)`` callback.

        Returns:
            Counters of what was done; ``skipped`` names every entry not read and why (with
            ``only``, also those outside it: the scan saw them).

        Raises:
            Cancelled: when :attr:`cancel` was set meanwhile (what was done so far is kept).
        """
        t0 = time.perf_counter()
        stats = ReindexStats()
        with self.store.lock:
            snap = self.store.snapshot()
            known = self._known(agent_id)
            found = scan(workspace, self.max_file_bytes)
            disk = found.files
            skipped = found.skipped
            if only is not None:
                disk = {p: v for p, v in disk.items() if p in only}
                known = {p: v for p, v in known.items() if p in only}
                # the scan saw every entry: a skipped one is told now, not after the files left out
            todo: list[tuple[str, Path, str, FileState]] = []
            for rel, abspath in list(disk.items()):
                stats.files_seen += 1
                try:
                    st = abspath.lstat()
                except FileNotFoundError:
                    continue
                rows = known.get(rel, [])
                prev = self._prev_state(agent_id, rel, rows)
                if not full and prev and prev.mtime == st.st_mtime and prev.size == st.st_size:
                    stats.chunks_unchanged += len(rows)
                    continue
                try:
                    got = read_text(workspace, rel, self.max_file_bytes)
                except FileNotFoundError:
                    continue
                except SkipFile as e:  # swapped for a link, a FIFO, binary...: not memory any more
                    skipped.append(Skipped(rel, str(e)))
                    del disk[rel]
                    continue
                text = got.text
                fhash = content_hash(text)
                state = FileState(got.mtime, got.size, fhash)
                if not full and prev and prev.hash == fhash:
                    self.seen[(agent_id, rel)] = state
                    stats.chunks_unchanged += len(rows)
                    continue
                todo.append((rel, abspath, text, state))
            for rel in set(known) - set(disk):
                ids = [snap.ids[i] for i in known[rel]]
                stats.chunks_deleted += self.store.delete_ids(ids)
                stats.files_changed.append(rel)
                self.seen.pop((agent_id, rel), None)
            stats.skipped = [s.message() for s in sorted(skipped, key=lambda s: s.path)]
            for n, (rel, _abspath, text, state) in enumerate(todo):
                if self.cancel.is_set():
                    raise Cancelled
                if progress:
                    progress(f"indexing {rel}", n, len(todo))
                old = [snap.row(i) for i in known.get(rel, [])]
                self._index_file(agent_id, rel, text, state, old, full, stats, progress)
                self.seen[(agent_id, rel)] = state
                stats.files_changed.append(rel)
            if progress and todo:
                progress("indexed", len(todo), len(todo))
            if stats.files_changed:
                # Reloaded before the lock is let go: a recall that does not wait for the next writer
                # (a turn while a big file is indexed in the background) reads the rows written here.
                self.store.snapshot()
        stats.seconds = time.perf_counter() - t0
        return stats

    def _index_file(
        self, agent_id: str, rel: str, text: str, state: FileState, old: list[dict[str, Any]], full: bool,
        stats: ReindexStats, progress: Progress | None,
    ) -> None:
        # The index holds no secret, also from files the user wrote (the file itself stays as written);
        # line numbers are kept so hits, `memory_get` lines and forget still point at the right lines.
        text, _ = redact(text, keep_lines=True)
        drafts = chunk_markdown(text, size=self.size, overlap=self.overlap, count=self.count)
        old_by_id = {r["id"]: r for r in old}
        occurrences: dict[str, int] = {}
        new_rows: list[dict[str, Any]] = []
        to_embed: list[tuple[int, ChunkDraft]] = []
        reuse_vecs: dict[str, str] = {}  # new row id -> old row id to copy the vector from
        for d in drafts:
            occ = occurrences.get(d.hash, 0)
            occurrences[d.hash] = occ + 1
            cid = chunk_id(agent_id, rel, d.hash, occ)
            row = self._file_row(agent_id, rel, d, cid, state)
            if cid in old_by_id and not full:
                # same text at the same path: keep the vector, rewrite the row (lines/file state)
                stats.chunks_unchanged += 1
                reuse_vecs[cid] = cid
                new_rows.append(row)
                continue
            to_embed.append((len(new_rows), d))
            new_rows.append(row)
        drop = [r["id"] for r in old]
        stats.chunks_deleted += len([i for i in drop if i not in reuse_vecs])
        if reuse_vecs:
            vecs = self._vectors_of(list(reuse_vecs.values()))
            for row in new_rows:
                if row["id"] in reuse_vecs:
                    row["vector"] = vecs[reuse_vecs[row["id"]]]
        if to_embed:
            def prog(done: int, total: int) -> None:
                if self.cancel.is_set():
                    raise Cancelled
                if progress:
                    progress(f"embedding {rel}", done, total)

            vecs_new = self.embedder.embed([d.embed_text() for _, d in to_embed], progress=prog)
            for (pos, _), v in zip(to_embed, vecs_new, strict=True):
                new_rows[pos]["vector"] = v.tolist()
            stats.chunks_embedded += len(to_embed)
        self.store.delete_ids(drop)
        self.store.add(new_rows)
        if self.terms is not None:
            self.terms.add_texts([r["text"] for r in new_rows])

    def embed_in_context(self, texts: Sequence[str], contexts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit vectors of ``normalise(embed(text) + embed(context))`` (context-expanded chunks; a
        pair's parts each normalised, :func:`~neotask_tui.memory.search.relevance.unit_parts`)."""
        a = self.embedder.embed(list(texts))
        b = self.embedder.embed(list(contexts))
        return unit_parts(a + b, max(1, len(self.embedder.spec.parts)))

    def _vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        snap = self.store.snapshot()
        return {i: snap.vectors[snap.index[i]].tolist() for i in ids if i in snap.index}

    def _file_row(self, agent_id: str, rel: str, d: ChunkDraft, cid: str, state: FileState) -> dict[str, Any]:
        return {
            "id": cid,
            "agent_id": agent_id,
            "scope": d.scope or default_scope(agent_id),
            "source": d.source,
            "path": rel,
            "line_start": d.line_start,
            "own_start": d.own_start,
            "line_end": d.line_end,
            "heading": d.heading,
            "text": d.text,
            "etext": d.embed_text(),
            "lex": lexical.normalize(d.own_terms_text()),
            "ctx": lexical.normalize(d.heading),
            "hash": d.hash,
            "file_hash": state.hash,
            "file_mtime": state.mtime,
            "file_size": state.size,
            "ts": d.ts or state.mtime,
            "event_ids": [],
            "session_id": "",
            "vector": None,
        }

    # -- transcripts ----------------------------------------------------------------------------

    def index_transcript(
        self, agent_id: str, session_id: str, events: Sequence[Event], scope: str, tombstones: set[str],
        context_turns: int = 1,
    ) -> tuple[int, int]:
        """Index one transcript: one chunk per message (split when longer than the chunk size; at
        most :data:`TRANSCRIPT_MESSAGE_MAX_CHARS` of a message, see :func:`indexed_parts`).

        A message alone is often elliptic ("Yes, last Friday!"), so its vector is the normalised mean
        of the message's embedding and the embedding of the message preceded by ``context_turns``
        earlier messages of its exchange (none written before a long silence, :func:`exchange_start`);
        the terms of up to ``2 * context_turns`` neighbours on each side go into the
        weaker ``ctx`` BM25 column. The hit still maps back to the message's own event id.

        Returns:
            ``(chunks indexed, chunks embedded)``.

        Raises:
            Cancelled: when :attr:`cancel` was set meanwhile; the rows embedded so far are written
                (a later call reuses their vectors), the session is not complete.
        """
        msgs = redacted_messages(events)
        pieces = self._pieces(msgs)
        n, embedded = self._write_transcript(agent_id, session_id, scope, msgs, pieces, tombstones, context_turns)
        return n, len(embedded)

    def _pieces(self, msgs: list[tuple[int, str, str, float]]) -> list[tuple[int, int, str]]:
        """The indexed pieces of :func:`redacted_messages`: ``(message index, event id, text)``."""
        pieces: list[tuple[int, int, str]] = []
        for mi, (eid, _role, content, _ts) in enumerate(msgs):
            for part in indexed_parts(content):
                if self.count(part) <= self.size:
                    pieces.append((mi, eid, part))
                    continue
                for d in chunk_markdown(part, size=self.size, overlap=self.overlap, count=self.count):
                    pieces.append((mi, eid, d.text))
        return pieces

    def forgotten_events(self, events: Sequence[Event], tombstones: set[str]) -> set[int]:
        """Ids of the messages of ``events`` a piece of which was forgotten (:func:`forgotten_key` in
        ``tombstones``): what :meth:`index_transcript` would leave out of the index."""
        msgs = redacted_messages(events)
        return {eid for mi, eid, text in self._pieces(msgs) if forgotten_key(eid, msgs[mi][1], text) in tombstones}

    def rewrite_transcript(
        self, agent_id: str, session_id: str, tombstones: set[str], context_turns: int = 1,
    ) -> list[str]:
        """Rebuild one indexed transcript from its own rows, leaving out tombstoned pieces.

        Used by forget: the messages next to a forgotten one carry its text in their derived
        columns (``etext``, the ``ctx`` terms and so their vectors), so every row of the session is
        rebuilt from the remaining rows' text and those whose context changed are re-embedded.

        Returns:
            The ids of the rows re-embedded.
        """
        rows = self.store.rows_where(
            f"agent_id = {_q(agent_id)} AND session_id = {_q(session_id)} AND source = 'transcript'",
            ["text", "heading", "event_ids", "ts", "scope"],
        )
        if not rows:
            return []
        by_event: dict[int, list[dict[str, Any]]] = {}
        for r in rows:  # table order keeps the pieces of a long message in order
            by_event.setdefault(int((r["event_ids"] or [0])[0]), []).append(r)
        msgs: list[tuple[int, str, str, float]] = []
        pieces: list[tuple[int, int, str]] = []
        for mi, (eid, rs) in enumerate(sorted(by_event.items())):
            role = str(rs[0]["heading"]).rsplit(" · ", 1)[-1]
            msgs.append((eid, role, "\n".join(str(r["text"]) for r in rs), float(rs[0]["ts"] or 0.0)))
            pieces.extend((mi, eid, str(r["text"])) for r in rs)
        _, embedded = self._write_transcript(
            agent_id, session_id, str(rows[0]["scope"]), msgs, pieces, tombstones, context_turns)
        return embedded

    def _write_transcript(
        self, agent_id: str, session_id: str, scope: str, msgs: list[tuple[int, str, str, float]],
        pieces: list[tuple[int, int, str]], tombstones: set[str], context_turns: int,
    ) -> tuple[int, list[str]]:
        """Replace a session's transcript rows; returns ``(rows written, ids embedded)``.

        A tombstoned piece (:func:`forgotten_key`, or the chunk hash older versions recorded) is
        left out, and so is its text from every other row's context: the message before it is the
        context of the one after it, as if it had never been said.
        """
        keep: list[tuple[int, int, str]] = []
        lead: dict[int, str] = {}  # the full text before each message (older tombstones hash it)
        for mi, eid, text in pieces:
            role = msgs[mi][1]
            if mi not in lead:
                lead[mi] = "".join(msgs[j][2] + "\n" for j in range(max(0, mi - context_turns), mi))
            legacy = content_hash("transcript", role, text, lead[mi] + text)
            if legacy in tombstones or forgotten_key(eid, role, text) in tombstones:
                continue
            keep.append((mi, eid, text))
        total: dict[int, int] = {}
        for mi, _, _ in pieces:
            total[mi] = total.get(mi, 0) + 1
        kept: dict[int, list[str]] = {}
        for mi, _, text in keep:
            kept.setdefault(mi, []).append(text)
        visible = {mi: msgs[mi][2] if len(t) == total[mi] else "\n".join(t) for mi, t in kept.items()}
        order = sorted(visible)
        pos = {mi: k for k, mi in enumerate(order)}
        path = f"transcripts/{session_id}"
        with self.store.lock:
            old = {
                r["hash"]: r["id"]
                for r in self.store.rows_where(
                    f"agent_id = {_q(agent_id)} AND session_id = {_q(session_id)} AND source = 'transcript'",
                    ["id", "hash"],
                )
            }
            rows: list[dict[str, Any]] = []
            embed_pos: list[int] = []
            reuse: dict[int, str] = {}
            occ: dict[str, int] = {}
            times = [msgs[m][3] for m in order]
            for mi, eid, text in keep:
                _, role, _, ts = msgs[mi]
                k = pos[mi]
                first = exchange_start(times, k, context_turns)
                before = [tail(visible[order[j]]) for j in range(first, k)]
                near = neighbour_excerpts([visible[m] for m in order], k, context_turns)
                etext = "\n".join([*before, text])
                chash = content_hash("transcript", role, text, etext)
                if chash in tombstones:
                    continue
                n = occ.get(chash, 0)
                occ[chash] = n + 1
                cid = chunk_id(agent_id, path, chash, n)
                when = datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else ""
                rows.append({
                    "id": cid, "agent_id": agent_id, "scope": scope, "source": "transcript", "path": path,
                    "line_start": 0, "own_start": 0, "line_end": 0,
                    "heading": f"{when} · {role}" if when else role,
                    "text": text, "etext": etext, "lex": lexical.normalize(text),
                    "ctx": lexical.normalize(" ".join(near)), "hash": chash, "file_hash": "",
                    "file_mtime": 0.0, "file_size": 0, "ts": ts, "event_ids": [eid],
                    "session_id": session_id, "vector": None,
                })
                if chash in old:
                    reuse[len(rows) - 1] = old[chash]
                else:
                    embed_pos.append(len(rows) - 1)
            if reuse:
                vecs = self._vectors_of(list(reuse.values()))
                for pos_, oid in reuse.items():
                    if oid in vecs:
                        rows[pos_]["vector"] = vecs[oid]
                    else:
                        embed_pos.append(pos_)
            step = 8  # one embedder batch of long texts: a close waits for one step at most
            for at in range(0, len(embed_pos), step):
                if self.cancel.is_set():
                    # Closing: keep what is embedded (the next indexing of this session reuses those
                    # vectors and embeds only the rest); the caller does not mark the session done.
                    self.store.delete_where(
                        f"agent_id = {_q(agent_id)} AND session_id = {_q(session_id)} AND source = 'transcript'"
                    )
                    self.store.add([r for r in rows if r["vector"] is not None])
                    raise Cancelled
                part = embed_pos[at : at + step]
                vv = self.embed_in_context([rows[p]["text"] for p in part], [rows[p]["etext"] for p in part])
                for p, v in zip(part, vv, strict=True):
                    rows[p]["vector"] = v.tolist()
            self.store.delete_where(
                f"agent_id = {_q(agent_id)} AND session_id = {_q(session_id)} AND source = 'transcript'"
            )
            self.store.add(rows)
            if self.terms is not None:
                self.terms.add_texts([r["text"] for r in rows])
        return len(rows), [rows[p]["id"] for p in embed_pos]


def indexed_parts(content: str, limit: int = TRANSCRIPT_MESSAGE_MAX_CHARS) -> list[str]:
    """What of a message is indexed: all of it, or (longer than ``limit``) its first three quarters
    and last quarter of ``limit`` characters, each cut at a space near the edge when there is one
    (the question typed after a paste is found as well as the paste's beginning)."""
    if len(content) <= limit:
        return [content]
    head_n = limit * 3 // 4
    tail_n = limit - head_n
    head = content[:head_n]
    cut = head.rfind(" ", head_n - 200)
    head = head[:cut] if cut > 0 else head
    end = content[-tail_n:]
    cut = end.find(" ", 0, 200)
    end = end[cut + 1:] if cut >= 0 else end
    return [p for p in (head.strip(), end.strip()) if p]


def exchange_start(ts: Sequence[float], k: int, context_turns: int = 1) -> int:
    """The first of the up to ``context_turns`` messages before message ``k`` (``ts``: their times, in
    order, 0 when unknown) that belong to its exchange: none written before a silence of more than
    :data:`EXCHANGE_GAP_SECONDS` (the first message of the next day's chat opens it; yesterday's
    goodbye is not what it answers).
    """
    j = k
    while j > max(0, k - context_turns):
        if ts[j] and ts[j - 1] and ts[j] - ts[j - 1] > EXCHANGE_GAP_SECONDS:
            break
        j -= 1
    return j


def tail(text: str, limit: int = CONTEXT_EXCERPT_CHARS) -> str:
    """The last ``limit`` characters of a neighbour (what leads into the next message)."""
    return text if len(text) <= limit else text[-limit:]


def excerpt(text: str, limit: int = CONTEXT_EXCERPT_CHARS) -> str:
    """A neighbour's text, or its beginning and end (``limit`` characters in all) when longer."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} … {text[-(limit - half):]}"


def neighbour_excerpts(messages: Sequence[str], k: int, context_turns: int = 1) -> list[str]:
    """:func:`excerpt` of each message within ``2 * context_turns`` of message ``k`` (not ``k``
    itself): what a transcript row's ``ctx`` column is made of."""
    lo, hi = max(0, k - 2 * context_turns), min(len(messages), k + 1 + 2 * context_turns)
    return [excerpt(messages[j]) for j in range(lo, hi) if j != k]


def row_terms(
    rows: Sequence[dict[str, Any]], context_turns: int = 1, progress: Callable[[int, int], None] | None = None,
) -> tuple[list[str], list[str]]:
    """The ``lex`` and ``ctx`` values of stored rows, recomputed from their text (in row order).

    A file row's terms are those of its plain text without heading lines (``lex``) and its heading
    path (``ctx``), as :meth:`Indexer.sync_files` makes them; a transcript row's ``ctx`` is made of
    its neighbours in the session (the stored pieces of each message joined in table order, messages
    in event order), as
    :meth:`Indexer.rewrite_transcript` rebuilds a session.

    Args:
        rows: Dicts with the store's ``TERM_SOURCE_COLUMNS``.
        context_turns: As :meth:`Indexer.index_transcript`.
        progress: ``(done, total)`` callback, every :data:`TERMS_PROGRESS_ROWS` rows and at the end.
    """
    lex: list[str] = []
    ctx: list[str] = [""] * len(rows)
    sessions: dict[tuple[str, str], dict[int, list[int]]] = {}
    for i, r in enumerate(rows):
        if progress and i % TERMS_PROGRESS_ROWS == 0:
            progress(i, len(rows))
        text = str(r["text"] or "")
        if r["source"] == "transcript":
            lex.append(lexical.normalize(text))
            eid = int((r["event_ids"] or [0])[0])
            sessions.setdefault((str(r["agent_id"]), str(r["session_id"])), {}).setdefault(eid, []).append(i)
        else:
            lex.append(lexical.normalize(strip_entry_tags(without_headings(text))))
            ctx[i] = lexical.normalize(str(r["heading"] or ""))
    for by_event in sessions.values():
        order = sorted(by_event)
        visible = ["\n".join(str(rows[i]["text"] or "") for i in by_event[e]) for e in order]
        for k, e in enumerate(order):
            value = lexical.normalize(" ".join(neighbour_excerpts(visible, k, context_turns)))
            for i in by_event[e]:
                ctx[i] = value
    if progress:
        progress(len(rows), len(rows))
    return lex, ctx


def redacted_messages(events: Sequence[Event]) -> list[tuple[int, str, str, float]]:
    """The user's and assistant's messages of a transcript as the index holds them, oldest first:
    ``(event id, role, redacted text, timestamp)``; superseded ones (``/retry``, ``/edit``) and empty
    ones left out. A user message is redacted in the context of the one before it (a password
    announced in one message and sent in the next), and a reply with the secrets of the user message
    before it (quoting that password), as the full-text index does
    (:func:`~neotask_tui.storage.events.redacted_in_conversation`)."""
    msgs: list[tuple[int, str, str, float]] = []
    red = redacted_in_conversation(events)
    gone = superseded_ids(events)
    for ev in events:
        if ev.type != "message" or ev.role not in ("user", "assistant") or ev.id in gone:
            continue
        content = red[ev.id].strip()
        if content and ev.content.strip():
            msgs.append((ev.id, ev.role or "", content, _parse_ts(ev.ts)))
    return msgs


def forgotten_key(event_id: int, role: str, text: str) -> str:
    """The tombstone of a forgotten transcript piece: the same whatever its neighbours say."""
    return content_hash("forgotten transcript", str(event_id), role, text)


def _q(s: str) -> str:
    from neotask_tui.memory.index.store import sql_str

    return sql_str(s)


def _parse_ts(ts: str) -> float:
    try:
        return datetime.fromisoformat(ts).timestamp()
    except (TypeError, ValueError):
        return 0.0
