"""The Engine facade with the scripted provider: routing, turns, counters, lifecycle, undo."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from neotask_tui import paths
from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.facade import Engine
from neotask_tui.errors import UserError
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.storage.store import SessionStore
from tests.doubles import Clock

KEY = "agent:main:tui:default"


def make(settings: Settings | None = None, clock: Clock | None = None, **kw: Any) -> tuple[Engine, ScriptedProvider]:
    s = settings or Settings()
    s.memory.enabled = False
    prov = ScriptedProvider()
    return Engine(s, provider=prov, clock=clock, tz=ZoneInfo("UTC"), **kw), prov


async def run(engine: Engine, text: str, key: str = KEY) -> list[ev.EngineEvent]:
    return [e async for e in engine.send(text, key)]


async def test_turn_stores_messages_and_counters() -> None:
    engine, prov = make()
    prov.queue({"text": "Hello there", "usage": {"input": 20, "output": 3, "cache_read": 5, "cache_write": 2}})
    out = await run(engine, "hi")
    done = next(e for e in out if isinstance(e, ev.TurnDone))
    assert done.text == "Hello there" and done.usage.reported is True
    assert "".join(e.text for e in out if isinstance(e, ev.TokenDelta)) == "Hello there"
    evs = engine.events(KEY)
    assert [e.type for e in evs] == ["session", "message", "message"]
    assert evs[1].role == "user" and evs[2].data["usage"]["cache_read"] == 5
    rec = engine.store.get(KEY)
    assert rec is not None and (rec.counters.input, rec.counters.output, rec.counters.cache_read,
                                rec.counters.cache_write) == (20, 3, 5, 2)
    on_disk = json.loads(paths.sessions_index().read_text())["sessions"][KEY]["counters"]
    assert on_disk["input"] == 20 and on_disk["cache_write"] == 2
    await engine.aclose()


async def test_unreported_usage_is_estimated_and_labelled() -> None:
    engine, prov = make()
    prov.queue("no usage here")
    out = await run(engine, "hello")
    done = next(e for e in out if isinstance(e, ev.TurnDone))
    assert done.usage.reported is False and done.usage.output_tokens > 0
    # everything the call sent: the messages and the tool definitions with them (red team 39)
    assert engine.tool_tokens() > 0 and done.usage.input_tokens == done.ledger.total + engine.tool_tokens()
    assert engine.store.get(KEY).counters.estimated_turns == 1  # type: ignore[union-attr]
    await engine.aclose()


async def test_routing_same_key_same_session_and_restart_survives() -> None:
    engine, _prov = make()
    await run(engine, "one")
    sid = engine.current_record(KEY).session_id
    await run(engine, "two")
    assert engine.current_record(KEY).session_id == sid
    await engine.aclose()
    engine2, _ = make()
    assert engine2.current_record(KEY).session_id == sid
    assert [e.content for e in engine2.events(KEY) if e.type == "message"][:3] == ["one", "(scripted) one", "two"]
    await engine2.aclose()


async def test_new_and_reset_keep_old_transcript() -> None:
    engine, _ = make()
    await run(engine, "first")
    old = engine.current_record(KEY).session_id
    r = await engine.new_session(KEY)
    assert r.old_session_id == old and r.new_session_id != old
    assert engine.store.is_archived(old)
    r2 = await engine.reset_session(KEY)
    assert r2.reason == "reset" and engine.store.is_archived(r.new_session_id)
    arch = engine.transcript(KEY, archived=True)
    assert isinstance(arch, dict) and old in arch
    assert any(e.content == "first" for e in arch[old])
    await engine.aclose()


async def test_archived_sessions_list_their_counters() -> None:
    engine, prov = make()
    prov.queue({"text": "one", "usage": {"input": 20, "output": 3, "cache_read": 5, "cache_write": 2}})
    prov.queue({"text": "two", "usage": {"input": 30, "output": 4}})
    await run(engine, "first")
    await run(engine, "second")
    old = engine.current_record(KEY).session_id
    await engine.new_session(KEY)
    rows = {r["session_id"]: r for r in engine.list_sessions(include_archived=True)}
    assert rows[old]["archived"] is True
    c = rows[old]["counters"]
    assert (c["input"], c["output"], c["cache_read"], c["cache_write"]) == (50, 7, 5, 2)
    await engine.aclose()


async def test_daily_reset_on_next_message_and_undo() -> None:
    s = Settings()
    s.session.daily_reset_hour = 4
    clock = Clock(datetime(2026, 6, 10, 22, 0, tzinfo=UTC))
    engine, _ = make(s, clock)
    await run(engine, "evening")
    old = engine.current_record(KEY).session_id
    nr = engine.next_reset(KEY)
    assert nr is not None and nr[0] == datetime(2026, 6, 11, 4, 0, tzinfo=UTC) and nr[1] == "daily"
    clock.set(datetime(2026, 6, 11, 3, 59, tzinfo=UTC))
    out = await run(engine, "still night")
    assert not any(isinstance(e, ev.SessionReset) for e in out)
    clock.set(datetime(2026, 6, 11, 9, 0, tzinfo=UTC))
    out = await run(engine, "morning")
    resets = [e for e in out if isinstance(e, ev.SessionReset)]
    assert len(resets) == 1 and resets[0].reason == "daily" and resets[0].undoable
    new = engine.current_record(KEY)
    assert new.session_id != old and new.auto_reset and new.auto_reset["previous_session_id"] == old
    assert resets[0].line == (f"new session {new.session_id} (daily reset); the previous one, {old}, is archived"
                              " · daily reset at 2026-06-11 04:00 UTC")
    # the morning message went to the new session
    assert next(e.content for e in engine.events(KEY) if e.type == "message") == "morning"
    rec = await engine.undo_reset(KEY)
    assert rec.session_id == old
    assert [e.content for e in engine.events(KEY) if e.role == "user"] == ["evening", "still night"]
    assert engine.store.is_archived(new.session_id)  # nothing lost
    await engine.aclose()


async def test_idle_expiry_resets() -> None:
    s = Settings()
    s.session.daily_reset_hour = -1
    s.session.idle_reset_minutes = 30
    clock = Clock(datetime(2026, 6, 10, 10, 0, tzinfo=UTC))
    engine, _ = make(s, clock)
    await run(engine, "a")
    clock.advance(minutes=29)
    assert not [e for e in await run(engine, "b") if isinstance(e, ev.SessionReset)]
    clock.advance(minutes=31)
    resets = [e for e in await run(engine, "c") if isinstance(e, ev.SessionReset)]
    assert resets and resets[0].reason == "idle"
    assert "(idle expiry); the previous one, " in resets[0].line, resets[0].line
    assert resets[0].line.endswith(", is archived · idle for more than 30 minutes"), resets[0].line
    await engine.aclose()


def _resets(out: list[ev.EngineEvent]) -> list[ev.SessionReset]:
    return [e for e in out if isinstance(e, ev.SessionReset)]


def _user_texts(engine: Engine) -> list[str | None]:
    return [e.content for e in engine.events(KEY) if e.type == "message" and e.role == "user"]


async def test_an_undone_daily_reset_sticks_until_the_next_boundary() -> None:
    """Red team 37, finding 4: after undo-reset the next message went to the same reset again."""
    s = Settings()
    s.session.daily_reset_hour = 4
    clock = Clock(datetime(2026, 6, 10, 22, 0, tzinfo=UTC))
    engine, _ = make(s, clock)
    await run(engine, "evening")
    old = engine.current_record(KEY).session_id
    clock.set(datetime(2026, 6, 11, 9, 0, tzinfo=UTC))
    assert _resets(await run(engine, "morning"))
    replaced = engine.current_record(KEY).session_id
    clock.set(datetime(2026, 6, 11, 9, 5, tzinfo=UTC))
    undone = await engine.undo_reset(KEY)
    assert (undone.session_id, undone.replaced_session_id, undone.messages_left) == (old, replaced, 1)
    # the message sent in between is not carried: the undo says where it stays
    assert undone.line == (f"restored {old} (the daily reset is undone); your 1 message since the reset "
                           f"stays in {replaced}, now archived")
    assert engine.store.is_archived(replaced)
    clock.set(datetime(2026, 6, 11, 9, 10, tzinfo=UTC))
    assert not _resets(await run(engine, "continue where we were"))
    assert engine.current_record(KEY).session_id == old
    assert _user_texts(engine) == ["evening", "continue where we were"]
    marker = next(e for e in engine.events(KEY) if e.type == "marker")
    assert marker.data["kind"] == "reset_undone" and marker.data["replaced_session_id"] == replaced
    with pytest.raises(UserError, match="no automatic reset to undo"):
        await engine.undo_reset(KEY)
    # the next boundary resets as usual
    clock.set(datetime(2026, 6, 12, 4, 1, tzinfo=UTC))
    resets = _resets(await run(engine, "next day"))
    assert len(resets) == 1 and resets[0].reason == "daily" and resets[0].old_session_id == old
    await engine.aclose()


async def test_an_undone_idle_reset_waits_for_a_new_idle_period() -> None:
    s = Settings()
    s.session.daily_reset_hour = -1
    s.session.idle_reset_minutes = 30
    clock = Clock(datetime(2026, 6, 10, 10, 0, tzinfo=UTC))
    engine, _ = make(s, clock)
    await run(engine, "a")
    old = engine.current_record(KEY).session_id
    clock.advance(minutes=31)
    assert _resets(await run(engine, "b"))
    clock.advance(minutes=1)
    undone = await engine.undo_reset(KEY)
    assert undone.reason == "idle" and undone.line.startswith(f"restored {old} (the idle expiry is undone); ")
    clock.advance(minutes=29)
    assert not _resets(await run(engine, "c"))
    assert engine.current_record(KEY).session_id == old and _user_texts(engine) == ["a", "c"]
    clock.advance(minutes=30)
    resets = _resets(await run(engine, "d"))
    assert len(resets) == 1 and resets[0].reason == "idle" and resets[0].old_session_id == old
    await engine.aclose()


async def test_undo_reset_survives_a_rebuilt_sessions_json() -> None:
    """Red team 37, finding 6: a rebuilt index lost the record of the automatic reset."""
    s = Settings()
    s.session.daily_reset_hour = 4
    clock = Clock(datetime(2026, 6, 10, 22, 0, tzinfo=UTC))
    engine, _ = make(s, clock)
    await run(engine, "evening")
    old = engine.current_record(KEY).session_id
    clock.set(datetime(2026, 6, 11, 9, 0, tzinfo=UTC))
    await run(engine, "morning")
    before = engine.current_record(KEY).auto_reset
    await engine.aclose()
    paths.sessions_index().unlink()
    engine, _ = make(s, clock)
    assert any("sessions.json was missing" in n for n in engine.notices)
    assert engine.current_record(KEY).auto_reset == before
    assert (await engine.undo_reset(KEY)).session_id == old
    await engine.aclose()
    # the undo is in the transcript too: rebuilt again, the restored session is not reset again
    paths.sessions_index().unlink()
    engine, _ = make(s, clock)
    rec = engine.current_record(KEY)
    assert rec.session_id == old and rec.auto_reset is None
    assert not _resets(await run(engine, "continue"))
    assert engine.current_record(KEY).session_id == old
    await engine.aclose()


async def test_a_rebuilt_index_finds_the_session_an_older_reset_replaced() -> None:
    """A header written before it recorded ``auto_reset``: the archived session of the key last
    active before the reset's session began is the one undo-reset brings back."""
    s = Settings()
    s.session.daily_reset_hour = 4
    clock = Clock(datetime(2026, 6, 10, 22, 0, tzinfo=UTC))
    engine, _ = make(s, clock)
    await run(engine, "older")
    await engine.new_session(KEY)
    clock.set(datetime(2026, 6, 10, 23, 0, tzinfo=UTC))
    await run(engine, "evening")
    old = engine.current_record(KEY).session_id
    clock.set(datetime(2026, 6, 11, 9, 0, tzinfo=UTC))
    await run(engine, "morning")
    new = engine.current_record(KEY).session_id
    await engine.aclose()
    tp = paths.transcript_path(new)
    lines = tp.read_text().splitlines()
    head = json.loads(lines[0])
    assert head.pop("auto_reset")["previous_session_id"] == old
    tp.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    paths.sessions_index().unlink()
    engine, _ = make(s, clock)
    assert (await engine.undo_reset(KEY)).session_id == old
    await engine.aclose()


