"""The seams the engine's parts depend on, as Protocols (instead of the whole Engine as ``Any``).

The :class:`~neotask_tui.engine.facade.Engine` satisfies every Protocol here structurally; a part
(state, compaction, recall, the turn runner) names the narrowest one it needs, so it can be built
and tested with any object that has those members, and so no part imports the facade (the layer
order in ``tests/test_architecture.py`` forbids it).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from neotask_tui.config import Settings
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.providers.base import Provider
    from neotask_tui.storage.events import Event
    from neotask_tui.storage.index import SessionRecord
    from neotask_tui.storage.keys import SessionKey
    from neotask_tui.storage.store import SessionStore


class Clock(Protocol):
    """Returns "now" as an aware datetime."""

    def __call__(self) -> datetime: ...


class Sessions(Protocol):
    """Settings, the clock, and the key's current session: its record, events and appends."""

    @property
    def settings(self) -> Settings: ...

    @property
    def readonly(self) -> bool: ...

    @property
    def store(self) -> SessionStore: ...

    def now(self) -> datetime: ...

    def now_iso(self) -> str: ...

    def parse_key(self, key: str) -> SessionKey: ...

    def current_record(self, key: str, *, create: bool = True) -> SessionRecord: ...

    def events(self, key: str) -> list[Event]: ...

    async def append(self, key: str, type_: str, data: dict[str, Any]) -> Event: ...

    def count_text(self, text: str) -> int: ...

    def count_event(self, event: Event, session_id: str = "") -> int: ...

    def window(self) -> int: ...

    def message_window(self) -> int: ...


class ProviderSource(Protocol):
    """The model provider, built on first use."""

    @property
    def provider(self) -> Provider | None: ...

    async def get_provider(self, progress: Callable[[str], None] | None = None) -> Provider: ...


class MemorySource(Protocol):
    """The long-term memory service, built lazily (None when memory is off or failed to open)."""

    @property
    def memory(self) -> MemoryService | None: ...

    async def get_memory(self) -> MemoryService | None: ...


class SessionsWithMemory(Sessions, MemorySource, Protocol):
    """The key's sessions and the long-term memory service: what the state manager (the inbox's
    accept writes memories) and the recall of compacted-away turns are built with."""
