"""The app exits cleanly when its terminal goes away. Reported: ``make run`` in tmux, then
``tmux kill-session``: the app kept running at 100% CPU (its input read only end-of-file), holding the
data-dir lock. The real app runs here in a pseudo-terminal, as a terminal emulator runs it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LIMIT = 60.0
"""A generous bound for the app to start, and to exit once its terminal is gone (not a timing test)."""


def _lock_free(home: Path) -> bool:
    """Whether nobody holds the data dir's one-writer lock (``fcntl.flock``, as the app takes it)."""
    fd = os.open(home / "data" / "neotask.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing releases a lock taken here
    return True


def _drain(master: int, wait: float) -> None:
    """Read what the app drew (so it never blocks on a full terminal) for up to ``wait`` seconds."""
    with contextlib.suppress(OSError):
        while select.select([master], [], [], wait)[0]:
            if not os.read(master, 65536):
                return
            wait = 0


@contextlib.contextmanager
def _app_in_a_terminal(home: Path, sighup: signal.Handlers = signal.SIG_DFL,
                       ) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``neotask`` (the app) in a new session on a 100×30 pseudo-terminal, running once it holds the
    lock; yields the process and the terminal's master side. The process is killed after the block
    if it is still running. ``sighup``: how the app starts with SIGHUP, whatever the test runner was
    started with (a run under ``nohup`` ignores it, and the app, rightly, leaves it so)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "NEOTASK_PROVIDER": "scripted", "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "neotask_tui"], cwd=REPO, env=env, stdin=slave,
                            stdout=slave, stderr=slave, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, sighup))
    os.close(slave)
    try:
        deadline = time.monotonic() + LIMIT
        while not ((home / "data" / "neotask.lock").exists() and not _lock_free(home)):
            assert proc.poll() is None, f"the app exited at start ({proc.returncode})"
            assert time.monotonic() < deadline, "the app did not take the lock"
            _drain(master, 0.2)
        _drain(master, 0.5)  # the first paint
        yield proc, master
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        with contextlib.suppress(OSError):
            os.close(master)


def _exit_code(proc: subprocess.Popen[bytes], master: int | None) -> int | None:
    """The app's exit code once it ends within :data:`LIMIT` (reading its terminal meanwhile, when it
    is still open); ``None`` if it is still running."""
    deadline = time.monotonic() + LIMIT
    while proc.poll() is None and time.monotonic() < deadline:
        if master is None:
            time.sleep(0.2)
        else:
            _drain(master, 0.2)
    return proc.poll()


def test_the_app_exits_and_releases_the_lock_when_its_terminal_closes(neotask_home: Path) -> None:
    # The terminal closes (tmux kill-session, a closed SSH link) and no SIGHUP reaches the app (it
    # is not the terminal's controlling process here, as under nohup): it must not spin on the
    # end-of-file its input reads.
    with _app_in_a_terminal(neotask_home) as (proc, master):
        os.close(master)
        code = _exit_code(proc, None)
    assert code is not None, "the app kept running after its terminal closed"
    assert _lock_free(neotask_home)


def test_sighup_ends_the_app_cleanly(neotask_home: Path) -> None:
    # A hangup quits as Ctrl+Q does (the engine closed, the lock released, the terminal restored),
    # rather than the process dying wherever the signal finds it.
    with _app_in_a_terminal(neotask_home) as (proc, master):
        proc.send_signal(signal.SIGHUP)
        code = _exit_code(proc, master)
    assert code is not None, "the app kept running after SIGHUP"
    assert code >= 0, f"the app was killed by signal {-code} instead of exiting"
    assert _lock_free(neotask_home)


