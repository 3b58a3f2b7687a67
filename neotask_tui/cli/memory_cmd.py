"""``neotask memory add|search|reindex|forget`` — long-term memory from the command line.

- ``neotask memory add TEXT [--file memory/x.md] [--scope S]`` appends a dated entry and indexes it.
- ``neotask memory search QUERY [--k 8] [--source memory|transcript] [--json]`` ranked passages.
- ``neotask memory reindex [--full]`` brings the index up to date (rich progress bar).
- ``neotask memory forget ID|QUERY`` removes a passage and verifies a search cannot find it.

Every subcommand takes ``--agent`` (default: ``general.agent``) and ``--json``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from neotask_tui.errors import UserError


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def _print_json(obj: Any) -> None:
    from neotask_tui.cli import print_json

    print_json(obj)


def _open(args: argparse.Namespace, progress: Callable[[str, int, int], None] | None = None) -> tuple[Any, str]:
    from neotask_tui.config import load_settings
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.paths import safe_component

    settings = load_settings()
    if not settings.memory.enabled:
        raise UserError("long-term memory is disabled (memory.enabled = false)")
    agent = safe_component(args.agent or settings.general.agent)
    return MemoryService(settings.memory, progress=progress), agent


def cmd_add(args: argparse.Namespace) -> int:
    """Run ``neotask memory add``."""
    import sys

    text = sys.stdin.read() if args.text == "-" else args.text
    svc, agent = _open(args)
    try:
        rec = svc.add(agent, text, file=args.file, source="user", scope=args.scope)
    except ValueError as e:
        raise UserError(str(e)) from None
    finally:
        svc.close()
    if args.json:
        _print_json(rec.to_dict())
    else:
        _console().print(
            f"remembered in [bold]{rec.path}:{rec.line_start}-{rec.line_end}[/] "
            f"({rec.stats.chunks_embedded} chunk(s) embedded)"
        )
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    """Run ``neotask memory search``."""
    if args.k < 1:
        raise UserError("--k must be at least 1")
    svc, agent = _open(args)
    try:
        sources = tuple(args.source) if args.source else ("memory", "transcript")
        hits = svc.search(args.query, agent_id=agent, k=args.k, sources=sources,
                          scopes=args.scope or None)
    finally:
        svc.close()
    if args.json:
        _print_json([h.to_dict() for h in hits])
        return 0
    con = _console()
    if not hits:
        con.print("no matching memories")
        return 0
    from rich.panel import Panel
    from rich.text import Text

    for n, h in enumerate(hits, 1):
        title = f"{n}. {h.location} · {h.scope} · {h.source} · score {h.score:.3f}"
        body = Text(h.text)
        body.append(f"\nid {h.id} — {h.why}", style="dim")
        con.print(Panel(body, title=title, title_align="left"))
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    """Run ``neotask memory reindex`` with a rich progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    prog = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        transient=True, disable=args.json,
    )
    task = prog.add_task("checking memory files", total=None)

    def cb(phase: str, done: int, total: int) -> None:
        prog.update(task, description=phase, completed=done, total=total or None)

    svc, agent = _open(args, progress=cb)
    try:
        with prog:
            stats = svc.reindex(agent, full=args.full)
    finally:
        svc.close()
    if args.json:
        _print_json(stats.to_dict())
    else:
        _console().print(
            f"{stats.files_seen} file(s): {stats.chunks_embedded} embedded, {stats.chunks_unchanged} "
            f"unchanged, {stats.chunks_deleted} deleted in {stats.seconds:.2f}s"
        )
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    """Run ``neotask memory forget``."""
    svc, agent = _open(args)
    try:
        rec = svc.forget(agent, args.target)
    except ValueError as e:
        raise UserError(str(e)) from None
    finally:
        svc.close()
    if args.json:
        _print_json(rec.to_dict())
        return 0
    con = _console()
    where = rec.path if rec.tombstoned else f"{rec.path}:{rec.lines[0]}-{rec.lines[1]}"
    con.print(f"forgot from [bold]{where}[/]{' (tombstoned)' if rec.tombstoned else ''}:")
    for t in rec.removed:
        con.print(f"  [dim]{t}[/]")
    con.print("verified: a search no longer returns it" if rec.verified else
              "[yellow]warning: the same text still exists elsewhere in memory[/]")
    return 0 if rec.verified else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memory`` with its subcommands."""
    p = sub.add_parser("memory", help="long-term memory: add, search, reindex, forget")
    msub = p.add_subparsers(dest="memory_command", required=True, parser_class=type(p))

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--agent", help="agent id (default: general.agent)")
        q.add_argument("--json", action="store_true", help="machine-readable output")

    q = msub.add_parser("add", help="remember TEXT ('-' reads stdin)")
    q.add_argument("text")
    q.add_argument("--file", default="MEMORY.md", help="MEMORY.md or memory/<name>.md")
    q.add_argument("--scope", default=None, help="scope (default: agent:<id>), e.g. user, project:foo")
    common(q)
    q.set_defaults(handler=cmd_add)

    q = msub.add_parser("search", help="ranked passages for QUERY")
    q.add_argument("query")
    q.add_argument("--k", type=int, default=8, help="number of results")
    q.add_argument("--source", action="append", choices=["memory", "transcript", "inbox"],
                   help="restrict to a source (repeatable)")
    q.add_argument("--scope", action="append", help="restrict to a scope (repeatable)")
    common(q)
    q.set_defaults(handler=cmd_search)

    q = msub.add_parser("reindex", help="bring the index up to date")
    q.add_argument("--full", action="store_true", help="re-embed everything")
    common(q)
    q.set_defaults(handler=cmd_reindex)

    q = msub.add_parser("forget", help="remove a passage by id or best match of a query")
    q.add_argument("target", metavar="ID|QUERY")
    common(q)
    q.set_defaults(handler=cmd_forget)
