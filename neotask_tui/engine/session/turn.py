"""One turn of a conversation: context, auto-compaction, provider stream, tool rounds, storage.

The turn needs the engine's parts and a few of its services; :class:`TurnHost` names exactly which
(the :class:`~neotask_tui.engine.facade.Engine` satisfies it), so this module never imports the
facade.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any, Protocol

from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.compaction.compactor import CompactionResult, Compactor
from neotask_tui.engine.context.assembly import AssembledContext, Ledger, RecallItem, count_tools
from neotask_tui.engine.context.attachments import Attachment, attachments_of
from neotask_tui.engine.ports import MemorySource, ProviderSource, Sessions
from neotask_tui.engine.state.manager import StateManager
from neotask_tui.errors import LockedError, StorageError, UserError
from neotask_tui.memory import tools as memory_tools
from neotask_tui.providers.base import ProviderError, StreamEnd, TextDelta, ToolCall, ToolCallEvent, ToolSpec, Usage
from neotask_tui.providers.models import ModelInfo, cost_usd
from neotask_tui.providers.selection import ProviderChoice, without_configured_keys
from neotask_tui.storage.events import Event
from neotask_tui.storage.index import SessionRecord
from neotask_tui.storage.keys import validate_key
from neotask_tui.storage.store import touch
from neotask_tui.text.clean import clean_text
from neotask_tui.tuning import MAX_TOOL_ROUNDS

log = logging.getLogger("neotask.engine")


class TurnHost(Sessions, ProviderSource, MemorySource, Protocol):
    """What a turn needs of the engine: its sessions, provider and memory, its parts (state,
    compactor), routing, recall and context assembly."""

    @property
    def state(self) -> StateManager: ...

    @property
    def compactor(self) -> Compactor: ...

    @property
    def provider_reason(self) -> str: ...

    @property
    def turn_lock(self) -> asyncio.Lock: ...

    @property
    def last_ledger(self) -> dict[str, Ledger]: ...

    def default_key(self) -> str: ...

    def choose_provider(self) -> ProviderChoice: ...

    def model_info(self) -> ModelInfo: ...

    async def prepare_provider(self) -> None: ...

    def route(self, key: str) -> tuple[SessionRecord, ev.SessionReset | None]: ...

    def history(self, key: str) -> list[Event]: ...

    async def recall(self, key: str, query: str) -> list[RecallItem]: ...

    async def build(self, key: str, new_message: str | None, *, recall: list[RecallItem] | None = None,
                    exclude_last: bool = False, new_event_id: int | None = None) -> AssembledContext: ...


def _tools(engine: TurnHost) -> list[ToolSpec]:
    tools = list(engine.state.tools())
    if engine.settings.memory.enabled:
        tools.extend(memory_tools.tool_specs())
    return tools


def next_call_tools(engine: TurnHost) -> list[ToolSpec]:
    """The tool definitions the next call gives the provider (none when it takes no tools), without
    building or loading the provider."""
    prov = engine.provider
    supports = prov.supports_tools if prov is not None else engine.choose_provider().name != "local"
    return _tools(engine) if supports else []


def tool_definitions(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs as data: exactly the name, description and JSON-schema parameters sent."""
    return [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]


async def _run_tool(engine: TurnHost, key: str, call: ToolCall) -> tuple[str, bool]:
    if call.error:  # arguments that could not be read: the model is told, and may try again
        return f"tool error: {call.error}", True
    try:
        reply = await engine.state.handle_tool(key, call)
        if reply is not None:
            return reply.text, reply.is_error
        mem = await engine.get_memory()
        if mem is not None:
            res = await asyncio.to_thread(memory_tools.handle_tool, mem, engine.parse_key(key).agent_id, call.name,
                                          call.arguments, history=engine.settings.memory.recall_history)
            if res is not None:
                return str(res), False
        return f"unknown tool {call.name!r}", True
    except (StorageError, LockedError):
        raise  # the data dir failed, not the call: the turn reports it
    except Exception as e:  # a bad tool call is an error result for the model, never a crash
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        return f"tool error: {msg}", True


