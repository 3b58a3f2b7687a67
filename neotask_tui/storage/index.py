"""The ``sessions.json`` index: key -> current session record.

Written atomically (temp + fsync + ``os.replace``). If it is missing or corrupt it is rebuilt from
the transcripts (every transcript starts with a ``session`` line; the token counters are recounted
from the usage lines as the live path keeps them, see :func:`recount`), the corrupt file is kept in
quarantine, and the caller is told. It only holds *current* sessions, so it stays small however
many sessions ever existed; older ones are found through the archive.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neotask_tui import paths
from neotask_tui.errors import UserError
from neotask_tui.storage.atomic import atomic_write_text
from neotask_tui.storage.events import RESET_UNDONE, Event, at_or_before, counts_usage, now_iso
from neotask_tui.storage.keys import validate_session_id
from neotask_tui.storage.transcript import read_header, read_last_event, read_transcript

INDEX_VERSION = 1


@dataclass
class Counters:
    """Cumulative token usage of a session."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost_usd: float | None = 0.0
    estimated_turns: int = 0

    def add(self, usage: dict[str, Any], cost: float | None) -> None:
        """Add one call's usage (``Usage.to_dict()`` form)."""
        self.input += int(usage.get("input", 0))
        self.output += int(usage.get("output", 0))
        self.cache_read += int(usage.get("cache_read", 0))
        self.cache_write += int(usage.get("cache_write", 0))
        if not usage.get("reported", True):
            self.estimated_turns += 1
        if cost is None or self.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd = round(self.cost_usd + cost, 8)

    def totals(self) -> dict[str, Any]:
        """The counters as a plain dict (status bars, ``TurnDone.totals``, JSON)."""
        return asdict(self)


@dataclass
class SessionRecord:
    """What ``sessions.json`` holds for one key."""

    key: str
    session_id: str
    created_at: str
    last_activity_at: str
    counters: Counters = field(default_factory=Counters)
    compaction_count: int = 0
    parent_session_id: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    reason: str = "new"
    auto_reset: dict[str, Any] | None = None
    """Set after an automatic reset: {reason, previous_session_id, at} — lets the user undo it."""
    fork_at: int | None = None
    """For a fork (``reason`` ``fork``): the id of the parent's event the fork was taken at."""
    counted_through: int | None = None
    """The id of the transcript's newest event whose usage ``counters`` already hold (None in an
    index written before it was kept: :meth:`~neotask_tui.storage.store.SessionStore.reconcile_counters`
    then goes by ``last_activity_at``)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SessionRecord:
        """Parse one record (raises KeyError/TypeError/ValueError if malformed)."""
        c = d.get("counters") or {}
        return cls(
            key=str(d["key"]),
            session_id=str(d["session_id"]),
            created_at=str(d["created_at"]),
            last_activity_at=str(d.get("last_activity_at") or d["created_at"]),
            counters=Counters(**{k: c[k] for k in c if k in Counters.__dataclass_fields__}),
            compaction_count=int(d.get("compaction_count", 0)),
            parent_session_id=d.get("parent_session_id"),
            config=dict(d.get("config") or {}),
            reason=str(d.get("reason", "new")),
            auto_reset=d.get("auto_reset"),
            fork_at=_int_or_none(d.get("fork_at")),
            counted_through=_int_or_none(d.get("counted_through")),
        )


class SessionRecords(MutableMapping[str, SessionRecord]):
    """The current records by key, as ``sessions.json`` holds them, each also found by its session
    id (:meth:`by_session`: the store finds the record of the session it appends to on every append).

    Both lookups change together, however a record is added, replaced or dropped.
    """

    def __init__(self, records: Mapping[str, SessionRecord] | None = None) -> None:
        self._by_key: dict[str, SessionRecord] = {}
        self._by_session: dict[str, SessionRecord] = {}
        self.update(records or {})

    def by_session(self, session_id: str) -> SessionRecord | None:
        """The record whose session is ``session_id`` (None: no key's current session)."""
        return self._by_session.get(session_id)

    def __getitem__(self, key: str) -> SessionRecord:
        return self._by_key[key]

    def __setitem__(self, key: str, rec: SessionRecord) -> None:
        old = self._by_key.get(key)
        self._by_key[key] = rec
        if old is not None and old is not rec:
            self._forget(old)
        self._by_session[rec.session_id] = rec

    def __delitem__(self, key: str) -> None:
        self._forget(self._by_key.pop(key))

    def _forget(self, rec: SessionRecord) -> None:
        """Drop ``rec`` from the session lookup (a record of another key with the same session id,
        which only a hand-edited index has, takes its place)."""
        if self._by_session.get(rec.session_id) is rec:
            del self._by_session[rec.session_id]
            other = next((r for r in self._by_key.values() if r.session_id == rec.session_id), None)
            if other is not None:
                self._by_session[rec.session_id] = other

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)


