"""Atomic file writes and durable appends.

Every file Neotask rewrites goes through :func:`atomic_write_text` / :func:`atomic_write_bytes`:
write a temp file in the same directory, fsync it, ``os.replace`` it over the target, fsync the
directory. A crash at any point leaves either the old file or the new one, never a half-written one.
:func:`atomic_create_bytes` writes a file that must not replace anything (an export).

All disk writes go through :data:`io_hooks`, the single storage boundary where the fault suite
injects ``ENOSPC``/``EIO`` errors.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from neotask_tui.paths import FILE_MODE, ensure_dir


class _IOHooks:
    """Indirection over the raw write calls so tests can inject OS errors at the boundary."""

    def __init__(self) -> None:
        self.before_write: Callable[[Path], None] | None = None

    def check(self, path: Path) -> None:
        if self.before_write is not None:
            self.before_write(path)


io_hooks = _IOHooks()


def fsync_dir(path: Path) -> None:
    """fsync a directory so a rename/creation inside it is durable."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _temp_copy(path: Path, data: bytes, mode: int) -> str:
    """``data`` in a new fsynced temp file beside ``path`` (the storage hook checked first); removed
    again if writing it fails. Returns the temp file's path."""
    ensure_dir(path.parent)
    io_hooks.check(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def atomic_write_bytes(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Atomically replace ``path`` with ``data`` (temp + fsync + os.replace + dir fsync)."""
    tmp = _temp_copy(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_create_bytes(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Atomically create ``path`` with ``data``, never replacing anything already there.

    The temp file is written and fsynced, then hard-linked to ``path`` (``os.link`` fails if
    ``path`` exists, a dangling link included, so there is no check-then-replace race) and unlinked.
    On a file system without hard links the file is created with ``O_EXCL`` instead.

    Raises:
        FileExistsError: something is at ``path`` (nothing was written).
    """
    tmp = _temp_copy(path, data, mode)
    try:
        try:
            os.link(tmp, path, follow_symlinks=False)
        except FileExistsError:
            raise
        except OSError:  # no hard links here (EPERM/ENOTSUP): exclusive create, same refusal
            _create_exclusive(path, data, mode)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    fsync_dir(path.parent)


def _create_exclusive(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to a new ``path`` (``O_EXCL``: fails if anything is there), fsynced; a failed
    write removes the partial file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


def atomic_write_text(path: Path, text: str, mode: int = FILE_MODE) -> None:
    """Atomically replace ``path`` with UTF-8 ``text``."""
    atomic_write_bytes(path, text.encode("utf-8"), mode)


def append_durable(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` and fsync before returning (creates it 0600 if missing; a
    ``path`` that is a symbolic link is refused with ``OSError``, never followed).

    If the write fails part-way, the file is truncated back to its previous length so no torn
    line is left behind by *this* process (a crash mid-write is still handled at load time).
    """
    ensure_dir(path.parent)
    io_hooks.check(path)
    created = not path.exists()
    # never through a link: a transcript (or log) that is a symbolic link is refused (ELOOP), not followed
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)
    if created:
        fsync_dir(path.parent)