def test_a_reset_line_says_why_and_what_was_archived() -> None:
    """One line for a new session, whichever front end shows it (each adds how to undo it there)."""
    first = ev.SessionReset(key=KEY, reason="new", old_session_id=None, new_session_id="s-2")
    assert first.line == "new session s-2 (/new)"
    reset = ev.SessionReset(key=KEY, reason="reset", old_session_id="s-1", new_session_id="s-2")
    assert reset.line == "new session s-2 (/reset); the previous one, s-1, is archived"
    assert ev.SessionReset(key=KEY, reason="other", old_session_id=None, new_session_id="s-2").line.endswith("(other)")


async def test_provider_failure_keeps_user_message_and_partial() -> None:
    engine, prov = make()
    prov.queue({"text": "partial answer that is cut", "error": {"kind": "connection", "after_chars": 7}})
    out = await run(engine, "question")
    failed = next(e for e in out if isinstance(e, ev.TurnFailed))
    assert failed.partial_text == "partial" and failed.error_kind == "connection"
    msgs = [e for e in engine.events(KEY) if e.type == "message"]
    assert msgs[0].content == "question"
    assert msgs[1].data["status"] == "interrupted" and msgs[1].content == "partial"
    assert engine.store.get(KEY).counters.input == 0  # type: ignore[union-attr]
    # retry works
    prov.queue({"text": "full", "usage": {"input": 5, "output": 1}})
    out = await run(engine, "question")
    assert next(e for e in out if isinstance(e, ev.TurnDone)).text == "full"
    await engine.aclose()


