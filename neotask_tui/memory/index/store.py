"""The LanceDB chunk table plus an in-memory cache of its vectors and metadata.

LanceDB is the source of truth (vectors, text, metadata, a native full-text index on the normalised
``lex`` column and another on the ``ctx`` neighbour-context column). Dense search runs with numpy
over a cache of the vectors, reloaded when the table version changes: a flat scan over 100k x 384 in
numpy is ~10x faster than LanceDB's flat vector search here, and needs no index build. BM25 is
scored in process too (:mod:`.bm25`, an inverted index built from the cached ``lex``/``ctx``
columns on first use): a LanceDB FTS query costs ~10 round trips into its background thread, which
dominated search latency on a busy machine. Every write invalidates the cache, indices included.

Every LanceDB call that may create files runs under :func:`private_files` (umask 077), so the
store's files are 0600 and its folders 0700 whatever the user's umask; housekeeping removes old
table versions at once (a deleted row's text must not survive in an older version's files).

One table per embedding model (``chunks_<model>_<dim>``): changing the model leaves the old table
behind, which the service migrates (transcript rows re-embedded) and drops, so a model change is a
full reindex by construction.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neotask_tui.errors import NeotaskError
from neotask_tui.text import lexical
from neotask_tui.text.bm25 import FieldIndex
from neotask_tui.text.senders import SENDER_NAME

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

TABLE_PREFIX = "chunks_"
FTS_COLUMNS = ("lex", "ctx")
_REINDEX_UNINDEXED = 2000
"""Rebuild the FTS indices when this many rows are not covered by them yet."""

META_COLUMNS = (
    "id", "agent_id", "scope", "source", "path", "line_start", "own_start", "line_end", "heading",
    "text", "hash", "file_hash", "file_mtime", "file_size", "ts", "event_ids", "session_id",
)
ROW_COLUMNS = (
    "id", "agent_id", "scope", "source", "path", "line_start", "own_start", "line_end", "heading", "text",
    "etext", "lex", "ctx", "hash", "file_hash", "file_mtime", "file_size", "ts", "event_ids", "session_id",
)
"""Every column of a row but its vector (what a migration copies before re-embedding)."""
TERM_SOURCE_COLUMNS = ("agent_id", "source", "session_id", "text", "heading", "event_ids")
"""What the ``lex``/``ctx`` columns of a row are derived from (see :meth:`ChunkStore.rewrite_terms`)."""


class StoreError(NeotaskError):
    """The memory store cannot be used; the message (one line) names the URI and the cause."""


def is_remote(uri: str) -> bool:
    """Whether ``uri`` names a store we must never delete or move (any ``scheme://`` URI)."""
    return "://" in uri


_umask_lock = threading.Lock()
_umask_users = 0
_umask_saved = 0


@contextlib.contextmanager
def private_files() -> Iterator[None]:
    """Run a block with the process umask at least 077 (files 0600, folders 0700).

    The umask is process-wide, so nested and concurrent users are counted: the first one in sets
    it, the last one out restores it. Another thread creating a file meanwhile gets a stricter
    mode, never a looser one. Chosen over chmod-after-write because LanceDB creates files (data,
    deletion files, manifests, index parts) in its own threads, which we cannot enumerate cheaply.
    """
    global _umask_users, _umask_saved
    with _umask_lock:
        if _umask_users == 0:
            _umask_saved = os.umask(0o077)
            os.umask(_umask_saved | 0o077)
        _umask_users += 1
    try:
        yield
    finally:
        with _umask_lock:
            _umask_users -= 1
            if _umask_users == 0:
                os.umask(_umask_saved)


def make_private(root: Path) -> None:
    """chmod folders to 0700 and files to 0600 below ``root`` (a store or model folder made by an
    older version or under another umask); links are left alone and not followed."""
    for dirpath, dirnames, filenames in os.walk(root):
        with contextlib.suppress(OSError):
            os.chmod(dirpath, 0o700)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o600)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]


def table_name(model_id: str, dim: int) -> str:
    """Table name for a model: changing the model means a different table."""
    slug = re.sub(r"[^a-z0-9]+", "_", model_id.lower()).strip("_")
    return f"{TABLE_PREFIX}{slug}_{dim}"


def sql_str(value: str) -> str:
    """Quote a string literal for a LanceDB filter."""
    return "'" + value.replace("'", "''") + "'"


