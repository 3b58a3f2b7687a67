"""OpenAI-compatible provider against a local server speaking the chat-completions SSE protocol."""

from __future__ import annotations

import pytest

from neotask_tui.providers._sdk import without_keys
from neotask_tui.providers.base import ChatMessage, ProviderError, StreamEnd, ToolCall, ToolCallEvent, ToolSpec
from neotask_tui.providers.openai_compat import OpenAICompatProvider
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage, ScriptedToolCall, collect, refused_url

MESSAGES = [ChatMessage("system", "Be brief."), ChatMessage("user", "Say hello.")]


def make(server_url: str, **kw: object) -> OpenAICompatProvider:
    opts: dict[str, object] = {"model": "gpt-4o", "api_key": "sk-test", "timeout": 5.0, "max_retries": 2,
                               "backoff_base": 0.01}
    opts.update(kw)
    return OpenAICompatProvider(base_url=server_url, **opts)  # type: ignore[arg-type]


async def test_streams_text_and_maps_usage_with_cached_tokens() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["Hel", "lo", " there."], usage=ReplyUsage(input=30, output=3, cache_read=1024)))
        p = make(srv.base_url)
        got = await collect(p.stream(MESSAGES, max_tokens=64))
        await p.aclose()
    assert got.error is None
    assert got.text == "Hello there."
    assert isinstance(got.events[-1], StreamEnd)
    usage = got.end.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        30, 3, 1024, 0)
    assert usage.prompt_tokens == 1054
    assert got.end.stop_reason == "stop"
    body = srv.requests[0]
    assert srv.paths == ["/v1/chat/completions"]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 64
    assert body["model"] == "gpt-4o"
    assert body["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
    assert srv.request_headers[0]["authorization"] == "Bearer sk-test"


async def test_tool_call_deltas_accumulate_into_one_event() -> None:
    tool = ToolSpec("get_weather", "Weather for a city", {"type": "object", "properties": {"city": {"type": "string"}}})
    history = [
        *MESSAGES,
        ChatMessage("assistant", "", tool_calls=[ToolCall("call_0", "get_weather", {"city": "Oslo"})]),
        ChatMessage("tool", "rain", tool_call_id="call_0", name="get_weather"),
    ]
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["Checking."], tool_calls=[ScriptedToolCall("get_weather", {"city": "Paris, FR"},
                                                                            id="call_9", pieces=4)],
                        usage=ReplyUsage(input=50, output=12)))
        p = make(srv.base_url)
        got = await collect(p.stream(history, tools=[tool]))
    calls = [e.call for e in got.events if isinstance(e, ToolCallEvent)]
    assert calls == [ToolCall("call_9", "get_weather", {"city": "Paris, FR"})]
    assert got.end.stop_reason == "tool_calls"
    body = srv.requests[0]
    assert body["tools"][0]["function"]["name"] == "get_weather"
    assert body["messages"][2]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_0", "content": "rain"}


async def test_invalid_tool_arguments_make_a_call_marked_with_why() -> None:
    """README: a tool call with bad arguments gets an error result (the turn answers the marked call
    with one), never a crash; the stream itself is fine and is not retried."""
    with OpenAIServer() as srv:
        srv.queue(Reply(tool_calls=[ScriptedToolCall("f", '{"a": ', pieces=2)]))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error is None
    calls = [e.call for e in got.events if type(e).__name__ == "ToolCallEvent"]
    assert [(c.name, c.arguments) for c in calls] == [("f", {})] and "not valid JSON" in calls[0].error
    assert len(srv.requests) == 1


async def test_401_is_auth_with_key_hint_and_not_retried() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply.status(401, message="Incorrect API key provided"))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind == "auth"
    assert "check your API key (OPENAI_API_KEY)" in str(got.error)
    assert len(srv.requests) == 1


async def test_429_honours_retry_after_then_succeeds() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply.status(429, headers={"Retry-After": "1"}, message="Rate limit reached"),
                  Reply(chunks=["ok"], usage=ReplyUsage(input=5, output=1)))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error is None and got.text == "ok"
    assert len(srv.requests) == 2


