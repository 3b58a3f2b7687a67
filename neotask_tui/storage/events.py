"""The typed transcript event: one JSONL line.

Every line of a transcript is one :class:`Event`. On disk it is a flat JSON object::

    {"id": 12, "parent": 11, "ts": "2026-11-29T22:54:32.123456+00:00", "type": "message",
     "role": "user", "content": "..."}

``id`` is an integer unique within a session *lineage*: a session created by compaction continues
the counter of its parent (kept messages keep their original ids), so summary citations such as
``[e:12,e:15]`` stay unambiguous across compactions. ``parent`` is the id of the previous event.

Event types and their payload keys (all in ``data``):

- ``session`` (always the first line): ``session_id``, ``key``, ``created_at``,
  ``parent_session_id``, ``reason`` (``new``/``reset``/``daily``/``idle``/``compaction``/``restore``/...).
- ``message``: ``role`` (user/assistant/system), ``content``, optional ``status``
  (``complete``/``interrupted``/``error``), ``provider``, ``model``, ``usage`` (dict with
  input/output/cache_read/cache_write and ``reported`` bool) and ``cost_usd``, ``error``.
- ``tool_call``: ``call_id``, ``name``, ``arguments`` (dict); the first call of a round also holds
  the ``usage`` and ``cost_usd`` of the model call that asked for the round's tools.
- ``tool_result``: ``call_id``, ``name``, ``content``, ``is_error``.
- ``call``: a billed model call that leaves no message of its own, written when it came back:
  ``purpose`` (``compaction``/``compaction_preview``: the summarizer's calls, summed),
  ``provider``, ``model``, ``usage``, ``cost_usd``.
- ``compaction``: ``summary``, ``first_kept_id``, ``tokens_before``, ``tokens_after``, ``model``,
  ``source_session_id``, ``repaired`` (list), ``cited`` (list of ids), ``instructions``;
  ``carried_totals``: the token counters the new session starts from (its lineage's, in
  ``Counters.totals()`` form: a rebuild of the index starts there); when the model wrote the
  summary, ``usage`` (its calls summed) and ``cost_usd``, for reading: the call is counted by the
  ``call`` event in the compacted session (``copied_from`` names it).
- ``state``: ``op`` (set/clear/expire/...), ``field``, ``value``, ``scope``, ``source``, ``ttl``...
- ``marker``: informational notices shown inline (e.g. an automatic reset), ``kind``, ``text``.
  A marker of kind ``reset_undone`` (:data:`RESET_UNDONE`) records an ``undo-reset``.
  A marker of kind ``superseded`` (``/retry``, ``/edit``) lists in ``superseded`` the ids of the
  events it replaces (``by``: ``retry``/``edit``): they stay in the transcript, shown marked, and
  leave the context, the compaction input and the recall index (:func:`superseded_ids`).

A session header may also carry ``fork_at`` (the id of the parent's event a fork was taken at,
``reason`` ``fork``) and ``auto_reset`` (a daily or idle reset's ``reason``, ``detail``,
``previous_session_id`` and ``at``: what ``undo-reset`` brings back); readers that do not know
them ignore them.

Every billed model call leaves its ``usage`` on exactly one event when it is made, so the session
index's token counters can be recounted from the transcripts (:func:`counts_usage`). An event that
holds a copy of a usage counted elsewhere names that session in ``copied_from``: a fork's copy of
its parent's history, the recent messages a compaction keeps, a compaction record's summarizer
calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

EVENT_TYPES = frozenset(
    {"session", "message", "tool_call", "tool_result", "call", "compaction", "state", "marker"}
)
_RESERVED = ("id", "parent", "ts", "type")


SUPERSEDED = "superseded"
"""The ``kind`` of the marker that retires events replaced by ``/retry`` or ``/edit``."""

RESET_UNDONE = "reset_undone"
"""The ``kind`` of the marker ``undo-reset`` writes into the session it brings back: ``reset``
(daily/idle), ``replaced_session_id`` (the reset's session, archived again) and ``messages_left``
(your messages in it). Its time is the session's activity: the undone reset is not applied again."""


def superseded_ids(events: Iterable[Event]) -> set[int]:
    """Ids of the events a ``superseded`` marker among ``events`` retired (append-only: the events
    stay on disk; every reader that builds a context, a summary or an index leaves them out)."""
    out: set[int] = set()
    for e in events:
        if e.type == "marker" and e.data.get("kind") == SUPERSEDED:
            ids = e.data.get("superseded")
            if isinstance(ids, list):
                out.update(i for i in ids if isinstance(i, int) and not isinstance(i, bool))
    return out


def without_superseded(events: Sequence[Event]) -> list[Event]:
    """``events`` less the ones a ``superseded`` marker retired (the markers themselves stay)."""
    gone = superseded_ids(events)
    return [e for e in events if e.id not in gone] if gone else list(events)


def redacted_in_conversation(events: Sequence[Event]) -> dict[int, str]:
    """The text of every user and assistant message of a transcript with its secrets redacted as the
    conversation marks them, by event id: a user message in the context of your message before it (a
    password announced in one message and sent on its own in the next:
    :func:`~neotask_tui.text.secrets.find_secrets` with ``context``), a reply also with the secret
    values of the user message before it (a reply quoting that password). The one reading of a
    conversation's secrets for the memory index, the recalled-history fence and ``/copy``; a message
    a ``/retry`` or ``/edit`` superseded is read in its place but is context for no later one."""
    from neotask_tui.text.secrets import find_secrets, redact, redact_found, redact_values

    out: dict[int, str] = {}
    prev_user: str | None = None
    sent: list[str] = []  # the secret values of the last user message
    gone = superseded_ids(events)
    for ev in events:
        if ev.type != "message" or ev.role not in ("user", "assistant"):
            continue
        raw = ev.content
        if ev.role == "user":
            found = find_secrets(raw, context=prev_user)
            secrets = [raw[m.start:m.end] for m in found]
            out[ev.id] = redact_found(raw, found)
            if ev.id not in gone and raw.strip():
                prev_user, sent = raw, secrets
        else:  # a reply quoting the password just sent: only the conversation marks it as one
            out[ev.id] = redact_values(redact(raw)[0], sent)
    return out


USAGE_TYPES = frozenset({"message", "tool_call", "call", "compaction"})
"""Event types that may hold a model call's ``usage`` (a ``compaction`` record only in a transcript
written before the summarizer's calls had ``call`` events of their own)."""


def counts_usage(e: Event) -> bool:
    """Whether a recount of a transcript adds this event's ``usage``: a reply's, a tool round's, a
    ``call`` (a compaction's summarizer), not a copy of a call counted in another session
    (``copied_from``: a fork's history, the messages a compaction keeps)."""
    return (e.type in USAGE_TYPES and isinstance(e.data.get("usage"), dict)
            and not e.data.get("copied_from"))


def now_iso() -> str:
    """Current time as an ISO-8601 string with UTC offset (microseconds kept)."""
    return datetime.now(UTC).isoformat()


def parse_ts(ts: str) -> datetime:
    """Parse an ISO timestamp as an aware datetime (naive = UTC); ``ValueError`` when it is none."""
    d = datetime.fromisoformat(ts)
    return d if d.tzinfo else d.replace(tzinfo=UTC)


def at_or_before(a: str, b: str) -> bool:
    """Whether ISO time ``a`` is at or before ``b`` (False when either is not a time)."""
    try:
        return parse_ts(a) <= parse_ts(b)
    except ValueError:
        return False


@dataclass(slots=True)
class Event:
    """One transcript line.

    Attributes:
        type: One of :data:`EVENT_TYPES`.
        id: Integer id, unique within the session lineage.
        parent: Id of the previous event, or ``None`` for the header.
        ts: ISO-8601 timestamp.
        data: The type-specific payload (flat keys on disk).
    """

    type: str
    id: int
    parent: int | None
    ts: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def role(self) -> str | None:
        """The role of a ``message`` event, else ``None``."""
        r = self.data.get("role")
        return r if isinstance(r, str) else None

    @property
    def content(self) -> str:
        """Text content of a message / tool result ("" when absent)."""
        c = self.data.get("content", "")
        return c if isinstance(c, str) else json.dumps(c, ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        """The flat JSON-able form written to disk."""
        out: dict[str, Any] = {"id": self.id, "parent": self.parent, "ts": self.ts, "type": self.type}
        for k, v in self.data.items():
            if k not in _RESERVED:
                out[k] = v
        return out

    def to_line(self) -> str:
        """Serialise to one JSONL line (with trailing newline)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        """Parse the on-disk form; raises ``ValueError`` on a malformed record."""
        if not isinstance(d, dict):
            raise ValueError("event is not an object")
        typ = d.get("type")
        eid = d.get("id")
        if typ not in EVENT_TYPES:
            raise ValueError(f"unknown event type {typ!r}")
        if not isinstance(eid, int) or isinstance(eid, bool):
            raise ValueError("event id must be an integer")
        parent = d.get("parent")
        if parent is not None and not isinstance(parent, int):
            raise ValueError("event parent must be an integer or null")
        ts = d.get("ts")
        if not isinstance(ts, str):
            raise ValueError("event ts must be a string")
        data = {k: v for k, v in d.items() if k not in _RESERVED}
        return cls(type=typ, id=eid, parent=parent, ts=ts, data=data)
