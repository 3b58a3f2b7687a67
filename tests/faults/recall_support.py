"""The recall harness red teams 3 and 14 share: a fresh NEOTASK_HOME with memory on (autouse fixtures a
test module takes by importing them), an engine on the scripted provider, MEMORY.md written by hand."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from neotask_tui import paths
from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.context.assembly import AssembledContext, RecallItem
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import scripted

KEY = "agent:main:tui:default"


@pytest.fixture(autouse=True)
def neotask_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "neotask-home"
    monkeypatch.setenv("NEOTASK_HOME", str(home))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OLLAMA_HOST", "NEOTASK_PROVIDER",
                "NEOTASK_MODEL", "NEOTASK_SCRIPT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NEOTASK_PROVIDER_PROBE_OLLAMA", "false")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield home


@pytest.fixture(autouse=True)
def _memory_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engines here are built with Settings() (memory on); `neotask memory search` loads the settings
    from the environment, where the fault suite's conftest switches memory off (this runs after it)."""
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")


def _engine(s: Settings | None = None) -> Engine:
    s = s or Settings()
    s.session.daily_reset_hour = -1
    return Engine(s, provider=ScriptedProvider(), tz=ZoneInfo("UTC"))


async def _say(engine: Engine, text: str, reply: str = "ok", key: str = KEY) -> list[ev.EngineEvent]:
    scripted(engine).queue(reply)
    return [e async for e in engine.send(text, key)]


def _memory(*lines: str, agent: str = "main", name: str = "MEMORY.md") -> None:
    ws = paths.workspace_dir(agent)
    (ws / name).parent.mkdir(parents=True, exist_ok=True)
    (ws / name).write_text("# Memory\n\n" + "".join(f"- {ln}\n" for ln in lines), encoding="utf-8")


def _recall_section(ctx: AssembledContext) -> str:
    return "\n".join(m.content for m, sec in zip(ctx.messages, ctx.section_of, strict=True) if sec == "recall")


async def _recalled_in_new_session(message: str, history: tuple[str, ...] = ()) -> list[RecallItem]:
    """What ``message`` recalls in a fresh session after ``history`` was said in the one before it
    (``MEMORY.md`` as the test wrote it)."""
    engine = _engine()
    try:
        for text in history:
            await _say(engine, text)
        await engine.new_session(KEY)
        return await engine.recall(KEY, message)
    finally:
        await engine.aclose()

