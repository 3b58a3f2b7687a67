"""The slash-command registry: :class:`CommandResult`, :func:`command`, and the helpers handlers use.

Command modules (``core``, ``memory``, ``state``, ``compaction``) register their handlers here;
the package (:mod:`neotask_tui.commands`) imports them all and dispatches.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neotask_tui.commands.intents import Intent

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine

Handler = Callable[["Engine", str, str], Awaitable["CommandResult"]]


@dataclass(init=False)
class CommandResult:
    """What a command did.

    Attributes:
        text: Markdown to show inline.
        data: Structured payload (``--json``, tests).
        error: True when the input was bad or the action failed (``text`` says why, one line).
        intent: What the command asks of the UI (:data:`~neotask_tui.commands.intents.Intent`), or None.
        events: Engine events produced (e.g. a SessionReset) for the UI to render.
        command: The name of the command the line named (``remember`` for ``/remember …``, also an
            unknown one), as :func:`~neotask_tui.commands.dispatch` parsed it; None when the line
            was not a command.
    """

    text: str
    data: Any
    error: bool
    intent: Intent | None
    events: list[Any]
    command: str | None

    def __init__(self, text: str = "", data: Any = None, error: bool = False, intent: Intent | None = None,
                 events: list[Any] | None = None, command: str | None = None) -> None:
        self.text = text
        self.data = data
        self.error = error
        self.intent = intent
        self.events = [] if events is None else events
        self.command = command

    @property
    def action(self) -> str | None:
        """The intent's name (``quit``, ``theme``, ``open_sessions``, ``open_inbox``, ``show_context``,
        ``compact_review``, ``regenerate``, ``edit_last``), or None."""
        return None if self.intent is None else self.intent.name


@dataclass(frozen=True)
class Command:
    """A registered slash command."""

    name: str
    usage: str
    help: str
    handler: Handler


REGISTRY: dict[str, Command] = {}


def command(name: str, usage: str, help: str) -> Callable[[Handler], Handler]:
    """Register ``/name`` (usage line like ``/pref TEXT [--for 2h]``, one-line help)."""

    def deco(fn: Handler) -> Handler:
        REGISTRY[name] = Command(name=name, usage=usage, help=help, handler=fn)
        return fn

    return deco


def split_line(text: str) -> tuple[str | None, str]:
    """Read what was typed as every front end does: a slash command or a message.

    Text that starts with ``/`` (after any whitespace) is a slash command; text that starts with
    ``//`` is a message whose text starts with ``/``: its first slash is dropped, nothing else (the
    whitespace before it and every line after it stay).

    Returns:
        ``(command, message)``: the command line without surrounding whitespace, or None when
        ``text`` is a message; and the message text (``text`` itself unless it starts with ``//``).
    """
    head = text.strip()
    if head.startswith("//"):
        return None, text.replace("/", "", 1)
    if head.startswith("/"):
        return head, text
    return None, text


def parse(line: str) -> tuple[str, str] | None:
    """Split ``/name args`` (None if ``line`` is not a command, as :func:`split_line` reads it)."""
    s, _ = split_line(line)
    if s is None:
        return None
    name, _, rest = s[1:].partition(" ")
    return name.strip().lower(), rest.strip()


def split_args(args: str) -> list[str]:
    """Shell-like split that never raises (unbalanced quotes fall back to whitespace split)."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def usage_error(name: str, detail: str = "") -> CommandResult:
    """A one-line inline usage error for ``/name``."""
    cmd = REGISTRY.get(name)
    usage = cmd.usage if cmd else f"/{name}"
    msg = f"{detail} — usage: {usage}" if detail else f"usage: {usage}"
    return CommandResult(text=msg, error=True)


HELP_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("sessions", ("new", "reset", "undo-reset", "sessions", "search", "fork", "retry", "edit", "export",
                  "copy", "file")),
    ("context & compaction", ("context", "compact", "undo-compact")),
    ("state", ("state", "goal", "pref", "event", "done")),
    ("memory", ("remember", "recall", "forget", "inbox")),
    ("app", ("help", "model", "theme", "quit")),
)
"""How ``/help`` groups the commands (a command not named here is listed under "more")."""


def help_groups() -> list[tuple[str, list[Command]]]:
    """Every registered command, grouped as :data:`HELP_GROUPS` says (the rest under "more")."""
    out: list[tuple[str, list[Command]]] = []
    seen: set[str] = set()
    for title, names in HELP_GROUPS:
        cmds = [REGISTRY[n] for n in names if n in REGISTRY]
        seen.update(c.name for c in cmds)
        if cmds:
            out.append((title, cmds))
    rest = [c for n, c in sorted(REGISTRY.items()) if n not in seen]
    if rest:
        out.append(("more", rest))
    return out


def inline_code(text: str) -> str:
    """``text`` as inline Markdown code, whatever backticks it holds."""
    run = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def help_text(name: str | None = None) -> str:
    """Markdown help: every command grouped, one line each (usage — what it does); with ``name``,
    that command alone. No table, so a ``|`` in a usage line stays part of it."""
    if name is not None:
        cmd = REGISTRY.get(name.lstrip("/").lower())
        if cmd is None:
            return ""
        return f"{inline_code(cmd.usage)} — {cmd.help}"
    blocks = []
    for title, cmds in help_groups():
        lines = [f"**{title}**"] + [f"{inline_code(c.usage)} — {c.help}" for c in cmds]
        blocks.append("  \n".join(lines))
    blocks.append("`/help NAME` shows one command; in the app F1 opens this list and `k` shows the keys.")
    return "\n\n".join(blocks)


def completions(prefix: str) -> list[tuple[str, str]]:
    """Commands whose name starts with ``prefix`` (without the slash), with their help."""
    p = prefix.lstrip("/").lower()
    return [(f"/{c.name}", c.help) for c in sorted(REGISTRY.values(), key=lambda c: c.name) if c.name.startswith(p)]
