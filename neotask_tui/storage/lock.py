"""The data-dir lock: one writing process at a time.

``fcntl.flock`` on ``<data>/neotask.lock`` (released by the kernel when the process dies, so a
SIGKILL never leaves a stale lock). The holder's pid is written into the file so a second process
can say who holds it. Read-only commands don't take the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from neotask_tui import paths
from neotask_tui.errors import LockedError


class DataLock:
    """An exclusive, non-blocking lock on the data directory."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.lock_file()
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise :class:`LockedError` naming the holder."""
        if self._fd is not None:
            return
        paths.ensure_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, paths.FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = ""
            with contextlib.suppress(OSError, ValueError):
                holder = os.pread(fd, 64, 0).decode().strip()
            os.close(fd)
            who = f" (pid {holder})" if holder else ""
            raise LockedError(
                f"another neotask process{who} is using {paths.data_dir()}; "
                "close it first (read-only commands like `sessions list` still work)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> DataLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
