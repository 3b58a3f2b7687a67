"""Red-team round 9b (attachments): files of the data dir refused by what is opened, several files
held to the usable window together, a draft's ``@path`` counted by ``/context``, and ``/edit``
keeping (or attaching) the files of the message it replaces.

Every test drives real components (the reader of attached files, the engine with the scripted
provider, the CLI) and failed on the code it was written against."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from neotask_tui.engine.context.attachments import read_attachment
from neotask_tui.engine.facade import Engine
from neotask_tui.errors import UserError
from tests.faults.helpers import KEY, cli


def _transcript_in_data_dir(data_dir: Path) -> Path:
    t = data_dir / "sessions" / "20260101-000000-deadbeef.jsonl"
    t.parent.mkdir(parents=True, exist_ok=True)
    t.write_text('{"type":"message","role":"user","content":"OTHER SESSION PRIVATE TEXT"}\n')
    return t


def test_attach_refuses_a_hard_link_to_a_transcript(tmp_path: Path, data_dir: Path) -> None:
    """README, Attach: "Files inside Neotask's data dir are refused, links into it too: they are
    other sessions' transcripts, consented memory and your input history". A hard link outside the
    data dir is another name of the very same transcript; attaching it quotes another session."""
    t = _transcript_in_data_dir(data_dir)
    outside = tmp_path / "innocent.txt"
    os.link(t, outside)
    with pytest.raises(UserError, match="data dir"):
        read_attachment(str(outside))


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="bind mounts need root")
def test_attach_refuses_the_data_dir_through_a_bind_mount(tmp_path: Path, data_dir: Path) -> None:
    """README, Attach: "Files inside Neotask's data dir are refused". The same folder mounted a
    second time (``mount --bind``) is still the data dir: its transcripts must not be attached."""
    _transcript_in_data_dir(data_dir)
    view = tmp_path / "view"
    view.mkdir()
    if subprocess.run(["mount", "--bind", str(data_dir), str(view)], capture_output=True).returncode != 0:
        pytest.skip("mount --bind not permitted here")
    try:
        with pytest.raises(UserError, match="data dir"):
            read_attachment(str(view / "sessions" / "20260101-000000-deadbeef.jsonl"))
    finally:
        subprocess.run(["umount", str(view)], capture_output=True)


async def test_attached_files_together_never_overflow_the_usable_window(engine: Engine, tmp_path: Path) -> None:
    """README, Attach: "In the context each file is held to `context.max_message_tokens` (4,000) like
    a message" and Context: "Recall always keeps half of the usable window (the window less the
    reply reserve)". Four files of 4,000 tokens each are sent whole into an 8k window: the call is
    assembled at well over 100% of the usable window, eating the reply reserve and recall's half,
    and nothing says the window is exceeded."""
    from neotask_tui.engine.events import ContextBuilt

    files = []
    for i in range(4):
        f = tmp_path / f"part{i}.txt"
        f.write_text("".join(f"line {i}-{n} alpha{n % 97} beta{n % 89} gamma{n % 83}\n" for n in range(1500)))
        files.append(read_attachment(str(f)))
    events = [e async for e in engine.send("compare these", KEY, files)]
    led = next(e.ledger for e in events if isinstance(e, ContextBuilt))
    assert led.total <= led.budget, (led.total, led.budget, led.sections)


async def test_context_preview_of_a_draft_counts_its_attached_file(engine: Engine, tmp_path: Path) -> None:
    """README, Context: "`/context` (F4, `neotask context`) shows exactly what the next call would
    send ... With a draft (`/context TEXT`, the prompt's text when you press F4, `neotask context
    --message TEXT`)" and Attach: "the gauge counts it as its own section ("files")". A draft that
    says `@notes.txt` sends that file with the next call, yet the preview counts no file at all."""
    notes = tmp_path / "notes.txt"
    notes.write_text("release checklist item\n" * 400)
    ctx = await engine.preview(KEY, f"please review @{notes}")
    assert ctx.ledger.sections["attachment"] > 0, ctx.ledger.sections


def test_edit_keeps_or_attaches_the_files_of_the_message_it_replaces(tmp_path: Path) -> None:
    """README, Attach: "`@path` in a message attaches that file to it" and Retry and edit: "`/edit`
    ... (`neotask send --edit TEXT`) replaces your last message and answers it". Editing a message
    that carried a file, with the same `@path` in the new text, answers with no file at all: the
    edited message neither keeps its attachment nor attaches the one it names, and nothing says so."""
    import json

    notes = tmp_path / "notes.txt"
    notes.write_text("the rollout is on Thursday\n" * 50)
    env = {"NEOTASK_PROVIDER": "scripted"}
    r = cli("send", f"what day? @{notes}", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["context"]["sections"]["attachment"] > 0
    r = cli("send", "--edit", f"which day exactly? @{notes}", "--json", env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["context"]["sections"]["attachment"] > 0, out["context"]["sections"]


# --- The fixes' other edges ---------------------------------------------------------------------

@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="bind mounts need root")
def test_attach_refuses_a_data_dir_folder_mounted_elsewhere(tmp_path: Path, data_dir: Path) -> None:
    """A second mount of ``sessions/`` alone (not the whole data dir) is still the data dir."""
    _transcript_in_data_dir(data_dir)
    view = tmp_path / "view"
    view.mkdir()
    if subprocess.run(["mount", "--bind", str(data_dir / "sessions"), str(view)],
                      capture_output=True).returncode != 0:
        pytest.skip("mount --bind not permitted here")
    try:
        with pytest.raises(UserError, match="data dir"):
            read_attachment(str(view / "20260101-000000-deadbeef.jsonl"))
    finally:
        subprocess.run(["umount", str(view)], capture_output=True)


def test_attach_of_an_ordinary_file_beside_the_data_dir_still_works(tmp_path: Path, data_dir: Path) -> None:
    """The inode checks refuse only the data dir's own files: a file of the same disk, and a hard
    link between two files outside it, are attached."""
    _transcript_in_data_dir(data_dir)
    f = tmp_path / "notes.txt"
    f.write_text("plain notes\n")
    os.link(f, tmp_path / "notes-again.txt")
    assert read_attachment(str(f)).text == "plain notes\n"
    assert read_attachment(str(tmp_path / "notes-again.txt")).text == "plain notes\n"


def test_stdin_is_not_called_a_broken_link() -> None:
    """``/dev/stdin`` (a pipe here) is refused as not a regular file, never as "a broken symbolic link"."""
    r = subprocess.run([sys.executable, "-c", "from neotask_tui.engine.context.attachments import read_attachment\n"
                        "try:\n    read_attachment('/dev/stdin')\nexcept Exception as e:\n    print(e)"],
                       input="x", capture_output=True, text=True, cwd=Path(__file__).parents[2], timeout=60)
    assert "not a regular file" in r.stdout, r.stdout + r.stderr
    assert "broken" not in r.stdout


async def test_files_trimmed_together_keep_recall_share_say_so_and_keep_their_line_count(
        engine: Engine, tmp_path: Path) -> None:
    """Files held to the room left: recall's share and the reply reserve stay free, a notice says
    so, and each fence gives the file's own line count and says ``trimmed``."""
    from neotask_tui.engine.context.budget import recall_reserve
    from neotask_tui.engine.events import ContextBuilt, Notice

    files = []
    for i in range(3):
        f = tmp_path / f"part{i}.txt"
        f.write_text("".join(f"line {i}-{n} alpha{n % 97} beta{n % 89}\n" for n in range(1500)))
        files.append(read_attachment(str(f)))
    events = [e async for e in engine.send("compare these", KEY, files)]
    led = next(e.ledger for e in events if isinstance(e, ContextBuilt))
    reserve = recall_reserve(engine.settings, led.window)
    assert led.total - led.sections["recall"] + reserve <= led.budget, (led.sections, reserve, led.budget)
    assert any(isinstance(e, Notice) and "attached files together" in e.text for e in events)
    ctx = await engine.build(KEY, None, new_event_id=engine.last_user_message(KEY).id)  # type: ignore[union-attr]
    sent = ctx.messages[[m.role for m in ctx.messages].index("user")].content
    assert sent.count('lines="1500"') == 3, sent[:400]
    assert sent.count("trimmed=") == 3


async def test_edit_without_the_path_keeps_the_file_and_says_so(engine: Engine, tmp_path: Path) -> None:
    """``/edit`` with new text that names no file still carries the replaced message's file, and a
    notice names it."""
    from neotask_tui.engine.events import ContextBuilt, Notice

    notes = tmp_path / "notes.txt"
    notes.write_text("the rollout is on Thursday\n" * 20)
    [e async for e in engine.send("what day?", KEY, [read_attachment(str(notes))])]
    events = [e async for e in engine.edit_last("which day exactly?", KEY)]
    led = next(e.ledger for e in events if isinstance(e, ContextBuilt))
    assert led.sections["attachment"] > 0, led.sections
    assert any(isinstance(e, Notice) and "keeps the file" in e.text and "notes.txt" in e.text for e in events)
