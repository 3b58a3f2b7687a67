"""Session state through the real Engine: TTLs, audit, rebuild, restart, scopes, the block."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from neotask_tui.engine.events import Notice
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.manager import StateError
from neotask_tui.engine.state.model import fold
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import Clock
from tests.engine.state_support import KEY, make_settings, open_engine, st

KEY_B = "agent:other:tui:default"


def fields(eng: Engine, key: str = KEY) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for e in st(eng).get(key).active:
        out.setdefault(e.field, []).append(e.value)
    return out


def audit_reasons(eng: Engine, key: str = KEY) -> dict[str, str]:
    return {f"{a['field']}={a['value']}": str(a["why"]) for a in st(eng).audit(key)}


# ---------------------------------------------------------------------------------------- TTL kinds


async def test_ttl_by_time(engine: Engine, clock: Clock) -> None:
    s = st(engine)
    await s.add_pref(KEY, "answer briefly", for_="2h")
    await s.set(KEY, "current_step", "billing", ttl="30m")
    assert fields(engine) == {"temporary_preferences": ["answer briefly"], "current_step": ["billing"]}
    clock.advance(minutes=31)
    assert fields(engine) == {"temporary_preferences": ["answer briefly"]}
    clock.advance(hours=2)
    assert fields(engine) == {}
    assert s.block(KEY) == ""
    reasons = audit_reasons(engine)
    assert reasons == {"current_step=billing": "time: ttl 30m elapsed",
                       "temporary_preferences=answer briefly": "time: ttl 2h elapsed"}
    when = {a["field"]: a["when"] for a in s.audit(KEY)}
    assert when["current_step"] == datetime(2026, 3, 2, 12, 30, tzinfo=UTC).isoformat()


async def test_ttl_by_event(engine: Engine) -> None:
    s = st(engine)
    await s.set(KEY, "selected_entity", "Pro plan", until_event="checkout_paid")
    await s.add_pref(KEY, "show prices in EUR", until_event="checkout_paid")
    await s.set(KEY, "current_step", "billing")
    assert await s.fire_event(KEY, "unrelated") == 0
    assert len(s.get(KEY).active) == 3
    assert await s.fire_event(KEY, "checkout_paid") == 2
    assert fields(engine) == {"current_step": ["billing"]}
    assert audit_reasons(engine)["selected_entity=Pro plan"] == "event: checkout_paid"
    assert "checkout_paid" in s.get(KEY).fired


async def test_ttl_by_workflow_end(engine: Engine) -> None:
    s = st(engine)
    await s.set_goal(KEY, "fix the build after the TypeScript update")
    await s.set(KEY, "current_step", "check generated types")
    await s.add_open_question(KEY, "which tsc version?")
    await s.add_pref(KEY, "answer briefly")  # a session preference outlives the task
    assert await s.done(KEY) == 3
    assert fields(engine) == {"temporary_preferences": ["answer briefly"]}
    reasons = audit_reasons(engine)
    assert reasons["current_goal=fix the build after the TypeScript update"] == "workflow end: done"
    assert reasons["open_questions=which tsc version?"] == "workflow end: done"


async def test_goal_resolved_by_model_tool_ends_workflow(engine: Engine) -> None:
    from neotask_tui.providers.base import ToolCall

    s = st(engine)
    await s.set_goal(KEY, "book a table")
    res = await s.handle_tool(KEY, ToolCall("c1", "update_session_state",
                                            {"field": "current_goal", "goal_resolved": True}))
    assert res is not None and "goal resolved" in res.text and not res.is_error
    assert fields(engine) == {}
    assert audit_reasons(engine)["current_goal=book a table"] == "workflow end: done"


async def test_ttl_by_scope_change(engine: Engine) -> None:
    s = st(engine)
    await engine.set_session_config(KEY, project="alpha", workspace="ws1")
    await s.set(KEY, "constraints", "no external deps", scope="project")
    await s.set(KEY, "build_cmd", "make ws1", scope="workspace")
    await s.set(KEY, "current_step", "triage")
    assert "Rules (project alpha): no external deps." in s.block(KEY)
    await engine.set_session_config(KEY, project="beta")
    assert fields(engine) == {"build_cmd": ["make ws1"], "current_step": ["triage"]}
    assert audit_reasons(engine)["constraints=no external deps"] == "scope change: project alpha → beta"
    await engine.set_session_config(KEY, workspace="ws2")
    assert fields(engine) == {"current_step": ["triage"]}
    assert audit_reasons(engine)["build_cmd=make ws1"] == "scope change: workspace ws1 → ws2"
    # Switching back does not resurrect anything.
    await engine.set_session_config(KEY, project="alpha")
    assert "no external deps" not in s.block(KEY)


async def test_ttl_manual_clear_and_reset(engine: Engine) -> None:
    s = st(engine)
    await s.set(KEY, "current_step", "billing")
    await s.add_pref(KEY, "answer briefly")
    assert await s.clear(KEY, "current_step") == 1
    assert audit_reasons(engine)["current_step=billing"] == "manual: /state clear"
    with pytest.raises(StateError):
        await s.clear(KEY, "current_step")
    old = engine.current_record(KEY).session_id
    await engine.reset_session(KEY)
    assert engine.current_record(KEY).session_id != old
    assert s.get(KEY).active == [] and s.block(KEY) == ""
    # The reset is recorded in the old transcript: its audit shows why the preference ended.
    old_state = fold(engine.store.events(old), engine.now())
    assert not old_state.active
    assert {e.field: e.expired_reason for e in old_state.expired}["temporary_preferences"] == "manual reset"
    # ... and in the new session's audit, which `/state audit` and `neotask state --audit` show
    # (red team 21: it was empty, so what /reset ended could not be found).
    assert audit_reasons(engine) == {"temporary_preferences=answer briefly": "manual reset"}
    r = await engine.new_session(KEY)  # what the reset ended is not carried by a /new after it
    assert r.carried == 0 and s.get(KEY).active == []


async def _migration_state(eng: Engine, clock: Clock) -> None:
    """A goal, a project rule, a preference within its TTL and one past it."""
    s = st(eng)
    await eng.set_session_config(KEY, project="alpha")
    await s.set_goal(KEY, "migrate the billing service")
    await s.set(KEY, "constraints", "do not use Redis anywhere in the migration", scope="project")
    await s.add_pref(KEY, "answer briefly", for_="2h")
    await s.add_pref(KEY, "show diffs", for_="10m")
    clock.advance(minutes=11)


async def test_new_session_carries_the_state_still_active(engine: Engine, clock: Clock) -> None:
    await _migration_state(engine, clock)
    old = engine.current_record(KEY).session_id
    r = await engine.new_session(KEY)
    assert r.carried == 3 and engine.current_record(KEY).session_id != old
    view = st(engine).get(KEY)
    assert fields(engine) == {"current_goal": ["migrate the billing service"],
                              "constraints": ["do not use Redis anywhere in the migration"],
                              "temporary_preferences": ["answer briefly"]}
    assert {e.carried_from for e in view.active} == {old}
    assert all(e.carried_note == f"carried over by /new from {old}" for e in view.active)
    assert "do not use Redis anywhere in the migration" in st(engine).block(KEY)
    # Carried entries are entries of the new session: their ids are its own, clearing one works.
    new_ids = {e.id for e in engine.events(KEY) if e.type == "state"}
    assert {e.id for e in view.active} <= new_ids
    goal = next(e for e in view.active if e.field == "current_goal")
    await st(engine).clear(KEY, "temporary_preferences", item=next(
        e.id for e in view.active if e.field == "temporary_preferences"))
    assert [e.id for e in st(engine).get(KEY).active if e.field == "current_goal"] == [goal.id]
    # A carried TTL runs out when it would have in the old session, with the TTL as the reason.
    await st(engine).add_pref(KEY, "use tables", for_="1h")
    await engine.new_session(KEY)
    clock.advance(minutes=61)
    assert "temporary_preferences" not in fields(engine)
    assert audit_reasons(engine)["temporary_preferences=use tables"] == "time: ttl 1h elapsed"


async def test_carried_state_still_expires_by_scope_change_event_and_done(engine: Engine, clock: Clock) -> None:
    s = st(engine)
    await _migration_state(engine, clock)
    await s.add_pref(KEY, "verbose logs", until_event="deploy")
    await engine.new_session(KEY)
    await engine.set_session_config(KEY, project="beta")
    assert audit_reasons(engine)["constraints=do not use Redis anywhere in the migration"] == (
        "scope change: project alpha → beta")
    await s.fire_event(KEY, "deploy")
    assert "verbose logs" not in s.block(KEY)
    await s.done(KEY)
    assert fields(engine) == {"temporary_preferences": ["answer briefly"]}


async def test_reset_carries_nothing_after_a_new(engine: Engine, clock: Clock) -> None:
    await _migration_state(engine, clock)
    await engine.new_session(KEY)
    r = await engine.reset_session(KEY)
    assert r.carried == 0 and st(engine).get(KEY).active == [] and st(engine).block(KEY) == ""


async def test_carried_state_survives_a_restart_and_session_expiry_carries(clock: Clock) -> None:
    eng = open_engine(clock)
    await st(eng).set_goal(KEY, "fix CSV import")
    await st(eng).set_session_expiry(KEY, "1d")
    await eng.new_session(KEY)
    before = st(eng).get(KEY).to_dict()
    await eng.aclose()
    eng2 = open_engine(clock)
    try:
        assert st(eng2).get(KEY).to_dict() == before
        assert fields(eng2) == {"current_goal": ["fix CSV import"]}
        assert st(eng2).get(KEY).session_expires_at == clock.now + timedelta(days=1)
        clock.advance(days=1, minutes=1)
        assert fields(eng2) == {}
    finally:
        await eng2.aclose()


async def test_daily_reset_carries_state_and_idle_expiry_ends_it(clock: Clock) -> None:
    settings = make_settings()
    settings.session.daily_reset_hour = 4
    eng = Engine(settings, provider=ScriptedProvider(), clock=clock, tz=UTC)
    try:
        await st(eng).set_goal(KEY, "fix CSV import")
        clock.advance(days=1)
        _, reset = eng.route(KEY)
        assert reset is not None and reset.reason == "daily" and reset.carried == 1
        assert [e.carried_note for e in st(eng).get(KEY).active] == [
            f"carried over by the daily reset from {reset.old_session_id}"]
        eng.settings.session.daily_reset_hour = -1
        eng.settings.session.idle_reset_minutes = 30
        clock.advance(minutes=31)
        _, reset = eng.route(KEY)
        assert reset is not None and reset.reason == "idle" and reset.carried == 0
        assert st(eng).get(KEY).active == []
        assert audit_reasons(eng)["current_goal=fix CSV import"] == "idle expiry: no activity for 30 minutes"
        # Undoing the automatic reset brings the session back with its state.
        await eng.undo_reset(KEY)
        assert fields(eng) == {"current_goal": ["fix CSV import"]}
    finally:
        await eng.aclose()


async def test_session_level_expiry_absolute_and_relative(engine: Engine, clock: Clock) -> None:
    s = st(engine)
    await s.set(KEY, "current_step", "escalate")
    await s.set_session_expiry(KEY, "1d")
    assert s.get(KEY).session_expires_at == clock.now + timedelta(days=1)
    assert "Session state expires" in s.block(KEY)
    clock.advance(hours=25)
    assert s.get(KEY).active == []
    assert audit_reasons(engine)["current_step=escalate"].startswith("session expired")
    # Entries set after the expiry are live again (the expiry applied to the old state).
    await s.set(KEY, "current_step", "follow up")
    assert fields(engine) == {"current_step": ["follow up"]}
    with pytest.raises(StateError):
        await s.set_session_expiry(KEY, "next tuesday-ish")


async def test_session_expiry_event_plus_delay(engine: Engine, clock: Clock) -> None:
    """The lecture's ``expires_at = ticket_closed + 7 days``."""
    s = st(engine)
    await s.set(KEY, "selected_workspace", "acme-prod")
    await s.set(KEY, "expires_at", "ticket_closed + 7d")  # via the generic setter, like the model would
    assert s.get(KEY).session_expires_at is None  # not known until the ticket closes
    clock.advance(days=30)
    assert fields(engine) == {"selected_workspace": ["acme-prod"]}
    await s.fire_event(KEY, "ticket_closed")
    assert s.get(KEY).session_expires_at == clock.now + timedelta(days=7)
    clock.advance(days=6)
    assert fields(engine) == {"selected_workspace": ["acme-prod"]}
    clock.advance(days=1, seconds=1)
    assert fields(engine) == {}
    assert audit_reasons(engine)["selected_workspace=acme-prod"] == "session expired (ticket_closed + 7d)"


