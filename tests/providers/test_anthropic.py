"""Anthropic provider against a local server speaking the Messages streaming protocol."""

from __future__ import annotations

from neotask_tui.providers.anthropic import AnthropicProvider, to_anthropic
from neotask_tui.providers.base import ChatMessage, StreamEnd, ToolCall, ToolCallEvent, ToolSpec
from tests.protocol_servers import AnthropicServer, Reply, ReplyUsage, ScriptedToolCall, collect, refused_url

EPHEMERAL = {"type": "ephemeral"}
MESSAGES = [
    ChatMessage("system", "You are careful."),
    ChatMessage("user", "Summary so far: we chose Postgres.", cache=True),
    ChatMessage("user", "What did we choose?"),
]


def make(url: str, **kw: object) -> AnthropicProvider:
    opts: dict[str, object] = {"model": "claude-haiku-4-5", "api_key": "sk-ant-test", "timeout": 5.0,
                               "max_retries": 2, "backoff_base": 0.01}
    opts.update(kw)
    return AnthropicProvider(base_url=url, **opts)  # type: ignore[arg-type]


async def test_streams_text_and_maps_all_usage_fields() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply(chunks=["We chose", " Postgres."],
                        usage=ReplyUsage(input=12, output=7, cache_read=2048, cache_write=300)))
        p = make(srv.base_url)
        got = await collect(p.stream(MESSAGES, max_tokens=100))
        await p.aclose()
    assert got.error is None
    assert got.text == "We chose Postgres."
    assert isinstance(got.events[-1], StreamEnd)
    u = got.end.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (12, 7, 2048, 300)
    assert got.end.stop_reason == "stop"
    assert srv.paths == ["/v1/messages"]
    headers = srv.request_headers[0]
    assert headers.get("x-api-key") == "sk-ant-test" or headers.get("authorization") == "Bearer sk-ant-test"
    assert headers["anthropic-version"]
    body = srv.requests[0]
    assert body["stream"] is True and body["max_tokens"] == 100 and body["model"] == "claude-haiku-4-5"
    # The system prompt travels separately, both cache breakpoints are marked.
    assert body["system"] == [{"type": "text", "text": "You are careful.", "cache_control": EPHEMERAL}]
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Summary so far: we chose Postgres.", "cache_control": EPHEMERAL},
        {"type": "text", "text": "What did we choose?"},
    ]}]


async def test_prompt_caching_off_sends_no_cache_control() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply(chunks=["x"]))
        await collect(make(srv.base_url, prompt_caching=False).stream(MESSAGES))
    assert "cache_control" not in str(srv.requests[0])


async def test_tool_use_blocks_become_tool_calls_and_results_go_back_as_tool_result() -> None:
    tool = ToolSpec("search", "Search notes", {"type": "object", "properties": {"q": {"type": "string"}}})
    history = [
        ChatMessage("system", "sys"),
        ChatMessage("user", "find it"),
        ChatMessage("assistant", "Looking.", tool_calls=[ToolCall("toolu_0", "search", {"q": "db"})]),
        ChatMessage("tool", "found: postgres", tool_call_id="toolu_0", name="search"),
    ]
    with AnthropicServer() as srv:
        srv.queue(Reply(chunks=["Let me search."],
                        tool_calls=[ScriptedToolCall("search", {"q": "deploy notes"}, id="toolu_7", pieces=5)],
                        usage=ReplyUsage(input=40, output=20)))
        got = await collect(make(srv.base_url).stream(history, tools=[tool]))
    assert got.text == "Let me search."
    calls = [e.call for e in got.events if isinstance(e, ToolCallEvent)]
    assert calls == [ToolCall("toolu_7", "search", {"q": "deploy notes"})]
    assert got.end.stop_reason == "tool_calls"
    body = srv.requests[0]
    assert body["tools"] == [{"name": "search", "description": "Search notes", "input_schema": tool.parameters}]
    assert body["messages"][1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_0", "name": "search", "input": {"q": "db"}},
    ]}
    assert body["messages"][2]["role"] == "user"
    assert body["messages"][2]["content"][0] == {
        "type": "tool_result", "tool_use_id": "toolu_0", "content": "found: postgres"}


