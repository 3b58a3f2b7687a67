"""The plain REPL: same engine and commands, driven through a pipe input (no terminal)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.engine.context.assembly import Ledger
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.base import Usage
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.repl import SlashCompleter, status_line
from neotask_tui.storage.index import Counters
from tests.doubles import Clock, drive_repl, plain_settings


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    prov = ScriptedProvider()
    eng = Engine(plain_settings(), provider=prov, clock=Clock(datetime(2026, 3, 14, 12, tzinfo=UTC)), tz=UTC)
    yield eng
    await eng.aclose()


async def _drive(engine: Engine, keys: str) -> str:
    return await drive_repl(engine, keys, 100)


async def test_message_streams_reply_and_status_line(engine: Engine) -> None:
    engine.provider.queue({"text": "Hi! **Bold** reply.", "usage": {"input": 30, "output": 5}})  # type: ignore[union-attr]
    out = await _drive(engine, "hello there\r/quit\r")
    assert "Hi! **Bold** reply." in out  # streamed raw
    assert "context " in out and "in 30 out 5" in out
    msgs = [e for e in engine.events(engine.default_key()) if e.type == "message"]
    assert [m.role for m in msgs] == ["user", "assistant"]
    assert paths.history_file().read_text(encoding="utf-8").count("+hello there") == 1


async def test_commands_run_on_engine_and_bad_input_is_inline(engine: Engine) -> None:
    out = await _drive(engine, "/goal ship the REPL\r/nonsense\r/theme dark\r\x04")  # Ctrl+D leaves
    view = engine.state.get(engine.default_key())
    assert view.value("current_goal") == "ship the REPL"
    assert "unknown command /nonsense" in out
    assert "full-screen app" in out


async def test_compaction_review_cancel_changes_nothing(engine: Engine) -> None:
    key = engine.default_key()
    for i in range(8):
        engine.provider.queue(f"reply number {i} " + "words " * 200)  # type: ignore[union-attr]
        async for _ in engine.send(f"question {i} " + "detail " * 200, key):
            pass
    before = engine.current_record(key).session_id
    out = await _drive(engine, "/compact\rn\r/quit\r")
    assert "cancelled" in out
    assert engine.current_record(key).session_id == before
    out = await _drive(engine, "/compact\ry\r/quit\r")
    assert engine.current_record(key).session_id != before


def test_completer_and_status_line() -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    names = [c.text for c in SlashCompleter().get_completions(Document("/com"), CompleteEvent())]
    assert "/compact" in names
    assert not list(SlashCompleter().get_completions(Document("hello /com"), CompleteEvent()))
    ledger = Ledger(sections={}, total=4096, budget=4096, window=8192, fill=0.5, strategy="summary")
    line = status_line(ledger, Counters(input=1, output=2, cost_usd=None), None)
    assert line.startswith("context 50% ≈4,096/8,192 (estimated)") and "cost n/a" in line
    line = status_line(ledger, Counters(), Usage(input_tokens=300, cache_read_tokens=56, reported=True))
    assert "call 356 in (reported)" in line  # what the provider reported, apart from our estimate
    exact = Ledger(sections={}, total=4096, budget=4096, window=8192, fill=0.5, strategy="summary", source="exact")
    assert status_line(exact, Counters(), None).startswith("context 50% 4,096/8,192 (exact)")


def test_chat_plain_reads_a_redirected_file(tmp_path: Path) -> None:
    """`neotask chat --plain < script.txt` runs every line (prompt_toolkit cannot wait on a regular
    file; red team, session 7: the lines were dropped and it exited 0)."""
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text('[provider]\nname = "scripted"\n', encoding="utf-8")
    script = tmp_path / "script.txt"
    script.write_text("hello from a file\n/state\nsecond line\n", encoding="utf-8")
    env = {**os.environ, "NEOTASK_HOME": str(home)}
    with script.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "neotask_tui", "chat", "--plain"], stdin=stdin, env=env,
                              capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "(scripted) hello from a file" in out and "(scripted) second line" in out
    assert "Session state" in out


async def test_search_finds_messages_of_archived_sessions_too(engine: Engine) -> None:
    key = engine.default_key()
    async for _ in engine.send("where is the zeppelin hangar?", key):
        pass
    await engine.new_session(key)
    out = await _drive(engine, '/search zeppelin\r/search "hangar zeppelin"\r/search !!\r/quit\r')
    assert "2 messages match zeppelin" in out  # yours and the scripted echo
    assert "(archived)" in out and "· user · e:2" in out and "where is the zeppelin hangar?" in out
    assert "no message matches" in out  # the phrase keeps its order
    assert "search needs at least one word" in out


async def test_a_double_slash_line_sends_the_message_the_app_would(engine: Engine) -> None:
    """'//' sends a message starting with '/' (one slash dropped), as in the app and `send`; an
    indented '//' line kept its indentation and lost a space instead of the slash (review, session 24)."""
    await _drive(engine, "  //usr/bin is slow\r/quit\r")
    sent = [e.content for e in engine.events(engine.default_key()) if e.type == "message" and e.role == "user"]
    assert sent == ["  /usr/bin is slow"], sent


async def test_an_automatic_reset_is_said_with_how_to_undo_it() -> None:
    from tests.tui.support import drain

    clock = Clock(datetime(2026, 3, 14, 12, tzinfo=UTC))
    engine = Engine(plain_settings(), provider=ScriptedProvider(), clock=clock, tz=UTC)
    try:
        key = engine.default_key()
        await drain(engine.send("evening", key))
        old = engine.current_record(key).session_id
        clock.advance(days=1)
        out = " ".join((await _drive(engine, "morning\r/quit\r")).split())
        new = engine.current_record(key).session_id
    finally:
        await engine.aclose()
    assert new != old
    assert (f"new session {new} (daily reset); the previous one, {old}, is archived · daily reset at 2026-03-15 "
            "04:00 UTC (/undo-reset restores it)") in out, out
