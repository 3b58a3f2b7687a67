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
