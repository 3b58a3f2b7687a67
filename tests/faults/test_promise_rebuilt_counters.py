"""README promise "counters don't lie" broke when `sessions.json` was rebuilt from the transcripts
(red team: 666 → 333 input tokens): the rebuild recounted each current transcript alone and missed
(a) a compaction preview's summarizer call (counted only in `sessions.json`), (b) the model calls of
tool rounds (their usage sits on `tool_call` events), (c) the totals a compaction's session carries
from its lineage, and (d) it would count the messages a compaction copies twice once it follows the
lineage; (e) a kill between writing the compaction's new transcript and switching the index lost the
summarizer's call from the counters.

Each test runs real turns through the real engine (the scripted provider is the model, priced as
gpt-4o so costs add up too), records the totals, deletes or corrupts `sessions.json`, lets the next
process rebuild it under the data-dir lock, and compares every counter.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from neotask_tui import paths
from neotask_tui.config import load_settings
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.storage import atomic
from neotask_tui.storage.events import counts_usage
from neotask_tui.storage.transcript import read_transcript
from tests.faults.helpers import COMPACTION_SUMMARY as SUMMARY
from tests.faults.helpers import COMPACTION_TURNS as TURNS
from tests.faults.helpers import KEY, cli, run_turn
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

pytestmark = pytest.mark.promise("honest_counters")



def _open() -> Engine:
    eng = Engine(load_settings(), provider=ScriptedProvider(model="gpt-4o"))
    eng.settings.compaction.keep_recent_tokens = 40
    return eng


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    eng = _open()
    try:
        yield eng
    finally:
        await eng.aclose()


def _scripted(engine: Engine) -> ScriptedProvider:
    prov = engine.provider
    assert isinstance(prov, ScriptedProvider)
    return prov


async def _turns(engine: Engine, n: int = len(TURNS), base: int = 50) -> None:
    for i, text in enumerate(TURNS[:n]):
        _scripted(engine).queue({"text": "Noted.", "usage": {"input": base + i, "output": 3, "cache_read": 7}})
        await run_turn(engine, text, KEY)


def _totals(engine: Engine) -> dict[str, Any]:
    totals: dict[str, Any] = engine.current_record(KEY).counters.totals()
    return totals


async def _rebuilt(engine: Engine, how: str = "deleted") -> dict[str, Any]:
    """Close the engine, delete (or corrupt) ``sessions.json``, and read the totals the next process
    rebuilds it with (under the data-dir lock, as every writer does)."""
    await engine.aclose()
    index = paths.sessions_index()
    if how == "deleted":
        index.unlink()
    else:
        index.write_text('{"version": 1, "sessions": {"agent:main', encoding="utf-8")
    fresh = _open()
    try:
        assert any("rebuilt" in n for n in fresh.notices), fresh.notices
        return _totals(fresh)
    finally:
        await fresh.aclose()


# ------------------------------------------------------------------------------- (b) tool rounds
async def test_a_tool_rounds_model_call_survives_a_rebuild(engine: Engine) -> None:
    await _turns(engine, 1)
    _scripted(engine).queue(
        {"text": "Let me note that.", "usage": {"input": 40, "output": 5},
         "tool_calls": [{"id": "c1", "name": "update_session_state",
                         "arguments": {"field": "current_step", "value": "write tests"}},
                        {"id": "c2", "name": "add_open_question", "arguments": {"question": "Which CSV dialect?"}}]},
        {"text": "Noted the step.", "usage": {"input": 60, "output": 4}},
        # A round whose provider reports nothing: our estimate, labelled so, counted once per call.
        {"text": "", "tool_calls": [{"id": "c3", "name": "fire_event", "arguments": {"event": "tests_started"}},
                                    {"id": "c4", "name": "add_open_question", "arguments": {"question": "Q2?"}}]},
        {"text": "Done.", "usage": {"input": 70, "output": 2}},
    )
    await run_turn(engine, "Set the step to writing tests.", KEY)
    await run_turn(engine, "Mark that tests started.", KEY)
    live = _totals(engine)
    assert live["input"] >= 50 + 40 + 60 + 70
    assert await _rebuilt(engine) == live
    assert live["estimated_turns"] == 1  # one unreported call, however many tools it asked for


# ------------------------------------------------------------------------ (c) carried by compaction
async def test_a_compacted_sessions_lineage_totals_survive_a_rebuild(engine: Engine) -> None:
    await _turns(engine)
    _scripted(engine).queue({"text": SUMMARY, "usage": {"input": 111, "output": 7}})
    await engine.compact(KEY)
    _scripted(engine).queue({"text": "Sure.", "usage": {"input": 80, "output": 2}})
    await run_turn(engine, "one more", KEY)
    live = _totals(engine)
    assert live["input"] == 50 + 51 + 52 + 53 + 111 + 80
    assert await _rebuilt(engine, "corrupt") == live


async def test_the_carried_totals_are_recorded_so_a_rebuild_needs_no_parent(engine: Engine) -> None:
    await _turns(engine)
    old_id = engine.current_record(KEY).session_id
    _scripted(engine).queue({"text": SUMMARY, "usage": {"input": 111, "output": 7}})
    await engine.compact(KEY)
    live = _totals(engine)
    paths.archived_transcript_path(old_id).unlink()  # the archived lineage gone: the record still says
    assert await _rebuilt(engine) == live


# ------------------------------------------------------------------ (d) copies kept by compaction
async def test_the_messages_compaction_keeps_are_marked_as_copies(engine: Engine) -> None:
    await _turns(engine)
    _scripted(engine).queue({"text": SUMMARY, "usage": {"input": 111, "output": 7}})
    res = await engine.compact(KEY)
    evs = engine.events(KEY)
    kept = [e for e in evs if e.id in res.kept_ids and isinstance(e.data.get("usage"), dict)]
    assert kept  # the test needs a kept reply that was paid for
    # Nothing in the new transcript is counted again: its calls were made in the compacted session.
    assert [e.id for e in evs if counts_usage(e)] == []
    assert {e.data.get("copied_from") for e in kept} == {res.old_session_id}


# --------------------------------------------------------------------- (a) a compaction preview
async def test_a_compaction_previews_call_survives_a_rebuild(engine: Engine) -> None:
    await _turns(engine)
    _scripted(engine).queue({"text": SUMMARY, "usage": {"input": 111, "output": 7}})
    res = await engine.compact(KEY, preview=True)
    assert res.usage is not None and res.new_session_id is None
    live = _totals(engine)
    assert live["input"] == 50 + 51 + 52 + 53 + 111
    await engine.aclose()
    again = _open()  # the next process: the call is counted once, not caught up a second time
    try:
        assert _totals(again) == live and not any("caught up" in n for n in again.notices)
    finally:
        await again.aclose()
    assert await _rebuilt(again) == live


# ------------------------------------------------------------------------------------ /new
async def test_an_archived_sessions_totals_are_the_ones_it_had(engine: Engine) -> None:
    """After ``/new`` the compacted session is archived; its listed totals are still its lineage's
    (the new session starts at zero, also after a rebuild)."""
    await _turns(engine)
    _scripted(engine).queue({"text": SUMMARY, "usage": {"input": 111, "output": 7}})
    await engine.compact(KEY)
    _scripted(engine).queue({"text": "Sure.", "usage": {"input": 80, "output": 2}})
    await run_turn(engine, "one more", KEY)
    had, old_id = _totals(engine), engine.current_record(KEY).session_id
    await engine.new_session(KEY)
    _scripted(engine).queue({"text": "Fresh.", "usage": {"input": 9, "output": 1}})
    await run_turn(engine, "a fresh start", KEY)
    archived = next(s for s in engine.list_sessions(include_archived=True) if s["session_id"] == old_id)
    assert archived["archived"] and archived["counters"] == had
    live = _totals(engine)
    assert (live["input"], live["output"]) == (9, 1)
    assert await _rebuilt(engine) == live


# ---------------------------------------------------------- (e) a kill in the compaction's switch
class Killed(BaseException):
    """The process dies here (nothing after it runs, no handler sees it)."""


async def test_a_kill_between_the_new_transcript_and_the_index_switch_keeps_the_call(engine: Engine) -> None:
    await _turns(engine)
    before = _totals(engine)

    def die_on_switch(path: Path) -> None:
        if path == paths.sessions_index():
            raise Killed

    _scripted(engine).queue({"text": SUMMARY, "usage": {"input": 111, "output": 7}})
    atomic.io_hooks.before_write = die_on_switch
    try:
        with pytest.raises(Killed):
            await engine.compact(KEY)
    finally:
        atomic.io_hooks.before_write = None
    assert len(list(paths.sessions_dir().glob("*.jsonl"))) == 2  # the new transcript was written
    engine.close()  # the dead process's lock goes with it
    fresh = _open()
    try:
        after = _totals(fresh)
        assert fresh.current_record(KEY).compaction_count == 0  # the switch never happened
    finally:
        await fresh.aclose()
    assert (after["input"] - before["input"], after["output"] - before["output"]) == (111, 7)
    assert after["cost_usd"] > before["cost_usd"]
    assert await _rebuilt(fresh) == after


# ------------------------------------------------------------------------- all of it, by doctor
async def test_doctor_fix_rebuilds_every_counter_of_a_whole_history(engine: Engine) -> None:
    await _turns(engine, 2)
    _scripted(engine).queue(
        {"text": "", "usage": {"input": 40, "output": 5},
         "tool_calls": [{"id": "c1", "name": "add_open_question", "arguments": {"question": "Dialect?"}}]},
        {"text": "Asked.", "usage": {"input": 60, "output": 4}},
    )
    await run_turn(engine, "Note the open question.", KEY)
    await _turns(engine, 4, base=20)
    _scripted(engine).queue({"text": SUMMARY, "usage": {"input": 111, "output": 7}})
    await engine.compact(KEY, preview=True)
    _scripted(engine).queue({"text": SUMMARY, "usage": {"input": 112, "output": 8}})
    await engine.compact(KEY)
    _scripted(engine).queue({"text": "Sure.", "usage": {"input": 80, "output": 2}})
    await run_turn(engine, "one more", KEY)
    _scripted(engine).queue("## Goal\n- unreported summary [e:2]")  # estimated, labelled so
    await engine.compact(KEY, preview=True)
    live = _totals(engine)
    await engine.undo_compact(KEY)  # the compacted session again, with the calls made since
    assert _totals(engine) == live
    await engine.aclose()
    paths.sessions_index().write_text("{broken", encoding="utf-8")
    r = cli("doctor", "--fix", "--json")
    assert r.returncode == 0, r.stderr
    assert any("rebuilt" in f for f in json.loads(r.stdout)["fixed"])
    shown = cli("sessions", "show", KEY, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["totals"] == live
    # Transcripts were only ever appended to: every line is a whole event.
    for p in [*paths.sessions_dir().glob("*.jsonl"), *paths.archive_dir().glob("*.jsonl")]:
        assert not read_transcript(p, repair=False).issues


# ------------------------------------------------------------------- the red team's reproduction
def test_the_red_teams_666_input_tokens_are_666_after_a_rebuild() -> None:
    """The real CLI against a server speaking the OpenAI protocol (111 in, 7 out per call): four
    sends, a preview, a compaction: 666/42; `sessions.json` deleted: `sessions show` said 333."""
    call = ReplyUsage(input=111, output=7)
    with OpenAIServer() as srv:
        env = {"NEOTASK_PROVIDER": "openai", "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-test-rb",
               "NEOTASK_MODEL": "gpt-4o", "NEOTASK_COMPACTION_KEEP_RECENT_TOKENS": "40"}
        for text in TURNS:
            srv.queue(Reply(chunks=["Noted."], usage=call))
            assert cli("send", text, env=env).returncode == 0
        for flags in (["--preview"], []):
            srv.queue(Reply(chunks=[SUMMARY], usage=call))
            r = cli("compact", KEY, *flags, "--json", env=env)
            assert r.returncode == 0, r.stderr

    def shown() -> dict[str, Any]:
        r = cli("sessions", "show", KEY, "--json")
        assert r.returncode == 0, r.stderr
        totals: dict[str, Any] = json.loads(r.stdout)["totals"]
        return totals

    before = shown()
    assert (before["input"], before["output"]) == (666, 42)
    paths.sessions_index().unlink()
    assert shown() == before
