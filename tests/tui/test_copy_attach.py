"""Copy and attach in the app: ``/copy N``, ``c`` on a focused message, ``/file`` and ``@path``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.widgets.prompt import Prompt
from neotask_tui.tui.widgets.transcript import MessageView
from tests.tui.support import SIZE, wait_for

REPLY = "Try:\n\n```python\nprint('ok')\n```\n\nthen\n\n```sh\nmake test\n```\n"


@pytest.fixture(autouse=True)
def _no_clipboard_tool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def _views(app: NeotaskApp, kind: str) -> list[MessageView]:
    return [v for v in app.query(MessageView) if v.entry.kind == kind]


async def _send(pilot: object, app: NeotaskApp, text: str) -> None:
    app.query_one(Prompt).text = text
    await pilot.press("enter")  # type: ignore[attr-defined]


async def _turn(pilot: object, app: NeotaskApp, text: str) -> None:
    await wait_for(pilot, app.ready.is_set, "engine")
    n = len(_views(app, "assistant"))
    await _send(pilot, app, text)
    await wait_for(pilot, lambda: len(_views(app, "assistant")) > n and not app.streaming, "the reply")


async def test_copy_n_puts_the_block_on_the_clipboard_and_says_so(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider) -> None:
    provider.queue(REPLY)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _turn(pilot, app, "how do I test?")
        reply = _views(app, "assistant")[-1]
        assert "2 code blocks (/copy 1–2)" in str(reply.query_one(".msg-header").render())
        await _send(pilot, app, "/copy 2")
        await wait_for(pilot, lambda: app.clipboard == "make test", "the clipboard")
        await wait_for(pilot, lambda: any("copied code block 2 of 2 (sh)" in v.entry.text
                                          for v in _views(app, "notice")), "the notice")
        notice = [v.entry.text for v in _views(app, "notice") if "copied" in v.entry.text][-1]
        assert "9 characters, 1 line → the terminal clipboard (OSC 52)" in notice
        assert paths.clipboard_file().read_text() == "make test"


async def test_c_on_a_focused_message_copies_it(app_factory: Callable[..., NeotaskApp],
                                               provider: ScriptedProvider, engine: Engine) -> None:
    provider.queue(REPLY)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _turn(pilot, app, "how do I test?")
        await pilot.press("shift+tab")  # from the prompt back to the newest message
        await pilot.pause()
        assert isinstance(app.focused, MessageView) and app.focused.entry.kind == "assistant"
        await pilot.press("c")
        await wait_for(pilot, lambda: app.clipboard == REPLY, "the reply on the clipboard")
        await pilot.press("shift+tab")  # the question before it
        await pilot.pause()
        assert isinstance(app.focused, MessageView) and app.focused.entry.kind == "user"
        await pilot.press("c")
        await wait_for(pilot, lambda: app.clipboard == "how do I test?", "your message on the clipboard")
        user_id = next(e.id for e in engine.events(engine.default_key()) if e.role == "user")
        assert any(f"your message e:{user_id}" in v.entry.text for v in _views(app, "notice"))
        assert app.query_one(Prompt).text == ""  # "c" never reached the prompt