# ---------------------------------------------------------------------------- audit, view, rebuild


async def test_audit_log_contents(engine: Engine, clock: Clock) -> None:
    s = st(engine)
    await s.set(KEY, "current_step", "verify_purchase", source="model tool")
    clock.advance(minutes=1)
    await s.set(KEY, "current_step", "billing")
    entries = s.audit(KEY)
    assert len(entries) == 1
    a = entries[0]
    assert a["field"] == "current_step" and a["value"] == "verify_purchase"
    assert a["source"] == "model tool" and a["why"].startswith("replaced by user command (e:")
    assert a["set_at"] == datetime(2026, 3, 2, 12, 0, tzinfo=UTC).isoformat()
    assert a["when"] == datetime(2026, 3, 2, 12, 1, tzinfo=UTC).isoformat()
    assert a["scope"] == "session" and a["agent"] == "main"
    # Recently expired entries stay visible (struck through in the TUI) for a while, then drop off.
    assert [e.value for e in s.get(KEY).expired] == ["verify_purchase"]
    clock.advance(hours=1)
    assert s.get(KEY).expired == []
    assert len(s.audit(KEY)) == 1


async def test_state_events_rebuild_state_at_any_point(engine: Engine, clock: Clock) -> None:
    s = st(engine)
    await s.set_goal(KEY, "refund")
    await s.set(KEY, "current_step", "verify_purchase")
    mid = list(engine.events(KEY))
    clock.advance(minutes=5)
    await s.set(KEY, "current_step", "billing")
    await s.add_open_question(KEY, "confirm purchase email")
    events = engine.events(KEY)
    lines = [e for e in events if e.type == "state"]
    assert [e.data["op"] for e in lines] == ["set", "set", "set", "add"]
    assert all({"field", "value", "scope", "source", "at"} <= set(e.data) for e in lines)
    then = fold(mid, clock.now - timedelta(minutes=5))
    assert {e.field: e.value for e in then.active.values()} == {"current_goal": "refund",
                                                                "current_step": "verify_purchase"}
    now = fold(events, clock.now)
    # The same question answered from the full transcript by time alone.
    again = fold(events, clock.now - timedelta(minutes=5), as_of=True)
    assert {e.field: e.value for e in again.active.values()} == {
        e.field: e.value for e in then.active.values()}
    assert {e.field: e.value for e in now.active.values()} == {
        "current_goal": "refund", "current_step": "billing", "open_questions": "confirm purchase email"}


