"""``neotask compact`` and ``neotask context``.

- ``neotask compact KEY [--instructions TEXT] [--preview] [--rebuild] [--undo] [--json]`` compacts a
  session (or previews / rebuilds / undoes the last compaction).
- ``neotask context KEY [--message DRAFT] [--json]`` prints what the next call would send: tokens per
  section, budget, fill ratio, whether counts are provider-reported or estimated, and the recall
  section (for DRAFT, or for the last user message); ``--json`` carries every message itself
  (read-only: nothing is written, nothing is indexed).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from neotask_tui.cli.core import _console, _key, open_engine
from neotask_tui.cli.output import print_json

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine


def cmd_compact(args: argparse.Namespace) -> int:
    """Run ``neotask compact``."""
    from neotask_tui.commands.compaction import describe

    if args.undo and (args.preview or args.rebuild or args.instructions):
        from neotask_tui.errors import UserError

        raise UserError("--undo cannot be combined with --preview, --rebuild or --instructions")
    engine = _open_for_preview() if args.preview else open_engine()

    async def run() -> Any:
        try:
            key = _key(args, engine)
            if args.undo:
                return await engine.undo_compact(key)
            return await engine.compact(key, instructions=args.instructions, preview=args.preview,
                                        rebuild=args.rebuild)
        finally:
            await engine.aclose()

    res = asyncio.run(run())
    if args.json:
        print_json(res.to_dict())
    elif args.undo:
        _console().print(f"compaction undone: {res.restored_session_id} is current again "
                         f"({res.undone_session_id} archived)")
    else:
        from neotask_tui.text.console import markdown

        _console().print(markdown(describe(res)))
    return 0


def _open_for_preview() -> Engine:
    """The engine of a preview. The model's draft is a paid call, counted on the session: a preview
    takes the data-dir lock when it is free (as ``search`` does) to record it (a ``call`` line in the
    session's transcript) and add it to the counters. Beside
    the process that holds it, it opens read-only, writes nothing, and the model is not asked (the
    extractive summarizer drafts it and the result says why). With no data dir there is no session
    to preview, and none is made."""
    from neotask_tui import paths
    from neotask_tui.errors import DataDirError, LockedError

    if not paths.data_dir().exists():
        return open_engine(readonly=True)
    try:
        return open_engine()
    except (LockedError, DataDirError):  # beside the holder, or on a data dir that cannot be written
        return open_engine(readonly=True)


def ledger_rows(led: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows of a ledger for display."""
    rows = [(name, f"{n:,}") for name, n in led["sections"].items()]
    rows.append(("total", f"{led['total']:,}"))
    rows.append(("budget", f"{led['budget']:,} (window {led['window']:,} minus reply reserve)"))
    rows.append(("fill", f"{led['fill']:.1%} of the window"))
    rows.append(("counts", str(led.get("source", "estimated"))))
    return rows


def cmd_context(args: argparse.Namespace) -> int:
    """Run ``neotask context`` (read-only: nothing is written)."""
    from neotask_tui.commands import split_line
    from neotask_tui.commands.core import context_payload, tools_line
    from neotask_tui.errors import UserError

    if args.message is not None:  # as `send` reads it: "/…" runs a command, "//…" sends "/…"
        line, args.message = split_line(args.message)
        if line is not None:
            raise UserError("a slash command is not sent to the model: nothing to preview "
                            "(`neotask send` runs it; '//' previews a message that starts with '/')")
    engine = open_engine(readonly=True)

    async def run() -> Any:
        try:
            return await engine.preview(key, args.message)
        finally:
            await engine.aclose()

    try:
        key = _key(args, engine)
        payload = context_payload(asyncio.run(run()))
        led = payload["ledger"]
        reported = _last_reported(engine, key)
        if reported is not None:
            led["last_reported_input"] = reported
        if args.json:
            print_json({"key": key, **payload})
            return 0
        from rich.table import Table

        t = Table("section", "tokens", title=f"context for the next call · {key}")
        for label, value in ledger_rows(led):
            t.add_row(label, value)
        if reported is not None:
            t.add_row("last call (provider-reported input)", f"{reported:,}")
        _console().print(t)
        _console().print(tools_line(payload))
        _console().print(payload["recall"]["label"])
        if payload["recall"]["note"]:
            _console().print(f"note: {payload['recall']['note']}")
        for note in led.get("notices") or ():  # what the call leaves out or trims (state entries, a long message)
            _console().print(f"note: {note}")
        return 0
    finally:
        engine.close()


def _last_reported(engine: Engine, key: str) -> int | None:
    """Input tokens the provider reported for the last reply of the current session, if any."""
    if engine.store.get(key) is None:
        return None
    for e in reversed(engine.events(key)):
        usage = e.data.get("usage") if e.type == "message" else None
        if isinstance(usage, dict):
            return int(usage.get("input", 0)) if usage.get("reported") else None
    return None


def register(sub: Any) -> None:
    """Add ``compact`` and ``context``."""
    p = sub.add_parser("compact", help="compact a session: cited summary + recent messages (preview/undo)")
    p.add_argument("key", nargs="?", help="session key (default from config)")
    p.add_argument("--instructions", "-i", default=None, help="what the summary should focus on")
    p.add_argument("--preview", action="store_true",
                   help="show the draft summary and dropped items; change nothing but record and count "
                        "the model's call")
    p.add_argument("--rebuild", action="store_true", help="re-summarize from the archived primary events")
    p.add_argument("--undo", action="store_true", help="undo the last compaction")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_compact)

    p = sub.add_parser("context", help="what the next call sends: tokens per section, recall, the messages (--json)")
    p.add_argument("key", nargs="?", help="session key (default from config)")
    p.add_argument("--message", "-m", default=None,
                   help="preview sending this message: it ends the context and recall is for it")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_context)
