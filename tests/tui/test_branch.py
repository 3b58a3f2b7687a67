"""Pilot tests for /retry, /edit (Ctrl+R, Ctrl+T, ↑ then Ctrl+T) and /fork in the app (#21 items 2, 3).

Keys go through ``pilot.press`` (the bindings), so a binding the prompt's TextArea shadows fails here.
"""

from __future__ import annotations

from collections.abc import Callable

from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.storage.events import superseded_ids
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.screens.sessions import SessionsScreen
from neotask_tui.tui.widgets.prompt import Prompt
from neotask_tui.tui.widgets.transcript import MessageView, Transcript
from tests.tui.support import SIZE, drain, wait_for


def _views(app: NeotaskApp) -> list[MessageView]:
    return list(app.main.query_one(Transcript).query(MessageView))


def _superseded(app: NeotaskApp) -> list[str]:
    return [v.entry.text for v in _views(app) if v.entry.status == "superseded"]


async def _type(pilot: object, app: NeotaskApp, text: str) -> None:
    app.main.query_one(Prompt).text = text
    app.main.query_one("#prompt-input").focus()
    await pilot.press("enter")  # type: ignore[attr-defined]


async def test_ctrl_r_retries_and_the_old_reply_stays_dimmed(app_factory: Callable[..., NeotaskApp],
                                                              engine: Engine, provider: ScriptedProvider) -> None:
    key = engine.default_key()
    provider.queue({"text": "a wrong answer", "usage": {"input": 40, "output": 4}})
    await drain(engine.send("what is 2+2?", key))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await wait_for(pilot, lambda: len(_views(app)) >= 2, "the conversation")
        provider.queue({"text": "four", "usage": {"input": 38, "output": 1}})
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: any(v.entry.text == "four" and v.entry.status == "complete"
                                          for v in _views(app)) and not app.streaming, "the new reply")
        assert _superseded(app) == ["a wrong answer"]
        view = next(v for v in _views(app) if v.entry.text == "a wrong answer")
        assert view.has_class("-superseded")
        gauge = app.main.query_one("#gauge")
        assert gauge.totals.input == 78  # type: ignore[attr-defined]  # both calls were sent, both count
    assert [e.content for e in engine.history(key)] == ["what is 2+2?", "four"]


async def test_slash_edit_fills_the_prompt_and_enter_regenerates(app_factory: Callable[..., NeotaskApp],
                                                                   engine: Engine,
                                                                   provider: ScriptedProvider) -> None:
    key = engine.default_key()
    provider.queue("about cats")
    await drain(engine.send("tell me about cats", key))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _type(pilot, app, "/edit")
        prompt = app.main.query_one(Prompt)
        await wait_for(pilot, lambda: prompt.text == "tell me about cats", "the message in the prompt")
        assert "editing your message" in app.view.status.offer
        prompt.text = "tell me about dogs"
        provider.queue("about dogs")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(v.entry.text == "about dogs" for v in _views(app))
                       and not app.streaming, "the regenerated reply")
        assert sorted(_superseded(app)) == ["about cats", "tell me about cats"]
        assert app.chat.editing is None and app.view.status.offer == ""
    assert [e.content for e in engine.history(key)] == ["tell me about dogs", "about dogs"]


async def test_up_then_ctrl_t_edits_and_esc_cancels(app_factory: Callable[..., NeotaskApp], engine: Engine,
                                                     provider: ScriptedProvider) -> None:
    key = engine.default_key()
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        provider.queue("r1")
        await _type(pilot, app, "first message")
        await wait_for(pilot, lambda: not app.streaming and any(v.entry.text == "r1" for v in _views(app)), "r1")
        prompt = app.main.query_one(Prompt)
        await pilot.press("up")  # ↑ on an empty prompt brings the message back…
        assert prompt.text == "first message"
        await pilot.press("ctrl+t")  # …and Ctrl+T makes Enter replace it
        assert app.chat.editing is not None
        await pilot.press("escape")
        assert app.chat.editing is None and prompt.text == ""
        assert not superseded_ids(engine.events(key))  # cancelled: nothing written
        await pilot.press("ctrl+t")  # on an empty prompt: the last message comes back to edit
        assert prompt.text == "first message" and app.chat.editing is not None
        prompt.text = "second version"
        provider.queue("r2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.streaming and any(v.entry.text == "r2" for v in _views(app)), "r2")
    assert [e.content for e in engine.history(key)] == ["second version", "r2"]


async def test_fork_switches_to_the_branch_and_the_browser_shows_it(app_factory: Callable[..., NeotaskApp],
                                                                     engine: Engine) -> None:
    key = engine.default_key()
    await drain(engine.send("one", key))
    await drain(engine.send("two", key))
    root = engine.current_record(key).session_id
    reply_one = next(e for e in engine.events(key) if e.content == "(scripted) one")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _type(pilot, app, f"/fork e:{reply_one.id}")
        await wait_for(pilot, lambda: engine.current_record(key).session_id != root, "the fork")
        await wait_for(pilot, lambda: not any(v.entry.text == "two" for v in _views(app))
                       and any("forked at" in v.entry.text for v in _views(app)), "the branch's transcript")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.shown, "the browser")
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        assert [r["session_id"] for r in screen.shown][:2] == [root, engine.current_record(key).session_id]
