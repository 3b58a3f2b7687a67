"""Helpers for the session-state tests (``test_state*.py``, ``test_inbox.py``); not a test module."""

from __future__ import annotations

from neotask_tui.config import Settings
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.manager import StateManager
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import Clock

KEY = "agent:main:tui:default"


def make_settings() -> Settings:
    """Memory off, no daily or idle reset: only the test's clock moves sessions."""
    s = Settings()
    s.memory.enabled = False
    s.session.daily_reset_hour = -1
    s.session.idle_reset_minutes = 0
    return s


def open_engine(clock: Clock, provider: ScriptedProvider | None = None) -> Engine:
    """An Engine on ``make_settings()`` with ``clock`` and a scripted provider."""
    return Engine(make_settings(), provider=provider or ScriptedProvider(), clock=clock)


def st(eng: Engine) -> StateManager:
    """The engine's state manager."""
    assert isinstance(eng.state, StateManager)
    return eng.state
