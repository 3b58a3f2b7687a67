"""Core CLI commands: send, sessions, transcript, doctor, chat, and the app itself."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from neotask_tui.cli.output import print_json
from neotask_tui.errors import UserError
from neotask_tui.text.terminal import inert

if TYPE_CHECKING:
    from neotask_tui.engine import events as ev
    from neotask_tui.engine.facade import Engine
    from neotask_tui.storage.events import Event


def open_engine(readonly: bool = False, **kw: Any) -> Any:
    """Load settings and open the engine (takes the data-dir lock unless read-only)."""
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine

    return Engine(load_settings(), readonly=readonly, **kw)


def _key(args: argparse.Namespace, engine: Engine, attr: str = "key") -> str:
    from neotask_tui.storage.keys import validate_key

    k = getattr(args, attr, None) or getattr(args, "session", None)
    return validate_key(k) if k else engine.default_key()


def _console() -> Any:
    """The console of plain output: everything it prints is inert (no raw terminal controls)."""
    from neotask_tui.text.console import InertConsole

    return InertConsole(highlight=False, soft_wrap=True)


def run_app(args: argparse.Namespace) -> int:
    """Start the Textual app."""
    from neotask_tui.config import load_settings
    from neotask_tui.tui.app import run_app as run_tui

    return int(run_tui(load_settings(), key=getattr(args, "session", None)) or 0)


# ---------------------------------------------------------------------------------------------- send
async def _send(args: argparse.Namespace) -> int:
    from neotask_tui.commands import split_line
    from neotask_tui.commands.attach import PendingFiles
    from neotask_tui.commands.intents import AttachFiles
    from neotask_tui.engine import events as ev  # not at import time: `neotask` alone starts the app
    from neotask_tui.engine.context.attachments import read_attachment

    pending = PendingFiles()  # --file and @path, as /file and @path in the app (read before anything is stored)
    pending.apply(AttachFiles(add=tuple(read_attachment(f) for f in args.file or [])))
    if args.retry and pending.files:
        raise UserError("--file goes with a message (a new one or --edit), not with --retry")
    if not args.retry and not args.edit and args.text is not None:
        line, args.text = split_line(args.text)  # as in the app: '//' sends a message that starts with '/'
        if line is not None:
            if pending.files:
                raise UserError("--file goes with a message, not with a slash command")
            return await _send_command(args, line)
    files = [] if args.retry or args.text is None else pending.take(args.text)
    engine = open_engine()
    try:
        key = _key(args, engine)
        out: dict[str, Any] = {"key": key, "notices": [], "attachments": [a.summary() for a in files]}
        rc = 0
        console = None if args.json else _console()
        if console is not None:
            for a in files:
                sys.stderr.write(inert(f"attached {a.summary()}") + "\n")
        if args.retry:
            gen = engine.retry(key)
        elif args.edit:
            gen = engine.edit_last(args.text, key, files)
        else:
            gen = engine.send(args.text, key, files)
        async for e in gen:
            if isinstance(e, ev.TokenDelta):
                if console is not None:
                    sys.stdout.write(inert(e.text))
                    sys.stdout.flush()
            elif isinstance(e, ev.TurnDone):
                out.update(reply=e.text, session_id=e.session_id, event_id=e.event_id, usage=e.usage,
                           cost_usd=e.cost_usd, provider=e.provider, model=e.model, totals=e.totals,
                           context=e.ledger)
                if console is not None:
                    sys.stdout.write("\n")
                    u = e.usage
                    cost = "cost unknown" if e.cost_usd is None else f"${e.cost_usd:.6f}"
                    label = "reported" if u.reported else "estimated"
                    console.print(f"{e.provider} · {e.model} · in {u.input_tokens} out {u.output_tokens} "
                                  f"({label}) · {cost}", style="dim")
            elif isinstance(e, ev.Recalled):
                out["recalled"] = e.items
            elif isinstance(e, ev.TurnFailed):
                out.update(error=e.error, error_kind=e.error_kind, partial=e.partial_text)
                sys.stderr.write(inert(f"neotask: {e.error_kind}: {e.error}") + "\n")
                rc = 1
            elif isinstance(e, ev.Superseded):
                out["superseded"] = e.superseded_ids
                if console is not None:
                    ids = ", ".join(f"e:{i}" for i in e.superseded_ids)
                    sys.stderr.write(f"[{e.by}] superseded {ids} (kept in the transcript, out of the context)\n")
            elif isinstance(e, ev.Notice | ev.SessionReset | ev.Compacted | ev.ProviderInfo):
                out["notices"].append(e.to_dict())
                if console is not None and not isinstance(e, ev.ProviderInfo):
                    sys.stderr.write(inert(_event_line(e, key)) + "\n")
        if args.json:
            print_json(out)
        return rc
    finally:
        await engine.aclose()


def _event_line(e: ev.Notice | ev.SessionReset | ev.Compacted, key: str) -> str:
    """One line on stderr for what happened around a ``send``'s reply (``--json`` has the fields)."""
    from neotask_tui.engine import events as ev

    if isinstance(e, ev.Notice):
        return f"notice: {e.text}"
    if isinstance(e, ev.SessionReset):
        undo = f" (`neotask sessions undo-reset {key}` restores it)" if e.undoable else ""
        return e.line + undo
    how = " (extractive summary: the model's draft failed)" if e.fallback else ""
    guard = f"; the guard restored or corrected {len(e.repaired)} item(s)" if e.repaired else ""
    return (f"compacted {e.tokens_before:,} → {e.tokens_after:,} tokens{how}{guard}; the old transcript is "
            f"archived as {e.old_session_id} (`neotask compact {key} --undo` undoes it)")


