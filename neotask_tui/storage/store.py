"""SessionStore: routing keys to sessions, creating/archiving/restoring transcripts.

Invariants:
- A live transcript is ``sessions/<id>.jsonl``; every other transcript is ``archive/<id>.jsonl``.
- ``sessions.json`` lists only the current session of each key. Switching a key to a new session is
  done in this order: (1) write the new transcript completely and fsync, (2) atomically rewrite the
  index (the commit point), (3) move the old transcript to the archive. A crash after (2) leaves an
  old transcript in ``sessions/`` that no key points to: :meth:`repair_orphans` archives it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from neotask_tui import paths
from neotask_tui.errors import StorageError, UserError
from neotask_tui.storage.atomic import fsync_dir
from neotask_tui.storage.events import Event, counts_usage, now_iso, parse_ts
from neotask_tui.storage.index import (
    Counters,
    SessionRecord,
    SessionRecords,
    load_index,
    read_session,
    reading,
    recount,
    save_index,
)
from neotask_tui.storage.keys import header_agent, validate_session_id
from neotask_tui.storage.search import SearchIndex
from neotask_tui.storage.transcript import (
    LoadIssue,
    append_events,
    read_header,
    read_last_event,
    read_transcript,
)


def new_session_id(now: datetime | None = None) -> str:
    """A sortable, unique session id like ``20261129-225432-3f2a9c1b``."""
    now = now or datetime.now(UTC)
    return f"{now.astimezone(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"


@dataclass(slots=True)
class ArchivedInfo:
    """A transcript in the archive."""

    session_id: str
    key: str
    created_at: str
    reason: str
    last_activity_at: str
    parent_session_id: str | None
    path: Path
    fork_at: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "session_id": self.session_id, "key": self.key, "created_at": self.created_at,
            "reason": self.reason, "last_activity_at": self.last_activity_at,
            "parent_session_id": self.parent_session_id, "path": str(self.path), "fork_at": self.fork_at,
        }


def _wrap_os_error(e: OSError, what: str, kept: str = "nothing already on disk was changed") -> StorageError:
    name = errno.errorcode.get(e.errno or 0, "error")
    return StorageError(f"could not {what}: {name} ({e.strerror}); {kept}")


class SessionStore:
    """Sessions on disk. Not thread-safe by itself: the Engine serialises writes."""

    def __init__(self, *, readonly: bool = False) -> None:
        self.readonly = readonly
        for d in (paths.sessions_dir(), paths.archive_dir()):  # both read and written: never via a link
            paths.refuse_links(d)
        loaded = load_index(repair=not readonly)
        self.records = SessionRecords(loaded.records)
        """The current session of each key (``sessions.json``), also found by session id."""
        self.notices: list[str] = [loaded.problem] if loaded.problem else []
        self.load_issues: dict[str, list[LoadIssue]] = {}
        self._told_hard_links: set[str] = set()
        """Sessions whose transcript was reported as hard-linked (told once, kept as it is)."""
        self._cache: dict[str, list[Event]] = {}
        # Archive listing reads every archived header; recall asks for it each turn, so it is kept
        # until this store moves a transcript in or out (the data-dir lock makes us the only writer).
        self._archived: list[ArchivedInfo] | None = None
        self._archived_counters: dict[str, Counters] = {}
        self.search = SearchIndex(writable=not readonly)
        """The full-text index over every transcript; a writer keeps it as it appends."""
        self.admit_key: Callable[[str], object] | None = None
        """Checks a key before its first session is stored (raises to refuse it): a key is stored as it
        is (transcript header, ``sessions.json``, the search index, exports), so its owner refuses one
        that holds a secret (:meth:`~neotask_tui.engine.facade.Engine.storable_key`). Every way a key
        gets its first session (a first message, ``/new``, a fork into a new key) passes here."""

    # ----- reading
    def get(self, key: str) -> SessionRecord | None:
        """The current record of ``key`` (None if the key has no session yet)."""
        return self.records.get(key)

    def transcript_path(self, session_id: str) -> Path:
        """Where a session's transcript is (live or archived); a path-like id is refused."""
        live = paths.transcript_path(validate_session_id(session_id))
        if live.exists():
            return live
        arch = paths.archived_transcript_path(session_id)
        if arch.exists():
            return arch
        raise UserError(f"no transcript for session {session_id!r}")

    def is_archived(self, session_id: str) -> bool:
        """Whether the session's transcript is in the archive."""
        return paths.archived_transcript_path(session_id).exists()

    def events(self, session_id: str) -> list[Event]:
        """All good events of a session (cached; torn/corrupt lines quarantined and reported)."""
        cached = self._cache.get(session_id)
        if cached is not None:
            return cached
        path = paths.refuse_links(self.transcript_path(session_id))  # a transcript that is a link: one line
        hard = paths.hard_link_note(path)
        if hard is not None and session_id not in self._told_hard_links:  # once per process
            self._told_hard_links.add(session_id)
            self.notices.append(f"{hard}; see `neotask doctor`")
        loaded = read_transcript(path, repair=not self.readonly)
        if loaded.issues:
            self.load_issues[session_id] = loaded.issues
            for iss in loaded.issues:
                self.notices.append(
                    f"{path.name} line {iss.line_no}: {iss.reason}"
                    + (f"; saved to {iss.quarantined_to}" if iss.quarantined_to else "")
                )
        self._cache[session_id] = loaded.events
        return loaded.events

    def drop_cache(self, session_id: str | None = None) -> None:
        """Forget cached events (all, or one session's)."""
        if session_id is None:
            self._cache.clear()
        else:
            self._cache.pop(session_id, None)

    # ----- writing
    def _check_writable(self) -> None:
        if self.readonly:
            raise UserError("this command opened the data dir read-only")

    def save(self) -> None:
        """Atomically persist the index."""
        self._check_writable()
        try:
            save_index(self.records)
        except OSError as e:
            # The events of this change may already be in a transcript (they are appended first):
            # saying "nothing changed" would invite a retry that stores them twice.
            raise _wrap_os_error(e, "update sessions.json", "the previous sessions.json is intact, but events "
                                 "already appended to a transcript are kept: check `neotask transcript` "
                                 "before retrying (`neotask doctor --fix` rebuilds the index)") from e

    def append(self, session_id: str, type_: str, data: dict[str, Any], *, ts: str | None = None) -> Event:
        """Durably append one event (fsynced before returning)."""
        return self.append_many(session_id, [(type_, data)], ts=ts)[0]

    def append_many(
        self, session_id: str, items: list[tuple[str, dict[str, Any]]], *, ts: str | None = None
    ) -> list[Event]:
        """Durably append several events with one write + fsync."""
        self._check_writable()
        evs = self.events(session_id)
        last = max((e.id for e in evs), default=0)
        parent = evs[-1].id if evs else None
        new: list[Event] = []
        for type_, data in items:
            last += 1
            new.append(Event(type=type_, id=last, parent=parent, ts=ts or now_iso(), data=data))
            parent = last
        path = paths.transcript_path(session_id)
        if not path.exists() and self.is_archived(session_id):
            raise UserError(f"session {session_id} is archived and read-only")
        try:
            append_events(path, new)
        except OSError as e:
            raise _wrap_os_error(e, f"append to transcript {session_id}") from e
        evs.extend(new)
        self._count(session_id, new)
        self.search.sync_session(session_id)
        return new

    def _count(self, session_id: str, new: list[Event]) -> None:
        """Add the usage of events just appended to the counters of the session they belong to
        (every billed call is counted here, once, as its event is written; the caller saves the
        index, and :meth:`reconcile_counters` catches up after a crash in between)."""
        rec = self.records.by_session(session_id)
        if rec is None:  # not a current session: its counters are recounted when it becomes one
            return
        _add_usage(rec, new, through=max(e.id for e in new))

    def create_session(
        self,
        key: str,
        *,
        reason: str,
        parent_session_id: str | None = None,
        first_id: int = 1,
        extra_events: list[Event] | None = None,
        config: dict[str, Any] | None = None,
        compaction_count: int = 0,
        archive_previous: bool = True,
        now: datetime | None = None,
        fork_at: int | None = None,
        counters: Counters | None = None,
        auto_reset: dict[str, Any] | None = None,
    ) -> SessionRecord:
        """Create a fresh session for ``key`` and make it current.

        ``extra_events`` (already id'd, e.g. a compaction record and kept messages) are written right
        after the header in the same durable write, so the new transcript is complete before the
        index points at it. ``fork_at`` (a fork) is the parent's event the history was copied up to.
        ``counters`` start the new record's token counters (compaction carries the lineage's and
        records them on its compaction record, so a rebuild starts there too), saved with the index
        switch; the usage of ``extra_events`` is not added (they are copies, or carry none).
        ``auto_reset`` (a daily or idle reset: its reason, detail, the session it replaces and when)
        goes on the record and into the header, so ``undo-reset`` survives a rebuilt index.
        """
        self._check_writable()
        old = self.records.get(key)
        if old is None and self.admit_key is not None:
            self.admit_key(key)
        ts = (now or datetime.now(UTC)).isoformat()
        sid = new_session_id(now)
        cfg = dict(config if config is not None else (old.config if old else {}))
        header = Event(
            type="session", id=first_id, parent=None, ts=ts,
            data={
                "session_id": sid, "key": key, "created_at": ts, "parent_session_id": parent_session_id,
                "reason": reason, "compaction_count": compaction_count, "config": cfg,
                **({"fork_at": fork_at} if fork_at is not None else {}),
                **({"auto_reset": auto_reset} if auto_reset is not None else {}),
            },
        )
        events = [header, *(extra_events or [])]
        try:
            append_events(paths.transcript_path(sid), events)
        except OSError as e:
            with contextlib.suppress(OSError):
                paths.transcript_path(sid).unlink()
            raise _wrap_os_error(e, "create a session transcript") from e
        self._cache[sid] = list(events)
        rec = SessionRecord(
            key=key, session_id=sid, created_at=ts, last_activity_at=ts, parent_session_id=parent_session_id,
            config=cfg, reason=reason, compaction_count=compaction_count, fork_at=fork_at,
            counters=counters if counters is not None else Counters(), counted_through=max(e.id for e in events),
            auto_reset=auto_reset,
        )
        self.records[key] = rec
        try:
            self.save()
        except StorageError:
            if old is not None:
                self.records[key] = old
            else:
                self.records.pop(key, None)
            with contextlib.suppress(OSError):
                paths.transcript_path(sid).unlink()
            raise
        if old is not None and archive_previous:
            self.archive_transcript(old.session_id)
        self.search.sync_session(sid)
        return rec

    def lineage(self, session_id: str, *, max_depth: int = 10_000) -> tuple[list[str], str | None]:
        """The session and its ancestors through ``parent_session_id`` (compactions and forks), oldest
        first, and a parent the chain stops at, if any: one with no transcript, or one of another
        agent (one agent never sees another's sessions; see :meth:`lineage_stop`).

        A corrupt chain that loops stops at the first session seen twice.
        """
        chain, stop, _ = self.lineage_stop(session_id, max_depth=max_depth)
        return chain, stop

    def lineage_stop(self, session_id: str, *, max_depth: int = 10_000) -> tuple[list[str], str | None, str]:
        """:meth:`lineage`, and why it stopped early: ``""`` (it did not), ``"missing"`` (the
        parent has no transcript) or ``"agent"`` (the parent's header names another agent's key)."""
        chain: list[str] = []
        seen: set[str] = set()
        sid: str | None = session_id
        agent: str | None = None
        while sid and sid not in seen and len(chain) < max_depth:
            try:
                path = self.transcript_path(sid)
            except UserError:
                if chain:  # the asked-for session itself missing is the caller's error, not a gap
                    chain.reverse()
                    return chain, sid, "missing"
                raise
            header = read_header(path)
            owner = header_agent(header.data if header is not None else {})
            if chain and owner != agent:  # another agent's session: never part of this one's lineage
                chain.reverse()
                return chain, sid, "agent"
            agent = owner
            seen.add(sid)
            chain.append(sid)
            parent = header.data.get("parent_session_id") if header is not None else None
            sid = str(parent) if parent else None
        chain.reverse()
        return chain, None, ""

    def archive_transcript(self, session_id: str) -> Path:
        """Move a live transcript to the archive (idempotent)."""
        self._archived = None
        self._archived_counters.clear()
        return _move(paths.transcript_path(session_id), paths.archived_transcript_path(session_id))

    def unarchive_transcript(self, session_id: str) -> Path:
        """Move an archived transcript back to the live folder (idempotent)."""
        self._archived = None
        self._archived_counters.clear()
        return _move(paths.archived_transcript_path(session_id), paths.transcript_path(session_id))

    def make_current(self, session_id: str, *, key: str | None = None) -> SessionRecord:
        """Make an existing (archived or live) session the current one of its key.

        The session that was current for that key is archived, nothing is deleted.
        """
        self._check_writable()
        path = self.transcript_path(session_id)
        header = read_header(path)
        if header is None:
            raise UserError(f"session {session_id} has no readable header")
        key = key or str(header.data.get("key"))
        last = read_last_event(path)
        evs = self.events(session_id)
        old = self.records.get(key)
        rec = SessionRecord(
            key=key, session_id=session_id, created_at=str(header.data.get("created_at", header.ts)),
            last_activity_at=last.ts if last else header.ts,
            parent_session_id=header.data.get("parent_session_id"),
            config=dict(header.data.get("config") or {}), reason=str(header.data.get("reason", "new")),
            compaction_count=int(header.data.get("compaction_count", 0)),
            fork_at=_fork_at(header), counters=recount(session_id, reading(session_id, evs)),
            counted_through=max((e.id for e in evs), default=None),
        )
        self.unarchive_transcript(session_id)
        self.records[key] = rec
        self.save()
        if old is not None and old.session_id != session_id:
            self.archive_transcript(old.session_id)
        return rec

    def remove_key(self, key: str) -> SessionRecord | None:
        """Drop a key from the index and archive its transcript (cleanup)."""
        self._check_writable()
        rec = self.records.pop(key, None)
        if rec is None:
            return None
        self.save()
        self.archive_transcript(rec.session_id)
        return rec

    # ----- listing and maintenance
    def list_archived(self) -> list[ArchivedInfo]:
        """Every archived transcript, newest first (reads headers only; cached, see ``_archived``)."""
        if self._archived is None or self.readonly:
            self._archived = self._scan_archive()
        return list(self._archived)

    def archived_counters(self, info: ArchivedInfo) -> Counters:
        """Token counters of an archived session, recounted from the transcripts as they were while
        it was current (:func:`~neotask_tui.storage.index.recount`: a compaction's session with its
        lineage's); each is read once per store, until the archive changes."""
        got = self._archived_counters.get(info.session_id)
        if got is None:
            got = self._archived_counters[info.session_id] = recount(info.session_id, read_session)
        return got

    def _scan_archive(self) -> list[ArchivedInfo]:
        out: list[ArchivedInfo] = []
        adir = paths.archive_dir()
        if not adir.exists():
            return out
        for p in adir.glob("*.jsonl"):
            h = read_header(p)
            if h is None:
                continue
            last = read_last_event(p)
            out.append(ArchivedInfo(
                session_id=str(h.data.get("session_id", p.stem)), key=str(h.data.get("key", "")),
                created_at=str(h.data.get("created_at", h.ts)), reason=str(h.data.get("reason", "")),
                last_activity_at=last.ts if last else h.ts, parent_session_id=h.data.get("parent_session_id"),
                path=p, fork_at=_fork_at(h),
            ))
        out.sort(key=lambda a: a.created_at, reverse=True)
        return out

    def orphans(self) -> list[Path]:
        """Live transcripts that no key points to (e.g. a crash between index switch and archive)."""
        current = {r.session_id for r in self.records.values()}
        sdir = paths.sessions_dir()
        if not sdir.exists():
            return []
        return [p for p in sorted(sdir.glob("*.jsonl")) if p.stem not in current]

    def repair_orphans(self) -> list[str]:
        """Archive orphaned live transcripts; returns their ids."""
        self._check_writable()
        done = []
        for p in self.orphans():
            self.archive_transcript(p.stem)
            done.append(p.stem)
        return done

    def reconcile_counters(self) -> list[str]:
        """Catch the index up with transcripts written after its last save (a crash between an
        append and the index rewrite): the usage of the events after ``counted_through`` is added
        to the counters, and the activity time moves to the newest of them that is activity (a
        compaction preview's ``call`` is not). An index written before ``counted_through`` was kept
        goes by ``last_activity_at``. Returns the keys whose counters grew."""
        self._check_writable()
        fixed: list[str] = []
        changed = False
        for rec in self.records.values():
            last = read_last_event(paths.transcript_path(rec.session_id))
            if last is None:
                continue
            if rec.counted_through is not None:
                if last.id <= rec.counted_through:
                    continue
                mark = rec.counted_through
                new = [e for e in self.events(rec.session_id) if e.id > mark]
            else:
                if not _newer(last.ts, rec.last_activity_at):
                    continue
                since = rec.last_activity_at
                new = [e for e in self.events(rec.session_id) if _newer(e.ts, since)]
            counted = _add_usage(rec, new, through=last.id)
            active = [e for e in new if e.type != "call"]
            if active:
                touch(rec, active[-1].ts)
            changed = True
            if counted:
                fixed.append(rec.key)
        if changed:
            self.save()
        return fixed

    def cleanup(self, days: int, now: datetime | None = None) -> list[SessionRecord]:
        """Archive sessions untouched for ``days`` days; returns what was archived."""
        now = now or datetime.now(UTC)
        cutoff = now - timedelta(days=days)
        stale = [r for r in self.records.values() if parse_ts(r.last_activity_at) < cutoff]
        for r in stale:
            self.records.pop(r.key, None)
        if stale:
            self.save()
            for r in stale:
                self.archive_transcript(r.session_id)
        return stale


