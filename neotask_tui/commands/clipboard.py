"""``/copy``: the last reply, a chosen message or one of its code blocks, to the clipboard.

The command finds the text (:func:`copy_target`) and returns a
:class:`~neotask_tui.commands.intents.CopyText`; the front end sends it to the terminal's clipboard
(OSC 52: Textual's ``App.copy_to_clipboard`` in the app, :func:`osc52` on the tty in the plain REPL)
and calls :func:`deliver` for the fallbacks, since a terminal may ignore OSC 52 without saying so
(tmux without ``set-clipboard``, many Linux consoles): a clipboard tool when one is installed
(``wl-copy``, ``xclip``, ``xsel``, ``pbcopy``), else the file ``exports/clipboard.txt``.

What is copied is what the transcript shows: secrets redacted (``[REDACTED:kind]``, as everywhere
a conversation's text leaves the transcript) and terminal controls made visible, so a paste into a
shell never carries an escape sequence from a reply.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from typing import TYPE_CHECKING

from neotask_tui.commands.intents import CopyText
from neotask_tui.commands.registry import CommandResult, command, split_args, usage_error
from neotask_tui.errors import NeotaskError
from neotask_tui.storage.events import redacted_in_conversation, superseded_ids
from neotask_tui.text.codeblocks import code_blocks
from neotask_tui.text.secrets import MARKER_PREFIX, redact
from neotask_tui.text.terminal import inert

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine
    from neotask_tui.storage.events import Event

TOOLS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("wl-copy", (), "WAYLAND_DISPLAY"),
    ("xclip", ("-selection", "clipboard"), "DISPLAY"),
    ("xsel", ("--clipboard", "--input"), "DISPLAY"),
    ("pbcopy", (), ""),
)
"""Clipboard tools tried in order: (program, its arguments, the variable its display needs, or "")."""

TOOL_TIMEOUT = 3.0
"""Seconds a clipboard tool may take (xclip forks to serve the selection and returns at once)."""


def osc52(text: str) -> str:
    """The OSC 52 sequence that asks the terminal to put ``text`` on the system clipboard."""
    return "\x1b]52;c;" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "\x07"


def _copyable(ev: Event) -> bool:
    return ev.type == "message" and ev.role in ("user", "assistant") and bool(ev.content.strip())


def copy_target(events: list[Event], which: int | None, block: int | None) -> tuple[str, str]:
    """(text, what) to copy: message ``e:which`` (the last reply when None), or its code block ``block``,
    with its secrets redacted as the conversation marks them (a password announced in the message
    before, and a reply quoting it: :func:`~neotask_tui.storage.events.redacted_in_conversation`).

    Raises:
        ValueError: no such message or block (one line, saying what there is).
    """
    if which is None:  # the last reply that counts: one a /retry or /edit replaced is not it
        gone = superseded_ids(events)
        ev = next((e for e in reversed(events) if _copyable(e) and e.role == "assistant" and e.id not in gone), None)
        if ev is None:
            raise ValueError("no reply to copy yet")
        name = f"the last reply (e:{ev.id})"
    else:
        ev = next((e for e in events if e.id == which and _copyable(e)), None)
        if ev is None:
            raise ValueError(f"no message e:{which} in this session")
        name = f"{'your message' if ev.role == 'user' else 'the reply'} e:{ev.id}"
    red = redacted_in_conversation(events).get(ev.id, ev.content)
    if block is None:
        return red, name
    blocks = code_blocks(ev.content)
    if not blocks:
        raise ValueError(f"{name} has no code block")
    if not 1 <= block <= len(blocks):
        raise ValueError(f"{name} has {len(blocks)} code block{'s' if len(blocks) != 1 else ''} "
                         f"(1–{len(blocks)}, counted from the top)")
    b = blocks[block - 1]
    lang = f" ({inert(b.lang)})" if b.lang else ""
    # the block as the transcript shows it: redacted with the message around it, so a password
    # given after its cue ("the password is:" and then a block) is redacted in the block too
    shown_blocks = code_blocks(red)
    text = shown_blocks[block - 1].text if len(shown_blocks) == len(blocks) else b.text
    return text, f"code block {block} of {len(blocks)}{lang} of {name}"


def shown(text: str) -> tuple[str, int]:
    """``text`` as the transcript shows it: secrets redacted, controls visible (and how many secrets,
    markers already in ``text`` counted: a code block comes redacted with its message)."""
    red, _n = redact(text)
    return inert(red), red.count(MARKER_PREFIX)


@command("copy", "/copy [e:ID] [N]", "Copy the last reply (N: its Nth code block; e:ID: that message; c in the app)")
async def _copy(engine: Engine, key: str, args: str) -> CommandResult:
    which: int | None = None
    block: int | None = None
    for a in split_args(args):
        if a.lower().startswith("e:") and a[2:].isdigit() and which is None:
            which = int(a[2:])
        elif a.isdigit() and block is None:
            block = int(a)
        else:
            return usage_error("copy", f"not a message id (e:ID) or a block number: {a[:40]!r}")
    try:
        raw, what = copy_target(engine.events(key), which, block)
    except ValueError as e:
        return CommandResult(text=f"/copy: {e}", error=True)
    text, n = shown(raw)
    return CommandResult(data={"what": what, "chars": len(text), "lines": text.count("\n") + 1, "redacted": n},
                         intent=CopyText(text, what, n))


def system_tool() -> tuple[str, list[str]] | None:
    """The first clipboard tool installed whose display is there: (name, argv), else None."""
    for prog, args, display in TOOLS:
        exe = shutil.which(prog)
        if exe and (not display or os.environ.get(display)):
            return prog, [exe, *args]
    return None


def deliver(copy: CopyText, *, osc52_sent: bool) -> str:
    """Copy through a clipboard tool, else into ``exports/clipboard.txt``; the one-line notice saying
    what was copied (characters, lines, which block) and where.

    The file is written atomically under the caller's data-dir lock (the app and REPL hold it).
    """
    from neotask_tui import paths
    from neotask_tui.storage.atomic import atomic_write_text

    where: list[str] = ["the terminal clipboard (OSC 52)"] if osc52_sent else []
    tool = system_tool()
    done = False
    if tool is not None:
        try:
            r = subprocess.run(tool[1], input=copy.text.encode("utf-8"), capture_output=True,
                               timeout=TOOL_TIMEOUT, check=False)
            done = r.returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            done = False
        if done:
            where.append(tool[0])
    if not done:
        out = paths.clipboard_file()
        try:
            atomic_write_text(paths.refuse_links(out), copy.text)
            where.append(f"{out}" + ("" if osc52_sent else " (no clipboard reached: not a terminal)"))
        except (OSError, NeotaskError) as e:  # a full disk, a link: said, the copy itself is not lost
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            if not where:
                return f"could not copy {copy.what}: not a terminal, no clipboard tool, and {out}: {why}"
            where.append(f"(not {out}: {why})")
    lines = copy.text.count("\n") + 1
    secrets = f"; {copy.redacted} secret{'s' if copy.redacted != 1 else ''} redacted" if copy.redacted else ""
    chars = len(copy.text)
    return (f"copied {copy.what}: {chars:,} character{'s' if chars != 1 else ''}, "
            f"{lines:,} line{'s' if lines != 1 else ''} → {' and '.join(where)}{secrets}")
