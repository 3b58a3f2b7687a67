"""The session-state model: entries, scopes, TTLs, and the fold that rebuilds state from events.

Every change to session state is a ``state`` event in the transcript; :func:`fold` replays those
events (plus the clock) into a :class:`StateFold` — the active entries and everything that expired,
with why and when. Nothing else is authoritative, so state at any point in time is
``fold(events_up_to_t, now=t)`` and state survives restarts because the transcript does.

``state`` event payloads (``data`` of the transcript line; ``at`` is the engine clock at write time,
``source`` is ``"e:<id>"``, ``"user command"`` or ``"model tool"``):

- ``set`` — scalar field: ``field``, ``value``, ``scope``, ``scope_ref``, ``agent``, ``key``, ``ttl``,
  ``expires_at``, ``until_event``, ``workflow``. Replaces the field's active entry (audit: "replaced").
- ``add`` — list field item (``temporary_preferences``, ``open_questions``, ``constraints``, ``facts``):
  same keys as ``set``; the item's id is the event id. An active item of the same field, scope and
  value (:func:`value_key`) expires (audit: "restated"): an item stated again is one entry, and it
  ends as the later statement says.
- A ``set``/``add`` written at the start of a fresh session by ``/new`` or the daily reset carries
  an entry that was still active over from the previous session: ``carried_from`` (that session's
  id), ``carried_by`` (``new`` or ``daily``) and the entry's original ``set_at``, ``source``,
  scope and absolute expiry, so it expires exactly when it would have.
- ``clear`` — ``field`` and optional ``item`` (entry id); ``reason``.
- ``resolve`` — an open question answered: ``item``, ``reason``.
- ``fire`` — a named event happened (``name``): entries with ``until_event == name`` expire.
- ``done`` — workflow end: workflow-bound entries expire and the goal is resolved.
- ``scope_change`` — ``changes`` = ``{"project": [old, new], ...}``: entries bound to the old
  project/workspace expire.
- ``reset`` — manual reset: everything expires; in a fresh session ``expired`` lists the entries of
  the previous session (``from_session``) so the audit shows what the reset cleared.
- ``session_expiry`` — ``expires_at`` (absolute) or ``after_event`` + ``delay`` ("ticket_closed + 7d");
  both ``None`` clears it.

The types :class:`~neotask_tui.engine.state.manager.StateManager` hands out — :class:`StateView`,
:class:`Notice` and :class:`StateError` — live here too (``neotask_tui.engine.state.manager`` re-exports them).
"""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from neotask_tui.storage.events import Event
from neotask_tui.tuning import STATE_RECENTLY_EXPIRED_MINUTES

SCOPES = ("session", "chat", "agent", "workspace", "project", "user", "team", "org")
"""Scopes from narrowest to widest."""
SCALAR_FIELDS = ("current_goal", "current_step", "selected_entity", "tool_results_summary", "blocked_by")
LIST_FIELDS = ("temporary_preferences", "open_questions", "constraints", "facts")
TYPED_FIELDS = (*SCALAR_FIELDS, *LIST_FIELDS, "expires_at")
WORKFLOW_FIELDS = frozenset(
    {"current_goal", "current_step", "selected_entity", "tool_results_summary", "blocked_by",
     "open_questions"}
)
"""Fields bound to the current workflow by default: they expire on ``/done``."""

_FIELD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{0,63}")
# ASCII digits only: ``\d`` (and ``float``) would take Arabic-Indic and other Unicode digits.
_DUR_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(s|sec|m|min|h|hr|d|day|w|week)s?\s*$", re.I)
_UNIT = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "d": 86400, "day": 86400,
         "w": 604800, "week": 604800}
MAX_DURATION_DAYS = 3650
"""The longest TTL / expiry delay accepted (about ten years); longer is an error, not a crash."""


