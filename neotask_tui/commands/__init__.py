"""Slash commands shared by the Textual app and the plain REPL.

A command is registered with :func:`command`; its handler is ``async (engine, key, args) ->
CommandResult``. ``args`` is the raw text after the command name. Handlers never raise for bad input:
they return ``CommandResult(error=True, text=usage)`` (``dispatch`` also converts stray
``UserError``/``ValueError`` into inline errors, so a bad argument never crashes a UI).

UI-only effects (quit, theme switch, opening a screen or the compaction review modal) are requested
with a typed intent (:mod:`neotask_tui.commands.intents`) in ``CommandResult.intent`` and performed
by the UI.
"""

from __future__ import annotations

import errno
import importlib
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from neotask_tui.commands.intents import Intent, OpenInbox
from neotask_tui.errors import NeotaskError

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
    """

    text: str
    data: Any
    error: bool
    intent: Intent | None
    events: list[Any]

    def __init__(self, text: str = "", data: Any = None, error: bool = False, intent: Intent | None = None,
                 events: list[Any] | None = None, *, action: Literal["open_inbox"] | None = None) -> None:
        # ``action`` is transitional: commands/state.py (another change set) still returns
        # ``action="open_inbox"``; once it says ``intent=OpenInbox()`` this parameter goes.
        self.text = text
        self.data = data
        self.error = error
        self.intent = OpenInbox() if intent is None and action == "open_inbox" else intent
        self.events = [] if events is None else events

    @property
    def action(self) -> str | None:
        """The intent's name (``quit``, ``theme``, ``open_sessions``, ``open_inbox``, ``show_context``,
        ``compact_review``), or None."""
        return None if self.intent is None else self.intent.name


@dataclass(frozen=True)
class Command:
    """A registered slash command."""

    name: str
    usage: str
    help: str
    handler: Handler


REGISTRY: dict[str, Command] = {}
_MODULES = (
    "neotask_tui.commands.core",
    "neotask_tui.commands.memory",
    "neotask_tui.commands.state",
    "neotask_tui.commands.compaction",
)
_loaded = False


def command(name: str, usage: str, help: str) -> Callable[[Handler], Handler]:
    """Register ``/name`` (usage line like ``/pref TEXT [--for 2h]``, one-line help)."""

    def deco(fn: Handler) -> Handler:
        REGISTRY[name] = Command(name=name, usage=usage, help=help, handler=fn)
        return fn

    return deco


def load_all() -> dict[str, Command]:
    """Import every command module that exists (features land independently)."""
    global _loaded
    if not _loaded:
        for mod in _MODULES:
            try:
                importlib.import_module(mod)
            except ModuleNotFoundError as e:
                if e.name != mod:
                    raise
        _loaded = True
    return REGISTRY


def parse(line: str) -> tuple[str, str] | None:
    """Split ``/name args`` (None if ``line`` is not a command)."""
    s = line.strip()
    if not s.startswith("/") or s.startswith("//"):
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


def help_text() -> str:
    """Markdown table of every command."""
    load_all()
    rows = ["| command | what it does |", "|---|---|"]
    for c in sorted(REGISTRY.values(), key=lambda c: c.name):
        rows.append(f"| `{c.usage}` | {c.help} |")
    return "\n".join(rows)


def completions(prefix: str) -> list[tuple[str, str]]:
    """Commands whose name starts with ``prefix`` (without the slash), with their help."""
    load_all()
    p = prefix.lstrip("/").lower()
    return [(f"/{c.name}", c.help) for c in sorted(REGISTRY.values(), key=lambda c: c.name) if c.name.startswith(p)]


async def dispatch(engine: Engine, key: str, line: str) -> CommandResult:
    """Run a slash command line. Unknown commands and bad arguments give inline help."""
    load_all()
    parsed = parse(line)
    if parsed is None:
        return CommandResult(text="not a command (commands start with /)", error=True)
    name, args = parsed
    cmd = REGISTRY.get(name)
    if cmd is None:
        near = [c for c in REGISTRY if c.startswith(name[:2])] if name else []
        hint = f" — did you mean {', '.join('/' + n for n in sorted(near))}?" if near else ""
        return CommandResult(text=f"unknown command /{name[:40]}{hint} (type /help for the list)", error=True)
    try:
        res = await cmd.handler(engine, key, args)
        if res.error and res.text:
            # Fault-suite fix: an inline error is one short line, even when it echoes huge input.
            first = res.text.strip().splitlines()[0] if res.text.strip() else res.text
            res.text = first if len(first) <= 300 else first[:299] + "…"
        return res
    except (NeotaskError, ValueError, KeyError, IndexError, TypeError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        return CommandResult(text=f"/{name}: {msg[:300]}", error=True)
    except OSError as e:  # fault-suite fix: a failed write (disk full, I/O error) is an inline error
        code = errno.errorcode.get(e.errno or 0, "error")
        return CommandResult(text=f"/{name}: could not write: {code} ({e.strerror})", error=True)
    except Exception as e:  # garbage arguments are an inline error, never a crash (OverflowError...)
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        return CommandResult(text=f"/{name}: {type(e).__name__}: {msg[:300]}", error=True)
