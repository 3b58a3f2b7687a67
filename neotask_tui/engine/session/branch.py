"""Branching a conversation: the history a fork starts with, and what ``/retry`` and ``/edit`` retire.

A fork is a new session for the same key (like ``/new``: the key's current session is archived,
nothing is deleted) whose transcript holds the parent's events up to the fork point with their
original ids, after a header naming the parent (``parent_session_id``) and the point (``fork_at``).
The header's id follows the parent's highest id, so what the fork adds next never reuses an id the
parent's lineage already gave.

``/retry`` and ``/edit`` never rewrite anything: a ``superseded`` marker
(:data:`~neotask_tui.storage.events.SUPERSEDED`) lists the events they replace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from neotask_tui.engine.state.model import fork_end
from neotask_tui.errors import UserError
from neotask_tui.storage.events import Event, without_superseded

_CONVERSATION = ("message", "tool_call", "tool_result")


@dataclass(frozen=True, slots=True)
class ForkPlan:
    """What a fork writes: its parent, the point, and the copied events (header not included)."""

    parent_session_id: str
    at: int
    header_id: int
    events: list[Event]


def plan_fork(
    session_id: str, events: Sequence[Event], at: int | None, load: Callable[[str], Sequence[Event]]
) -> ForkPlan:
    """The fork of session ``session_id`` (its ``events``) at event ``at`` (None: its last message).

    An ``at`` that compaction moved out of this session is looked up in the sessions it continues
    (``load`` reads one): the fork then starts from the one that holds it.

    Raises:
        UserError: no such event in the lineage, or the event is not a message.
    """
    sid, evs = session_id, list(events)
    if at is None:
        last = next((e for e in reversed(without_superseded(evs)) if e.type == "message"
                     and e.role in ("user", "assistant")), None)
        if last is None:
            raise UserError("nothing to fork yet: this session has no message")
        at = last.id
    for _ in range(1000):
        target = next((e for e in evs if e.id == at and e.type != "session"), None)
        if target is not None:
            break
        head = evs[0] if evs and evs[0].type == "session" else None
        parent = head.data.get("parent_session_id") if head is not None else None
        if head is None or head.data.get("reason") != "compaction" or not parent:
            raise UserError(f"no event e:{at} in this session or the sessions it continues")
        sid, evs = str(parent), list(load(str(parent)))
    else:  # pragma: no cover - a cyclic chain of headers
        raise UserError(f"no event e:{at} in this session or the sessions it continues")
    if target.type != "message" or target.role not in ("user", "assistant"):
        raise UserError(f"e:{at} is a {target.type.replace('_', ' ')}; fork at a message (yours or a reply)")
    copied: list[Event] = []
    header_id = max((e.id for e in evs), default=0) + 1
    parent_id: int | None = header_id
    end = fork_end(evs, at)  # the message and the state records it made ("my goal is …")
    for e in evs:
        if e.type == "session" or e.id > end:
            continue
        data = dict(e.data)
        if isinstance(data.get("usage"), dict):  # a reply's, a compaction's summarizer calls
            data["copied_from"] = sid  # a recount must not bill the parent's call twice
        copied.append(Event(e.type, e.id, parent_id, e.ts, data))
        parent_id = e.id
    return ForkPlan(parent_session_id=sid, at=at, header_id=header_id, events=copied)


@dataclass(frozen=True, slots=True)
class Regeneration:
    """What ``/retry`` or ``/edit`` works on in a session: the last message of yours and the live
    events after it (the reply, its tool calls and results)."""

    user: Event
    after: list[int]


def plan_regeneration(events: Sequence[Event]) -> Regeneration:
    """The last live user message and the reply events after it.

    Raises:
        UserError: there is no message of yours in this session.
    """
    live = without_superseded(events)
    user = next((e for e in reversed(live) if e.type == "message" and e.role == "user"), None)
    if user is None:
        raise UserError("nothing to regenerate: no message of yours in this session")
    after = [e.id for e in live if e.id > user.id and e.type in _CONVERSATION]
    return Regeneration(user=user, after=after)


def tree_rows(rows: Sequence[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Session rows (:meth:`Engine.list_sessions` dicts) ordered as the branch tree: each fork
    right under the session it was forked from (oldest fork first), with its depth. A row whose
    parent is not among ``rows``, or is not a fork's, keeps its place at depth 0."""
    ids = {str(r.get("session_id")) for r in rows}
    children: dict[str, list[dict[str, Any]]] = {}
    roots: list[dict[str, Any]] = []
    for r in rows:
        parent = str(r.get("parent_session_id") or "")
        if r.get("reason") == "fork" and parent in ids and parent != str(r.get("session_id")):
            children.setdefault(parent, []).append(r)
        else:
            roots.append(r)
    out: list[tuple[int, dict[str, Any]]] = []
    seen: set[str] = set()

    def walk(r: dict[str, Any], depth: int) -> None:
        sid = str(r.get("session_id"))
        if sid in seen:  # a corrupt cycle of headers
            return
        seen.add(sid)
        out.append((depth, r))
        for c in sorted(children.get(sid, []), key=lambda c: str(c.get("created_at", ""))):
            walk(c, depth + 1)

    for r in roots:
        walk(r, 0)
    for r in rows:  # only rows caught in a cycle are left: shown, flat
        if str(r.get("session_id")) not in seen:
            walk(r, 0)
    return out


def fork_label(row: dict[str, Any]) -> str:
    """``fork of <parent> at e:N`` for a fork's row, else ""."""
    if row.get("reason") != "fork" or not row.get("parent_session_id"):
        return ""
    at = row.get("fork_at")
    return f"fork of {row['parent_session_id']}" + (f" at e:{at}" if isinstance(at, int) else "")
