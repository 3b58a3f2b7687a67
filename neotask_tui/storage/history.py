"""The input history file (``<data>/history``) shared by the app and the plain REPL.

prompt-toolkit's ``FileHistory`` format: each entry is a ``# <time>`` line followed by its lines,
each prefixed with ``+``. Opened without following a symbolic link: a ``history`` that is a link
is neither read nor written (the input history is then not saved, and :func:`history_problem`
says so in one line).
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from neotask_tui import paths

HISTORY_MAX = 1000
"""Entries the app keeps for ↑ (the newest)."""


def history_problem(path: Path | None = None) -> str | None:
    """Why the input history is not read or saved (``history`` is a symbolic link), else ``None``."""
    link = paths.linked_part(path or paths.history_file())
    if link is None:
        return None
    return (f"{link} is a symbolic link; Neotask does not follow links inside its data dir, so your input "
            "history is not saved (replace the link with a file)")


def read_history(path: Path) -> list[str]:
    """Entries of a history file, oldest first, at most :data:`HISTORY_MAX` (missing, a link or
    unreadable = empty)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out: list[str] = []
    cur: list[str] = []
    for line in lines:
        if line.startswith("+"):
            cur.append(line[1:])
        elif cur:
            out.append("\n".join(cur))
            cur = []
    if cur:
        out.append("\n".join(cur))
    return out[-HISTORY_MAX:]


def append_history(path: Path, text: str) -> None:
    """Append one entry (file created 0600, its folder 0700), never through a symbolic link.

    Raises:
        OSError: the file is a link (``ELOOP``) or cannot be written; the caller decides (the
            history is a convenience, not a record: the transcript has the message).
    """
    paths.ensure_dir(path.parent)
    body = f"\n# {datetime.now()}\n" + "".join(f"+{line}\n" for line in text.split("\n"))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, paths.FILE_MODE)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(body)
