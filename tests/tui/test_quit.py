"""Quitting while the bundled model is busy: the model is stopped, and the quit does not wait for
it to read the rest of a long paste."""

from __future__ import annotations

import threading
from datetime import UTC

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.providers.local import LocalProvider
from neotask_tui.tui.app import make_app
from neotask_tui.tui.widgets.prompt import Prompt
from tests.doubles import Clock
from tests.tui.support import ui_settings, wait_for

SIZE = (100, 30)
PASTE = "The quick brown fox jumps over the lazy dog by the river. " * 520


@pytest.mark.model
async def test_quit_while_the_model_reads_a_long_paste_stops_it(clock: Clock) -> None:
    settings = ui_settings()
    settings.memory.enabled = False
    prov = LocalProvider(temperature=0.0, seed=1)
    await prov.load()
    engine = Engine(settings, provider=prov, clock=clock, tz=UTC)
    app = make_app(settings, engine=engine)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, app.ready.is_set, "engine")
            app.main.query_one(Prompt).text = PASTE
            app.main.query_one("#prompt-input").focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: any(t.name == "neotask-llama" for t in threading.enumerate()),
                           "the model reading the prompt")
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: not app.is_running, "the exit", limit=120)
        for t in threading.enumerate():
            if t.name == "neotask-llama":
                t.join(timeout=120)
                assert not t.is_alive()
        assert prov.cached_tokens < len(PASTE.split())  # stopped part-way through the prompt
        # The user's message is kept; the turn was stopped, not failed.
        users = [e for e in engine.events(engine.default_key()) if e.type == "message" and e.role == "user"]
        assert users and users[-1].content.startswith("The quick brown fox")
    finally:
        await engine.aclose()
