"""``/file PATH``: attach a file to your next message (see :mod:`neotask_tui.engine.context.attachments`).

The file is read (and checked: text, not in the data dir, redacted, capped) when you attach it, so a
problem is a one-line error right away; the front end keeps it (:class:`AttachFiles`) until your
next message, which carries it. ``@path`` in a message does the same for that message.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from neotask_tui.commands.intents import AttachFiles
from neotask_tui.commands.registry import CommandResult, command, split_args, usage_error
from neotask_tui.engine.context.attachments import Attachment, read_attachment

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine


def attached_line(atts: list[Attachment] | tuple[Attachment, ...]) -> str:
    """One line per file: what goes with the next message."""
    return "\n".join(f"- {a.summary()}" for a in atts)


@command("file", "/file [PATH…] [--clear]", "Attach files to your next message (@path too; --clear drops them)")
async def _file(engine: Engine, key: str, args: str) -> CommandResult:
    a = split_args(args)
    if a == ["--clear"]:
        return CommandResult(intent=AttachFiles(clear=True))
    if any(x.startswith("--") for x in a):
        return usage_error("file", "paths, or --clear alone")
    if not a:
        return CommandResult(intent=AttachFiles())
    atts = []
    for raw in a:
        atts.append(await asyncio.to_thread(read_attachment, raw))  # a UserError is the inline error
    return CommandResult(data=[x.to_data() | {"lines": x.lines} for x in atts], intent=AttachFiles(add=tuple(atts)))


class PendingFiles:
    """The files a front end holds for the next message (``/file``), and the ``@path`` ones of it."""

    def __init__(self) -> None:
        self.files: list[Attachment] = []

    def apply(self, intent: AttachFiles) -> str:
        """Perform ``/file``'s intent; the line saying what the next message carries."""
        if intent.clear:
            n = len(self.files)
            self.files.clear()
            return f"dropped {n} attached file{'s' if n != 1 else ''}" if n else "no files were attached"
        for a in intent.add:
            self.files = [f for f in self.files if f.path != a.path] + [a]  # attached again: the new read
        if not self.files:
            return "no files attached — /file PATH (or @path in a message) attaches one"
        verb = "attached to your next message" if intent.add else "your next message carries"
        return f"{verb}:\n{attached_line(self.files)}"

    def take(self, text: str) -> list[Attachment]:
        """The attachments of the message ``text``: the pending files, then its ``@path`` ones (each
        file once). The pending list is emptied only when every file could be read.

        Raises:
            UserError: an ``@path`` that names a file that cannot be attached (nothing is sent).
        """
        from neotask_tui.engine.context.attachments import read_mentioned

        out = list(self.files)
        for a in read_mentioned(text):
            if all(a.path != b.path for b in out):
                out.append(a)
        self.files.clear()
        return out