def _int_or_none(v: Any) -> int | None:
    """An event id from a file (``None`` when absent or not an integer)."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass
class IndexLoad:
    """Result of loading the index: the records and what had to be repaired."""

    records: dict[str, SessionRecord]
    rebuilt: bool = False
    problem: str = ""


def load_index(path: Path | None = None, *, repair: bool = True) -> IndexLoad:
    """Read ``sessions.json``; rebuild it from transcripts if missing or corrupt.

    Raises:
        UserError: ``sessions.json`` (or ``sessions/``) is a symbolic link (one line): it is not read
            through, nor replaced by the next write.
    """
    path = paths.refuse_links(path or paths.sessions_index())
    problem = ""
    if path.exists():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(raw, dict) or not isinstance(raw.get("sessions"), dict):
                raise ValueError("unexpected structure")
            recs = {k: SessionRecord.from_dict(v) for k, v in raw["sessions"].items()}
            return IndexLoad(records=recs)
        # AttributeError: a record that is not an object (found by tests/faults).
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as e:
            problem = f"sessions.json was corrupt ({str(e)[:80]})"
            refused = paths.quarantine_problem() if repair else None
            if refused is not None:  # no copy can be kept, so the damaged file is not overwritten either
                problem = f"{problem}; {refused}"
                repair = False
            elif repair:
                qdir = paths.quarantine_target()
                shutil.copy2(path, qdir / f"sessions.json.corrupt-{now_iso().replace(':', '')}")
    else:
        has_transcripts = paths.sessions_dir().exists() and any(paths.sessions_dir().glob("*.jsonl"))
        if not has_transcripts:
            return IndexLoad(records={})
        problem = "sessions.json was missing"
    recs = rebuild_records()
    if repair:
        save_index(recs, path)
    # Read-only (a listing beside the lock holder, `sessions list`): nothing is written, so say "read".
    done = "rebuilt" if repair else "read"
    return IndexLoad(records=recs, rebuilt=True, problem=problem + f"; {done} {len(recs)} sessions from transcripts")


def rebuild_records() -> dict[str, SessionRecord]:
    """Reconstruct current sessions from the live transcripts (the newest per key wins); token
    counters are recounted as the live path keeps them (:func:`recount`), and a session a daily or
    idle reset started can still be undone (:func:`auto_reset_of`)."""
    recs: dict[str, SessionRecord] = {}
    sdir = paths.sessions_dir()
    if not sdir.exists():
        return recs
    for tp in sorted(sdir.glob("*.jsonl")):
        if tp.is_symlink():  # never followed (`neotask doctor` reports it)
            continue
        header = read_header(tp)
        if header is None:
            continue
        key = str(header.data.get("key", ""))
        sid = str(header.data.get("session_id", tp.stem))
        if not key:
            continue
        events = read_transcript(tp, repair=False).events
        # A compaction preview's call is not activity (the session may still be due for its reset).
        last = next((e for e in reversed(events) if e.type != "call"), None)
        rec = SessionRecord(
            key=key,
            session_id=sid,
            created_at=str(header.data.get("created_at", header.ts)),
            last_activity_at=last.ts if last else header.ts,
            parent_session_id=header.data.get("parent_session_id"),
            reason=str(header.data.get("reason", "new")),
            compaction_count=int(header.data.get("compaction_count", 0)),
            config=dict(header.data.get("config") or {}),
            fork_at=_int_or_none(header.data.get("fork_at")),
            counters=recount(sid, reading(sid, events)),
            counted_through=max((e.id for e in events), default=None),
            auto_reset=auto_reset_of(header, events),
        )
        prev = recs.get(key)
        if prev is None or rec.created_at > prev.created_at:
            recs[key] = rec
    return recs


def auto_reset_of(header: Event, events: Sequence[Event]) -> dict[str, Any] | None:
    """What ``undo-reset`` brings back for a session a daily or idle reset started: the
    ``auto_reset`` its header records; for a header written before it did, the archived session of
    the same key last active before this one began. None for any other session, and for a reset
    already undone once (a ``reset_undone`` marker: the session was brought back since)."""
    reason = header.data.get("reason")
    if reason not in ("daily", "idle") or any(
            e.type == "marker" and e.data.get("kind") == RESET_UNDONE for e in events):
        return None
    rec = header.data.get("auto_reset")
    if isinstance(rec, dict) and isinstance(rec.get("previous_session_id"), str):
        return dict(rec)
    key, began = header.data.get("key"), str(header.data.get("created_at", header.ts))
    prev = _last_active_before(str(key), began) if isinstance(key, str) else None
    if prev is None:
        return None
    return {"reason": reason, "detail": "", "previous_session_id": prev, "at": began}


def _last_active_before(key: str, when: str) -> str | None:
    """The archived session of ``key`` whose last activity is the newest at or before ``when``."""
    adir = paths.archive_dir()
    if not adir.exists():
        return None
    best: tuple[str, str] | None = None
    for p in adir.glob("*.jsonl"):
        if p.is_symlink():
            continue
        h = read_header(p)
        if h is None or h.data.get("key") != key:
            continue
        last = read_last_event(p)
        ts = last.ts if last is not None else h.ts
        if at_or_before(ts, when) and (best is None or at_or_before(best[0], ts)):
            best = (ts, str(h.data.get("session_id", p.stem)))
    return best[1] if best else None


EventsOf = Callable[[str], Sequence[Event] | None]
"""A session id → its transcript's events (None when it has none)."""


