"""Memory fixtures: a real MemoryService (bundled fastembed model + LanceDB) in the tmp NEOTASK_HOME."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from neotask_tui.config import MemorySettings
from neotask_tui.memory.service import MemoryService


@pytest.fixture
def settings() -> MemorySettings:
    """Default memory settings with small chunks so tests exercise multi-chunk files."""
    return MemorySettings(chunk_tokens=60, chunk_overlap=12)


@pytest.fixture
def mem(settings: MemorySettings, neotask_home: Path) -> Iterator[MemoryService]:
    """A memory service on the test's own data dir."""
    svc = MemoryService(settings)
    yield svc
    svc.close()
