"""One turn of a conversation: context, auto-compaction, provider stream, tool rounds, storage.

Part of the :class:`~neotask_tui.engine.facade.Engine` facade (functions it delegates to, so the facade stays
one object with one public API while its modules stay small).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from neotask_tui.engine import events as ev
from neotask_tui.engine._util import clean_text, optional, totals
from neotask_tui.engine.context.assembly import RecallItem
from neotask_tui.errors import LockedError, StorageError, UserError
from neotask_tui.providers.base import ProviderError, StreamEnd, TextDelta, ToolCall, ToolCallEvent, Usage
from neotask_tui.storage.keys import validate_key
from neotask_tui.storage.store import touch

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine

MAX_TOOL_ROUNDS = 6


def _tools(engine: Engine) -> list[Any]:
    tools: list[Any] = []
    if engine.state is not None and hasattr(engine.state, "tools"):
        tools.extend(engine.state.tools())
    mem_tools = optional("neotask_tui.memory.tools", "tool_specs")
    if mem_tools is not None and engine.settings.memory.enabled:
        tools.extend(mem_tools())
    return tools


def next_call_tools(engine: Engine) -> list[Any]:
    """The tool definitions the next call gives the provider (none when it takes no tools), without
    building or loading the provider."""
    prov = engine._provider
    if prov is not None:
        supports = bool(getattr(prov, "supports_tools", False))
    elif engine.settings.provider.name == "scripted":
        supports = True
    else:
        supports = engine.choose_provider().name != "local"
    return _tools(engine) if supports else []


def tool_definitions(tools: list[Any]) -> list[dict[str, Any]]:
    """Tool specs as data: exactly the name, description and JSON-schema parameters sent."""
    return [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]


async def _run_tool(engine: Engine, key: str, call: ToolCall) -> tuple[str, bool]:
    try:
        if engine.state is not None and hasattr(engine.state, "handle_tool"):
            res = await engine.state.handle_tool(key, call)
            if res is not None:
                return str(res), False
        handler = optional("neotask_tui.memory.tools", "handle_tool")
        if handler is not None:
            mem = await engine.get_memory()
            if mem is not None:
                res = await asyncio.to_thread(handler, mem, engine.parse_key(key).agent_id, call.name, call.arguments)
                if res is not None:
                    return str(res), False
        return f"unknown tool {call.name!r}", True
    except (StorageError, LockedError):
        raise  # the data dir failed, not the call: the turn reports it
    except Exception as e:  # a bad tool call is an error result for the model, never a crash
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        return f"tool error: {msg}", True


async def send(engine: Engine, text: str, key: str | None = None) -> AsyncIterator[ev.EngineEvent]:
    """Run one turn: store the user's message, assemble context, stream the reply, store it.

    Yields engine events. The user's message is durably on disk before :class:`TurnStarted`.
    If the consumer stops iterating (Esc/Ctrl+C) the partial reply is kept, marked interrupted.
    """
    key = validate_key(key or engine.default_key())
    text = clean_text(text)
    if not text.strip():
        raise UserError("empty message")
    if engine._provider is None and engine.settings.provider.name == "scripted":
        await engine.get_provider()  # a bad script is a one-line UserError before anything is stored
    async with engine._turn_lock:
        rec, reset = await asyncio.to_thread(engine._route, key)
        if reset is not None:
            yield reset
        user_ev = await engine.append(key, "message", {"role": "user", "content": text})
        yield ev.TurnStarted(key=key, session_id=rec.session_id, user_event_id=user_ev.id)
        for note in engine.store.notices:
            yield ev.Notice(note, level="warning")
        engine.store.notices.clear()
        if engine.state is not None:
            for n in await engine.state.on_user_message(key, user_ev):
                yield ev.Notice(getattr(n, "text", str(n)))
        recall: list[RecallItem] = []
        try:
            recall = await engine.recall(key, text)
        except Exception as e:  # recall must never break a turn
            yield ev.Notice(f"memory recall failed: {e}", level="warning")
        for note in engine.store.notices:  # from the recall: skipped memory files, background indexing
            yield ev.Notice(note, level="warning")
        engine.store.notices.clear()
        if recall:
            yield ev.Recalled(query=text, items=[
                {"id": r.id, "text": r.text, "source": r.source, "score": r.score, "scope": r.scope}
                for r in recall])
        async for out in _answer(engine, key, user_ev.id, recall):
            yield out


async def _answer(engine: Engine, key: str, user_id: int, recall: list[RecallItem]) -> AsyncIterator[ev.EngineEvent]:
    """Context → (auto-compaction) → provider stream with tool rounds → stored reply."""
    ctx = await engine.build(key, None, recall=recall, new_event_id=user_id)
    if engine.compactor is not None:
        res = await engine.compactor.maybe_auto(key, ctx.ledger)
        if res is not None:
            yield _compacted_event(engine, key, res)
            ctx = await engine.build(key, None, recall=recall, new_event_id=user_id)
    engine.last_ledger[key] = ctx.ledger.to_dict()
    yield ev.ContextBuilt(ledger=ctx.ledger.to_dict())
    for note in ctx.ledger.notices:
        yield ev.Notice(note, level="warning")
    loading: list[str] = []
    if engine._provider is None:
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
        yield ev.ProviderInfo(provider=prov.name, model=prov.model, reason=engine._provider_reason)
    prov_ = engine._provider
    assert prov_ is not None
    prov = prov_
    tools = _tools(engine) if getattr(prov, "supports_tools", False) else []
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
            if e.kind == "context_overflow" and not retried_overflow and engine.compactor is not None and not parts:
                retried_overflow = True
                yield ev.Notice("the provider reported a context overflow: compacting and retrying once",
                                level="warning")
                res = await engine.compactor.compact(key, reason="overflow")
                yield _compacted_event(engine, key, res)
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
        reported = usage is not None
        if usage is None:
            usage = Usage(input_tokens=ctx.ledger.total, output_tokens=engine.count_text(reply), reported=False)
        cost = _cost(engine, usage)
        if calls and rounds < MAX_TOOL_ROUNDS:
            items: list[tuple[str, dict[str, Any]]] = []
            if reply:
                items.append(("message", {"role": "assistant", "content": reply, "status": "complete",
                                          "provider": prov.name, "model": prov.model}))
            for c in calls:
                items.append(("tool_call", {"call_id": c.id, "name": c.name, "arguments": c.arguments,
                                            "usage": usage.to_dict(), "cost_usd": cost}))
                usage, cost = Usage(reported=reported), 0.0  # count the call's usage once
            sid = engine.current_record(key).session_id
            await asyncio.to_thread(engine.store.append_many, sid, items, ts=engine.now_iso())
            _add_usage(engine, key, items)
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
        aev = await engine.append(key, "message", data)
        stored = True
        _add_usage(engine, key, [("message", data)])
        await _touch(engine, key)
        rec = engine.current_record(key)
        yield ev.TurnDone(key=key, session_id=rec.session_id, event_id=aev.id, text=reply, usage=usage.to_dict(),
                          cost_usd=cost, provider=prov.name, model=prov.model,
                          totals=totals(rec), ledger=ctx.ledger.to_dict())
        return


def _cost(engine: Engine, usage: Usage) -> float | None:
    from neotask_tui.providers.models import cost_usd

    p = engine._provider
    if p is None:
        return None
    return cost_usd(usage, engine.model_info())


def _add_usage(engine: Engine, key: str, items: list[tuple[str, dict[str, Any]]]) -> None:
    rec = engine.current_record(key)
    for _t, d in items:
        if isinstance(d.get("usage"), dict):
            rec.counters.add(d["usage"], d.get("cost_usd"))


async def _touch(engine: Engine, key: str) -> None:
    rec = engine.current_record(key)
    touch(rec, engine.now_iso())
    await asyncio.to_thread(engine.store.save)


def _compacted_event(engine: Engine, key: str, res: Any) -> ev.Compacted:
    return ev.Compacted(
        key=key, old_session_id=str(getattr(res, "old_session_id", "")),
        new_session_id=str(getattr(res, "new_session_id", "")),
        tokens_before=int(getattr(res, "tokens_before", 0)), tokens_after=int(getattr(res, "tokens_after", 0)),
        repaired=list(getattr(res, "repaired", []) or []), fallback=bool(getattr(res, "fallback", False)),
    )
