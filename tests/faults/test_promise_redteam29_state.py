"""README promises red team 29 broke in session state: a period past the 3650-day cap said in chat
crashed the turn (traceback, the message stored without a reply); one pasted message restating a
goal and a preference 50,000 times made 556 identical entries; a state tool's error result was
stored as a success."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from pathlib import Path

import pytest

from neotask_tui.engine import events as ev
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.model import MAX_DURATION_DAYS
from tests.faults.helpers import KEY, all_transcript_events, run_turn
from tests.faults.helpers import cli as neotask

pytestmark = pytest.mark.promise("session_state")

LONG_PERIODS = ["на 100000 часов отвечай коротко", "for 99999999999999999999 minutes answer tersely"]


def _prefs(engine: Engine) -> list[str]:
    return [str(e.value) for e in engine.state.get(KEY).active if e.field == "temporary_preferences"]


# ------------------------------------------------------------------ 1. a period past the cap


@pytest.mark.parametrize("text", LONG_PERIODS)
async def test_a_period_past_the_cap_said_in_chat_is_kept_for_the_longest_allowed(engine: Engine, text: str) -> None:
    # F1: StateError("duration too long") out of on_user_message: a traceback, the message without a reply.
    told = await run_turn(engine, text, KEY)
    done = [e for e in told if isinstance(e, ev.TurnDone)]
    assert done and done[0].text, told
    [pref] = [e for e in engine.state.get(KEY).active if e.field == "temporary_preferences"]
    assert pref.ttl == f"{MAX_DURATION_DAYS}d" and pref.expires_at is not None
    assert abs(pref.expires_at - pref.set_at - timedelta(days=MAX_DURATION_DAYS)) < timedelta(seconds=5)
    notes = [e.text for e in told if isinstance(e, ev.Notice)]
    assert any(f"capped: {text.split()[1]}" in n and f"{MAX_DURATION_DAYS}-day maximum" in n for n in notes), notes
    roles = [e.role for e in engine.events(KEY) if e.type == "message"]
    assert roles == ["user", "assistant"]


@pytest.mark.parametrize("text", LONG_PERIODS)
async def test_a_draft_with_a_period_past_the_cap_is_previewed(engine: Engine, text: str) -> None:
    # The same StateError broke `/context DRAFT`, F4 with the draft and `neotask context --message`.
    ctx = await engine.preview(KEY, text)
    state = "\n".join(m.content for m, s in zip(ctx.messages, ctx.section_of, strict=True) if s == "state")
    assert "Current session:" in state and ("коротко" in state or "tersely" in state), state


def test_send_with_a_period_past_the_cap_answers(neotask_home: Path) -> None:
    r = neotask("send", LONG_PERIODS[0], "--json", env={"NEOTASK_PROVIDER": "scripted"})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["reply"].startswith("(scripted)")


async def test_a_failure_reading_the_state_is_a_notice_and_a_log_record_never_a_lost_turn(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # The class behind F1: whatever the classifier or the recording raises, the message is answered.
    from neotask_tui.engine.state import manager

    def broken(text: str) -> list[object]:
        raise RuntimeError("classifier exploded")

    monkeypatch.setattr(manager, "classify", broken)
    with caplog.at_level(logging.WARNING, logger="neotask.engine"):
        told = await run_turn(engine, "my goal is ship v9", KEY)
        edited = [e async for e in engine.edit_last("my goal is ship v10", KEY)]
    for events in (told, edited):
        assert any(isinstance(e, ev.TurnDone) for e in events), events
        warned = [e.text for e in events if isinstance(e, ev.Notice) and e.level == "warning"]
        assert any("not recorded (classifier exploded)" in n for n in warned), warned
    assert sum("classifier exploded" in r.getMessage() for r in caplog.records) == 2, caplog.records


# ------------------------------------------------------------------ 2a. one entry per statement


async def test_a_statement_restated_in_one_message_is_one_entry(engine: Engine) -> None:
    told = await run_turn(engine, "today answer briefly. Today answer briefly! today answer briefly", KEY)
    assert _prefs(engine) == ["answer briefly"]
    notes = [e.text for e in told if isinstance(e, ev.Notice)]
    assert len(notes) == 1, notes


async def test_a_statement_restated_later_keeps_one_entry_ending_as_the_later_one_says(engine: Engine) -> None:
    await run_turn(engine, "for 2 hours answer briefly", KEY)
    told = await run_turn(engine, "Answer briefly for 3 hours.", KEY)
    [pref] = [e for e in engine.state.get(KEY).active if e.field == "temporary_preferences"]
    assert pref.ttl == "3h", pref
    assert any(a["why"].startswith("restated by e:") for a in engine.state.audit(KEY))
    await run_turn(engine, "for 3 hours answer briefly", KEY)  # the same again, later: one entry still
    assert _prefs(engine) == ["answer briefly"]
    assert not any("already" in e.text for e in told if isinstance(e, ev.Notice))


async def test_the_pasted_goal_and_preference_make_one_entry_each(engine: Engine) -> None:
    # F2: "my goal is x, today answer briefly, " * 50,000 made 556 entries (here 2,000 times: past the
    # 20,000 characters the classifier reads, about 555 statements).
    told = await run_turn(engine, "my goal is x, today answer briefly, " * 2_000, KEY)
    active = engine.state.get(KEY).active
    # The classifier reads the first 20,000 characters, cut at a clause break: not "my goal is x, today".
    assert sorted((e.field, e.value, e.expires_at is None) for e in active) == [
        ("current_goal", "x", True), ("temporary_preferences", "answer briefly", False)]
    states = [e for e in engine.events(KEY) if e.type == "state"]
    assert len(states) == 2, len(states)
    done = next(e for e in told if isinstance(e, ev.TurnDone))
    assert done.ledger.total <= done.ledger.budget


async def test_new_carries_one_entry_for_duplicates_an_older_version_wrote(engine: Engine) -> None:
    # F2c: `/new` carried all 556. Transcripts written before this fix hold the duplicates: the fold
    # keeps one, so the carry-over does too.
    await run_turn(engine, "hello", KEY)
    ctx = engine.state.scope_context(KEY)
    for _ in range(3):
        await engine.append(KEY, "state", {
            "op": "add", "field": "temporary_preferences", "value": "answer briefly", "scope": "session",
            "scope_ref": ctx.session_id, "agent": ctx.agent, "key": KEY, "ttl": None, "expires_at": None,
            "until_event": None, "workflow": False, "source": "e:2", "at": engine.now().isoformat()})
    assert _prefs(engine) == ["answer briefly"]
    reset = await engine.new_session(KEY)
    assert reset.carried == 1
    assert _prefs(engine) == ["answer briefly"]


# ------------------------------------------------------------------ 8. tool errors are errors


async def test_a_state_tool_error_is_stored_as_an_error(engine: Engine, data_dir: Path) -> None:
    # F8: `"content": "error: duration too long …", "is_error": false` — the model was told it succeeded.
    prov = engine.provider
    prov.queue(  # type: ignore[union-attr]
        {"text": "", "tool_calls": [
            {"id": "c1", "name": "update_session_state",
             "arguments": {"field": "current_step", "value": "x", "ttl": "99999999d"}},
            {"id": "c2", "name": "update_session_state", "arguments": {"field": "current_step", "value": "y"}}]},
        {"text": "ok"})
    told = await run_turn(engine, "hello", KEY)
    finished = {e.call_id: e for e in told if isinstance(e, ev.ToolCallFinished)}
    assert finished["c1"].is_error and finished["c1"].result.startswith("error: duration too long")
    assert not finished["c2"].is_error
    stored = {e["call_id"]: e for e in all_transcript_events(data_dir) if e["type"] == "tool_result"}
    assert stored["c1"]["is_error"] is True and stored["c2"]["is_error"] is False
