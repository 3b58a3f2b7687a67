"""Long-term memory: MEMORY.md + memory/, offline embeddings, LanceDB hybrid search, recall, forget.

Import-cheap: the service and everything heavy (fastembed, LanceDB, numpy) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neotask_tui.memory.types import AddReceipt, ForgetReceipt, MemoryHit, ReindexStats

if TYPE_CHECKING:
    from neotask_tui.memory.service import MemoryService

__all__ = ["AddReceipt", "ForgetReceipt", "MemoryHit", "MemoryService", "ReindexStats"]


def __getattr__(name: str) -> type[MemoryService]:
    if name == "MemoryService":
        from neotask_tui.memory.service import MemoryService

        return MemoryService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
