"""Log records reach the terminal inert.

A log message can quote a config value, a file name, a server's error or a reply (a ``db_uri`` with
an OSC sequence, a memory file named with ``ESC]0;``): the front ends (CLI, REPL, app) call
:func:`install_inert_logging` once at start-up, which makes every handler of the root logger — and
Python's last-resort handler, used when none is configured — format records through
:class:`InertFormatter`, so whatever a record carries is shown with its controls visible and inert
(see :func:`~neotask_tui.text.terminal.inert`).
"""

from __future__ import annotations

import logging
import sys

from neotask_tui.text.terminal import inert


class InertFormatter(logging.Formatter):
    """A formatter whose output (message, arguments, exception text) is inert."""

    def format(self, record: logging.LogRecord) -> str:
        return inert(super().format(record))


class _Stderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time, as ``logging.lastResort`` does."""

    def __init__(self) -> None:
        logging.Handler.__init__(self, logging.WARNING)

    @property
    def stream(self) -> object:
        return sys.stderr


def _inert_handler(handler: logging.Handler) -> None:
    fmt = handler.formatter
    if isinstance(fmt, InertFormatter):
        return
    if fmt is None:
        handler.setFormatter(InertFormatter())
    else:
        handler.setFormatter(InertFormatter(fmt._fmt, fmt.datefmt, validate=False))
        handler.formatter._style = fmt._style  # type: ignore[union-attr]  # keep {}/$ styles as they were


def install_inert_logging() -> None:
    """Make every log record printed by this process inert (idempotent).

    Without a configured handler Python prints warnings and errors to stderr through
    ``logging.lastResort``; that handler is replaced by an equivalent one (stderr, WARNING and up,
    message only) whose records are inert. Handlers already on the root logger get the formatter.
    """
    root = logging.getLogger()
    for h in root.handlers:
        _inert_handler(h)
    last = logging.lastResort
    if last is None or not isinstance(last.formatter, InertFormatter):
        handler = _Stderr()
        handler.setFormatter(InertFormatter())
        logging.lastResort = handler
