"""A remote provider's error never shows the configured API key, and a model's tool-call arguments
never crash the turn, whatever the server sends back (red team, session 7).

The real OpenAI-compatible and Anthropic providers talk to the local protocol servers; the server
echoes the Authorization header in its error body, as some gateways do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neotask_tui.config import load_settings
from neotask_tui.engine.events import ToolCallFinished, TurnDone, TurnFailed
from neotask_tui.engine.facade import Engine
from neotask_tui.providers._retry import tool_call
from tests.faults.helpers import KEY
from tests.protocol_servers import AnthropicServer, OpenAIServer, ProtocolServer, Reply, ScriptedToolCall, refused_url

pytestmark = pytest.mark.promise("secrets")

API_KEY = "mylocalkey123abc"  # a local gateway's key: no known token shape


def _provider(kind: str, url: str, key: str = API_KEY) -> Any:
    if kind == "openai":
        from neotask_tui.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(base_url=url, api_key=key, model="gpt-4o", timeout=2, max_retries=0,
                                    backoff_base=0.01)
    from neotask_tui.providers.anthropic import AnthropicProvider

    return AnthropicProvider(base_url=url, api_key=key, model="claude-3-5-haiku-latest", timeout=2, max_retries=0,
                             backoff_base=0.01)


def _server(kind: str) -> ProtocolServer:
    return OpenAIServer() if kind == "openai" else AnthropicServer()


async def _failed_turn(provider: Any) -> TurnFailed:
    engine = Engine(load_settings(), provider=provider)
    try:
        events = [e async for e in engine.send("hi there", KEY)]
    finally:
        await engine.aclose()
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert failed, events
    return failed[0]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("status", [400, 404, 429, 500])
async def test_an_echoed_api_key_is_masked_in_the_error(data_dir: Path, kind: str, status: int) -> None:
    with _server(kind) as srv:
        srv.queue(Reply.status(status, message=f"Incorrect API key provided: Bearer {API_KEY}"))
        failed = await _failed_turn(_provider(kind, srv.base_url))  # type: ignore[attr-defined]
    assert API_KEY not in failed.error and "[REDACTED" in failed.error, failed.error
    for p in data_dir.rglob("*"):
        if p.is_file():
            assert API_KEY.encode() not in p.read_bytes(), p


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_url_credentials_are_masked_when_the_server_is_unreachable(data_dir: Path, kind: str) -> None:
    url = refused_url().replace("http://", "http://u:zzsecretkeyvalue123@")
    failed = await _failed_turn(_provider(kind, url))
    assert "zzsecretkeyvalue123" not in failed.error and failed.error_kind == "connection", failed.error


DEEP = '{"field":' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize(("raw", "why"), [(DEEP, "nested too deeply"), ("not json{", "not valid JSON"),
                                          ("null", "not a JSON object"), ("[1, 2]", "not a JSON object")])
def test_unreadable_arguments_make_a_call_marked_with_why(raw: str, why: str) -> None:
    call = tool_call("c1", "update_session_state", raw)
    assert call.arguments == {} and why in call.error


def test_readable_arguments_make_a_plain_call() -> None:
    call = tool_call("c1", "update_session_state", '{"field": "goal", "value": "x"}')
    assert call.arguments == {"field": "goal", "value": "x"} and call.error == ""


@pytest.mark.parametrize(("raw", "why"), [(DEEP, "nested too deeply"), ("not json{", "not valid JSON")])
async def test_a_tool_call_with_bad_arguments_gets_an_error_result_and_the_turn_goes_on(
        data_dir: Path, raw: str, why: str) -> None:
    """README: "A tool call with bad arguments gets an error result, never a crash" (red team,
    session 7: 100,000 nested arrays crashed with a RecursionError traceback; invalid JSON failed
    the whole turn)."""
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=[], tool_calls=[ScriptedToolCall("update_session_state", raw, pieces=1)]),
                  Reply(chunks=["sorry, done"]))
        engine = Engine(load_settings(), provider=_provider("openai", srv.base_url))  # type: ignore[attr-defined]
        try:
            events = [e async for e in engine.send("do tools", KEY)]
            results = [e for e in engine.events(KEY) if e.type == "tool_result"]
        finally:
            await engine.aclose()
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished and finished[0].is_error and why in finished[0].result
    assert any(isinstance(e, TurnDone) and e.text == "sorry, done" for e in events), events
    assert results and results[0].data["is_error"] is True