def test_sigterm_quits_as_ctrl_q_does(neotask_home: Path) -> None:
    # `kill PID` (or a system shutdown) ended the app wherever the signal found it: the terminal was
    # left in the alternate screen with mouse reporting on. It quits as Ctrl+Q does: the process
    # exits (not killed), the lock is released, the terminal restored.
    with _app_in_a_terminal(neotask_home) as (proc, master):
        proc.send_signal(signal.SIGTERM)
        drawn = bytearray()
        deadline = time.monotonic() + LIMIT
        while time.monotonic() < deadline:
            try:
                ready = select.select([master], [], [], 0.2)[0]
                chunk = os.read(master, 65536) if ready else b""
            except OSError:  # the app ended and its side of the terminal closed
                break
            drawn += chunk
            if not ready and proc.poll() is not None:
                break
        code = _exit_code(proc, None)
    assert code is not None, "the app kept running after SIGTERM"
    assert code >= 0, f"the app was killed by signal {-code} instead of exiting"
    assert b"\x1b[?1049l" in drawn, "the terminal was not restored (still in the alternate screen)"
    assert _lock_free(neotask_home)


def test_an_app_that_ignores_sighup_still_exits_when_its_terminal_closes(neotask_home: Path) -> None:
    # Started under nohup (SIGHUP ignored, inherited through exec), the signal is left ignored as
    # asked; a terminal that is gone still ends the app.
    with _app_in_a_terminal(neotask_home, sighup=signal.SIG_IGN) as (proc, master):
        proc.send_signal(signal.SIGHUP)
        _drain(master, 1.0)
        assert proc.poll() is None, "SIGHUP is ignored as the app was started"
        os.close(master)
        code = _exit_code(proc, None)
    assert code is not None, "the app kept running after its terminal closed"
    assert _lock_free(neotask_home)


def _ended(pid: int) -> bool:
    """Whether process ``pid`` (not a child of the test) has ended: gone, or a zombie nobody reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_app_ends_when_its_tmux_server_is_killed_mid_reply(neotask_home: Path) -> None:
    # The report, as it happened: the app under a shell in a tmux pane, a reply streaming, then the
    # server killed. SIGHUP reaches the app with its terminal already gone: quitting through Textual's
    # teardown waited forever on writes to the dead terminal (the lock released, the process left).
    neotask_home.mkdir(parents=True, exist_ok=True)
    script = neotask_home / "script.jsonl"
    script.write_text(json.dumps({"text": "slow " * 400, "delay": 0.5}) + "\n", encoding="utf-8")
    env = {"NEOTASK_HOME": str(neotask_home), "NEOTASK_PROVIDER_NAME": "scripted",
           "NEOTASK_PROVIDER_SCRIPT": str(script), "NEOTASK_MEMORY_ENABLED": "false",
           "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    cmd = (" ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
           + f" {shlex.quote(sys.executable)} -m neotask_tui; sleep 600")
    server = f"neotask-hangup-{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def tmux(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", server, *args], text=True, capture_output=True, check=False)

    lock = neotask_home / "data" / "neotask.lock"
    pid = 0
    try:
        assert tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "30", "-c", str(REPO), cmd).returncode == 0
        deadline = time.monotonic() + LIMIT
        while not (lock.exists() and not _lock_free(neotask_home) and lock.read_text().strip()):
            assert time.monotonic() < deadline, "the app did not take the lock"
            time.sleep(0.2)
        pid = int(lock.read_text().strip())
        while "agent:main:tui:default" not in tmux("capture-pane", "-p", "-t", "t").stdout:
            assert time.monotonic() < deadline, "the app did not draw"
            time.sleep(0.2)
        tmux("send-keys", "-t", "t", "go", "Enter")
        while "slow slow" not in tmux("capture-pane", "-p", "-t", "t").stdout:
            assert time.monotonic() < deadline, "the reply did not start"
            time.sleep(0.2)
        tmux("kill-server")
        deadline = time.monotonic() + LIMIT
        while not _ended(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _ended(pid), "the app kept running after its tmux server was killed"
        assert _lock_free(neotask_home)
    finally:
        tmux("kill-server")
        Path(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", server).unlink(missing_ok=True)
        if pid and not _ended(pid):
            os.kill(pid, signal.SIGKILL)