async def test_restart_keeps_state(clock: Clock) -> None:
    eng = open_engine(clock)
    await st(eng).set_goal(KEY, "fix CSV import")
    await st(eng).add_pref(KEY, "answer briefly", for_="2h")
    await st(eng).set(KEY, "current_step", "old")
    await st(eng).clear(KEY, "current_step")
    before = st(eng).get(KEY).to_dict()
    await eng.aclose()
    eng2 = open_engine(clock)
    try:
        assert st(eng2).get(KEY).to_dict() == before
        assert len(st(eng2).audit(KEY)) == 1
        clock.advance(hours=3)
        assert fields(eng2) == {"current_goal": ["fix CSV import"]}
    finally:
        await eng2.aclose()


async def test_state_survives_compaction_lineage(engine: Engine) -> None:
    s = st(engine)
    prov = engine.provider
    assert isinstance(prov, ScriptedProvider)
    await s.set_goal(KEY, "ship the importer")
    for i in range(8):
        prov.queue(f"reply {i}")
        [e async for e in engine.send(f"message number {i} about the importer", KEY)]
    old = engine.current_record(KEY).session_id
    prov.queue("Summary: the user works on the importer.")
    await engine.compact(KEY)
    assert engine.current_record(KEY).session_id != old
    assert fields(engine)["current_goal"] == ["ship the importer"]
    await s.done(KEY)
    assert "current_goal" not in fields(engine)


