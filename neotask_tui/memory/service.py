"""``MemoryService``: the blocking facade the engine calls via ``asyncio.to_thread``.

Everything heavy (fastembed, LanceDB, numpy) is imported on first use. A single re-entrant lock
serialises writers; searches take it only to refresh the snapshot and check staleness.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from neotask_tui import paths, tuning
from neotask_tui.config import MemorySettings
from neotask_tui.errors import StorageError, io_errno, io_failure
from neotask_tui.memory.files import (
    MAX_DEPTH,
    MEMORY_DIR,
    MEMORY_FILE,
    SkipFile,
    name_flaw,
    read_text,
    read_tombstones,
)
from neotask_tui.memory.forget import forget_chunk, holds_query, query_words
from neotask_tui.memory.index.chunking import (
    ENTRY_RE,
    find_entry,
    format_entry,
    place_entry,
    statements,
    token_counter,
)
from neotask_tui.memory.index.indexer import FILE_SOURCES, Cancelled, Indexer, default_scope, row_terms
from neotask_tui.memory.index.store import ROW_COLUMNS, TERMS_VERSION, ChunkStore, StoreError, is_remote, sql_str
from neotask_tui.memory.search.hybrid import RankParams, dense_query, explain, named_senders, query_signals, rank
from neotask_tui.memory.search.relevance import covered, floor_similarity, relevant, script, unrelated_vectors
from neotask_tui.memory.search.termvec import TermVectors
from neotask_tui.memory.types import AddReceipt, ForgetReceipt, MemoryHit, ReindexStats, recall_rank
from neotask_tui.memory.watcher import Watcher
from neotask_tui.storage.atomic import atomic_write_text
from neotask_tui.text import lexical
from neotask_tui.text.clean import clean_text, storable
from neotask_tui.text.secrets import MARKER_PREFIX, redact, redact_path

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from neotask_tui.memory.index.embedder import Embedder
    from neotask_tui.storage.events import Event

log = logging.getLogger(__name__)
_CHUNK_ID = re.compile(r"[0-9a-f]{16}")

_STATEMENT_LOCK = threading.Lock()
_STATEMENT_VECTORS: dict[str, dict[str, npt.NDArray[np.float32]]] = {}
"""Vectors of file passages' lines, by embedding model then line (:meth:`MemoryService._statement_vectors`)."""

Progress = Callable[[str, int, int], None]
TURN_INLINE_BYTES: Final = 64 * 1024
"""Changed memory files up to this many bytes in all are indexed inside a turn's recall (a few
seconds of embedding at most); bigger changes are indexed in a background thread and the turn
recalls from the index as it is meanwhile (a 1 MB file took two minutes to embed here)."""


_NO_ROOM: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
"""Errors of a store write that say nothing about the store's state (a full disk, a quota, a file
size limit, a read-only mount): never a reason to quarantine it as damaged."""


def _remove_empty_tree(folder: Path) -> None:
    """Remove ``folder`` when it holds folders only (none of them a link): the empty tree a store
    open that failed for want of room leaves; a folder with any file in it is left as it is."""
    if folder.is_symlink() or not folder.is_dir():
        return
    dirs: list[Path] = []
    for top, subdirs, files in os.walk(folder):
        if files or any(Path(top, d).is_symlink() for d in subdirs):
            return
        dirs.append(Path(top))
    for d in reversed(dirs):  # deepest first
        with contextlib.suppress(OSError):
            d.rmdir()


def _floor_cosine(hit: MemoryHit) -> float | None:
    """The similarity auto-recall's floor judges ``hit`` by: its :func:`~.search.relevance.floor_similarity`
    (measured from the message's own closeness to unrelated text); for a passage that also holds one
    of the message's words, the model-average calibration (``dense``) may vouch for it instead: a
    shared word is evidence of its own, and "We deploy on Thursdays." in a five-fact chunk (0.30
    calibrated, 0.25 from a baseline of 0.75 on e5 for "Which day of the week do we deploy?") is
    what the question asks. Without a shared word (another language, another topic) only the
    message's own baseline counts."""
    rel = hit.components.get("relevance", hit.components.get("dense"))
    if hit.matched and rel is not None:
        return max(rel, hit.components.get("dense", rel))
    return rel


def _terms_path(uri: str, model_id: str) -> Path:
    """Where the vocabulary's word vectors are cached: beside a local database, else in the data dir."""
    name = "terms-" + re.sub(r"[^A-Za-z0-9_.-]", "_", model_id) + ".npz"
    if "://" not in uri:
        return Path(uri) / name
    return paths.data_dir() / "memory-terms" / hashlib.sha1(uri.encode()).hexdigest()[:12] / name


def check_rel_path(path: str) -> str:
    """Validate a workspace-relative memory file path.

    Raises:
        ValueError: (one line) for absolute paths, ``..``, or files outside MEMORY.md / memory/*.md;
            and for a file the indexer would never read (a hidden part, a name not ending in ``.md``,
            more than :data:`~neotask_tui.memory.files.MAX_DEPTH` folders under ``memory/``).
    """
    p = path.strip().replace("\\", "/")
    if not p or p.startswith("/") or (len(p) > 1 and p[1] == ":"):
        raise ValueError(f"memory file must be a relative path, got {path!r}")
    parts = p.split("/")
    if any(part in ("..", "") or part.startswith(".") for part in parts):
        raise ValueError(f"memory file path may not contain '..', empty or hidden parts: {path!r}")
    if p != MEMORY_FILE and not (parts[0] == MEMORY_DIR and len(parts) > 1 and p.endswith(".md")):
        raise ValueError(f"memory file must be MEMORY.md or memory/<name>.md, got {path!r}")
    if len(parts) - 2 > MAX_DEPTH:
        raise ValueError(f"memory file is {len(parts) - 2} folders deep under memory/ and would never be read "
                         f"(at most {MAX_DEPTH})")
    return p