def parse_duration(text: str) -> timedelta:
    """Parse a relative duration such as ``90s``, ``30m``, ``2h``, ``7d``, ``1w``.

    At most :data:`MAX_DURATION_DAYS` days.

    Raises:
        ValueError: if ``text`` is not a duration, or is longer than the maximum.
    """
    m = _DUR_RE.match(text if isinstance(text, str) else "")
    shown = text if isinstance(text, str) and len(text) <= 40 else f"{str(text)[:40]}…"
    if not m:
        raise ValueError(f"not a duration: {shown!r} (use e.g. 30m, 2h, 7d)")
    seconds = float(m.group(1)) * _UNIT[m.group(2).lower()]  # a huge digit string is inf, not an error
    if seconds > MAX_DURATION_DAYS * 86400:
        raise ValueError(f"duration too long: {shown.strip()!r} (at most {MAX_DURATION_DAYS} days)")
    return timedelta(seconds=seconds)


def capped_duration(text: str) -> tuple[str, bool]:
    """``text`` as a TTL within the cap: itself, or ``"3650d"`` (:data:`MAX_DURATION_DAYS`) and
    ``True`` when it is a duration longer than that.

    A period said in chat ("на 100000 часов …", "for 99999999999999999999 minutes …") is what the
    user wants, only longer than any entry may last: it is kept for the longest time allowed (the
    turn says so) rather than refused, as a command's ``--for`` is. Anything that is not a duration
    is returned unchanged (:func:`parse_duration` refuses it).
    """
    m = _DUR_RE.match(text if isinstance(text, str) else "")
    if m and float(m.group(1)) * _UNIT[m.group(2).lower()] > MAX_DURATION_DAYS * 86400:
        return f"{MAX_DURATION_DAYS}d", True
    return text, False


def parse_time(text: str) -> datetime:
    """Parse an ISO-8601 timestamp; a naive one is taken as UTC.

    Raises:
        ValueError: if ``text`` is not ISO-8601.
    """
    dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def value_key(value: Any) -> str:
    """What makes two values of one field the same statement: a text NFKC-normalised, case-folded,
    its spaces collapsed and the punctuation around it dropped ("Answer briefly!" is "answer
    briefly"); any other value its JSON with sorted keys."""
    if isinstance(value, str):
        return " ".join(unicodedata.normalize("NFKC", value).casefold().split()).strip(_VALUE_EDGES)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


_VALUE_EDGES = " .,;:!?…¡¿\"'«»“”‘’"


def valid_field(name: str) -> bool:
    """Whether ``name`` is a usable state field name (typed or custom)."""
    return bool(_FIELD_RE.fullmatch(name))


@dataclass(slots=True)
class ScopeContext:
    """What the current session key resolves to, for scope checks.

    Attributes:
        key: The full session key (chat scope).
        agent: Agent id.
        session_id: Current session id.
        project: The session's ``project`` config value, if any.
        workspace: The session's ``workspace`` config value, if any.
    """

    key: str
    agent: str
    session_id: str
    project: str | None = None
    workspace: str | None = None

    def ref(self, scope: str) -> str | None:
        """The reference an entry of ``scope`` is bound to in this context."""
        return {
            "session": self.session_id, "chat": self.key, "agent": self.agent,
            "workspace": self.workspace, "project": self.project,
        }.get(scope)