async def _state_notices(engine: TurnHost, key: str, user_ev: Event, superseded: Sequence[int] = ()) -> list[ev.Notice]:
    """What the session state makes of the stored user message (after ``/edit``, first what leaves
    it with the ``superseded`` messages), as notices.

    The message is stored and is answered whatever happens here: a statement the state refuses is a
    notice from the state manager, and any other failure to read or record statements is logged
    and told as a warning, never a lost turn. A failure of the data dir itself (a ``StorageError``,
    the lock) is the turn's to report, as for a tool call.
    """
    out: list[ev.Notice] = []
    steps = [("what the replaced message stated was not cleared",
              lambda: engine.state.on_superseded(key, list(superseded)))] if superseded else []
    steps.append(("what this message states was not recorded", lambda: engine.state.on_user_message(key, user_ev)))
    for failed, step in steps:
        try:
            out += [ev.Notice(n.text) for n in await step()]
        except (StorageError, LockedError):
            raise
        except Exception as e:
            log.warning("session state of e:%s: %s: %s: %s", user_ev.id, failed, type(e).__name__, e)
            log.debug("session state failure", exc_info=True)
            what = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
            out.append(ev.Notice(f"session state: {failed} ({what}); the message is answered all the same "
                                 "(/state shows the state; /goal, /pref and /state clear change it)", level="warning"))
    return out


def as_stored(settings: Settings, text: str) -> str:
    """Your message as it is stored, indexed and sent (and previewed): lone surrogates replaced, and
    a configured API key masked (it is a secret with certainty, also where you typed it)."""
    return without_configured_keys(clean_text(text), settings)


def _key_mask(settings: Settings) -> Callable[[str], str]:
    """The configured API key's mask (:func:`as_stored`), for an attached file's name and text."""
    return functools.partial(without_configured_keys, settings=settings)


async def send(engine: TurnHost, text: str, key: str | None = None,
               attachments: Sequence[Attachment] = ()) -> AsyncGenerator[ev.EngineEvent, None]:
    """Run one turn: store the user's message (with its ``attachments``, already read and redacted),
    assemble context, stream the reply, store it.

    Yields engine events. The user's message is durably on disk before :class:`TurnStarted`.
    If the consumer stops iterating (Esc/Ctrl+C) the partial reply is kept, marked interrupted.
    """
    key = validate_key(key or engine.default_key())
    text = as_stored(engine.settings, text)
    if not text.strip():
        raise UserError("empty message")
    await engine.prepare_provider()  # e.g. a bad script is a one-line UserError before anything is stored
    async with engine.turn_lock:
        rec, reset = await asyncio.to_thread(engine.route, key)
        if reset is not None:
            yield reset
        msg: dict[str, Any] = {"role": "user", "content": text}
        if attachments:
            msg["attachments"] = [a.to_data(mask=_key_mask(engine.settings)) for a in attachments]
        user_ev = await engine.append(key, "message", msg)
        yield ev.TurnStarted(key=key, session_id=rec.session_id, user_event_id=user_ev.id)
        for note in engine.store.notices:
            yield ev.Notice(note, level="warning")
        engine.store.notices.clear()
        for said in await _state_notices(engine, key, user_ev):
            yield said
        recall: list[RecallItem] = []
        try:
            recall = await engine.recall(key, text)
        except Exception as e:  # recall must never break a turn
            yield ev.Notice(f"memory recall failed: {e}", level="warning")
        for note in engine.store.notices:  # from the recall: skipped memory files, background indexing
            yield ev.Notice(note, level="warning")
        engine.store.notices.clear()
        if recall:
            yield _receipts(text, recall)
        async for out in _answer(engine, key, user_ev.id, recall, text):
            yield out


