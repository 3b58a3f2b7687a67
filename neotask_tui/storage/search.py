"""Full-text search over every transcript: live, archived, reset and compacted sessions.

The index is an SQLite FTS5 database (``<data>/search/index.sqlite3``, stdlib ``sqlite3``): one row
per message or tool result, its text redacted exactly as every other derived store is (the
transcripts keep what was typed; this index is never a second place a secret lives). It is derived
data: the transcripts are the truth, and the index only remembers, per transcript, how many bytes
of it are indexed (plus a digest of the bytes just before that point, so a file that changed under
it is indexed again from the start). Keeping it up to date is therefore always "index what was
appended since": :meth:`SearchIndex.sync_session` after each append (the store calls it), and
:meth:`SearchIndex.sync` before a search (a stat per transcript when nothing changed).

Crash safety comes from SQLite: WAL journal, and each transcript's new rows and its new offset are
one transaction, so a kill -9 leaves the index at the old offset or the new one, never between
(``synchronous=NORMAL``: a commit that a power cut loses took its offset with it, so those lines
are simply indexed again). A missing, damaged or out-of-date (schema) index is moved to ``quarantine/``
and rebuilt from the transcripts, with a notice.

Only the data-dir lock holder writes the index. A process beside it opens the database read-only
(``mode=ro``; WAL lets it read while the holder writes; ``immutable`` when there is no WAL, so it
creates nothing) and searches what it cannot index yet —
transcript bytes past the recorded offsets, or everything when there is no readable index — in an
in-memory table built for that one search, so its results are complete all the same.

Queries: words are matched exactly (case-insensitively, accents folded, any script: the index
matches on :func:`fold` of the text, the query is folded alike, then the ``unicode61`` tokenizer),
all of them must occur; ``"a quoted phrase"`` matches those words in that
order; ``word*`` matches a prefix. Nothing else in the query is syntax.
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
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

from neotask_tui import paths, tuning
from neotask_tui.errors import StorageError, UserError, io_failure
from neotask_tui.storage.events import Event, now_iso
from neotask_tui.text.clean import clean_text
from neotask_tui.text.secrets import MARKER_PREFIX, find_secrets, redact_values

log = logging.getLogger("neotask.search")

SCHEMA_VERSION = "2"
MARK_OPEN = "\ue000"
"""Starts a highlighted match in :attr:`SearchHit.line` (a private-use character, removed from
indexed text so it only ever marks a match)."""
MARK_CLOSE = "\ue001"
"""Ends a highlighted match."""
_MARKS = str.maketrans({MARK_OPEN: " ", MARK_CLOSE: " "})
_TAIL_BYTES = 64
_WRITE_FAILED = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN})
"""SQLite's primary codes for a write or open the file system refused (a full disk, an I/O error, a
read-only mount): they say nothing about the index's state, so it is never quarantined for them."""
_ROOM_BYTES = 64 * 1024
"""Fewer free bytes than this is a full disk to SQLite (its 32 KiB ``-shm`` file and a few pages):
a write failure then is ``ENOSPC``."""
_SPEAKERS = {"user": "user", "assistant": "assistant"}

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    session_id TEXT PRIMARY KEY, key TEXT NOT NULL, agent TEXT NOT NULL, created_at TEXT NOT NULL,
    reason TEXT NOT NULL, offset INTEGER NOT NULL, tail TEXT NOT NULL, prev_user INTEGER NOT NULL,
    prev_user2 INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS msgs USING fts5(
    folded, body UNINDEXED, session_id UNINDEXED, event_id UNINDEXED, ts UNINDEXED, role UNINDEXED,
    agent UNINDEXED, tokenize = "unicode61 remove_diacritics 2");
INSERT OR IGNORE INTO meta(k, v) VALUES ('schema', '{SCHEMA_VERSION}');
"""


@dataclass(slots=True)
class SearchHit:
    """One matching message.

    Attributes:
        session_id: The session whose transcript holds it.
        key: That session's key (``agent:<agent>:<channel>:<chat>``).
        archived: Whether the transcript is in the archive (viewable read-only).
        ts: When the message was stored (ISO-8601, UTC).
        role: Who spoke: ``user``, ``assistant`` or ``tool``.
        event_id: The event id (``e:N``) within the session.
        line: The matching line, redacted, with each match between :data:`MARK_OPEN` and
            :data:`MARK_CLOSE`.
        rank: FTS5's BM25 rank (lower is better; hits are shown newest first).
    """

    session_id: str
    key: str
    archived: bool
    ts: str
    role: str
    event_id: int
    line: str
    rank: float

    @property
    def ref(self) -> str:
        """The event reference, ``e:N``."""
        return f"e:{self.event_id}"

    def plain_line(self) -> str:
        """:attr:`line` without the match marks."""
        return self.line.replace(MARK_OPEN, "").replace(MARK_CLOSE, "")

    def spans(self) -> list[tuple[int, int]]:
        """Character ranges of the matches in :meth:`plain_line`."""
        out: list[tuple[int, int]] = []
        pos, start = 0, -1
        for ch in self.line:
            if ch == MARK_OPEN:
                start = pos
            elif ch == MARK_CLOSE:
                if start >= 0:
                    out.append((start, pos))
                start = -1
            else:
                pos += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` form: the line without marks and the matches as ``[start, end]`` ranges."""
        return {"session_id": self.session_id, "key": self.key, "archived": self.archived, "ts": self.ts,
                "role": self.role, "event_id": self.event_id, "ref": self.ref, "line": self.plain_line(),
                "highlights": [list(s) for s in self.spans()], "rank": self.rank}


