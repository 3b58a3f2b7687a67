"""``neotask memory add|search|reindex|forget`` — long-term memory from the command line.

- ``neotask memory add TEXT [--file memory/x.md] [--scope S]`` appends a dated entry and indexes it.
- ``neotask memory search QUERY [--k 8] [--source memory|transcript] [--json]`` ranked passages.
- ``neotask memory reindex [--full]`` brings the index up to date (rich progress bar).
- ``neotask memory forget ID|QUERY`` removes a passage and verifies a search cannot find it.

``search`` holding the lock and ``reindex`` index the agent's archived sessions not indexed yet
first, as a ``send`` does before its recall (:func:`~neotask_tui.memory.archived.index_archived`).

Every subcommand takes ``--agent`` (default: the agent of the global ``-s/--session`` key, else
``general.agent``) and ``--json``. ``add``, ``reindex``
and ``forget`` write, so they take the data-dir lock (exit 3 while another process holds it).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from neotask_tui.errors import UserError, io_failure


def _console() -> Any:
    from neotask_tui.text.console import InertConsole

    return InertConsole(highlight=False, soft_wrap=True)


def _print_json(obj: Any) -> None:
    from neotask_tui.cli.output import print_json

    print_json(obj)


@contextlib.contextmanager
def _open(args: argparse.Namespace, progress: Callable[[str, int, int], None] | None = None, *,
          write: bool) -> Iterator[tuple[Any, str, bool]]:
    """The memory service, the validated agent id and whether this process holds the data-dir lock.

    A writer that finds the lock held fails with exit 3 naming the holder, as ``send`` does. A
    reader (``search``) takes the lock only if it is free — then it may bring the index up to date
    first (:func:`_index_archived` too); otherwise it reads the index as the holder keeps it and
    writes nothing.
    """
    import sys

    from neotask_tui.config import load_settings
    from neotask_tui.errors import DataDirError, LockedError
    from neotask_tui.paths import migrate_workspace
    from neotask_tui.storage.keys import parse_key, validate_agent_id
    from neotask_tui.storage.lock import DataLock
    from neotask_tui.text.terminal import inert

    settings = load_settings()
    if not settings.memory.enabled:
        raise UserError("long-term memory is disabled (memory.enabled = false)")
    if args.agent is not None:
        agent = validate_agent_id(args.agent)
    elif getattr(args, "session", None):  # the global -s/--session names the agent too (argparse field)
        agent = parse_key(args.session).agent_id
    else:
        agent = validate_agent_id(settings.general.agent)
    lock = DataLock()
    try:
        lock.acquire()
    except (LockedError, DataDirError):  # a reader reads as the holder keeps it, or as it is on a read-only disk
        if write:
            raise
    try:
        if lock.held:
            note = migrate_workspace(agent)
            if note:
                sys.stderr.write(inert(f"neotask: {note}") + "\n")
        from neotask_tui.memory.service import MemoryService  # after the lock: a refused writer exits fast
        from neotask_tui.providers.selection import without_configured_keys

        svc = MemoryService(settings.memory, progress=progress, writer=lock.held,
                            mask=functools.partial(without_configured_keys, settings=settings))
        try:
            yield svc, agent, lock.held
        finally:
            svc.close()
    finally:
        lock.release()


def _index_archived(svc: Any, agent: str) -> int:
    """Index the agent's archived sessions not indexed yet, all of them before returning (this
    process holds the data-dir lock); problems reading a transcript go to stderr.

    Returns:
        How many sessions were indexed.
    """
    import sys

    from neotask_tui.memory.archived import index_archived, of_agent
    from neotask_tui.storage.events import now_iso
    from neotask_tui.storage.store import SessionStore
    from neotask_tui.text.terminal import inert

    store = SessionStore(readonly=True)  # the transcripts are only read; the memory index is the write
    n = index_archived(svc, agent, of_agent(store.list_archived(), agent), store.events, now_iso,
                       background=False)
    for note in store.notices:
        sys.stderr.write(inert(f"neotask: {note}") + "\n")
    return n


def cmd_add(args: argparse.Namespace) -> int:
    """Run ``neotask memory add``."""
    import sys

    text = sys.stdin.read() if args.text == "-" else args.text
    with _open(args, write=True) as (svc, agent, _):
        try:
            rec = svc.add(agent, text, file=args.file, source="user", scope=args.scope)
        except ValueError as e:
            raise UserError(str(e)) from None
    if args.json:
        _print_json(rec.to_dict())
    else:
        from neotask_tui.text.console import styled  # the file name is shown literally

        _console().print(styled(
            "remembered in ", (f"{rec.shown_path}:{rec.line_start}-{rec.line_end}", "bold"),
            f" ({rec.stats.chunks_embedded} chunk(s) embedded"
            + (f"; {rec.redacted} secret(s) redacted: [REDACTED:…] in their place" if rec.redacted else "") + ")"
        ))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    """Run ``neotask memory search``."""
    if args.k < 1:
        raise UserError("--k must be at least 1")
    with _open(args, write=False) as (svc, agent, locked):
        sources = tuple(args.source) if args.source else ("memory", "transcript")
        from neotask_tui.memory.index.store import is_remote
        from neotask_tui.paths import memory_db_dir

        uri = svc.settings.db_uri
        local = None if uri and is_remote(uri) else Path(uri) if uri else memory_db_dir()
        if not locked and local is not None and not local.exists():
            # Another process holds the lock and has built no index yet: opening the store would
            # create it, a write under someone else's lock. There is nothing indexed to search.
            hits = []
        else:
            try:
                if locked:  # the archived sessions a send would index first
                    _index_archived(svc, agent)
                hits = svc.search(args.query, agent_id=agent, k=args.k, sources=sources,
                                  scopes=args.scope or None, sync=locked)
            except Exception as e:  # bringing the index up to date failed (a full disk): search it as it is
                why = io_failure(e) if locked else None
                if why is None:
                    raise
                import sys

                sys.stderr.write(f"neotask: the memory index could not be brought up to date: {why}; these "
                                 "results come from what it holds (a file it could not update is left out)\n")
                hits = svc.search(args.query, agent_id=agent, k=args.k, sources=sources,
                                  scopes=args.scope or None, sync=False)
            from neotask_tui.memory.types import recall_rank

            hits.sort(key=lambda h: recall_rank(h.kind))  # consented memory first (stable)
    if args.json:
        _print_json([h.to_dict() for h in hits])
        return 0
    con = _console()
    if not hits:
        con.print("no matching memories")
        return 0
    from rich.panel import Panel
    from rich.text import Text

    from neotask_tui.memory.types import recall_label, score_text
    from neotask_tui.text.terminal import inert, inert_line

    for n, h in enumerate(hits, 1):
        label = recall_label(h.kind, h.speaker, h.said_on)
        title = Text(inert(f"{n}. {label} · {inert_line(h.location)} · {h.scope} · {h.source} · "
                           f"score {score_text(h.score)}"))
        body = Text(inert(h.text))
        body.append(f"\nid {h.id} — {h.why}", style="dim")
        con.print(Panel(body, title=title, title_align="left"))
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    """Run ``neotask memory reindex`` with a rich progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    prog = Progress(
        TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        transient=True, disable=args.json, console=_console(),  # file names shown literally and inert
    )
    task = prog.add_task("checking memory files", total=None)

    def cb(phase: str, done: int, total: int) -> None:
        prog.update(task, description=phase, completed=done, total=total or None)

    with _open(args, progress=cb, write=True) as (svc, agent, _), prog:
        try:
            stats = svc.reindex(agent, full=args.full)
            prog.update(task, description="indexing archived sessions", completed=0, total=None)
            began = time.monotonic()
            stats.sessions_indexed = _index_archived(svc, agent)
            stats.seconds += time.monotonic() - began
        except Exception as e:
            why = io_failure(e)
            if why is None:
                raise
            from neotask_tui.errors import StorageError

            raise StorageError(f"could not update the memory index: {why}; the memory files are unchanged "
                               "(run `neotask memory reindex` again once there is room)") from None
    if args.json:
        _print_json(stats.to_dict())
    else:
        con = _console()
        con.print(
            f"{stats.files_seen} file(s): {stats.chunks_embedded} embedded, {stats.chunks_unchanged} "
            f"unchanged, {stats.chunks_deleted} deleted; {stats.sessions_indexed} archived session(s) "
            f"indexed in {stats.seconds:.2f}s"
        )
        for line in stats.skipped:  # every time here: the user asked for a reindex
            con.print(f"skipped: {line}", markup=False)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    """Run ``neotask memory forget``."""
    with _open(args, write=True) as (svc, agent, _):
        try:
            rec = svc.forget(agent, args.target)
        except ValueError as e:
            raise UserError(str(e)) from None
    if args.json:
        _print_json(rec.to_dict())
        return 0
    con = _console()
    from rich.text import Text

    from neotask_tui.text.terminal import inert

    if rec.tombstoned:
        con.print(Text.assemble("forgot from ", (inert(rec.shown_path), "bold"), " (tombstoned):"))
        for t in rec.removed:
            con.print(Text("  " + inert(t), style="dim"))
        if rec.rewritten_ids:
            con.print(f"re-indexed {len(rec.rewritten_ids)} neighbouring message(s) without it")
    else:  # every line that lost text, and exactly what it lost: a cut you did not mean is visible
        con.print(Text.assemble("removed from ", (inert(rec.shown_path), "bold"),
                                f" ({len(rec.removed_lines)} line(s)):"))
        for n, t in rec.removed_lines:
            part = " (part of the line)" if n in rec.partial_lines else ""
            con.print(Text.assemble((f"  {n}{part}: ", "dim"), inert(t)))
    if rec.dropped_copies:
        con.print(f"deleted {len(rec.dropped_copies)} damaged store copy(ies) in quarantine/ that held it")
    con.print("verified: a search no longer returns it" if rec.verified else
              Text("warning: the same text still exists elsewhere in memory", style="yellow"))
    return 0 if rec.verified else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``memory`` with its subcommands."""
    from neotask_tui.config import setting_arg

    p = sub.add_parser("memory", help="long-term memory: add, search, reindex, forget")
    msub = p.add_subparsers(dest="memory_command", required=True, parser_class=type(p))

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--agent", help="agent id (default: the agent of -s/--session, else general.agent)")
        q.add_argument("--json", action="store_true", help="machine-readable output")

    q = msub.add_parser("add", help="remember TEXT ('-' reads stdin)")
    q.add_argument("text")
    q.add_argument("--file", default="MEMORY.md", help="MEMORY.md or memory/<name>.md")
    q.add_argument("--scope", default=None, help="scope (default: agent:<id>), e.g. user, project:foo")
    common(q)
    q.set_defaults(handler=cmd_add)

    q = msub.add_parser("search", help="ranked passages for QUERY")
    q.add_argument("query")
    q.add_argument("--k", type=setting_arg("memory", "recall_k"), default=8, help="number of results (1..1000)")
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
