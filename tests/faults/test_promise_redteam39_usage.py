"""Red team 39: with an OpenAI-compatible server that leaves ``usage`` out of its reply, the estimate
of the call's input counted the messages only (``send --json`` said 49 tokens in) though every call
also carries the tool definitions (``context --json``: ``tool_tokens`` 785), which the provider bills
as input. The estimate is everything the call sent: the ledger's messages plus the tool definitions,
for a reply and for each tool round; the session's totals (and the cost) follow it.

Driven through the real CLI against a local server speaking the OpenAI streaming protocol."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.faults.helpers import KEY, cli
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage, ScriptedToolCall

pytestmark = pytest.mark.promise("honest_counters")

TEXT = "hello there friend"


def _env(srv: OpenAIServer) -> dict[str, str]:
    return {"NEOTASK_PROVIDER": "openai", "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-test-rt39",
            "NEOTASK_MODEL": "gpt-4o"}


def _json(*args: str, env: dict[str, str]) -> Any:
    r = cli(*args, "--json", env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _preview(srv: OpenAIServer, env: dict[str, str]) -> dict[str, Any]:
    """A first turn (reported), then what `context --json` says the next call carries."""
    srv.queue(Reply(chunks=["hi"], usage=ReplyUsage(input=10, output=1)))
    assert cli("send", "first", env=env).returncode == 0
    view: dict[str, Any] = _json("context", KEY, "--message", TEXT, env=env)
    assert view["tool_tokens"] > 100 and view["tools"]  # the state tools go with every call
    return view


def test_an_unreported_reply_counts_the_tool_definitions_it_was_sent_with(neotask_home: Path) -> None:
    with OpenAIServer() as srv:
        env = _env(srv)
        view = _preview(srv, env)
        srv.queue(Reply(chunks=["Hello to you too."], usage=None))
        out = _json("send", TEXT, env=env)
        sent = srv.requests[-1]
    assert [t["function"]["name"] for t in sent["tools"]] == [t["name"] for t in view["tools"]]
    assert out["context"]["total"] == view["ledger"]["total"]  # the preview was the call
    carried = view["ledger"]["total"] + view["tool_tokens"]
    assert out["usage"]["reported"] is False
    assert out["usage"]["input"] == carried  # was the messages alone
    totals = _json("sessions", "show", KEY, env=env)["totals"]
    assert totals["input"] == 10 + carried and totals["estimated_turns"] == 1


def test_each_unreported_call_of_a_tool_round_counts_the_tool_definitions(neotask_home: Path) -> None:
    with OpenAIServer() as srv:
        env = _env(srv)
        view = _preview(srv, env)
        ask = ScriptedToolCall(name="add_open_question", arguments={"question": "Which database?"})
        srv.queue(Reply(tool_calls=[ask], usage=None), Reply(chunks=["Noted the question."], usage=None))
        out = _json("send", TEXT, env=env)
        assert len(srv.requests) == 3 and all(r.get("tools") for r in srv.requests[1:])
    events = _json("transcript", KEY, env=env)
    call = next(e for e in events if e["type"] == "tool_call")
    first = view["ledger"]["total"] + view["tool_tokens"]
    assert call["usage"]["reported"] is False and call["usage"]["input"] == first
    # the second call carries the tool round's messages too, and the same definitions
    second = out["context"]["total"] + view["tool_tokens"]
    assert out["usage"]["reported"] is False and out["usage"]["input"] == second > first
    totals = _json("sessions", "show", KEY, env=env)["totals"]
    assert totals["input"] == 10 + first + second