async def test_429_retries_are_bounded_and_report_retry_after() -> None:
    with OpenAIServer() as srv:
        srv.queue(*[Reply.status(429, headers={"retry-after-ms": "20"}) for _ in range(5)])
        got = await collect(make(srv.base_url, max_retries=2).stream(MESSAGES))
    assert got.error.kind == "rate_limit"
    assert got.error.retry_after == pytest.approx(0.02)
    assert got.error.retryable
    assert len(srv.requests) == 3  # first try + 2 retries


async def test_429_insufficient_quota_is_not_retried() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply.status(429, code_name="insufficient_quota", message="You exceeded your quota"))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind == "rate_limit" and not got.error.retryable
    assert len(srv.requests) == 1


async def test_500_is_retried_then_succeeds() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply.status(500, message="boom"), Reply(chunks=["fine"]))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.text == "fine" and got.error is None
    assert len(srv.requests) == 2


async def test_500_retries_are_bounded() -> None:
    with OpenAIServer() as srv:
        srv.queue(*[Reply.status(500) for _ in range(4)])
        got = await collect(make(srv.base_url, max_retries=1).stream(MESSAGES))
    assert got.error.kind == "server" and got.error.retryable
    assert len(srv.requests) == 2


async def test_connection_refused() -> None:
    got = await collect(make(refused_url()).stream(MESSAGES))
    assert got.error.kind == "connection"
    assert "connection refused" in str(got.error)
    assert got.events == []


async def test_server_that_never_answers_times_out_with_bounded_retries() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(fault="hang"), Reply(fault="hang"))
        got = await collect(make(srv.base_url, timeout=0.3, max_retries=1).stream(MESSAGES))
    assert got.error.kind == "timeout"
    assert len(srv.requests) == 2


async def test_stall_mid_reply_times_out_keeping_partial_text_without_retry() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["partial ", "answer"], fault="stall"), Reply(chunks=["never"]))
        got = await collect(make(srv.base_url, timeout=0.3).stream(MESSAGES))
    assert got.error.kind == "timeout"
    assert got.text == "partial answer"
    assert len(srv.requests) == 1


async def test_malformed_chunk_is_protocol_error_after_partial_text() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["Half a "], fault="malformed"), Reply(chunks=["never"]))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind == "protocol"
    assert got.text == "Half a "
    assert len(srv.requests) == 1  # never retried once text was streamed


async def test_malformed_first_chunk_is_reported_retryable() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(fault="malformed"), Reply(chunks=["recovered"]))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    # A protocol error before any text is not retried automatically (could be a misconfigured
    # server), but it is reported as retryable for the user.
    assert got.error is not None and got.error.kind == "protocol" and got.error.retryable
    assert len(srv.requests) == 1


async def test_stream_cut_mid_reply_keeps_partial_text() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["The answer is", " forty"], fault="cut"))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind in ("connection", "protocol")
    assert got.text == "The answer is forty"
    assert not any(isinstance(e, StreamEnd) for e in got.events)
    assert len(srv.requests) == 1


async def test_error_event_mid_stream_is_server_error_with_partial_text() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["Some"], fault="error_event"))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind == "server"
    assert got.text == "Some"


async def test_context_length_error_is_context_overflow() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply.status(400, code_name="context_length_exceeded",
                               message="This model's maximum context length is 128000 tokens."))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error.kind == "context_overflow"
    assert len(srv.requests) == 1


async def test_unknown_model_404_is_model_error() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply.status(404, code_name="model_not_found", message="The model `nope` does not exist"))
        got = await collect(make(srv.base_url, model="nope").stream(MESSAGES))
    assert got.error.kind == "model" and "nope" in str(got.error)


async def test_server_without_usage_support_ends_with_no_usage() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["hi"], usage=None))
        got = await collect(make(srv.base_url).stream(MESSAGES))
    assert got.error is None and got.end.usage is None


async def test_official_api_without_key_fails_before_any_request() -> None:
    p = OpenAICompatProvider(model="gpt-4o", api_key=None)
    got = await collect(p.stream(MESSAGES))
    assert got.error.kind == "auth"
    assert "check your API key (OPENAI_API_KEY)" in str(got.error)


