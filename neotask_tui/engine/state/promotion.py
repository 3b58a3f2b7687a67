"""The promotion-inbox half of :class:`~neotask_tui.engine.state.manager.StateManager`.

File work runs off the event loop and is serialised by one lock; accepting is the only path from the
inbox to long-term memory (through the engine's memory service, or ``MEMORY.md`` directly when
memory is disabled).
"""

from __future__ import annotations

import asyncio
from typing import Any

from neotask_tui import paths
from neotask_tui.engine.state.inbox import Candidate, Inbox, InboxEntry, memory_entry, memory_scope
from neotask_tui.storage.atomic import atomic_write_text


class InboxMixin:
    """Inbox methods; the host class provides ``engine`` and ``_inbox_lock``."""

    engine: Any
    _inbox_lock: asyncio.Lock

    async def inbox_add(self, agent_id: str, candidate: Candidate) -> InboxEntry | None:
        """Store a candidate (redacted, criteria checked); ``None`` if rejected before or a duplicate."""
        if not candidate.created_at:
            candidate.created_at = self.engine.now().isoformat()
        async with self._inbox_lock:
            return await asyncio.to_thread(Inbox(agent_id).add, candidate)

    async def inbox_list(self, agent_id: str, status: str | None = "pending") -> list[InboxEntry]:
        """Inbox entries (pending by default; ``status=None`` for all)."""
        return await asyncio.to_thread(Inbox(agent_id).entries, status)

    async def inbox_edit(self, agent_id: str, n: int, text: str) -> InboxEntry:
        """Replace the text of pending entry ``n``."""
        async with self._inbox_lock:
            return await asyncio.to_thread(Inbox(agent_id).edit, n, text)

    async def inbox_reject(self, agent_id: str, n: int) -> InboxEntry:
        """Reject entry ``n``; the same text is never proposed again."""
        async with self._inbox_lock:
            return await asyncio.to_thread(Inbox(agent_id).reject, n, self.engine.now().isoformat())

    async def inbox_accept(self, agent_id: str, n: int, scope: str | None = None) -> InboxEntry:
        """Accept entry ``n``: write it to long-term memory with source and timestamp.

        Uses the engine's memory service (``get_memory()``) when memory is enabled; otherwise appends
        the entry to ``workspace_dir(agent_id)/MEMORY.md`` directly, in the memory service's entry
        format. Provenance (source event ids, session, decision time) stays in the inbox entry.

        Raises:
            InboxError: unknown/decided entry, secrets, or a scope that is not long-term.
        """
        async with self._inbox_lock:
            inbox = Inbox(agent_id)
            e = await asyncio.to_thread(inbox.check_acceptable, n, scope)
            tag = memory_scope(scope or e.scope, e.scope_ref, agent_id)
            now = self.engine.now()
            getter = getattr(self.engine, "get_memory", None)
            memory = await getter() if callable(getter) else getattr(self.engine, "memory", None)
            if memory is not None:
                r = await asyncio.to_thread(memory.add, agent_id, e.text, file="MEMORY.md", source="inbox",
                                            scope=tag)
                where = f"memory service: {getattr(r, 'path', 'MEMORY.md')}:{getattr(r, 'line_start', '?')}"
            else:
                entry = memory_entry(e.text, when=now.astimezone(), scope=tag)
                await asyncio.to_thread(self._append_memory_md, agent_id, entry)
                where = "MEMORY.md (written directly: long-term memory is disabled or unavailable)"
            return await asyncio.to_thread(inbox.mark_accepted, n, scope=scope, at=now.isoformat(),
                                           memory=where)

    @staticmethod
    def _append_memory_md(agent_id: str, entry: str) -> None:
        path = paths.workspace_dir(agent_id) / "MEMORY.md"
        old = path.read_text(encoding="utf-8") if path.exists() else "# Memory\n"
        sep = "" if old.endswith("\n\n") else ("\n" if old.endswith("\n") else "\n\n")
        atomic_write_text(path, old + sep + entry)


__all__ = ["InboxMixin"]