async def _send_command(args: argparse.Namespace, line: str) -> int:
    """``neotask send "/remember …"``: the slash command runs as it does in the app and the REPL
    (a message that starts with ``/`` is sent as ``//…``). A command that needs a screen, a prompt or
    the clipboard is a one-line error naming what does the same here."""
    from neotask_tui.commands import dispatch, intents

    engine = open_engine()
    try:
        key = _key(args, engine)
        res = await dispatch(engine, key, line)
        name = line[1:] if res.command is None else res.command
        text, error = res.text, res.error
        shows_text = (intents.OpenInbox, intents.ShowSearch, intents.ShowContext, intents.ShowHelp)
        elsewhere: dict[type, str] = {  # what does the same on the command line
            intents.Regenerate: "use `neotask send --retry`",
            intents.EditLast: "use `neotask send --edit TEXT`",
            intents.AttachFiles: "use `neotask send TEXT --file PATH` (or @path in the message)",
            intents.ReviewCompaction: "use `neotask compact` (--preview shows it first)",
        }
        if not error and res.intent is not None and not isinstance(res.intent, shows_text):
            how = elsewhere.get(type(res.intent), "it works in the app (`neotask`) and in `neotask chat --plain`")
            text, error = f"/{name[:40]} needs the app or the REPL here: {how}", True
        if args.json:
            print_json({"key": key, "command": f"/{name[:40]}", "text": text, "error": error})
        elif error:
            sys.stderr.write(inert(f"neotask: {text}") + "\n")
        elif text:
            sys.stdout.write(inert(text.rstrip("\n")) + "\n")
        return 2 if error else 0  # a command's error is a user error, as everywhere in the CLI
    finally:
        await engine.aclose()


def cmd_send(args: argparse.Namespace) -> int:
    """``neotask send TEXT``: one non-interactive turn (``--retry``: the last reply again;
    ``--edit TEXT``: replace your last message with TEXT and answer it)."""
    from neotask_tui.errors import UserError

    if args.retry and (args.edit or args.text is not None):
        raise UserError("send --retry takes no text (--edit TEXT replaces your last message)")
    if not args.retry and args.text is None:
        raise UserError("send needs the message text ('-' reads stdin), or --retry")
    if args.text == "-":
        args.text = sys.stdin.read()
    return asyncio.run(_send(args))