# ------------------------------------------------------------------------------ scopes and the block


async def test_scope_isolation_between_agents(engine: Engine) -> None:
    s = st(engine)
    await s.set_goal(KEY, "agent A secret plan")
    await s.set(KEY, "favourite", "A only", scope="user")
    await s.add_pref(KEY, "answer in haiku")
    assert "agent A secret plan" in s.block(KEY)
    assert s.block(KEY_B) == ""
    assert s.get(KEY_B).active == []
    # Even a state line copied into B's transcript (e.g. by a restore gone wrong) is not admitted.
    src = next(e for e in engine.events(KEY) if e.type == "state" and e.data["field"] == "favourite")
    await engine.append(KEY_B, "state", dict(src.data))
    assert s.block(KEY_B) == ""
    ctx = await engine.context(KEY_B, "hello")
    assert all("agent A" not in m.content and "haiku" not in m.content for m in ctx.messages)
    ctx_a = await engine.context(KEY, "hello")
    assert any("agent A secret plan" in m.content for m in ctx_a.messages)


async def test_chat_scope_stays_in_its_chat(engine: Engine) -> None:
    s = st(engine)
    other_chat = "agent:main:tui:other"
    await s.set(KEY, "ticket", "ABC-1", scope="chat")
    await s.set(KEY, "tone", "formal", scope="agent")
    src = [e for e in engine.events(KEY) if e.type == "state"]
    for e in src:
        await engine.append(other_chat, "state", dict(e.data))
    assert fields(engine, other_chat) == {"tone": ["formal"]}


