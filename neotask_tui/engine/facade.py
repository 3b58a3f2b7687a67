"""The Engine facade: the one object the TUI, the plain REPL and the CLI talk to.

Async methods yield or return plain dataclass events (:mod:`neotask_tui.engine.events`); nothing
here imports a UI toolkit. Blocking work (fsync'd appends, model loading, embeddings, LanceDB) runs
in threads via ``asyncio.to_thread``.

The facade wires the engine's parts with explicit dependencies: ``state`` (StateManager),
``compactor`` (Compactor), ``lineage`` (LineageRecall) and ``memory_recall`` (MemoryRecall, which owns
the memory service). Each part depends on the Protocols of :mod:`neotask_tui.engine.ports`
(``Sessions``: settings, clock, the key's session, appends, counting; ``ProviderSource``;
``MemorySource``), which this class satisfies; no part imports this module. The turn runs in
:mod:`neotask_tui.engine.session.turn`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
from collections.abc import AsyncGenerator, Callable, Sequence
from datetime import UTC, datetime, tzinfo
from typing import Any

from neotask_tui import paths
from neotask_tui.config import Settings, load_settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.compaction.compactor import CompactionResult, Compactor, UndoResult
from neotask_tui.engine.context.assembly import AssembledContext, ContextInputs, Ledger, RecallItem, build_context
from neotask_tui.engine.context.attachments import Attachment
from neotask_tui.engine.context.budget import compaction_point, keep_recent, recall_reserve, state_budget
from neotask_tui.engine.recall.lineage import LineageRecall
from neotask_tui.engine.recall.memory import MemoryRecall, scope_admits
from neotask_tui.engine.session import turn as _turn
from neotask_tui.engine.session.lifecycle import check_stale, local_zone, next_reset_at
from neotask_tui.engine.state.manager import StateManager, StateView
from neotask_tui.errors import UserError
from neotask_tui.memory.service import MemoryService
from neotask_tui.memory.types import MemoryHit, ReindexStats
from neotask_tui.providers.base import ChatMessage, Provider, Usage
from neotask_tui.providers.models import ModelInfo
from neotask_tui.providers.selection import (
    KEY_IN_SESSION_KEY,
    ModelOption,
    ProviderChoice,
    check_model_setting,
    looks_like_key,
    without_configured_keys,
)
from neotask_tui.storage.events import RESET_UNDONE, Event, without_superseded
from neotask_tui.storage.index import SessionRecord
from neotask_tui.storage.keys import SessionKey, parse_key, validate_key
from neotask_tui.storage.lock import DataLock
from neotask_tui.storage.search import SearchResult, parse_since
from neotask_tui.storage.store import SessionStore, parse_ts, touch
from neotask_tui.text.tokens import TokenCounter
from neotask_tui.tuning import CLOSE_SETTLE_SECONDS

PromptCounter = Callable[[list[ChatMessage]], int]
"""Exact token count of a whole prompt in the model's own chat format."""

log = logging.getLogger("neotask.engine")


