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
from typing import TYPE_CHECKING

from neotask_tui.commands import attach, branch, clipboard, compaction, core, memory, search, state
from neotask_tui.commands.registry import (
    REGISTRY,
    Command,
    CommandResult,
    Handler,
    command,
    completions,
    help_text,
    parse,
    split_args,
    split_line,
    usage_error,
)
from neotask_tui.errors import NeotaskError

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine

_MODULES = (core, branch, memory, state, compaction, search, clipboard, attach)
"""The command modules; importing this package registers every command."""


def load_all() -> dict[str, Command]:
    """Every registered command (all are registered when this package is imported)."""
    return REGISTRY


async def dispatch(engine: Engine, key: str, line: str) -> CommandResult:
    """Run a slash command line. Unknown commands and bad arguments give inline help.

    The result names the command the line named (:attr:`CommandResult.command`), so a caller never
    parses the line again. Its text shows a configured API key masked
    (:func:`~neotask_tui.providers.selection.without_configured_keys`), as the input history keeps the
    line (:func:`~neotask_tui.commands.core.history_entry`): a reply or an error that repeats what was
    typed (``/event NAME``, ``/file PATH``) never shows the key, in any front end.
    """
    from neotask_tui.providers.selection import without_configured_keys

    parsed = parse(line)
    if parsed is None:
        return CommandResult(text="not a command (commands start with /)", error=True)
    name, args = parsed
    res = await _run(engine, key, name, args)
    res.command = name
    res.text = without_configured_keys(res.text, engine.settings)
    return res


async def _run(engine: Engine, key: str, name: str, args: str) -> CommandResult:
    """Run ``/name args``: the handler's result, or an inline error."""
    cmd = REGISTRY.get(name)
    if cmd is None:
        from neotask_tui.providers.selection import KEY_NOT_COMMAND, looks_like_key

        if looks_like_key(name, engine.settings):  # a key pasted after "/": refused, never echoed
            return CommandResult(text=KEY_NOT_COMMAND, error=True)
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


__all__ = ["REGISTRY", "Command", "CommandResult", "Handler", "command", "completions", "dispatch", "help_text",
           "load_all", "parse", "split_args", "split_line", "usage_error"]