@dataclass(slots=True)
class SearchResult:
    """What a search found, and what it had to say about the index."""

    query: str
    hits: list[SearchHit] = field(default_factory=list)
    more: bool = False
    """More hits matched than were asked for."""
    notices: list[str] = field(default_factory=list)
    indexed: bool = True
    """False when the search read transcripts directly (a read-only process with no usable index)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"query": self.query, "hits": [h.to_dict() for h in self.hits], "more": self.more,
                "notices": list(self.notices), "indexed": self.indexed}


def _fold_char(c: str) -> str:
    f = c.casefold()
    if len(f) != 1:
        return c
    bare = "".join(x for x in unicodedata.normalize("NFD", f) if not unicodedata.combining(x))
    return bare if len(bare) == 1 else f


_FOLD: dict[int, str] = {}


def fold(text: str) -> str:
    """``text`` case-folded character by character (the same length: a character whose full fold
    is longer, ``ß``, stays), so Greek final sigma ``ς`` and ``Σ`` both become ``σ``, ``ſ`` ``s``...
    The index matches on this form and the query is folded alike; accents are dropped here too
    (``unicode61`` folds Latin ones only: ``ό`` becomes ``ο``)."""
    for c in set(text):
        o = ord(c)
        if o not in _FOLD:
            _FOLD[o] = _fold_char(c)
    return text.translate(_FOLD)


def fts_query(text: str) -> str:
    """The FTS5 MATCH expression for a user's query (see the module docstring for the syntax).

    Raises:
        UserError: when the query holds no word.
    """
    return _fts_query(text)[0]


def _fts_query(text: str) -> tuple[str, bool]:
    """The MATCH expression, and whether part of the query was left out: at most
    :data:`~neotask_tui.tuning.SEARCH_QUERY_MAX_TERMS` distinct terms are kept and at most
    :data:`~neotask_tui.tuning.SEARCH_QUERY_MAX_WORDS` words are read, so a pasted page costs
    the same as a short query."""
    # Lone surrogates (a non-UTF-8 argv byte, a split pair) cannot reach SQLite: U+FFFD instead.
    text = fold(clean_text(text).replace("\x00", " "))
    parts: list[str] = []
    seen: set[str] = set()
    budget = tuning.SEARCH_QUERY_MAX_WORDS
    cut = False
    for m in re.finditer(r'"([^"]*)"?|(\S+)', text):
        if budget <= 0:
            cut = True
            break
        phrase, word = m.group(1), m.group(2)
        if phrase is not None:
            words = phrase.replace('"', "").split(maxsplit=budget)
            if len(words) > budget:
                words, cut = words[:budget], True
            budget -= max(1, len(words))
            term = '"' + " ".join(words) + '"'
            if not any(c.isalnum() for c in term):
                continue
        else:
            budget -= 1
            prefix = word.endswith("*") and len(word) > 1
            word = (word.rstrip("*") if prefix else word).replace('"', "")
            if not any(c.isalnum() for c in word):
                continue
            term = '"' + word + '"' + ("*" if prefix else "")
        if term in seen:
            continue
        if len(parts) >= tuning.SEARCH_QUERY_MAX_TERMS:
            cut = True
            break
        seen.add(term)
        parts.append(term)
    if not parts:
        raise UserError("search needs at least one word (letters or digits)")
    return " ".join(parts), cut


_SINCE_FIRST = "0001-01-01T00:00:00.000000"
"""The bound of a year-1 time that is in year 0 in UTC: every stored time is at or after it."""
_SINCE_AFTER_ALL = "9999-12-31T24:00:00.000000"
"""The bound of a year-9999 time that is in year 10000 in UTC: ISO 8601's end of the last day,
which sorts after every stored time (none matches)."""


def parse_since(text: str, now: datetime | None = None, tz: tzinfo | None = None) -> str:
    """``--since`` as a UTC ISO timestamp: ``YYYY-MM-DD`` (midnight in ``tz``), an ISO date-time
    (in ``tz`` when it names no offset), or a span back from now (``90m``, ``12h``, ``7d``, ``2w``),
    in ASCII. ``tz`` is the local zone (the C library's when ``None``). A date in year 1 or 9999 that
    UTC moves out of those years is taken as before (after) every stored time.

    Raises:
        UserError: for anything else (an empty text, ``７d``), and for a span reaching back before
            year 1.
    """
    from datetime import timedelta

    now = now or datetime.now(UTC)
    s = text.strip()
    if not s or not s.isascii():
        raise UserError(f"--since takes a date (2026-11-30), a date-time or a span (7d, 12h), "
                        f"not {s[:40]!r}")
    m = re.fullmatch(r"([0-9]+)\s*([mhdw])", s)
    if m:
        digits, unit = m.group(1).lstrip("0") or "0", m.group(2)
        try:
            if len(digits) > 12:  # more than 10^12 minutes reaches back before year 1 anyway
                raise OverflowError
            n = int(digits)
            delta = {"m": timedelta(minutes=n), "h": timedelta(hours=n), "d": timedelta(days=n),
                     "w": timedelta(weeks=n)}[unit]
            return _utc(now - delta)
        except OverflowError:
            raise UserError(f"--since {s[:40]!r} reaches back before year 1") from None
    try:
        d = datetime.fromisoformat(s)
    except ValueError:
        raise UserError(f"--since takes a date (2026-11-30), a date-time or a span (7d, 12h), "
                        f"not {s[:40]!r}") from None
    try:
        if d.tzinfo is None:  # a local date-time (or midnight) the user means in their zone
            d = d.replace(tzinfo=tz) if tz is not None else d.astimezone()
        return _utc(d)
    except (OverflowError, ValueError):  # within a day of year 1's start or 9999's end: UTC leaves the range
        return _SINCE_FIRST if d.year < 5000 else _SINCE_AFTER_ALL


def _utc(d: datetime) -> str:
    """``d`` in UTC as the stored times are written (``0999-06-01T…``: four-digit years, which
    ``strftime("%Y")`` does not give before year 1000), so the two compare as strings."""
    return d.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds")


def _ts_utc(ts: str) -> str:
    try:
        d = datetime.fromisoformat(ts)
    except ValueError:
        return ts
    return _utc(d if d.tzinfo else d.replace(tzinfo=UTC))


def indexed_text(text: str) -> str:
    """The part of a message that is indexed: all of it up to :data:`~neotask_tui.tuning.SEARCH_MESSAGE_MAX_CHARS`,
    else its first three quarters and last quarter of that."""
    cap = tuning.SEARCH_MESSAGE_MAX_CHARS
    if len(text) <= cap:
        return text
    head = cap * 3 // 4
    return text[:head] + "\n…\n" + text[len(text) - (cap - head):]


_REDACT_MARGIN = 16384
"""Characters redacted past each edge of a cut, so a secret the cut goes through (a PEM key is
about 3 KiB) is found whole and replaced whole, never left as a fragment."""


def redacted_indexed_text(text: str, context: str | None = None) -> tuple[str, list[str]]:
    """:func:`indexed_text` of ``text`` redacted (``context``: the previous user message, see
    :func:`~neotask_tui.text.secrets.find_secrets`), and the secret values found in what is kept.

    The redactor sees each kept part with :data:`_REDACT_MARGIN` characters more on its cut side,
    and a secret that reaches into a kept part is replaced whole: a cut never leaves a fragment
    of a secret to be indexed, and a long message is not redacted whole (the redactor is linear,
    about 1 s per MB).
    """
    cap = tuning.SEARCH_MESSAGE_MAX_CHARS
    if len(text) <= cap:
        matches = find_secrets(text, context=context)
        return _replace(text, 0, len(text), matches), [text[m.start:m.end] for m in matches]
    head = cap * 3 // 4
    tail_start = len(text) - (cap - head)
    head_w = text[:head + _REDACT_MARGIN]
    m_head = [m for m in find_secrets(head_w, context=context) if m.start < head]
    w0 = max(0, tail_start - _REDACT_MARGIN)
    m_tail = [m for m in find_secrets(text[w0:]) if w0 + m.end > tail_start]
    kept_head = _replace(head_w, 0, head, m_head)
    kept_tail = _replace(text[w0:], tail_start - w0, len(text) - w0, m_tail)
    values = [head_w[m.start:m.end] for m in m_head] + [text[w0 + m.start:w0 + m.end] for m in m_tail]
    return kept_head + "\n…\n" + kept_tail, values


def _replace(text: str, start: int, end: int, matches: list[Any]) -> str:
    """``text[start:end]`` with each secret of ``matches`` replaced whole by its marker (a secret
    that crosses ``start`` or ``end`` is replaced by the marker alone)."""
    out: list[str] = []
    pos = start
    for m in matches:
        if m.end <= start or m.start >= end:
            continue
        out.append(text[pos:max(pos, m.start)])
        out.append(f"{MARKER_PREFIX}{m.kind}]")
        pos = max(pos, m.end)
    out.append(text[pos:end] if pos < end else "")
    return "".join(out)


def _agent_of(key: str) -> str:
    from neotask_tui.storage.keys import parse_key

    try:
        return parse_key(key).agent_id
    except (UserError, ValueError):
        return ""


@dataclass(slots=True)
class _FileState:
    session_id: str
    key: str
    agent: str
    created_at: str
    reason: str
    offset: int
    tail: str
    prev_user: int
    prev_user2: int
    """The user message before :attr:`prev_user` (its context: a password announced there)."""


@dataclass(slots=True)
class _Row:
    body: str
    folded: str
    session_id: str
    event_id: int
    ts: str
    role: str
    agent: str


@dataclass(slots=True)
class _File:
    """A transcript on disk: its session id, path, size and whether it is in the archive."""

    sid: str
    path: str
    size: int
    archived: bool


def _listing() -> dict[str, _File]:
    """Every transcript on disk (one ``scandir`` per folder), in session-id order, which is the
    order sessions were created in (hits are shown by message time, whatever the insertion order)."""
    out: dict[str, _File] = {}
    for d, archived in ((paths.sessions_dir(), False), (paths.archive_dir(), True)):
        if not d.is_dir() or paths.linked_part(d) is not None:
            continue
        with os.scandir(d) as it:
            for e in it:
                if not e.name.endswith(".jsonl") or not e.is_file(follow_symlinks=False):
                    continue
                sid = e.name[: -len(".jsonl")]
                if sid not in out:  # a live transcript wins over an archived copy
                    out[sid] = _File(sid, e.path, e.stat(follow_symlinks=False).st_size, archived)
    return dict(sorted(out.items()))


def _transcripts() -> Iterator[Path]:
    """Every transcript on disk (see :func:`_listing`)."""
    for f in _listing().values():
        yield Path(f.path)


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _read_tail_digest(path: Path | str, offset: int) -> str:
    if offset <= 0:
        return ""
    start = max(0, offset - _TAIL_BYTES)
    with open(path, "rb") as f:
        f.seek(start)
        return _digest(f.read(offset - start))


def _line_at(path: Path, offset: int) -> str | None:
    """The content of the message whose line starts at byte ``offset`` (the previous user message)."""
    if offset < 0:
        return None
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            ev = Event.from_dict(json.loads(f.readline()))
    except (OSError, ValueError, TypeError, RecursionError):
        return None
    return ev.content


def _user_secrets(path: Path, offset: int, context_offset: int) -> list[str]:
    """The secret values of the user message at ``offset`` (read with its own context)."""
    msg = _line_at(path, offset)
    if not msg:
        return []
    return redacted_indexed_text(msg.translate(_MARKS), _line_at(path, context_offset))[1]


def _scan(path: Path, state: _FileState) -> tuple[list[_Row], _FileState]:
    """The rows of ``path`` past ``state.offset`` (complete lines only) and the state after them."""
    with open(path, "rb") as f:
        f.seek(state.offset)
        data = f.read()
    end = data.rfind(b"\n") + 1
    data = data[:end]
    rows: list[_Row] = []
    new = dataclasses.replace(state)
    prev_user: str | None = None
    prev_user_loaded = False
    quoted: list[str] | None = None  # the secret values of the last user message (a reply may quote one)
    pos = state.offset
    for raw in data.split(b"\n")[:-1] if data else []:
        line_start = pos
        pos += len(raw) + 1
        if not raw.strip():
            continue
        try:
            ev = Event.from_dict(json.loads(raw))
        except (ValueError, UnicodeDecodeError, TypeError, RecursionError):
            continue  # a corrupt line: the store quarantines it; the rest is indexed
        if ev.type == "session":
            new.key = str(ev.data.get("key") or "")
            new.agent = _agent_of(new.key)
            new.created_at = str(ev.data.get("created_at") or ev.ts)
            new.reason = str(ev.data.get("reason") or "")
            continue
        is_user = False
        if ev.type == "message" and ev.role in _SPEAKERS:
            content = ev.content
            context: str | None = None
            if ev.role == "user":
                if not prev_user_loaded:
                    prev_user, prev_user_loaded = _line_at(path, state.prev_user), True
                context = prev_user
                prev_user, prev_user_loaded = content, True
                new.prev_user2, new.prev_user = new.prev_user, line_start
                is_user = True
            role = _SPEAKERS[ev.role or ""]
        elif ev.type == "tool_result":
            content, context, role = ev.content, None, "tool"
        else:
            continue
        text = content.translate(_MARKS)
        if is_user:
            body, quoted = redacted_indexed_text(text, context)
        else:
            if quoted is None:  # the reply's user message was indexed by an earlier scan
                quoted = _user_secrets(path, state.prev_user, state.prev_user2)
            body = redact_values(redacted_indexed_text(text)[0], quoted)
        body = body.strip()
        if not body:
            continue
        rows.append(_Row(body=body, folded=fold(body), session_id=state.session_id, event_id=ev.id,
                         ts=_ts_utc(ev.ts), role=role, agent=new.agent))
    new.offset = state.offset + end
    new.tail = _read_tail_digest(path, new.offset) if end else state.tail
    return rows, new


def _fresh_state(session_id: str) -> _FileState:
    return _FileState(session_id=session_id, key="", agent="", created_at="", reason="", offset=0, tail="",
                      prev_user=-1, prev_user2=-1)


def _write_failed(e: BaseException) -> bool:
    """``e`` is SQLite's report of a write or open the file system refused (:data:`_WRITE_FAILED`)."""
    code = getattr(e, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in _WRITE_FAILED


def _fs_errno(path: Path) -> int | None:
    """Why the file system under ``path`` refuses writes, as an errno (``EROFS`` for a read-only
    mount, ``ENOSPC`` for less than :data:`_ROOM_BYTES` free), else ``None``. SQLite does not pass
    the OS error on, so this is how a "disk I/O error" on a full disk is told as one."""
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        st = os.statvfs(p)
    except OSError:
        return None
    if st.f_flag & os.ST_RDONLY:
        return errno.EROFS
    free = (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize
    return errno.ENOSPC if free < _ROOM_BYTES else None


def write_failure(e: BaseException) -> str:
    """Why a write of the index failed, in one line: an OS error in the words every failed write
    uses (``ENOSPC (No space left on device)``, :func:`~neotask_tui.errors.io_failure`), SQLite's
    own words otherwise, and a :class:`~neotask_tui.errors.UserError` (a link) whole."""
    if isinstance(e, OSError):
        return io_failure(e) or str(e)
    if _write_failed(e):
        code = _fs_errno(paths.search_index().parent)
        if code is not None:
            return f"{errno.errorcode[code]} ({os.strerror(code)})"
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _create_private(path: Path) -> None:
    """Create the database file 0600 (SQLite gives its -wal/-shm files the database's mode)."""
    paths.ensure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, paths.FILE_MODE)
    os.close(fd)


def _connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    if readonly:
        # No -wal/-shm: no writer has the index open and all of it is in the file; reading it
        # "immutable" creates nothing in the data dir (a plain read-only open of a WAL database
        # makes both). A writer that opens it meanwhile cannot be seen; a torn read is a
        # DatabaseError, which the reader answers by searching the transcripts directly.
        side = any(Path(str(path) + x).exists() for x in ("-wal", "-shm"))
        uri = path.absolute().as_uri() + ("?mode=ro" if side else "?mode=ro&immutable=1")
        con = sqlite3.connect(uri, uri=True, check_same_thread=False,
                              timeout=5.0)
    else:
        _create_private(path)
        con = sqlite3.connect(str(path), check_same_thread=False, timeout=5.0)
        con.execute("PRAGMA journal_mode=WAL")
        # NORMAL: in WAL mode a commit survives a process kill (the WAL is in the page cache) and the
        # database stays consistent on power loss; a commit lost then is indexed again from the
        # offsets, which were lost with it. FULL would add an fsync to every append of a turn.
        con.execute("PRAGMA synchronous=NORMAL")
        con.executescript(_SCHEMA)
    got = con.execute("SELECT v FROM meta WHERE k='schema'").fetchone()
    if got is None or got[0] != SCHEMA_VERSION:
        con.close()
        raise sqlite3.DatabaseError(f"schema {got[0] if got else 'unknown'}, want {SCHEMA_VERSION}")
    return con


def _memory_db() -> sqlite3.Connection:
    con = sqlite3.connect(":memory:", check_same_thread=False)
    con.executescript(_SCHEMA)
    return con


def _load_files(con: sqlite3.Connection, only: list[str] | None = None) -> dict[str, _FileState]:
    sql = "SELECT session_id, key, agent, created_at, reason, offset, tail, prev_user, prev_user2 FROM files"
    if only is None:
        return {r[0]: _FileState(*r) for r in con.execute(sql)}
    out: dict[str, _FileState] = {}
    for sid in only:
        r = con.execute(sql + " WHERE session_id = ?", (sid,)).fetchone()
        if r is not None:
            out[sid] = _FileState(*r)
    return out


def _insert_rows(con: sqlite3.Connection, rows: list[_Row]) -> None:
    _insert(con, rows, None)


def _insert(con: sqlite3.Connection, rows: list[_Row], state: _FileState | None) -> None:
    con.executemany("INSERT INTO msgs(folded, body, session_id, event_id, ts, role, agent) VALUES (?,?,?,?,?,?,?)",
                    [(r.folded, r.body, r.session_id, r.event_id, r.ts, r.role, r.agent) for r in rows])
    if state is None:
        return
    con.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?)",
                (state.session_id, state.key, state.agent, state.created_at, state.reason, state.offset,
                 state.tail, state.prev_user, state.prev_user2))


