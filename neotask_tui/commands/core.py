"""Core slash commands: sessions, context, export, help, model, theme, quit."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neotask_tui.commands.intents import ListThemes, OpenSessions, Quit, ShowContext, ShowHelp, SwitchTheme
from neotask_tui.commands.registry import (
    CommandResult,
    command,
    help_groups,
    help_text,
    inline_code,
    split_args,
    usage_error,
)
from neotask_tui.engine.context.attachments import attachments_of
from neotask_tui.errors import NeotaskError
from neotask_tui.storage.events import Event, superseded_ids
from neotask_tui.text.terminal import inert
from neotask_tui.tuning import EXPORT_DATA_DIR_DEPTH

if TYPE_CHECKING:
    from neotask_tui.config import Settings
    from neotask_tui.engine.context.assembly import AssembledContext
    from neotask_tui.engine.facade import Engine


@command("help", "/help [NAME]", "List every command, grouped (NAME: that command alone)")
async def _help(engine: Engine, key: str, args: str) -> CommandResult:
    a = split_args(args)
    if len(a) > 1:
        return usage_error("help", "one command name")
    if a:
        text = help_text(a[0])
        if not text:
            return CommandResult(text=f"unknown command /{a[0].lstrip('/')[:40]} (type /help for the list)",
                                 error=True)
        return CommandResult(text=text)
    groups = [(title, [(c.usage, c.help) for c in cmds]) for title, cmds in help_groups()]
    return CommandResult(text=help_text(), data=groups, intent=ShowHelp(groups))


@command("new", "/new", "Start a fresh session (old one archived); session state still active carries over")
async def _new(engine: Engine, key: str, args: str) -> CommandResult:
    if args:
        return usage_error("new", "no arguments expected")
    r = await engine.new_session(key)
    carried = f"; {r.carried} state entr{'y' if r.carried == 1 else 'ies'} carried over" if r.carried else ""
    return CommandResult(text=f"new session {r.new_session_id} (previous {r.old_session_id} archived{carried})",
                         events=[r])


@command("reset", "/reset", "Start a fresh session and clear the session state (nothing carries over)")
async def _reset(engine: Engine, key: str, args: str) -> CommandResult:
    if args:
        return usage_error("reset", "no arguments expected")
    r = await engine.reset_session(key)
    text = f"session reset: {r.new_session_id} (previous {r.old_session_id} archived, state cleared)"
    return CommandResult(text=text, events=[r])


@command("undo-reset", "/undo-reset", "Bring back the session replaced by the last automatic reset")
async def _undo_reset(engine: Engine, key: str, args: str) -> CommandResult:
    undone = await engine.undo_reset(key)
    return CommandResult(text=undone.line)


@command("sessions", "/sessions", "Browse sessions: resume, view archived, restore")
async def _sessions(engine: Engine, key: str, args: str) -> CommandResult:
    rows = engine.list_sessions(include_archived=True)
    lines = [f"- `{r['key']}` {r['session_id']}{' (archived)' if r['archived'] else ''}" for r in rows[:50]]
    return CommandResult(text="\n".join(lines) or "no sessions", data=rows, intent=OpenSessions(rows))


def recall_label(basis: str, query: str, items: int) -> str:
    """One line saying what a context preview's recall section was computed for."""
    q = " ".join(query.split())
    q = q if len(q) <= 60 else q[:59] + "…"
    found = f"{items} recalled memor{'y' if items == 1 else 'ies'}" if items else "nothing recalled"
    if basis == "draft":
        return f"recall: {found} for your draft message ({q!r}), as the next call would send them"
    if basis == "last_user_message":
        return (f"recall: {found} for your last message ({q!r}); the next message recalls for itself "
                "(/context TEXT previews a draft)")
    return "recall: nothing yet (no message to recall for; /context TEXT previews a draft)"


