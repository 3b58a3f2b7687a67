"""Helpers for the app tests (sizes, settings, waiting on the pilot); not a test module."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from neotask_tui.config import Settings

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