def test_consecutive_tool_results_merge_into_one_user_message() -> None:
    _, msgs = to_anthropic([
        ChatMessage("user", "go"),
        ChatMessage("assistant", "", tool_calls=[ToolCall("a", "f", {}), ToolCall("b", "f", {})]),
        ChatMessage("tool", "1", tool_call_id="a"),
        ChatMessage("tool", "2", tool_call_id="b"),
    ], caching=False)
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in msgs[2]["content"]] == ["a", "b"]


async def test_401_is_auth_with_key_hint() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply.status(401, message="invalid x-api-key"))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind == "auth"
    assert "check your API key (ANTHROPIC_API_KEY)" in str(got.error)
    assert len(srv.requests) == 1


async def test_missing_key_fails_without_a_request() -> None:
    got = await collect(AnthropicProvider(api_key=None, base_url=refused_url("")).stream(MESSAGES))
    assert got.error.kind == "auth" and "ANTHROPIC_API_KEY" in str(got.error)


async def test_429_honours_retry_after_then_succeeds() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply.status(429, headers={"retry-after": "1"}), Reply(chunks=["ok"]))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.text == "ok" and got.error is None
    assert len(srv.requests) == 2


async def test_429_retries_are_bounded() -> None:
    with AnthropicServer() as srv:
        srv.queue(*[Reply.status(429, headers={"retry-after-ms": "10"}) for _ in range(5)])
        got = await collect(make(srv.base_url, max_retries=3).stream(MESSAGES))
    assert got.error.kind == "rate_limit" and got.error.retry_after is not None
    assert len(srv.requests) == 4


async def test_500_and_529_overloaded_are_retried_bounded() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply.status(500), Reply.status(529), Reply.status(500))
        got = await collect(make(srv.base_url, max_retries=2).stream(MESSAGES))
    assert got.error.kind == "server"
    assert len(srv.requests) == 3


async def test_connection_refused() -> None:
    got = await collect(make(refused_url("")).stream(MESSAGES))
    assert got.error.kind == "connection" and "connection refused" in str(got.error)


async def test_timeout_when_server_never_answers() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply(fault="hang"), Reply(fault="hang"))
        got = await collect(make(srv.base_url, timeout=0.3, max_retries=1).stream(MESSAGES))
    assert got.error.kind == "timeout"
    assert len(srv.requests) == 2


async def test_malformed_event_after_text_is_protocol_error() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply(chunks=["Par", "tial"], fault="malformed"), Reply(chunks=["never"]))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind == "protocol"
    assert got.text == "Partial"
    assert len(srv.requests) == 1


async def test_stream_cut_mid_reply_keeps_partial_text() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply(chunks=["It was ", "Postg"], fault="cut"))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind in ("connection", "protocol")
    assert got.text == "It was Postg"
    assert got.end is None
    assert len(srv.requests) == 1


async def test_overloaded_error_event_mid_stream() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply(chunks=["Start"], fault="error_event"))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind == "server"
    assert got.text == "Start"
    assert len(srv.requests) == 1


async def test_prompt_too_long_is_context_overflow() -> None:
    with AnthropicServer() as srv:
        srv.queue(Reply.status(400, message="prompt is too long: 210000 tokens > 200000 maximum"))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind == "context_overflow"


def test_at_most_four_cache_breakpoints_are_sent() -> None:
    history = [ChatMessage("system", "sys")] + [
        ChatMessage("user" if i % 2 == 0 else "assistant", f"m{i}", cache=True) for i in range(7)]
    body = make("http://127.0.0.1:1").request_body(history)
    marks = str(body).count("cache_control")
    assert marks == 4
    assert "cache_control" in body["system"][0]
    assert "cache_control" in body["messages"][-1]["content"][-1]