# ------------------------------------------------------------------------------------------ sessions
def cmd_sessions(args: argparse.Namespace) -> int:
    """``neotask sessions list|show|new|reset|archive|restore|undo-reset|fork``."""
    action = args.action
    readonly = action in ("list", "show")
    engine = open_engine(readonly=readonly)
    # A damaged sessions.json (rebuilt from the transcripts) or a quarantined line is told on stderr, so
    # a listing never looks normal over a repair (stdout stays the table or the JSON).
    for note in engine.notices if readonly else ():
        print(inert(f"notice: {note} (see `neotask doctor`)"), file=sys.stderr)
    try:
        if action == "list":
            rows = engine.list_sessions(include_archived=args.all)
            if args.json:
                print_json(rows)
            else:
                from rich import box
                from rich.table import Column, Table

                console = _console()
                # Ids are copied from here: the key and the session id are never cut. A narrow
                # terminal gets fewer columns (no borders, in/out together) instead of cut ids.
                wide = console.width >= 110
                keys = max((len(str(r["key"])) for r in rows), default=3)
                ids = max((len(str(r["session_id"])) for r in rows), default=7)
                ids += 4 if any(r.get("reason") == "fork" for r in rows) else 0  # room for the "└ " of a fork
                cols = [Column("key", no_wrap=True, min_width=keys), Column("session", no_wrap=True, min_width=ids),
                        Column("last activity", overflow="fold")]
                cols += [Column(h) for h in (("in", "out", "cache r/w", "compactions") if wide else ("in/out",))]
                t = Table(*cols, Column("state", no_wrap=True), box=box.HEAVY_HEAD if wide else None,
                          pad_edge=wide)
                from neotask_tui.engine.session.branch import tree_rows

                for depth, row in tree_rows(rows):  # a fork right under the session it branched from
                    c = row.get("counters") or {}
                    when = str(row.get("last_activity_at", ""))[:19].replace("T", " ")
                    state = "archived" if row["archived"] else "current"
                    if row.get("reason") == "fork" and isinstance(row.get("fork_at"), int):
                        state += f" · fork at e:{row['fork_at']}"
                    sid = ("  " * (depth - 1) + "└ " if depth else "") + str(row["session_id"])
                    if wide:
                        t.add_row(row["key"], sid, when, str(c.get("input", "")), str(c.get("output", "")),
                                  f"{c.get('cache_read', '')}/{c.get('cache_write', '')}" if c else "",
                                  str(row.get("compaction_count", "")), state)
                    else:
                        t.add_row(row["key"], sid, when, f"{c.get('input', 0)}/{c.get('output', 0)}", state)
                if not console.is_terminal:  # piped: every row on one line, at the table's full width (a
                    # long key would otherwise squeeze "last activity" into one character per line)
                    full = console.measure(t, options=console.options.update_width(10_000)).maximum
                    console.width = max(console.width, full)
                console.print(t)
            return 0
        if action == "show":
            info = engine.session_info(_key(args, engine))
            if args.json:
                print_json(info)
            else:
                _console().print_json(data=info)
            return 0
        if action in ("new", "reset"):
            key = _key(args, engine)
            r = asyncio.run(engine.new_session(key) if action == "new" else engine.reset_session(key))
            return _done(args, r.to_dict(), f"{action}: {key} → {r.new_session_id}")
        if action == "undo-reset":
            undone = asyncio.run(engine.undo_reset(_key(args, engine)))
            return _done(args, undone.to_dict(), undone.line)
        if action == "archive":
            done = asyncio.run(engine.cleanup(args.days))
            return _done(args, [r.to_dict() for r in done], f"archived {len(done)} session(s)")
        if action == "fork":
            from neotask_tui.commands.branch import parse_event_id

            key = _key(args, engine)
            at = parse_event_id(args.at) if args.at else None
            old = engine.current_record(key, create=False).session_id if engine.store.get(key) else None
            rec = asyncio.run(engine.fork_session(key, at, from_session=args.from_session))
            data = {**rec.to_dict(), "archived": old}
            return _done(args, data, f"forked {rec.parent_session_id} at e:{rec.fork_at}: {key} → {rec.session_id}"
                                     + (f" ({old} archived)" if old else ""))
        if action == "restore":
            if not args.key:
                from neotask_tui.errors import UserError

                raise UserError("sessions restore needs a session id")
            rec = asyncio.run(engine.restore(args.key))
            return _done(args, rec.to_dict(), f"restored {rec.session_id} as current for {rec.key}")
        return 2
    finally:
        engine.close()


def _done(args: argparse.Namespace, data: Any, text: str) -> int:
    if getattr(args, "json", False):
        print_json(data)
    else:
        _console().print(text)
    return 0


