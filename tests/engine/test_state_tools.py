"""The model-facing state tools, executed by the real Engine in a turn (scripted provider)."""

from __future__ import annotations

from neotask_tui.engine.events import ToolCallFinished, TurnDone
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.tools import TOOL_NAMES, ToolReply
from neotask_tui.providers.base import ToolCall
from tests.doubles import scripted
from tests.engine.state_support import KEY, st


def test_tool_specs_are_valid_json_schema_objects(engine: Engine) -> None:
    specs = st(engine).tools()
    assert {s.name for s in specs} == TOOL_NAMES
    for s in specs:
        p = s.parameters
        assert p["type"] == "object" and p["additionalProperties"] is False
        assert set(p["required"]) <= set(p["properties"])
        assert all("type" in v for v in p["properties"].values())
        assert s.description


async def test_turn_with_update_session_state_tool_call(engine: Engine) -> None:
    scripted(engine).queue(
        {"text": "", "tool_calls": [{
            "id": "call_1", "name": "update_session_state",
            "arguments": {"field": "current_step", "value": "billing", "ttl": "1h"}}]},
        {"text": "", "tool_calls": [{"id": "call_2", "name": "add_open_question",
                                     "arguments": {"question": "confirm purchase email"}}]},
        "Moving on to billing.",
    )
    out = [e async for e in engine.send("Let's continue with the refund.", KEY)]
    finished = [e for e in out if isinstance(e, ToolCallFinished)]
    assert [(f.name, f.is_error) for f in finished] == [("update_session_state", False),
                                                        ("add_open_question", False)]
    assert finished[0].result == "ok: current_step = 'billing'"
    assert any(isinstance(e, TurnDone) for e in out)
    view = st(engine).get(KEY)
    assert view.value("current_step") == "billing"
    assert view.values("open_questions") == ["confirm purchase email"]
    assert all(e.source == "model tool" for e in view.active)
    types = [(e.type, e.data.get("name") or e.data.get("op") or e.data.get("role"))
             for e in engine.events(KEY)]
    assert types[1:] == [
        ("message", "user"),
        ("tool_call", "update_session_state"), ("state", "set"), ("tool_result", "update_session_state"),
        ("tool_call", "add_open_question"), ("state", "add"), ("tool_result", "add_open_question"),
        ("message", "assistant"),
    ]
    # The next call already carries the new state block.
    last_call = scripted(engine).calls[-1]
    assert any("Current step: billing" in m.content for m in last_call)
    assert scripted(engine).tools_seen[0] is not None
    offered = {t.name for t in scripted(engine).tools_seen[0] or []}
    assert offered >= TOOL_NAMES


async def test_tool_errors_are_results_not_crashes(engine: Engine) -> None:
    s = st(engine)
    cases = [
        ToolCall("a", "update_session_state", {"field": "bad field", "value": "x"}),
        ToolCall("b", "update_session_state", {"field": "x", "value": "y", "ttl": "forever"}),
        ToolCall("c", "update_session_state", {}),
        ToolCall("d", "resolve_open_question", {"question": "nope"}),
        ToolCall("e", "fire_event", {"name": "has space"}),
        ToolCall("f", "propose_memory", {"text": "", "scope": "user"}),
    ]
    for call in cases:
        res = await s.handle_tool(KEY, call)
        assert res is not None and res.text.startswith("error:") and res.is_error, (call, res)
    assert await s.handle_tool(KEY, ToolCall("z", "memory_search", {})) is None
    assert s.get(KEY).active == []


async def test_fire_event_and_done_tools(engine: Engine) -> None:
    s = st(engine)
    await s.set(KEY, "selected_entity", "Pro plan", until_event="checkout_paid")
    await s.set_goal(KEY, "buy a plan")
    assert await s.handle_tool(KEY, ToolCall("a", "fire_event", {"name": "checkout_paid"})) == ToolReply(
        "ok: event checkout_paid fired (1 entry expired)")
    assert await s.handle_tool(KEY, ToolCall("b", "fire_event", {"name": "done"})) == ToolReply(
        "ok: workflow ended (1 entry expired)")
    assert s.get(KEY).active == []
    call = ToolCall("c", "update_session_state", {"field": "current_step", "value": ""})
    res = await s.handle_tool(KEY, call)
    assert res is not None and res.text.startswith("error:") and res.is_error  # nothing to clear
    await s.add_open_question(KEY, "which region?")
    res = await s.handle_tool(KEY, ToolCall("d", "resolve_open_question", {"question": "1", "answer": "EU"}))
    assert res == ToolReply("ok: resolved 'which region?'")


async def test_add_open_question_replies_the_list_number_resolve_takes(engine: Engine) -> None:
    """The reply names the question's list number (what resolve_open_question takes), not its
    event id, and resolving by that number resolves that question, even when another question's
    event id equals the number (red team 33, finding 11)."""
    s = st(engine)
    replies = []
    for q in ("which region?", "which plan?", "which currency?", "which invoice email?"):
        res = await s.handle_tool(KEY, ToolCall("a", "add_open_question", {"question": q}))
        assert res is not None and not res.is_error
        replies.append(res.text)
    assert replies == [f"ok: open question #{n} recorded" for n in range(1, 5)]
    ids = [e.id for e in s.get(KEY).active if e.field == "open_questions"]
    clashing = [n for n in range(1, 5) if n in ids and ids[n - 1] != n]  # also another question's event id
    assert clashing, ids
    number = clashing[0]
    res = await s.handle_tool(KEY, ToolCall("b", "resolve_open_question", {"question": str(number)}))
    assert res is not None and not res.is_error
    wanted = ["which region?", "which plan?", "which currency?", "which invoice email?"][number - 1]
    assert res.text == f"ok: resolved {wanted!r}"
    assert wanted not in s.get(KEY).values("open_questions")
