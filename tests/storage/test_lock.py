"""Two processes contending for the data-dir lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from neotask_tui.errors import LockedError
from neotask_tui.storage.lock import DataLock

HOLDER = textwrap.dedent("""
    import sys, time
    from neotask_tui.storage.lock import DataLock
    lock = DataLock(); lock.acquire()
    print("held", flush=True)
    sys.stdin.readline()
""")


def test_second_process_gets_clear_message_and_lock_frees_on_exit() -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(LockedError, match=f"pid {proc.pid}"):
            DataLock().acquire()
        # a read-only CLI command still works while the lock is held
        out = subprocess.run([sys.executable, "-m", "neotask_tui", "sessions", "list", "--json"],
                             capture_output=True, text=True, env=dict(os.environ))
        assert out.returncode == 0, out.stderr
        # a writing command gets exit code 3 and a one-line message
        out = subprocess.run([sys.executable, "-m", "neotask_tui", "sessions", "new"],
                             capture_output=True, text=True, env=dict(os.environ))
        assert out.returncode == 3 and "another neotask process" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    finally:
        proc.kill()
        proc.wait()
    # SIGKILL released it
    lock = DataLock()
    lock.acquire()
    assert lock.held
    lock.release()


def test_same_process_reacquire_is_idempotent() -> None:
    a = DataLock()
    a.acquire()
    a.acquire()
    with pytest.raises(LockedError):
        DataLock().acquire()
    a.release()
    a.release()


# A holder that has taken the lock but not written its pid yet (the moment between the two): the file
# still names the holder before it, a process that is gone.
HOLDER_SILENT = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("held", flush=True)
    sys.stdin.readline()
""")


def test_a_refusal_never_names_a_holder_that_is_gone() -> None:
    # Red team 27 F9: a process refused right after another took the lock read the file between the
    # holder's truncation and its write (no pid), or named the previous holder.
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)
    lock = DataLock()
    lock.acquire()
    lock.release()
    lock.path.write_text(f"{dead}\n")
    proc = subprocess.Popen([sys.executable, "-c", HOLDER_SILENT, str(lock.path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(LockedError) as info:
            DataLock().acquire()
        assert f"pid {dead}" not in str(info.value) and "another neotask process is using" in str(info.value)
    finally:
        proc.kill()
        proc.wait()


def test_the_holder_writes_its_pid_whole_in_one_write() -> None:
    lock = DataLock()
    lock.path.parent.mkdir(parents=True, exist_ok=True)
    lock.path.write_text("1234567890123456789012345678901234567890\n")  # longer than any pid record
    lock.acquire()
    try:
        assert lock.path.read_text().split() == [str(os.getpid())]
    finally:
        lock.release()