class Engine:
    """Sessions, turns, lifecycle, compaction, state and memory behind one async API.

    Args:
        settings: Loaded settings (default: :func:`load_settings`).
        readonly: Open without the data-dir lock; every write raises :class:`UserError`.
        provider: A provider to use instead of choosing one (tests pass a ScriptedProvider).
        clock: Returns "now" (aware); injectable for lifecycle tests and benches.
        tz: Time zone for the daily reset (default: the local zone).
        memory: A memory service to use (default: built lazily when memory is enabled).

    Raises:
        ConfigError: ``provider.model`` looks like an API key (without ``provider``; nothing opened).
        LockedError: another process holds the data dir (unless ``readonly``).
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        readonly: bool = False,
        provider: Provider | None = None,
        clock: Callable[[], datetime] | None = None,
        tz: tzinfo | None = None,
        memory: MemoryService | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        if provider is None:  # before anything is opened: an API key given as the model is never shown or stored
            check_model_setting(self.settings)
        self.readonly = readonly
        self._lock = DataLock()
        if not readonly:
            self._lock.acquire()
        try:
            self.store = SessionStore(readonly=readonly)
            self.store.admit_key = self.storable_key
            if not readonly:
                caught_up = self.store.reconcile_counters()
                if caught_up:
                    self.store.notices.append(
                        f"token counters caught up with the transcript for {len(caught_up)} session(s)")
                fixed = self.store.repair_orphans()
                if fixed:
                    self.store.notices.append(
                        f"archived {len(fixed)} orphaned transcript(s) left by an interrupted switch")
                agents = {parse_key(k).agent_id for k in self.store.records}
                with contextlib.suppress(UserError):
                    agents.add(parse_key(self.settings.general.default_key).agent_id)
                for agent in sorted(agents):
                    self.migrate_workspace(agent)
        except BaseException:
            self._lock.release()
            raise
        self._provider: Provider | None = provider
        self._provider_reason = "given by the caller" if provider else ""
        self._switched: tuple[ProviderChoice, Settings] | None = None
        self._tool_count: tuple[tuple[str, int], int] | None = None
        """The tool definitions' token count, with what it was counted for (see :meth:`tool_tokens`)."""
        """The ``/model NAME`` choice of this run and the settings it is built with."""
        self._clock = clock
        self.tz = tz or local_zone()
        self._tok: dict[tuple[str, str, int], int] = {}
        self._counter: tuple[tuple[str, str, str], TokenCounter, PromptCounter | None] | None = None
        self._counter_for: tuple[int, int] = (0, 0)
        self.turn_lock = asyncio.Lock()
        """Serialises turns, session switches and compactions of this engine."""
        self.state = StateManager(self)
        self.memory_recall = MemoryRecall(self, memory, stated=self.state.says)
        self.compactor = Compactor(self)
        self.lineage = LineageRecall(self)
        self.last_ledger: dict[str, Ledger] = {}
        """The ledger of the last context sent per key."""

    # ------------------------------------------------------------------ lifecycle of the engine
    async def aclose(self) -> None:
        """Release the provider, memory service, search index and lock, once an inbox decision
        running in a worker thread (an accept whose caller was cancelled: the app quitting) has
        ended, for at most :data:`~neotask_tui.tuning.CLOSE_SETTLE_SECONDS`."""
        with contextlib.suppress(Exception):
            if not await self.state.promotion.settle(CLOSE_SETTLE_SECONDS):
                log.warning("closing while an inbox decision is still being written")
        if self._provider is not None:
            with contextlib.suppress(Exception):
                await self._provider.aclose()
        with contextlib.suppress(Exception):
            await self.memory_recall.close()
        self.store.search.close()
        self._lock.release()

    def close(self) -> None:
        """Synchronous close (releases the search index and the lock; for CLI paths without a loop)."""
        self.store.search.close()
        self._lock.release()

    @property
    def notices(self) -> list[str]:
        """Repairs and problems found while loading (rebuilt index, quarantined lines...)."""
        return self.store.notices

    # ------------------------------------------------------------------ internal API for features
    def now(self) -> datetime:
        """Current time (aware)."""
        return self._clock() if self._clock else datetime.now(UTC)

    def now_iso(self) -> str:
        """Current time as ISO-8601."""
        return self.now().isoformat()

    def default_key(self) -> str:
        """The configured default session key."""
        return validate_key(self.settings.general.default_key)

    def migrate_workspace(self, agent_id: str) -> None:
        """Move the agent's workspace from its pre-injective folder name once (writers only); the
        move is reported as a notice of the next turn."""
        if self.readonly:
            return
        note = paths.migrate_workspace(agent_id)
        if note:
            log.info("%s", note)
            self.store.notices.append(note)

    @staticmethod
    def parse_key(key: str) -> SessionKey:
        """Validate and parse a session key (raises UserError)."""
        return parse_key(key)

    def storable_key(self, key: str) -> str:
        """``key`` validated for a new session: a key is stored as it is (the transcript's header,
        ``sessions.json``, the search index, exports), so one holding a secret (part of the configured
        API key, a token the redactor knows) is refused, never echoed.

        Raises:
            UserError: a malformed key, or one that holds a secret.
        """
        key = validate_key(key)
        if any(looks_like_key(part, self.settings) for part in key.split(":")[1:]):
            raise UserError(KEY_IN_SESSION_KEY)
        return key

    def current_record(self, key: str, *, create: bool = True) -> SessionRecord:
        """The current session record of ``key`` (a fresh session is created if none exists)."""
        key = validate_key(key)
        rec = self.store.get(key)
        if rec is None:
            if not create or self.readonly:
                raise UserError(f"no session for {key}")
            rec = self.store.create_session(key, reason="new", now=self.now())
        return rec

    def events(self, key: str) -> list[Event]:
        """Events of the key's current session."""
        return self.store.events(self.current_record(key).session_id)

    async def append(self, key: str, type_: str, data: dict[str, Any]) -> Event:
        """Durably append an event to the key's current session (fsynced in a thread)."""
        sid = self.current_record(key).session_id
        return await asyncio.to_thread(self.store.append, sid, type_, data, ts=self.now_iso())

    def _counters(self) -> tuple[TokenCounter, PromptCounter | None]:
        """The current model's token counter, and its whole-prompt counter when counts are exact.

        A local GGUF is counted by its own tokenizer (loaded ``vocab_only`` on first use: call this
        off the event loop first), through its own chat template; OpenAI's newer models with o200k,
        everything else with cl100k (an estimate).
        """
        from neotask_tui.text.tokens import counter

        quick = (id(self._provider), id(self._switched))
        if self._counter is not None and self._counter_for == quick:  # count_text runs per message
            return self._counter[1], self._counter[2]
        self._counter_for = quick
        if self._provider is not None:
            name, model = self._provider.name, self._provider.model
        else:
            choice = self.choose_provider()
            name, model = choice.name, choice.model
        settings = self._switched[1] if self._switched is not None else self.settings
        key = (name, model, settings.provider.local_model_path if name == "local" else "")
        if self._counter is not None and self._counter[0] == key:
            return self._counter[1], self._counter[2]
        found: TokenCounter = counter(name, model)
        prompt: PromptCounter | None = None
        if name == "local":
            from neotask_tui.providers import gguf
            from neotask_tui.providers.local import bundled_model_path

            try:
                path = settings.provider.local_model_path or str(bundled_model_path())
                fmt = gguf.vocab(str(os.path.expanduser(path)))
                found, prompt = fmt, fmt.count_prompt
            except Exception as e:  # no file / not a GGUF: the estimate, and the load will say why
                log.info("exact token counts unavailable for %s (%s); estimating", model, e)
        self._counter = (key, found, prompt)
        return found, prompt

    def count_text(self, text: str) -> int:
        """Token count of ``text`` for the current model (exact for a local GGUF, else tiktoken)."""
        return self._counters()[0].count(text)

    def counts_exact(self) -> bool:
        """Whether the context's total is the model's exact prompt size (a local GGUF)."""
        return self._counters()[1] is not None

    def count_event(self, event: Event, session_id: str = "") -> int:
        """Cached token count of one event's content (per counter: a model switch recounts)."""
        name = self._counters()[0].name
        k = (name, session_id, event.id) if session_id else (name, str(id(event)), event.id)
        n = self._tok.get(k)
        if n is None:
            n = self.count_text(event.content)
            self._tok[k] = n
        return n

    # ------------------------------------------------------------------ provider
    @property
    def provider(self) -> Provider | None:
        """The provider if already built (see :meth:`get_provider`)."""
        return self._provider

    @property
    def provider_reason(self) -> str:
        """Why this provider was chosen."""
        return self._provider_reason

    def choose_provider(self) -> ProviderChoice:
        """The provider choice (name, model, reason) without building it (cheap); a ``/model``
        switch of this run wins over the configuration."""
        from neotask_tui.providers.selection import choose_provider

        if self._switched is not None:
            return self._switched[0]
        return choose_provider(self.settings)

    def model_options(self, *, probe: bool = False) -> list[ModelOption]:
        """What ``/model`` can switch to (see :func:`~neotask_tui.providers.selection.model_options`);
        with ``probe`` and ``provider.probe_ollama`` on, Ollama on loopback is asked for its models."""
        from neotask_tui.providers.selection import model_options, ollama_base, probe_ollama

        found = None
        if probe and self.settings.provider.probe_ollama:
            found = probe_ollama(ollama_base(os.environ))
        return model_options(self.settings, ollama_models=found)

    async def switch_provider(self, name: str, model: str | None = None) -> ProviderChoice:
        """Answer with provider ``name`` (and ``model``) from the next turn on, for this run only.

        Only what the user configured is used (keys, URLs, files); nothing is downloaded. The
        current provider is closed after the turn in flight, if any, has ended.

        Raises:
            ConfigError: ``name`` is unknown or not configured, or ``name`` or ``model`` looks like
                an API key (refused without echoing it; nothing changes).
        """
        from neotask_tui.providers.selection import choose_named

        choice, settings = choose_named(self.settings, name, model)
        async with self.turn_lock:
            old, self._provider = self._provider, None
            self._switched = (choice, settings)
            self._provider_reason = choice.reason
        if old is not None:
            with contextlib.suppress(Exception):
                await old.aclose()
        return choice

    async def get_provider(self, progress: Callable[[str], None] | None = None) -> Provider:
        """Build the provider on first use (local model load runs in a thread)."""
        if self._provider is not None:
            return self._provider
        from neotask_tui.providers.selection import build_provider

        choice = await asyncio.to_thread(self.choose_provider)
        settings = self._switched[1] if self._switched is not None else self.settings
        prov = await asyncio.to_thread(build_provider, choice, settings)
        await prov.load(progress)
        self._provider = prov
        self._provider_reason = choice.reason
        return prov

    async def prepare_provider(self) -> None:
        """Build the provider now when building it is cheap (no model to load, no network), so a bad
        configuration is a one-line error before a turn stores anything."""
        from neotask_tui.providers.selection import builds_first

        if self._provider is None and builds_first(self.settings):
            await self.get_provider()

    def model_info(self) -> ModelInfo:
        """Context window and prices of the current model (from the shipped table)."""
        from neotask_tui.providers.models import lookup_model

        p = self._provider
        if p is None:
            choice = self.choose_provider()
            return lookup_model(choice.name, choice.model)
        return lookup_model(p.name, p.model)

    def window(self) -> int:
        """The context window in tokens for the next call."""
        if self.settings.context.window_tokens > 0:
            return self.settings.context.window_tokens
        loaded = self._provider.context_window if self._provider is not None else None
        if loaded:
            return loaded  # what the model was actually loaded with (local GGUFs)
        return self.model_info().context_window

    def tool_tokens(self) -> int:
        """Tokens of the tool definitions the next call sends with its messages (0 when the provider
        takes no tools), counted as :func:`~neotask_tui.engine.context.assembly.count_tools` does."""
        from neotask_tui.engine.context.assembly import count_tools
        from neotask_tui.engine.session.turn import next_call_tools, tool_definitions

        defs = tool_definitions(next_call_tools(self))
        # counted once per set of definitions and counter: every build (each turn, each gauge refresh) asks
        key = (json.dumps(defs, ensure_ascii=False, sort_keys=True, default=str), id(self._counters()[0]))
        if self._tool_count is None or self._tool_count[0] != key:
            self._tool_count = (key, count_tools(defs, self.count_text))
        return self._tool_count[1]

    def message_window(self) -> int:
        """The part of the window the messages have: the model's window less the tool definitions sent
        with every call (they count against the window as input; red team 33). Every budget — the
        ledger's window and fill, the recall reserve, the raw window a compaction keeps, the state's
        share, the compaction threshold — is of this."""
        return max(self.window() - self.tool_tokens(), 0)

    # ------------------------------------------------------------------ memory (engine/recall/memory.py)
    async def get_memory(self) -> MemoryService | None:
        """The memory service, built lazily off the event loop (None if disabled/unavailable)."""
        return await self.memory_recall.get_memory()

    def show_memory_progress(self, progress: Callable[[str, int, int], None] | None) -> None:
        """Report ``(phase, done, total)`` of long memory work (re-embedding after a model change,
        rebuilding search terms, indexing files) to ``progress``; called from worker threads."""
        self.memory_recall.progress = progress

    async def watch_memory(self, key: str, on_change: Callable[[ReindexStats], None]) -> bool:
        """Reindex the key's agent's memory files on every edit (see :meth:`MemoryRecall.watch`)."""
        return await self.memory_recall.watch(key, on_change)

    @property
    def memory(self) -> MemoryService | None:
        """The memory service if already built."""
        return self.memory_recall.memory

    async def recall(self, key: str, query: str) -> list[RecallItem]:
        """Auto-recall for a turn (empty if disabled or nothing to recall from)."""
        return await self.memory_recall.recall(key, query)

    async def search_memory(self, key: str) -> MemoryService | None:
        """The memory service for a search the user asks for (``/recall``), the key's agent's archived
        sessions indexed first as before a turn's recall; None when memory is off or unavailable."""
        return await self.memory_recall.search_memory(key)

    def recall_kinds(self, key: str, hits: list[MemoryHit]) -> list[str]:
        """The recall kind (``memory``, ``conversation``, ``history``) of each memory hit for the key."""
        return self.memory_recall.kinds(key, hits)

    # ------------------------------------------------------------------ the turn (engine/session/turn.py)
    def send(self, text: str, key: str | None = None,
             attachments: Sequence[Attachment] = ()) -> AsyncGenerator[ev.EngineEvent, None]:
        """Run one turn: store the user's message (with the files attached to it, see
        :mod:`~neotask_tui.engine.context.attachments`), assemble context, stream the reply, store it.

        Yields engine events. The user's message is durably on disk before :class:`TurnStarted`.
        If the consumer stops iterating (Esc/Ctrl+C) the partial reply is kept, marked interrupted.
        """
        return _turn.send(self, text, key, attachments)

    def retry(self, key: str | None = None) -> AsyncGenerator[ev.EngineEvent, None]:
        """Ask the model again for the reply to your last message (``/retry``).

        The old reply stays in the transcript, marked superseded, and leaves the context; its cost
        stays counted. Yields :class:`~neotask_tui.engine.events.Superseded`, then a turn's events.
        """
        return _turn.regenerate(self, key, None)

    def edit_last(self, text: str, key: str | None = None,
                  attachments: Sequence[Attachment] = ()) -> AsyncGenerator[ev.EngineEvent, None]:
        """Replace your last message with ``text`` and answer it (``/edit``); the old message and
        its reply stay in the transcript, marked superseded, and leave the context. The new message
        keeps the files of the one it replaces, with ``attachments`` (its ``@path`` ones; a file
        attached again is the new read)."""
        return _turn.regenerate(self, key, text, attachments)

    def last_user_message(self, key: str) -> Event | None:
        """Your last message in the key's current session that ``/edit`` would replace (None if none)."""
        rec = self.store.get(validate_key(key))
        if rec is None:
            return None
        live = without_superseded(self.store.events(rec.session_id))
        return next((e for e in reversed(live) if e.type == "message" and e.role == "user"), None)

    # ------------------------------------------------------------------ branches
    async def fork_session(self, key: str, at: int | None = None, *,
                           from_session: str | None = None) -> SessionRecord:
        """Branch the conversation at event ``at``: a new session for ``key`` whose transcript holds
        the history up to that event with its original ids.

        Like ``/new``, the fork becomes the key's current session and the one that was current is
        archived (viewable, and ``restore`` brings it back); the fork's header names its parent
        (``parent_session_id``) and the point (``fork_at``). The session state is the state as it
        was at the fork point (its ``state`` records up to there are part of the copied history;
        entries then expire by time as they would have). Token counters start at zero: nothing has
        been sent in the fork yet.

        Args:
            key: The session key the fork belongs to.
            at: The event id to fork at, a message (yours or a reply); None: the last message. An
                event compaction moved out of the session is found in the session that holds it.
            from_session: Fork this session (live or archived) instead of the key's current one,
                e.g. "resume here" from a search hit in an archived transcript. It must belong to
                the key's agent: one agent's conversation never becomes another's.

        Raises:
            UserError: no session, no such event, the event is not a message, or ``from_session``
                belongs to another agent.
        """
        from neotask_tui.engine.session.branch import plan_fork

        key = validate_key(key)
        async with self.turn_lock:
            src = self.current_record(key, create=False).session_id if from_session is None else from_session
            # reading an archived transcript and copying the history are file and CPU work: off the loop
            source = await asyncio.to_thread(self.store.events, src)
            head = source[0] if source and source[0].type == "session" else None
            owner = str(head.data.get("key", "")) if head is not None else ""
            if from_session is not None and (not owner.startswith("agent:")
                                             or parse_key(owner).agent_id != parse_key(key).agent_id):
                raise UserError(f"session {src} belongs to {owner or 'no key'}, not to agent "
                                f"{parse_key(key).agent_id!r}: fork it into a key of its own agent")
            plan = await asyncio.to_thread(plan_fork, src, source, at, self.store.events)
            rec = await asyncio.to_thread(
                self.store.create_session, key, reason="fork", parent_session_id=plan.parent_session_id,
                first_id=plan.header_id, extra_events=plan.events, now=self.now(), fork_at=plan.at)
        return rec

    # ------------------------------------------------------------------ routing and lifecycle
    def next_reset(self, key: str) -> tuple[datetime, str] | None:
        """When the key's session will next be reset automatically, and why (daily/idle)."""
        rec = self.store.get(validate_key(key))
        last = parse_ts(rec.last_activity_at) if rec else self.now()
        s = self.settings.session
        return next_reset_at(last, self.now(), daily_hour=s.daily_reset_hour, idle_minutes=s.idle_reset_minutes,
                             tz=self.tz)

    def route(self, key: str) -> tuple[SessionRecord, ev.SessionReset | None]:
        """Resolve ``key`` to its session, starting a fresh one if the old one is stale."""
        key = validate_key(key)
        self.migrate_workspace(parse_key(key).agent_id)
        rec = self.store.get(key)
        if rec is None:
            return self.current_record(key), None
        s = self.settings.session
        dec = check_stale(parse_ts(rec.last_activity_at), self.now(), daily_hour=s.daily_reset_hour,
                          idle_minutes=s.idle_reset_minutes, tz=self.tz)
        if not dec.stale:
            return rec, None
        old = rec.session_id
        carried = self._carried_state(key, dec.reason)
        new = self.store.create_session(
            key, reason=dec.reason, parent_session_id=None, now=self.now(), extra_events=carried,
            auto_reset={"reason": dec.reason, "detail": dec.detail, "previous_session_id": old, "at": self.now_iso()})
        return new, ev.SessionReset(key=key, reason=dec.reason, old_session_id=old, new_session_id=new.session_id,
                                    detail=dec.detail, undoable=True, carried=_n_carried(carried))

    def _carried_state(self, key: str, reason: str) -> list[Event]:
        """The ``state`` lines a fresh session of ``key`` starts with (see ``StateManager.carry_over``);
        written with the header in one durable write, ids following it."""
        if self.store.get(key) is None:
            return []
        ts = self.now_iso()
        return [Event("state", i + 2, i + 1, ts, data) for i, data in enumerate(self.state.carry_over(key, reason))]

    async def new_session(self, key: str, *, reason: str = "new") -> ev.SessionReset:
        """Start a fresh session for ``key``; the old transcript is archived, nothing is deleted.

        The session state still active (goal, rules, preferences within their TTL…) carries over
        into the new session, marked as carried; :meth:`reset_session` clears it instead.
        """
        key = validate_key(key)
        async with self.turn_lock:
            old = self.store.get(key)
            carried: list[Event] = []
            if reason == "reset" and old is not None:
                carried = self._carried_state(key, "reset")  # what the reset ends, for the new session's audit
                await self.state.on_reset(key, old.session_id)
            elif old is not None:
                carried = self._carried_state(key, "new")
            rec = await asyncio.to_thread(self.store.create_session, key, reason=reason, now=self.now(),
                                          extra_events=carried)
        return ev.SessionReset(key=key, reason=reason, old_session_id=old.session_id if old else None,
                               new_session_id=rec.session_id, carried=_n_carried(carried))

    async def reset_session(self, key: str) -> ev.SessionReset:
        """Like :meth:`new_session`, and the session state is cleared (recorded in the old transcript)."""
        return await self.new_session(key, reason="reset")

    async def undo_reset(self, key: str) -> ev.ResetUndone:
        """Undo the last automatic reset: the previous session becomes current again.

        The undo sticks: a ``reset_undone`` marker is appended to the session brought back, and its
        time is that session's activity, so the next idle reset comes after a new idle period and
        the next daily one at the next boundary. The messages sent in the reset's session stay
        there (it is archived, viewable and restorable); the result says how many and where.
        """
        key = validate_key(key)
        async with self.turn_lock:
            rec = self.store.get(key)
            if rec is None or not rec.auto_reset:
                raise UserError(f"no automatic reset to undo for {key}")
            return await asyncio.to_thread(self._undo_reset, rec, rec.auto_reset)

    def _undo_reset(self, rec: SessionRecord, reset: dict[str, Any]) -> ev.ResetUndone:
        """:meth:`undo_reset`'s file work (under the turn lock, off the event loop)."""
        prev = str(reset["previous_session_id"])
        reason = str(reset.get("reason", ""))
        replaced = rec.session_id
        live = without_superseded(self.store.events(replaced))
        left = sum(1 for e in live if e.type == "message" and e.role == "user")
        done = ev.ResetUndone(key=rec.key, reason=reason, session_id=prev, replaced_session_id=replaced,
                              messages_left=left)
        restored = self.store.make_current(prev, key=rec.key)
        ts = self.now_iso()
        self.store.append(prev, "marker", {"kind": RESET_UNDONE, "reset": reason, "replaced_session_id": replaced,
                                           "messages_left": left, "text": done.line}, ts=ts)
        touch(restored, ts)
        self.store.save()
        return done

    async def restore(self, session_id: str) -> SessionRecord:
        """Make an archived session current again (its key's current session is archived)."""
        async with self.turn_lock:
            return await asyncio.to_thread(self.store.make_current, session_id)

    async def cleanup(self, days: int | None = None) -> list[SessionRecord]:
        """Archive sessions untouched for ``days`` (default from settings)."""
        d = days if days is not None else self.settings.session.cleanup_days
        from neotask_tui.config import RANGES

        lo, hi = RANGES[("session", "cleanup_days")]
        if isinstance(d, bool) or not isinstance(d, int) or not lo <= d <= hi:
            raise UserError(f"days must be between {int(lo)} and {int(hi)} (like session.cleanup_days), got {d!r}")
        async with self.turn_lock:
            return await asyncio.to_thread(self.store.cleanup, d, self.now())

    async def set_session_config(self, key: str, **values: Any) -> SessionRecord:
        """Update per-session config (e.g. ``project``/``workspace``); scope-bound state reacts."""
        rec = self.current_record(key)
        old = dict(rec.config)
        rec.config.update(values)
        await asyncio.to_thread(self.store.save)
        await self.state.on_scope_change(key, old, dict(rec.config))
        return rec

    # ------------------------------------------------------------------ listings
    def list_sessions(self, *, include_archived: bool = False) -> list[dict[str, Any]]:
        """Current sessions (and optionally archived ones) as plain dicts."""
        out = []
        for rec in sorted(self.store.records.values(), key=lambda r: r.last_activity_at, reverse=True):
            d = rec.to_dict()
            d["archived"] = False
            nr = self.next_reset(rec.key)
            d["next_reset_at"] = nr[0].isoformat() if nr else None
            d["next_reset_kind"] = nr[1] if nr else None
            out.append(d)
        if include_archived:
            for a in self.store.list_archived():
                d = a.to_dict()
                d["archived"] = True
                d["counters"] = dataclasses.asdict(self.store.archived_counters(a))
                out.append(d)
        return out

    def transcript(self, key_or_id: str, *, archived: bool = False) -> list[Event] | dict[str, list[Event]]:
        """Events of a key's current session, of a session id, or (``archived``) of every archived
        session of that key (oldest first) as {session_id: events}."""
        if key_or_id.startswith("agent:"):
            key = validate_key(key_or_id)
            if archived:
                infos = sorted((a for a in self.store.list_archived() if a.key == key), key=lambda a: a.created_at)
                return {a.session_id: self.store.events(a.session_id) for a in infos}
            if self.store.get(key) is None:
                raise UserError(f"no session for {key}")
            return list(self.events(key))
        return list(self.store.events(key_or_id))

    async def search(self, query: str, *, agent: str | None = None, since: str | None = None,
                     limit: int | None = None) -> SearchResult:
        """Full-text search over every session's transcript, live and archived (see
        :mod:`neotask_tui.storage.search`); the index catches up first when this engine writes.

        Args:
            query: Words, ``"a phrase"``, ``prefix*``.
            agent: Only sessions of this agent id.
            since: ``YYYY-MM-DD``, an ISO date-time or a span back from now (``7d``).
            limit: At most this many hits (default ``tuning.SEARCH_DEFAULT_LIMIT``).

        Raises:
            UserError: for a query without a word, a bad agent id or a bad ``since``.
        """
        from neotask_tui import tuning
        from neotask_tui.storage.keys import validate_agent_id

        agent = validate_agent_id(agent) if agent is not None else None  # "" is an error, not "any"
        after = parse_since(since, self.now(), self.tz) if since is not None else None
        n = tuning.SEARCH_DEFAULT_LIMIT if limit is None else limit
        return await asyncio.to_thread(self.store.search.search, query, agent=agent, since=after, limit=n)

    def summary_of(self, key: str) -> tuple[str, int | None]:
        """The rolling summary at the head of the current session (text, compaction event id)."""
        for e in self.events(key):
            if e.type == "compaction":
                return str(e.data.get("summary", "")), e.id
        return "", None

    def history(self, key: str) -> list[Event]:
        """Events eligible for the sliding window (everything after the compaction record), less the
        ones ``/retry`` or ``/edit`` superseded (they stay in the transcript, marked)."""
        return [e for e in without_superseded(self.events(key)) if e.type in ("message", "tool_call", "tool_result")]

    # ------------------------------------------------------------------ context
    async def build(self, key: str, new_message: str | None, *, recall: list[RecallItem] | None = None,
                    exclude_last: bool = False, new_event_id: int | None = None,
                    new_attachments: Sequence[Attachment] = (), state: StateView | None = None) -> AssembledContext:
        """Assemble the context for the next call on ``key``.

        A draft ``new_message`` (not stored yet; a turn passes its stored message as ``new_event_id``)
        is assembled with the session state sending it would set (a goal or a temporary preference
        it states: :meth:`StateManager.draft_records`), as the call will carry it; nothing is
        written. ``new_attachments``: the files the draft would carry; ``state``: the state view to
        use when the caller has it already.
        """
        cs = self.settings.context
        sid = self.current_record(key).session_id
        hist = self.history(key)
        if exclude_last and hist:
            hist = hist[:-1]
        summary, sum_id = self.summary_of(key)
        view = state if state is not None else await self.draft_state(key, new_message)  # one fold for both uses
        # The block within its share of the window (a pasted wall of statements must not crowd out the call).
        window = await asyncio.to_thread(self.message_window)
        most = state_budget(self.settings, window)
        sb = await asyncio.to_thread(self.state.fit_block, key, view, max_tokens=most, count=self.count_text)
        carried = dataclasses.replace(view, active=sb.kept)  # what the call carries: recall may leave out only that
        inp = ContextInputs(
            system=self.settings.general.system_prompt, history=hist, new_message=new_message,
            window=window, count_text=self.count_text, reply_reserve=cs.reply_reserve_tokens,
            strategy=cs.strategy, state_block=sb.text, state_left_out=len(sb.left_out),
            state_rules_left_out=sb.rules_left_out, state_max_tokens=most,
            state_says=self.state.says(key, carried) if sb.text else None, summary=summary, summary_event_id=sum_id,
            recall=recall or [], tool_result_max_tokens=cs.tool_result_max_tokens,
            max_message_tokens=cs.max_message_tokens, count_event=lambda e: self.count_event(e, sid),
            new_event_id=new_event_id, new_attachments=list(new_attachments),
            recall_reserve=recall_reserve(self.settings, window), keep_recent=keep_recent(self.settings, window),
        )
        # recall of compacted-away turns (engine/recall/lineage.py)
        await asyncio.to_thread(self.lineage.augment, key, inp)
        # Counting tokens of a huge paste takes seconds: never on the event loop.
        ctx = await asyncio.to_thread(self._build_counted, inp)
        if self.compactor is not None:  # the gauge's "compaction due" is the compactor's own decision
            ctx.ledger.compaction_due = await asyncio.to_thread(self.compactor.should_auto, key, ctx.ledger)
        return ctx

    async def draft_state(self, key: str, draft: str | None) -> StateView:
        """The key's session state as the next call carries it: with ``draft``, what sending it would
        set too (read only: the state, the transcript and the inbox are left as they are)."""
        if draft is None:
            return self.state.get(key)
        return self.state.get(key, await self.state.draft_records(key, draft))

    def _build_counted(self, inp: ContextInputs) -> AssembledContext:
        """Assemble, then, when the model's own tokenizer and template are at hand, replace the
        estimated total by the exact size of the prompt as the model will read it."""
        ctx = build_context(inp)
        if self.settings.compaction.enabled:
            ctx.ledger.compaction_at = compaction_point(self.settings, inp.window, ctx.ledger.kept_by_compaction)
        exact = self._counters()[1]
        if exact is not None:
            led = ctx.ledger
            led.total = exact(ctx.messages)
            led.fill = round(led.total / led.window, 4) if led.window else 0.0
            led.source = "exact"
        return ctx

    async def context(self, key: str, new_message: str | None = None) -> AssembledContext:
        """The next call's context without recall (cheap: the gauge before the first turn).

        ``/context``, F4 and ``neotask context`` use :meth:`preview`, which includes recall.
        """
        return await self.build(key, new_message)

    async def preview(self, key: str, draft: str | None = None) -> AssembledContext:
        """Exactly what the next call would send, recall included, without writing anything.

        Recall depends on the message being sent: with a ``draft`` (the text about to be sent) the
        preview recalls for it and ends with it, and carries the session state it would set (a goal,
        a temporary preference it states; none of it is recorded); without one it shows the recall of the last user
        message. ``recall_basis``/``recall_query``/``recall_note`` of the result say which, and
        why the next call's recall could still differ. No memory is indexed, no event appended and
        no receipt (``Recalled``) produced.
        """
        key = validate_key(key)
        draft = _turn.as_stored(self.settings, draft) if draft is not None and draft.strip() else None
        if draft is not None:
            query, basis = draft, "draft"
        else:
            query = next((e.content for e in reversed(self.history(key))
                          if e.type == "message" and e.role == "user"), "")
            basis = "last_user_message" if query else "none"
        note = ""
        view = await self.draft_state(key, draft)  # the state sending the draft sets is in the call
        try:
            said = self.state.says(key, view) if draft is not None else None
            recall = await self.memory_recall.recall(key, query, preview=True, said=said)
            note = await self.memory_recall.preview_note(key)
        except Exception as e:  # a preview must show the rest even when memory fails
            recall, note = [], f"memory recall failed: {e}"
        files: list[Attachment] = []
        if draft is not None:  # the draft's @path files go with it, as they would with the next call
            from neotask_tui.engine.context.attachments import read_mentioned

            files = await asyncio.to_thread(read_mentioned, draft)
        ctx = await self.build(key, draft, recall=recall, new_attachments=files, state=view)
        ctx.recall_basis, ctx.recall_query, ctx.recall_note = basis, query, note
        from neotask_tui.engine.context.assembly import count_tools
        from neotask_tui.engine.session.turn import next_call_tools, tool_definitions

        ctx.tools = tool_definitions(await asyncio.to_thread(next_call_tools, self))
        ctx.tool_tokens = count_tools(ctx.tools, self.count_text)
        return ctx

    # ------------------------------------------------------------------ compaction
    async def compact(self, key: str, *, instructions: str | None = None, preview: bool = False,
                      rebuild: bool = False, summary_text: str | None = None) -> CompactionResult:
        """Compact the key's session now (see :mod:`neotask_tui.engine.compaction.compactor`).

        ``summary_text`` commits a summary the user reviewed/edited in the preview (no model call).
        A configured API key typed in either is masked, as in a message.
        """
        if instructions:
            instructions = without_configured_keys(instructions, self.settings)
        if summary_text is not None:
            summary_text = without_configured_keys(summary_text, self.settings)
        async with self.turn_lock:
            return await self.compactor.compact(key, instructions=instructions, preview=preview, rebuild=rebuild,
                                                summary_text=summary_text)

    async def undo_compact(self, key: str) -> UndoResult:
        """Undo the last compaction (the parent session becomes current again)."""
        async with self.turn_lock:
            return await self.compactor.undo(key)

    def last_call_usage(self, key: str) -> Usage | None:
        """The usage of the last completed reply's call of the key's current session (what the
        provider reported, or our estimate when it reported none); None before the session's first
        reply. A compaction's summarizer calls read no context: they are in the totals, not here."""
        rec = self.current_record(key, create=not self.readonly)
        for e in reversed(self.store.events(rec.session_id)):
            if e.type == "message" and e.role == "assistant" and isinstance(e.data.get("usage"), dict):
                return Usage.from_dict(e.data["usage"])
        return None

    def session_info(self, key: str) -> dict[str, Any]:
        """Record, totals, next reset and last ledger of a key (for status bars and ``sessions show``)."""
        rec = self.current_record(key, create=not self.readonly)
        d = rec.to_dict()
        nr = self.next_reset(key)
        d["next_reset_at"] = nr[0].isoformat() if nr else None
        d["next_reset_kind"] = nr[1] if nr else None
        d["totals"] = rec.counters.totals()
        led = self.last_ledger.get(key)
        d["last_ledger"] = led.to_dict() if led is not None else None
        d["events"] = len(self.store.events(rec.session_id))
        return d


def _n_carried(events: list[Event]) -> int:
    """State entries among a fresh session's carried lines (not the session expiry, not a reset record)."""
    return sum(1 for e in events if e.data.get("op") in ("set", "add"))


__all__ = ["Engine", "scope_admits"]
