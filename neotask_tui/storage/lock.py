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
import time
from pathlib import Path

from neotask_tui import paths
from neotask_tui.errors import DataDirError, LockedError, StorageError

_PID_WIDTH = 24
_HOLDER_WAIT_S = 0.5
"""How long a refused process waits for the holder to write its pid (it has the lock already: a
moment at most), rereading every :data:`_HOLDER_POLL_S`."""
_HOLDER_POLL_S = 0.02


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def _holder(fd: int) -> str:
    """The pid the lock file names, once it is a live process (the holder writes it right after it
    takes the lock; until then the file is empty or names the holder before it); "" if none shows."""
    deadline = time.monotonic() + _HOLDER_WAIT_S
    while True:
        with contextlib.suppress(OSError, ValueError):
            text = os.pread(fd, 64, 0).decode().strip()
            if text.isdigit() and int(text) != os.getpid() and _alive(int(text)):
                return text
        if time.monotonic() >= deadline:
            return ""
        time.sleep(_HOLDER_POLL_S)


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
        """Take the lock or raise :class:`LockedError` naming the holder.

        Raises:
            LockedError: another process holds it.
            DataDirError: the data dir cannot be written (read-only, no permission): a reader goes
                on without the lock, as beside a holder.
        """
        if self._fd is not None:
            return
        paths.ensure_data_dir(self.path.parent)
        fd = self._open()
        if not os.access(self.path.parent, os.W_OK | os.X_OK):  # a lock file left in a folder made read-only
            os.close(fd)
            raise DataDirError(paths.home_error(PermissionError(errno.EACCES, os.strerror(errno.EACCES))))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            who = f" (pid {holder})" if holder else ""
            raise LockedError(
                f"another neotask process{who} is using {paths.data_dir()}; "
                "close it first (read-only commands like `sessions list` still work)"
            ) from None
        # One write of a fixed width, no truncation first: a process refused meanwhile reads the whole
        # pid or the one before it (which :func:`_holder` sees is gone), never an empty file.
        os.pwrite(fd, f"{os.getpid():<{_PID_WIDTH - 1}}\n".encode(), 0)
        os.ftruncate(fd, _PID_WIDTH)
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
            if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):  # the data dir cannot be written
                raise DataDirError(paths.home_error(e)) from None
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