class MemoryService:
    """Long-term memory of every agent: files, transcripts, hybrid search, recall and forget.

    Args:
        settings: Memory settings.
        progress: Optional ``(phase, done, total)`` callback for long (re)indexing.
        writer: Whether this process holds the data-dir lock. Only a writer migrates the store
            when it opens it (rows of another embedding model, terms of another lexical version);
            a reader reads the store as the writer keeps it.
        mask: Masks what the redactor cannot know is a secret in a text :meth:`add` writes: the
            configured API keys (the engine and ``neotask memory add`` pass
            :func:`~neotask_tui.providers.selection.without_configured_keys` bound to the settings).
    """

    def __init__(self, settings: MemorySettings, *, progress: Progress | None = None, writer: bool = True,
                 mask: Callable[[str], str] | None = None) -> None:
        self.settings = settings
        self.mask = mask
        self.progress = progress
        self.writer = writer
        self.params = RankParams(min_score=0.0)
        self._lock = threading.RLock()
        self._embedder: Embedder | None = None
        self._store: ChunkStore | None = None
        self._indexer: Indexer | None = None
        self._terms: TermVectors | None = None
        self._watcher: Watcher | None = None
        self._count = token_counter()
        self._notices: list[str] = []
        self._reported: dict[str, set[str]] = {}
        self._background: threading.Thread | None = None

    # -- plumbing -------------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedding model (created lazily)."""
        if self._embedder is None:
            from neotask_tui.memory.index.embedder import Embedder

            self._embedder = Embedder(self.settings.embedding_model)
        return self._embedder

    @property
    def store(self) -> ChunkStore:
        """The LanceDB store (opened lazily; migrates rows after a model change).

        Raises:
            StoreError: when a remote store (a ``scheme://`` URI) cannot be opened.
        """
        if self._store is not None:  # no lock: a long reindex holds it and a recall must not wait
            return self._store
        with self._lock:
            if self._store is None:
                emb = self.embedder
                local = None if self.settings.db_uri else paths.memory_db_dir()
                made = local is not None and not local.exists()
                uri = self.settings.db_uri or str(paths.ensure_dir(paths.memory_db_dir()))
                try:
                    self._store = self._open_store(uri, emb.model_id, emb.dim)
                except StorageError:  # no room: the folder made for it goes too, when nothing was written
                    if made and local is not None:
                        _remove_empty_tree(local)
                    raise
                self._terms = TermVectors(_terms_path(uri, emb.model_id), emb, emb.spec.offsets)
                self._indexer = Indexer(
                    self._store, emb, self.settings.chunk_tokens, self.settings.chunk_overlap, terms=self._terms,
                    max_file_bytes=self.settings.max_file_bytes,
                )
                if self.writer:
                    self._migrate_stale_tables()
                    self._refresh_terms()
            return self._store

    @property
    def indexer(self) -> Indexer:
        """The indexer bound to the store."""
        _ = self.store
        assert self._indexer is not None
        return self._indexer

    def _open_store(self, uri: str, model_id: str, dim: int) -> ChunkStore:
        """Open the store; a damaged local table is quarantined and rebuilt (the memory files are
        the truth, and are never touched here).

        Only file-backed rows can be rebuilt here; archived transcripts come back when they are
        indexed again (:mod:`~neotask_tui.memory.archived`). A remote store (any ``scheme://`` URI,
        shared or not) is never dropped, moved or recreated: the error is raised with the URI.

        Raises:
            StoreError: for a remote store that cannot be opened, or a damaged local one that
                cannot be moved to ``quarantine/`` (a symbolic link: it is left as it is).
            StorageError: the open failed for want of room (a full disk, a quota, a read-only
                mount): that is no damage, and the store is left as it is.
        """
        from neotask_tui.memory.index.store import table_name

        table_dir = None if is_remote(uri) else Path(uri) / f"{table_name(model_id, dim)}.lance"
        made = table_dir is not None and not table_dir.exists()
        try:
            store = ChunkStore(uri, model_id, dim)
            store.snapshot()
            return store
        except Exception as e:
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
            if io_errno(e) in _NO_ROOM:  # a write that failed is no damage: nothing is moved or rebuilt
                if made and table_dir is not None:  # the empty tree the failed open made
                    _remove_empty_tree(table_dir)
                raise StorageError(f"could not open the memory index: {io_failure(e)}") from None
            if is_remote(uri):
                raise StoreError(f"memory store {uri} cannot be opened ({why}); it was left as it is") from e
            log.error("memory: the LanceDB store at %s is unreadable (%s); rebuilding it from memory files",
                      uri, why)
        name = table_name(model_id, dim)
        local = Path(uri)
        if (local / f"{name}.lance").exists():
            refused = paths.quarantine_problem()
            if refused is not None:
                raise StoreError(f"memory store {uri} is damaged ({why}); {refused}")
            damaged = paths.quarantine_target() / f"{name}.lance.{int(time.time())}"
            shutil.move(str(local / f"{name}.lance"), damaged)
        store = ChunkStore(uri, model_id, dim)
        store.snapshot()
        return store

    def _migrate_stale_tables(self) -> None:
        """After a model change: re-embed transcript rows from the old table, then drop it.

        File rows are not copied: the new table is empty, so the next sync re-chunks and embeds
        every memory file (a full reindex).
        """
        assert self._store is not None
        if self._store.remote:
            # A shared store may serve another machine with another model: its tables are not ours
            # to drop. This table's transcripts come back when they are indexed again.
            return
        for name in self._store.stale_tables():
            rows = self._store.read_table(name, ["agent_id", "source", "session_id", "scope"])
            olds = [r for r in self._store.read_table(name, list(ROW_COLUMNS)) if r["source"] == "transcript"]
            if olds:
                texts = [r["etext"] for r in olds]
                vecs = self.embedder.embed(texts, progress=self._embed_progress("migrating transcripts"))
                for r, v in zip(olds, vecs, strict=True):
                    r["vector"] = v.tolist()
                # the old table's terms may be of an older lexical version: made afresh
                for r, lex, ctx in zip(olds, *row_terms(olds), strict=True):
                    r["lex"], r["ctx"] = lex, ctx
                self._store.add(olds)
            log.info("memory: dropped table %s (%d rows) after an embedding model change", name, len(rows))
            self._store.drop_table(name)

    def _refresh_terms(self) -> None:
        """After a lexical upgrade: remake every row's ``lex``/``ctx`` terms with the current
        tokenizer and rules (:data:`~.index.store.TERMS_VERSION`), so documents and queries are
        normalised alike. Texts are re-tokenised, no chunk is re-embedded (only words new to the
        word-vector vocabulary are)."""
        assert self._store is not None
        if self._store.terms_stamp() == TERMS_VERSION:
            return
        progress = self._embed_progress("rebuilding search terms")
        n = self._store.rewrite_terms(lambda rows: row_terms(rows, progress=progress), TERMS_VERSION)
        if self._terms is not None:  # the word vectors follow the vocabulary (stems of the new rules)
            snap = self._store.snapshot()
            self._terms.prune(snap.field_index("lex").vocab)
            self._terms.add_texts([str(t or "") for t in snap.cols.get("text", [])])
        log.info("memory: search terms of %d rows rebuilt for version %s", n, TERMS_VERSION)

    def _embed_progress(self, phase: str) -> Callable[[int, int], None]:
        def cb(done: int, total: int) -> None:
            if self.progress:
                self.progress(phase, done, total)

        return cb

    def workspace(self, agent_id: str) -> Path:
        """The agent's workspace directory (not created)."""
        return paths.workspace_dir(agent_id)

    def resolve(self, agent_id: str, rel: str) -> Path:
        """The path of a workspace-relative memory file, validated (:func:`check_rel_path`) and inside
        the workspace; the file may not exist yet.

        Raises:
            ValueError: (one line) for an unsafe path.
        """
        rel = check_rel_path(rel)
        ws = self.workspace(agent_id)
        link = paths.linked_part(ws)
        if link is not None:
            raise ValueError(f"{link} is a symbolic link; memory does not follow links in the data dir")
        target = (ws / rel).resolve()
        if not target.is_relative_to(ws.resolve()):
            raise ValueError(f"memory file escapes the workspace: {rel!r}")
        return ws / rel

    def read(self, agent_id: str, rel: str, *, missing_ok: bool = False) -> str:
        """A memory file's text, read as the indexer reads it (no links, no FIFOs, size cap).

        Raises:
            ValueError: (one line) when it is not a readable memory file, or missing.
        """
        rel = check_rel_path(rel)
        try:
            return read_text(self.workspace(agent_id), rel, self.settings.max_file_bytes).text
        except FileNotFoundError:
            if missing_ok:
                return ""
            raise ValueError(f"no such memory file: {rel}") from None
        except SkipFile as e:
            raise ValueError(f"{rel} is not a usable memory file: {e}") from None

    def sync(self, agent_id: str, *, full: bool = False, only: Sequence[str] | None = None) -> ReindexStats:
        """Bring the agent's file index up to date (``only``: just these files), under the writer
        lock; entries skipped are queued as notices (:meth:`reindex` hands them over).
        """
        with self._lock:
            stats = self.indexer.sync_files(
                agent_id, self.workspace(agent_id), full=full, only=only, progress=self.progress
            )
            self._note_skipped(agent_id, stats.skipped, complete=only is None)
            return stats

    def _note_skipped(self, agent_id: str, skipped: Sequence[str], *, complete: bool) -> None:
        """Queue a notice for each skipped entry not reported yet (once, not on every scan, nor in
        every process: ``neotask send`` twice tells it once); after a complete scan, an entry that
        is fine again is forgotten so a relapse is reported again."""
        seen = self._reported.get(agent_id)
        if seen is None:
            seen = self._reported[agent_id] = set(_read_reported().get(agent_id, []))
        before = set(seen)
        for line in skipped:
            if line not in seen:
                seen.add(line)
                self._notices.append(f"memory: {line}")
        if complete:
            seen &= set(skipped)
        if seen != before and self.writer:  # a reader (beside the lock holder) tells, writes nothing
            _write_reported(agent_id, seen)

    def take_notices(self) -> list[str]:
        """Problems found since the last call (skipped files, background indexing), each once."""
        out, self._notices = self._notices, []  # no lock: a turn never waits for a reindex
        return out

    def unindexed(self, agent_id: str) -> list[str]:
        """Memory files changed since they were last indexed (read-only check)."""
        return sorted(self.indexer.pending(agent_id, self.workspace(agent_id))[1])

    def _refresh_for_turn(self, agent_id: str) -> None:
        """Bring the file index up to date for a turn without ever holding it up.

        A writer already at work (the watcher, a background reindex) is not waited for: the turn
        recalls from the index as it is. Small changes are indexed inline; files beyond
        :data:`TURN_INLINE_BYTES` are indexed in a background thread, with a notice.
        """
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self._background is not None and self._background.is_alive():
                return
            everything, changed = self.indexer.pending(agent_id, self.workspace(agent_id))
            if sum(changed.values()) <= TURN_INLINE_BYTES:
                self.sync(agent_id)
                return
            big: list[str] = []
            used = 0
            for rel, size in sorted(changed.items(), key=lambda kv: kv[1]):
                used += size
                if used > TURN_INLINE_BYTES:
                    big.append(rel)
            self.sync(agent_id, only=[p for p in everything if p not in big])
            self._notices.append(
                f"memory: indexing {', '.join(big)} in the background; recall uses the rest meanwhile")
            self._background = threading.Thread(
                target=self._index_in_background, args=(agent_id,), name=f"memory-index-{agent_id}", daemon=True)
            self._background.start()
        finally:
            self._lock.release()

    def _index_in_background(self, agent_id: str) -> None:
        try:
            self.sync(agent_id)
        except Cancelled:
            return
        except Exception as e:  # told to the user at the next turn; the index stays as it was
            log.error("memory: background indexing failed: %s", e)
            self._notices.append(f"memory: background indexing failed: {e}")

    def background_busy(self) -> bool:
        """Whether a background indexing (memory files or archived transcripts) is running."""
        bg = self._background
        return bg is not None and bg.is_alive()

    @property
    def closing(self) -> bool:
        """Set by :meth:`close`: a background job stops at its next step (what it finished is kept)."""
        return self._indexer is not None and self._indexer.cancel.is_set()

    def start_background(self, job: Callable[[], None], name: str, notice: str) -> bool:
        """Run ``job`` as this service's background indexing (the thread :meth:`close` stops and
        waits for, and that a turn's recall never waits for), with ``notice`` for the next turn.

        Returns:
            ``False`` (nothing started) when a writer is already at work.
        """
        _ = self.store  # opened here: the job holds the lock, and a recall needs the store meanwhile
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self.background_busy() or self.closing:
                return False
            self.store.snapshot()  # a recall meanwhile reads every row written before the job started
            self._notices.append(notice)
            self._background = threading.Thread(
                target=self._run_background, args=(job,), name=name, daemon=True)
            self._background.start()
            return True
        finally:
            self._lock.release()

    def _run_background(self, job: Callable[[], None]) -> None:
        try:
            job()
        except Cancelled:
            return
        except Exception as e:  # told to the user at the next turn; the index stays as it was
            log.error("memory: background indexing failed: %s", e)
            self._notices.append(f"memory: background indexing failed: {e}")

    def wait_for_index(self, timeout: float | None = None) -> None:
        """Wait for a background indexing started by a recall (the CLI and tests)."""
        bg = self._background
        if bg is not None:
            bg.join(timeout)

    # -- public API -----------------------------------------------------------------------------

    def add(
        self, agent_id: str, text: str, *, file: str = MEMORY_FILE, source: str = "user",
        scope: str | None = None,
    ) -> AddReceipt:
        """Append a dated entry to a memory file (atomic rewrite) and index it.

        The entry goes to the file's ``## Remembered`` section (created at the end when missing).
        When an entry or bullet with the same words is already in the file nothing is written and
        the receipt points at it (``existing=True``): adding is idempotent.

        Args:
            agent_id: Whose memory.
            text: The entry; secrets are redacted before it is written (whatever the source), and a
                lone surrogate (an undecodable byte from argv) becomes U+FFFD, as in a message.
            file: ``MEMORY.md`` or ``memory/<name>.md`` (relative to the agent workspace).
            source: ``user``, ``inbox``, ``agent``... (written into the entry tag).
            scope: Scope of the entry; ``None`` = the agent's own (``agent:<id>``).

        Returns:
            Where the entry landed and what the reindex did.

        Raises:
            ValueError: for an empty text, a bad source/scope, or an unsafe path.
        """
        body = clean_text(text).strip()
        if not body:
            raise ValueError("nothing to remember: the text is empty")
        flaw = name_flaw(file)
        if flaw is not None:  # a new file is named as typed; scan() would never read it
            raise ValueError(f"a memory file may not have {flaw}: {file!r}")
        check_rel_path(file)  # before anything is written
        if not source.isalpha() or not source.islower():
            raise ValueError(f"source must be a lower-case word, got {source!r}")
        if scope is not None and (not scope or any(c.isspace() or c == "]" for c in scope) or not storable(scope)):
            raise ValueError(f"scope may not be empty or contain spaces, ']' or bytes that are not UTF-8: {scope!r}")
        masked = self.mask(body) if self.mask is not None else body  # a configured key, typed or pasted
        n_keys = masked.count(MARKER_PREFIX) - body.count(MARKER_PREFIX)
        body, n_red = redact(masked)  # whatever the source: /remember and `memory add` too
        n_red += n_keys
        if scope == default_scope(agent_id):
            scope = None
        shown = redact_path(file)
        with self._lock:
            try:  # the embedding model and the store open before anything is written
                _ = self.store
            except StorageError as e:
                raise StorageError(f"{e}; {shown} was not changed") from None
            except StoreError:
                raise
            except Exception as e:
                why = io_failure(e)
                if why is None:
                    raise
                raise StorageError(f"could not open the memory index: {why}; {shown} was not changed") from None
            old = self.read(agent_id, file, missing_ok=True)  # refuses a link, a FIFO, a folder...
            path = self.resolve(agent_id, file)
            if not old and file == MEMORY_FILE:
                old = "# Memory\n"
            found = find_entry(old, body)
            if found is not None:  # the same words are already there: a second copy is never written
                start, end = found
            else:
                entry = format_entry(body, when=datetime.now(), source=source, scope=scope)
                new, start = place_entry(old, entry)
                end = start + entry.count("\n") - 1
                try:
                    paths.ensure_dir(path.parent)
                    atomic_write_text(path, new)
                except OSError as e:  # the temp file is gone and the file is as it was
                    raise StorageError(f"could not write {shown}: {io_failure(e) or e}; it was not changed") from None
            rel = check_rel_path(file)
            try:
                stats = self.sync(agent_id, only=[rel])
            except Exception as e:
                # The entry is in the file, the truth the index is rebuilt from: a file whose rows
                # do not hold its new hash is indexed again by the next sync (a turn, `memory
                # search`, `memory reindex`, this command again). LanceDB commits a version only
                # once its files are written, so what a failed write left is never read.
                why = io_failure(e)
                if why is None:
                    raise
                raise StorageError(
                    f"could not index {shown}: {why}; the entry is saved ({shown}:{start}-{end}) and is "
                    "indexed at the next turn, `neotask memory search` or `memory reindex` once there is room"
                ) from None
            snap = self.store.snapshot()
            ids = [
                snap.ids[i] for i in range(len(snap.ids))
                if snap.cols["agent_id"][i] == agent_id and snap.cols["path"][i] == rel
                and snap.cols["line_start"][i] <= end and snap.cols["line_end"][i] >= start
            ]
        return AddReceipt(rel, start, end, body, n_red, ids, stats, existing=found is not None)

    def search(
        self, query: str, *, agent_id: str, k: int = 8, scopes: Sequence[str] | None = None,
        sources: Sequence[str] = ("memory", "transcript"), exclude: Collection[str] = (),
        params: RankParams | None = None, sync: bool = True, relevance: bool = False,
    ) -> list[MemoryHit]:
        """Hybrid search over one agent's memory (files are re-checked first: never stale).

        Args:
            query: Natural-language query.
            agent_id: Whose memory; other agents' chunks are never visible.
            k: Maximum hits.
            scopes: Restrict to these scopes (``None`` = all of the agent's scopes).
            sources: ``memory`` (includes accepted ``inbox`` entries), ``transcript``, ``inbox``.
            exclude: Chunk ids to leave out (e.g. "never recall in this session").
            params: Ranking knobs (defaults to :attr:`params`).
            sync: Re-check the files first (a write to the index). ``False`` for a reader that does
                not hold the data-dir lock: it reads the index as the lock holder keeps it, and
                for a turn's recall: it never waits for a reindex running in this process.
            relevance: Also score every hit on auto-recall's floor scale (``components["relevance"]``,
                :func:`~.search.relevance.floor_similarity`).

        Returns:
            Hits, best first.
        """
        import numpy as np

        query = clean_text(query)  # a lone surrogate (an undecodable argv byte) is U+FFFD, as in a message
        if not query.strip() or k <= 0:
            return []
        srcs = set(sources)
        if "memory" in srcs:
            srcs.add("inbox")
        if sync and srcs & set(FILE_SOURCES):
            self.sync(agent_id)
        p = params or self.params
        snap = self.store.snapshot(wait=sync)
        if not snap.ids:
            return []
        mask = snap.mask("agent", [agent_id]) & snap.mask("source", sorted(srcs))
        if scopes is not None:
            mask &= snap.mask("scope", list(scopes))
        stats_mask = mask
        if exclude:
            stats_mask = mask.copy()
            ex = [snap.index[e] for e in exclude if e in snap.index]
            mask[ex] = False
        rows = np.flatnonzero(mask)
        if len(rows) == 0:
            return []
        unknown = self._terms.unknown_words(query) if p.sem_weight > 0 and self._terms is not None else []
        named = named_senders(snap, query)  # the dense query and the sender signal both need them
        dq = dense_query(snap, query, named)
        if unknown and self._terms is not None:
            # one model call for the query and its words not seen before (semantic expansion)
            qvec, wvecs = self.embedder.embed_query_with(dq, unknown)
            self._terms.remember(unknown, wvecs)
        else:
            qvec = self.embedder.embed_query(dq)
        terms, lex, group, when, sender, cover = query_signals(snap, query, p, stats_mask, self._terms, named)
        # A message kept across a compaction is in two archived transcripts (same ids, same text): a
        # few spare rows let the copy be skipped without returning fewer than ``k`` hits.
        ranked = rank(qvec, snap.vectors, rows, lex, k=k + k // 4 + 4, params=p, ts=snap.ts, group=group,
                      offsets=self.embedder.spec.offsets,
                      when=when, sender=sender, lexical_cover=cover)
        hits: list[MemoryHit] = []
        seen: set[tuple[Any, ...]] = set()
        for r in ranked:
            if len(hits) >= k:
                break
            row = snap.row(r.row)
            if row["source"] == "transcript":
                key = (tuple(row["event_ids"] or ()), row["text"])
                if key in seen:
                    continue
                seen.add(key)
            matched = snap.matched(r.row, terms) if terms else []
            hits.append(
                MemoryHit(
                    id=row["id"], text=row["text"], score=r.score, components=r.components,
                    source=row["source"], path=row["path"], line_start=int(row["line_start"]),
                    line_end=int(row["line_end"]), event_ids=list(row["event_ids"] or []),
                    scope=row["scope"], heading=row["heading"],
                    why=explain(r.components, matched, row["heading"]), matched=matched,
                )
            )
        if relevance and hits:
            from neotask_tui.memory.index.models import pair_weights

            spec = self.embedder.spec
            weights = np.array([pair_weights(spec, dq, h.text) for h in hits], dtype=np.float64)
            mat = snap.vectors[[snap.index[h.id] for h in hits]]
            scripts = [script(h.text) for h in hits]
            for h, s in zip(hits, floor_similarity(mat, qvec, self._unrelated(), weights, scripts), strict=True):
                h.components["relevance"] = float(s)
            self._judge_by_statement(hits, qvec, dq, script(query))
        return hits

    def _judge_by_statement(self, hits: list[MemoryHit], qvec: npt.NDArray[np.float32], dq: str,
                            asked: str | None) -> None:
        """A line of a file passage in a script with references of its own
        (:data:`~.search.relevance.UNRELATED_BY_SCRIPT`) other than the message's (``asked``:
        :func:`~.search.relevance.script` of the message) is judged by itself as well. A match across
        languages has small cosines even alone ("Am I allergic to anything?" to "У меня аллергия на
        арахис." scored 0.065 over the floor's baseline), and in a passage with lines in the
        message's own language it is diluted under the floor: the note was never recalled once
        ``MEMORY.md`` held two more lines. Each such line (:func:`~.index.chunking.statements`) is
        embedded (once per process and model) and scored with
        :func:`~.search.relevance.floor_similarity` as a passage of its own, against the references
        of its script; the passage keeps the better score. Not judged alone: a line in the message's
        own script (same-language cosines are high, and the best of many such lines is the best of
        many chances: a Russian "write a poem about autumn" came within 0.003 of the floor to "we
        deploy on Thursdays" that way), and a line of Latin letters, digits or symbols (``1234567890``,
        a URL, a line of code: measured against the mixed references, which a message in another
        script is far from, it cleared the floor for a Thai greeting). Transcript passages are one
        message each and are judged whole.
        """
        import numpy as np

        from neotask_tui.memory.index.models import pair_weights

        lines_of: list[tuple[MemoryHit, list[str]]] = []
        for h in hits:
            if h.source == "transcript":
                continue
            lines = [ln.strip() for ln in statements(h.text).splitlines()]
            lines = [ln for ln in lines if lexical.terms(ln) and script(ln) not in (None, asked)]
            if lines:
                lines_of.append((h, lines))
        if not lines_of:
            return
        flat = list(dict.fromkeys(ln for _, lines in lines_of for ln in lines))
        vecs = self._statement_vectors(flat)
        spec = self.embedder.spec
        weights = np.array([pair_weights(spec, dq, ln) for ln in flat], dtype=np.float64)
        sims = floor_similarity(vecs, qvec, self._unrelated(), weights, [script(ln) for ln in flat])
        best = dict(zip(flat, (float(x) for x in sims), strict=True))
        for h, lines in lines_of:
            top = max(best[ln] for ln in lines)
            if top > h.components.get("relevance", top):
                h.components["relevance"] = top

    def _statement_vectors(self, lines: list[str]) -> npt.NDArray[np.float32]:
        """Stored-form vectors of ``lines`` (embedded once per process and model: a turn's recall
        meets the same ``MEMORY.md`` lines again)."""
        import numpy as np

        key = self.embedder.model_id
        with _STATEMENT_LOCK:
            cache = _STATEMENT_VECTORS.setdefault(key, {})
            got = {ln: cache[ln] for ln in lines if ln in cache}
        todo = [ln for ln in lines if ln not in got]
        if todo:
            got.update(zip(todo, self.embedder.embed(todo, urgent=True), strict=True))
            with _STATEMENT_LOCK:
                for ln in todo:
                    if len(cache) >= tuning.MEMORY_STATEMENT_CACHE_LINES:
                        cache.pop(next(iter(cache)))
                    cache[ln] = got[ln]
        return np.stack([got[ln] for ln in lines])

    def _unrelated(self) -> dict[str | None, npt.NDArray[np.float32]]:
        """The stored vectors of each reference set of :func:`~.search.relevance.references` (by
        script key) for this embedding model (:func:`~.search.relevance.unrelated_vectors`)."""
        return unrelated_vectors(self.embedder)

    def recall(
        self, query: str, *, agent_id: str, budget_tokens: int, k: int, exclude: Collection[str] = (),
        refresh: bool = True, keep: Callable[[MemoryHit], bool] | None = None,
    ) -> list[MemoryHit]:
        """Hits for auto-recall that fit in ``budget_tokens`` (counted on the hit text).

        Uses MMR so recalled passages are not near-duplicates, and the configured ``min_score``.
        Transcripts are included only when ``include_transcripts`` is set. ``refresh=False`` reads
        the index as it is (a preview of the context: nothing is written).

        On top of the ranking:

        - a message without a content word besides acknowledgements and greetings
          (:func:`~neotask_tui.text.lexical.about_nothing`: "thanks!", "Okay, got it.", "Понятно.")
          recalls nothing, and a passage without one ("ok") is not recalled; in a message with one,
          such sentences are left out of what is searched for (:func:`~neotask_tui.text.lexical.asked`);
        - nothing below the relevance floor (:func:`~.search.relevance.relevant`: most of the query's
          terms, or a similarity of at least :data:`~neotask_tui.tuning.MEMORY_RECALL_MIN_COSINE`
          measured from the message's own closeness to unrelated text, each model's weight following
          the language of both texts: :func:`~.search.relevance.floor_similarity`) is recalled, so
          a message about nothing in memory recalls nothing;
        - ``keep`` (the caller's policy: scopes, which transcripts and speakers) is applied before the
          budget, so what it drops leaves room for the next hits;
        - consented memory comes first, then transcripts (:func:`~.types.recall_rank`), each
          best first;
        - a passage whose text a passage already taken repeats (:func:`~.search.relevance.covered`)
          is left out: the same text from two sources is one item, the consented one. A file
          passage is compared by what it says (:func:`~.index.chunking.statements`: headings and
          entry stamps aside), so one fact in ``MEMORY.md`` and in a ``memory/`` note, or under two
          headings, is one item too: the one ranked first (consented before transcripts, then the
          better match), whose id a forget or a "never recall" acts on.
        """
        if budget_tokens <= 0 or k <= 0:
            return []
        sources = ("memory", "transcript") if self.settings.include_transcripts else ("memory",)
        params = dataclasses.replace(self.params, mmr_lambda=tuning.MEMORY_RECALL_MMR_LAMBDA,
                                     min_score=self.settings.min_score)
        if refresh:
            self._refresh_for_turn(agent_id)
        if lexical.about_nothing(query):
            return []  # no content word besides courtesy and go-ons ("thanks!", "Okay, got it.", "Понятно.")
        query = lexical.asked(query)  # "Got it. And the backup?" searches for the backup, not for small talk
        hits = self.search(query, agent_id=agent_id, k=k * 3, sources=sources, exclude=exclude, params=params,
                           sync=False, relevance=True)
        n_terms = len(set(lexical.terms(query)))
        # A passage without one content word ("ok", "thanks!"; for a file passage, besides its headings:
        # a bare "# Memory"; for a message, besides thanks and greetings: "Thanks a lot, that helps.")
        # carries nothing to recall: on e5 such chatter is close to any other chatter.
        hits = [h for h in hits if relevant(_floor_cosine(h), len(h.matched), n_terms)
                and (not lexical.about_nothing(h.text) if h.source == "transcript"
                     else lexical.terms(statements(h.text)))
                and (keep is None or keep(h))]
        hits.sort(key=lambda h: recall_rank(h.kind))  # stable: best first within each
        out: list[MemoryHit] = []
        said: list[str] = []  # what each passage taken says (a file passage's headings and stamps aside)
        used = 0
        for h in hits:
            text = h.text if h.source == "transcript" else statements(h.text)
            if any(covered(text, o) for o in said):
                continue
            cost = self._count(h.text) + 12  # fence + source line overhead
            if used + cost > budget_tokens:
                continue
            out.append(h)
            said.append(text)
            used += cost
            if len(out) >= k:
                break
        return out

    def reindex(self, agent_id: str, *, full: bool = False) -> ReindexStats:
        """Bring the agent's file index up to date (``full`` re-embeds everything).

        The returned stats carry the notices not reported yet (skipped files), which this call
        takes: the caller shows them.
        """
        stats = self.sync(agent_id, full=full)
        stats.notices = self.take_notices()
        if full or stats.chunks_embedded > 500:
            self.store.optimize()  # also deletes older versions: the store stays the size of its rows
        if full or stats.chunks_deleted:  # only a deleted chunk can take the last use of a word
            self._prune_terms()
        return stats

    def get(self, agent_id: str, path: str, lines: tuple[int, int] | None = None) -> str:
        """Text of a memory file (optionally lines ``(start, end)``, 1-based inclusive).

        ``transcripts/<session>`` returns the indexed (redacted) messages of that session.

        Raises:
            ValueError: for unsafe paths or a missing file.
        """
        if path.startswith("transcripts/"):
            sid = path.split("/", 1)[1]
            rows = self.store.rows_where(
                f"agent_id = {sql_str(agent_id)} AND session_id = {sql_str(sid)}",
                ["event_ids", "heading", "text"],
            )
            rows.sort(key=lambda r: (r["event_ids"] or [0])[0])
            if lines:
                rows = [r for r in rows if lines[0] <= (r["event_ids"] or [0])[0] <= lines[1]]
            return "\n".join(f"[e:{(r['event_ids'] or [0])[0]}] {r['heading']}: {r['text']}" for r in rows)
        if MARKER_PREFIX in path:  # a location as shown, its file name redacted: the file it names
            path = self._unredacted_path(agent_id, path)
        text = self.read(agent_id, path)
        if lines is None:
            return text
        all_lines = text.splitlines()
        a, b = max(1, lines[0]), min(len(all_lines), lines[1])
        return "\n".join(all_lines[a - 1 : b])

    def _unredacted_path(self, agent_id: str, shown: str) -> str:
        """The indexed file whose name, redacted, reads ``shown`` (``shown`` itself if none or several)."""
        rows = self.store.rows_where(f"agent_id = {sql_str(agent_id)} AND source != 'transcript'", ["path"])
        found = {str(r["path"]) for r in rows if redact_path(str(r["path"])) == shown}
        return found.pop() if len(found) == 1 else shown

    def index_transcript(self, agent_id: str, session_id: str, events: Sequence[Event], scope: str) -> int:
        """Index an archived transcript as the ``transcript`` source (idempotent, redacted).

        Returns:
            Number of chunks now indexed for that session.
        """
        if not self.settings.include_transcripts:
            return 0
        with self._lock:
            tombstones = read_tombstones(self.workspace(agent_id))
            n, _ = self.indexer.index_transcript(agent_id, session_id, events, scope, tombstones)
        return n

    def withheld_turns(self, agent_id: str, events: Sequence[Event], exclude: Collection[str] = ()) -> set[int]:
        """Ids of the messages of ``events`` (archived transcript turns) that recall must leave out, as
        it leaves them out of its own hits: forgotten ones (tombstoned, see :meth:`forget`) and those
        whose indexed passage is in ``exclude`` (the session's ``never_recall``)."""
        out = self.indexer.forgotten_events(events, read_tombstones(self.workspace(agent_id)))
        if exclude:
            snap = self.store.snapshot()
            for cid in exclude:
                i = snap.index.get(cid)
                if i is not None and snap.cols["agent_id"][i] == agent_id:
                    out.update(int(e) for e in (snap.cols["event_ids"][i] or []))
        return out

    def forget(self, agent_id: str, id_or_query: str) -> ForgetReceipt:
        """Remove a chunk by id, or what a query names in its best match, from file/store; verify.

        By id, the passage's own lines are cut from the file (headings kept); for a query, only the
        list items / sentences that hold every word of the query, in the best passage that has one
        (see :mod:`.forget`). The file is reindexed and the receipt names every line cut. A transcript
        chunk is tombstoned (re-indexing skips it), deleted, and its session's rows rebuilt
        without it (its neighbours carried it as context).

        Raises:
            ValueError: when nothing matches (nothing is removed).
        """
        with self._lock:
            self.sync(agent_id)  # an id names the passage as the file is now, not as it was indexed
            snap = self.store.snapshot()
            target: dict[str, Any] | None = None
            id_or_query = clean_text(id_or_query)  # as in a message: a lone surrogate is U+FFFD
            key = id_or_query.strip()
            i = snap.index.get(key)
            if i is not None and snap.cols["agent_id"][i] == agent_id:
                target = snap.row(i)
            elif not query_words(id_or_query):
                raise ValueError(f"{id_or_query!r} has no word to look for (words such as \"the\" are "
                                 "ignored); nothing was removed")
            else:  # the best passage with a statement that holds every word of the query
                hits = self.search(id_or_query, agent_id=agent_id, k=tuning.MEMORY_FORGET_CANDIDATES,
                                   sources=("memory", "transcript"))
                snap = self.store.snapshot()
                target = next((row for row in (snap.row(snap.index[h.id]) for h in hits if h.id in snap.index)
                               if holds_query(self, agent_id, row, id_or_query)), None)
            if target is None:
                raise ValueError(f"nothing in memory holds every word of {id_or_query!r}; nothing was removed" + (
                    " (if that was a passage id, its file has changed since: search again)"
                    if _CHUNK_ID.fullmatch(key) else ""))
            receipt = forget_chunk(self, agent_id, target, id_or_query)
            self.store.purge()  # the text must not survive in older versions or the FTS index files
            self._prune_terms()
            receipt.dropped_copies = self._drop_quarantined_stores()
            return receipt

    def _drop_quarantined_stores(self) -> list[str]:
        """Delete the damaged store copies moved to ``quarantine/`` (see :meth:`_open_store`).

        They hold text indexed before the damage, forgotten text among it, and nothing the memory
        files and transcripts cannot rebuild: after a forget no copy may keep it.
        """
        qdir = paths.quarantine_dir()
        if paths.linked_part(qdir) is not None or not qdir.is_dir():  # never deletes through a link
            return []
        dropped: list[str] = []
        for p in sorted(qdir.glob("*.lance.*")):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
                dropped.append(p.name)
        return dropped

    def _prune_terms(self) -> None:
        """Drop word vectors of words no longer in any indexed row (a forgotten chunk's words)."""
        if self._terms is not None:
            self._terms.prune(self.store.snapshot().field_index("lex").vocab)

    def start_watcher(self, agent_id: str, on_change: Callable[[ReindexStats], None] | None = None) -> None:
        """Watch the agent's memory files and reindex on change (background thread)."""
        self.stop_watcher()
        paths.ensure_dir(self.workspace(agent_id))
        self._watcher = Watcher(self, agent_id, on_change)
        self._watcher.start()

    def stop_watcher(self) -> None:
        """Stop the watcher if running."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def close(self) -> None:
        """Stop the watcher and any background indexing, and release the store."""
        self.stop_watcher()
        if self._indexer is not None:
            self._indexer.cancel.set()
        self.wait_for_index()
        with self._lock:
            self._store = None
            self._indexer = None

    def stats(self, agent_id: str | None = None) -> dict[str, Any]:
        """Row counts by source (for ``doctor`` and the CLI; never waits for a running reindex)."""
        snap = self.store.snapshot(wait=False)
        out: dict[str, Any] = {"table": self.store.name, "rows": 0, "by_source": {}}
        for i, a in enumerate(snap.cols.get("agent_id", [])):
            if agent_id is None or a == agent_id:
                out["rows"] += 1
                s = snap.cols["source"][i]
                out["by_source"][s] = out["by_source"].get(s, 0) + 1
        return out

    def _now(self) -> float:
        return time.time()


__all__ = ["ENTRY_RE", "MemoryService", "check_rel_path"]


def _read_reported() -> dict[str, list[str]]:
    """:func:`~neotask_tui.paths.memory_reported_file` as read (empty when missing or unreadable)."""
    try:
        data = json.loads(paths.memory_reported_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(x) for x in v] for k, v in data.items() if isinstance(v, list)}


def _write_reported(agent_id: str, lines: Collection[str]) -> None:
    """Record the agent's reported entries (atomically; a failure only means telling again)."""
    data = _read_reported()
    if lines:
        data[agent_id] = sorted(lines)
    else:
        data.pop(agent_id, None)
    try:
        atomic_write_text(paths.memory_reported_file(), json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    except OSError as e:
        log.warning("memory: could not record the reported skipped files (%s)", e)