def reading(session_id: str, events: Sequence[Event]) -> EventsOf:
    """:func:`read_session`, with ``session_id``'s events already read."""
    def events_of(sid: str) -> Sequence[Event] | None:
        return events if sid == session_id else read_session(sid)
    return events_of


def read_session(session_id: str) -> list[Event] | None:
    """A session's events from disk, live or archived, touching nothing (None: no transcript, or an
    id that is not one)."""
    try:
        validate_session_id(session_id)
    except UserError:
        return None
    for p in (paths.transcript_path(session_id), paths.archived_transcript_path(session_id)):
        if p.exists():
            return read_transcript(p, repair=False).events
    return None


def recount(session_id: str, events_of: EventsOf) -> Counters:
    """A session's token counters from its transcript, as the live path keeps them.

    The counters start from what the session carried: a compaction's session continues its
    lineage's (``carried_totals`` on its compaction record), every other session starts at zero
    (``/new``, a reset, a fork). Then every event that :func:`counts_usage` is added, in order:
    replies, tool rounds, compaction and preview ``call`` events. A compaction's session written
    before it recorded ``carried_totals`` is counted through its parents instead, each event id
    once (those transcripts' kept messages were not yet marked as copies). The walk stops at a
    missing transcript and at a parent of another key (never part of this session's history).
    """
    chain: list[Sequence[Event]] = []  # newest first
    base: Counters | None = None
    seen: set[str] = set()
    sid: str | None = session_id
    key: object = None
    while sid is not None and sid not in seen:
        events = events_of(sid)
        if events is None:
            break
        head = events[0] if events and events[0].type == "session" else None
        if chain and (head is None or head.data.get("key") != key):
            break
        seen.add(sid)
        chain.append(events)
        key = head.data.get("key") if head is not None else None
        if head is None or head.data.get("reason") != "compaction":
            break
        base = carried_totals(events)
        if base is not None:
            break
        parent = head.data.get("parent_session_id")
        sid = parent if isinstance(parent, str) else None
    counters = base or Counters()
    counted: set[int] = set()
    for events in reversed(chain):
        for e in events:
            if counts_usage(e) and e.id not in counted:
                counted.add(e.id)
                counters.add(e.data["usage"], e.data.get("cost_usd"))
    return counters


def carried_totals(events: Sequence[Event]) -> Counters | None:
    """The counters a compaction's session started from, as its compaction record holds them (None
    for another session, or a record that holds none or a malformed one)."""
    head = events[0] if events and events[0].type == "session" else None
    if head is None or head.data.get("reason") != "compaction":
        return None
    parent = head.data.get("parent_session_id")
    record = next((e for e in events if e.type == "compaction" and e.data.get("source_session_id") == parent), None)
    raw = record.data.get("carried_totals") if record is not None else None
    if not isinstance(raw, dict):
        return None
    counts = [raw.get(k, 0) for k in ("input", "output", "cache_read", "cache_write", "estimated_turns")]
    cost = raw.get("cost_usd")
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in counts):
        return None
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)):
        return None
    return Counters(input=counts[0], output=counts[1], cache_read=counts[2], cache_write=counts[3],
                    estimated_turns=counts[4], cost_usd=None if cost is None else float(cost))


def save_index(records: Mapping[str, SessionRecord], path: Path | None = None) -> None:
    """Atomically write the index (never over a symbolic link: :class:`UserError`, one line)."""
    path = paths.refuse_links(path or paths.sessions_index())
    body = {"version": INDEX_VERSION, "sessions": {k: r.to_dict() for k, r in sorted(records.items())}}
    atomic_write_text(path, json.dumps(body, ensure_ascii=False, indent=1) + "\n")
