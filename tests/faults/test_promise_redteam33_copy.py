"""Red team 33, finding 1: ``/copy`` put a password announced in the message before it ("the db
password is in my next message", then the bare password) on the clipboard, and the reply quoting
it, while the search index and the memory index redact both."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from neotask_tui import paths
from neotask_tui.commands import dispatch
from neotask_tui.commands.intents import CopyText
from neotask_tui.engine.facade import Engine
from neotask_tui.memory.index.indexer import redacted_messages
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.repl import Repl
from tests.doubles import plain_settings

PW = "Zq9-wLx7" + "!pmA"  # built at runtime: no literal credential in the repository


@pytest.fixture
async def engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[Engine]:
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no clipboard tool: the file fallback
    eng = Engine(plain_settings(), provider=ScriptedProvider())
    eng.provider.queue("ok", f"Got it: {PW} stored.")  # type: ignore[union-attr]
    for text in ("the db password is in my next message", PW):
        [x async for x in eng.send(text, eng.default_key())]
    yield eng
    await eng.aclose()


def _ids(engine: Engine) -> tuple[int, int]:
    msgs = [e for e in engine.events(engine.default_key()) if e.type == "message"]
    return msgs[2].id, msgs[3].id  # the bare password and the reply quoting it


@pytest.mark.promise("secrets")
async def test_copy_redacts_an_announced_password_and_the_reply_quoting_it(engine: Engine) -> None:
    key = engine.default_key()
    pw_id, reply_id = _ids(engine)
    copied = {}
    for which in (f"e:{pw_id}", f"e:{reply_id}", ""):
        res = await dispatch(engine, key, f"/copy {which}".strip())
        assert not res.error and isinstance(res.intent, CopyText)
        assert PW not in res.intent.text and res.intent.redacted == 1
        copied[which] = res.intent.text
    assert copied[f"e:{pw_id}"] == "[REDACTED:password]"
    assert copied[f"e:{reply_id}"] == copied[""] == "Got it: [REDACTED:password] stored."
    # the same text the memory index holds: one reading of the conversation
    index = {eid: text for eid, _, text, _ in redacted_messages(engine.events(key))}
    assert index[pw_id] == copied[f"e:{pw_id}"] and index[reply_id] == copied[f"e:{reply_id}"]


@pytest.mark.promise("secrets")
async def test_repl_copy_of_an_announced_password_writes_it_redacted(engine: Engine) -> None:
    pw_id, _ = _ids(engine)
    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=False, color_system=None)
    with create_pipe_input() as inp, create_app_session(input=inp, output=DummyOutput()):
        inp.send_text(f"/copy e:{pw_id}\r/quit\r")
        repl = Repl(engine, engine.default_key(), console=console, input=inp, output=DummyOutput())
        assert await repl.run() == 0
    assert paths.clipboard_file().read_text() == "[REDACTED:password]"
    assert "1 secret redacted" in " ".join(buf.getvalue().split())
