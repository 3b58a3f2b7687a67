"""NEWCOMER WALK-THROUGH — the real app in a real terminal (tmux), driven by keys alone.

Marked ``tmux`` and skipped (with the reason) when tmux is missing. Each test starts
``python -m neotask_tui`` in its own tmux session on a server of its own (``-L``, a unique name; only
that server is ever killed)
with the scripted provider, memory off and an isolated ``NEOTASK_HOME``, sends keys with
``tmux send-keys`` and reads what a user sees with ``tmux capture-pane -p``. Every wait polls the
captured screen with a generous limit; no sleep is an assertion.

What it asserts is what stays stable while the app evolves: the user's own text, the scripted
replies, command names, panel titles and the footer's keys; not the wording of /help or the gauge.
Pilot tests miss a binding that shadows another (F6 in the prompt did); these do not.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.tmux,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 240.0
REPLY_LINES = 30


def _reply(n: int) -> str:
    return "\n".join(f"r{n} line {i:02d}" for i in range(1, REPLY_LINES + 1))


class Terminal:
    """One tmux session running the app."""

    def __init__(self, home: Path, size: tuple[int, int]) -> None:
        self.home = home
        self.size = size
        self.name = f"neotask-walk-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.started = False

    def _tmux(self, args: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        """Run tmux on this terminal's own server (``-L``): another test's last session ending shuts
        its server down, and a session started on a shared server in that moment failed (ci, once)."""
        return subprocess.run(["tmux", "-L", self.name, *args], text=True, **kw)

    def start(self) -> None:
        """Start (or restart, after the app exited) the app in the session (without the COLUMNS and
        LINES a test runner may export: they would override the pane's size)."""
        env = {"NEOTASK_HOME": str(self.home), "NEOTASK_PROVIDER_NAME": "scripted",
               "NEOTASK_PROVIDER_SCRIPT": str(self.home / "script.jsonl"), "NEOTASK_MEMORY_ENABLED": "false",
               "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}
        cmd = (" ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
               + f" {shlex.quote(sys.executable)} -m neotask_tui; echo NEOTASK-EXITED $?; sleep 600")
        if not self.started:
            # The session starts with a placeholder: a detached session's pane can begin at tmux's
            # default 80x24 and be resized a moment later, and an app that started in that moment
            # drew at 80 columns. The app itself is (re)spawned into the settled pane below.
            w, h = self.size
            self._tmux(["new-session", "-d", "-s", self.name, "-c", str(ROOT), "-x", str(w), "-y", str(h),
                        "sleep 600"], check=True)
            self.started = True
            self.wait_size()
        self._tmux(["respawn-pane", "-k", "-c", str(ROOT), "-t", self.name, f"env -u COLUMNS -u LINES {cmd}"],
                   check=True)

    def wait_size(self) -> None:
        """Wait until the pane has the size asked for."""
        want = f"{self.size[0]}x{self.size[1]}"
        deadline = time.monotonic() + LIMIT
        got = ""
        while time.monotonic() < deadline:
            got = self._tmux(["display", "-p", "-t", self.name, "#{pane_width}x#{pane_height}"],
                             check=True, capture_output=True).stdout.strip()
            if got == want:
                return
            time.sleep(0.1)
        raise AssertionError(f"the tmux pane is {got}, not {want}")

    def close(self) -> None:
        if self.started:
            self._tmux(["kill-server"], check=False, capture_output=True)
            sock = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / self.name
            sock.unlink(missing_ok=True)  # the server leaves its socket file behind

    def screen(self) -> str:
        """What the pane shows now."""
        out = self._tmux(["capture-pane", "-p", "-t", self.name], check=True, capture_output=True)
        return out.stdout

    def footer(self) -> str:
        lines = [line for line in self.screen().splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def keys(self, *keys: str) -> None:
        """Press keys (tmux names: Enter, F6, C-o, PPage…)."""
        self._tmux(["send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        """Type text literally."""
        self._tmux(["send-keys", "-t", self.name, "-l", text], check=True)

    def wait(self, cond: Callable[[str], bool], what: str, limit: float = LIMIT) -> str:
        """Poll the screen until ``cond(screen)``; the limit only turns a hang into a failure."""
        deadline = time.monotonic() + limit
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if cond(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; the screen:\n{screen}")

    def wait_for(self, text: str, limit: float = LIMIT) -> str:
        return self.wait(lambda s: text in s, repr(text), limit)

    def wait_footer(self, cond: Callable[[str], bool], what: str) -> str:
        self.wait(lambda _s: cond(self.footer()), what)
        return self.footer()


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Callable[..., Terminal]]:
    made: list[Terminal] = []

    def make(size: tuple[int, int], replies: list[dict[str, object]] | None = None) -> Terminal:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        script = replies if replies is not None else [{"text": _reply(n)} for n in (1, 2, 3)]
        (home / "script.jsonl").write_text("".join(json.dumps(r) + "\n" for r in script), encoding="utf-8")
        t = Terminal(home, size)
        made.append(t)
        t.start()
        return t

    yield make
    for t in made:
        t.close()


def _main_ready(t: Terminal) -> None:
    t.wait(lambda s: "agent:main:tui:default" in s and "f6 Focus" in s, "the main screen")


def _send(t: Terminal, text: str, expect: str) -> None:
    t.type(text)
    t.keys("Enter")
    t.wait_for(expect)


def test_newcomer_walk_by_keys_alone(terminal: Callable[..., Terminal]) -> None:
    t = terminal((120, 36))
    _main_ready(t)

    # Three turns.
    _send(t, "first question about the walk", f"r1 line {REPLY_LINES}")
    _send(t, "second question about the walk", f"r2 line {REPLY_LINES}")
    _send(t, "third question about the walk", f"r3 line {REPLY_LINES}")
    assert "third question about the walk" in t.screen() or f"r3 line {REPLY_LINES}" in t.screen()

    # F6 through every panel: the footer names the focused panel's keys.
    assert "session state" in t.screen() and "recalled memory" in t.screen()
    t.keys("F6")
    t.wait_footer(lambda f: f.startswith("e Edit"), "the state panel's keys")
    t.keys("F6")
    t.wait_footer(lambda f: f.startswith("o Open"), "the recall sidebar's keys")
    t.keys("F6")
    t.wait_footer(lambda f: not f.startswith(("e Edit", "o Open")), "the transcript")

    # PageUp in the transcript shows earlier lines; the newest scrolls out of view.
    t.keys("PPage")
    t.wait(lambda s: f"r3 line {REPLY_LINES}" not in s, "the transcript scrolled up")
    t.keys("End")
    t.wait_for(f"r3 line {REPLY_LINES}")
    t.keys("F6")  # back to the prompt
    t.wait_footer(lambda f: f.startswith("f6 Focus"), "the prompt")

    # /help opens every command, grouped, in one dialog that fits the screen; k shows the keys; Esc closes.
    t.type("/help")
    t.keys("Enter")
    t.wait(lambda s: all(c in s for c in ("/new", "/reset", "/compact", "/undo-compact", "/sessions", "/context",
                                          "/remember")), "the commands in /help")
    t.keys("NPage")  # the rest by keyboard (at 140x40 it all fits)
    t.wait(lambda s: "/quit" in s, "the end of /help")
    t.keys("k")
    t.wait(lambda s: "F6" in s or "f6" in s, "the key list")
    t.keys("Escape")
    _main_ready(t)

    # F4: what the next call sends (the user's own messages among it); Esc goes back.
    t.keys("F4")
    t.wait(lambda s: "first question about the walk" in s and "f6 Focus" not in s, "the context screen")
    t.keys("PPage", "NPage")  # scrolls by keyboard without leaving
    t.keys("Escape")
    _main_ready(t)

    # F5: review the compaction, accept it.
    t.keys("F5")
    t.wait_for("Accept (a)")
    t.keys("a")
    t.wait(lambda s: "compacted" in s and "Accept (a)" not in s, "the compaction marker")

    # /undo-compact brings the raw turns back.
    t.type("/undo-compact")
    t.keys("Enter")
    t.wait(lambda s: "compacted" not in s and f"r3 line {REPLY_LINES}" in s, "the turns back")

    # /new: a fresh session; then one turn in it.
    t.type("/new")
    t.keys("Enter")
    t.wait(lambda s: "new session" in s and f"r3 line {REPLY_LINES}" not in s, "the fresh session")
    _send(t, "hello from the new session", "(scripted) hello from the new session")

    # Ctrl+O: the sessions browser lists the current and the archived sessions; Enter resumes.
    t.keys("C-o")
    t.wait(lambda s: "archived" in s and "current" in s, "the sessions browser")
    t.keys("Enter")
    screen = t.wait(lambda s: "f6 Focus" in s or "read-only" in s, "the resumed session (or its transcript)")
    if "read-only" in screen:
        t.keys("Escape")
        t.wait(lambda s: "archived" in s and "current" in s, "back in the browser")
        t.keys("Escape")
    _main_ready(t)

    # Quit and restart: the conversation is still there.
    t.keys("C-q")
    t.wait_for("NEOTASK-EXITED 0")
    t.start()
    _main_ready(t)
    t.wait_for("hello from the new session")


def test_small_terminal_walk(terminal: Callable[..., Terminal]) -> None:
    """80×24: the transcript has the width; F6 opens each panel over it; Alt+Enter and Ctrl+J
    insert line breaks in order with the text typed around them."""
    t = terminal((80, 24))
    _main_ready(t)
    assert "session state" not in t.screen()
    footer = t.footer()
    for key in ("f1", "f6", "^q", "^p palette"):
        assert key in footer, footer
    t.type("one")
    t.keys("M-Enter")
    t.type("two")
    t.keys("C-j")
    t.type("three")
    t.wait(lambda s: "▊ one" in s and "▊ two" in s and "▊ three" in s, "three lines in the prompt")
    t.keys("Enter")
    t.wait_for(f"r1 line {REPLY_LINES}")  # the first scripted reply
    assert "▊ one" not in t.screen()  # sent as one message of three lines
    t.keys("F6")
    t.wait(lambda s: "session state" in s and _footer_starts(t, "e Edit"), "the state panel over the transcript")
    t.keys("F6")
    t.wait(lambda s: "recalled memory" in s and "session state" not in s, "the recall sidebar")
    t.keys("Escape")
    t.wait(lambda s: "recalled memory" not in s, "the sidebar closed")


def _footer_starts(t: Terminal, prefix: str) -> bool:
    return t.footer().startswith(prefix)


def test_what_is_typed_during_a_reply_waits_its_turn(terminal: Callable[..., Terminal]) -> None:
    """80×24: ``/new`` and a message typed while a reply streams wait (the prompt's border says so);
    Esc stops the reply, then ``/new`` runs and the message lands in the new session, below its
    marker."""
    t = terminal((80, 24), [{"text": "slow " * 200, "delay": 0.5}, {"text": "answered in the new session"}])
    _main_ready(t)
    _send(t, "go", "slow slow")
    t.type("/new")
    t.keys("Enter")
    t.type("hello after new")
    t.keys("Enter")
    waiting = t.wait_for("2 queued, run in order: /new · hello after new")
    assert not [line for line in waiting.splitlines() if "█ hello after new" in line]  # not in the transcript yet
    t.keys("Escape")
    screen = t.wait_for("answered in the new session")
    lines = screen.splitlines()
    marker = next(i for i, line in enumerate(lines) if "new session" in line and "(/new)" in line)
    asked = next(i for i, line in enumerate(lines) if "█ hello after new" in line)
    answered = next(i for i, line in enumerate(lines) if "answered in the new session" in line)
    assert marker < asked < answered
    assert "queued" not in screen