def context_payload(ctx: AssembledContext) -> dict[str, Any]:
    """A preview as data: the ledger, every message that would be sent, and what recall was for."""
    msgs: list[dict[str, Any]] = []
    for m, s in zip(ctx.messages, ctx.section_of, strict=False):
        d: dict[str, Any] = {"role": m.role, "content": m.content, "section": s}
        if m.tool_calls:
            d["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
        if m.tool_call_id:
            d["tool_call_id"] = m.tool_call_id
        if m.name:
            d["name"] = m.name
        msgs.append(d)
    items = sum(m["content"].count("\n</recalled-memory>") for m in msgs if m["section"] == "recall")
    recall = {"basis": ctx.recall_basis, "query": ctx.recall_query, "items": items,
              "label": recall_label(ctx.recall_basis, ctx.recall_query, items), "note": ctx.recall_note}
    tools = list(ctx.tools)
    return {"ledger": ctx.ledger.to_dict(), "messages": msgs, "recall": recall, "tools": tools,
            "tool_tokens": int(ctx.tool_tokens)}


def tools_line(data: dict[str, Any]) -> str:
    """What the call sends besides the messages: the tool definitions and their tokens."""
    n = len(data.get("tools") or [])
    if not n:
        return "tools: none (no tool definitions are sent with this call)"
    tt = int(data.get("tool_tokens", 0))
    window = int((data.get("ledger") or {}).get("window", 0))
    return (f"tools: {n} definition{'s' if n != 1 else ''} sent with the call, {tt:,} tokens: not in the "
            f"total above, which counts the messages, and not in its window ({window:,} of the model's "
            f"{window + tt:,})")


def compaction_line(led: Mapping[str, Any]) -> str:
    """Where the context stands against automatic compaction (what the gauge's warning measures), from
    a ledger's JSON form (``Ledger.to_dict``)."""
    at = int(led.get("compaction_at") or 0)
    if at <= 0:
        return "compaction: automatic compaction is off (`/compact` still works)"
    history = int(led.get("without_recall") or 0)
    return (f"compaction: without recall the context is {history:,} tokens; automatic compaction fires at "
            f"{at:,} (`compaction.threshold` of the window less recall's reserve, and not before it can fold as "
            "much raw history as it keeps)")


@command("context", "/context [DRAFT]", "Show exactly what the next call will send (recall included)")
async def _context(engine: Engine, key: str, args: str) -> CommandResult:
    ctx = await engine.preview(key, args or None)
    data = context_payload(ctx)
    led = ctx.ledger
    rows = ["| section | tokens |", "|---|---|"] + [f"| {k} | {v:,} |" for k, v in led.sections.items()]
    rows.append(f"| **total** | **{led.total:,}** of {led.window:,} ({led.fill:.0%}, {led.source}) |")
    rows += ["", tools_line(data), "", compaction_line(data["ledger"]), "", data["recall"]["label"]]
    if ctx.recall_note:
        rows.append(f"note: {ctx.recall_note}")
    rows += [f"note: {n}" for n in led.notices]  # what the call leaves out or trims (state entries, a long message)
    for m in data["messages"]:
        if m["section"] == "recall":
            # a code fence longer than any backtick run inside, so the block shows the text as sent
            ticks = "`" * max(3, max((len(r) for r in re.findall(r"`+", m["content"])), default=0) + 1)
            rows += ["", f"{ticks}text", m["content"], ticks]
    return CommandResult(text="\n".join(rows), data=data, intent=ShowContext(data))


def export_markdown(events: list[Event]) -> str:
    """A readable Markdown export of a transcript (what ``/retry`` or ``/edit`` replaced is marked)."""
    out: list[str] = []
    gone = superseded_ids(events)
    for e in events:
        if e.type == "session":
            out.append(f"# Session {e.data.get('session_id')}\n\nkey `{e.data.get('key')}`, started {e.ts}\n")
            if e.data.get("reason") == "fork":
                out.append(f"_forked from {e.data.get('parent_session_id')} at e:{e.data.get('fork_at')}_\n")
        elif e.type == "message":
            mark = " _(interrupted)_" if e.data.get("status") == "interrupted" else ""
            if e.id in gone:
                mark += " _(superseded: kept, not sent)_"
            out.append(f"## {e.role} · e:{e.id} · {e.ts}{mark}\n\n{e.content}\n")
            for a in attachments_of(e.data):  # the file as it was attached (redacted), in a fence it cannot close
                ticks = "`" * max(3, max((len(r) for r in re.findall(r"`+", a.text)), default=0) + 1)
                # neither the file's name nor its text is something you typed: both inert, so `cat` of
                # the export acts on no control the file carried (OSC 52, a hidden OSC 8 link, ESC[2J)
                name = inline_code(a.summary())
                out.append(f"attached: {name}\n\n{ticks}\n{inert(a.text.rstrip(chr(10)))}\n{ticks}\n")
        elif e.type == "compaction":
            out.append(f"## compaction · e:{e.id}\n\n{e.data.get('summary', '')}\n")
        elif e.type in ("tool_call", "tool_result"):
            body = json.dumps(e.data.get("arguments"), ensure_ascii=False) if e.type == "tool_call" else e.content
            out.append(f"### {e.type} `{e.data.get('name', '')}` · e:{e.id}\n\n```\n{body}\n```\n")
    return "\n".join(out)


def export_body(groups: list[list[Event]], fmt: str) -> str:
    """The text of an export: ``md`` (readable, one part per session, oldest first) or ``jsonl``
    (every transcript's lines as stored, one after another; each starts with its session header)."""
    if fmt == "jsonl":
        return "".join(e.to_line() for evs in groups for e in evs)
    parts = [export_markdown(evs) for evs in groups]
    return "\n---\n\n".join(parts)


def export_target(target: Path | None, fmt: str, name: str) -> Path:
    """Where an export of ``name`` goes: the data dir's ``exports/`` (no target: the first free name
    there is taken when written, see :func:`write_export`), into a folder, or a file.

    Raises:
        UserError: one line, nothing written: the file exists (a dangling link too: it is not
            replaced), its folder is missing, or it is inside the data dir but not in ``exports/``
            (there an export would become something else: a memory file recalled as consented
            memory, an "orphaned transcript", an index) — through a symbolic link inside the data
            dir or a second view of it (a bind mount) too.
    """
    import os

    from neotask_tui import paths
    from neotask_tui.errors import UserError

    if target is None:
        return paths.refuse_links(paths.exports_dir()) / f"{name}.{fmt}"
    out = target / f"{name}.{fmt}" if target.is_dir() else target
    if os.path.lexists(out):
        raise UserError(f"{out} exists — choose another path (nothing was written)")
    if not out.parent.is_dir():
        raise UserError(f"no folder {out.parent} (nothing was written)")
    paths.refuse_links(out.parent.absolute())  # a link inside the data dir is not followed
    data = paths.data_dir().resolve()
    where = out.parent.resolve()
    exports = data / "exports"  # its real place: an exports/ that is a link was refused above
    refused = UserError(f"{out.parent} is inside Neotask's data dir; export to {exports} or outside it "
                        "(nothing was written)")
    if where.is_relative_to(data):
        if not where.is_relative_to(exports):
            raise refused
    elif paths.data_dir_view(where, EXPORT_DATA_DIR_DEPTH) is not None:  # the data dir seen again (a bind mount)
        raise refused
    return out


def write_export(out: Path, body: str, *, default: bool) -> Path:
    """Write an export to ``out`` atomically, never replacing anything; returns where it went.

    ``default`` (the data dir's ``exports/``): when ``out`` is taken, the next free name is used
    (``<session>-2.md`` …, at most :data:`~neotask_tui.tuning.EXPORT_NAME_TRIES`).

    Raises:
        UserError: something appeared at ``out`` meanwhile (``default`` off), or no name was free.
    """
    from neotask_tui.errors import UserError
    from neotask_tui.storage.atomic import atomic_create_bytes
    from neotask_tui.tuning import EXPORT_NAME_TRIES

    data = body.encode("utf-8")
    for n in range(1, (EXPORT_NAME_TRIES if default else 1) + 1):
        path = out if n == 1 else out.with_name(f"{out.stem}-{n}{out.suffix}")
        try:
            atomic_create_bytes(path, data)
        except FileExistsError:
            continue
        return path
    if default:
        raise UserError(f"{EXPORT_NAME_TRIES} exports named {out.stem}… already in {out.parent}; "
                        "export to a path of your choice (nothing was written)")
    raise UserError(f"{out} exists — choose another path (nothing was written)")


def parse_export_args(args: list[str]) -> tuple[str | None, Path | None, bool]:
    """``[md|jsonl] [PATH] [--lineage]`` → (format or None, target or None, lineage).

    Raises:
        ValueError: a usage problem (one line).
    """
    lineage = "--lineage" in args
    a = [x for x in args if x != "--lineage"]
    fmt = None
    if a and a[0].lower() in ("md", "jsonl"):
        fmt, a = a[0].lower(), a[1:]
    if len(a) > 1 or any(x.startswith("--") for x in a):
        raise ValueError("a format (md or jsonl), one path and --lineage")
    target = Path(a[0]).expanduser() if a else None
    if target is not None and not target.is_dir() and target.suffix.lower() not in (".md", ".jsonl"):
        raise ValueError("format must be md or jsonl; PATH is a folder or a .md/.jsonl file")
    if fmt is None:
        fmt = "jsonl" if target is not None and target.suffix.lower() == ".jsonl" else None
    return fmt, target, lineage


def export_groups(engine: Engine, session_id: str, lineage: bool) -> tuple[list[list[Event]], str]:
    """The transcripts an export holds (the session, or its lineage oldest first, within its agent)
    and a note on where the lineage stopped early ("" when it did not): a missing ancestor, or a
    header naming another agent's session."""
    if not lineage:
        return [list(engine.store.events(session_id))], ""
    chain, stop, why = engine.store.lineage_stop(session_id)
    note = ""
    if why == "missing":
        note = f"; parent {stop} has no transcript, the lineage stops there"
    elif why == "agent":
        note = (f"; parent {stop} is another agent's session (one agent never sees another's), "
                "the lineage stops there")
    return [list(engine.store.events(sid)) for sid in chain], note


@command("export", "/export [md|jsonl] [PATH] [--lineage]",
         "Export to PATH or exports/ (--lineage: with parent sessions)")
async def _export(engine: Engine, key: str, args: str) -> CommandResult:
    try:
        fmt, target, lineage = parse_export_args(split_args(args))
    except ValueError as e:
        return usage_error("export", str(e))
    fmt = fmt or "md"
    rec = engine.current_record(key)
    groups, note = export_groups(engine, rec.session_id, lineage)
    name = rec.session_id + ("-lineage" if lineage else "")
    try:
        out = write_export(export_target(target, fmt, name), export_body(groups, fmt), default=target is None)
    except NeotaskError as e:
        return CommandResult(text=f"/export: {e}", error=True)
    n = sum(len(g) for g in groups)
    sessions = f" from {len(groups)} sessions" if lineage else ""
    return CommandResult(text=f"exported {n} events{sessions} to {out.resolve()}{note}",
                         data={"path": str(out.resolve()), "events": n,
                               "sessions": [str(g[0].data.get("session_id")) for g in groups if g]})


def _current(engine: Engine) -> tuple[str, str, str, bool]:
    """(provider, model, why, loaded) of the provider that answers the next turn."""
    p = engine.provider
    if p is not None:
        return p.name, p.model, engine.provider_reason, True
    c = engine.choose_provider()
    return c.name, c.model, c.reason, False


def welcome_text(engine: Engine) -> str:
    """The first screen's welcome: which model answers, what the bundled one is, how to connect a
    real one, where the commands are."""
    from neotask_tui.providers.selection import is_bundled

    try:
        name, model, why, _loaded = _current(engine)
    except (NeotaskError, ValueError) as e:
        return f"**Welcome to Neotask.** No model can answer yet: {e}. `/model` lists the choices."
    out = [f"**Welcome to Neotask.** Answering: **{name} · {model}** ({why})."]
    if is_bundled(name, model, engine.settings):
        out.append("The bundled SmolLM2-135M is a small offline demo: it runs without a key or a network, "
                   "and it makes up tools, URLs and facts, even with the right memory recalled. For real "
                   "answers connect a model: set `OPENAI_API_KEY` or `ANTHROPIC_API_KEY`, run Ollama, set "
                   "`provider.base_url` to any OpenAI-compatible URL, or `provider.local_model_path` to a "
                   "GGUF file (`config.toml`); `/model` lists what you can switch to now.")
    out.append("`/help` lists every command (F1 in the app); `/model NAME` switches the model for the next turn.")
    return "\n\n".join(out)


def history_entry(line: str, settings: Settings) -> str | None:
    """What the input history (``history``, shared by the app and the REPL) keeps of an input
    ``line``: the line as typed, with a configured API key masked as it is in a message
    (:func:`~neotask_tui.providers.selection.without_configured_keys`); None for what is refused as an
    API key (:func:`~neotask_tui.providers.selection.looks_like_key`), and kept nowhere: a ``/model``
    whose name or model looks like one, or a key pasted after ``/`` (a command name no command has).
    A message (not a slash command) never loads the command registry."""
    from neotask_tui.providers.selection import looks_like_key, without_configured_keys

    if line.lstrip().startswith("/"):
        from neotask_tui.commands.registry import REGISTRY, parse

        parsed = parse(line)
        if parsed is not None and parsed[0] == "model":
            if any(looks_like_key(a, settings) for a in split_args(parsed[1])):
                return None
        elif parsed is not None and parsed[0] not in REGISTRY and looks_like_key(parsed[0], settings):
            return None
    return without_configured_keys(line, settings)


@command("model", "/model [NAME [MODEL]]",
         "Show the model, why it answers and what you can switch to (NAME: switch from the next turn)")
async def _model(engine: Engine, key: str, args: str) -> CommandResult:
    import asyncio

    a = split_args(args)
    if len(a) > 2:
        return usage_error("model", "a provider name and at most one model")
    if a:
        try:
            c = await engine.switch_provider(a[0], a[1] if len(a) > 1 else None)
        except (NeotaskError, ValueError) as e:
            return CommandResult(text=f"/model: {str(e).splitlines()[0]}", error=True)
        return CommandResult(text=f"the next turn answers with **{c.name} · {c.model}** — {c.reason}",
                             data={"provider": c.name, "model": c.model, "reason": c.reason})
    name, model, why, loaded = _current(engine)
    options = await asyncio.to_thread(engine.model_options, probe=True)
    lines = [f"**{name} · {model}** — {why}{'' if loaded else ' (loads on the first message)'}", "",
             "You can switch to (`/model NAME [MODEL]`, for this run):"]
    for o in options:
        mark = " ← current" if o.name == name else ""
        state = "ready" if o.ready else "needs setup"
        lines.append(f"- `{o.name}` · {o.model} — {state}: {o.detail}{mark}")
    data = {"provider": name, "model": model, "reason": why,
            "options": [{"name": o.name, "model": o.model, "ready": o.ready, "detail": o.detail} for o in options]}
    return CommandResult(text="\n".join(lines), data=data)


@command("theme", "/theme [NAME]", "Switch the colour theme (no name: list themes)")
async def _theme(engine: Engine, key: str, args: str) -> CommandResult:
    a = split_args(args)
    if len(a) > 1:
        return usage_error("theme", "one theme name")
    return CommandResult(text="", data={"name": a[0] if a else None},
                         intent=SwitchTheme(a[0]) if a else ListThemes())


@command("quit", "/quit", "Leave the app")
async def _quit(engine: Engine, key: str, args: str) -> CommandResult:
    return CommandResult(intent=Quit())
