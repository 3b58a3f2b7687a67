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

from neotask_tui.engine.session.branch import tree_rows
from neotask_tui.text.terminal import inert
from neotask_tui.tui.widgets.transcript import Transcript, entries_from_events

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine


def _row_matches(row: dict[str, Any], query: str) -> bool:
    q = query.lower().strip()
    if not q:
        return True
    hay = " ".join(str(row.get(k, "")) for k in ("key", "session_id", "reason", "last_activity_at")).lower()
    return all(part in hay for part in q.split())


class SessionsScreen(Screen[tuple[str, str] | None]):
    """Every session, current and archived.

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

    def compose(self) -> Any:
        with Vertical(id="sessions-box"):
            yield Static("Sessions", id="sessions-title")
            yield Input(placeholder="search key, session id, reason…", id="sessions-search")
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
        self._fill(self.query_one("#sessions-search", Input).value)

    def _fill(self, query: str) -> None:
        table = self.query_one(DataTable)
        table.clear()
        tree = [(d, r) for d, r in tree_rows(self.rows) if _row_matches(r, query)]
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
        self.query_one("#sessions-detail", Static).update(
            f"{len(self.shown)} of {len(self.rows)} session(s) · Enter resumes a current session or views an "
            "archived one · r restores an archived session")

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

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
            self.app.push_screen(TranscriptScreen(self.engine, sid, archived=archived))

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

    def __init__(self, engine: Engine, session_id: str, archived: bool = False) -> None:
        super().__init__()
        self.engine = engine
        self.session_id = session_id
        self.archived = archived

    def compose(self) -> Any:
        kind = "archived" if self.archived else "current"
        yield Static(inert(f"Transcript {self.session_id} ({kind}, read-only)"), id="transcript-title", markup=False)
        yield Transcript(id="transcript-view")
        yield Footer()

    @work(group="transcript-load")
    async def on_mount(self) -> None:
        found = await asyncio.to_thread(self.engine.transcript, self.session_id)
        # a session id gives that session's events ({session id: events} is only for a key's archive)
        events = found if isinstance(found, list) else [e for evs in found.values() for e in evs]
        await self.query_one(Transcript).load(entries_from_events(events))

    def action_close(self) -> None:
        """Back."""
        self.dismiss(None)
