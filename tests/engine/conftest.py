"""Fixtures for the engine tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from neotask_tui.engine.facade import Engine
from tests.doubles import Clock
from tests.engine.state_support import open_engine


@pytest.fixture
async def engine(clock: Clock) -> AsyncIterator[Engine]:
    """The state tests' engine (``state_support.open_engine``) on the ``clock`` fixture; closed after the
    test. ``test_compaction.py`` overrides it with its own."""
    eng = open_engine(clock)
    yield eng
    await eng.aclose()
