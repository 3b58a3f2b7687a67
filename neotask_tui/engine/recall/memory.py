"""Long-term memory for the engine: the lazy service, auto-recall with scope checks, archived transcripts.

:class:`MemoryRecall` is the part the :class:`~neotask_tui.engine.facade.Engine` holds; it needs the
sessions (:class:`~neotask_tui.engine.ports.Sessions`) and owns the memory service it builds.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neotask_tui import paths
from neotask_tui.engine.compaction.inputs import lineage_bounds
from neotask_tui.engine.context.assembly import RecallItem
from neotask_tui.engine.context.budget import recall_reserve
from neotask_tui.engine.ports import Sessions
from neotask_tui.memory.archived import index_archived, not_indexed, of_agent
from neotask_tui.memory.files import scan
from neotask_tui.memory.service import MemoryService
from neotask_tui.memory.types import MemoryHit, ReindexStats, history_admits
from neotask_tui.providers.selection import without_configured_keys
from neotask_tui.storage.store import ArchivedInfo

log = logging.getLogger("neotask.engine")


def scope_admits(scope: str, config: dict[str, Any]) -> bool:
    """Whether a memory of ``scope`` may enter this session's context.

    Project- and workspace-bound memories (``project:acme``, ``workspace:acme-prod``) only reach a
    session working on that project/workspace (per-session config); agent-, user- and team-wide
    memories always do (agent isolation itself is enforced by the memory store's agent filter).
    """
    kind, _, name = scope.partition(":")
    if kind in ("project", "workspace") and name:
        return str(config.get(kind, "")) == name
    return True


class MemoryRecall:
    """The memory service (built lazily, off the event loop) and what the engine asks of it.

    Args:
        sessions: Settings, the store and the key's current session.
        memory: A memory service to use (default: built on first use when memory is enabled).
    """

    def __init__(self, sessions: Sessions, memory: MemoryService | None = None,
                 stated: Callable[[str], Callable[[str], bool]] | None = None) -> None:
        self._sessions = sessions
        self._memory = memory
        self._stated = stated
        """For a key, whether a message of the user's says nothing but what its session state holds
        (:meth:`~neotask_tui.engine.state.manager.StateManager.says`, see :meth:`recall`)."""
        self._failed = ""
        self.progress: Callable[[str, int, int], None] | None = None
        """``(phase, done, total)`` of long memory work (re-embedding after a model change, rebuilding
        search terms, indexing files), for a front end to show; set before the service is built."""

    @property
    def memory(self) -> MemoryService | None:
        """The memory service if already built."""
        return self._memory

    async def get_memory(self) -> MemoryService | None:
        """The memory service, built lazily off the event loop (None if disabled/unavailable)."""
        settings = self._sessions.settings
        if self._memory is not None or not settings.memory.enabled or self._failed:
            return self._memory
        try:
            # a read-only engine (no data-dir lock) leaves store migrations to the process that holds it
            self._memory = await asyncio.to_thread(
                functools.partial(MemoryService, settings.memory, writer=not self._sessions.readonly,
                                  progress=self._progress,
                                  mask=functools.partial(without_configured_keys, settings=settings)))
        except Exception as e:  # surfaced once, never breaks a turn
            self._failed = f"memory unavailable: {e}"
            log.warning(self._failed)
        return self._memory

    def _progress(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(phase, done, total)

    async def close(self) -> None:
        """Close the memory service if it was built (its watcher and background indexing stop)."""
        if self._memory is not None:
            await asyncio.to_thread(self._memory.close)

    async def recall(self, key: str, query: str, *, preview: bool = False,
                     said: Callable[[str], bool] | None = None) -> list[RecallItem]:
        """Auto-recall for a turn (empty if disabled); never raises.

        ``preview`` (``/context``, F4, ``neotask context``) reads the memory index as it is: no memory
        file or archived transcript is indexed, nothing is written and the turn's notices are left alone.
        ``said``: whether a message of the user's says nothing but what the session state holds, when
        the caller knows the state better than the transcript (a draft's preview: with what the draft
        sets); by default the key's stored state.
        """
        ms = self._sessions.settings.memory
        if not (ms.enabled and ms.auto_recall) or not query.strip():
            return []
        agent = self._sessions.parse_key(key).agent_id
        archived = of_agent(self._sessions.store.list_archived(), agent)
        if not archived and not _has_memory_files(agent):
            return []  # nothing to recall from: don't pay for loading the embedder and LanceDB
        if preview and not self._index_exists():
            return []  # opening the store would create it: a preview writes nothing (see preview_note)
        mem = await self.get_memory()
        if mem is None:
            return []
        if archived and not preview:
            await self._index_archived(mem, agent, archived)
        cfg = self._sessions.current_record(key).config
        excl = set(cfg.get("never_recall", []))
        own = await asyncio.to_thread(lineage_sessions, self._sessions, key)
        history = ms.recall_history

        def kind(h: MemoryHit) -> str:
            return hit_kind(h, own)

        # A turn that says only what the session state already says (a rule stated in a message, then
        # carried over by /new) is in the context as state: recalled as well, it would be said twice.
        if said is None and self._stated is not None:
            said = self._stated(key)
        # A turn of this conversation still in the session (a fork's copied history, the recent turns a
        # compaction kept) is in the context as itself: quoted again, the context would say it twice.
        live = {e.id for e in self._sessions.events(key) if e.type == "message"}

        def keep(h: MemoryHit) -> bool:
            k = kind(h)
            return (scope_admits(h.scope, cfg) and history_admits(k, h.speaker, history)
                    and not (k == "conversation" and h.event_ids and all(i in live for i in h.event_ids))
                    and not (said is not None and k != "memory" and h.speaker == "user" and said(h.text)))

        # The window may need the provider choice (with nothing configured, a loopback Ollama probe):
        # off the event loop, as the recall itself.
        window = await asyncio.to_thread(self._sessions.message_window)
        budget = recall_reserve(self._sessions.settings, window)
        hits = await asyncio.to_thread(
            mem.recall, query, agent_id=agent, budget_tokens=budget,
            k=ms.recall_k, exclude=excl, refresh=not preview, keep=keep,
        )
        if not preview:
            # skipped memory files and background indexing: shown once, by this turn (see turn.send)
            self._sessions.store.notices.extend(mem.take_notices())
        return [
            RecallItem(id=h.id, text=h.text, source=h.location, score=h.score, scope=h.scope,
                       event_ids=list(h.event_ids), kind=kind(h), speaker=h.speaker, said_on=h.said_on)
            for h in hits
        ]

    async def _index_archived(self, mem: MemoryService, agent: str, archived: list[ArchivedInfo]) -> None:
        """Index ``agent``'s archived sessions not indexed yet (a large backlog in the background)."""
        await asyncio.to_thread(index_archived, mem, agent, archived, self._sessions.store.events,
                                self._sessions.now_iso)

    async def search_memory(self, key: str) -> MemoryService | None:
        """The memory service, with the key's agent's archived sessions indexed first, as before a
        turn's recall: what ``/recall`` searches right after ``/new`` holds the session just archived
        ("nothing found" while the transcript saying it waited for the next call). None when memory
        is off or unavailable."""
        mem = await self.get_memory()
        if mem is None:
            return None
        agent = self._sessions.parse_key(key).agent_id
        archived = of_agent(self._sessions.store.list_archived(), agent)
        if archived:
            await self._index_archived(mem, agent, archived)
        return mem

    def kinds(self, key: str, hits: list[MemoryHit]) -> list[str]:
        """The recall kind of each hit for the key's conversation (see :func:`hit_kind`)."""
        own = lineage_sessions(self._sessions, key)
        return [hit_kind(h, own) for h in hits]

    async def preview_note(self, key: str) -> str:
        """Why a preview's recall may differ from the next call's ("" when it should not).

        Read-only: it says what the next call would index first (memory files changed since they were
        indexed, archived transcripts not indexed yet) instead of indexing it.
        """
        if not (self._sessions.settings.memory.enabled and self._sessions.settings.memory.auto_recall):
            return ""
        agent = self._sessions.parse_key(key).agent_id
        notes: list[str] = []
        has_files = _has_memory_files(agent)
        if not self._index_exists() and has_files:
            notes.append("memory is not indexed yet")
        elif has_files and (mem := await self.get_memory()) is not None:
            # the index exists (opening it writes nothing): the check needs the service, draft or not
            pending: list[str] = await asyncio.to_thread(mem.unindexed, agent)
            if pending:
                names = ", ".join(pending[:3]) + (f" and {len(pending) - 3} more" if len(pending) > 3 else "")
                notes.append(f"memory changed since it was indexed ({names})")
        if self._sessions.settings.memory.include_transcripts:
            waiting = not_indexed(of_agent(self._sessions.store.list_archived(), agent))
            if waiting:
                n = len(waiting)
                notes.append(f"{n} archived session{'s' if n != 1 else ''} not indexed yet")
        if not notes:
            return ""
        return ("; ".join(notes)
                + ": the next call indexes it (large archives in the background), so its recall may differ")

    async def watch(self, key: str, on_change: Callable[[ReindexStats], None]) -> bool:
        """Watch the key's agent's memory files and reindex on every edit (while a front end runs), so
        a recall never pays for an edit made in another editor. Only when memory is enabled, watching
        is on and the agent has memory files (loading the embedder and LanceDB costs seconds of CPU).

        Returns:
            Whether a watcher was started.
        """
        s = self._sessions.settings.memory
        agent = self._sessions.parse_key(key).agent_id
        if not (s.enabled and s.watch) or not _has_memory_files(agent):
            return False
        mem = await self.get_memory()
        if mem is None:
            return False
        await asyncio.to_thread(mem.start_watcher, agent, on_change)
        return True

    def _index_exists(self) -> bool:
        """Whether the memory store exists (a remote one is assumed to)."""
        uri = self._sessions.settings.memory.db_uri
        if "://" in uri:
            return True
        root = Path(uri) if uri else paths.memory_db_dir()
        return root.is_dir() and any(root.glob("*.lance"))


def hit_kind(hit: MemoryHit, conversation: dict[str, int | None]) -> str:
    """The recall kind of a memory hit: a transcript passage of the ``conversation``'s part of one of its
    sessions (:func:`lineage_sessions`) is ``conversation``, another session's (or a parent's turn past
    a fork point: the other branch) ``history``; files ``memory``."""
    if hit.kind == "history":
        sid = hit.path.removeprefix("transcripts/")
        if sid in conversation:
            cap = conversation[sid]
            if cap is None or all(i <= cap for i in hit.event_ids):
                return "conversation"
    return hit.kind


def lineage_sessions(sessions: Sessions, key: str, max_depth: int = 1000) -> dict[str, int | None]:
    """Session ids of the key's current conversation: its current session and the sessions it continues
    (compacted from, or forked from), as :func:`~neotask_tui.engine.compaction.inputs.lineage_bounds`
    walks them — one definition of the lineage for the fence and the receipts (their turns are *this
    conversation*; every other session's are *history*). Each id maps to the last event id of it in the
    conversation (``None``: all of it; a fork's parent up to the fork point). A missing ancestor is not
    in it."""
    _, bounds = lineage_bounds(sessions.events(key), sessions.store.events, max_depth)
    return {s: cap for s, cap in bounds.items() if s and not s.endswith(" (missing)")}


def _has_memory_files(agent: str) -> bool:
    """Whether the agent has anything memory would read or report (a skipped file is told once)."""
    ws = paths.workspace_dir(agent)
    if os.path.lexists(ws / "MEMORY.md"):
        return True
    found = scan(ws, 1 << 62)  # depth-limited, follows no link (a 1,100-deep folder broke rglob)
    return bool(found.files or found.skipped)
