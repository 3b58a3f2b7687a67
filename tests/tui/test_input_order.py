"""Pilot tests: what you type is handled in the order typed — one message or command at a time.

A command typed while something runs waits its turn (the prompt's bottom border says what waits);
its output appears where it was typed; a message typed after ``/new`` or a compaction lands in the
session that command made. The slowness is real: the scripted provider streams with an asyncio
delay, and engine commands wait for the turn that streams (the engine's turn lock).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.content import Content

from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.inbox import Candidate
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.input_queue import QUEUE_LIMIT, label_of
from neotask_tui.tui.screens.help import HelpScreen
from neotask_tui.tui.screens.sessions import SessionsScreen
from neotask_tui.tui.widgets.prompt import Prompt, PromptArea
from neotask_tui.tui.widgets.side import StatePanel
from neotask_tui.tui.widgets.transcript import MessageView
from tests.tui.support import SIZE, drain, wait_for

ENDLESS = {"text": "tick " * 400, "delay": 0.5}
"""A reply that streams until it is stopped (about 50 s in all; every test stops it long before)."""


def _entries(app: NeotaskApp) -> list[tuple[str, str]]:
    """The main transcript as (kind, text) pairs, top to bottom (a command's entry: its title)."""
    return [(v.entry.kind, v.entry.title if v.entry.kind == "command" else v.entry.text)
            for v in app.main.query(MessageView)]


def _queue_line(app: NeotaskApp) -> str:
    """The prompt's queue line as shown (the border title reads back as markup)."""
    sub = app.main.query_one(PromptArea).border_subtitle
    return "" if sub is None else Content.from_markup(sub).plain


async def _submit(pilot: object, app: NeotaskApp, text: str) -> None:
    app.main.query_one(Prompt).text = text
    app.main.query_one(PromptArea).focus()
    await pilot.press("enter")  # type: ignore[attr-defined]


async def _streaming(pilot: object, app: NeotaskApp) -> None:
    await wait_for(pilot, lambda: app.streaming and any(k == "assistant" and t for k, t in _entries(app)),
                   "a streaming reply")


async def _idle(pilot: object, app: NeotaskApp) -> None:
    await wait_for(pilot, lambda: not app.inputs.busy and not app.streaming, "everything typed handled")


async def test_a_message_typed_after_new_lands_in_the_new_session_in_order(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    key = engine.default_key()
    provider.queue({"text": "first answer " * 10, "delay": 0.05})  # /new waits for this turn
    provider.queue("second answer")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _submit(pilot, app, "first question")
        await _streaming(pilot, app)
        old = engine.current_record(key).session_id
        await _submit(pilot, app, "/new")
        await _submit(pilot, app, "second question")
        assert app.main.query_one(Prompt).text == ""  # taken, not refused
        await _idle(pilot, app)
        new = engine.current_record(key).session_id
        assert new != old
        in_new = [(e.role, e.content) for e in engine.events(key) if e.type == "message"]
        assert in_new == [("user", "second question"), ("assistant", "second answer")]
        in_old = [(e.role, e.content, e.data.get("status")) for e in engine.store.events(old)
                  if e.type == "message"]
        assert in_old == [("user", "first question", None), ("assistant", "first answer " * 10, "complete")]
        shown = _entries(app)
        marker = next(i for i, (k, t) in enumerate(shown) if k == "notice" and f"new session {new}" in t)
        assert shown[marker + 1:] == [("user", "second question"), ("assistant", "second answer")]


async def test_a_message_typed_during_a_slow_compaction_comes_after_its_output(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    key = engine.default_key()
    for i in range(6):
        provider.queue({"text": f"Decision {i}: approach {i}. " + "detail " * 100})
        await drain(engine.send(f"Question {i}: which approach? " + "context " * 100, key))
    old = engine.current_record(key).session_id
    provider.queue({"text": "a slow summary " * 20, "delay": 0.03})  # the summarizer's call streams slowly
    provider.queue("after compaction")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _submit(pilot, app, "/compact --now")
        await _submit(pilot, app, "what next?")
        await _idle(pilot, app)
        assert engine.current_record(key).session_id != old
        assert [e.content for e in engine.events(key) if e.type == "message"][-2:] == [
            "what next?", "after compaction"]
        assert "what next?" not in [e.content for e in engine.store.events(old) if e.type == "message"]
        assert _entries(app)[-3:] == [("command", "/compact --now"), ("user", "what next?"),
                                      ("assistant", "after compaction")]


async def test_inbox_accept_typed_during_a_reply_answers_after_it_and_before_the_next_message(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    agent = engine.parse_key(engine.default_key()).agent_id
    await engine.state.inbox_add(agent, Candidate(text="I always prefer tabs over spaces", scope="user",
                                                  reason="stated preference", source_ids=[2], explicit=True))
    provider.queue(ENDLESS)
    provider.queue("noted")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _submit(pilot, app, "go")
        await _streaming(pilot, app)
        await _submit(pilot, app, "/inbox accept 1")
        await _submit(pilot, app, "and then?")
        # Both wait while the reply streams: named on the prompt, nothing run yet.
        assert _queue_line(app) == "2 queued, run in order: /inbox accept 1 · and then?"
        assert app.main.query_one(Prompt).text == ""
        assert [e.text for e in await engine.state.inbox_list(agent)] == ["I always prefer tabs over spaces"]
        assert [k for k, _ in _entries(app)][-2:] == ["user", "assistant"]
        await pilot.press("escape")  # stops the reply; what waits then runs
        await _idle(pilot, app)
        assert await engine.state.inbox_list(agent) == []
        shown = _entries(app)
        assert [k for k, _ in shown][-5:] == ["user", "assistant", "command", "user", "assistant"]
        assert shown[-3:] == [("command", "/inbox accept 1"), ("user", "and then?"), ("assistant", "noted")]
        assert _queue_line(app) == ""


async def test_a_stopped_reply_lets_the_queued_message_run(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    provider.queue(ENDLESS)
    provider.queue("second reply")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _submit(pilot, app, "go")
        await _streaming(pilot, app)
        await _submit(pilot, app, "[/dim] tests\x1b[2J")  # shown as typed: no markup, no terminal control
        assert _queue_line(app) == "1 queued, run in order: [/dim] tests␛[2J"
        await pilot.press("ctrl+c")
        await _idle(pilot, app)
        stored = [(e.role, e.content, e.data.get("status")) for e in engine.events(engine.default_key())
                  if e.type == "message"]
        assert [(r, s) for r, _c, s in stored] == [("user", None), ("assistant", "interrupted"), ("user", None),
                                                   ("assistant", "complete")]
        assert stored[2][1] == "[/dim] tests\x1b[2J" and stored[3][1] == "second reply"


async def test_a_command_that_opens_a_screen_holds_the_queue_until_it_closes_and_help_stays_immediate(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    provider.queue(ENDLESS)
    provider.queue("after the browser")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _submit(pilot, app, "go")
        await _streaming(pilot, app)
        await pilot.press("f1")  # read-only: opens now, beside the streaming reply
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        assert app.streaming
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.main, "back on the main screen")
        await _submit(pilot, app, "/sessions")
        await _submit(pilot, app, "still there?")
        await pilot.press("escape")  # stops the reply; the browser opens next
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen), "the sessions browser")
        assert ("user", "still there?") not in _entries(app)  # waits for the browser to close
        assert _queue_line(app) == "1 queued, run in order: still there?"
        await pilot.press("escape")
        await _idle(pilot, app)
        assert _entries(app)[-2:] == [("user", "still there?"), ("assistant", "after the browser")]


async def test_retry_then_a_message_the_regenerated_reply_comes_first(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    key = engine.default_key()
    provider.queue("first reply")
    await drain(engine.send("question", key))
    provider.queue({"text": "regenerated " * 10, "delay": 0.05})
    provider.queue("follow-up reply")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _submit(pilot, app, "/retry")
        await _submit(pilot, app, "follow-up")
        await _idle(pilot, app)
        stored = [(e.role, e.content) for e in engine.events(key) if e.type == "message"]
        assert stored == [("user", "question"), ("assistant", "first reply"), ("assistant", "regenerated " * 10),
                          ("user", "follow-up"), ("assistant", "follow-up reply")]
        assert _entries(app)[-2:] == [("user", "follow-up"), ("assistant", "follow-up reply")]


async def test_a_full_queue_refuses_and_keeps_the_text_in_the_prompt(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider) -> None:
    provider.queue(ENDLESS)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _submit(pilot, app, "go")
        await _streaming(pilot, app)
        for i in range(QUEUE_LIMIT):
            await _submit(pilot, app, f"/goal step {i}")
        assert _queue_line(app).startswith(f"{QUEUE_LIMIT} queued, run in order: /goal step 0 · /goal step 1")
        await _submit(pilot, app, "one too many")
        assert app.main.query_one(Prompt).text == "one too many"
        assert len(app.inputs.waiting) == QUEUE_LIMIT
        await pilot.press("escape")
        await _idle(pilot, app)
        assert app.main.query_one(Prompt).text == "one too many"  # still there to send


async def test_a_state_panel_clear_during_a_reply_waits_its_turn(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    key = engine.default_key()
    await engine.state.set(key, "current_goal", "ship the queue")
    provider.queue(ENDLESS)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        panel = app.main.query_one(StatePanel)
        await wait_for(pilot, lambda: panel.entries, "the goal in the panel")
        await _submit(pilot, app, "go")
        await _streaming(pilot, app)
        app.main.query_one("#state-list").focus()
        await pilot.press("home")
        await pilot.press("d")
        await wait_for(pilot, lambda: _queue_line(app), "the clear queued")
        assert _queue_line(app) == "1 queued, run in order: clear current_goal"
        assert engine.state.get(key).value("current_goal") == "ship the queue"
        await pilot.press("escape")
        await _idle(pilot, app)
        assert engine.state.get(key).value("current_goal") is None


async def test_the_input_history_file_keeps_the_order_inputs_were_sent_in(
        app_factory: Callable[..., NeotaskApp]) -> None:
    """Red team 19: twenty inputs sent in a burst came back from ↑ (after a restart) out of order:
    each entry was appended by a thread of its own."""
    from neotask_tui.storage.history import read_history

    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.main.query_one(Prompt)
        for i in range(30):
            prompt.text = f"/goal g{i}"
            prompt.submit()
        await wait_for(pilot, lambda: len(read_history(prompt.history_path)) >= 30, "the history file")
        assert read_history(prompt.history_path)[-30:] == [f"/goal g{i}" for i in range(30)]


async def test_quitting_keeps_the_unsent_prompt_text_in_the_input_history(
        app_factory: Callable[..., NeotaskApp]) -> None:
    """Red team 19: Ctrl+Q with text typed and not sent (or hidden behind a screen) lost it."""
    from neotask_tui.storage.history import read_history

    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        prompt = app.main.query_one(Prompt)
        path = prompt.history_path
        prompt.text = "/goal sent first"
        prompt.submit()
        prompt.text = "/goal sent second"
        prompt.submit()
        prompt.text = "/goal sent first"  # recalled with ↑ and not sent again: already in the history
        prompt.keep_draft()
        prompt.text = "half a thought, not sent"
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, "the exit")
    assert read_history(path)[-3:] == ["/goal sent first", "/goal sent second", "half a thought, not sent"]


async def test_a_history_that_is_a_symbolic_link_is_neither_read_nor_written(
        app_factory: Callable[..., NeotaskApp], tmp_path: Path) -> None:
    """Red team 31, finding 4: with ``<data>/history`` a symbolic link, the app appended what you
    typed to the link's target, outside the data dir. It reads and writes nothing through it, says
    so once, and keeps working (↑ still brings back what was sent in this run)."""
    from neotask_tui import paths

    victim = tmp_path / "victim_history.txt"
    victim.write_text("+victim content\n")
    paths.ensure_dir(paths.data_dir())
    paths.history_file().symlink_to(victim)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        told = [n.message for n in app._notifications if "history" in n.message]
        assert told == [f"{paths.history_file()} is a symbolic link; Neotask does not follow links inside its data "
                        "dir, so your input history is not saved (replace the link with a file)"], told
        prompt = app.main.query_one(Prompt)
        assert "victim content" not in prompt.history
        prompt.text = "/goal typed in the app"
        prompt.submit()
        await wait_for(pilot, lambda: any("goal" in text for _, text in _entries(app)), "the command's entry")
        assert prompt.history[-1] == "/goal typed in the app"
        prompt.text = "a draft left at quit"
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, "the exit")
    assert victim.read_text() == "+victim content\n" and paths.history_file().is_symlink()


def test_a_queued_input_s_label_shows_no_secret() -> None:
    """A key pasted as ``/model sk-…`` waited in the queue line with its first 24 characters shown
    (newcomer walk, session 24); the label is cut after the secrets are redacted."""
    key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd"
    label = label_of(f"/model {key}")
    assert "AbCdEfGh" not in label and label.startswith("/model [REDACTED"), label
    assert label_of("/model gpt-4o-mini") == "/model gpt-4o-mini"
