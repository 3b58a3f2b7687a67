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


async def test_file_then_a_message_carries_it_folded_and_counted_apart(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine, tmp_path: Path) -> None:
    from textual.widgets import Collapsible

    notes = tmp_path / "notes.md"
    notes.write_text("".join(f"- point {i} about the \x1b[2J migration\n" for i in range(120)))
    provider.queue("Read it.")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _send(pilot, app, f"/file {notes}")
        await wait_for(pilot, lambda: any("attached to your next message" in v.entry.text
                                          for v in _views(app, "notice")), "the attach notice")
        await _turn(pilot, app, "summarise the notes")
        view = _views(app, "user")[-1]
        assert view.entry.text == "summarise the notes"
        fold = view.query_one(".attachment", Collapsible)
        assert fold.collapsed and str(notes) in str(fold.title) and "120 lines" in str(fold.title)
        assert view.outer_size.height < 12  # folded: 120 lines are a one-line title
        gauge = app.view.gauge
        assert gauge.ledger is not None and gauge.ledger.sections["attachment"] > 500
        assert "files" in str(gauge.legend())
        stored = next(e for e in engine.events(engine.default_key()) if e.role == "user")
        assert stored.data["attachments"][0]["path"] == str(notes)
        assert not app.chat.pending.files  # used by this message, not the next one
        fold.collapsed = False
        await pilot.pause()
        shown = str(fold.query_one(".msg-body").render())
        assert "␛[2J" in shown and "\x1b" not in shown  # escape sequences inert


async def test_an_at_path_that_cannot_be_attached_keeps_the_text(
        app_factory: Callable[..., NeotaskApp], engine: Engine, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _send(pilot, app, "what is in @logo.png")
        await wait_for(pilot, lambda: any("not sent:" in v.entry.text for v in _views(app, "notice")), "the error")
        assert "binary" in _views(app, "notice")[-1].entry.text
        assert app.query_one(Prompt).text == "what is in @logo.png"
        assert not [e for e in engine.events(engine.default_key()) if e.type == "message"]


async def test_at_completes_paths_in_the_prompt(app_factory: Callable[..., NeotaskApp], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.widgets import OptionList

    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print(1)\n")
    (tmp_path / "setup.cfg").write_text("[x]\n")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press(*"read @s")
        prompt = app.query_one(Prompt)
        await wait_for(pilot, lambda: prompt.suggesting, "the path suggestions")
        options = prompt.query_one("#suggestions", OptionList)
        assert [str(options.get_option_at_index(i).prompt).split()[0] for i in range(options.option_count)] == \
            ["setup.cfg", "src/"]
        await pilot.press("down", "tab")  # the folder: completed, the list follows into it
        assert prompt.text == "read @src/"
        await wait_for(pilot, lambda: prompt.suggesting and options.option_count == 1, "the folder's files")
        await pilot.press("tab")
        assert prompt.text == "read @src/main.py "


async def test_c_in_an_archived_transcript_copies_what_it_shows(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider, engine: Engine) -> None:
    from neotask_tui.tui.screens.sessions import TranscriptScreen

    provider.queue("the archived answer")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _turn(pilot, app, "an old question")
        old = engine.current_record(engine.default_key()).session_id
        provider.queue("a new answer")
        await _send(pilot, app, "/new")
        await wait_for(pilot, lambda: engine.current_record(engine.default_key()).session_id != old, "/new")
        await _turn(pilot, app, "a new question")  # e:ids of the new session overlap the old one's
        await app.action_view_session(old)
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptScreen)
                       and len(app.screen.query(MessageView)) >= 2, "the archived transcript")
        view = next(v for v in app.screen.query(MessageView) if v.entry.kind == "assistant")
        view.focus()
        await pilot.press("c")
        await wait_for(pilot, lambda: app.clipboard == "the archived answer", "the archived reply copied")
