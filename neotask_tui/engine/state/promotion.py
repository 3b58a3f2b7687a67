"""The promotion inbox as the state manager uses it: :class:`Promotion`.

:class:`~neotask_tui.engine.state.manager.StateManager` holds one (``state.promotion``) and delegates
its ``inbox_*`` methods to it. File work runs off the event loop and is serialised by one lock;
accepting is the only path from the inbox to long-term memory (through the memory service, or
``MEMORY.md`` directly when memory is disabled).
"""

from __future__ import annotations

import asyncio

from neotask_tui import paths
from neotask_tui.engine.ports import Clock, MemorySource
from neotask_tui.engine.state.inbox import Candidate, Inbox, InboxEntry, memory_entry, memory_scope
from neotask_tui.storage.atomic import atomic_write_text


class Promotion:
    """The agents' promotion inboxes: propose, list, edit, reject, accept into long-term memory.

    Args:
        now: The clock (timestamps of proposals and decisions).
        memory: The long-term memory service an accepted entry is written to.
    """

    def __init__(self, *, now: Clock, memory: MemorySource) -> None:
        self._now = now
        self._memory = memory
        self._lock = asyncio.Lock()

    async def add(self, agent_id: str, candidate: Candidate) -> InboxEntry | None:
        """Store a candidate (redacted, criteria checked); ``None`` if rejected before or a duplicate."""
        if not candidate.created_at:
            candidate.created_at = self._now().isoformat()
        async with self._lock:
            return await asyncio.to_thread(Inbox(agent_id).add, candidate)

    async def entries(self, agent_id: str, status: str | None = "pending") -> list[InboxEntry]:
        """Inbox entries (pending by default; ``status=None`` for all)."""
        return await asyncio.to_thread(Inbox(agent_id).entries, status)

    async def edit(self, agent_id: str, n: int, text: str) -> InboxEntry:
        """Replace the text of pending entry ``n``."""
        async with self._lock:
            return await asyncio.to_thread(Inbox(agent_id).edit, n, text)

    async def reject(self, agent_id: str, n: int) -> InboxEntry:
        """Reject entry ``n``; the same text is never proposed again."""
        async with self._lock:
            return await asyncio.to_thread(Inbox(agent_id).reject, n, self._now().isoformat())

    async def accept(self, agent_id: str, n: int, scope: str | None = None) -> InboxEntry:
        """Accept entry ``n``: write it to long-term memory with source and timestamp.

        Uses the memory service (``get_memory()``) when memory is enabled; otherwise appends the
        entry to ``workspace_dir(agent_id)/MEMORY.md`` directly, in the memory service's entry
        format. Provenance (source event ids, session, decision time) stays in the inbox entry.

        Raises:
            InboxError: unknown/decided entry, secrets, or a scope that is not long-term.
        """
        async with self._lock:
            inbox = Inbox(agent_id)
            e = await asyncio.to_thread(inbox.check_acceptable, n, scope)
            tag = memory_scope(scope or e.scope, e.scope_ref, agent_id)
            now = self._now()
            memory = await self._memory.get_memory()
            if memory is not None:
                r = await asyncio.to_thread(memory.add, agent_id, e.text, file="MEMORY.md", source="inbox",
                                            scope=tag)
                where = f"memory service: {r.path}:{r.line_start}"
            else:
                entry = memory_entry(e.text, when=now.astimezone(), scope=tag)
                await asyncio.to_thread(_append_memory_md, agent_id, entry)
                where = "MEMORY.md (written directly: long-term memory is disabled or unavailable)"
            return await asyncio.to_thread(inbox.mark_accepted, n, scope=scope, at=now.isoformat(),
                                           memory=where)


def _append_memory_md(agent_id: str, entry: str) -> None:
    path = paths.workspace_dir(agent_id) / "MEMORY.md"
    old = path.read_text(encoding="utf-8") if path.exists() else "# Memory\n"
    sep = "" if old.endswith("\n\n") else ("\n" if old.endswith("\n") else "\n\n")
    atomic_write_text(path, old + sep + entry)


__all__ = ["Promotion"]
