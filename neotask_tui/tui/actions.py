"""Slash commands in the app: run through the shared registry, then perform the command's UI intent."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from neotask_tui.commands import CommandResult, dispatch
from neotask_tui.commands.intents import (
    AttachFiles,
    CopyText,
    EditLast,
    ListThemes,
    OpenInbox,
    OpenSessions,
    Quit,
    Regenerate,
    ReviewCompaction,
    ShowContext,
    ShowHelp,
    ShowSearch,
    SwitchTheme,
)
from neotask_tui.engine import events as ev
from neotask_tui.providers.selection import without_configured_keys
from neotask_tui.tui.main_view import ChatState, MainView
from neotask_tui.tui.messages import EditRequested
from neotask_tui.tui.panels import Panels
from neotask_tui.tui.turns import TurnRenderer
from neotask_tui.tui.typeahead import TypeAhead
from neotask_tui.tui.widgets.transcript import Entry

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine
    from neotask_tui.memory.types import ReindexStats


_R = TypeVar("_R")


class SlashCommands:
    """Runs ``/commands`` for the main screen and performs what they ask of the UI.

    ``app`` is only used for what Textual's App offers (screens, themes, notifications, exit);
    ``configured_theme`` is ``ui.theme`` from the settings (a ``/theme`` choice is saved against it);
    ``regenerate`` streams the turn ``/retry`` (None) or ``/edit TEXT`` asks for, as part of the
    command (so what was typed after the command waits for that turn too); ``typeahead`` guards the
    screens commands open.
    """

    def __init__(self, app: App[int], view: MainView, state: ChatState, engine: Engine, panels: Panels,
                 turns: TurnRenderer, configured_theme: str,
                 regenerate: Callable[[str | None], Awaitable[None]], typeahead: TypeAhead) -> None:
        self.app = app
        self.view = view
        self.state = state
        self.engine = engine
        self.panels = panels
        self.turns = turns
        self.configured_theme = configured_theme
        self.regenerate = regenerate
        self.typeahead = typeahead

    async def open_screen(self, screen: Screen[_R]) -> _R | None:
        """Open ``screen`` and wait for its result; opened while you typed, your typing keeps going
        to the prompt until you turn to it (``tui/typeahead.py``)."""
        self.typeahead.opening(screen)
        return await self.app.push_screen_wait(screen)

    async def show_result(self, line: str, res: CommandResult) -> None:
        """The command's text inline (errors as one-line notices with the usage)."""
        if res.error:
            await self.view.add_entry(Entry(kind="notice", text=res.text, level="error"))
        elif res.text:
            # the line as typed (one line), so the result says what it answers; a configured API key
            # in it masked, as the input history keeps it (commands.core.history_entry)
            shown = " ".join(without_configured_keys(line, self.engine.settings).split())
            await self.view.add_entry(Entry(kind="command", title=shown if len(shown) <= 60 else shown[:59] + "…",
                                            text=res.text))

    async def run(self, line: str) -> None:
        """Run ``line`` (``/name args``)."""
        app = self.app
        name = line[1:].split(" ", 1)[0].lower()
        if name == "compact" and "--now" not in line:
            await self.compact_flow(line)
            return
        res = await dispatch(self.engine, self.state.key, line)
        resets = [e for e in res.events if isinstance(e, ev.SessionReset)]
        if resets:
            await self.panels.load_session()
            for r in resets:
                await self.turns.render_reset(r)
            if res.text and not res.error:
                return
        reloads = name in ("undo-compact", "undo-reset", "restore", "fork") and not res.error
        if reloads:  # reload first: the confirmation must not be wiped by the transcript it brings back
            await self.panels.load_session()
        match None if res.error else res.intent:
            case None | ReviewCompaction():  # reviews are compact_flow's; `--now --preview` shows the text
                await self.show_result(line, res)
            case Quit():
                await app.run_action("quit")
                return
            case ListThemes():
                await self.list_themes()
            case SwitchTheme(theme=theme):
                await self.switch_theme(theme)
            case OpenSessions(rows=rows):
                await self.open_sessions(rows)
            case OpenInbox():
                from neotask_tui.tui.screens.inbox import InboxScreen

                await self.open_screen(InboxScreen(self.engine, self.state.key))
            case ShowContext(data=data):
                from neotask_tui.tui.screens.context import ContextScreen

                await self.open_screen(ContextScreen(data))
            case ShowSearch(result=result):
                from neotask_tui.tui.screens.search import SearchScreen

                found = await self.open_screen(SearchScreen(self.engine, result))
                if found and found[0] == "resume":  # "resume here" forked at a hit: go on there
                    self.state.key = found[1]
                    await self.panels.load_session()
            case ShowHelp(groups=groups):
                from neotask_tui.tui.screens.help import HelpScreen

                await self.open_screen(HelpScreen(groups, self.key_bindings()))
            case CopyText() as copy:
                await self.copy(copy)
            case AttachFiles() as attach:
                await self.view.add_entry(Entry(kind="notice", text=self.state.pending.apply(attach)))
            case Regenerate(text=text):
                await self.regenerate(text)
                return
            case EditLast(text=text, event_id=event_id):
                app.post_message(EditRequested(text, event_id))
                return
        if not reloads:  # /model NAME: the status line names the next turn's model (full re-reads the choice)
            await self.panels.refresh(full=name == "model" and not res.error)

    async def copy(self, copy: CopyText) -> None:
        """Put ``copy`` on the terminal clipboard (OSC 52), then the fallbacks; say what was copied."""
        from neotask_tui.commands.clipboard import deliver

        self.app.copy_to_clipboard(copy.text)
        try:
            notice = await asyncio.to_thread(deliver, copy, osc52_sent=True)
        except Exception as e:  # the fallback file could not be written: OSC 52 was still sent
            notice = f"copied {copy.what} to the terminal clipboard (OSC 52); the fallback failed: {e}"
        await self.view.add_entry(Entry(kind="notice", text=notice))

    async def copy_entry(self, entry: Entry, *, current: bool = True) -> None:
        """``c`` on a focused message: one of the current session by its id (as ``/copy e:ID``), else
        (a command's output, a message in another session's transcript) its text as shown."""
        if current and entry.event_id is not None and entry.kind in ("user", "assistant"):
            await self.run(f"/copy e:{entry.event_id}")
            return
        from neotask_tui.commands.clipboard import shown

        text, n = shown(entry.text)
        what = "this command's output" if entry.kind == "command" else (
            f"message e:{entry.event_id} of the transcript shown" if entry.event_id is not None else "this message")
        await self.copy(CopyText(text, what, n))

    def key_bindings(self) -> list[tuple[str, str]]:
        """The main screen's bindings with a description (remaps applied), for the help screen."""
        rows: list[tuple[str, str]] = [("enter", "Send the message (a /command runs it)")]
        seen: set[str] = set()
        for active in self.view.screen.active_bindings.values():
            b = active.binding
            own = [x for x in vars(type(active.node)).get("BINDINGS", []) if isinstance(x, Binding)]
            ours = any((x.action, x.description) == (b.action, b.description) for x in own)
            if not ours or not b.description or (b.id or b.action) in seen:
                continue
            seen.add(b.id or b.action)
            rows.append((self.app.get_key_display(b), b.description))
        # The app's bindings that are off right now (Esc stops only a streaming reply; the one-key
        # restore follows an automatic reset) are listed too, with their default key.
        for item in type(self.app).BINDINGS:
            if isinstance(item, Binding) and item.description and (item.id or item.action) not in seen:
                seen.add(item.id or item.action)
                rows.append((self.app.get_key_display(item), f"{item.description} (when available)"))
        return rows

    async def list_themes(self) -> None:
        """``/theme`` lists the themes."""
        app = self.app
        rows = "\n".join(f"- `{t}`{' ← current' if t == app.theme else ''}" for t in sorted(app.available_themes))
        await self.view.add_entry(Entry(kind="command", title="/theme", text=f"Themes:\n\n{rows}"))

    async def switch_theme(self, name: str) -> None:
        """``/theme NAME`` switches (and keeps the choice for the next start)."""
        app = self.app
        themes = sorted(app.available_themes)
        if name not in app.available_themes:
            near = [t for t in themes if name.lower() in t]
            hint = f" — did you mean {', '.join(near)}?" if near else f" (available: {', '.join(themes)})"
            await self.view.add_entry(Entry(kind="notice", text=f"/theme: unknown theme {name!r}{hint}",
                                            level="error"))
            return
        app.theme = name
        from neotask_tui.tui.themes import save_theme_choice

        try:
            save_theme_choice(name, self.configured_theme)
        except OSError as e:
            app.notify(f"theme: {name} (not saved for the next start: {e.strerror or e})", timeout=5)
            return
        app.notify(f"theme: {name} (kept for the next start)", timeout=2)

    async def open_sessions(self, rows: list[dict[str, Any]]) -> None:
        """The sessions browser; resuming a key switches the app to it."""
        from neotask_tui.tui.screens.sessions import SessionsScreen

        result = await self.open_screen(SessionsScreen(self.engine, rows))
        if result and result[0] == "resume":
            self.state.key = result[1]
            await self.panels.load_session()

    async def compact_flow(self, line: str) -> None:
        """Preview → review modal → accept (commit the reviewed summary) / edit / cancel."""
        from neotask_tui.tui.screens.compact_review import CompactReviewScreen

        self.view.status.activity = "drafting the compaction summary…"
        try:
            res = await dispatch(self.engine, self.state.key, line)
        finally:
            self.view.status.activity = ""
        review = None if res.error else res.intent
        if not isinstance(review, ReviewCompaction):
            await self.show_result(line, res)
            await self.panels.refresh()
            return
        preview = review.preview
        choice = await self.open_screen(CompactReviewScreen(preview))
        if choice is None:
            await self.view.add_entry(Entry(kind="notice", text="compaction cancelled — nothing changed"))
            await self.panels.refresh()  # the draft's model call is in the session's totals
            return
        _verb, summary = choice
        instructions = review.instructions or preview.instructions
        try:
            from neotask_tui.commands.compaction import apply_review

            done = await apply_review(self.engine, self.state.key, summary, instructions)
        except Exception as e:  # surfaced inline; the session is unchanged when the commit fails
            await self.view.add_entry(Entry(kind="notice", text=f"compaction failed: {e}", level="error"))
            return
        await self.panels.load_session()
        d = done.data or {}
        self.app.notify(f"compacted: {int(d.get('tokens_before', 0)):,} → {int(d.get('tokens_after', 0)):,} tokens")