def _add_usage(rec: SessionRecord, events: Iterable[Event], *, through: int) -> bool:
    """Add the usage of ``events`` (each that :func:`counts_usage`) to ``rec``'s counters, which
    then hold every event of the transcript through id ``through``; whether any usage was added."""
    added = False
    for e in events:
        if counts_usage(e):
            rec.counters.add(e.data["usage"], e.data.get("cost_usd"))
            added = True
    rec.counted_through = through
    return added


def _fork_at(header: Event) -> int | None:
    """The fork point a session header names (``None`` for a session that is not a fork)."""
    v = header.data.get("fork_at")
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _move(src: Path, dst: Path) -> Path:
    """Durably rename ``src`` to ``dst`` (no-op if ``src`` is already gone)."""
    if not src.exists():
        return dst
    paths.ensure_dir(dst.parent)
    os.replace(src, dst)
    fsync_dir(dst.parent)
    fsync_dir(src.parent)
    return dst


def _newer(a: str, b: str) -> bool:
    try:
        return parse_ts(a) > parse_ts(b)
    except ValueError:
        return False


def touch(rec: SessionRecord, when: str | None = None) -> None:
    """Mark activity on a record (caller saves the index).

    The activity time never moves backwards: after the wall clock jumps back (NTP fixing a fast
    clock), a daily boundary the session already passed must not count as crossed a second time.
    """
    when = when or now_iso()
    if not _newer(rec.last_activity_at, when):
        rec.last_activity_at = when
