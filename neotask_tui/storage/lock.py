"""The data-dir lock: one writing process at a time.

``fcntl.flock`` on ``<data>/neotask.lock`` (released by the kernel when the process dies, so a
SIGKILL never leaves a stale lock). The holder's pid is written into the file so a second process
can say who holds it. Every command that writes under the data dir takes it; read-only commands
don't (``memory search`` takes it only when it is free, to bring the index up to date first, as
``git status`` does with its index lock). The file is opened with
``O_NOFOLLOW`` and must be a regular file: a planted symlink never gets its target truncated.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path

from neotask_tui import paths
from neotask_tui.errors import LockedError, StorageError


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
        paths.ensure_data_dir(self.path.parent)
        fd = self._open()
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
        # A data dir made by an older version, by hand or under a loose umask: 0700/0600 from now on.
        paths.make_data_private()

    def _open(self) -> int:
        """Open the lock file without following a link; refuse anything but a regular file."""
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, paths.FILE_MODE)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO) or os.path.islink(self.path):
                raise StorageError(self._not_regular()) from None
            raise StorageError(f"cannot open the lock file {self.path}: {e.strerror or e}") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:  # a hard link would get its other name truncated
            os.close(fd)
            raise StorageError(self._not_regular())
        return fd

    def _not_regular(self) -> str:
        return (f"the lock file {self.path} is a symlink, a hard link or not a regular file; "
                "remove it (no neotask process is using it) and try again")

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
