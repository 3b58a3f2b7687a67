"""README promises red team 29 broke in session state: a period past the 3650-day cap said in chat
crashed the turn (traceback, the message stored without a reply); one pasted message restating a
goal and a preference 50,000 times made 556 identical entries, a state block larger than the window
and an auto-compaction (empty summary, a new session) on every later turn; a state tool's error
result was stored as a success."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from neotask_tui.engine import events as ev
from neotask_tui.engine.context.assembly import Ledger
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.model import MAX_DURATION_DAYS
from tests.faults.helpers import KEY, all_transcript_events, run_turn, scripted_engine
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


# ------------------------------------------------------------------ 2b. the state block's share


@pytest.fixture
async def small() -> AsyncIterator[Engine]:
    async with scripted_engine(NEOTASK_CONTEXT_WINDOW_TOKENS="4096", NEOTASK_COMPACTION_MIN_MESSAGES="2") as e:
        yield e


async def _many(engine: Engine, rules: int, prefs: int) -> None:
    await run_turn(engine, "hello", KEY)
    for i in range(rules):
        await engine.state.set(KEY, "constraints", f"do not touch the module number {i} of the billing service")
    for i in range(prefs):
        await engine.state.add_pref(KEY, f"answer in the house style number {i} with short paragraphs")


def _state_text(ctx: object) -> str:
    return "\n".join(m.content for m, s in zip(ctx.messages, ctx.section_of, strict=True)  # type: ignore[attr-defined]
                     if s == "state")


async def test_the_state_block_keeps_within_its_share_and_says_what_it_left_out(small: Engine) -> None:
    from neotask_tui.engine.context.budget import state_budget

    await _many(small, rules=5, prefs=300)
    most = state_budget(small.settings, small.window())
    ctx = await small.preview(KEY)
    led = ctx.ledger
    assert 0 < led.sections["state"] <= most < led.budget
    assert led.total <= led.budget
    text = _state_text(ctx)
    for i in range(5):  # every "do not" is sent
        assert f"do not touch the module number {i} " in text
    assert "style number 299 " in text and "style number 0 " not in text  # the newest preferences first
    kept = text.count("house style number")
    assert led.state_left_out == 300 - kept > 0
    assert f"{led.state_left_out} more entries of the session state are left out here" in text and "/state" in text
    assert any(f"{led.state_left_out:,} entries are left out of this call" in n and "/state" in n
               for n in led.notices), led.notices
    from neotask_tui.commands import dispatch

    shown = await dispatch(small, KEY, "/context")
    assert f"note: session state: {led.state_left_out:,} entries are left out" in shown.text
    assert len(small.state.get(KEY).active) == 305  # left out of the call, not of the state


async def test_rules_are_left_out_last_and_never_silently(small: Engine) -> None:
    await _many(small, rules=150, prefs=20)
    ctx = await small.preview(KEY)
    text, led = _state_text(ctx), ctx.ledger
    assert "house style" not in text  # no preference is sent while a rule is left out
    assert "do not touch the module number 149 " in text
    sent = text.count("do not touch the module number")
    out_rules = 150 - sent
    assert out_rules > 0 and led.state_left_out == out_rules + 20
    assert f", {out_rules} of them rules; they still apply" in text
    assert any(f"({out_rules:,} of them rules)" in n for n in led.notices), led.notices


async def test_a_state_over_its_share_does_not_compact_every_turn(small: Engine) -> None:
    # F2: with the state larger than the window each turn compacted the turn before (38 -> 37 tokens,
    # an empty summary) into a new session.
    await _many(small, rules=0, prefs=400)
    sid = small.current_record(KEY).session_id
    for text in ("hi", "and now?", "still there?", "ok"):
        told = await run_turn(small, text, KEY)
        assert not any(isinstance(e, (ev.Compacted, ev.TurnFailed)) for e in told), told
        done = next(e for e in told if isinstance(e, ev.TurnDone))
        assert done.ledger.total <= done.ledger.budget
    assert small.current_record(KEY).session_id == sid


async def test_auto_compaction_waits_when_what_overflows_is_not_the_history(small: Engine) -> None:
    for text in ("one", "two", "three", "four"):
        await run_turn(small, text, KEY)
    budget = small.window() - small.settings.context.reply_reserve_tokens
    over = Ledger(sections={"system": 30, "state": 300, "recent": 60, "new_message": int(budget * 0.8)},
                  total=int(budget * 0.8) + 390, budget=budget, window=small.window(), fill=0.9, strategy="summary")
    assert not small.compactor.should_auto(KEY, over)  # compacting the 60 tokens of history gains nothing
    history = Ledger(sections={"system": 30, "recent": int(budget * 0.85)}, total=int(budget * 0.85) + 30,
                     budget=budget, window=small.window(), fill=0.9, strategy="summary")
    assert small.compactor.should_auto(KEY, history)  # the history is what overflows: compact it


async def test_an_overflow_with_nothing_to_compact_fails_the_turn_cleanly(engine: Engine) -> None:
    # With the state larger than the window, the overflow retry compacted the turn's own message away
    # (38 -> 37 tokens, an empty summary, a new session) and the model was called without it.
    prov = engine.provider
    prov.queue({"error": {"kind": "context_overflow", "message": "too long", "retryable": False}})  # type: ignore[union-attr]
    told = await run_turn(engine, "hello", KEY)
    failed = [e for e in told if isinstance(e, ev.TurnFailed)]
    assert failed and failed[0].error_kind == "context_overflow" and "nothing to compact" in failed[0].error
    assert not any(isinstance(e, ev.Compacted) for e in told)
    assert [e.content for e in engine.events(KEY) if e.type == "message"] == ["hello"]  # kept, in the same session


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


async def test_the_audit_names_the_message_that_restated_or_replaced_an_entry(engine: Engine) -> None:
    # Red team 30, F11: "restated by e:9" named the state record; /state credits the message (e:8).
    await run_turn(engine, "for 2 hours answer briefly", KEY)
    await run_turn(engine, "Answer briefly for 3 hours.", KEY)
    msgs = [e.id for e in engine.events(KEY) if e.type == "message" and e.role == "user"]
    [pref] = [e for e in engine.state.get(KEY).active if e.field == "temporary_preferences"]
    assert pref.source == f"e:{msgs[-1]}"
    [restated] = [a for a in engine.state.audit(KEY) if a["why"].startswith("restated by")]
    assert restated["why"] == f"restated by e:{msgs[-1]}"
    await engine.state.set(KEY, "current_step", "verify", source="model tool")
    await engine.state.set(KEY, "current_step", "billing", source="model tool")
    [replaced] = [a for a in engine.state.audit(KEY) if a["why"].startswith("replaced by")]
    assert re.fullmatch(r"replaced by model tool \(e:\d+\)", replaced["why"]), replaced
