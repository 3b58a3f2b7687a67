"""Search results: every message matching a query, in any session; Enter opens it in its transcript."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from neotask_tui import tuning
from neotask_tui.commands.search import local_time
from neotask_tui.text.terminal import inert
from neotask_tui.tui.screens import closed
from neotask_tui.tui.screens.sessions import TranscriptScreen, hit_text

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine
    from neotask_tui.storage.search import SearchHit, SearchResult


class SearchScreen(Screen[tuple[str, str] | None]):
    """The hits of a content search (``/search``); Enter shows the message in its transcript, ``r``
    resumes the conversation from it (a fork at that message).

    Dismisses with ``("resume", key)`` after a fork, else ``None``.
    """

    CSS_PATH = "search.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="search_close"),
        Binding("enter", "open", "Open at the message", id="search_open", show=True),
        Binding("r", "resume_here", "Resume here (fork)", id="search_resume"),
        Binding("slash", "edit_query", "New search", id="search_query"),
    ]

    def __init__(self, engine: Engine, result: SearchResult) -> None:
        super().__init__()
        self.engine = engine
        self.result = result

    def compose(self) -> Any:
        with Vertical(id="sessions-box"):
            yield Static("Search every session", id="sessions-title")
            yield Input(value=self.result.query, placeholder='words, "an exact phrase", prefix*', id="search-query")
            yield DataTable(id="search-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="sessions-detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        # The matching line before the session, so a narrow terminal still shows it.
        table.add_columns("when", "speaker", "event", "matching line", "session")
        self._fill()
        table.focus()

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for h in self.result.hits:
            where = f"{h.key} (archived)" if h.archived else h.key
            line = hit_text(h)
            line.truncate(tuning.SEARCH_LINE_CHARS // 2, overflow="ellipsis")
            table.add_row(Text(local_time(h.ts)), Text(h.role), Text(h.ref), line, Text(inert(where)))
        n = len(self.result.hits)
        more = "+" if self.result.more else ""
        notes = f" · {inert(self.result.notices[0])}" if self.result.notices else ""
        self.query_one("#sessions-detail", Static).update(Text(
            f"{n}{more} hit(s) · Enter opens it in its transcript (read-only) · r resumes from it (a new branch)"
            f" · / searches again{notes}"
            if n else f"no message matches {inert(self.result.query)}{notes}"))

    def action_edit_query(self) -> None:
        """Focus the query box."""
        self.query_one("#search-query", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.rerun(event.value)

    @work(exclusive=True, group="search-run")
    async def rerun(self, query: str) -> None:
        """Search again (off the event loop); a bad query is a notice, the old hits stay."""
        try:
            self.result = await self.engine.search(query)
        except Exception as e:  # surfaced, never swallowed
            self.notify(f"search: {str(e)[:200]}", severity="error")
            return
        if closed(self):
            return
        self._fill()
        self.query_one(DataTable).focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def selected(self) -> SearchHit | None:
        """The hit under the cursor."""
        table = self.query_one(DataTable)
        hits = self.result.hits
        if not hits or table.cursor_row < 0 or table.cursor_row >= len(hits):
            return None
        return hits[table.cursor_row]

    def action_open(self) -> None:
        """Show the selected hit in its transcript, read-only, at the message."""
        hit = self.selected()
        if hit is not None:
            self.app.push_screen(TranscriptScreen(self.engine, hit.session_id, archived=hit.archived,
                                                  focus_event=hit.event_id))

    @work(exclusive=True, group="search-resume")
    async def action_resume_here(self) -> None:
        """Fork the hit's session at the hit: the history up to that message becomes the key's
        current session (the session that was current is archived, restorable), so the user goes on
        from there. An archived transcript is never written to."""
        hit = self.selected()
        if hit is None:
            return
        try:
            rec = await self.engine.fork_session(hit.key, hit.event_id, from_session=hit.session_id)
        except Exception as e:  # surfaced, never swallowed (a non-message hit, another agent…)
            self.notify(f"resume here: {inert(str(e).splitlines()[0])[:200]}", severity="error")
            return
        self.notify(f"resumed from {hit.ref} of {hit.session_id}: new branch {rec.session_id}")
        self.dismiss(("resume", rec.key))

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)
