"""The ``neotask`` command line.

``neotask`` alone starts the Textual app; subcommands are scriptable (``--json`` on every listing).
Exit codes: 0 success, 2 user error (one-line message on stderr), 3 data dir locked, 1 other failure.
Each subcommand module adds its subcommands through its ``register(subparsers)`` function; machine
output goes through :func:`neotask_tui.cli.output.print_json`. Everything a subcommand prints (and
every ``neotask: error:`` line) goes out with the configured API keys masked
(:class:`~neotask_tui.cli.output.MaskedStream`), however the key was given as an argument.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from neotask_tui import __version__
from neotask_tui.cli import compact_cmd, core, memory_cmd, state_cmd
from neotask_tui.cli.output import MaskedStream, masked, print_json, shown_keys
from neotask_tui.text.terminal import inert

_MODULES = (core, memory_cmd, state_cmd, compact_cmd)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(masked(inert(f"neotask: error: {message}")) + "\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available subcommand."""
    p = _Parser(prog="neotask", description="Terminal chat whose engine remembers the right things.")
    p.add_argument("--version", action="version", version=f"neotask {__version__}")
    p.add_argument("--session", "-s", help="session key (default from config)")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    for mod in _MODULES:
        mod.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``neotask`` console script."""
    from neotask_tui.config import ConfigError
    from neotask_tui.errors import LockedError, NeotaskError, StorageError, UserError
    from neotask_tui.text.logs import install_inert_logging

    install_inert_logging()  # every front end (CLI, REPL, app) starts here: log records print inert
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    keys: list[str] | None = None  # None: looked up when an error is printed
    streams = sys.stdout, sys.stderr
    try:
        if handler is None:
            return core.run_app(args)
        # the app and the REPL draw on the terminal themselves (their lines are masked where made)
        keys = shown_keys()
        if handler is not core.cmd_chat and keys:
            sys.stdout, sys.stderr = MaskedStream(sys.stdout, keys), MaskedStream(sys.stderr, keys)
        return handler(args)
    except (UserError, ConfigError) as e:
        msg = str(e).splitlines()[0] if str(e) else repr(e)
        sys.stderr.write(masked(inert(f"neotask: error: {msg}"), keys) + "\n")
        return 2
    except LockedError as e:
        sys.stderr.write(masked(inert(f"neotask: {e}"), keys) + "\n")
        return 3
    except (StorageError, NeotaskError) as e:
        sys.stderr.write(masked(inert(f"neotask: error: {e}"), keys) + "\n")
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout, sys.stderr = streams


__all__ = ["build_parser", "main", "print_json"]


if __name__ == "__main__":
    raise SystemExit(main())
