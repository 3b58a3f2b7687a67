"""The promotion inbox as the state manager uses it: :class:`Promotion`.

:class:`~neotask_tui.engine.state.manager.StateManager` holds one (``state.promotion``) and delegates
its ``inbox_*`` methods to it. File work runs off the event loop and is serialised by one lock;
accepting is the only path from the inbox to long-term memory (through the memory service, or
``MEMORY.md`` directly when memory is disabled).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from neotask_tui import paths
from neotask_tui.engine.ports import Clock, MemorySource
from neotask_tui.engine.state.inbox import Candidate, Inbox, InboxEntry, memory_entry, memory_scope
from neotask_tui.memory.index.chunking import find_entry, place_entry
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
        self._thread_lock = threading.Lock()

    async def settle(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) for an inbox change running in a worker thread to end:
        closing the engine under an accept would leave the memory written and the entry pending.
        False if it did not end in time."""
        def wait() -> bool:
            if not self._thread_lock.acquire(timeout=timeout):
                return False
            self._thread_lock.release()
            return True

        return await asyncio.to_thread(wait)

    def _locked(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run an inbox change in this thread under the thread lock (a worker thread outlives a
        cancelled caller, so the asyncio lock alone does not keep two changes apart)."""
        with self._thread_lock:
            return fn(*args)

    async def add(self, agent_id: str, candidate: Candidate) -> InboxEntry | None:
        """Store a candidate (redacted, criteria checked); ``None`` if rejected before or a duplicate."""
        if not candidate.created_at:
            candidate.created_at = self._now().isoformat()
        async with self._lock:
            return await asyncio.to_thread(self._locked, Inbox(agent_id).add, candidate)

    async def entries(self, agent_id: str, status: str | None = "pending") -> list[InboxEntry]:
        """Inbox entries (pending by default; ``status=None`` for all)."""
        return await asyncio.to_thread(Inbox(agent_id).entries, status)

    async def edit(self, agent_id: str, n: int, text: str) -> InboxEntry:
        """Replace the text of pending entry ``n``."""
        async with self._lock:
            return await asyncio.to_thread(self._locked, Inbox(agent_id).edit, n, text)

    async def withdraw(self, agent_id: str, session_id: str, source_ids: list[int]) -> list[InboxEntry]:
        """Withdraw the pending entries proposed only from these (edited-away) messages."""
        async with self._lock:
            return await asyncio.to_thread(self._locked, Inbox(agent_id).withdraw, session_id, source_ids,
                                           self._now().isoformat())

    async def reject(self, agent_id: str, n: int) -> InboxEntry:
        """Reject entry ``n``; the same text is never proposed again."""
        async with self._lock:
            return await asyncio.to_thread(self._locked, Inbox(agent_id).reject, n, self._now().isoformat())

    async def accept(self, agent_id: str, n: int, scope: str | None = None) -> InboxEntry:
        """Accept entry ``n``: write it to long-term memory with source and timestamp.

        Uses the memory service (``get_memory()``) when memory is enabled; otherwise appends the
        entry to ``workspace_dir(agent_id)/MEMORY.md`` directly, in the memory service's entry
        format. Provenance (source event ids, session, decision time) stays in the inbox entry.

        The write and the status change are one step in one worker thread, under a thread lock: a
        caller that is cancelled meanwhile (a screen closed) cannot leave the memory written and the
        entry pending. The write is idempotent (the same words already in the file are not written
        again), so an accept interrupted by a crash between the two files is finished by accepting
        again, and never makes a duplicate.

        Raises:
            InboxError: unknown/decided entry, secrets, or a scope that is not long-term.
        """
        async with self._lock:
            memory = await self._memory.get_memory()
            now = self._now()

            def run() -> InboxEntry:
                with self._thread_lock:
                    inbox = Inbox(agent_id)
                    e = inbox.check_acceptable(n, scope)
                    tag = memory_scope(scope or e.scope, e.scope_ref, agent_id)
                    if memory is not None:
                        r = memory.add(agent_id, e.text, file="MEMORY.md", source="inbox", scope=tag)
                        where = f"memory service: {r.path}:{r.line_start}"
                    else:
                        _append_memory_md(agent_id, memory_entry(e.text, when=now.astimezone(), scope=tag), e.text)
                        where = "MEMORY.md (written directly: long-term memory is disabled or unavailable)"
                    return inbox.mark_accepted(n, scope=scope, at=now.isoformat(), memory=where)

            return await asyncio.to_thread(run)


def _append_memory_md(agent_id: str, entry: str, text: str) -> None:
    path = paths.workspace_dir(agent_id) / "MEMORY.md"
    old = path.read_text(encoding="utf-8") if path.exists() else "# Memory\n"
    if find_entry(old, text) is None:
        atomic_write_text(path, place_entry(old, entry)[0])


__all__ = ["Promotion"]
