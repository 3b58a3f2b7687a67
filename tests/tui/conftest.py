"""Fixtures for the app tests: an engine with a scripted provider and a fixed clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from neotask_tui.config import Settings
from neotask_tui.engine.api import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp, make_app

FIXED_NOW = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)
SIZE = (120, 40)


def test_settings(**ui: Any) -> Settings:
    """Settings for tests: memory off (no embedder), scripted provider, fixed window."""
    s = Settings()
    s.memory.enabled = False
    s.provider.name = "scripted"
    s.context.window_tokens = 8192
    s.session.daily_reset_hour = 4
    for k, v in ui.items():
        setattr(s.ui, k, v)
    return s


@pytest.fixture
def provider() -> ScriptedProvider:
    """The scripted provider the engine answers with (tests queue replies)."""
    return ScriptedProvider()


@pytest.fixture
async def engine(provider: ScriptedProvider) -> AsyncIterator[Engine]:
    """An engine on the tmp NEOTASK_HOME with a fixed clock."""
    eng = Engine(test_settings(), provider=provider, clock=lambda: FIXED_NOW, tz=UTC)
    yield eng
    await eng.aclose()


@pytest.fixture
def app_factory(engine: Engine) -> Callable[..., NeotaskApp]:
    """Build the app around the test engine."""

    def build(**ui: Any) -> NeotaskApp:
        settings = test_settings(**ui)
        engine.settings = settings
        return make_app(settings, engine=engine)

    return build