def _needs(path: str, size: int, state: _FileState | None) -> _FileState | None:
    """The state to index ``path`` (``size`` bytes) from (a fresh one when it changed under the
    index), or None when the index already holds all of it."""
    if state is None:
        return _fresh_state(Path(path).stem)
    if size == state.offset:
        return None
    if size < state.offset or _read_tail_digest(path, state.offset) != state.tail:
        return _fresh_state(Path(path).stem)  # rewritten under us: index it again from the start
    return state


class SearchIndex:
    """The full-text index of the data dir.

    Args:
        writable: This process holds the data-dir lock and keeps the index (else read-only).
    """

    def __init__(self, *, writable: bool) -> None:
        self.writable = writable
        self.notices: list[str] = []
        self._con: sqlite3.Connection | None = None
        self._broken = ""
        self._unreadable = False
        self._current = False
        """A writer's index holds every transcript: it was caught up once in this process, and
        since then the lock has kept every other process from writing, while this process's writes
        went through :meth:`sync_session`. Searches then skip the per-transcript check."""
        self._mutex = threading.RLock()

    # ------------------------------------------------------------------ opening
    def _open(self) -> sqlite3.Connection | None:
        """The index connection (None for a reader when there is no readable index)."""
        if self._con is not None:
            return self._con
        path = paths.search_index()
        for p in (path, Path(str(path) + "-wal"), Path(str(path) + "-shm")):
            paths.refuse_links(p)  # one line; never opened through a link
        if not self.writable:
            if self._unreadable:
                return None
            if not path.exists():
                self._broken = "there is no search index yet"
                return None
            try:
                self._con = _connect(path, readonly=True)
            except sqlite3.Error as e:
                self._broken = f"the search index could not be read ({e})"
                return None
            return self._con
        try:  # damage further in (no quick_check: it reads the whole file) surfaces in a query
            self._con = _connect(path, readonly=False)
        except sqlite3.DatabaseError as e:
            if self._con is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._con.close()
                self._con = None
            if _write_failed(e):  # a full disk or a read-only mount is no damage: nothing is moved
                raise
            self._quarantine(path, str(e))
            self._con = _connect(path, readonly=False)
        return self._con

    def _quarantine(self, path: Path, why: str) -> None:
        qdir = paths.quarantine_target()  # UserError (one line) when it is a link: the index stays put
        stamp = now_iso().replace(":", "")
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(path) + suffix)
            if p.exists():
                os.replace(p, qdir / f"search-index.corrupt-{stamp}.sqlite3{suffix}")
        self._current = False
        what = "was made by another version" if why.startswith("schema ") else "was damaged"
        self.notices.append(f"the search index {what} ({why[:80]}); it was moved to quarantine and "
                            "rebuilt from the transcripts")
        log.warning("search index damaged (%s); rebuilt", why)

    def close(self) -> None:
        """Close the database (idempotent)."""
        with self._mutex:
            if self._con is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._con.close()
                self._con = None

    # ------------------------------------------------------------------ keeping it up to date
    def sync_session(self, session_id: str) -> None:
        """Index what was appended to one transcript since it was last indexed (the store calls this
        after each append). Never raises: the transcript is already safe, and the next
        :meth:`sync` catches up; a failure is logged and becomes a notice."""
        if not self.writable:
            return
        try:
            live = paths.transcript_path(session_id)
            archived = not live.exists()
            path = paths.archived_transcript_path(session_id) if archived else live
            self._sync_paths({session_id: _File(session_id, str(path), path.stat().st_size, archived)})
        except (sqlite3.Error, OSError, UserError) as e:
            self._fail(e)

    def sync(self) -> int:
        """Index everything not indexed yet (every transcript, live and archived); returns the
        messages added. A reader does nothing here (see :meth:`search`)."""
        return self._sync_all(_listing())

    def _sync_all(self, listing: dict[str, _File]) -> int:
        if not self.writable:
            return 0
        try:
            return self._sync_paths(listing, prune=True)[0]
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError):
                raise
            self.close()  # damaged while open: quarantine and rebuild once
            with self._mutex:
                self._quarantine(paths.search_index(), str(e))
            return self._sync_paths(listing, prune=True)[0]

    def _fail(self, e: Exception) -> None:
        if isinstance(e, UserError):  # a link in its place: it stays refused until the link is removed
            msg = f"the search index could not be updated: {write_failure(e)} (see `neotask doctor`)"
        else:
            msg = f"the search index could not be updated: {write_failure(e)}; it catches up later"
        if msg not in self.notices:  # said once, though each append of the turn fails alike
            log.warning("%s", msg)
            self.notices.append(msg)
        if isinstance(e, sqlite3.DatabaseError) and not isinstance(e, sqlite3.OperationalError):
            self.close()
            with contextlib.suppress(OSError, UserError), self._mutex:
                self._quarantine(paths.search_index(), str(e))

    def _sync_paths(self, found: dict[str, _File], *, prune: bool = False) -> tuple[int, dict[str, _FileState]]:
        """Index what ``found`` holds past the index's offsets; returns the rows added and the
        index's file states (of ``found`` only, unless ``prune``)."""
        with self._mutex:
            con = self._open()
            assert con is not None
            known = _load_files(con) if prune else _load_files(con, list(found))
            added = 0
            # Hits are shown in row-id order (newest first; ordering by time instead sorts every
            # match), so one pass inserts the rows of all the transcripts it reads in time order (a
            # rebuild reads them in session order), in one transaction with the offsets they bring
            # the files to; a writer's later appends are newer still.
            pending: list[tuple[str, bool, list[_Row], _FileState]] = []
            for sid, f in found.items():
                start = _needs(f.path, f.size, known.get(sid))
                if start is None:
                    continue
                rows, state = _scan(Path(f.path), start)
                pending.append((sid, start.offset == 0 and sid in known, rows, state))
            if pending:
                with con:
                    for sid, again, _, _ in pending:
                        if again:
                            con.execute("DELETE FROM msgs WHERE session_id = ?", (sid,))
                    every = [r for _, _, rows, _ in pending for r in rows]
                    every.sort(key=lambda r: r.ts)
                    _insert_rows(con, every)
                    for sid, _, rows, state in pending:
                        _insert(con, [], state)
                        known[sid] = state
                        added += len(rows)
            if prune and con.execute("SELECT 1 FROM meta WHERE k='complete'").fetchone() is None:
                # the first full pass (a new or rebuilt index): say so when it had history to index
                with con:
                    con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('complete', '1')")
                if added:
                    self.notices.append(f"built the search index: {added:,} messages of {len(found):,} "
                                        "transcript(s)")
            if prune:
                gone = set(known) - set(found)
                for sid in gone:
                    with con:
                        con.execute("DELETE FROM msgs WHERE session_id = ?", (sid,))
                        con.execute("DELETE FROM files WHERE session_id = ?", (sid,))
                    known.pop(sid, None)
            return added, known

    # ------------------------------------------------------------------ searching
    def search(self, query: str, *, agent: str | None = None, since: str | None = None,
               limit: int = tuning.SEARCH_DEFAULT_LIMIT) -> SearchResult:
        """Find messages matching ``query`` in every session, newest first.

        Args:
            query: Words, ``"phrases"``, ``prefix*`` (see the module docstring).
            agent: Only sessions of this agent id.
            since: Only messages stored at or after this UTC ISO time (see :func:`parse_since`).
            limit: At most this many hits.

        Raises:
            UserError: for a query without a word.
        """
        match, cut = _fts_query(query)
        if cut:
            self.notices.append(f"the query is long: searched for its first {len(match.split(chr(34))) // 2:,} "
                                "distinct words and phrases, the rest was left out")
        try:
            return self._search(query, match, agent, since, limit)
        except sqlite3.DatabaseError as e:
            self.close()
            if (isinstance(e, sqlite3.OperationalError) or _write_failed(e)) and self.writable:  # locked, full: say so
                raise StorageError(f"could not search: the search index: {write_failure(e)}") from None
            with self._mutex:
                if self.writable:  # damaged: quarantine, rebuild from the transcripts, search again
                    self._quarantine(paths.search_index(), str(e))
                else:
                    self._broken = f"the search index could not be read ({str(e)[:80]})"
                    self._unreadable = True
            return self._search(query, match, agent, since, limit)

    def _search(self, query: str, match: str, agent: str | None, since: str | None, limit: int) -> SearchResult:
        result = SearchResult(query=query)
        with self._mutex:
            listing: dict[str, _File] | None = None
            files: dict[str, _FileState] = {}
            if self.writable and not self._current:
                listing = _listing()
                try:
                    files = self._sync_paths(listing, prune=True)[1]
                except sqlite3.DatabaseError as e:
                    if isinstance(e, sqlite3.OperationalError):
                        raise
                    self._sync_all(listing)  # quarantines and rebuilds
                self._current = True
            elif not self.writable:
                listing = _listing()
            con = self._open()
            if con is not None and not files and listing is not None:
                files = _load_files(con)
            extra = self._unindexed(files, listing or {})
            if con is None:
                result.indexed = False
                result.notices.append(f"{self._broken}; searched the transcripts directly "
                                      "(the app or any writing command builds the index)")
            found: list[tuple[float, sqlite3.Connection, int, str, int, str, str]] = []
            # Newest first: what is not indexed yet (a reader's in-memory rows) is newer than the
            # index, and row ids follow time; a message's copies (compaction keeps some) come
            # newest first too, so the live session's copy is the one shown.
            for db in (extra[0] if extra else None, con):
                if db is None:
                    continue
                found.extend((rank, db, rowid, sid, eid, ts, role) for rowid, sid, eid, ts, role, rank in
                             _query(db, match, agent, since, limit * 3 + 1))
            files.update(extra[1] if extra else {})
            if con is not None and listing is None:  # only the hits' sessions
                files.update(_load_files(con, sorted({f[3] for f in found} - set(files))))
            # Newest first by the message's time (a rebuild inserts transcripts in session order), and
            # of a message's copies (a fork or compaction keeps it in its parent too) the live one.
            found.sort(key=lambda f: f[5], reverse=True)
            best: dict[tuple[int, str, str], int] = {}
            for i, f in enumerate(found):
                dedupe = (f[4], f[5], f[6])
                j = best.get(dedupe)
                if j is None or (_is_archived(listing, found[j][3]) and not _is_archived(listing, f[3])):
                    best[dedupe] = i
            keep = sorted(best.values())
            for rank, db, rowid, sid, eid, ts, role in (found[i] for i in keep):
                if len(result.hits) == limit:
                    result.more = True
                    break
                info = files.get(sid)
                result.hits.append(SearchHit(
                    session_id=sid, key=info.key if info else "", archived=_is_archived(listing, sid), ts=ts,
                    role=role,
                    event_id=int(eid), line=_matching_line(_highlight(db, match, rowid)), rank=float(rank)))
            if extra:
                extra[0].close()
        result.notices[:0] = self.notices
        self.notices = []
        return result

    def _unindexed(self, files: dict[str, _FileState], listing: dict[str, _File]
                   ) -> tuple[sqlite3.Connection, dict[str, _FileState]] | None:
        """For a reader: what the index does not hold yet, indexed in memory for this search."""
        if self.writable:
            return None
        mem: sqlite3.Connection | None = None
        states: dict[str, _FileState] = {}
        every: list[_Row] = []
        for sid, f in listing.items():
            start = _needs(f.path, f.size, files.get(sid))
            if start is None:
                continue
            if start.offset == 0 and sid in files:
                continue  # rewritten under the index: its old rows would double up; the writer fixes it
            rows, state = _scan(Path(f.path), start)
            if not state.key and sid in files:
                state.key = files[sid].key
            mem = mem or _memory_db()
            every.extend(rows)
            _insert(mem, [], state)
            states[sid] = state
        if mem is not None:
            every.sort(key=lambda r: r.ts)  # row ids in time order, as in the index
            _insert_rows(mem, every)
        return (mem, states) if mem is not None else None

    def stats(self) -> dict[str, int]:
        """How many transcripts and messages the index holds (for ``doctor`` and the bench)."""
        with self._mutex:
            con = self._open()
            if con is None:
                return {"transcripts": 0, "messages": 0}
            n_files = con.execute("SELECT count(*) FROM files").fetchone()[0]
            n_msgs = con.execute("SELECT count(*) FROM msgs").fetchone()[0]
            return {"transcripts": int(n_files), "messages": int(n_msgs)}