async def regenerate(engine: TurnHost, key: str | None = None, text: str | None = None,
                     attachments: Sequence[Attachment] = ()) -> AsyncGenerator[ev.EngineEvent, None]:
    """``/retry`` (``text`` None): ask the model again for the reply to your last message.
    ``/edit`` (``text``): replace your last message with ``text`` and answer it; the new message
    carries the files the replaced one carried and ``attachments`` (a file attached again is the
    new read), and a notice names the ones it kept.

    Nothing is rewritten: a ``superseded`` marker retires the old reply (and, for an edit, the old
    message) — they stay in the transcript, shown marked, and leave the context, the compaction
    input and the recall index. The marker (with the edited message) is durably appended before
    the call; the superseded reply's usage stays counted (it was really sent), the new call's is
    added. Yields :class:`~neotask_tui.engine.events.Superseded` first (when something was
    retired), then the events of a turn.

    Raises:
        UserError: no session or no message of yours to regenerate, or an empty edit.
    """
    from neotask_tui.engine.session.branch import plan_regeneration
    from neotask_tui.storage.events import SUPERSEDED

    key = validate_key(key or engine.default_key())
    if text is not None:
        text = as_stored(engine.settings, text)
        if not text.strip():
            raise UserError("empty message: /edit needs the new text")
    await engine.prepare_provider()
    async with engine.turn_lock:
        rec = engine.current_record(key, create=False)
        plan = plan_regeneration(engine.events(key))
        by = "retry" if text is None else "edit"
        gone = plan.after if text is None else [plan.user.id, *plan.after]
        items: list[tuple[str, dict[str, Any]]] = []
        if gone:
            what = "reply" if text is None else "message and its reply"
            items.append(("marker", {"kind": SUPERSEDED, "by": by, "superseded": gone,
                                     "text": f"/{by}: your {what} e:{', e:'.join(map(str, gone))} superseded"}))
        kept: list[Attachment] = []
        if text is not None:
            msg: dict[str, Any] = {"role": "user", "content": text, "edited_from": plan.user.id}
            mask = _key_mask(engine.settings)
            new_paths = {mask(a.shown_path) for a in attachments}  # a stored path is the shown one
            kept = [a for a in attachments_of(plan.user.data) if a.path not in new_paths]
            if kept or attachments:
                msg["attachments"] = [a.to_data(mask=mask) for a in (*kept, *attachments)]
            items.append(("message", msg))
        written = []
        if items:  # one durable write: an edit's marker never lands without its new message
            written = await asyncio.to_thread(engine.store.append_many, rec.session_id, items, ts=engine.now_iso())
        if gone:
            yield ev.Superseded(key=key, session_id=rec.session_id, by=by, superseded_ids=gone,
                                marker_id=written[0].id)
        user_ev = written[-1] if text is not None else plan.user
        yield ev.TurnStarted(key=key, session_id=rec.session_id, user_event_id=user_ev.id)
        if kept:
            yield ev.Notice("the edited message keeps the file" + ("s" if len(kept) > 1 else "")
                            + " of the one it replaces: " + ", ".join(a.shown_path for a in kept))
        if text is not None:
            for said in await _state_notices(engine, key, user_ev, superseded=gone):
                yield said
        recall: list[RecallItem] = []
        try:
            recall = await engine.recall(key, user_ev.content)
        except Exception as e:  # recall must never break a turn
            yield ev.Notice(f"memory recall failed: {e}", level="warning")
        if recall:
            yield _receipts(user_ev.content, recall)
        async for out in _answer(engine, key, user_ev.id, recall, user_ev.content):
            yield out


def _receipts(query: str, recall: list[RecallItem]) -> ev.Recalled:
    return ev.Recalled(query=query, items=[
        ev.RecallReceipt(id=r.id, text=r.text, source=r.source, score=r.score, scope=r.scope,
                         kind=r.kind, speaker=r.speaker, said_on=r.said_on)
        for r in recall])


