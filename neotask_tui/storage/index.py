"""The ``sessions.json`` index: key -> current session record.

Written atomically (temp + fsync + ``os.replace``). If it is missing or corrupt it is rebuilt from
the transcript headers (every transcript starts with a ``session`` line), the corrupt file is kept
in quarantine, and the caller is told. It only holds *current* sessions, so it stays small however
many sessions ever existed; older ones are found through the archive.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neotask_tui import paths
from neotask_tui.storage.atomic import atomic_write_text
from neotask_tui.storage.events import counts_usage, now_iso
from neotask_tui.storage.transcript import read_header, read_last_event

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
        )


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
    """Read ``sessions.json``; rebuild it from transcripts if missing or corrupt."""
    path = path or paths.sessions_index()
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
    """Reconstruct current sessions from the live transcripts (the newest per key wins)."""
    from neotask_tui.storage.events import Event  # noqa: F401  (type context)

    recs: dict[str, SessionRecord] = {}
    sdir = paths.sessions_dir()
    if not sdir.exists():
        return recs
    for tp in sorted(sdir.glob("*.jsonl")):
        header = read_header(tp)
        if header is None:
            continue
        key = str(header.data.get("key", ""))
        sid = str(header.data.get("session_id", tp.stem))
        if not key:
            continue
        last = read_last_event(tp)
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
        )
        recount_from_transcript(tp, rec)
        prev = recs.get(key)
        if prev is None or rec.created_at > prev.created_at:
            recs[key] = rec
    return recs


def recount_from_transcript(path: Path, rec: SessionRecord) -> None:
    """Recompute token counters from the transcript's assistant usage."""
    from neotask_tui.storage.transcript import read_transcript

    for ev in read_transcript(path, repair=False).events:
        if counts_usage(ev):
            rec.counters.add(ev.data["usage"], ev.data.get("cost_usd"))


def save_index(records: dict[str, SessionRecord], path: Path | None = None) -> None:
    """Atomically write the index."""
    path = path or paths.sessions_index()
    body = {"version": INDEX_VERSION, "sessions": {k: r.to_dict() for k, r in sorted(records.items())}}
    atomic_write_text(path, json.dumps(body, ensure_ascii=False, indent=1) + "\n")
