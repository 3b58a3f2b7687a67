"""The sessions browser (search, resume, view read-only, restore) and a read-only transcript viewer."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from neotask_tui import tuning
from neotask_tui.engine.session.branch import tree_rows
from neotask_tui.storage.search import MARK_CLOSE, MARK_OPEN
from neotask_tui.text.terminal import inert
from neotask_tui.tui.screens import closed
from neotask_tui.tui.widgets.transcript import Transcript, entries_from_events

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine
    from neotask_tui.storage.search import SearchHit



def hit_text(hit: SearchHit) -> Text:
    """The matching line with each match in bold (inert: terminal controls shown, never sent)."""
    out = Text(no_wrap=True, overflow="ellipsis")
    inside = False
    for part in hit.line.replace(MARK_CLOSE, MARK_OPEN).split(MARK_OPEN):
        if part:
            out.append(inert(part), style="bold reverse" if inside else "")
        inside = not inside
    return out


def _row_matches(row: dict[str, Any], query: str) -> bool:
    q = query.lower().strip()
    if not q:
        return True
    hay = " ".join(str(row.get(k, "")) for k in ("key", "session_id", "reason", "last_activity_at")).lower()
    return all(part in hay for part in q.split())


class SessionsScreen(Screen[tuple[str, str] | None]):
    """Every session, current and archived.

    The search box matches key, session id, reason and date at once and, after a pause in typing,
    the sessions' message text too (the full-text index): a session found by its content shows its
    best matching line below the table, and ``v`` opens it at that message.

    Dismisses with ``("resume", key)`` when the user resumes or restores a session, else ``None``.
    """

    CSS_PATH = "sessions.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="sessions_close"),
        Binding("enter", "open", "Resume / view", id="sessions_open", show=True),
        Binding("v", "view", "View", id="sessions_view"),
        Binding("r", "restore", "Restore", id="sessions_restore"),
        Binding("slash", "search", "Search", id="sessions_search"),
    ]

    def __init__(self, engine: Engine, rows: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.engine = engine
        self.rows: list[dict[str, Any]] = list(rows or [])
        self.shown: list[dict[str, Any]] = []
        self.content: dict[str, SearchHit] = {}
        """The best content hit of each session for the current query (session id → hit)."""

    def compose(self) -> Any:
        with Vertical(id="sessions-box"):
            yield Static("Sessions", id="sessions-title")
            yield Input(placeholder="search key, session id, reason or message text…", id="sessions-search")
            yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="sessions-detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("key", "session", "last activity", "in", "out", "compactions", "state")
        if self.rows:
            self._fill("")
        else:
            self.load_rows()
        table.focus()

    @work(exclusive=True, group="sessions-load")
    async def load_rows(self) -> None:
        """Read the list off the event loop."""
        self.rows = await asyncio.to_thread(self.engine.list_sessions, include_archived=True)
        if closed(self):
            return
        self._fill(self.query_one("#sessions-search", Input).value)

    def _fill(self, query: str) -> None:
        table = self.query_one(DataTable)
        table.clear()
        tree = [(d, r) for d, r in tree_rows(self.rows)
                if _row_matches(r, query) or str(r.get("session_id")) in self.content]
        self.shown = [r for _d, r in tree]
        compacted = {str(r.get("parent_session_id")) for r in self.rows
                     if r.get("parent_session_id") and r.get("reason") == "compaction"}
        for depth, r in tree:
            c = r.get("counters") or {}
            # Why a session was archived is only known for compaction (its successor names it as
            # parent); the header's reason says how it *started*, which is not why it ended.
            state = "current" if not r.get("archived") else (
                "archived (compacted)" if str(r.get("session_id")) in compacted else "archived")
            if r.get("reason") == "fork" and isinstance(r.get("fork_at"), int):
                state += f" · fork at e:{r['fork_at']}"
            branch = "  " * (depth - 1) + "└ " if depth else ""  # a fork sits under its parent
            cells = (inert(str(r.get("key", ""))), inert(branch + str(r.get("session_id", ""))),
                     inert(str(r.get("last_activity_at") or "")[:16].replace("T", " ")),
                     f"{c.get('input', 0):,}", f"{c.get('output', 0):,}",
                     inert(str(r.get("compaction_count", 0))), inert(state))
            table.add_row(*(Text(x) for x in cells))  # a str cell would be read as markup
        self._detail()

    def _detail(self) -> None:
        row = self._selected()
        hit = self.content.get(str(row.get("session_id"))) if row is not None else None
        detail = self.query_one("#sessions-detail", Static)
        if hit is not None:
            detail.update(Text.assemble(f"{hit.ref} {hit.role}: ", hit_text(hit), "  (v opens it there)"))
            return
        found = f" · {len(self.content)} by message text" if self.content else ""
        detail.update(f"{len(self.shown)} of {len(self.rows)} session(s){found} · Enter resumes a current session "
                      "or views an archived one · r restores an archived session")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.content = {}
        self._fill(event.value)
        self.search_content(event.value)

    @work(exclusive=True, group="sessions-content")
    async def search_content(self, query: str) -> None:
        """Search the sessions' message text once typing pauses (a newer keystroke cancels this)."""
        await asyncio.sleep(tuning.SESSIONS_CONTENT_SEARCH_DELAY)
        if not any(c.isalnum() for c in query):
            return
        try:
            res = await self.engine.search(query, limit=tuning.SEARCH_LIMIT_MAX)
        except Exception as e:  # surfaced, never swallowed
            self.notify(f"message search: {str(e)[:200]}", severity="warning")
            return
        if closed(self):
            return
        best: dict[str, SearchHit] = {}
        for h in res.hits:  # best first: the first hit of a session is its best
            best.setdefault(h.session_id, h)
        self.content = best
        self._fill(query)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def _selected(self) -> dict[str, Any] | None:
        table = self.query_one(DataTable)
        if not self.shown or table.cursor_row < 0 or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def action_search(self) -> None:
        """Focus the search box."""
        self.query_one("#sessions-search", Input).focus()

    def action_open(self) -> None:
        """Resume a current session; view an archived one read-only."""
        row = self._selected()
        if row is None:
            return
        if row.get("archived"):
            self.action_view()
        else:
            self.dismiss(("resume", str(row["key"])))

    def action_view(self) -> None:
        """View the selected transcript read-only."""
        row = self._selected()
        if row is not None:
            sid, archived = str(row["session_id"]), bool(row.get("archived"))
            hit = self.content.get(sid)
            self.app.push_screen(TranscriptScreen(self.engine, sid, archived=archived,
                                                  focus_event=hit.event_id if hit else None))

    @work(group="sessions-restore")
    async def action_restore(self) -> None:
        """Make the selected archived session current again."""
        row = self._selected()
        if row is None or not row.get("archived"):
            self.notify("only archived sessions can be restored", severity="warning")
            return
        try:
            rec = await self.engine.restore(str(row["session_id"]))
        except Exception as e:  # surfaced, never swallowed
            self.notify(f"restore failed: {e}", severity="error")
            return
        self.notify(f"restored {rec.session_id}")
        self.dismiss(("resume", str(rec.key)))

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)