async def test_local_server_needs_no_key_and_consumer_may_stop_early() -> None:
    with OpenAIServer() as srv:
        # words: the placeholder key is masked too, and a word waits for its end (the token it may sit in)
        srv.queue(Reply(chunks=["a ", "b ", "c"]), Reply(chunks=["again"]))
        p = make(srv.base_url, api_key=None)
        stream = p.stream(MESSAGES)
        first = await anext(stream)
        await stream.aclose()  # type: ignore[attr-defined]
        again = await collect(p.stream(MESSAGES))
        await p.aclose()
    assert getattr(first, "text", None) == "a "
    assert again.text == "again"
    assert srv.request_headers[0]["authorization"] == "Bearer not-needed"


def test_official_api_gets_max_completion_tokens_others_max_tokens() -> None:
    official = OpenAICompatProvider(model="o3-mini", api_key="k").request_body(MESSAGES, max_tokens=99)
    assert official["max_completion_tokens"] == 99 and "max_tokens" not in official
    other = make("http://127.0.0.1:1/v1").request_body(MESSAGES)
    assert other["max_tokens"] == 512 and "max_completion_tokens" not in other


@pytest.mark.parametrize("how", ["cancel", "aclose"])
async def test_stopping_a_reply_closes_the_http_stream(how: str) -> None:
    """Esc cancels the turn's task (the REPL's Ctrl+C too); a consumer may also just close the
    stream. Either way the connection is closed, so the server stops generating."""
    import asyncio

    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["a", "b"], fault="endless"))
        p = make(srv.base_url)
        stream = p.stream(MESSAGES)
        if how == "cancel":
            seen = asyncio.Event()

            async def consume() -> None:
                async for _ in stream:
                    seen.set()

            task = asyncio.ensure_future(consume())
            await seen.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        else:
            await anext(stream)
            await stream.aclose()  # type: ignore[attr-defined]
        gone = await asyncio.to_thread(srv.client_gone.wait, 30)
        await p.aclose()
    assert gone


ODD_KEY = "myco-internal-key-" + "ZYXW98765"  # a key in no known format: only the configured value can tell


async def test_a_reply_echoing_the_configured_key_never_carries_it() -> None:
    # Red team 25, F2: an endpoint that echoes the key it got put it on screen, in the transcript and the index.
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["Your key is myco-inter", "nal-key-ZYX", "W98765, ok? ", ODD_KEY, " done"],
                        tool_calls=[ScriptedToolCall("f", {"token": ODD_KEY, "n": 1})]))
        p = make(srv.base_url, api_key=ODD_KEY)
        got = await collect(p.stream(MESSAGES, tools=[ToolSpec("f", "x", {"type": "object"})]))
        await p.aclose()
    assert got.error is None
    assert ODD_KEY not in got.text
    assert got.text == "Your key is [REDACTED:api_key], ok? [REDACTED:api_key] done"
    calls = [e.call for e in got.events if isinstance(e, ToolCallEvent)]
    assert calls and calls[0].arguments == {"token": "[REDACTED:api_key]", "n": 1}


async def test_text_that_only_starts_like_the_key_is_kept() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["myco-", "internal", " is our prefix"]))
        p = make(srv.base_url, api_key=ODD_KEY)
        got = await collect(p.stream(MESSAGES))
        await p.aclose()
    assert got.text == "myco-internal is our prefix"


