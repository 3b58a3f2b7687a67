"""Fixtures for the app tests: an engine with a scripted provider and a fixed clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp, make_app
from tests.doubles import Clock
from tests.tui.support import FIXED_NOW, ui_settings


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