async def test_block_format_matches_lecture(engine: Engine) -> None:
    s = st(engine)
    await engine.set_session_config(KEY, project="acme")
    await s.set_goal(KEY, "troubleshoot CSV import issue")
    await s.set(KEY, "selected_entity", "acme-prod")
    await s.set(KEY, "current_step", "escalate to engineering")
    await s.add_pref(KEY, "user wants follow-up by email", until_event="ticket_closed")
    await s.set(KEY, "constraints", "no external deps", scope="project")
    await s.add_open_question(KEY, "sample CSV")
    await s.add_open_question(KEY, "timezone of import")
    block = s.block(KEY)
    assert block.splitlines() == [
        "Current session:",
        "- Goal: troubleshoot CSV import issue.",
        "- Selected: acme-prod.",
        "- Current step: escalate to engineering.",
        "- Preferences (this session): user wants follow-up by email (until ticket_closed).",
        "- Rules (project acme): no external deps.",
        "- Open questions: sample CSV; timezone of import.",
    ]
    ctx = await engine.context(KEY, "next?")
    assert ctx.ledger.sections["state"] >= engine.count_text(block) > 0  # counted in the ledger
    assert any(m.content == block for m in ctx.messages)


async def test_bad_arguments_raise_state_error(engine: Engine) -> None:
    s = st(engine)
    with pytest.raises(StateError):
        await s.set(KEY, "bad field!", "x")
    with pytest.raises(StateError):
        await s.set(KEY, "x", "y", scope="galaxy")
    with pytest.raises(StateError):
        await s.add_pref(KEY, "x", for_="soonish")
    with pytest.raises(StateError):
        await s.resolve_open_question(KEY, "1")
    with pytest.raises(StateError):
        await s.set_goal(KEY, "  ")


async def test_values_are_redacted_and_list_items_deduplicated(engine: Engine) -> None:
    s = st(engine)
    await s.set(KEY, "note", "use token: ghp_" + "a1B2c3D4" * 5)
    assert "ghp_" not in str(fields(engine)["note"])
    await s.add_pref(KEY, "answer briefly")
    await s.add_pref(KEY, "answer briefly")
    assert fields(engine)["temporary_preferences"] == ["answer briefly"]


async def test_open_questions_resolve_by_position_and_text(engine: Engine) -> None:
    s = st(engine)
    await s.add_open_question(KEY, "attach sample CSV")
    await s.add_open_question(KEY, "confirm timezone of import")
    await s.resolve_open_question(KEY, "timezone", answer="UTC")
    await s.resolve_open_question(KEY, "1")
    assert fields(engine) == {}
    assert audit_reasons(engine)["open_questions=confirm timezone of import"] == "resolved: UTC"


