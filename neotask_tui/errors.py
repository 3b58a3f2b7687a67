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


def io_failure(e: BaseException) -> str | None:
    """The OS error behind a failed write, as ``ENOSPC (No space left on device)``; ``None`` when
    ``e`` is not one.

    An :class:`OSError` names its errno; LanceDB's Rust core raises a ``RuntimeError`` whose text ends
    in ``(os error 28)``, which is read the same way.
    """
    import errno
    import os
    import re

    code: int | None = e.errno if isinstance(e, OSError) else None
    if code is None:
        m = re.search(r"\(os error (\d+)\)", str(e))
        if m is None:
            return None
        code = int(m.group(1))
    return f"{errno.errorcode.get(code, 'error')} ({os.strerror(code)})"