class MemoryProgress:
    """Long memory work as notices: re-embedding after a model change, rebuilding search terms,
    indexing files. Called from worker threads; one notice when a phase starts, then at most one
    every :attr:`every` seconds, and one when it is done."""

    every = 2.0

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._loop = asyncio.get_running_loop()  # built on the app's thread
        self._last: dict[str, float] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        first = phase not in self._last
        if not (first or done >= total or now - self._last[phase] >= self.every):
            return
        self._last[phase] = now
        text = f"memory: {phase} {done:,}/{total:,}" + (" — done" if done >= total else "")
        # never waits for the app (call_from_thread would): the thread reporting may be indexing for
        # a search the app's own thread is waiting on
        with contextlib.suppress(RuntimeError):  # the loop is closed: the app has exited
            self._loop.call_soon_threadsafe(functools.partial(self.app.notify, text, timeout=3))


async def watch_memory(app: App[Any], engine: Engine, key: str) -> None:
    """Keep the memory index current while the app runs (edits made in another editor), with a
    short notice per reindex; a failure to start is a notice, never an error."""

    def changed(stats: ReindexStats) -> None:
        files = ", ".join(stats.files_changed)
        with contextlib.suppress(Exception):  # the app may be exiting
            if files or stats.chunks_embedded or stats.chunks_deleted:
                app.call_from_thread(app.notify, f"memory reindexed: {files or 'memory files'}", timeout=3)
            for note in stats.notices:  # a skipped file (link, FIFO, too big, binary), told once
                app.call_from_thread(app.notify, note, severity="warning", timeout=10)

    try:
        await engine.watch_memory(key, changed)
    except Exception as e:  # the watcher is a convenience: search checks staleness anyway
        app.notify(f"memory file watching is off: {e}", severity="warning", timeout=6)