@pytest.mark.parametrize("echo", [
    "myco-internal-\nkey-ZYXW98765",  # a line break
    "myco-inter\u00adnal-key-ZYXW98765",  # a soft hyphen
    "myco-internal-key-\u200bZYXW\u2060987\ufeff65",  # zero-width characters
    "ＭＹＣＯ－ＩＮＴＥＲＮＡＬ－ＫＥＹ－ＺＹＸＷ９８７６５",  # full-width
    "MYCO-INTERNAL-KEY-ZYXW98765", "myco\u2010internal\u2011key-zyxw98765",  # another case, hyphen look-alikes
    # red team 34, F2: compatibility forms NFKC reads as ASCII, and small capitals
    "\U0001d426\U0001d432\U0001d41c\U0001d428-\U0001d422\U0001d427\U0001d42d\U0001d41e\U0001d42b\U0001d427"
    "\U0001d41a\U0001d425-\U0001d424\U0001d41e\U0001d432-\U0001d419\U0001d418\U0001d417\U0001d416"
    "\U0001d7d7\U0001d7d6\U0001d7d5\U0001d7d4\U0001d7d3",  # mathematical bold
    "\u24dc\u24e8\u24d2\u24de-\u24d8\u24dd\u24e3\u24d4\u24e1\u24dd\u24d0\u24db-\u24da\u24d4\u24e8-"
    "\u24cf\u24ce\u24cd\u24cc\u2468\u2467\u2466\u2465\u2464",  # circled
    "\u1d0d\u028f\u1d04\u1d0f-\u026a\u0274\u1d1b\u1d07\u0280\u0274\u1d00\u029f-\u1d0b\u1d07\u028f-"
    "\u1d22\u028fx\u1d2198765",  # small capitals
])
async def test_a_key_echoed_changed_is_masked_too(echo: str) -> None:
    # Red team 26, F4: the key came back with invisible characters, a line break, full-width letters or in
    # another case, and was printed, stored and indexed.
    with OpenAIServer() as srv:
        half = len(echo) // 2
        srv.queue(Reply(chunks=["key: ", echo[:half], echo[half:], " end"],
                        tool_calls=[ScriptedToolCall("f", {"note": echo})]))
        p = make(srv.base_url, api_key=ODD_KEY)
        got = await collect(p.stream(MESSAGES, tools=[ToolSpec("f", "x", {"type": "object"})]))
        await p.aclose()
    assert got.text == "key: [REDACTED:api_key] end"
    calls = [e.call for e in got.events if isinstance(e, ToolCallEvent)]
    assert calls and calls[0].arguments == {"note": "[REDACTED:api_key]"}


@pytest.mark.parametrize(("key", "echo"), [
    ("sk-proj-" + "TESTKEYabcdef1234567890XYZ", "TESTKEYabcdef1234567890XYZ"),
    ("sk-proj-" + "TESTKEYabcdef1234567890XYZ", "proj-TESTKEYabcdef1234567890XYZ"),
    ("sk-ant-api03-" + "AbCdEfGhIjKlMnOp-QrStUvWxYz_01234", "AbCdEfGhIjKlMnOp-QrStUvWxYz_01234"),
])
async def test_a_key_echoed_without_its_prefix_is_masked_too(key: str, echo: str) -> None:
    # Red team 27, F5: the key's secret part, sent back without "sk-proj-", was printed, stored and indexed.
    with OpenAIServer() as srv:
        half = len(echo) // 2
        srv.queue(Reply(chunks=["key: ", echo[:half], echo[half:], " end"],
                        tool_calls=[ScriptedToolCall("f", {"note": echo.lower()})]))
        p = make(srv.base_url, api_key=key)
        got = await collect(p.stream(MESSAGES, tools=[ToolSpec("f", "x", {"type": "object"})]))
        await p.aclose()
    assert "[REDACTED:api_key] end" in got.text and echo[-12:] not in got.text, got.text
    calls = [e.call for e in got.events if isinstance(e, ToolCallEvent)]
    assert calls and "[REDACTED:api_key]" in calls[0].arguments["note"], calls
    assert echo[-12:].lower() not in calls[0].arguments["note"]


async def test_a_short_key_body_or_ordinary_text_is_not_masked() -> None:
    # the body alone is masked only when it is long: "sk-short" has none, and "proj" in a reply stays
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["the proj folder and sk-short notes"]))
        p = make(srv.base_url, api_key="sk-proj-" + "TESTKEYabcdef1234567890XYZ")
        got = await collect(p.stream(MESSAGES))
        await p.aclose()
    assert got.text == "the proj folder and sk-short notes"


