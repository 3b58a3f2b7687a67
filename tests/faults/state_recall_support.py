"""Shared helpers of the red-team files on recall against session state (red teams 16 and 17): an engine
on a frozen clock with the scripted provider, a turn, a compaction that moves the first turns out of the
window, and how a test shows what was recalled."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from neotask_tui.config import Settings
from neotask_tui.engine.context.assembly import AssembledContext, RecallItem
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import Clock, scripted

KEY = "agent:main:tui:default"
START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def state_engine(clock: Clock | None = None, recall_history: str = "user") -> Engine:
    """An engine with no daily or idle reset, ``memory.recall_history`` as given, UTC, a frozen clock."""
    s = Settings()
    s.session.daily_reset_hour = -1
    s.session.idle_reset_minutes = 0
    s.memory.recall_history = recall_history
    return Engine(s, provider=ScriptedProvider(), tz=ZoneInfo("UTC"), clock=clock or Clock(START))


async def say(engine: Engine, text: str, reply: str = "ok") -> None:
    """One turn on :data:`KEY`: ``text``, answered ``reply``."""
    scripted(engine).queue(reply)
    async for _ in engine.send(text, KEY):
        pass


async def compact_away(engine: Engine) -> None:
    """Four more turns, then a compaction: the turns said before them leave the window."""
    for i in range(4):
        await say(engine, f"Unrelated note number {i} about the weather and lunch plans.")
    scripted(engine).queue("## Goal\n- keep notes [e:2]")
    await engine.compact(KEY)


def show(items: list[RecallItem]) -> list[tuple[str, str, float, str]]:
    """Recalled items as an assertion message shows them."""
    return [(r.kind, r.speaker, round(r.score, 3), r.text[:90]) for r in items]


def section(ctx: AssembledContext, name: str = "recall") -> str:
    """The text of one section of an assembled context."""
    return "\n".join(m.content for m, sec in zip(ctx.messages, ctx.section_of, strict=True) if sec == name)