@dataclass(slots=True)
class StateEntry:
    """One session-state entry (a scalar field value or one item of a list field).

    Attributes:
        id: Id of the ``state`` event that created it.
        field: Field name.
        value: The value (JSON-able).
        source: ``"e:<id>"`` of the message it came from, ``"user command"`` or ``"model tool"``.
        set_at: When it was set (engine clock).
        scope: One of :data:`SCOPES`.
        scope_ref: What the scope is bound to (project name, agent id, key...).
        agent: Agent id of the key that set it.
        key: Session key that set it.
        ttl: Relative TTL as given (``"2h"``), if any.
        expires_at: Absolute expiry time, if any.
        until_event: Event name that ends it, if any.
        workflow: Expires at workflow end (``/done``).
        expired_at: When it stopped applying (``None`` while active).
        expired_reason: Why it stopped applying.
        carried_from: The session this entry was carried over from (``/new``, daily reset), if any.
        carried_by: What carried it: ``new`` or ``daily``.
    """

    id: int
    field: str
    value: Any
    source: str
    set_at: datetime
    scope: str = "session"
    scope_ref: str | None = None
    agent: str = ""
    key: str = ""
    ttl: str | None = None
    expires_at: datetime | None = None
    until_event: str | None = None
    workflow: bool = False
    expired_at: datetime | None = None
    expired_reason: str | None = None
    carried_from: str | None = None
    carried_by: str | None = None

    @property
    def active(self) -> bool:
        """Whether the entry still applies."""
        return self.expired_at is None

    @property
    def carried_note(self) -> str:
        """``carried over by /new from <session>`` (or by the daily reset); "" if set in this session."""
        if not self.carried_from:
            return ""
        by = "the daily reset" if self.carried_by == "daily" else "/new"
        return f"carried over by {by} from {self.carried_from}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (CLI ``--json``, reset records)."""
        return {
            "id": self.id, "field": self.field, "value": self.value, "source": self.source,
            "set_at": self.set_at.isoformat(), "scope": self.scope, "scope_ref": self.scope_ref,
            "agent": self.agent, "key": self.key, "ttl": self.ttl,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "until_event": self.until_event, "workflow": self.workflow,
            "expired_at": self.expired_at.isoformat() if self.expired_at else None,
            "expired_reason": self.expired_reason,
            "carried_from": self.carried_from, "carried_by": self.carried_by,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StateEntry:
        """Inverse of :meth:`to_dict`."""
        return cls(
            id=int(d["id"]), field=str(d["field"]), value=d.get("value"), source=str(d.get("source", "")),
            set_at=parse_time(d["set_at"]), scope=str(d.get("scope") or "session"),
            scope_ref=d.get("scope_ref"), agent=str(d.get("agent") or ""), key=str(d.get("key") or ""),
            ttl=d.get("ttl"), expires_at=parse_time(d["expires_at"]) if d.get("expires_at") else None,
            until_event=d.get("until_event"), workflow=bool(d.get("workflow")),
            expired_at=parse_time(d["expired_at"]) if d.get("expired_at") else None,
            expired_reason=d.get("expired_reason"),
            carried_from=d.get("carried_from"), carried_by=d.get("carried_by"),
        )


def admits(entry: StateEntry, ctx: ScopeContext) -> bool:
    """Whether ``entry`` may enter the context of ``ctx``.

    Agent isolation is absolute: another agent's entry is never admitted, whatever its scope.
    Session/chat entries need the same key; workspace/project entries the same workspace/project;
    user/team/org entries only the same agent (they are not bound to anything narrower).
    """
    if entry.agent and entry.agent != ctx.agent:
        return False
    if entry.scope in ("session", "chat"):
        return not entry.key or entry.key == ctx.key
    if entry.scope in ("workspace", "project"):
        return entry.scope_ref == ctx.ref(entry.scope)
    return entry.scope in SCOPES


def _event_time(ev: Event) -> datetime:
    at = ev.data.get("at")
    try:
        return parse_time(at if isinstance(at, str) else ev.ts)
    except ValueError:
        return parse_time(ev.ts)


@dataclass
class StateFold:
    """State rebuilt from ``state`` events.

    Attributes:
        active: Active entries by id, in creation order.
        expired: Expired entries in expiry order (the audit log).
        fired: Named events fired so far → when.
        session_expiry: The session-level expiry spec, if any.
        done_at: When the workflow last ended (``/done``), if ever.
    """

    active: dict[int, StateEntry] = field(default_factory=dict)
    expired: list[StateEntry] = field(default_factory=list)
    fired: dict[str, datetime] = field(default_factory=dict)
    session_expiry: dict[str, Any] | None = None
    done_at: datetime | None = None

    def session_expires_at(self) -> datetime | None:
        """The session-level expiry time, if known (``after_event`` specs resolve once fired)."""
        spec = self.session_expiry
        if not spec:
            return None
        if spec.get("expires_at"):
            return parse_time(spec["expires_at"])
        ev = spec.get("after_event")
        if ev and ev in self.fired:
            try:
                return self.fired[ev] + parse_duration(spec.get("delay") or "0s")
            except (ValueError, OverflowError):  # a delay written before the cap: the cap applies
                return self.fired[ev] + timedelta(days=MAX_DURATION_DAYS)
        return None

    def _expire(self, entry: StateEntry, at: datetime, reason: str) -> None:
        if self.active.pop(entry.id, None) is None:
            return
        entry.expired_at = at
        entry.expired_reason = reason
        self.expired.append(entry)

    def advance(self, now: datetime) -> None:
        """Expire everything whose time has come by ``now`` (TTLs, then the session expiry)."""
        sess = self.session_expires_at()
        due = sorted(
            (e for e in self.active.values() if e.expires_at is not None and e.expires_at <= now
             and (sess is None or e.expires_at <= sess)),
            key=lambda e: (e.expires_at or now, e.id),
        )
        for e in due:
            assert e.expires_at is not None
            why = f"time: ttl {e.ttl} elapsed" if e.ttl else "time: expires_at reached"
            self._expire(e, e.expires_at, why)
        if sess is not None and sess <= now:
            spec = self.session_expiry or {}
            label = spec.get("expires_at") or f"{spec.get('after_event')} + {spec.get('delay')}"
            for e in list(self.active.values()):
                self._expire(e, sess, f"session expired ({label})")
            self.session_expiry = None

    def apply(self, ev: Event) -> None:
        """Apply one ``state`` event (other event types are ignored)."""
        if ev.type != "state":
            return
        d = ev.data
        at = _event_time(ev)
        op = d.get("op")
        fld = d.get("field")
        if op in ("set", "add") and isinstance(fld, str):
            if op == "set":
                for e in [e for e in self.active.values() if e.field == fld]:
                    self._expire(e, at, f"replaced by {_stated_by(ev)}")
            else:  # an item stated again is one entry, ending as the later statement says
                same = value_key(d.get("value"))
                scope, ref = str(d.get("scope") or "session"), d.get("scope_ref")
                agent, key = str(d.get("agent") or ""), str(d.get("key") or "")
                for e in [e for e in self.active.values() if e.field == fld and e.scope == scope
                          and e.scope_ref == ref and e.agent == agent and e.key == key and value_key(e.value) == same]:
                    self._expire(e, at, f"restated by {_stated_by(ev)}")
            exp = d.get("expires_at")
            carried = d.get("carried_from")
            set_at = at
            if carried and isinstance(d.get("set_at"), str):
                with contextlib.suppress(ValueError):
                    set_at = parse_time(d["set_at"])
            self.active[ev.id] = StateEntry(
                id=ev.id, field=fld, value=d.get("value"), source=str(d.get("source") or ""),
                set_at=set_at, scope=str(d.get("scope") or "session"), scope_ref=d.get("scope_ref"),
                agent=str(d.get("agent") or ""), key=str(d.get("key") or ""), ttl=d.get("ttl"),
                expires_at=parse_time(exp) if isinstance(exp, str) else None,
                until_event=d.get("until_event"), workflow=bool(d.get("workflow")),
                carried_from=str(carried) if carried else None,
                carried_by=str(d["carried_by"]) if d.get("carried_by") else None,
            )
        elif op in ("clear", "resolve"):
            item = d.get("item")
            reason = str(d.get("reason") or ("resolved" if op == "resolve" else "manual: cleared"))
            for e in list(self.active.values()):
                if (item is not None and e.id == item) or (item is None and e.field == fld):
                    self._expire(e, at, reason)
        elif op == "fire" and isinstance(d.get("name"), str):
            name = d["name"]
            self.fired[name] = at
            for e in [e for e in self.active.values() if e.until_event == name]:
                self._expire(e, at, f"event: {name}")
        elif op == "done":
            self.done_at = at
            for e in [e for e in self.active.values() if e.workflow]:
                self._expire(e, at, str(d.get("reason") or "workflow end: done"))
        elif op == "scope_change" and isinstance(d.get("changes"), dict):
            for dim, pair in d["changes"].items():
                old, new = [*pair, None, None][:2] if isinstance(pair, list) else (None, None)
                for e in [e for e in self.active.values() if e.scope == dim and e.scope_ref != new]:
                    self._expire(e, at, f"scope change: {dim} {old or '-'} → {new or '-'}")
        elif op == "reset":
            reason = str(d.get("reason") or "manual reset")
            for e in list(self.active.values()):
                self._expire(e, at, reason)
            for raw in d.get("expired") or []:
                try:
                    e = StateEntry.from_dict(raw)
                except (KeyError, TypeError, ValueError):
                    continue
                e.expired_at, e.expired_reason = at, reason
                self.expired.append(e)
            self.session_expiry = None
        elif op == "session_expiry":
            if d.get("expires_at") or d.get("after_event"):
                self.session_expiry = {k: d.get(k) for k in ("expires_at", "after_event", "delay")}
            else:
                self.session_expiry = None


def fold(events: list[Event], now: datetime, *, as_of: bool = False) -> StateFold:
    """Rebuild state from transcript events as of ``now``.

    Time-based expiries are applied in order between events, so an entry whose TTL ran out before
    a later event is audited with its TTL as the reason, not with whatever came later.

    Args:
        events: Transcript events (non-``state`` events are ignored; duplicate ids count once).
        now: The time to evaluate TTLs at.
        as_of: Also ignore events written after ``now`` — "what was the state at time ``now``".
    """
    st = StateFold()
    seen: set[int] = set()
    for ev in events:
        if ev.type != "state" or ev.id in seen:
            continue
        t = _event_time(ev)
        if as_of and t > now:
            continue
        seen.add(ev.id)
        st.advance(t)
        st.apply(ev)
    st.advance(now)
    return st


# ---- what the state API hands out ---------------------------------------------------------------

RECENTLY_EXPIRED = timedelta(minutes=STATE_RECENTLY_EXPIRED_MINUTES)
"""How long expired entries stay in :attr:`StateView.expired` (shown struck through); the tunable is
:data:`neotask_tui.tuning.STATE_RECENTLY_EXPIRED_MINUTES`."""


class StateError(ValueError):
    """A bad state request; the message is one line fit for the UI."""


@dataclass(slots=True)
class Notice:
    """A short message for the UI about what the state module did."""

    text: str
    kind: str = "state"


@dataclass(slots=True)
class StateView:
    """Session state as the UI and CLI see it.

    Attributes:
        key: Session key.
        session_id: Current session id.
        active: Active, in-scope entries (creation order).
        expired: Entries that expired within :data:`RECENTLY_EXPIRED` (for strike-through).
        session_expires_at: Session-level expiry time, if set and known.
        session_expiry: The raw session-expiry spec (``after_event`` + ``delay`` before it fires).
        fired: Named events fired in this session.
    """

    key: str
    session_id: str
    active: list[StateEntry]
    expired: list[StateEntry]
    session_expires_at: datetime | None = None
    session_expiry: dict[str, Any] | None = None
    fired: dict[str, datetime] = field(default_factory=dict)

    def values(self, name: str) -> list[Any]:
        """Values of the active entries of field ``name``."""
        return [e.value for e in self.active if e.field == name]

    def value(self, name: str) -> Any:
        """Value of scalar field ``name`` (``None`` when unset)."""
        vals = self.values(name)
        return vals[-1] if vals else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``neotask state KEY --json``)."""
        return {
            "key": self.key, "session_id": self.session_id,
            "active": [e.to_dict() for e in self.active], "expired": [e.to_dict() for e in self.expired],
            "session_expires_at": self.session_expires_at.isoformat() if self.session_expires_at else None,
            "session_expiry": self.session_expiry,
            "fired": {k: v.isoformat() for k, v in self.fired.items()},
        }


def fork_end(events: list[Event] | tuple[Event, ...], at: int) -> int:
    """The last event id a fork at message ``at`` takes: ``at`` itself and the ``state`` records that
    message made, written right after it ("My goal is …" at e:2 sets the goal at e:3, sourced e:2).
    A fork at that message keeps what the message said; the reply's own records stay behind."""
    end = at
    seen = False
    for e in events:
        if e.id == at:
            seen = True
            continue
        if not seen or e.type == "session":
            continue
        if e.type == "state" and e.data.get("source") == f"e:{at}":
            end = e.id
            continue
        break
    return end


def _stated_by(ev: Event) -> str:
    """Who set the ``state`` event ``ev``, as the audit names it: the message it came from (``e:8``,
    the id ``/state`` shows as the entry's source), else its source and the state event
    (``model tool (e:12)``)."""
    src = str(ev.data.get("source") or "")
    if re.fullmatch(r"e:\d+", src):
        return src
    return f"{src} (e:{ev.id})" if src else f"e:{ev.id}"
