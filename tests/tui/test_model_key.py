"""Pilot tests: an API key typed as ``/model``'s name or model is refused in the app, without
echoing it, and kept out of the input history (the file ↑ reads, shared with the REPL); the
configured key typed in a message is masked on screen, in the transcript and in the history."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from neotask_tui.storage.history import read_history
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.input_queue import label_of
from neotask_tui.tui.widgets.prompt import Prompt, PromptArea
from neotask_tui.tui.widgets.status import StatusBar
from neotask_tui.tui.widgets.transcript import MessageView
from tests.tui.support import SIZE, wait_for

KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9o"


@contextlib.asynccontextmanager
async def _running(app: NeotaskApp) -> AsyncIterator[Pilot[Any]]:
    """``app`` under a pilot, its engine ready."""
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        yield pilot


async def _enter(pilot: Pilot[Any], app: NeotaskApp, text: str) -> None:
    """Type ``text`` into the prompt and press Enter."""
    app.main.query_one(Prompt).text = text
    app.main.query_one(PromptArea).focus()
    await pilot.press("enter")


async def _quit_with(pilot: Pilot[Any], app: NeotaskApp, draft: str) -> None:
    """Quit with Ctrl+Q, ``draft`` left in the prompt (the input history keeps what it would keep)."""
    app.main.query_one(Prompt).text = draft
    await pilot.press("ctrl+q")
    await wait_for(pilot, lambda: not app.is_running, "the exit")


def _shown(app: NeotaskApp) -> str:
    """What the transcript and the status line show, as text."""
    views = [f"{v.entry.title} {v.entry.text}" for v in app.main.query(MessageView)]
    return "\n".join([*views, str(app.query_one(StatusBar).render())])


async def test_a_key_typed_as_the_model_is_refused_and_not_kept_in_the_history(
        app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory()
    async with _running(app) as pilot:
        prompt = app.main.query_one(Prompt)
        for line in (f"/model openai {KEY}", "/goal ship it", f"/model {KEY}"):
            await _enter(pilot, app, line)
            await wait_for(pilot, lambda: not app.inputs.busy, "the command")
        await wait_for(pilot, lambda: "/goal ship it" in read_history(prompt.history_path), "the history file")
        await _quit_with(pilot, app, f"/model anthropic {KEY}")  # not kept either
        shown = _shown(app)
    assert shown.count("looks like an API key, not a model name; nothing stored") == 2, shown
    assert KEY[8:24] not in shown, shown
    history = read_history(prompt.history_path)
    assert history == ["/goal ship it"], history
    assert KEY[8:24] not in prompt.history_path.read_text(encoding="utf-8")


async def test_the_configured_key_typed_in_a_message_is_shown_stored_and_kept_masked(
        app_factory: Callable[..., NeotaskApp], monkeypatch: pytest.MonkeyPatch) -> None:
    # Red team 29: the configured key typed in a message was stored in full in the transcript and
    # the input history (the reply masked it: `[REDACTED:api_key]`).
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    app = app_factory()
    async with _running(app) as pilot:
        prompt = app.main.query_one(Prompt)
        await _enter(pilot, app, f"my key is {KEY} ok")
        await wait_for(pilot, lambda: not app.inputs.busy and not app.streaming, "the turn")
        await wait_for(pilot, lambda: read_history(prompt.history_path), "the history file")
        await _quit_with(pilot, app, f"/pref never print {KEY[8:].lower()}")
        shown = _shown(app)
        assert app.engine is not None
        stored = [e.content for e in app.engine.events(app.engine.default_key()) if e.type == "message"]
    assert "my key is [REDACTED:api_key] ok" in shown and KEY[8:24] not in shown, shown
    assert stored[0] == "my key is [REDACTED:api_key] ok", stored
    history = read_history(prompt.history_path)
    assert history == ["my key is [REDACTED:api_key] ok", "/pref never print [REDACTED:api_key]"], history


async def test_a_queued_input_s_label_masks_the_configured_key(
        app_factory: Callable[..., NeotaskApp], monkeypatch: pytest.MonkeyPatch) -> None:
    # Red team 30: a `/model openai x<18 characters of the configured key>` (no key format) waited in
    # the queue line with 16 of them shown, before its refusal.
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    app = app_factory()
    async with _running(app):
        for typed in (f"/model openai x{KEY[12:30]}", f"plain msg {KEY[10:30]}"):
            label = label_of(typed, app._mask_keys)
            assert KEY[12:28] not in label and "[REDACTED" in label, label


def test_the_app_keeps_in_the_history_what_the_repl_keeps(
        app_factory: Callable[..., NeotaskApp], monkeypatch: pytest.MonkeyPatch) -> None:
    from neotask_tui.commands.core import history_entry

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    app = app_factory()
    lines = [f"my key is {KEY} ok", f"  plain {KEY[4:]}", f"/model openai {KEY}", f"/{KEY}", "/goal ship it",
             f"//not a command {KEY}", "hello"]
    kept = [app.history_entry(line) for line in lines]
    assert kept == [history_entry(line, app.settings) for line in lines], kept
    assert kept[0] == "my key is [REDACTED:api_key] ok" and kept[2] is None and kept[-1] == "hello", kept


async def test_a_command_s_echo_line_masks_the_configured_key(
        app_factory: Callable[..., NeotaskApp], monkeypatch: pytest.MonkeyPatch) -> None:
    # Red team 31: `/goal <20 characters of the configured key>` was echoed above its result with the
    # key unmasked (the result line and the input history read `[REDACTED:api_key]`).
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    part = KEY[6:26]
    app = app_factory()
    async with _running(app) as pilot:
        for line in (f"/goal {part}", f"/remember the key {part}", f"/pref {part} --for 1h", f"/event {part}",
                     f"/file {part}"):
            await _enter(pilot, app, line)
            await wait_for(pilot, lambda: not app.inputs.busy, "the command")
        shown = _shown(app)
    assert "/goal [REDACTED:api_key]" in shown and "/pref [REDACTED:api_key] --for 1h" in shown, shown
    assert part[:16] not in shown and part[4:20] not in shown, shown
