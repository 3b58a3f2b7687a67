"""Fixtures for the app tests: an engine with a scripted provider and a fixed clock."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from neotask_tui.config import Settings
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp, make_app
from tests.doubles import Clock

FIXED_NOW = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)
SIZE = (120, 40)


def ui_settings(**ui: Any) -> Settings:
    """Settings for tests: memory off (no embedder), scripted provider, fixed window."""
    s = Settings()
    s.memory.enabled = False
    s.provider.name = "scripted"
    s.context.window_tokens = 8192
    s.session.daily_reset_hour = 4
    for k, v in ui.items():
        setattr(s.ui, k, v)
    return s


async def wait_for(pilot: Any, cond: Callable[[], Any], what: str = "condition", limit: float = 60.0) -> None:
    """Let the app run until ``cond()`` holds; a generous limit only turns a hang into a failure."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if cond():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def drain(gen: Awaitable[Any] | AsyncIterator[Any]) -> list[Any]:
    """Consume an engine event stream."""
    return [e async for e in gen]  # type: ignore[union-attr]


@pytest.fixture
def clock_start() -> datetime:
    """The app tests' ``clock`` fixture (frozen, see ``tests/doubles.py``) starts at FIXED_NOW."""
    return FIXED_NOW


@pytest.fixture
def provider() -> ScriptedProvider:
    """The scripted provider the engine answers with (tests queue replies)."""
    return ScriptedProvider()


@pytest.fixture
async def engine(provider: ScriptedProvider, clock: Clock) -> AsyncIterator[Engine]:
    """An engine on the tmp NEOTASK_HOME with a settable clock."""
    eng = Engine(ui_settings(), provider=provider, clock=clock, tz=UTC)
    yield eng
    await eng.aclose()


@pytest.fixture
def app_factory(engine: Engine) -> Callable[..., NeotaskApp]:
    """Build the app around the test engine."""

    def build(**ui: Any) -> NeotaskApp:
        settings = ui_settings(**ui)
        engine.settings = settings
        return make_app(settings, engine=engine)

    return build