async def test_cancel_keeps_partial_marked_interrupted() -> None:
    engine, prov = make()
    prov.queue({"text": "a long reply " * 50, "delay": 0.01})
    got: list[str] = []

    async def consume() -> None:
        async for e in engine.send("tell me", KEY):
            if isinstance(e, ev.TokenDelta):
                got.append(e.text)

    task = asyncio.create_task(consume())
    while len(got) < 3:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    last = [e for e in engine.events(KEY) if e.type == "message"][-1]
    assert last.role == "assistant" and last.data["status"] == "interrupted"
    assert last.content.startswith("".join(got)[:10]) and len(last.content) < len("a long reply " * 50)
    await engine.aclose()


async def test_bad_key_and_empty_message_are_user_errors() -> None:
    engine, _ = make()
    with pytest.raises(UserError):
        await run(engine, "x", key="agent:../x:tui:y")
    with pytest.raises(UserError):
        await run(engine, "   ")
    await engine.aclose()


async def test_lone_surrogates_and_nul_are_stored() -> None:
    engine, _ = make()
    await run(engine, "bad \udc80 text \x00 end")
    user = next(e for e in engine.events(KEY) if e.role == "user")
    assert "\ufffd" in user.content and "\x00" in user.content
    await engine.aclose()


async def test_context_ledger_sums_to_total() -> None:
    engine, _prov = make()
    for i in range(5):
        await run(engine, f"message number {i} " * 10)
    ctx = await engine.context(KEY, "next question")
    from neotask_tui.text.tokens import count_messages

    assert sum(ctx.ledger.sections.values()) == ctx.ledger.total == count_messages(ctx.messages, engine.count_text)
    assert ctx.ledger.sections["new_message"] > 0 and ctx.ledger.sections["recent"] > 0
    await engine.aclose()


