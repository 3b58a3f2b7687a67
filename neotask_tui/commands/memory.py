"""Memory slash commands: /remember, /recall, /forget."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from neotask_tui.commands.registry import CommandResult, command, usage_error
from neotask_tui.memory.types import recall_label

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine
    from neotask_tui.memory.service import MemoryService


async def _mem(engine: Engine) -> MemoryService:
    mem: MemoryService | None = await engine.get_memory()
    if mem is None:
        raise ValueError("long-term memory is disabled or unavailable")
    return mem


@command("remember", "/remember TEXT", "Save TEXT to MEMORY.md right away (you are consenting)")
async def _remember(engine: Engine, key: str, args: str) -> CommandResult:
    if not args.strip():
        return usage_error("remember", "nothing to remember")
    mem = await _mem(engine)
    agent = engine.parse_key(key).agent_id
    r = await asyncio.to_thread(mem.add, agent, args.strip(), source="user")
    note = f" ({r.redacted} secret(s) redacted: [REDACTED:…] in their place)" if r.redacted else ""
    return CommandResult(text=f"remembered in {r.path}{note}", data=r)


@command("recall", "/recall QUERY", "Search long-term memory")
async def _recall(engine: Engine, key: str, args: str) -> CommandResult:
    if not args.strip():
        return usage_error("recall", "a query is needed")
    mem = await _mem(engine)
    agent = engine.parse_key(key).agent_id
    hits = await asyncio.to_thread(mem.search, args.strip(), agent_id=agent, k=8)
    kinds = await asyncio.to_thread(engine.recall_kinds, key, hits)
    lines = [f"- **{h.score:.3f}** {recall_label(kd, h.speaker, h.said_on)} `{h.location}` — {h.text[:160]}"
             for h, kd in zip(hits, kinds, strict=True)]
    data = [{**h.to_dict(), "kind": kd} for h, kd in zip(hits, kinds, strict=True)]
    return CommandResult(text="\n".join(lines) or "nothing found", data=data)


@command("forget", "/forget ID|QUERY", "Remove a memory (verified: a search right after cannot return it)")
async def _forget(engine: Engine, key: str, args: str) -> CommandResult:
    if not args.strip():
        return usage_error("forget", "an id or a query is needed")
    mem = await _mem(engine)
    agent = engine.parse_key(key).agent_id
    r = await asyncio.to_thread(mem.forget, agent, args.strip())
    return CommandResult(text=r.summary, data=r)
