"""The Engine facade: the one object the TUI, the plain REPL and the CLI talk to.

Async methods yield or return plain dataclass events (:mod:`neotask_tui.engine.events`); nothing
here imports a UI toolkit. Blocking work (fsync'd appends, model loading, embeddings, LanceDB) runs
in threads via ``asyncio.to_thread``.

Feature modules plug in through a small internal API: ``settings``, ``now()``, ``parse_key()``,
``current_record()``, ``events()``, ``append()``, ``count_text()``/``count_event()``, ``store``,
``provider`` — and the engine owns ``state`` (StateManager), ``compactor`` (Compactor) and
``memory`` (MemoryService) when those modules are present.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, tzinfo
from typing import Any

from neotask_tui import paths
from neotask_tui.config import Settings, load_settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.context import AssembledContext, ContextInputs, RecallItem, build_context
from neotask_tui.engine.lifecycle import check_stale, local_zone, next_reset_at
from neotask_tui.errors import StorageError, UserError
from neotask_tui.providers.base import Provider, ProviderError, StreamEnd, TextDelta, ToolCall, ToolCallEvent, Usage
from neotask_tui.storage.atomic import atomic_write_text
from neotask_tui.storage.events import Event
from neotask_tui.storage.index import SessionRecord
from neotask_tui.storage.keys import SessionKey, parse_key, validate_key
from neotask_tui.storage.lock import DataLock
from neotask_tui.storage.store import SessionStore, parse_ts, touch

log = logging.getLogger("neotask.engine")
MAX_TOOL_ROUNDS = 6


def clean_text(text: str) -> str:
    """Make user text storable: lone surrogates become U+FFFD (everything else is kept as is)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _optional(module: str, attr: str) -> Any:
    """A feature class if its module exists (features land independently)."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name == module:
            return None
        raise
    return getattr(mod, attr, None)


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


class Engine:
    """Sessions, turns, lifecycle, compaction, state and memory behind one async API.

    Args:
        settings: Loaded settings (default: :func:`load_settings`).
        readonly: Open without the data-dir lock; every write raises :class:`UserError`.
        provider: A provider to use instead of choosing one (tests pass a ScriptedProvider).
        clock: Returns "now" (aware); injectable for lifecycle tests and benches.
        tz: Time zone for the daily reset (default: the local zone).
        memory: A memory service to use (default: built lazily when memory is enabled).
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        readonly: bool = False,
        provider: Provider | None = None,
        clock: Callable[[], datetime] | None = None,
        tz: tzinfo | None = None,
        memory: Any = None,
    ) -> None:
        self.settings = settings or load_settings()
        self.readonly = readonly
        self._lock = DataLock()
        if not readonly:
            self._lock.acquire()
        try:
            self.store = SessionStore(readonly=readonly)
            if not readonly:
                caught_up = self.store.reconcile_counters()
                if caught_up:
                    self.store.notices.append(
                        f"token counters caught up with the transcript for {len(caught_up)} session(s)")
                fixed = self.store.repair_orphans()
                if fixed:
                    self.store.notices.append(
                        f"archived {len(fixed)} orphaned transcript(s) left by an interrupted switch")
        except BaseException:
            self._lock.release()
            raise
        self._provider: Provider | None = provider
        self._provider_reason = "given by the caller" if provider else ""
        self._clock = clock
        self.tz = tz or local_zone()
        self._tok: dict[tuple[str, int], int] = {}
        self._turn_lock = asyncio.Lock()
        self._memory = memory
        self._memory_failed = ""
        state_cls = _optional("neotask_tui.engine.state", "StateManager")
        self.state: Any = state_cls(self) if state_cls else None
        comp_cls = _optional("neotask_tui.engine.compaction", "Compactor")
        self.compactor: Any = comp_cls(self) if comp_cls else None
        self.last_ledger: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ lifecycle of the engine
    async def aclose(self) -> None:
        """Release the provider, memory service and lock."""
        if self._provider is not None:
            with contextlib.suppress(Exception):
                await self._provider.aclose()
        if self._memory is not None and hasattr(self._memory, "close"):
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._memory.close)
        self._lock.release()

    def close(self) -> None:
        """Synchronous close (releases the lock; for CLI paths without a loop)."""
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

    @staticmethod
    def parse_key(key: str) -> SessionKey:
        """Validate and parse a session key (raises UserError)."""
        return parse_key(key)

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

    def count_text(self, text: str) -> int:
        """Token estimate of ``text`` (tiktoken, offline)."""
        from neotask_tui.engine.tokens import count_text

        return count_text(text)

    def count_event(self, event: Event, session_id: str = "") -> int:
        """Cached token estimate of one event's content."""
        k = (session_id, event.id) if session_id else (str(id(event)), event.id)
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

    def choose_provider(self) -> Any:
        """The provider choice (name, model, reason) without building it (cheap)."""
        from neotask_tui.providers.selection import choose_provider

        return choose_provider(self.settings)

    def _scripted(self) -> Provider | None:
        if self.settings.provider.name != "scripted":
            return None
        from neotask_tui.providers.scripted import ScriptedProvider

        self._provider_reason = "configured: the scripted testing provider (replies from a script)"
        return ScriptedProvider.from_settings(self.settings)

    async def get_provider(self, progress: Callable[[str], None] | None = None) -> Provider:
        """Build the provider on first use (local model load runs in a thread)."""
        if self._provider is not None:
            return self._provider
        scripted = self._scripted()
        if scripted is not None:
            self._provider = scripted
            return scripted
        from neotask_tui.providers.selection import build_provider

        choice = await asyncio.to_thread(self.choose_provider)
        prov = await asyncio.to_thread(build_provider, choice, self.settings)
        loader = getattr(prov, "load", None)
        if callable(loader):
            if asyncio.iscoroutinefunction(loader):
                await loader(progress)
            else:
                await asyncio.to_thread(loader, progress)
        self._provider = prov
        self._provider_reason = str(getattr(choice, "reason", ""))
        return prov

    def model_info(self) -> Any:
        """Context window and prices of the current model (from the shipped table)."""
        from neotask_tui.engine.pricing import lookup_model

        p = self._provider or self._scripted()
        if p is None:
            choice = self.choose_provider()
            return lookup_model(choice.name, choice.model)
        return lookup_model(p.name, p.model)

    def window(self) -> int:
        """The context window in tokens for the next call."""
        if self.settings.context.window_tokens > 0:
            return self.settings.context.window_tokens
        loaded = getattr(self._provider, "context_window", None)
        if isinstance(loaded, int) and loaded > 0:
            return loaded  # what the model was actually loaded with (local GGUFs)
        info = self.model_info()
        return int(getattr(info, "context_window", 8192) or 8192)

    # ------------------------------------------------------------------ memory
    async def get_memory(self) -> Any:
        """The memory service, built lazily off the event loop (None if disabled/unavailable)."""
        if self._memory is not None or not self.settings.memory.enabled or self._memory_failed:
            return self._memory
        cls = _optional("neotask_tui.memory.service", "MemoryService")
        if cls is None:
            return None
        try:
            self._memory = await asyncio.to_thread(cls, self.settings.memory)
        except Exception as e:  # surfaced once, never breaks a turn
            self._memory_failed = f"memory unavailable: {e}"
            log.warning(self._memory_failed)
        return self._memory

    @property
    def memory(self) -> Any:
        """The memory service if already built."""
        return self._memory

    async def recall(self, key: str, query: str) -> list[RecallItem]:
        """Auto-recall for a turn (empty if disabled); never raises."""
        if not (self.settings.memory.enabled and self.settings.memory.auto_recall) or not query.strip():
            return []
        agent = self.parse_key(key).agent_id
        archived = [a for a in self.store.list_archived() if a.key.startswith(f"agent:{agent}:")]
        if not archived and not self._has_memory_files(agent):
            return []  # nothing to recall from: don't pay for loading the embedder and LanceDB
        mem = await self.get_memory()
        if mem is None:
            return []
        if archived and self.settings.memory.include_transcripts:
            await asyncio.to_thread(self._index_archived, mem, agent, archived)
        excl = set(self.current_record(key).config.get("never_recall", []))
        hits = await asyncio.to_thread(
            mem.recall, query, agent_id=agent, budget_tokens=self.settings.memory.recall_budget_tokens,
            k=self.settings.memory.recall_k, exclude=excl,
        )
        cfg = self.current_record(key).config
        return [
            RecallItem(id=h.id, text=h.text, source=f"{h.path}:{h.line_start}-{h.line_end}", score=h.score,
                       scope=h.scope, event_ids=list(getattr(h, "event_ids", None) or []))
            for h in hits if scope_admits(h.scope, cfg)
        ]

    @staticmethod
    def _has_memory_files(agent: str) -> bool:
        ws = paths.workspace_dir(agent)
        if (ws / "MEMORY.md").exists():
            return True
        mdir = ws / "memory"
        return mdir.is_dir() and any(mdir.rglob("*.md"))

    def _index_archived(self, mem: Any, agent: str, archived: list[Any]) -> int:
        """Index archived transcripts of this agent not indexed yet (a manifest remembers which)."""
        manifest = paths.data_dir() / "memory-transcripts.json"
        try:
            done: dict[str, str] = json.loads(manifest.read_text(encoding="utf-8"))
            if not isinstance(done, dict):
                done = {}
        except (OSError, ValueError):
            done = {}
        if done and not mem.stats(agent).get("by_source", {}).get("transcript"):
            # The store lost its transcript rows (e.g. a damaged table was rebuilt): index again.
            done = {k: v for k, v in done.items() if k not in {a.session_id for a in archived}}
        new = 0
        for a in archived:
            if a.session_id in done:
                continue
            events = self.store.events(a.session_id)
            mem.index_transcript(agent, a.session_id, events, f"agent:{agent}")
            done[a.session_id] = self.now_iso()
            new += 1
        if new and not self.readonly:
            atomic_write_text(manifest, json.dumps(done, indent=0, sort_keys=True))
        return new

    # ------------------------------------------------------------------ routing and lifecycle
    def next_reset(self, key: str) -> tuple[datetime, str] | None:
        """When the key's session will next be reset automatically, and why (daily/idle)."""
        rec = self.store.get(validate_key(key))
        last = parse_ts(rec.last_activity_at) if rec else self.now()
        s = self.settings.session
        return next_reset_at(last, self.now(), daily_hour=s.daily_reset_hour, idle_minutes=s.idle_reset_minutes,
                             tz=self.tz)

    def _route(self, key: str) -> tuple[SessionRecord, ev.SessionReset | None]:
        """Resolve ``key`` to its session, starting a fresh one if the old one is stale."""
        key = validate_key(key)
        rec = self.store.get(key)
        if rec is None:
            return self.current_record(key), None
        s = self.settings.session
        dec = check_stale(parse_ts(rec.last_activity_at), self.now(), daily_hour=s.daily_reset_hour,
                          idle_minutes=s.idle_reset_minutes, tz=self.tz)
        if not dec.stale:
            return rec, None
        old = rec.session_id
        new = self.store.create_session(key, reason=dec.reason, parent_session_id=None, now=self.now())
        new.auto_reset = {"reason": dec.reason, "detail": dec.detail, "previous_session_id": old, "at": self.now_iso()}
        self.store.save()
        return new, ev.SessionReset(key=key, reason=dec.reason, old_session_id=old, new_session_id=new.session_id,
                                    detail=dec.detail, undoable=True)

    async def new_session(self, key: str, *, reason: str = "new") -> ev.SessionReset:
        """Start a fresh session for ``key``; the old transcript is archived, nothing is deleted."""
        key = validate_key(key)
        async with self._turn_lock:
            old = self.store.get(key)
            if reason == "reset" and old is not None and self.state is not None:
                await self.state.on_reset(key, old.session_id)
            rec = await asyncio.to_thread(self.store.create_session, key, reason=reason, now=self.now())
        return ev.SessionReset(key=key, reason=reason, old_session_id=old.session_id if old else None,
                               new_session_id=rec.session_id)

    async def reset_session(self, key: str) -> ev.SessionReset:
        """Like :meth:`new_session`, and the session state is cleared (recorded in the old transcript)."""
        return await self.new_session(key, reason="reset")

    async def undo_reset(self, key: str) -> SessionRecord:
        """Undo the last automatic reset: the previous session becomes current again."""
        key = validate_key(key)
        rec = self.store.get(key)
        if rec is None or not rec.auto_reset:
            raise UserError(f"no automatic reset to undo for {key}")
        prev = str(rec.auto_reset["previous_session_id"])
        async with self._turn_lock:
            return await asyncio.to_thread(self.store.make_current, prev, key=key)

    async def restore(self, session_id: str) -> SessionRecord:
        """Make an archived session current again (its key's current session is archived)."""
        async with self._turn_lock:
            return await asyncio.to_thread(self.store.make_current, session_id)

    async def cleanup(self, days: int | None = None) -> list[SessionRecord]:
        """Archive sessions untouched for ``days`` (default from settings)."""
        d = days if days is not None else self.settings.session.cleanup_days
        async with self._turn_lock:
            return await asyncio.to_thread(self.store.cleanup, d, self.now())

    async def set_session_config(self, key: str, **values: Any) -> SessionRecord:
        """Update per-session config (e.g. ``project``/``workspace``); scope-bound state reacts."""
        rec = self.current_record(key)
        old = dict(rec.config)
        rec.config.update(values)
        await asyncio.to_thread(self.store.save)
        if self.state is not None and hasattr(self.state, "on_scope_change"):
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
            return list(self.events(key)) if self.store.get(key) else []
        return list(self.store.events(key_or_id))

    def summary_of(self, key: str) -> tuple[str, int | None]:
        """The rolling summary at the head of the current session (text, compaction event id)."""
        for e in self.events(key):
            if e.type == "compaction":
                return str(e.data.get("summary", "")), e.id
        return "", None

    def history(self, key: str) -> list[Event]:
        """Events eligible for the sliding window (everything after the compaction record)."""
        return [e for e in self.events(key) if e.type in ("message", "tool_call", "tool_result")]

    # ------------------------------------------------------------------ context
    async def build(self, key: str, new_message: str | None, *, recall: list[RecallItem] | None = None,
                    exclude_last: bool = False, new_event_id: int | None = None) -> AssembledContext:
        """Assemble the context for the next call on ``key``."""
        cs = self.settings.context
        sid = self.current_record(key).session_id
        hist = self.history(key)
        if exclude_last and hist:
            hist = hist[:-1]
        summary, sum_id = self.summary_of(key)
        state_block = self.state.block(key) if self.state is not None else ""
        inp = ContextInputs(
            system=self.settings.general.system_prompt, history=hist, new_message=new_message,
            window=self.window(), count_text=self.count_text, reply_reserve=cs.reply_reserve_tokens,
            strategy=cs.strategy, state_block=state_block, summary=summary, summary_event_id=sum_id,
            recall=recall or [], tool_result_max_tokens=cs.tool_result_max_tokens,
            max_message_tokens=cs.max_message_tokens, count_event=lambda e: self.count_event(e, sid),
            new_event_id=new_event_id,
        )
        if self.compactor is not None:  # recall of compacted-away turns (engine/compaction.py)
            await asyncio.to_thread(self.compactor.augment_context, key, inp)
        # Counting tokens of a huge paste takes seconds: never on the event loop.
        return await asyncio.to_thread(build_context, inp)

    async def context(self, key: str, new_message: str | None = None) -> AssembledContext:
        """What the next call would send (for ``/context`` and ``neotask context``)."""
        return await self.build(key, new_message)

    # ------------------------------------------------------------------ compaction
    async def compact(self, key: str, *, instructions: str | None = None, preview: bool = False,
                      rebuild: bool = False, summary_text: str | None = None) -> Any:
        """Compact the key's session now (see :mod:`neotask_tui.engine.compaction`).

        ``summary_text`` commits a summary the user reviewed/edited in the preview (no model call).
        """
        if self.compactor is None:
            raise UserError("compaction is not available in this build")
        async with self._turn_lock:
            return await self.compactor.compact(key, instructions=instructions, preview=preview, rebuild=rebuild,
                                                summary_text=summary_text)

    async def undo_compact(self, key: str) -> Any:
        """Undo the last compaction (the parent session becomes current again)."""
        if self.compactor is None:
            raise UserError("compaction is not available in this build")
        async with self._turn_lock:
            return await self.compactor.undo(key)

    # ------------------------------------------------------------------ the turn
    def _tools(self) -> list[Any]:
        tools: list[Any] = []
        if self.state is not None and hasattr(self.state, "tools"):
            tools.extend(self.state.tools())
        mem_tools = _optional("neotask_tui.memory.tools", "tool_specs")
        if mem_tools is not None and self.settings.memory.enabled:
            tools.extend(mem_tools())
        return tools

    async def _run_tool(self, key: str, call: ToolCall) -> tuple[str, bool]:
        try:
            if self.state is not None and hasattr(self.state, "handle_tool"):
                res = await self.state.handle_tool(key, call)
                if res is not None:
                    return str(res), False
            handler = _optional("neotask_tui.memory.tools", "handle_tool")
            if handler is not None:
                mem = await self.get_memory()
                if mem is not None:
                    res = await asyncio.to_thread(handler, mem, self.parse_key(key).agent_id, call.name, call.arguments)
                    if res is not None:
                        return str(res), False
            return f"unknown tool {call.name!r}", True
        except (UserError, ValueError, KeyError, TypeError) as e:
            return f"tool error: {e}", True

    async def send(self, text: str, key: str | None = None) -> AsyncIterator[ev.EngineEvent]:
        """Run one turn: store the user's message, assemble context, stream the reply, store it.

        Yields engine events. The user's message is durably on disk before :class:`TurnStarted`.
        If the consumer stops iterating (Esc/Ctrl+C) the partial reply is kept, marked interrupted.
        """
        key = validate_key(key or self.default_key())
        text = clean_text(text)
        if not text.strip():
            raise UserError("empty message")
        async with self._turn_lock:
            rec, reset = await asyncio.to_thread(self._route, key)
            if reset is not None:
                yield reset
            user_ev = await self.append(key, "message", {"role": "user", "content": text})
            yield ev.TurnStarted(key=key, session_id=rec.session_id, user_event_id=user_ev.id)
            for note in self.store.notices:
                yield ev.Notice(note, level="warning")
            self.store.notices.clear()
            if self.state is not None:
                for n in await self.state.on_user_message(key, user_ev):
                    yield ev.Notice(getattr(n, "text", str(n)))
            recall: list[RecallItem] = []
            try:
                recall = await self.recall(key, text)
            except Exception as e:  # recall must never break a turn
                yield ev.Notice(f"memory recall failed: {e}", level="warning")
            if recall:
                yield ev.Recalled(query=text, items=[
                    {"id": r.id, "text": r.text, "source": r.source, "score": r.score, "scope": r.scope}
                    for r in recall])
            async for out in self._answer(key, user_ev.id, recall):
                yield out

    async def _answer(self, key: str, user_id: int, recall: list[RecallItem]) -> AsyncIterator[ev.EngineEvent]:
        """Context → (auto-compaction) → provider stream with tool rounds → stored reply."""
        ctx = await self.build(key, None, recall=recall, new_event_id=user_id)
        if self.compactor is not None:
            res = await self.compactor.maybe_auto(key, ctx.ledger)
            if res is not None:
                yield self._compacted_event(key, res)
                ctx = await self.build(key, None, recall=recall, new_event_id=user_id)
        self.last_ledger[key] = ctx.ledger.to_dict()
        yield ev.ContextBuilt(ledger=ctx.ledger.to_dict())
        for note in ctx.ledger.notices:
            yield ev.Notice(note, level="warning")
        loading: list[str] = []
        if self._provider is None:
            yield ev.ModelLoading("preparing the model…")
            try:
                prov = await self.get_provider(progress=loading.append)
            except ProviderError as e:
                yield ev.TurnFailed(key=key, error=str(e), error_kind=e.kind)
                return
            except Exception as e:
                yield ev.TurnFailed(key=key, error=f"could not start the model: {e}", error_kind="model")
                return
            yield ev.ModelLoading("model ready", done=True)
            yield ev.ProviderInfo(provider=prov.name, model=prov.model, reason=self._provider_reason)
        prov_ = self._provider
        assert prov_ is not None
        prov = prov_
        tools = self._tools() if getattr(prov, "supports_tools", False) else []
        retried_overflow = False
        rounds = 0
        while True:
            rounds += 1
            parts: list[str] = []
            calls: list[ToolCall] = []
            usage: Usage | None = None
            stored = False
            try:
                async for item in prov.stream(ctx.messages, tools=tools or None,
                                              max_tokens=self.settings.provider.max_tokens):
                    if isinstance(item, TextDelta):
                        parts.append(item.text)
                        yield ev.TokenDelta(item.text)
                    elif isinstance(item, ToolCallEvent):
                        calls.append(item.call)
                    elif isinstance(item, StreamEnd):
                        usage = item.usage
            except ProviderError as e:
                if e.kind == "context_overflow" and not retried_overflow and self.compactor is not None and not parts:
                    retried_overflow = True
                    yield ev.Notice("the provider reported a context overflow: compacting and retrying once",
                                    level="warning")
                    res = await self.compactor.compact(key, reason="overflow")
                    yield self._compacted_event(key, res)
                    ctx = await self.build(key, None, recall=recall, new_event_id=user_id)
                    continue
                partial = "".join(parts)
                pid = None
                if partial:
                    pev = await self.append(key, "message", {
                        "role": "assistant", "content": partial, "status": "interrupted", "error": str(e)[:500],
                        "error_kind": e.kind, "provider": prov.name, "model": prov.model})
                    pid = pev.id
                await self._touch(key)
                yield ev.TurnFailed(key=key, error=str(e), error_kind=e.kind, partial_event_id=pid,
                                    partial_text=partial, retryable=e.kind not in ("auth", "bad_request"))
                return
            except (asyncio.CancelledError, GeneratorExit):
                partial = "".join(parts)
                if partial and not stored:
                    sid = self.current_record(key).session_id
                    self.store.append(sid, "message", {
                        "role": "assistant", "content": partial, "status": "interrupted",
                        "error_kind": "cancelled", "provider": prov.name, "model": prov.model}, ts=self.now_iso())
                raise
            reply = "".join(parts)
            reported = usage is not None
            if usage is None:
                usage = Usage(input_tokens=ctx.ledger.total, output_tokens=self.count_text(reply), reported=False)
            cost = self._cost(usage)
            if calls and rounds < MAX_TOOL_ROUNDS:
                items: list[tuple[str, dict[str, Any]]] = []
                if reply:
                    items.append(("message", {"role": "assistant", "content": reply, "status": "complete",
                                              "provider": prov.name, "model": prov.model}))
                for c in calls:
                    items.append(("tool_call", {"call_id": c.id, "name": c.name, "arguments": c.arguments,
                                                "usage": usage.to_dict(), "cost_usd": cost}))
                    usage, cost = Usage(reported=reported), 0.0  # count the call's usage once
                sid = self.current_record(key).session_id
                await asyncio.to_thread(self.store.append_many, sid, items, ts=self.now_iso())
                self._add_usage(key, items)
                for c in calls:
                    yield ev.ToolCallStarted(call_id=c.id, name=c.name, arguments=c.arguments)
                    result, is_err = await self._run_tool(key, c)
                    await self.append(key, "tool_result", {"call_id": c.id, "name": c.name, "content": result,
                                                           "is_error": is_err})
                    yield ev.ToolCallFinished(call_id=c.id, name=c.name, result=result, is_error=is_err)
                ctx = await self.build(key, None, recall=recall, new_event_id=user_id)
                continue
            data = {"role": "assistant", "content": reply, "status": "complete", "provider": prov.name,
                    "model": prov.model, "usage": usage.to_dict(), "cost_usd": cost}
            aev = await self.append(key, "message", data)
            stored = True
            self._add_usage(key, [("message", data)])
            await self._touch(key)
            rec = self.current_record(key)
            yield ev.TurnDone(key=key, session_id=rec.session_id, event_id=aev.id, text=reply, usage=usage.to_dict(),
                              cost_usd=cost, provider=prov.name, model=prov.model,
                              totals=_totals(rec), ledger=ctx.ledger.to_dict())
            return

    def _cost(self, usage: Usage) -> float | None:
        from neotask_tui.engine.pricing import cost_usd

        p = self._provider
        if p is None:
            return None
        return cost_usd(usage, self.model_info())

    def _add_usage(self, key: str, items: list[tuple[str, dict[str, Any]]]) -> None:
        rec = self.current_record(key)
        for _t, d in items:
            if isinstance(d.get("usage"), dict):
                rec.counters.add(d["usage"], d.get("cost_usd"))

    async def _touch(self, key: str) -> None:
        rec = self.current_record(key)
        touch(rec, self.now_iso())
        try:
            await asyncio.to_thread(self.store.save)
        except StorageError:
            raise

    def _compacted_event(self, key: str, res: Any) -> ev.Compacted:
        return ev.Compacted(
            key=key, old_session_id=str(getattr(res, "old_session_id", "")),
            new_session_id=str(getattr(res, "new_session_id", "")),
            tokens_before=int(getattr(res, "tokens_before", 0)), tokens_after=int(getattr(res, "tokens_after", 0)),
            repaired=list(getattr(res, "repaired", []) or []), fallback=bool(getattr(res, "fallback", False)),
        )

    def session_info(self, key: str) -> dict[str, Any]:
        """Record, totals, next reset and last ledger of a key (for status bars and ``sessions show``)."""
        rec = self.current_record(key, create=not self.readonly)
        d = rec.to_dict()
        nr = self.next_reset(key)
        d["next_reset_at"] = nr[0].isoformat() if nr else None
        d["next_reset_kind"] = nr[1] if nr else None
        d["totals"] = _totals(rec)
        d["last_ledger"] = self.last_ledger.get(key)
        d["events"] = len(self.store.events(rec.session_id))
        return d


def _totals(rec: SessionRecord) -> dict[str, Any]:
    c = rec.counters
    return {"input": c.input, "output": c.output, "cache_read": c.cache_read, "cache_write": c.cache_write,
            "cost_usd": c.cost_usd, "estimated_turns": c.estimated_turns}