# ---------------------------------------------------------------------------------------- transcript
def cmd_transcript(args: argparse.Namespace) -> int:
    """``neotask transcript KEY|SESSION_ID [--archived] [--lineage] [--json] [--format md|jsonl --output PATH]``
    (read-only; ``--output`` into the data dir's ``exports/`` takes the data-dir lock for the write)."""
    if args.output is not None or args.format is not None:
        return _transcript_export(args)
    engine = open_engine(readonly=True)
    try:
        target = args.target or engine.default_key()
        res: list[Event] | dict[str, list[Event]]
        if args.lineage:
            from neotask_tui.commands.core import export_groups

            groups, note = export_groups(engine, _session_of(engine, target), True)
            if note:
                print(note.lstrip("; "), file=sys.stderr)
            res = {str(g[0].data.get("session_id")): g for g in groups if g}
        else:
            res = engine.transcript(target, archived=args.archived)
        if args.json:
            if isinstance(res, dict):
                print_json({sid: [e.to_dict() for e in evs] for sid, evs in res.items()})
            else:
                print_json([e.to_dict() for e in res])
            return 0
        from neotask_tui.commands.core import export_markdown

        groups_ = res.values() if isinstance(res, dict) else [res]
        console = _console()
        if isinstance(res, dict) and not res:
            console.print(f"no archived sessions for {target}")
        # The Markdown export's text, not rendered: each message as stored, every word and line
        # (rendering moved an image to the front of its line and cut words at the width, decoded
        # `&lt;` and dropped `<b>`), made inert by the console; lines wrap in the terminal, uncut.
        for evs in groups_:
            console.print(export_markdown(list(evs)))
        return 0
    finally:
        engine.close()


def _session_of(engine: Engine, target: str) -> str:
    """The session id a transcript target names (a key's current session, or the id itself)."""
    from neotask_tui.storage.keys import validate_key  # not at import time: `neotask` alone starts the app

    if target.startswith("agent:"):
        rec = engine.store.get(validate_key(target))
        if rec is None:
            raise UserError(f"no session for {target}")
        return rec.session_id
    engine.store.transcript_path(target)  # an unknown id is a one-line error
    return target


def _transcript_export(args: argparse.Namespace) -> int:
    """``neotask transcript KEY --format md|jsonl --output PATH [--lineage]``: the export ``/export``
    writes, to a file or folder of your choice (same refusals: never into the data dir but its
    ``exports/``, never over an existing file or a dangling link; written atomically)."""
    from pathlib import Path

    from neotask_tui import paths
    from neotask_tui.commands.core import export_body, export_groups, export_target, write_export
    from neotask_tui.storage.lock import DataLock

    if args.archived:
        raise UserError("--archived lists transcripts; export one by its session id (or use --lineage)")
    if args.output is None:
        raise UserError("--format needs --output PATH (a .md/.jsonl file or a folder)")
    target = Path(args.output).expanduser()
    fmt = args.format or ("jsonl" if target.suffix.lower() == ".jsonl" else "md")
    if not target.is_dir() and target.suffix.lower() not in (".md", ".jsonl"):
        raise UserError("--output is a folder or a .md/.jsonl file")
    engine = open_engine(readonly=True)
    try:
        sid = _session_of(engine, args.target or engine.default_key())
        groups, note = export_groups(engine, sid, args.lineage)
        out = export_target(target, fmt, sid + ("-lineage" if args.lineage else ""))
        body = export_body(groups, fmt)
        inside = out.parent.resolve().is_relative_to(paths.data_dir().resolve())
        if inside:  # exports/ is the data dir's: written under the one-writer lock
            with DataLock():
                out = write_export(out, body, default=False)
        else:
            out = write_export(out, body, default=False)
        n = sum(len(g) for g in groups)
        data = {"path": str(out.resolve()), "events": n,
                "sessions": [str(g[0].data.get("session_id")) for g in groups if g]}
        return _done(args, data, f"exported {n} events from {len(groups)} session(s) to {out.resolve()}"
                                 f"{note}")
    finally:
        engine.close()


