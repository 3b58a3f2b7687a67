"""User-facing error types shared by the engine, CLI, REPL and TUI."""

from __future__ import annotations


class NeotaskError(Exception):
    """Base class for errors with a clear one-line message for the user."""


class UserError(NeotaskError):
    """Bad input from the user (bad key, bad arguments, unknown session). CLI exit code 2."""


class DataDirError(UserError):
    """The data dir cannot be written (a read-only file system, no permission): writing commands stop
    with exit 2 naming ``NEOTASK_HOME``; read-only commands read it as they would beside a lock holder."""


class LockedError(NeotaskError):
    """Another process holds the data-dir lock."""


class StorageError(NeotaskError):
    """A write failed (disk full, I/O error); nothing already on disk was damaged."""


def io_errno(e: BaseException) -> int | None:
    """The errno behind a failed write: an :class:`OSError`'s, or the ``(os error 28)`` that ends the
    text of LanceDB's ``RuntimeError`` (its Rust core); ``None`` when ``e`` is neither."""
    import re

    if isinstance(e, OSError):
        return e.errno
    m = re.search(r"\(os error (\d+)\)", str(e))
    return int(m.group(1)) if m else None


def io_failure(e: BaseException) -> str | None:
    """The OS error behind a failed write (:func:`io_errno`), as ``ENOSPC (No space left on device)``;
    ``None`` when ``e`` is not one."""
    import errno
    import os

    code = io_errno(e)
    if code is None:
        return None
    return f"{errno.errorcode.get(code, 'error')} ({os.strerror(code)})"