async def test_readonly_engine_refuses_writes() -> None:
    engine, _ = make()
    await run(engine, "x")
    await engine.aclose()
    ro = Engine(Settings(), readonly=True, provider=ScriptedProvider())
    assert ro.list_sessions()[0]["key"] == KEY
    with pytest.raises(UserError):
        await run(ro, "y")
    ro.close()


def test_store_rebuild_matches_engine_counters() -> None:
    async def go() -> None:
        engine, prov = make()
        prov.queue({"text": "a", "usage": {"input": 7, "output": 1}})
        await run(engine, "q")
        await engine.aclose()

    asyncio.run(go())
    paths.sessions_index().unlink()
    st = SessionStore()
    assert st.get(KEY) is not None and st.get(KEY).counters.input == 7  # type: ignore[union-attr]
    assert any("missing" in n for n in st.notices)


def test_scope_admits_only_matching_project() -> None:
    from neotask_tui.engine.facade import scope_admits

    assert scope_admits("agent:main", {}) and scope_admits("user", {"project": "beta"})
    assert not scope_admits("project:acme", {}) and not scope_admits("project:acme", {"project": "beta"})
    assert scope_admits("project:acme", {"project": "acme"})
    assert not scope_admits("workspace:acme-prod", {"workspace": "acme-dev"})


async def test_every_way_a_new_key_gets_a_session_refuses_one_holding_a_secret() -> None:
    # one check where a key's first session is stored: a first message, /new and a fork into that key
    engine, _provider = make()
    secret_key = "agent:main:tui:ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    try:
        await run(engine, "hello")  # an ordinary key works
        with pytest.raises(UserError, match="holds an API key or another secret"):
            await engine.new_session(secret_key)
        with pytest.raises(UserError, match="holds an API key or another secret"):
            await engine.fork_session(secret_key, from_session=engine.current_record(KEY).session_id)
        with pytest.raises(UserError, match="holds an API key or another secret"):
            engine.current_record(secret_key)
        assert engine.store.get(secret_key) is None
        assert not any("ghp_" in p.read_text() for p in paths.sessions_dir().glob("*.jsonl"))
    finally:
        await engine.aclose()
