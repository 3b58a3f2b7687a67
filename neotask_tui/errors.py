"""User-facing error types shared by the engine, CLI, REPL and TUI."""

from __future__ import annotations


class NeotaskError(Exception):
    """Base class for errors with a clear one-line message for the user."""


class UserError(NeotaskError):
    """Bad input from the user (bad key, bad arguments, unknown session). CLI exit code 2."""


class LockedError(NeotaskError):
    """Another process holds the data-dir lock."""


class StorageError(NeotaskError):
    """A write failed (disk full, I/O error); nothing already on disk was damaged."""
