"""The plain REPL and the shared commands for issue #17: /help, /model, the gauge line, minors."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from neotask_tui.commands import REGISTRY
from neotask_tui.config import Settings
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.repl import Repl
from tests.doubles import Clock


def _settings() -> Settings:
    s = Settings()
    s.memory.enabled = False
    s.provider.name = "scripted"
    s.context.window_tokens = 8192
    return s


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    eng = Engine(_settings(), provider=ScriptedProvider(), clock=Clock(datetime(2026, 3, 14, 12, tzinfo=UTC)),
                 tz=UTC)
    yield eng
    await eng.aclose()


async def _drive(engine: Engine, keys: str, width: int = 140) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    with create_pipe_input() as inp, create_app_session(input=inp, output=DummyOutput()):
        inp.send_text(keys)
        repl = Repl(engine, engine.default_key(), console=console, input=inp, output=DummyOutput())
        assert await repl.run() == 0
    return buf.getvalue()


async def test_plain_help_keeps_every_usage_and_description(engine: Engine) -> None:
    out = await _drive(engine, "/help\r/quit\r")
    flat = " ".join(out.split())
    for cmd in REGISTRY.values():  # a `|` in a usage line no longer eats the description
        assert f"{cmd.usage} — {cmd.help}" in flat, cmd.usage
    for group in ("sessions", "context & compaction", "state", "memory", "app"):
        assert group in out
    assert len(out.splitlines()) <= 40


async def test_help_for_one_command(engine: Engine) -> None:
    out = await _drive(engine, "/help pref\r/help nosuch\r/quit\r")
    assert "/pref TEXT [--for 2h|--until-event NAME] — Add a preference for this session only" in out
    assert "unknown command /nosuch" in out
