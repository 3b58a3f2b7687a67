"""Slash commands in the app: run through the shared registry, then perform the UI action."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from neotask_tui.commands import CommandResult, dispatch
from neotask_tui.engine import events as ev
from neotask_tui.tui.widgets.transcript import Entry

if TYPE_CHECKING:
    from neotask_tui.tui.app import NeotaskApp


async def show_result(app: NeotaskApp, line: str, res: CommandResult) -> None:
    """The command's text inline (errors as one-line notices with the usage)."""
    if res.error:
        await app.add_entry(Entry(kind="notice", text=res.text, level="error"))
    elif res.text:
        shown = " ".join(line.split())  # the line as typed (one line), so the result says what it answers
        await app.add_entry(Entry(kind="command", title=shown if len(shown) <= 60 else shown[:59] + "…",
                                  text=res.text))


async def run_slash(app: NeotaskApp, line: str) -> None:
    """Run ``line`` (``/name args``)."""
    name = line[1:].split(" ", 1)[0].lower()
    if name == "compact" and "--now" not in line:
        await compact_flow(app, line)
        return
    res = await dispatch(app.engine, app.key, line)
    resets = [e for e in res.events if isinstance(e, ev.SessionReset)]
    if resets:
        await app.load_session()
        for r in resets:
            await app.turns.render_reset(r)
        if res.text and not res.error:
            return
    action = None if res.error else res.action
    if action in (None, "model"):
        await show_result(app, line, res)
    elif action == "quit":
        app.exit(0)
        return
    elif action == "theme":
        await switch_theme(app, (res.data or {}).get("name"))
    elif action == "open_sessions":
        await open_sessions(app, res.data)
    elif action == "open_inbox":
        from neotask_tui.tui.screens.inbox import InboxScreen

        await app.push_screen_wait(InboxScreen(app.engine, app.key))
    elif action == "show_context":
        from neotask_tui.tui.screens.context import ContextScreen

        await app.push_screen_wait(ContextScreen(res.data or {}))
    elif action == "clear":
        await app.load_session()
    else:
        await show_result(app, line, res)
    if name in ("undo-compact", "undo-reset", "restore"):
        await app.load_session()
    else:
        await app.refresh_panels()


async def switch_theme(app: NeotaskApp, name: str | None) -> None:
    """``/theme NAME`` switches; ``/theme`` lists the themes."""
    themes = sorted(app.available_themes)
    if not name:
        rows = "\n".join(f"- `{t}`{' ← current' if t == app.theme else ''}" for t in themes)
        await app.add_entry(Entry(kind="command", title="/theme", text=f"Themes:\n\n{rows}"))
        return
    if name not in app.available_themes:
        near = [t for t in themes if name.lower() in t]
        hint = f" — did you mean {', '.join(near)}?" if near else f" (available: {', '.join(themes)})"
        await app.add_entry(Entry(kind="notice", text=f"/theme: unknown theme {name!r}{hint}", level="error"))
        return
    app.theme = name
    from neotask_tui.tui.themes import save_theme_choice

    try:
        save_theme_choice(name, app.settings.ui.theme)
    except OSError as e:
        app.notify(f"theme: {name} (not saved for the next start: {e.strerror or e})", timeout=5)
        return
    app.notify(f"theme: {name} (kept for the next start)", timeout=2)


async def open_sessions(app: NeotaskApp, rows: Any) -> None:
    """The sessions browser; resuming a key switches the app to it."""
    from neotask_tui.tui.screens.sessions import SessionsScreen

    result = await app.push_screen_wait(SessionsScreen(app.engine, rows if isinstance(rows, list) else None))
    if result and result[0] == "resume":
        app.key = result[1]
        await app.load_session()


async def compact_flow(app: NeotaskApp, line: str) -> None:
    """Preview → review modal → accept (commit the reviewed summary) / edit / cancel."""
    from neotask_tui.tui.screens.compact_review import CompactReviewScreen

    app.main.query_one("#status").activity = "drafting the compaction summary…"  # type: ignore[attr-defined]
    try:
        res = await dispatch(app.engine, app.key, line)
    finally:
        app.main.query_one("#status").activity = ""  # type: ignore[attr-defined]
    if res.error or res.action != "compact_review":
        await show_result(app, line, res)
        await app.refresh_panels()
        return
    data = res.data or {}
    choice = await app.push_screen_wait(CompactReviewScreen(data))
    if choice is None:
        await app.add_entry(Entry(kind="notice", text="compaction cancelled — nothing changed"))
        return
    _verb, summary = choice
    instructions = (data.get("apply") or {}).get("instructions") or data.get("instructions")
    try:
        from neotask_tui.commands.compaction import apply_review

        done = await apply_review(app.engine, app.key, summary or str(data.get("summary", "")), instructions)
    except Exception as e:  # surfaced inline; the session is unchanged when the commit fails
        await app.add_entry(Entry(kind="notice", text=f"compaction failed: {e}", level="error"))
        return
    await app.load_session()
    d = done.data or {}
    app.notify(f"compacted: {int(d.get('tokens_before', 0)):,} → {int(d.get('tokens_after', 0)):,} tokens")


async def watch_memory(app: NeotaskApp) -> None:
    """Keep the memory index current while the app runs (edits made in another editor), with a
    short notice per reindex; a failure to start is a notice, never an error."""

    def changed(stats: Any) -> None:
        files = ", ".join(stats.files_changed)
        with contextlib.suppress(Exception):  # the app may be exiting
            if files or stats.chunks_embedded or stats.chunks_deleted:
                app.call_from_thread(app.notify, f"memory reindexed: {files or 'memory files'}", timeout=3)
            for note in stats.notices:  # a skipped file (link, FIFO, too big, binary), told once
                app.call_from_thread(app.notify, note, severity="warning", timeout=10)

    try:
        await app.engine.watch_memory(app.key, changed)
    except Exception as e:  # the watcher is a convenience: search checks staleness anyway
        app.notify(f"memory file watching is off: {e}", severity="warning", timeout=6)