@pytest.mark.parametrize("echo", [
    "sk-proj-T\u0415STKEYabcdef1234567890XYZ",  # a Cyrillic look-alike letter
    "sk-proj-TEST-KEY-abcdef-1234-5678-90XYZ",  # hyphens added
    "KEYabcdef1234567890XYZ",  # its last characters
    "TKEYabcdef12345678",  # 18 from its middle
    '"sk-proj-TESTKEY" + "abcdef1234567890XYZ"',  # split in two string literals
])
async def test_part_of_the_key_or_the_key_with_look_alikes_is_masked(echo: str) -> None:
    # Red team 28 F1: these came back printed and stored.
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["key: ", echo[:9], echo[9:], " end"],
                        tool_calls=[ScriptedToolCall("f", {"note": echo})]))
        p = make(srv.base_url, api_key="sk-proj-" + "TESTKEYabcdef1234567890XYZ")
        got = await collect(p.stream(MESSAGES, tools=[ToolSpec("f", "x", {"type": "object"})]))
        await p.aclose()
    assert "[REDACTED:api_key]" in got.text and "1234567" not in got.text and got.text.endswith(" end"), got.text
    calls = [e.call for e in got.events if isinstance(e, ToolCallEvent)]
    assert calls and "1234567" not in calls[0].arguments["note"], calls


async def test_an_error_body_with_part_of_the_key_is_masked() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply.status(400, message="bad key ...KEYabcdef1234567890XYZ"))
        p = make(srv.base_url, api_key="sk-proj-" + "TESTKEYabcdef1234567890XYZ")
        got = await collect(p.stream(MESSAGES))
        await p.aclose()
    assert isinstance(got.error, ProviderError), got
    assert "1234567890" not in str(got.error) and "[REDACTED:api_key]" in str(got.error)


def test_the_runs_of_every_key_are_masked_wherever_they_sit() -> None:
    # The runs of all keys are merged once, in text order: one of the second key before one of the
    # first is masked too, and runs that touch are one mask.
    first, second = "sk-proj-" + "TESTKEYabcdef1234567890XYZ", "sk-ant-" + "OTHERkey0987654321zyxw"
    text = f"a {second} b {first}{first} c"
    assert without_keys(text, [first, second]) == "a [REDACTED:api_key] b [REDACTED:api_key] c"


def test_the_whole_text_check_reads_text_as_the_mask_does() -> None:
    # without_keys first looks for the key with whole-string operations (a 10 MB paste is not read
    # character by character unless the key is in it): that look must read every character as the
    # mask does, or a disguised key would pass unmasked.
    import random

    from neotask_tui.providers._sdk import _holds_a_window, _key_view, _view

    key = "sk-proj-" + "TESTKEYabcdef1234567890XYZ"
    odd = ["\u200b", "\u00ad", " ", "\n", "-", "_", "\uff3f", "\u2011", "\uff0d", "+", "'", "\u03a3", "\u03c2",
           "\u0130", "\uff21", "\u0430", "\u0435", "\u03bf", "\ufeff", "\U000e0041", "\u2028", "Σ", "é",
           "\U0001d400", "\U0001d41a", "\U0001d7cf", "\u24b6", "\u24d1", "\u2461", "\u1d00", "\u0299", "\u2102",
           "\u00b2", "\ufb01", "\u017f"]
    rnd = random.Random(29)
    _, _, windows = _key_view(key)
    for _ in range(400):
        start = rnd.randrange(len(key) - 10)
        chars = list(key[start:start + rnd.randint(10, 24)])
        for _ in range(rnd.randint(0, 6)):
            chars.insert(rnd.randrange(len(chars) + 1), rnd.choice(odd))
        text = "".join(rnd.choice([*odd, "a", "b"]) for _ in range(3)) + "".join(
            c.upper() if rnd.random() < 0.3 else c for c in chars)
        low = _view(text)[0]
        assert _holds_a_window(text, [key]) == any(w in low for w in windows), repr(text)
    hidden = "x" * 1_000_000 + " T\u200bE\uff33TKEYabc\u0501ef1234567890 " + "y" * 1_000_000
    assert without_keys(hidden, [key]) == "x" * 1_000_000 + " [REDACTED:api_key] " + "y" * 1_000_000