async def _recall_after_compaction(engine: TurnHost, key: str, query: str, recall: list[RecallItem],
                                   ) -> tuple[list[ev.EngineEvent], list[RecallItem]]:
    """Recall again for the state a compaction left: the turns just compacted out of the window are
    indexed now and recallable in this very call (they were in the context a moment ago). Returns what
    to tell (notices; the receipts when they changed) and the recall to send (the first one when this
    one fails: recall never breaks a turn)."""
    try:
        again = await engine.recall(key, query)
    except Exception as e:
        return [ev.Notice(f"memory recall failed: {e}", level="warning")], recall
    told: list[ev.EngineEvent] = [ev.Notice(note, level="warning") for note in engine.store.notices]
    engine.store.notices.clear()
    if [(r.id, r.text) for r in again] != [(r.id, r.text) for r in recall]:
        told.append(_receipts(query, again))
    return told, again


async def _answer(engine: TurnHost, key: str, user_id: int, recall: list[RecallItem],
                  query: str) -> AsyncIterator[ev.EngineEvent]:
    """Context → (auto-compaction) → provider stream with tool rounds → stored reply."""
    ctx = await engine.build(key, None, recall=recall, new_event_id=user_id)
    res = await engine.compactor.maybe_auto(key, ctx.ledger)
    if res is not None:
        yield _compacted_event(key, res)
        told, recall = await _recall_after_compaction(engine, key, query, recall)
        for e in told:
            yield e
        ctx = await engine.build(key, None, recall=recall, new_event_id=user_id)
    engine.last_ledger[key] = ctx.ledger
    yield ev.ContextBuilt(ledger=ctx.ledger)
    for note in ctx.ledger.notices:
        yield ev.Notice(note, level="warning")
    loading: list[str] = []
    if engine.provider is None:
        yield ev.ModelLoading("preparing the model…")
        try:
            prov = await engine.get_provider(progress=loading.append)
        except ProviderError as e:
            yield ev.TurnFailed(key=key, error=str(e), error_kind=e.kind)
            return
        except Exception as e:
            yield ev.TurnFailed(key=key, error=f"could not start the model: {e}", error_kind="model")
            return
        yield ev.ModelLoading("model ready", done=True)
        yield ev.ProviderInfo(provider=prov.name, model=prov.model, reason=engine.provider_reason)
    prov_ = engine.provider
    assert prov_ is not None
    prov = prov_
    tools = _tools(engine) if prov.supports_tools else []
    # An unreported usage is estimated as everything the call carries: the messages (the ledger's total)
    # and the tool definitions sent with each of them, counted as `/context` counts them (red team 39).
    tool_tokens = count_tools(tool_definitions(tools), engine.count_text) if tools else 0
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
                                          max_tokens=engine.settings.provider.max_tokens):
                if isinstance(item, TextDelta):
                    parts.append(item.text)
                    yield ev.TokenDelta(item.text)
                elif isinstance(item, ToolCallEvent):
                    calls.append(item.call)
                elif isinstance(item, StreamEnd):
                    usage = item.usage
        except ProviderError as e:
            if e.kind == "context_overflow" and not retried_overflow and not parts:
                retried_overflow = True
                yield ev.Notice("the provider reported a context overflow: compacting and retrying once",
                                level="warning")
                res = None
                if any(h.id < user_id for h in engine.history(key)):  # never the turn's own message alone
                    with contextlib.suppress(UserError):  # nothing to compact: the same answer as below
                        res = await engine.compactor.compact(key, reason="overflow")
                if res is None:  # the history is not what overflows: compacting cannot help
                    await _touch(engine, key)
                    yield ev.TurnFailed(key=key, error_kind=e.kind, retryable=False, error=(
                        f"{e} (nothing to compact: your message, the system prompt and the session state "
                        "alone do not fit the window; /context shows what the call sends)"))
                    return
                yield _compacted_event(key, res)
                told, recall = await _recall_after_compaction(engine, key, query, recall)
                for said in told:
                    yield said
                ctx = await engine.build(key, None, recall=recall, new_event_id=user_id)
                continue
            partial = "".join(parts)
            pid = None
            if partial:
                pev = await engine.append(key, "message", {
                    "role": "assistant", "content": partial, "status": "interrupted", "error": str(e)[:500],
                    "error_kind": e.kind, "provider": prov.name, "model": prov.model})
                pid = pev.id
            await _touch(engine, key)
            yield ev.TurnFailed(key=key, error=str(e), error_kind=e.kind, partial_event_id=pid,
                                partial_text=partial, retryable=e.kind not in ("auth", "bad_request"))
            return
        except (asyncio.CancelledError, GeneratorExit):
            partial = "".join(parts)
            if partial and not stored:
                sid = engine.current_record(key).session_id
                engine.store.append(sid, "message", {
                    "role": "assistant", "content": partial, "status": "interrupted",
                    "error_kind": "cancelled", "provider": prov.name, "model": prov.model}, ts=engine.now_iso())
            raise
        reply = "".join(parts)
        if usage is None:
            usage = Usage(input_tokens=ctx.ledger.total + tool_tokens, output_tokens=engine.count_text(reply),
                          reported=False)
        cost = await asyncio.to_thread(_cost, engine, usage)  # the first price lookup imports genai-prices
        if calls and rounds < MAX_TOOL_ROUNDS:
            items: list[tuple[str, dict[str, Any]]] = []
            if reply:
                items.append(("message", {"role": "assistant", "content": reply, "status": "complete",
                                          "provider": prov.name, "model": prov.model}))
            for i, c in enumerate(calls):
                # The model call that asked for the round's tools: its usage on the first call only.
                paid = {"usage": usage.to_dict(), "cost_usd": cost} if i == 0 else {}
                items.append(("tool_call", {"call_id": c.id, "name": c.name, "arguments": c.arguments, **paid}))
            sid = engine.current_record(key).session_id
            # The store adds the usage to the session's counters as it appends (saved with the turn's end).
            await asyncio.to_thread(engine.store.append_many, sid, items, ts=engine.now_iso())
            for c in calls:
                yield ev.ToolCallStarted(call_id=c.id, name=c.name, arguments=c.arguments)
                result, is_err = await _run_tool(engine, key, c)
                await engine.append(key, "tool_result", {"call_id": c.id, "name": c.name, "content": result,
                                                       "is_error": is_err})
                yield ev.ToolCallFinished(call_id=c.id, name=c.name, result=result, is_error=is_err)
            ctx = await engine.build(key, None, recall=recall, new_event_id=user_id)
            continue
        data = {"role": "assistant", "content": reply, "status": "complete", "provider": prov.name,
                "model": prov.model, "usage": usage.to_dict(), "cost_usd": cost}
        aev = await engine.append(key, "message", data)  # counted by the store as it is appended
        stored = True
        await _touch(engine, key)
        rec = engine.current_record(key)
        yield ev.TurnDone(key=key, session_id=rec.session_id, event_id=aev.id, text=reply, usage=usage,
                          cost_usd=cost, provider=prov.name, model=prov.model,
                          totals=dataclasses.replace(rec.counters), ledger=ctx.ledger)
        return


def _cost(engine: TurnHost, usage: Usage) -> float | None:
    if engine.provider is None:
        return None
    return cost_usd(usage, engine.model_info())


async def _touch(engine: TurnHost, key: str) -> None:
    rec = engine.current_record(key)
    touch(rec, engine.now_iso())
    await asyncio.to_thread(engine.store.save)


def _compacted_event(key: str, res: CompactionResult) -> ev.Compacted:
    return ev.Compacted(
        key=key, old_session_id=res.old_session_id, new_session_id=res.new_session_id or "",
        tokens_before=res.tokens_before, tokens_after=res.tokens_after, repaired=list(res.repaired),
        fallback=res.fallback,
    )
