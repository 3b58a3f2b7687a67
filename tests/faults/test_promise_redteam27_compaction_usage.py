"""README promise red team 27 (F2) broke: "The gauge and the counters count every call really sent" —
compaction's summarizer call to the model (``neotask compact``, ``/compact``, auto-compaction, and a
preview, which is a paid call too) was never added to the session's counters.

The first tests drive the real CLI against a local server speaking the OpenAI streaming protocol (it
reports 111 tokens in, 7 out per call); the rest use the real engine with the scripted provider.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from neotask_tui import paths
from neotask_tui.config import load_settings
from neotask_tui.engine.events import Compacted, TurnDone
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.storage.index import load_index
from tests.faults.helpers import COMPACTION_SUMMARY as SUMMARY
from tests.faults.helpers import COMPACTION_TURNS as TURNS
from tests.faults.helpers import KEY, cli, lock_holder, run_turn
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

pytestmark = pytest.mark.promise("honest_counters")

CALL = ReplyUsage(input=111, output=7)


def _env(srv: OpenAIServer) -> dict[str, str]:
    return {"NEOTASK_PROVIDER": "openai", "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-test-f2",
            "NEOTASK_MODEL": "gpt-4o", "NEOTASK_COMPACTION_KEEP_RECENT_TOKENS": "40"}


def _totals(env: dict[str, str]) -> dict[str, Any]:
    r = cli("sessions", "show", KEY, "--json", env=env)
    assert r.returncode == 0, r.stderr
    totals: dict[str, Any] = json.loads(r.stdout)["totals"]
    return totals


def _events(env: dict[str, str]) -> list[dict[str, Any]]:
    r = cli("transcript", KEY, "--json", env=env)
    assert r.returncode == 0, r.stderr
    events: list[dict[str, Any]] = json.loads(r.stdout)
    return events


def test_compact_and_its_preview_count_the_summarizer_call_once(neotask_home: Path) -> None:
    # The red team's reproduction: 4 sends → 444 in / 28 out; `compact` made a 5th call the server
    # saw, but the totals stayed 444/28 and the compaction record carried no usage.
    with OpenAIServer() as srv:
        env = _env(srv)
        for text in TURNS:
            srv.queue(Reply(chunks=["Noted."], usage=CALL))
            assert cli("send", text, env=env).returncode == 0
        assert (_totals(env)["input"], _totals(env)["output"]) == (444, 28)
        srv.queue(Reply(chunks=[SUMMARY], usage=CALL))
        prev = cli("compact", KEY, "--preview", "--json", env=env)
        assert prev.returncode == 0, prev.stderr
        draft = json.loads(prev.stdout)
        assert draft["preview"] and draft["model"] == "gpt-4o" and not draft["fallback"]
        assert draft["usage"] == {"input": 111, "output": 7, "cache_read": 0, "cache_write": 0, "reported": True}
        assert (_totals(env)["input"], _totals(env)["output"]) == (555, 35)  # a preview's call is paid too
        assert not any(e["type"] == "compaction" for e in _events(env))  # and the transcript is untouched
        srv.queue(Reply(chunks=[SUMMARY], usage=CALL))
        done = cli("compact", KEY, "--json", env=env)
        assert done.returncode == 0, done.stderr
        res = json.loads(done.stdout)
        assert res["new_session_id"] and res["usage"]["input"] == 111
        totals = _totals(env)
        assert len(srv.requests) == 6
    assert (totals["input"], totals["output"], totals["estimated_turns"]) == (666, 42, 0)
    assert totals["cost_usd"] and totals["cost_usd"] > 0
    record = next(e for e in _events(env) if e["type"] == "compaction")
    assert record["usage"] == {"input": 111, "output": 7, "cache_read": 0, "cache_write": 0, "reported": True}
    assert record["cost_usd"] == res["cost_usd"] and record["cost_usd"] > 0
    on_disk = load_index(repair=False).records[KEY].counters
    assert (on_disk.input, on_disk.output) == (666, 42)


def test_a_preview_beside_the_app_asks_no_model_it_could_not_count(neotask_home: Path) -> None:
    """Beside the process that holds the data dir a preview writes nothing (one writer), so it could
    not count a call: it does not make one, and says why."""
    with OpenAIServer() as srv:
        env = _env(srv)
        for text in TURNS:
            srv.queue(Reply(chunks=["Noted."], usage=CALL))
            assert cli("send", text, env=env).returncode == 0
        with lock_holder():
            n = len(srv.requests)
            r = cli("compact", KEY, "--preview", "--json", env=env)
        assert r.returncode == 0, r.stderr
        assert len(srv.requests) == n  # no call went out
    draft = json.loads(r.stdout)
    assert draft["model"] == "extractive" and draft["usage"] is None and "Do not use Redis." in draft["summary"]
    assert "not asked" in draft["summarizer_note"] and "holds the data dir" in draft["summarizer_note"]
    assert (_totals({})["input"], _totals({})["output"]) == (444, 28)


# ------------------------------------------------------------------------------- the real engine
async def _seeded(engine: Engine) -> ScriptedProvider:
    provider = engine.provider
    assert isinstance(provider, ScriptedProvider)
    engine.settings.compaction.keep_recent_tokens = 40
    for text in TURNS:
        provider.queue({"text": "Noted.", "usage": {"input": 50, "output": 3}})
        await run_turn(engine, text, KEY)
    return provider


async def test_an_unreported_summarizer_call_is_estimated_and_counted_like_a_turn(engine: Engine) -> None:
    provider = await _seeded(engine)
    before = engine.current_record(KEY).counters
    assert (before.input, before.output, before.estimated_turns) == (200, 12, 0)
    provider.queue(SUMMARY)  # the provider reports no usage: our estimate, labelled so
    res = await engine.compact(KEY)
    assert res.usage is not None and res.usage["reported"] is False
    assert res.usage["input"] > 0 and res.usage["output"] > 0
    after = engine.current_record(KEY).counters
    assert (after.input, after.output) == (200 + res.usage["input"], 12 + res.usage["output"])
    assert after.estimated_turns == 1
    assert engine.events(KEY)[1].data["usage"] == res.usage
    saved = load_index(repair=False).records[KEY].counters
    assert (saved.input, saved.output) == (after.input, after.output)


@pytest.mark.parametrize(("reply", "counted"), [
    # It failed mid-stream: the provider reported nothing, nothing is counted (as for a turn).
    ({"text": "## Goal\n- half", "usage": {"input": 90, "output": 4},
      "error": {"kind": "server", "message": "cut", "after_chars": 6}}, (0, 0)),
    # It came back, but not in the summary's shape: the extractive summary is used, the call was paid.
    ({"text": "I cannot summarize this.", "usage": {"input": 90, "output": 4}}, (90, 4)),
], ids=["failed", "unusable-reply"])
async def test_a_fallback_counts_only_what_the_provider_reported(
        engine: Engine, reply: dict[str, Any], counted: tuple[int, int]) -> None:
    provider = await _seeded(engine)
    provider.queue(reply)
    res = await engine.compact(KEY)
    assert res.fallback and res.model == "extractive"
    after = engine.current_record(KEY).counters
    assert (after.input - 200, after.output - 12) == counted
    assert after.estimated_turns == 0
    assert engine.events(KEY)[1].data.get("usage") == (None if counted == (0, 0) else res.usage)


async def test_auto_compaction_in_a_turn_is_in_the_turns_totals(engine: Engine) -> None:
    provider = await _seeded(engine)
    engine.settings.context.window_tokens = 900
    engine.settings.compaction.min_messages = 4
    provider.queue({"text": SUMMARY, "usage": {"input": 111, "output": 7}},
                   {"text": "after compaction", "usage": {"input": 60, "output": 2}})
    out = await run_turn(engine, "and now? " + "word " * 400, KEY)
    assert any(isinstance(e, Compacted) for e in out)
    done = next(e for e in out if isinstance(e, TurnDone))
    assert (done.totals.input, done.totals.output) == (200 + 111 + 60, 12 + 7 + 2)
    fresh = Engine(load_settings(), readonly=True)
    assert fresh.session_info(KEY)["totals"]["input"] == 371


async def test_a_fork_of_a_compacted_session_does_not_bill_the_summary_again(engine: Engine) -> None:
    provider = await _seeded(engine)
    provider.queue({"text": SUMMARY, "usage": {"input": 111, "output": 7}})
    await engine.compact(KEY)
    provider.queue({"text": "Sure.", "usage": {"input": 60, "output": 2}})
    await run_turn(engine, "one more", KEY)
    rec = await engine.fork_session(KEY)
    copy = next(e for e in engine.events(KEY) if e.type == "compaction")
    assert copy.data["usage"]["input"] == 111 and copy.data["copied_from"]  # paid in the parent
    assert rec.counters.input == 0  # nothing was sent in the fork yet
    provider.queue({"text": "Fine.", "usage": {"input": 70, "output": 1}})
    await run_turn(engine, "in the fork", KEY)
    paths.sessions_index().unlink()  # rebuilt from the transcripts: the fork's own call only
    assert (load_index().records[KEY].counters.input, load_index().records[KEY].counters.output) == (70, 1)
