"""``neotask send TEXT --file PATH`` and ``@path`` in the text attach files as ``/file`` does in the app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KEY = "agent:main:tui:default"


def _neotask(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NEOTASK_PROVIDER="scripted")
    return subprocess.run([sys.executable, "-m", "neotask_tui", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_cli_send_attaches_files_and_refuses_binary(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("the rollout is on Thursday\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01binary")
    r = _neotask("send", f"read @{tmp_path / 'blob.bin'}", "--json")
    assert r.returncode == 2 and "binary" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = _neotask("send", "what day?", "--file", str(notes), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["attachments"] == [f"{notes} (1 line, 27 characters)"]
    r = _neotask("transcript", KEY, "--json")
    user = next(e for e in json.loads(r.stdout) if e.get("role") == "user")
    assert user["content"] == "what day?" and user["attachments"][0]["text"] == notes.read_text()


def test_an_attached_files_name_is_inert_in_a_markdown_export(tmp_path: Path) -> None:
    """Red team 21 (low): a Markdown export wrote an attached file's name with its ESC and BEL bytes,
    so ``cat`` of the export set the terminal's title; the app and the CLI show it inert."""
    name = tmp_path / "cfg-\x1b]0;PWNED\x07.env"
    name.write_text("LOG_LEVEL=debug\n")
    r = _neotask("send", "what level?", "--file", str(name))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "export.md"
    r = _neotask("transcript", KEY, "--format", "md", "--output", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    attached = next(line for line in text.splitlines() if line.startswith("attached:"))
    assert "\x1b" not in attached and "\x07" not in attached
    assert "PWNED" in attached and "LOG_LEVEL=debug" in text


def test_an_attached_files_text_and_a_name_with_a_line_break_are_inert_in_a_markdown_export(tmp_path: Path) -> None:
    """Red team 22: the export wrote an attachment's text with its controls live (OSC 52 set the
    clipboard, ESC[2J cleared the screen, a hidden OSC 8 link) and a name's line break as a real one,
    which forged lines in `send`'s notice and in the export."""
    evil = tmp_path / "nl\nname.txt"
    evil.write_text("line one\n\x1b]52;c;SGVsbG8=\x07clipboard\n\x1b[2Jcleared\n"
                    "ok \x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\ here \u202eabc\n")
    r = _neotask("send", "see attached", "--file", str(evil))
    assert r.returncode == 0, r.stderr
    assert not any(line.startswith("name.txt") for line in (r.stdout + r.stderr).splitlines())
    out = tmp_path / "export.md"
    r = _neotask("transcript", KEY, "--format", "md", "--output", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "clipboard" in text and "cleared" in text and "line one" in text  # the text itself is kept
    attached = next(line for line in text.splitlines() if line.startswith("attached:"))
    assert "name.txt" in attached  # the name on its one line