async def test_just_for_today_keeps_the_value_and_ends_at_local_midnight(
    engine: Engine, clock: Clock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        clock.set(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))  # 11:00 in Berlin
        prov = engine.provider
        assert isinstance(prov, ScriptedProvider)
        prov.queue("ok")
        notices = [e.text for e in [x async for x in engine.send("Just for today answer briefly", KEY)]
                   if isinstance(e, Notice)]
        [entry] = [e for e in st(engine).get(KEY).active if e.field == "temporary_preferences"]
        assert entry.value == "answer briefly"
        assert entry.expires_at == datetime(2025, 3, 1, 23, 0, tzinfo=UTC)  # midnight in Berlin
        assert any("until the end of the day" in n for n in notices)
        clock.set(datetime(2025, 3, 1, 22, 59, tzinfo=UTC))
        assert fields(engine)["temporary_preferences"] == ["answer briefly"]
        clock.set(datetime(2025, 3, 1, 23, 1, tzinfo=UTC))
        assert "temporary_preferences" not in fields(engine)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize(("text", "goal", "pref", "ends"), [
    ("my goal is ship v9, today answer briefly", "ship v9", "answer briefly",
     datetime(2025, 3, 1, 23, 0, tzinfo=UTC)),  # midnight in Berlin
    ("цель: выпустить v9, в течение 2 часов отвечай коротко", "выпустить v9", "отвечай коротко",
     datetime(2025, 3, 1, 12, 0, tzinfo=UTC)),
])
async def test_a_goal_then_a_preference_with_its_own_period_set_both(
    engine: Engine, clock: Clock, monkeypatch: pytest.MonkeyPatch, text: str, goal: str, pref: str,
    ends: datetime,
) -> None:
    # Red team: the goal took the whole sentence ("ship v9, today answer briefly") and expired at
    # midnight; no preference was recorded.
    import time

    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        clock.set(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
        prov = engine.provider
        assert isinstance(prov, ScriptedProvider)
        prov.queue("ok")
        [x async for x in engine.send(text, KEY)]
        active = {e.field: e for e in st(engine).get(KEY).active}
        assert (active["current_goal"].value, active["current_goal"].expires_at) == (goal, None)
        assert (active["temporary_preferences"].value, active["temporary_preferences"].expires_at) == (pref, ends)
        clock.set(datetime(2025, 3, 2, 1, 0, tzinfo=UTC))
        assert fields(engine) == {"current_goal": [goal]}
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()



async def test_a_do_not_clause_after_a_timed_preference_is_a_rule_ending_with_it(engine: Engine, clock: Clock) -> None:
    # Red team 30, F4: "answer briefly, do not mention the client name" was one preference for 2h: the rule
    # was no rule (the state block leaves preferences out first).
    clock.set(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
    prov = engine.provider
    assert isinstance(prov, ScriptedProvider)
    prov.queue("ok")
    [x async for x in engine.send("for 2 hours answer briefly, do not mention the client name", KEY)]
    active = {e.field: e for e in st(engine).get(KEY).active}
    ends = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    assert (active["temporary_preferences"].value, active["temporary_preferences"].expires_at) == (
        "answer briefly", ends)
    assert (active["constraints"].value, active["constraints"].expires_at) == ("do not mention the client name", ends)
    clock.set(datetime(2025, 3, 1, 12, 1, tzinfo=UTC))
    assert fields(engine) == {}


async def test_a_wrapped_preference_is_one_entry_with_the_same_preference(engine: Engine, clock: Clock) -> None:
    # Red team 30, F5: "(today answer briefly)" was stored as "( answer briefly)", a second entry.
    clock.set(datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
    prov = engine.provider
    assert isinstance(prov, ScriptedProvider)
    prov.queue("ok")
    prov.queue("ok")
    [x async for x in engine.send("today answer briefly. Today answer briefly! (today answer briefly)", KEY)]
    [x async for x in engine.send("(do not use emojis)", KEY)]
    assert fields(engine) == {"temporary_preferences": ["answer briefly"], "constraints": ["do not use emojis"]}
