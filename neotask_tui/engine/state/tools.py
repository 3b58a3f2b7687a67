"""Model-facing tools for session state and memory proposals.

``update_session_state``, ``add_open_question``, ``resolve_open_question``, ``fire_event`` and
``propose_memory``. Results are short, human-readable texts (:class:`ToolReply`); a bad call
returns an ``error: ...`` result flagged as an error (never raises) so the model can correct
itself. The engine records the call and the result in the transcript; each state change is also
its own ``state`` event with source ``"model tool"``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Protocol

from neotask_tui.engine.ports import Sessions
from neotask_tui.engine.state.inbox import LONG_TERM_SCOPES, Candidate, InboxEntry, InboxError
from neotask_tui.engine.state.model import SCOPES, ScopeContext, StateEntry, StateError
from neotask_tui.providers.base import ToolCall, ToolSpec
from neotask_tui.text.secrets import has_secrets

SOURCE = "model tool"


@dataclass(frozen=True, slots=True)
class ToolReply:
    """A state tool's result.

    Attributes:
        text: What the model is told (``ok: …`` or ``error: …``).
        is_error: The call did nothing: bad arguments or a refused change (stored as the tool
            result's ``is_error``, so the model is not told it succeeded).
    """

    text: str
    is_error: bool = False
TOOL_NAMES = frozenset(
    {"update_session_state", "add_open_question", "resolve_open_question", "fire_event", "propose_memory"}
)


class StateOps(Protocol):
    """What the tools drive: the state operations of
    :class:`~neotask_tui.engine.state.manager.StateManager` (which offers these tools)."""

    @property
    def engine(self) -> Sessions: ...

    def scope_context(self, key: str) -> ScopeContext: ...

    async def set(
        self, key: str, field: str, value: Any, *, source: str = ..., ttl: str | None = ...,
        until_event: str | None = ..., scope: str | None = ..., workflow: bool | None = ...,
    ) -> StateEntry: ...

    async def clear(
        self, key: str, field: str, *, item: int | None = ..., source: str = ..., reason: str | None = ...,
    ) -> int: ...

    async def add_open_question(self, key: str, text: str, *, source: str = ...) -> StateEntry: ...

    def open_questions(self, key: str) -> list[StateEntry]: ...

    async def resolve_open_question(
        self, key: str, ref: str | int, *, answer: str | None = ..., source: str = ..., by_number: bool = ...,
    ) -> StateEntry: ...

    async def fire_event(self, key: str, name: str, *, source: str = ...) -> int: ...

    async def done(self, key: str, *, source: str = ...) -> int: ...

    async def inbox_add(self, agent_id: str, candidate: Candidate) -> InboxEntry | None: ...


def tool_specs() -> list[ToolSpec]:
    """The tool specs (JSON schema) offered to providers with tool calling."""
    return [
        ToolSpec(
            name="update_session_state",
            description=(
                "Set or clear one field of the current session's structured state (temporary, "
                "expires with the session/workflow). Fields: current_goal, current_step, "
                "selected_entity, tool_results_summary, blocked_by, temporary_preferences (adds an "
                "item), expires_at (session expiry: ISO time, '7d' or 'EVENT + 7d'), or a custom key. "
                "Pass an empty value to clear. Never put secrets here."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "field": {"type": "string", "description": "Field name, e.g. current_step."},
                    "value": {"type": "string", "description": "New value; empty string clears the field."},
                    "ttl": {"type": "string", "description": "Optional lifetime, e.g. 30m, 2h, 7d."},
                    "until_event": {"type": "string", "description": "Optional event that ends it."},
                    "scope": {"type": "string", "enum": list(SCOPES[:5]),
                              "description": "session (default), chat, agent, workspace or project."},
                    "goal_resolved": {"type": "boolean",
                                      "description": "True when the goal is achieved (ends the workflow)."},
                },
                "required": ["field"],
                "additionalProperties": False,
            },
        ),
        ToolSpec(
            name="add_open_question",
            description="Record a question that must be answered before the task can continue.",
            parameters={
                "type": "object",
                "properties": {"question": {"type": "string"}},
                "required": ["question"],
                "additionalProperties": False,
            },
        ),
        ToolSpec(
            name="resolve_open_question",
            description="Mark an open question answered (by its list number or a fragment of its text).",
            parameters={
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "Number (1-based) or text fragment."},
                    "answer": {"type": "string", "description": "Short answer, optional."},
                },
                "required": ["question"],
                "additionalProperties": False,
            },
        ),
        ToolSpec(
            name="fire_event",
            description=(
                "Signal that a workflow event happened (e.g. checkout_paid, ticket_closed); session "
                "entries bound to it expire. Use 'done' when the whole task is finished."
            ),
            parameters={
                "type": "object",
                "properties": {"name": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_.-]{0,63}$",
                                        "description": "Event name: a letter, then letters, digits, _ . -"}},
                "required": ["name"],
                "additionalProperties": False,
            },
        ),
        ToolSpec(
            name="propose_memory",
            description=(
                "Propose a lasting fact or preference for long-term memory. It is NOT saved: the user "
                "reviews it in the inbox. Only for things the user stated as lasting; never secrets."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "scope": {"type": "string", "enum": list(LONG_TERM_SCOPES)},
                    "reason": {"type": "string", "description": "Why this will be useful later."},
                },
                "required": ["text", "scope"],
                "additionalProperties": False,
            },
        ),
    ]


@functools.cache
def _schemas() -> dict[str, dict[str, Any]]:
    return {t.name: t.parameters for t in tool_specs()}


def check_arguments(name: str, args: dict[str, Any]) -> str | None:
    """Why ``args`` break the tool's declared schema (required, type, enum, pattern), or ``None``.

    Arguments the schema does not declare are ignored (never stored). A refused value is not
    repeated when it looks like a credential.
    """
    schema = _schemas().get(name) or {}
    props: dict[str, Any] = schema.get("properties") or {}
    for req in schema.get("required") or ():
        if args.get(req) is None:
            return f"missing argument {req!r}"
    for arg, spec in props.items():
        v = args.get(arg)
        if v is None:
            continue
        want = spec.get("type")
        if want == "boolean":
            if not isinstance(v, bool):
                return f"{arg} must be true or false"
            continue
        if want == "string" and not isinstance(v, str | int | float):
            return f"{arg} must be a string"
        sv = str(v)
        shown = "(a value that looks like a credential)" if has_secrets(sv) else repr(sv[:64])
        if "enum" in spec and sv not in spec["enum"]:
            return f"{arg} {shown} must be one of {', '.join(map(str, spec['enum']))}"
        pattern = spec.get("pattern")
        if pattern and not re.search(pattern, sv):
            return f"{arg} {shown} does not match the pattern {pattern}"
    return None


def _n(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def _str(args: dict[str, Any], name: str) -> str | None:
    v = args.get(name)
    if v is None:
        return None
    return v if isinstance(v, str) else str(v)


async def handle_tool(mgr: StateOps, key: str, call: ToolCall) -> ToolReply | None:
    """Run ``call`` if it is a state tool.

    Returns:
        The result (an ``error: ...`` one, flagged, on bad arguments or a refused change), or
        ``None`` when the tool is not ours.
    """
    if call.name not in TOOL_NAMES:
        return None
    args = call.arguments if isinstance(call.arguments, dict) else {}
    bad = check_arguments(call.name, args)
    if bad is not None:
        return ToolReply(f"error: {bad}", is_error=True)
    try:
        return ToolReply(await _dispatch(mgr, key, call.name, args))
    except (StateError, InboxError, ValueError) as e:
        return ToolReply(f"error: {e}", is_error=True)


async def _dispatch(mgr: StateOps, key: str, name: str, args: dict[str, Any]) -> str:
    if name == "update_session_state":
        field = (_str(args, "field") or "").strip()
        out: list[str] = []
        if field:
            value = _str(args, "value")
            if field == "current_goal" and args.get("goal_resolved") and not value:
                pass  # resolving the goal below is the whole request
            elif not value:
                n = await mgr.clear(key, field, source=SOURCE)
                out.append(f"cleared {field} ({n})")
            else:
                e = await mgr.set(key, field, value, source=SOURCE, ttl=_str(args, "ttl"),
                                  until_event=_str(args, "until_event"), scope=_str(args, "scope"))
                out.append(f"{field} = {e.value!r}" + (f" (scope {e.scope})" if e.scope != "session" else ""))
        if args.get("goal_resolved"):
            n = await mgr.done(key, source=SOURCE)
            out.append(f"goal resolved; workflow ended ({_n(n)} expired)")
        if not out:
            raise StateError("give a field (and a value to set, empty to clear)")
        return "ok: " + "; ".join(out)
    if name == "add_open_question":
        e = await mgr.add_open_question(key, _str(args, "question") or "", source=SOURCE)
        # the number resolve_open_question takes: its place in the list, not the entry's event id
        number = next((n for n, q in enumerate(mgr.open_questions(key), 1) if q.id == e.id), None)
        return f"ok: open question #{number} recorded" if number else "ok: open question recorded"
    if name == "resolve_open_question":
        e = await mgr.resolve_open_question(key, _str(args, "question") or "", answer=_str(args, "answer"),
                                            source=SOURCE, by_number=True)
        return f"ok: resolved {e.value!r}"
    if name == "fire_event":
        ev = (_str(args, "name") or "").strip()
        if ev in ("done", "workflow_done"):
            n = await mgr.done(key, source=SOURCE)
            return f"ok: workflow ended ({_n(n)} expired)"
        n = await mgr.fire_event(key, ev, source=SOURCE)
        return f"ok: event {ev} fired ({_n(n)} expired)"
    # propose_memory
    ctx = mgr.scope_context(key)
    scope = _str(args, "scope") or "user"
    if scope not in LONG_TERM_SCOPES:
        raise StateError(f"scope must be one of {', '.join(LONG_TERM_SCOPES)}")
    text = (_str(args, "text") or "").strip()
    if not text:
        raise StateError("text is empty")
    events = mgr.engine.events(key)
    last_user = next((e.id for e in reversed(events) if e.type == "message" and e.role == "user"), None)
    cand = Candidate(
        text=text, scope=scope, reason=_str(args, "reason") or "proposed by the model", origin="model",
        source_ids=[last_user] if last_user is not None else [], session_id=ctx.session_id, key=key,
        scope_ref=ctx.ref(scope), created_at=mgr.engine.now().isoformat(),
    )
    entry = await mgr.inbox_add(ctx.agent, cand)
    if entry is None:
        return "ok: not proposed (already in the inbox or previously rejected by the user)"
    return f"ok: proposed as inbox #{entry.n}; the user decides whether it is saved"


__all__ = ["TOOL_NAMES", "StateOps", "ToolReply", "check_arguments", "handle_tool", "tool_specs"]
