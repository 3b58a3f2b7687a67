"""The plain REPL's /retry, /edit and /fork (issue #21 items 2 and 3), through a pipe input."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.storage.events import superseded_ids
from tests.doubles import Clock, drive_repl, plain_settings


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    eng = Engine(plain_settings(), provider=ScriptedProvider(), clock=Clock(datetime(2026, 3, 14, 12, tzinfo=UTC)),
                 tz=UTC)
    yield eng
    await eng.aclose()


async def _drive(engine: Engine, keys: str) -> str:
    return await drive_repl(engine, keys, 120)


async def test_retry_streams_a_new_reply_and_marks_the_old_one(engine: Engine) -> None:
    engine.provider.queue("first try", "second try")  # type: ignore[union-attr]
    out = await _drive(engine, "hello\r/retry\r/quit\r")
    assert "first try" in out and "second try" in out and "superseded" in out
    evs = engine.events(engine.default_key())
    first = next(e for e in evs if e.content == "first try")
    assert first.id in superseded_ids(evs)
    assert [e.content for e in engine.history(engine.default_key())] == ["hello", "second try"]


async def test_edit_without_text_prefills_the_prompt_and_regenerates(engine: Engine) -> None:
    engine.provider.queue("about cats", "about dogs")  # type: ignore[union-attr]
    # /edit puts "tell me about cats" in the prompt: erase "cats" (4 backspaces), type "dogs"
    out = await _drive(engine, "tell me about cats\r/edit\r" + "\x7f" * 4 + "dogs\r/quit\r")
    assert "editing your message" in out and "about dogs" in out
    assert [e.content for e in engine.history(engine.default_key())] == ["tell me about dogs", "about dogs"]


async def test_edit_cancel_and_errors_are_one_line(engine: Engine) -> None:
    out = await _drive(engine, "/retry\r/edit\r/fork e:zz\r/quit\r")
    assert "nothing to regenerate" in out and "nothing to edit" in out and "not an event id" in out
    engine.provider.queue("reply")  # type: ignore[union-attr]
    out = await _drive(engine, "hi\r/edit\r" + "\x7f" * 2 + "\r/quit\r")
    assert "edit cancelled" in out
    assert [e.content for e in engine.history(engine.default_key())] == ["hi", "reply"]


async def test_fork_in_the_repl(engine: Engine) -> None:
    engine.provider.queue("r1", "r2")  # type: ignore[union-attr]
    await _drive(engine, "one\rtwo\r/quit\r")
    key = engine.default_key()
    before = engine.current_record(key).session_id
    r1 = next(e for e in engine.events(key) if e.content == "r1")
    out = await _drive(engine, f"/fork e:{r1.id}\r/quit\r")
    assert f"forked at e:{r1.id}" in out
    rec = engine.current_record(key)
    assert rec.parent_session_id == before and [e.content for e in engine.history(key)] == ["one", "r1"]
