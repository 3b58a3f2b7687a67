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


def _bundled_settings() -> Settings:
    s = _settings()
    s.provider.name = ""  # nothing configured: the bundled model answers
    s.provider.probe_ollama = False
    return s


async def test_model_lists_the_choices_and_switches_from_the_next_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    from neotask_tui.commands import dispatch
    from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

    eng = Engine(_bundled_settings(), clock=Clock(datetime(2026, 3, 14, 12, tzinfo=UTC)), tz=UTC)
    key = eng.default_key()
    try:
        res = await dispatch(eng, key, "/model")
        assert not res.error and res.data["provider"] == "local"
        names = {o["name"]: o for o in res.data["options"]}
        assert set(names) == {"local", "openai", "anthropic", "ollama"}
        assert names["local"]["ready"] and "offline demo" in names["local"]["detail"]
        assert not names["openai"]["ready"] and "OPENAI_API_KEY" in names["openai"]["detail"]
        assert "← current" in res.text
        res = await dispatch(eng, key, "/model openai")
        assert res.error and "not configured" in res.text  # nothing the user did not configure
        assert (await dispatch(eng, key, "/model gemini")).error
        assert eng.provider is None  # listing and refusing loaded nothing
        with OpenAIServer() as srv:
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
            monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
            res = await dispatch(eng, key, "/model openai gpt-4o")
            assert not res.error and "openai · gpt-4o" in res.text
            srv.queue(Reply(chunks=["from ", "the server"], usage=ReplyUsage(input=30, output=3)))
            events = [e async for e in eng.send("hello", key)]
            done = [e for e in events if type(e).__name__ == "TurnDone"]
            assert done and done[0].text == "from the server" and done[0].provider == "openai"
            assert srv.requests[-1]["model"] == "gpt-4o"
        res = await dispatch(eng, key, "/model")
        assert res.data["provider"] == "openai" and "/model openai" in res.data["reason"]
        res = await dispatch(eng, key, "/model local")
        assert not res.error and eng.provider is None and eng.choose_provider().name == "local"
    finally:
        await eng.aclose()


async def test_plain_repl_welcome_says_the_bundled_model_is_a_demo() -> None:
    eng = Engine(_bundled_settings(), clock=Clock(datetime(2026, 3, 14, 12, tzinfo=UTC)), tz=UTC)
    try:
        out = " ".join((await _drive(eng, "/quit\r")).split())
        assert "local · smollm2-135m-instruct" in out and "small offline demo" in out
        for way in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "Ollama", "provider.base_url", "GGUF", "/model"):
            assert way in out, way
        assert eng.provider is None  # nothing was loaded to say so
    finally:
        await eng.aclose()