# -------------------------------------------------------------------------------------------- search
def cmd_search(args: argparse.Namespace) -> int:
    """``neotask search QUERY [--agent A] [--since DATE] [--limit N] [--json]``.

    Takes the data-dir lock when it is free, to bring the index up to date first; beside a lock
    holder (the app) it reads the index and searches what is not indexed yet directly.
    """
    from neotask_tui.commands.search import hit_label, parse_limit
    from neotask_tui.engine.session.lifecycle import local_zone
    from neotask_tui.errors import DataDirError, LockedError, UserError
    from neotask_tui.storage.keys import validate_agent_id
    from neotask_tui.storage.lock import DataLock
    from neotask_tui.storage.search import MARK_CLOSE, MARK_OPEN, SearchIndex, parse_since

    query = " ".join(args.query)
    agent = validate_agent_id(args.agent) if args.agent is not None else None  # "" is an error, not "any"
    since = parse_since(args.since, tz=local_zone()) if args.since is not None else None
    try:
        limit = parse_limit(args.limit)
    except ValueError as e:
        raise UserError(str(e)) from None
    import contextlib

    lock = DataLock()
    # beside a writer, or on a data dir that cannot be written: read what is indexed, scan the rest
    with contextlib.suppress(LockedError, DataDirError):
        lock.acquire()
    try:
        index = SearchIndex(writable=lock.held)
        try:
            kw = {} if limit is None else {"limit": limit}
            res = index.search(query, agent=agent, since=since, **kw)
        finally:
            index.close()
    finally:
        lock.release()
    if args.json:
        print_json(res.to_dict())
        return 0
    from rich.text import Text

    console = _console()
    for n in res.notices:
        sys.stderr.write(inert(f"neotask: {n}") + "\n")
    for h in res.hits:
        console.print(Text(inert(hit_label(h)), style="dim"))
        line = Text("  ")
        inside = False
        for part in h.line.replace(MARK_CLOSE, MARK_OPEN).split(MARK_OPEN):
            if part:
                line.append(inert(part), style="bold" if inside else "")
            inside = not inside
        console.print(line)
    if not res.hits:
        console.print(f"no message matches {inert(query)}")
    elif res.more:
        console.print(f"(more than {len(res.hits)} matched: narrow the query, or --limit N)", style="dim")
    return 0


# -------------------------------------------------------------------------------------------- doctor
def cmd_doctor(args: argparse.Namespace) -> int:
    """``neotask doctor [--fix] [--json]``: integrity of index vs transcripts, torn lines, orphans."""
    from neotask_tui.cli.doctor import run_doctor

    report = run_doctor(fix=args.fix)
    if args.json:
        print_json(report)
    else:
        from neotask_tui.text.console import styled  # paths and file names are shown literally
        from neotask_tui.text.terminal import inert_line  # a line break in a name cannot forge a line

        console = _console()
        console.print(styled(("data dir", "bold"), f" {report['data_dir']}"))
        console.print(styled(("provider", "bold"), f" {report['provider']}"))
        if report.get("memory_workspace"):
            console.print(styled(("memory workspace", "bold"), f" {report['memory_workspace']}",
                                 " (MEMORY.md and memory/*.md; edit them, they are the source of truth)"))
        # `--fix` is suggested only for what it changes; a line it does not change says so.
        manual = set(report.get("manual", []))
        by_hand = " — needs manual action (--fix does not change it)"
        for p in report["problems"]:
            console.print(styled(("✗", "red"), f" {inert_line(p)}", by_hand if p in manual else ""))
        for f in report["fixed"]:
            console.print(styled(("fixed", "green"), f" {inert_line(f)}"))
        for m in report.get("permissions", []):  # readable by others: told; `--fix` makes it private
            console.print(styled(("permissions", "yellow"), f" {inert_line(m)}", by_hand if m in manual else
                                 "" if args.fix else " (run `neotask doctor --fix`)"))
        for m in report.get("links", []):  # a hard-linked transcript: told, never changed
            console.print(styled(("link", "yellow"), f" {inert_line(m)}", by_hand))
        for m in report.get("memory_skipped", []):  # not indexed, the user's own files: told, not repaired
            console.print(styled(("memory", "yellow"), f" {inert_line(m)}", by_hand))
        told = sum(len(report.get(k, [])) for k in ("permissions", "links", "memory_skipped"))
        if report["clean"] and told:  # the integrity verdict, not a reassurance about the lines above it
            yours = len(manual)  # clean: every line marked is a warning
            need = f", {yours} need{'s' if yours == 1 else ''} manual action" if yours else ""
            console.print(styled(("clean", "green"), f" (transcripts and index; {told} warning"
                                 f"{'s' if told != 1 else ''} above{need})"))
        elif report["clean"]:
            console.print(styled(("clean", "green")))
        else:
            console.print(styled(("problems found", "yellow"), _doctor_advice(report, args.fix)))
    # 0 only when nothing is left to do: after --fix, a problem it does not change (a setting, a link,
    # a foreign parent, an unusable data dir) is still there, and a script must not read "fixed".
    return 0 if report["clean"] else 1


