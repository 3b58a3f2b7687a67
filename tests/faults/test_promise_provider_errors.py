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
from neotask_tui.engine.events import TurnFailed
from neotask_tui.engine.facade import Engine
from neotask_tui.providers._retry import parse_tool_arguments
from neotask_tui.providers.base import ProviderError
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


def test_arguments_nested_too_deeply_are_a_protocol_error_not_a_crash() -> None:
    with pytest.raises(ProviderError) as e:
        parse_tool_arguments("update_session_state", '{"field":' + "[" * 100_000 + "]" * 100_000 + "}")
    assert e.value.kind == "protocol" and "nested too deeply" in str(e.value)


async def test_a_deeply_nested_tool_call_ends_the_turn_with_one_line(data_dir: Path) -> None:
    deep = '{"field":' + "[" * 100_000 + "]" * 100_000 + "}"
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=[], tool_calls=[ScriptedToolCall("update_session_state", deep, pieces=1)]))
        failed = await _failed_turn(_provider("openai", srv.base_url))
    assert failed.error_kind == "protocol" and "\n" not in failed.error
