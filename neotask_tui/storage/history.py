"""The input history file (``<data>/history``) shared by the app and the plain REPL.

prompt-toolkit's ``FileHistory`` format: each entry is a ``# <time>`` line followed by its lines,
each prefixed with ``+``. Opened without following a symbolic link: a ``history`` that is a link
is neither read nor written (the input history is then not saved, and :func:`history_problem`
says so in one line). A ``history`` with a second name (a hard link, which may be anywhere on the
disk) is treated the same way: not written (what you type would reach that other name) and its
mode not changed; it is still read (its lines are the data dir's own file).
"""

from __future__ import annotations

import errno
import os
from datetime import datetime
from pathlib import Path

from neotask_tui import paths

HISTORY_MAX = 1000
"""Entries the app keeps for ↑ (the newest)."""


def history_problem(path: Path | None = None) -> str | None:
    """Why the input history is not saved (``history`` is a symbolic link, or a file with a second
    name: a hard link), else ``None``."""
    path = path or paths.history_file()
    link = paths.linked_part(path)
    if link is None:
        names = paths.hard_links(path)
        if not names:
            return None
        return (f"{path} has {names} names (a hard link): what you type would reach its other name, "
                "outside Neotask, so your input history is not saved (give it one name: copy it, then move "
                "the copy over it, with Neotask closed)")
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
        OSError: the file is a link (``ELOOP``), has a second name (``EMLINK``) or cannot be
            written; the caller decides (the history is a convenience, not a record: the
            transcript has the message).
    """
    paths.ensure_dir(path.parent)
    body = f"\n# {datetime.now()}\n" + "".join(f"+{line}\n" for line in text.split("\n"))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, paths.FILE_MODE)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        if os.fstat(fd).st_nlink > 1:  # a hard link: its other name would get what you type
            raise OSError(errno.EMLINK, "a hard link (it has another name)", str(path))
        f.write(body)
