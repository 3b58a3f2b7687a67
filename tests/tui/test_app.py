"""Pilot tests of the main screen: streaming, stopping, the gauge, prompt, lazy transcript, resets."""

from __future__ import annotations

from collections.abc import Callable

from neotask_tui.engine.context.assembly import Ledger
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.base import Usage
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.screens.help import HelpScreen
from neotask_tui.tui.widgets.gauge import TokenGauge
from neotask_tui.tui.widgets.prompt import Prompt
from neotask_tui.tui.widgets.status import StatusBar
from neotask_tui.tui.widgets.transcript import MessageView, Transcript
from tests.doubles import Clock
from tests.tui.support import SIZE, drain, wait_for

REPLY = "Here is **the plan**:\n\n1. write tests\n2. ship\n\n```python\nprint('ok')\n```\n"


def _views(app: NeotaskApp, kind: str) -> list[MessageView]:
    return [v for v in app.query(MessageView) if v.entry.kind == kind]


async def _send(pilot: object, app: NeotaskApp, text: str) -> None:
    app.query_one(Prompt).text = text
    await pilot.press("enter")  # type: ignore[attr-defined]


async def _start_a_long_reply(pilot: object, app: NeotaskApp) -> None:
    """Send "go" and wait until the (queued, slow) reply is streaming."""
    await wait_for(pilot, app.ready.is_set, "engine")
    await _send(pilot, app, "go")
    await wait_for(pilot, lambda: _views(app, "assistant") and _views(app, "assistant")[0].entry.text, "streaming")


async def test_sending_streams_a_reply(app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider,
                                       engine: Engine) -> None:
    provider.queue({"text": REPLY, "usage": {"input": 40, "output": 20}, "delay": 0.04, "chunk_chars": 3})
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _send(pilot, app, "what's the plan?")
        await wait_for(pilot, lambda: _views(app, "assistant") and 0 < len(_views(app, "assistant")[0].entry.text)
                       < len(REPLY), "a partial reply")
        view = _views(app, "assistant")[0]
        assert view.has_class("-streaming") and app.streaming
        assert REPLY.startswith(view.entry.text)
        await wait_for(pilot, lambda: not app.streaming, "the end of the turn")
        assert view.entry.text == REPLY and view.entry.status == "complete"
        assert "in 40 out 20 (reported)" in view.entry.meta
        assert [v.entry.text for v in _views(app, "user")] == ["what's the plan?"]
        stored = [e for e in engine.events(engine.default_key()) if e.type == "message"]
        assert [(e.role, e.content) for e in stored] == [("user", "what's the plan?"), ("assistant", REPLY)]
        # the message's id is in its header as soon as it is stored (red team 21: "you" alone, so
        # `/copy e:N` meant guessing N)
        user = _views(app, "user")[0]
        assert user.entry.meta == f"e:{stored[0].id}"
        assert f"e:{stored[0].id}" in str(user.query_one(".msg-header").render())


async def test_escape_stops_streaming_and_keeps_the_partial_text(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    long = "word " * 400
    provider.queue({"text": long, "delay": 0.03, "chunk_chars": 5})
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _send(pilot, app, "talk a lot")
        await wait_for(pilot, lambda: _views(app, "assistant") and len(_views(app, "assistant")[0].entry.text) >= 20,
                       "some streamed text")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.streaming, "the stop")
        view = _views(app, "assistant")[0]
        assert view.entry.status == "interrupted" and view.has_class("-interrupted")
        partial = view.entry.text
        assert 20 <= len(partial) < len(long)

        def stored() -> list[object]:
            return [e for e in engine.events(engine.default_key())
                    if e.type == "message" and e.role == "assistant"]

        await wait_for(pilot, stored, "the stored partial reply")
        msg = stored()[0]
        assert msg.data["status"] == "interrupted"  # type: ignore[attr-defined]
        assert long.startswith(msg.content) and partial.startswith(msg.content)  # type: ignore[attr-defined]
        # The app is usable again: the next message gets a reply.
        provider.queue("second answer")
        await _send(pilot, app, "again")
        await wait_for(pilot, lambda: len(_views(app, "assistant")) == 2 and not app.streaming, "the next reply")
        assert _views(app, "assistant")[1].entry.text == "second answer"


async def test_escape_before_the_first_token_says_nothing_was_kept_but_the_message(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    """Found on the newcomer walk: Esc while the local model was still reading the prompt toasted
    "the partial text is kept" under a notice "stopped before the reply started"."""
    provider.queue({"text": "late", "delay": 60.0, "chunk_chars": 10})
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _send(pilot, app, "slow start")
        await wait_for(pilot, lambda: app.streaming, "the turn")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.streaming, "the stop")
        notes = [n.message for n in app._notifications]
        assert "stopped before the reply started — your message is kept" in notes, notes
        assert not any("partial text" in n for n in notes), notes
        assert not _views(app, "assistant")
        stored = [e.content for e in engine.events(engine.default_key()) if e.type == "message"]
        assert stored[:1] == ["slow start"]


