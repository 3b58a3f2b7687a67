"""Shared test fixtures: every test gets its own NEOTASK_HOME; nothing touches the network."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from tests.doubles import DEFAULT_START, Clock


@pytest.fixture(autouse=True)
def neotask_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point NEOTASK_HOME at a fresh tmp dir and clear env that would pick a real provider."""
    home = tmp_path / "neotask-home"
    monkeypatch.setenv("NEOTASK_HOME", str(home))
    for var in (
        "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OLLAMA_HOST", "NEOTASK_PROVIDER",
        "NEOTASK_MODEL", "NEOTASK_SCRIPT",
    ):
        monkeypatch.delenv(var, raising=False)
    # Never let a test probe a real Ollama; tests that need it set their own server.
    monkeypatch.setenv("NEOTASK_PROVIDER_PROBE_OLLAMA", "false")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield home


@pytest.fixture
def clock_start() -> datetime:
    """Where the ``clock`` fixture starts; a conftest or test module overrides this to start elsewhere."""
    return DEFAULT_START


@pytest.fixture
def clock(clock_start: datetime) -> Clock:
    """A frozen engine clock at ``clock_start`` that only the test moves (``advance``/``set``)."""
    return Clock(clock_start)