def _doctor_advice(report: dict[str, Any], fix: bool) -> str:
    """What the "problems found" line adds: ``--fix`` only when it would change one of them, and
    how many need you."""
    if not report.get("usable", True):  # an unusable data dir: its line says what to do
        return ""
    manual = set(report.get("manual", []))
    yours = len(manual)  # the problems and the warnings marked above
    mine = sum(p not in manual for p in report["problems"])
    need = f"{yours} need{'s' if yours == 1 else ''} manual action, marked above"
    if fix or not mine:
        return f" ({need})" if yours else ""
    return f" (run `neotask doctor --fix`; {need})" if yours else " (run `neotask doctor --fix`)"


def cmd_chat(args: argparse.Namespace) -> int:
    """``neotask chat [--plain]``: the app, or the line-based REPL."""
    from neotask_tui.config import load_settings

    if args.plain:
        from neotask_tui.repl import run_repl

        return int(run_repl(load_settings(), key=getattr(args, "session", None)) or 0)
    return run_app(args)


def register(sub: Any) -> None:
    """Add the core subcommands."""
    from neotask_tui.config import setting_arg

    p = sub.add_parser("send", help="send one message and print the reply")
    p.add_argument("text", nargs="?", help="message text ('-' reads stdin)")
    p.add_argument("--session", "-s", dest="key", help="session key")
    p.add_argument("--file", "-f", action="append", metavar="PATH",
                   help="attach a text file to the message (repeatable; @path in the text does the same)")
    p.add_argument("--retry", action="store_true",
                   help="ask again for the last reply (the old one stays in the transcript, marked superseded)")
    p.add_argument("--edit", action="store_true",
                   help="TEXT replaces your last message (kept, marked superseded) and is answered")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_send)

    p = sub.add_parser("sessions", help="list, show, create, reset, fork, archive and restore sessions")
    p.add_argument("action", choices=["list", "show", "new", "reset", "archive", "restore", "undo-reset", "fork"])
    p.add_argument("key", nargs="?", help="session key (or session id for restore)")
    p.add_argument("--at", help="fork: the message to branch at, e:N (default: the last message)")
    p.add_argument("--from", dest="from_session", metavar="SESSION_ID",
                   help="fork: branch this session (e.g. an archived one) instead of the key's current one")
    p.add_argument("--all", action="store_true", help="include archived sessions in the list")
    p.add_argument("--days", type=setting_arg("session", "cleanup_days"), default=None,
                   help="archive sessions untouched this many days (1..36500, like session.cleanup_days)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_sessions)

    p = sub.add_parser("transcript", help="print a transcript")
    p.add_argument("target", nargs="?", help="session key or session id")
    p.add_argument("--archived", action="store_true", help="the key's archived (compacted/reset) transcripts")
    p.add_argument("--lineage", action="store_true",
                   help="the session and its parent sessions (compactions, forks), oldest first")
    p.add_argument("--format", choices=["md", "jsonl"], help="write an export (with --output)")
    p.add_argument("--output", "-o", help="export to this .md/.jsonl file or folder (never over an existing file)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_transcript)

    p = sub.add_parser("search", help="find messages in every session, archived too, by content")
    p.add_argument("query", nargs="+", help='words (all must match), "an exact phrase", prefix*')
    p.add_argument("--agent", help="only sessions of this agent id")
    p.add_argument("--since", help="only messages since a date (2026-11-30), a date-time or a span (7d, 12h)")
    p.add_argument("--limit", help="at most this many hits (1..500, default 20)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("doctor", help="check integrity (and repair with --fix)")
    p.add_argument("--fix", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_doctor)

    p = sub.add_parser("chat", help="interactive chat (the app, or --plain for a line REPL)")
    p.add_argument("--plain", action="store_true", help="prompt-toolkit REPL instead of the full-screen app")
    p.set_defaults(handler=cmd_chat)