async def test_escape_closes_a_panel_open_over_the_transcript_before_it_stops_the_reply(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider) -> None:
    """Found on the newcomer walk (80×24): F2 while a reply streamed, then Esc to leave the state panel,
    stopped the reply ("reply stopped — the partial text is kept"); the README says Esc closes the panel."""
    provider.queue({"text": "tick " * 300, "delay": 0.03})
    app = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await _start_a_long_reply(pilot, app)
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.layout.open is not None, "the state panel over the transcript")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.layout.open is None, "the panel closed")
        assert app.streaming, "the reply goes on"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.streaming, "the second Esc stops it")


async def test_a_message_sent_while_a_reply_streams_waits_its_turn(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    provider.queue({"text": "tick " * 300, "delay": 0.03})
    provider.queue("noted")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _start_a_long_reply(pilot, app)
        await _send(pilot, app, "and do not forget the tests")
        assert app.query_one(Prompt).text == ""  # taken: it waits in the queue (tests/tui/test_input_order.py)
        assert [v.entry.text for v in _views(app, "user")] == ["go"]
        await pilot.press("escape")  # the stop ends the first reply; the waiting message is sent next
        await wait_for(pilot, lambda: len(_views(app, "assistant")) == 2 and not app.streaming
                       and not app.inputs.busy, "the next reply")
        assert [v.entry.text for v in _views(app, "user")] == ["go", "and do not forget the tests"]
        assert _views(app, "assistant")[1].entry.text == "noted"


async def test_ctrl_c_also_stops_streaming(app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider) -> None:
    provider.queue({"text": "tick " * 300, "delay": 0.03})
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _start_a_long_reply(pilot, app)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.streaming, "the stop")
        assert _views(app, "assistant")[0].entry.status == "interrupted"


async def test_gauge_matches_the_engine_ledger(app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider,
                                               engine: Engine) -> None:
    provider.queue({"text": "ok", "usage": {"input": 120, "output": 7, "cache_read": 100, "cache_write": 3}})
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _send(pilot, app, "measure me " * 50)
        await wait_for(pilot, lambda: not app.streaming and _views(app, "assistant"), "the reply")
        gauge = app.query_one(TokenGauge)
        key = engine.default_key()
        led = (await engine.context(key)).ledger  # our estimate of the next call
        await wait_for(pilot, lambda: gauge.ledger == led and gauge.for_call == "next", "the next-call estimate")
        assert gauge.totals.totals() == engine.session_info(key)["totals"]
        assert gauge.reported is True
        rendered = str(gauge.render())
        assert f"{led.fill:.0%}" in rendered and f"≈{led.total:,}/" in rendered  # our estimate of the next call
        assert "223 in (reported)" in rendered  # what the provider reported: 120 + 100 cached + 3 written
        assert "cache read 100" in rendered
        secs = {name for name, _cells in gauge.bar_parts(60)}
        assert secs == {k for k, v in led.sections.items() if v > 0}


async def test_gauge_warns_near_the_compaction_threshold() -> None:
    gauge = TokenGauge()
    gauge.ledger = Ledger(fill=0.4, total=3300, budget=8192, window=8192, sections={"recent": 3300},
                          strategy="summary", compaction_at=3500)
    assert gauge.has_class("-warn") and "nearing compaction" in str(gauge.render())
    gauge.ledger = Ledger(fill=0.45, total=3600, budget=8192, window=8192, sections={"recent": 3600},
                          strategy="summary", compaction_at=3500, compaction_due=True)
    assert gauge.has_class("-danger") and "compaction due" in str(gauge.render())
    # before the last call's numbers, which a narrow gauge cuts first (80 columns cut "compaction d…")
    gauge.last_call = Usage(input_tokens=3400, output_tokens=20, reported=True)
    short = str(gauge.numbers(short=True))
    assert short.index("compaction due") < short.index("last")


async def test_gauge_does_not_call_recall_a_compaction_due() -> None:
    # Recall takes the room the history leaves (by relevance): a call 95% full of recall is no
    # compaction due, and the engine does not compact it; with compaction off nothing is ever due.
    gauge = TokenGauge()
    gauge.ledger = Ledger(fill=0.95, total=7800, budget=8192, window=8192, strategy="summary",
                          sections={"system": 40, "recall": 6500, "recent": 1260}, compaction_at=3500)
    rendered = str(gauge.render())
    assert "compaction due" not in rendered and "nearing compaction" not in rendered
    assert not gauge.has_class("-warn") and not gauge.has_class("-danger")
    gauge.ledger = Ledger(fill=0.95, total=7800, budget=8192, window=8192, strategy="summary",
                          sections={"recent": 7800}, compaction_at=0)
    assert "compaction" not in str(gauge.render())
    # Red team 35: over the point but the engine would not compact (too few messages, nothing to gain):
    # no "compaction due" (it said so for dozens of turns and right after a compaction).
    gauge.ledger = Ledger(fill=0.45, total=3600, budget=8192, window=8192, sections={"recent": 3600},
                          strategy="summary", compaction_at=3500, compaction_due=False)
    assert "compaction due" not in str(gauge.render()) and not gauge.has_class("-danger")


