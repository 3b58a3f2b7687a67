"""The promotion inbox: memory candidates to accept, edit or reject."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from neotask_tui.text.terminal import inert
from neotask_tui.tui.messages import InboxChanged
from neotask_tui.tui.screens import closed
from neotask_tui.tui.screens.modals import InputModal

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine
    from neotask_tui.engine.state.inbox import InboxEntry

__all__ = ["InboxChanged", "InboxScreen"]


class InboxScreen(Screen[None]):
    """Pending candidates for long-term memory, with the criteria each meets or fails."""

    CSS_PATH = "inbox.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="inbox_close"),
        Binding("a", "accept", "Accept", id="inbox_accept"),
        Binding("e", "edit", "Edit", id="inbox_edit"),
        Binding("r", "reject", "Reject", id="inbox_reject"),
    ]

    def __init__(self, engine: Engine, key: str) -> None:
        super().__init__()
        self.engine = engine
        self.key = key
        self.agent = engine.parse_key(key).agent_id
        self.entries: list[InboxEntry] = []
        self.deciding: dict[int, str] = {}
        """Entries with a decision in flight (number -> "accepting"/"rejecting"/"editing"): shown as
        such, and a second key on one waits for the first to finish instead of deciding again."""

    def compose(self) -> Any:
        with Vertical(id="inbox-box"):
            yield Static(f"Memory inbox · agent {self.agent}", id="inbox-title", markup=False)
            yield DataTable(id="inbox-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="inbox-why", markup=False)
            yield Static("", id="inbox-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("#", "candidate", "scope", "why", "missing criteria")
        self.reload()

    @work(exclusive=True, group="inbox-load")
    async def reload(self) -> None:
        """Read the pending entries."""
        self.entries = list(await self.engine.state.inbox_list(self.agent))
        if closed(self):
            return
        table = self.query_one(DataTable)
        table.clear()
        for e in self.entries:
            cells = (str(e.n), inert(e.text)[:70], inert(e.scope), inert(e.reason)[:60],
                     inert(", ".join(e.failed)) or "—")
            table.add_row(*(Text(c) for c in cells))  # a str cell would be read as markup
        self.app.post_message(InboxChanged(len(self.entries)))
        self.show_why()

    def _show_detail(self) -> None:
        busy = "".join(f" · {how} #{n}…" for n, how in sorted(self.deciding.items()))
        self.query_one("#inbox-detail", Static).update(
            f"{len(self.entries)} pending{busy} · a accept (writes to long-term memory with source and time) · "
            "e edit · r reject (never proposed again)" if self.entries else "inbox is empty")

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self.show_why()

    def show_why(self) -> None:
        """The selected candidate in full under the table: its text, why it was proposed and each
        criterion it fails with the reason (the table's cells are cut to fit); and the count line."""
        self._show_detail()
        e = self._selected()
        if e is None:
            self.query_one("#inbox-why", Static).update("")
            return
        lines = [f"#{e.n} {inert(e.text)}" + (f" ({self.deciding[e.n]}…)" if e.n in self.deciding else ""),
                 f"why: {inert(e.reason)}"]
        lines += [f"✗ {k}: {inert(str(e.criteria[k].get('why', '')))}" for k in e.failed if k in e.criteria]
        self.query_one("#inbox-why", Static).update("\n".join(lines))

    def _selected(self) -> InboxEntry | None:
        row = self.query_one(DataTable).cursor_row
        return self.entries[row] if 0 <= row < len(self.entries) else None

    def _busy_or_selected(self, how: str) -> InboxEntry | None:
        """The selected entry, now marked ``how`` (see :attr:`deciding`); ``None`` when nothing is
        selected or the entry's decision is still in flight (said in a notice)."""
        e = self._selected()
        if e is None:
            return None
        if e.n in self.deciding:
            self.notify(f"#{e.n}: still {self.deciding[e.n]}, wait for it to finish")
            return None
        self.deciding[e.n] = how
        self.show_why()
        return e

    def _decide(self, e: InboxEntry, verb: str, run: Callable[[], Awaitable[str]]) -> None:
        """Run a decision on ``e`` as the app's worker, not this screen's: closing the inbox (Esc)
        while it is written must not cancel it (an accept still loading the memory service was lost
        that way). Its notice comes when it is done, wherever the user is by then."""

        async def job() -> None:
            try:
                self.app.notify(await run())
            except Exception as err:
                self.app.notify(f"cannot {verb} #{e.n}: {err}", severity="error")
            finally:
                self.deciding.pop(e.n, None)
            if not closed(self):
                self.reload()
            else:
                await self._recount()

        self.app.run_worker(job(), group="inbox-decide", exit_on_error=False)

    async def _recount(self) -> None:
        """The pending count for the sidebar after a decision finished with the inbox closed."""
        with contextlib.suppress(Exception):
            self.app.post_message(InboxChanged(len(await self.engine.state.inbox_list(self.agent))))

    def action_accept(self) -> None:
        """Accept the selected candidate."""
        e = self._busy_or_selected("accepting")
        if e is None:
            return

        async def run() -> str:
            done = await self.engine.state.inbox_accept(self.agent, e.n)
            return f"remembered #{done.n} in {done.memory or 'long-term memory'}"

        self._decide(e, "accept", run)

    @work(group="inbox-act")
    async def action_edit(self) -> None:
        """Edit the selected candidate's text."""
        e = self._busy_or_selected("editing")
        if e is None:
            return
        try:
            text = await self.app.push_screen_wait(InputModal(f"Edit candidate #{e.n}", e.text))
            if text:
                try:
                    await self.engine.state.inbox_edit(self.agent, e.n, text)
                except Exception as err:
                    self.notify(f"cannot edit #{e.n}: {err}", severity="error")
        finally:
            self.deciding.pop(e.n, None)
        self.reload()

    def action_reject(self) -> None:
        """Reject the selected candidate."""
        e = self._busy_or_selected("rejecting")
        if e is None:
            return

        async def run() -> str:
            await self.engine.state.inbox_reject(self.agent, e.n)
            return f"rejected #{e.n}"

        self._decide(e, "reject", run)

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)