def _is_archived(listing: dict[str, _File] | None, session_id: str) -> bool:
    f = listing.get(session_id) if listing is not None else None
    return f.archived if f is not None else not paths.transcript_path(session_id).exists()


def _query(con: sqlite3.Connection, match: str, agent: str | None, since: str | None,
           limit: int) -> Iterable[tuple[int, str, int, str, str, float]]:
    sql = "SELECT rowid, session_id, event_id, ts, role, rank FROM msgs WHERE msgs MATCH ?"
    args: list[Any] = [match]
    if agent:
        sql += " AND agent = ?"
        args.append(agent)
    if since:
        sql += " AND ts >= ?"
        args.append(since)
    sql += " ORDER BY rowid DESC LIMIT ?"
    args.append(limit)
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.OperationalError as e:
        if "fts5" in str(e) or "syntax" in str(e):
            raise UserError(f"cannot search for that: {e}") from None
        raise


def _highlight(con: sqlite3.Connection, match: str, rowid: int) -> str:
    """The message's text with its matches marked: FTS5 marks the folded column, which has the
    text's length, so the marks go at the same places in the text itself."""
    got = con.execute("SELECT highlight(msgs, 0, ?, ?), body FROM msgs WHERE msgs MATCH ? AND rowid = ?",
                      (MARK_OPEN, MARK_CLOSE, match, rowid)).fetchone()
    if not got:
        return ""
    marked, body = str(got[0]), str(got[1])
    out: list[str] = []
    i = 0
    for ch in marked:
        if ch in (MARK_OPEN, MARK_CLOSE):
            out.append(ch)
        elif i < len(body):
            out.append(body[i])
            i += 1
    out.append(body[i:])
    return "".join(out)


def _matching_line(body: str) -> str:
    """The first line of ``body`` holding a match, cut to about ``SEARCH_LINE_CHARS`` around it."""
    line = next((ln for ln in body.split("\n") if MARK_OPEN in ln), body.split("\n", 1)[0])
    line = line.strip()
    cap = tuning.SEARCH_LINE_CHARS
    if len(line) <= cap:
        return line
    at = max(0, line.find(MARK_OPEN))
    start = max(0, at - cap // 3)
    cut = line[start:start + cap]
    # A cut through a mark pair would leave one half: drop unmatched halves.
    if cut.count(MARK_OPEN) > cut.count(MARK_CLOSE):
        cut = cut[: cut.rfind(MARK_OPEN)] + cut[cut.rfind(MARK_OPEN) + 1:]
    if cut.find(MARK_CLOSE) != -1 and (cut.find(MARK_OPEN) == -1 or cut.find(MARK_CLOSE) < cut.find(MARK_OPEN)):
        cut = cut.replace(MARK_CLOSE, "", 1)
    return ("…" if start > 0 else "") + cut + ("…" if start + cap < len(line) else "")
