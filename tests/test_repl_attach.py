"""The plain REPL attaches files too: ``/file PATH`` for the next message, ``@path`` in a message, and
path completion after ``@``."""

from __future__ import annotations

from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from neotask_tui.engine.context.attachments import attachments_of
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.repl import SlashCompleter
from tests.doubles import drive_repl, plain_settings


async def _drive(engine: Engine, keys: str) -> str:
    return await drive_repl(engine, keys, 200)


async def test_repl_file_and_at_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("alpha file\n")
    (tmp_path / "b.py").write_text("print('b')\n")
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01\x02binary")
    e = Engine(plain_settings(), provider=ScriptedProvider())
    try:
        out = await _drive(e, "/file a.txt\rcompare with @b.py please\rlook at @bin.dat\r/file\r/quit\r")
        assert "attached to your next message:" in out and "a.txt (1 line, 11 characters)" in out
        assert "not sent: " in out and "bin.dat is binary" in out
        assert "no files attached" in out  # used by the message that followed /file
        users = [x for x in e.events(e.default_key()) if x.type == "message" and x.role == "user"]
        assert [u.content for u in users] == ["compare with @b.py please"]
        assert [Path(a.path).name for a in attachments_of(users[0].data)] == ["a.txt", "b.py"]
    finally:
        await e.aclose()


def test_repl_completes_paths_after_at_and_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("n")
    (tmp_path / "nested").mkdir()
    comp = SlashCompleter()
    got = [c.text for c in comp.get_completions(Document("read @no"), CompleteEvent())]
    assert got == ["notes.md"]
    got = [c.text for c in comp.get_completions(Document("/file n"), CompleteEvent())]
    assert got == ["nested/", "notes.md"]
    assert [c.text for c in comp.get_completions(Document("/fi"), CompleteEvent())] == ["/file"]
