"""Helpers for the compaction and context tests (``test_compaction*.py``, ``test_context.py``); not a test
module."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from neotask_tui.config import Settings
from neotask_tui.engine.events import EngineEvent, TurnDone
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import Clock, scripted

KEY = "agent:main:tui:default"

CONVERSATION = [
    ("I want to fix the CSV importer in src/importer/csv_reader.py. Do not use Redis.", "Sure, let's look."),
    ("The workspace is acme-prod and the ticket is ABC-123.", "Noted ABC-123."),
    ("Never change the public API of make_app().", "Understood."),
    ("Maybe the problem is the timezone.", "Possibly; we will check."),
    ("We decided to split files into batches of 5000 rows.", "Good, batches of 5000."),
    ("Can you write the batch splitter now?", "Here is a splitter sketch."),
    ("Thanks. Also check https://example.com/docs/import for limits.", "The limit is 10000 rows."),
    ("OK, go on with tests next.", "Writing tests."),
]


def ticking_clock() -> Clock:
    """The compaction tests' clock: one second later on every reading, the first at 10:00:01."""
    return Clock(datetime(2025, 3, 1, 10, 0, 1, tzinfo=UTC), auto_tick=timedelta(seconds=1))


def make_settings(window: int = 4000) -> Settings:
    s = Settings()
    s.memory.enabled = False
    s.session.daily_reset_hour = -1
    s.context.window_tokens = window
    s.compaction.keep_recent_tokens = 60
    s.compaction.rebuild_every = 0
    s.compaction.timeout_seconds = 5
    return s


def open_engine(settings: Settings | None = None) -> Engine:
    """An Engine on ``settings`` (default ``make_settings()``) with a scripted provider and ``ticking_clock()``."""
    s = make_settings() if settings is None else settings
    return Engine(s, provider=ScriptedProvider(), clock=ticking_clock())


async def turn(eng: Engine, text: str) -> list[EngineEvent]:
    return [e async for e in eng.send(text, KEY)]


async def chat(eng: Engine, pairs: list[tuple[str, str]] = CONVERSATION) -> None:
    for user, reply in pairs:
        scripted(eng).queue(reply)
        out = await turn(eng, user)
        assert any(isinstance(e, TurnDone) for e in out)
