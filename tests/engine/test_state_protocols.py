"""State tool calls round-trip through the real providers and local servers speaking the real wire
protocols (OpenAI-compatible SSE, Anthropic Messages events): the server scripts
``update_session_state``, the engine executes it, the state changes, and the tool call and its result
are in the transcript and sent back to the model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from neotask_tui.engine.events import ToolCallFinished, TurnDone
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.manager import StateManager
from neotask_tui.providers.anthropic import AnthropicProvider
from neotask_tui.providers.openai_compat import OpenAICompatProvider
from tests.doubles import Clock
from tests.engine.state_support import KEY, make_settings
from tests.protocol_servers import AnthropicServer, OpenAIServer, ProtocolServer, Reply, ScriptedToolCall

ARGS = {"field": "current_step", "value": "billing", "until_event": "checkout_paid"}


def _openai(url: str) -> Any:
    return OpenAICompatProvider(base_url=url, api_key="test-key", model="gpt-4o-mini", timeout=5.0,
                                max_retries=0, backoff_base=0.01)


def _anthropic(url: str) -> Any:
    return AnthropicProvider(base_url=url, api_key="test-key", model="claude-haiku-4-5", timeout=5.0,
                             max_retries=0, backoff_base=0.01)


def _tool_names(body: dict[str, Any]) -> set[str]:
    names = set()
    for t in body.get("tools") or []:
        names.add(t["function"]["name"] if "function" in t else t["name"])
    return names


def _sent_tool_result(body: dict[str, Any], call_id: str) -> str:
    """The tool result the engine sent back, in either protocol's shape."""
    for m in body["messages"]:
        if m.get("role") == "tool" and m.get("tool_call_id") == call_id:
            return str(m["content"])
        content = m.get("content")
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                    inner = block.get("content")
                    return inner if isinstance(inner, str) else json.dumps(inner)
    raise AssertionError(f"no tool result for {call_id} in the request")


@pytest.mark.parametrize(("server_cls", "make", "call_id"), [
    (OpenAIServer, _openai, "call_abc"),
    (AnthropicServer, _anthropic, "toolu_abc"),
], ids=["openai", "anthropic"])
async def test_update_session_state_round_trip(server_cls: type[ProtocolServer], make: Any, call_id: str,
                                              clock: Clock) -> None:
    with server_cls() as srv:
        srv.queue(
            Reply(chunks=["Let me note that."],
                  tool_calls=[ScriptedToolCall("update_session_state", ARGS, id=call_id)]),
            Reply(chunks=["Now on billing."]),
        )
        eng = Engine(make_settings(), provider=make(srv.base_url), clock=clock)  # type: ignore[attr-defined]
        try:
            out = [e async for e in eng.send("Let's move to billing.", KEY)]
            state = eng.state
            assert isinstance(state, StateManager)
            done = [e for e in out if isinstance(e, TurnDone)]
            assert done and done[0].text == "Now on billing."
            [fin] = [e for e in out if isinstance(e, ToolCallFinished)]
            assert (fin.name, fin.is_error, fin.result) == ("update_session_state", False,
                                                            "ok: current_step = 'billing'")
            # The state changed, attributed to the model.
            [entry] = state.get(KEY).active
            assert (entry.field, entry.value, entry.source, entry.until_event) == (
                "current_step", "billing", "model tool", "checkout_paid")
            # The transcript holds the call, the state change and the result.
            events = eng.events(KEY)
            call = next(e for e in events if e.type == "tool_call")
            assert call.data["call_id"] == call_id and call.data["name"] == "update_session_state"
            assert call.data["arguments"] == ARGS
            result = next(e for e in events if e.type == "tool_result")
            assert result.data["call_id"] == call_id and result.data["content"] == fin.result
            assert result.data["is_error"] is False
            state_ev = next(e for e in events if e.type == "state")
            assert call.id < state_ev.id < result.id and state_ev.data["source"] == "model tool"
        finally:
            await eng.aclose()
    first, second = srv.requests
    # The tools were offered with their JSON schema...
    assert {"update_session_state", "add_open_question", "resolve_open_question", "fire_event",
            "propose_memory"} <= _tool_names(first)
    # ...and the follow-up request carries the result and the new state block.
    assert "ok: current_step = 'billing'" in _sent_tool_result(second, call_id)
    assert "Current step: billing (until checkout_paid)." in json.dumps(second, ensure_ascii=False)
    assert "Current step" not in json.dumps(first, ensure_ascii=False)
