"""Fixtures for the fault suite: engines on the real data dir (NEOTASK_HOME = tmp) with the
scripted provider, and the storage boundary hook reset after every test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from neotask_tui.storage import atomic


@pytest.fixture(autouse=True)
def _reset_io_hooks() -> Iterator[None]:
    yield
    atomic.io_hooks.before_write = None


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No daily reset surprises and no heavy memory stack unless a test asks for it."""
    monkeypatch.setenv("NEOTASK_SESSION_DAILY_RESET_HOUR", "-1")
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "false")


@pytest.fixture
def data_dir(neotask_home: Path) -> Path:
    return neotask_home / "data"


@pytest.fixture
async def engine() -> AsyncIterator[Any]:
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    e = Engine(load_settings(), provider=ScriptedProvider())
    try:
        yield e
    finally:
        await e.aclose()


@pytest.fixture
def svc(monkeypatch: pytest.MonkeyPatch, neotask_home: Path) -> Iterator[Any]:
    """A memory service on the real data dir (memory switched on for this test), closed after."""
    from neotask_tui.config import load_settings
    from neotask_tui.memory.service import MemoryService

    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    s = MemoryService(load_settings().memory)
    yield s
    s.close()