TERMS_STAMP = b"lexical"
"""Key of the ``lex`` field's metadata that names the :data:`TERMS_VERSION` its terms (and those of
``ctx``) were made with."""
TERMS_VERSION = f"{lexical.VERSION}+headings-ctx"
"""How a row's ``lex``/``ctx`` terms are made: the tokenizer (:data:`~neotask_tui.text.lexical.VERSION`)
and what text goes where (``headings-ctx``: a file passage's heading lines count once, as its
``ctx`` heading path, not in its own ``lex`` terms too). A store stamped otherwise rebuilds them."""


def _schema(dim: int) -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("id", pa.string()),
            ("agent_id", pa.string()),
            ("scope", pa.string()),
            ("source", pa.string()),
            ("path", pa.string()),
            ("line_start", pa.int32()),
            ("own_start", pa.int32()),
            ("line_end", pa.int32()),
            ("heading", pa.string()),
            ("text", pa.string()),
            ("etext", pa.string()),
            pa.field("lex", pa.string(), metadata={TERMS_STAMP: TERMS_VERSION.encode()}),
            ("ctx", pa.string()),
            ("hash", pa.string()),
            ("file_hash", pa.string()),
            ("file_mtime", pa.float64()),
            ("file_size", pa.int64()),
            ("ts", pa.float64()),
            ("event_ids", pa.list_(pa.int64())),
            ("session_id", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


_SENDER = re.compile(r"^\s*(" + SENDER_NAME + r"):\s")


def _sender(text: str) -> str:
    m = _SENDER.match(text)
    return lexical.fold(m.group(1)) if m else ""  # folded as the query's words are


@dataclass
class Snapshot:
    """Cached columns of the whole table (row order = cache order)."""

    version: int = -1
    ids: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    cols: dict[str, list[Any]] = field(default_factory=dict)
    agent: Any = None  # numpy object array
    scope: Any = None
    source: Any = None
    ts: Any = None
    vectors: Any = None  # (n, dim) float32

    file_rows: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    masks: dict[tuple[str, str], Any] = field(default_factory=dict)
    lex_columns: dict[str, Any] = field(default_factory=dict)
    """The raw FTS columns (pyarrow arrays), turned into :class:`FieldIndex` on first use."""
    _fields: dict[str, FieldIndex] = field(default_factory=dict)
    _fields_lock: threading.Lock = field(default_factory=threading.Lock)
    _groups: tuple[npt.NDArray[np.int64], int] | None = None
    _senders: tuple[npt.NDArray[np.int64], list[str]] | None = None

    def field_index(self, column: str) -> FieldIndex:
        """The in-memory BM25 index of an FTS column (built once per snapshot, thread-safe)."""
        got = self._fields.get(column)
        if got is None:
            with self._fields_lock:
                got = self._fields.get(column)
                if got is None:
                    got = self._fields[column] = FieldIndex(self.lex_columns.get(column, []))
        return got

    def mask(self, column: str, values: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Boolean row mask ``column in values`` (per-value masks cached per snapshot)."""
        import numpy as np

        arr = {"agent": self.agent, "source": self.source, "scope": self.scope}[column]
        out = np.zeros(len(self.ids), dtype=bool)
        for v in values:
            m = self.masks.get((column, v))
            if m is None:
                m = self.masks[(column, v)] = arr == v
            out |= m
        return out

    def groups(self) -> tuple[npt.NDArray[np.int64], int]:
        """``(code per row, number of codes)``: rows grouped by source path (a file, a session)."""
        got = self._groups
        if got is None:
            import numpy as np

            with self._fields_lock:
                uniq, inv = np.unique(np.asarray(self.cols.get("path", []), dtype=object), return_inverse=True)
                got = self._groups = (inv.astype(np.int64), len(uniq))
        return got

    def senders(self) -> tuple[npt.NDArray[np.int64], list[str]]:
        """``(code per row, names)``: the sender (folded as query words are) of every transcript row
        whose message starts with one (``"Alice: ..."``, as bridged group chats and pasted logs write it); code -1
        where there is none."""
        got = self._senders
        if got is None:
            import numpy as np

            src = self.cols.get("source", [])
            names: dict[str, int] = {}
            codes = np.full(len(self.ids), -1, dtype=np.int64)
            for i, (t, s) in enumerate(zip(self.cols.get("text", []), src, strict=False)):
                if s == "transcript":
                    n = _sender(str(t))
                    if n:
                        codes[i] = names.setdefault(n, len(names))
            got = (codes, list(names))
            with self._fields_lock:
                self._senders = got
        return got

    def matched(self, i: int, terms: Sequence[str]) -> list[str]:
        """The normalised query ``terms`` found in row ``i``'s own text (its ``lex`` column) and, for
        a file passage, its heading path (its ``ctx``: "## Pets" over "- Max, Luna" holds "pets")."""
        have: set[str] = set()
        for name in ("lex",) if self.cols["source"][i] == "transcript" else ("lex", "ctx"):
            col = self.lex_columns.get(name)
            if col is not None:
                have.update(str(col[i].as_py() or "").split())
        return [t for t in terms if t in have]

    def row(self, i: int) -> dict[str, Any]:
        """Metadata of cache row ``i``."""
        return {c: self.cols[c][i] for c in META_COLUMNS}

    def files_of(self, agent_id: str, sources: tuple[str, ...]) -> dict[str, list[int]]:
        """``path -> row indices`` of an agent's file-backed rows (cached per snapshot)."""
        key = agent_id + "\x00" + ",".join(sources)
        got = self.file_rows.get(key)
        if got is None:
            import numpy as np

            got = {}
            if self.ids:
                hit = np.flatnonzero((self.agent == agent_id) & np.isin(self.source, list(sources)))
                paths = self.cols["path"]
                for i in hit.tolist():
                    got.setdefault(paths[i], []).append(i)
            self.file_rows[key] = got
        return got


class ChunkStore:
    """Thread-safe wrapper around one LanceDB chunk table.

    Args:
        uri: LanceDB URI (a local directory or an object-store URI).
        model_id: Embedding model id (part of the table name).
        dim: Vector dimension.
    """

    def __init__(self, uri: str, model_id: str, dim: int) -> None:
        import lancedb

        self.uri = uri
        self.dim = dim
        self.name = table_name(model_id, dim)
        self.lock = threading.RLock()
        self.remote = is_remote(uri)
        with private_files():
            if not self.remote and Path(uri).is_dir():
                make_private(Path(uri))
            self._db = lancedb.connect(uri)
            self._snap = Snapshot()
            self._dirty = True
            self._checked = 0.0
            existing = self.table_names()
            if self.name in existing:
                self._tbl = self._db.open_table(self.name)
            else:
                self._tbl = self._db.create_table(self.name, schema=_schema(dim))
            self._fts_ready = {c for c in FTS_COLUMNS if self._has_index(c)}

    # -- tables ---------------------------------------------------------------------------------

    def table_names(self) -> list[str]:
        """Names of all tables in the database."""
        # getattr on LanceDB's connection and its answer: list_tables() is missing in older LanceDB
        # releases (only table_names()), and returns a plain list in some, a response with
        # ``.tables`` in newer ones.
        lister = getattr(self._db, "list_tables", None)
        if lister is not None:
            res = lister()
            names = getattr(res, "tables", res)
            return [str(n) for n in names]
        return [str(n) for n in self._db.table_names()]  # pragma: no cover - older lancedb

    def stale_tables(self) -> list[str]:
        """Chunk tables of other models (left over after a model change)."""
        return [n for n in self.table_names() if n.startswith(TABLE_PREFIX) and n != self.name]

    def read_table(self, name: str, columns: Sequence[str]) -> list[dict[str, Any]]:
        """All rows of another table (used to migrate transcripts after a model change)."""
        tbl = self._db.open_table(name)
        have = set(tbl.schema.names)
        cols = [c for c in columns if c in have]
        return list(tbl.to_arrow().select(cols).to_pylist())

    def drop_table(self, name: str) -> None:
        """Drop another table."""
        with private_files():
            self._db.drop_table(name)

    # -- writes ---------------------------------------------------------------------------------

    def add(self, rows: Sequence[dict[str, Any]]) -> None:
        """Insert rows (dicts with every schema column; ``vector`` as a float sequence)."""
        if not rows:
            return
        import pyarrow as pa

        with self.lock, private_files():
            data = pa.Table.from_pylist(list(rows), schema=self._tbl.schema)
            self._dirty = True
            self._tbl.add(data)
            self._maintain_fts()

    def add_arrays(self, meta: dict[str, list[Any]], vectors: npt.NDArray[np.float32]) -> None:
        """Bulk insert from column lists plus a vector matrix (fast path for benches/migrations)."""
        import pyarrow as pa

        with self.lock, private_files():
            schema = self._tbl.schema
            flat = pa.array(vectors.reshape(-1), type=pa.float32())
            vec = pa.FixedSizeListArray.from_arrays(flat, self.dim)
            arrays = [vec if f.name == "vector" else pa.array(meta[f.name], type=f.type) for f in schema]
            self._dirty = True
            self._tbl.add(pa.Table.from_arrays(arrays, schema=schema))
            self._maintain_fts()

    def delete_ids(self, ids: Iterable[str]) -> int:
        """Delete rows by chunk id; returns how many ids were given."""
        ids = list(ids)
        if not ids:
            return 0
        with self.lock, private_files():
            self._dirty = True
            for i in range(0, len(ids), 500):
                part = ", ".join(sql_str(x) for x in ids[i : i + 500])
                self._tbl.delete(f"id IN ({part})")
        return len(ids)

    def delete_where(self, where: str) -> None:
        """Delete rows matching a LanceDB filter."""
        with self.lock, private_files():
            self._dirty = True
            self._tbl.delete(where)

    def _has_index(self, column: str) -> bool:
        try:
            return any(column in ix.columns for ix in self._tbl.list_indices())
        except Exception:  # pragma: no cover - remote tables may not list
            return False

    def _maintain_fts(self) -> None:
        """Create the FTS indices once; rebuild them when many rows are unindexed.

        LanceDB searches unindexed rows too (flat), so new rows are found immediately; the rebuild
        only keeps that flat part small.
        """
        for col in FTS_COLUMNS:
            if col not in self._fts_ready:
                self._create_fts(col)
                continue
            try:
                stats = self._tbl.index_stats(f"{col}_idx")
                # LanceDB's IndexStatistics (or None for a missing index): the field is not in every release
                unindexed = int(getattr(stats, "num_unindexed_rows", 0) or 0)
            except Exception:
                unindexed = 0
            if unindexed >= _REINDEX_UNINDEXED:
                self._create_fts(col)

    def _create_fts(self, col: str) -> None:
        import warnings

        with warnings.catch_warnings():
            # The sync LanceTable.create_index() is the vector-index API in 0.40; the FTS form of it
            # is only documented for the async table, so we keep the (deprecated) direct call.
            warnings.simplefilter("ignore", DeprecationWarning)
            self._create_fts_index(col)

    def _create_fts_index(self, col: str) -> None:
        self._tbl.create_fts_index(
            col,
            replace=True,
            base_tokenizer="whitespace",
            lower_case=False,
            stem=False,
            remove_stop_words=False,
            ascii_folding=False,
            max_token_length=64,
        )
        self._fts_ready.add(col)

    def optimize(self) -> None:
        """Compact fragments, bring indices up to date and delete every older table version.

        Without the cleanup each reindex kept the previous data files (four full reindexes of 2,000
        notes: 363 MB), and a deleted row's text stayed on disk in them. ``delete_unverified``
        also removes files of interrupted writes: safe because one process writes at a time (the
        data-dir lock) and this process's writers hold :attr:`lock`.
        """
        import warnings

        with self.lock, private_files(), warnings.catch_warnings():
            # LanceDB warns that a reader of an older version fails: a reader in another process
            # (``memory search`` while the app runs) retries on the latest version (:meth:`snapshot`).
            warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)", category=UserWarning)
            self._dirty = True
            try:
                self._tbl.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
            except Exception as e:  # pragma: no cover - best effort housekeeping
                log.warning("memory store optimize failed: %s", e)

    def terms_stamp(self) -> str:
        """The :data:`TERMS_VERSION` the ``lex``/``ctx`` columns were made with (``""``: before stamps)."""
        with self.lock:
            meta = self._tbl.schema.field("lex").metadata or {}
            return meta.get(TERMS_STAMP, b"").decode()

    def rewrite_terms(
        self, compute: Callable[[list[dict[str, Any]]], tuple[list[str], list[str]]], stamp: str,
    ) -> int:
        """Replace the ``lex``/``ctx`` columns of every row with ``compute(rows)`` and stamp them.

        ``rows`` are the rows' ``TERM_SOURCE_COLUMNS`` in table order; ``compute`` returns the new
        ``lex`` and ``ctx`` values in that order. The table is overwritten in one commit (data and
        stamp together: an interrupted rebuild leaves the old table and stamp, and runs again), the
        full-text indices are rebuilt and older versions deleted (:meth:`optimize`). Vectors are
        kept as they are.

        Returns:
            The number of rows rewritten.
        """
        import pyarrow as pa

        with self.lock, private_files():
            data = self._tbl.to_arrow()
            lex, ctx = compute(data.select(list(TERM_SOURCE_COLUMNS)).to_pylist())
            if len(lex) != data.num_rows or len(ctx) != data.num_rows:
                raise ValueError("rewrite_terms: one lex and one ctx value per row")
            schema = _schema(self.dim)
            meta = {TERMS_STAMP: stamp.encode()}
            schema = schema.set(schema.get_field_index("lex"), schema.field("lex").with_metadata(meta))
            fresh = {"lex": pa.array(lex, type=pa.string()), "ctx": pa.array(ctx, type=pa.string())}
            have = set(data.schema.names)
            arrays = [
                fresh[f.name] if f.name in fresh
                else data.column(f.name) if f.name in have
                else pa.nulls(data.num_rows, type=f.type)  # a column older stores lack
                for f in schema
            ]
            table = pa.Table.from_arrays(arrays, schema=schema)
            self._dirty = True
            self._tbl.add(table, mode="overwrite")
            self._fts_ready.clear()
            self._maintain_fts()
            self.optimize()
            return int(data.num_rows)

    def purge(self) -> None:
        """Make deleted rows unrecoverable from the files: rebuild the full-text indices (which
        still hold the terms of deleted rows), compact, and delete every older version."""
        with self.lock, private_files():
            for col in sorted(self._fts_ready):
                self._create_fts(col)
            self.optimize()

    # -- reads ----------------------------------------------------------------------------------

    def count(self) -> int:
        """Number of rows."""
        with self.lock:
            return int(self._tbl.count_rows())

    def snapshot(self, max_age: float = 1.0, *, wait: bool = True) -> Snapshot:
        """The cached columns, reloaded if the table changed.

        With ``wait=False`` a writer holding the lock (a long reindex) is not waited for: the last
        snapshot is returned as it is.

        Our own writes invalidate the cache at once; writes by another process (the CLI while the
        app runs) are noticed within ``max_age`` seconds (checking the table version costs a round
        trip through LanceDB's event loop, so it is not done on every search).
        """
        import time

        import numpy as np

        if not self.lock.acquire(blocking=wait):
            return self._snap
        try:
            now = time.monotonic()
            if not self._dirty and now - self._checked < max_age:
                return self._snap
            self._tbl.checkout_latest()
            version = int(self._tbl.version)
            self._checked = now
            self._dirty = False
            if version == self._snap.version:
                return self._snap
            try:
                arrow = self._tbl.to_arrow()
            except Exception:  # that version's files were just cleaned up by the writer: read the latest
                self._tbl.checkout_latest()
                version = int(self._tbl.version)
                arrow = self._tbl.to_arrow()
            snap = Snapshot(version=version)
            for c in META_COLUMNS:
                snap.cols[c] = arrow.column(c).to_pylist()
            snap.ids = snap.cols["id"]
            snap.lex_columns = {c: arrow.column(c) for c in FTS_COLUMNS}
            snap.index = {x: i for i, x in enumerate(snap.ids)}
            snap.agent = np.asarray(snap.cols["agent_id"], dtype=object)
            snap.scope = np.asarray(snap.cols["scope"], dtype=object)
            snap.source = np.asarray(snap.cols["source"], dtype=object)
            snap.ts = np.asarray([t or 0.0 for t in snap.cols["ts"]], dtype=np.float64)
            vec = arrow.column("vector").combine_chunks()
            flat = vec.values.to_numpy(zero_copy_only=False) if len(vec) else np.zeros(0, np.float32)
            snap.vectors = np.ascontiguousarray(flat.reshape(len(vec), self.dim), dtype=np.float32)
            self._snap = snap
            return snap
        finally:
            self.lock.release()

    def rows_where(self, where: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Rows matching a filter (all columns but the vector unless ``columns`` says otherwise)."""
        with self.lock:
            cols = list(columns) if columns else [c for c in self._tbl.schema.names if c != "vector"]
            res = self._tbl.search().where(where).select(cols).limit(None).to_arrow()
            return list(res.to_pylist())

    def fts(self, query: Any, where: str, limit: int) -> list[tuple[str, float]]:
        """Full-text (BM25) search; ``query`` is a string or a LanceDB FTS query object.

        Returns:
            ``(chunk id, bm25 score)`` pairs, best first.
        """
        with self.lock:
            if not self._fts_ready:
                return []
            if isinstance(query, str):
                q = self._tbl.search(query, query_type="fts", fts_columns="lex")
            else:
                q = self._tbl.search(query, query_type="fts")
            res = q.where(where, prefilter=True).select(["id", "_score"]).limit(limit).to_arrow()
        ids = res.column("id").to_pylist()
        scores = res.column("_score").to_pylist()
        return list(zip(ids, (float(s) for s in scores), strict=True))
