"""Memory slash commands: /remember, /recall, /forget."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING

from neotask_tui.commands.registry import CommandResult, command, usage_error
from neotask_tui.memory.types import recall_label, recall_rank, score_text
from neotask_tui.text.terminal import inert_line
from neotask_tui.tuning import RECALL_SHOWN_LINES

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.memory.types import ForgetReceipt


async def _mem(engine: Engine, index_for: str | None = None) -> MemoryService:
    """The memory service; with ``index_for`` (a key), its agent's archived sessions indexed first."""
    mem: MemoryService | None = await (engine.get_memory() if index_for is None else engine.search_memory(index_for))
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
    if r.existing:
        return CommandResult(text=f"already remembered in {r.shown_path}:{r.line_start} — nothing added", data=r)
    note = f" ({r.redacted} secret(s) redacted: [REDACTED:…] in their place)" if r.redacted else ""
    return CommandResult(text=f"remembered in {r.shown_path}{note}", data=r)


@command("recall", "/recall QUERY", "Search long-term memory")
async def _recall(engine: Engine, key: str, args: str) -> CommandResult:
    if not args.strip():
        return usage_error("recall", "a query is needed")
    mem = await _mem(engine, index_for=key)
    agent = engine.parse_key(key).agent_id
    hits = await asyncio.to_thread(mem.search, args.strip(), agent_id=agent, k=8)
    kinds = await asyncio.to_thread(engine.recall_kinds, key, hits)
    pairs = sorted(zip(hits, kinds, strict=True), key=lambda p: recall_rank(p[1]))  # stable
    hits, kinds = [h for h, _ in pairs], [kd for _, kd in pairs]
    blocks = []
    for h, kd in zip(hits, kinds, strict=True):
        label = recall_label(kd, h.speaker, h.said_on)
        head = f"**{score_text(h.score)}** {label} `{inert_line(h.location)}` · {h.scope}"
        blocks.append(f"{head}\n\n{fenced(matched_lines(h.text, args))}")
    data = [{**h.to_dict(), "kind": kd} for h, kd in zip(hits, kinds, strict=True)]
    return CommandResult(text="\n\n".join(blocks) or "nothing found", data=data)


def matched_lines(text: str, query: str, most: int = RECALL_SHOWN_LINES) -> str:
    """The lines of a passage that hold the query's terms (up to ``most``, in passage order, a
    ``…`` where lines are left out; the first lines when none does)."""
    from neotask_tui.text.lexical import terms

    lines = text.splitlines() or [text]
    wanted = set(terms(query))
    hits = [i for i, line in enumerate(lines) if wanted & set(terms(line))]
    ranked = sorted(hits, key=lambda i: -len(wanted & set(terms(lines[i]))))[:most]
    keep = sorted(ranked) if ranked else list(range(min(most, len(lines))))
    out: list[str] = []
    for a, b in zip(keep, [*keep[1:], None], strict=True):
        line = lines[a]
        out.append(line if len(line) <= 300 else line[:299] + "…")
        if b is not None and b != a + 1:
            out.append("…")
    return "\n".join(out)


def fenced(text: str) -> str:
    """``text`` in a code fence longer than any backtick run inside it, so a snippet with its own
    (even unclosed) fence never swallows what follows."""
    run = max((len(r) for r in re.findall(r"`{3,}|~{3,}", text)), default=0)
    ticks = "`" * max(3, run + 1)
    return f"{ticks}text\n{text}\n{ticks}"


@command("forget", "/forget ID|QUERY", "Remove a memory (verified: a search right after cannot return it)")
async def _forget(engine: Engine, key: str, args: str) -> CommandResult:
    if not args.strip():
        return usage_error("forget", "an id or a query is needed")
    mem = await _mem(engine)
    agent = engine.parse_key(key).agent_id
    r = await asyncio.to_thread(mem.forget, agent, args.strip())
    return CommandResult(text=describe_forget(r), data=r.to_dict())


def describe_forget(r: ForgetReceipt) -> str:
    """Markdown for a forget receipt: the file, every line that lost text and what it lost, the check."""
    if r.tombstoned:
        head = f"**Forgot** from `{r.shown_path}` (the passage is tombstoned in the index):"
        body = [f"- {t}" for t in r.removed]
    else:
        head = f"**Forgot** from `{r.shown_path}`, {len(r.removed_lines)} line(s):"
        body = [f"- line {n}{' (part of it)' if n in r.partial_lines else ''}: {t}" for n, t in r.removed_lines]
    check = ("verified: a search no longer returns it" if r.verified
             else "**warning**: the same text still exists elsewhere in memory")
    return "\n".join([head, "", fenced("\n".join(body)) if body else "_nothing_", "", check])
