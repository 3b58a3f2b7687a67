"""Provider faults through the real providers against the local protocol servers.

The real OpenAI-compatible and Anthropic providers talk HTTP to :mod:`tests.protocol_servers`
(the real SSE / Anthropic event wire formats), driven by the real engine. For every fault — refused
connection, timeout, 401, 429 with Retry-After, 500, malformed SSE, a cut stream, an error event, a
stalled stream — the checks are the same:

- the turn ends with ``TurnFailed`` (or ``TurnDone`` after a successful retry); nothing escapes;
- the user's message is on disk; a partial reply is stored and marked ``interrupted``;
- the token counters (``sessions.json`` and the transcript) count each *successful* call exactly once:
  failed attempts and retries add nothing, so nothing is double-charged;
- the API key appears in no file and in no error text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from neotask_tui.config import load_settings
from neotask_tui.engine.events import TurnDone, TurnFailed
from neotask_tui.engine.facade import Engine
from neotask_tui.storage.index import load_index
from tests.faults.helpers import KEY, cli
from tests.protocol_servers import AnthropicServer, OpenAIServer, ProtocolServer, Reply, ReplyUsage, refused_url

API_KEY = "sk-proj-FAULTSUITE0123456789abcdefABCDEF0123456789"
ANT_KEY = "sk-ant-api03-FAULTSUITE0123456789abcdefABCDEF0123456789-xyz"


@dataclass(frozen=True)
class Fault:
    """A scripted server behaviour and what the turn must end with."""

    name: str
    replies: Callable[[], list[Reply]]
    outcome: str  # "done" | "failed"
    partial: str = ""
    requests: int | None = None  # how many HTTP requests the server must see (None = don't care)


U = ReplyUsage(input=120, output=7, cache_read=30)
FAULTS: list[Fault] = [
    Fault("ok", lambda: [Reply(chunks=["all ", "good"], usage=U)], "done", requests=1),
    Fault("401", lambda: [Reply.status(401, message="invalid api key")], "failed", requests=1),
    Fault("403", lambda: [Reply.status(403, message="forbidden")], "failed", requests=1),
    Fault("400", lambda: [Reply.status(400, message="bad request")], "failed", requests=1),
    Fault("429-then-ok", lambda: [Reply.status(429, headers={"Retry-After": "0"}), Reply(chunks=["later"], usage=U)],
          "done", requests=2),
    Fault("429-exhausted", lambda: [Reply.status(429, headers={"Retry-After": "0"})] * 3, "failed", requests=3),
    Fault("500-then-ok", lambda: [Reply.status(500), Reply(chunks=["recovered"], usage=U)], "done", requests=2),
    Fault("500-exhausted", lambda: [Reply.status(500)] * 3, "failed", requests=3),
    Fault("503", lambda: [Reply.status(503)] * 3, "failed"),
    Fault("malformed", lambda: [Reply(chunks=["par", "tial"], usage=U, fault="malformed")], "failed", "partial"),
    Fault("cut", lambda: [Reply(chunks=["cut ", "here"], usage=U, fault="cut")], "failed", "cut here"),
    Fault("error-event", lambda: [Reply(chunks=["half"], usage=U, fault="error_event")], "failed", "half"),
    Fault("cut-before-text", lambda: [Reply(chunks=[], usage=U, fault="cut")] * 3, "failed"),
    Fault("hang", lambda: [Reply(fault="hang")] * 3, "failed"),
    Fault("stall", lambda: [Reply(chunks=["slow "], usage=U, fault="stall")], "failed", "slow "),
]


def _provider(kind: str, url: str) -> Any:
    if kind == "openai":
        from neotask_tui.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(base_url=url, api_key=API_KEY, model="gpt-4o", timeout=0.5, max_retries=2,
                                    backoff_base=0.01)
    from neotask_tui.providers.anthropic import AnthropicProvider

    return AnthropicProvider(base_url=url, api_key=ANT_KEY, model="claude-3-5-haiku-latest", timeout=0.5,
                             max_retries=2, backoff_base=0.01)


def _server(kind: str) -> ProtocolServer:
    return OpenAIServer() if kind == "openai" else AnthropicServer()


def _no_keys_on_disk(home: Path) -> None:
    for p in home.rglob("*"):
        if p.is_file():
            raw = p.read_bytes()
            assert API_KEY.encode() not in raw and ANT_KEY.encode() not in raw, p


async def _run(kind: str, fault: Fault, home: Path) -> None:
    with _server(kind) as srv:
        base = srv.base_url  # type: ignore[attr-defined]
        # One good turn first: the counters must not move on failure, and move exactly once on success.
        srv.queue(Reply(chunks=["warm"], usage=ReplyUsage(input=50, output=3)), *fault.replies())
        engine = Engine(load_settings(), provider=_provider(kind, base))
        try:
            [e async for e in engine.send("warm up", KEY)]
            before = load_index(repair=False).records[KEY].counters
            n_before = len(srv.requests)
            events = [e async for e in engine.send(f"fault {fault.name}", KEY)]
        finally:
            await engine.aclose()
        n_requests = len(srv.requests) - n_before
    done = [e for e in events if isinstance(e, TurnDone)]
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert (done and not failed) if fault.outcome == "done" else (failed and not done), events
    if fault.requests is not None:
        assert n_requests == fault.requests
    # The user's message is on disk; a partial reply is kept and marked.
    e2 = Engine(load_settings(), readonly=True)
    msgs = [ev for ev in e2.events(KEY) if ev.type == "message"]
    assert [m.content for m in msgs if m.role == "user"] == ["warm up", f"fault {fault.name}"]
    last = msgs[-1]
    if fault.outcome == "done":
        assert last.role == "assistant" and last.data.get("status") == "complete"
    elif fault.partial:
        assert failed[0].partial_text == fault.partial
        assert last.role == "assistant" and last.content == fault.partial
        assert last.data.get("status") == "interrupted" and "usage" not in last.data
    else:
        assert last.role == "user"
    # No double-charging: exactly the successful call's reported usage was added, once.
    after = load_index(repair=False).records[KEY].counters
    if fault.outcome == "done":
        assert (after.input - before.input, after.output - before.output) == (U.input, U.output)
        assert after.cache_read - before.cache_read == U.cache_read
    else:
        assert (after.input, after.output, after.cache_read) == (before.input, before.output, before.cache_read)
    usage_events = [ev for ev in e2.events(KEY) if isinstance(ev.data.get("usage"), dict)]
    assert len(usage_events) == 1 + (fault.outcome == "done")
    # Errors are clear and never carry the key.
    for f in failed:
        assert f.error and API_KEY not in f.error and ANT_KEY not in f.error
        assert f.retryable == (f.error_kind not in ("auth", "bad_request"))
    _no_keys_on_disk(home)


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_provider_fault(kind: str, fault: Fault, neotask_home: Path) -> None:
    await _run(kind, fault, neotask_home)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_connection_refused(kind: str, neotask_home: Path) -> None:
    url = refused_url("/v1" if kind == "openai" else "")
    engine = Engine(load_settings(), provider=_provider(kind, url))
    try:
        events = [e async for e in engine.send("anyone there?", KEY)]
    finally:
        await engine.aclose()
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert failed and failed[0].retryable and failed[0].error
    msgs = [ev for ev in Engine(load_settings(), readonly=True).events(KEY) if ev.type == "message"]
    assert [m.content for m in msgs] == ["anyone there?"]
    assert load_index(repair=False).records[KEY].counters.input == 0
    _no_keys_on_disk(neotask_home)


def test_cli_send_through_openai_protocol_401_and_key_hygiene(neotask_home: Path) -> None:
    """End to end: provider chosen from env, a 401, then success — the key is nowhere on disk."""
    with OpenAIServer() as srv:
        srv.queue(Reply.status(401, message="Incorrect API key provided"), Reply(chunks=["hi"], usage=U))
        env = {"NEOTASK_PROVIDER": "openai", "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": API_KEY,
               "NEOTASK_MODEL": "gpt-4o"}
        bad = cli("send", "first", "--json", env=env)
        good = cli("send", "second", "--json", env=env)
        doctor = cli("doctor", "--json", env=env)
        show = cli("sessions", "show", KEY, "--json", env=env)
    assert bad.returncode == 1 and "auth" in bad.stderr
    assert good.returncode == 0 and json.loads(good.stdout)["reply"] == "hi"
    assert srv.request_headers[0]["authorization"] == f"Bearer {API_KEY}"  # it was really used...
    for out in (bad, good, doctor, show):  # ...and never echoed
        assert API_KEY not in out.stdout and API_KEY not in out.stderr
    _no_keys_on_disk(neotask_home)


def test_an_endpoint_echoing_the_key_leaves_it_nowhere(neotask_home: Path) -> None:
    """Red team 25, F2: the reply of an endpoint that echoes the key it got was printed, stored in the
    transcript and indexed (a key in no known format was not caught by the secret patterns)."""
    odd = "myco-internal-key-" + "ZYXW98765"
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["Your key is myco-internal", f"-key-ZYXW98765 and again {odd}."], usage=U))
        env = {"NEOTASK_PROVIDER": "openai", "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": odd,
               "NEOTASK_MODEL": "gpt-4o"}
        out = cli("send", "hi", "--json", env=env)
        found = cli("search", "ZYXW98765", "--json", env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["reply"] == "Your key is [REDACTED:api_key] and again [REDACTED:api_key]."
    assert odd not in out.stdout + out.stderr + found.stdout + found.stderr
    for p in neotask_home.rglob("*"):
        if p.is_file():
            assert odd.encode() not in p.read_bytes(), p
