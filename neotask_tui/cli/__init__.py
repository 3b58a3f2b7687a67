"""The ``neotask`` command line.

``neotask`` alone starts the Textual app; subcommands are scriptable (``--json`` on every listing).
Exit codes: 0 success, 2 user error (one-line message on stderr), 3 data dir locked, 1 other failure.
Feature modules add subcommands through ``register(subparsers)`` functions.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

from neotask_tui import __version__
from neotask_tui.text.terminal import inert, inert_json

_MODULES = (
    "neotask_tui.cli.core",
    "neotask_tui.cli.memory_cmd",
    "neotask_tui.cli.state_cmd",
    "neotask_tui.cli.compact_cmd",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(inert(f"neotask: error: {message}") + "\n")
        raise SystemExit(2)


def print_json(obj: Any) -> None:
    """Print machine output: exact values, with no character a terminal would act on left raw."""
    sys.stdout.write(inert_json(json.dumps(obj, ensure_ascii=False, indent=2, default=_default)) + "\n")


def _default(o: Any) -> Any:
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "__dataclass_fields__"):
        import dataclasses

        return dataclasses.asdict(o)
    return str(o)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available subcommand."""
    p = _Parser(prog="neotask", description="Terminal chat whose engine remembers the right things.")
    p.add_argument("--version", action="version", version=f"neotask {__version__}")
    p.add_argument("--session", "-s", help="session key (default from config)")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    for mod in _MODULES:
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise
            continue
        reg = getattr(m, "register", None)
        if callable(reg):
            reg(sub)
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
    try:
        if handler is None:
            from neotask_tui.cli.core import run_app

            return run_app(args)
        return handler(args)
    except (UserError, ConfigError) as e:
        msg = str(e).splitlines()[0] if str(e) else repr(e)
        sys.stderr.write(inert(f"neotask: error: {msg}") + "\n")
        return 2
    except LockedError as e:
        sys.stderr.write(inert(f"neotask: {e}") + "\n")
        return 3
    except (StorageError, NeotaskError) as e:
        sys.stderr.write(inert(f"neotask: error: {e}") + "\n")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