async def test_prompt_autocomplete_history_and_multiline(app_factory: Callable[..., NeotaskApp],
                                                         provider: ScriptedProvider) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        prompt = app.query_one(Prompt)
        await pilot.press("slash", "c", "o", "m")
        assert prompt.suggesting
        await pilot.press("tab")
        assert prompt.text == "/compact " and not prompt.suggesting
        prompt.text = ""
        await pilot.press("l", "i", "n", "e", "1", "ctrl+j", "l", "i", "n", "e", "2")
        assert prompt.text == "line1\nline2"
        await pilot.press("enter")
        await wait_for(pilot, lambda: _views(app, "assistant") and not app.streaming, "the reply")
        assert _views(app, "user")[0].entry.text == "line1\nline2"
        assert prompt.text == ""
        await pilot.press("up")
        assert prompt.text == "line1\nline2"
        await pilot.press("down")
        assert prompt.text == ""


async def test_unknown_command_and_bad_arguments_give_inline_help(app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _send(pilot, app, "/frobnicate now")
        await wait_for(pilot, lambda: _views(app, "notice"), "the inline error")
        assert "unknown command /frobnicate" in _views(app, "notice")[-1].entry.text
        await _send(pilot, app, "/export pdf")
        await wait_for(pilot, lambda: len(_views(app, "notice")) == 2, "the usage line")
        assert "usage: /export" in _views(app, "notice")[-1].entry.text
        await _send(pilot, app, "/help")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        assert any(usage.startswith("/compact ") for _t, rows in app.screen.groups for usage, _h in rows)
        assert app.is_running


async def test_long_sessions_mount_lazily(app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    key = engine.default_key()
    sid = engine.current_record(key).session_id
    items = [("message", {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"})
             for i in range(2400)]
    engine.store.append_many(sid, items)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        transcript = app.query_one(Transcript)
        await wait_for(pilot, lambda: len(transcript.entries) == 2400, "the transcript")
        assert transcript.mounted_count == Transcript.PAGE
        assert len(app.query(MessageView)) == Transcript.PAGE
        assert _views(app, "assistant")[-1].entry.text == "message 2399"
        await transcript.action_load_older()
        await pilot.pause()
        assert transcript.mounted_count == 2 * Transcript.PAGE
        assert next(iter(app.query(MessageView))).entry.text == f"message {2400 - 2 * Transcript.PAGE}"


async def test_automatic_reset_offers_a_one_key_restore(app_factory: Callable[..., NeotaskApp],
                                                        provider: ScriptedProvider, engine: Engine,
                                                        clock: Clock) -> None:
    key = engine.default_key()
    await drain(engine.send("before the night", key))
    old = engine.current_record(key).session_id
    clock.advance(days=1)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _send(pilot, app, "good morning")
        await wait_for(pilot, lambda: app.undo_reset_available and not app.streaming, "the reset offer")
        new = engine.current_record(key).session_id
        assert new != old
        assert "restores the previous session" in app.query_one(StatusBar).offer
        notices = [v.entry.text for v in app.query(MessageView) if v.entry.kind == "notice"]
        said = f"new session {new} (daily reset); the previous one, {old}, is archived · daily reset at "
        assert any(t.startswith(said) for t in notices), notices
        await pilot.press("ctrl+u")
        await wait_for(pilot, lambda: engine.current_record(key).session_id == old, "the restore")
        assert not app.undo_reset_available
        undone = (f"restored {old} (the daily reset is undone); your 1 message since the reset stays in {new}, "
                  "now archived")
        await wait_for(pilot, lambda: any(undone in v.entry.text for v in app.query(MessageView)), "the undo's line")


async def test_bindings_are_remappable(app_factory: Callable[..., NeotaskApp]) -> None:
    from neotask_tui.tui.screens.sessions import SessionsScreen

    app = app_factory(bindings={"sessions": "f9"})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not isinstance(app.screen, SessionsScreen)
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen), "the sessions screen")


async def test_a_corrupt_line_found_when_the_session_loads_is_told(
        app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    # The app toasted engine.notices before the transcript was read (it is read lazily, when the
    # session is shown), so a quarantined line was never told in the app; the REPL never told it either.
    key = engine.default_key()
    await engine.append(key, "message", {"role": "user", "content": "hello", "status": "complete"})
    path = engine.store.transcript_path(engine.current_record(key).session_id)
    with path.open("ab") as f:
        f.write(b'{"broken json\n')
    engine.store.drop_cache()
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await wait_for(pilot, lambda: any("corrupt line" in n.message for n in app._notifications), "the notice")
        assert engine.notices == []  # told once: taken from the list, as a turn takes them
