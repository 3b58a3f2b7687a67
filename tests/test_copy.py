"""``/copy [e:ID] [N]``: the last reply, a chosen message or its code block N, through OSC 52 with a
fallback (a clipboard tool when installed, else ``exports/clipboard.txt``), saying what was copied."""

from __future__ import annotations

import base64
import io
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from neotask_tui import paths
from neotask_tui.commands import dispatch
from neotask_tui.commands.clipboard import deliver, osc52
from neotask_tui.commands.intents import CopyText
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.repl import Repl
from neotask_tui.text.codeblocks import code_blocks
from tests.doubles import plain_settings

REPLY = ("Two ways.\n\n```python\nprint('one')\n```\n\nOr:\n\n~~~bash\necho two\necho \x1b]0;pwned\x07\n~~~\n\n"
         "And the key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh.")


@pytest.fixture
async def engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[Engine]:
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no clipboard tool: the file fallback
    eng = Engine(plain_settings(), provider=ScriptedProvider())
    eng.provider.queue(REPLY)  # type: ignore[union-attr]
    [x async for x in eng.send("how do I print?", eng.default_key())]
    yield eng
    await eng.aclose()


def test_code_blocks_are_counted_from_the_top_with_their_language() -> None:
    blocks = code_blocks(REPLY)
    assert [(b.lang, b.text) for b in blocks] == [("python", "print('one')"),
                                                  ("bash", "echo two\necho \x1b]0;pwned\x07")]
    assert code_blocks("````\na\n```\nstill inside\n````") [0].text == "a\n```\nstill inside"
    assert code_blocks("text\n```js\nunclosed") [0].text == "unclosed"
    assert code_blocks("no ``` fences `here`") == []


async def test_copy_block_n_is_inert_and_redacted_and_says_what(engine: Engine) -> None:
    key = engine.default_key()
    res = await dispatch(engine, key, "/copy 2")
    assert not res.error and isinstance(res.intent, CopyText)
    assert res.intent.text == "echo two\necho ␛]0;pwned␇" and "code block 2 of 2 (bash)" in res.intent.what
    res = await dispatch(engine, key, "/copy")
    assert isinstance(res.intent, CopyText) and "[REDACTED:" in res.intent.text and "sk-proj-" not in res.intent.text
    assert res.intent.redacted == 1 and res.intent.what.startswith("the last reply (e:")
    user_id = next(e.id for e in engine.events(key) if e.role == "user")
    res = await dispatch(engine, key, f"/copy e:{user_id}")
    assert isinstance(res.intent, CopyText) and res.intent.text == "how do I print?"
    for bad, why in (("/copy 3", "has 2 code blocks (1–2"), (f"/copy e:{user_id} 1", "has no code block"),
                     ("/copy e:999", "no message e:999"), ("/copy two", "usage: /copy")):
        res = await dispatch(engine, key, bad)
        assert res.error and why in res.text, (bad, res.text)


async def test_fallbacks_a_clipboard_tool_else_the_file(engine: Engine, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    copy = CopyText("echo two", "code block 2 of 2 (bash) of the last reply (e:3)")
    notice = deliver(copy, osc52_sent=True)
    assert notice == (f"copied code block 2 of 2 (bash) of the last reply (e:3): 8 characters, 1 line → the "
                      f"terminal clipboard (OSC 52) and {paths.clipboard_file()}")
    assert paths.clipboard_file().read_text() == "echo two"
    # a real program named xclip on PATH receives the text on stdin
    bindir = tmp_path / "bin"
    bindir.mkdir()
    got = tmp_path / "got.txt"
    tool = bindir / "xclip"
    tool.write_text(f"#!/bin/sh\nexec /bin/cat > {got}\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    paths.clipboard_file().unlink()
    notice = deliver(CopyText("two\nlines", "the last reply (e:3)"), osc52_sent=False)
    assert got.read_text() == "two\nlines" and notice.endswith("2 lines → xclip")
    assert not paths.clipboard_file().exists()


async def test_repl_copy_writes_osc52_to_a_tty_else_the_file(engine: Engine) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    for buf in (io.StringIO(), Tty()):
        console = Console(file=buf, width=200, force_terminal=False, color_system=None)
        with create_pipe_input() as inp, create_app_session(input=inp, output=DummyOutput()):
            inp.send_text("/copy 1\r/quit\r")
            repl = Repl(engine, engine.default_key(), console=console, input=inp, output=DummyOutput())
            assert await repl.run() == 0
        out = buf.getvalue()
        assert "copied code block 1 of 2 (python)" in out and "12 characters, 1 line" in out
        assert paths.clipboard_file().read_text() == "print('one')"
        if isinstance(buf, Tty):
            assert osc52("print('one')") in out
            assert base64.b64decode(osc52("print('one')")[7:-1]).decode() == "print('one')"
        else:
            assert "\x1b]52" not in out and "not a terminal" in out
    assert os.stat(paths.clipboard_file()).st_mode & 0o777 == 0o600


async def test_a_fallback_file_that_cannot_be_written_is_said_not_raised(engine: Engine) -> None:
    target = paths.clipboard_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(target.parent / "elsewhere.txt")  # a link in the data dir is never followed
    notice = deliver(CopyText("x", "the last reply (e:3)"), osc52_sent=True)
    assert notice.startswith("copied the last reply (e:3): 1 character, 1 line → the terminal clipboard (OSC 52)")
    assert "is a symbolic link" in notice and not (target.parent / "elsewhere.txt").exists()
    notice = deliver(CopyText("x", "the last reply (e:3)"), osc52_sent=False)
    assert notice.startswith("could not copy the last reply (e:3): not a terminal, no clipboard tool")