class TranscriptScreen(Screen[None]):
    """A transcript, read-only (archived, compacted or another key's session)."""

    CSS_PATH = "sessions.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Back", id="transcript_close")]

    def __init__(self, engine: Engine, session_id: str, archived: bool = False, *,
                 focus_event: int | None = None) -> None:
        super().__init__()
        self.engine = engine
        self.session_id = session_id
        self.archived = archived
        self.focus_event = focus_event
        """The message to show (a search hit), marked; None shows the end."""

    def compose(self) -> Any:
        kind = "archived" if self.archived else "current"
        at = f" at e:{self.focus_event}" if self.focus_event is not None else ""
        yield Static(inert(f"Transcript {self.session_id} ({kind}, read-only){at}"), id="transcript-title",
                     markup=False)
        yield Transcript(id="transcript-view")
        yield Footer()

    @work(group="transcript-load")
    async def on_mount(self) -> None:
        found = await asyncio.to_thread(self.engine.transcript, self.session_id)
        # a session id gives that session's events ({session id: events} is only for a key's archive)
        events = found if isinstance(found, list) else [e for evs in found.values() for e in evs]
        if closed(self):
            return
        await self.query_one(Transcript).load(entries_from_events(events), focus_event=self.focus_event)

    def action_close(self) -> None:
        """Back."""
        self.dismiss(None)
