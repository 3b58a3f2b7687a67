"""The context screen: the ledger in detail and exactly what the next call sends."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from neotask_tui.text.terminal import inert


class ContextScreen(Screen[None]):
    """Shows ``/context`` data: ``{"ledger": {...}, "messages": [{role, content, section}], "recall": {...}}``."""

    CSS_PATH = "context.tcss"
    AUTO_FOCUS = "#context-messages"  # PageUp / PageDown / Home / End scroll what is sent (not the ledger table)
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Back", id="context_close")]

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__()
        self.data = data

    def compose(self) -> Any:
        led = self.data.get("ledger") or {}
        yield Static(f"Context for the next call · {led.get('total', 0):,} of {led.get('window', 0):,} "
                     f"tokens ({float(led.get('fill', 0)):.0%}, {led.get('source', 'estimated')}, strategy "
                     f"{led.get('strategy', '?')})", id="context-title")
        recall = self.data.get("recall") or {}
        if recall.get("label"):
            yield Static(str(recall["label"]), id="context-recall", markup=False)
        if recall.get("note"):
            yield Static(f"note: {recall['note']}", id="context-recall-note", markup=False)
        for note in led.get("notices") or ():  # what the call leaves out or trims (state entries, a long message)
            yield Static(f"note: {note}", classes="context-note", markup=False)
        if "tools" in self.data:
            from neotask_tui.commands.core import tools_line

            yield Static(tools_line(self.data), id="context-tools", markup=False)
        from neotask_tui.commands.core import compaction_line

        yield Static(compaction_line(led), id="context-compaction", markup=False)
        yield DataTable(id="ledger-table", cursor_type="none")
        with VerticalScroll(id="context-messages"):
            for i, m in enumerate(self.data.get("messages") or []):
                yield Static(inert(f"#{i + 1} {m.get('role')} · {m.get('section')}"), classes="ctx-head",
                             markup=False)
                yield Static(inert(str(m.get("content", ""))), classes="ctx-body", markup=False)
            dropped = led.get("dropped_event_ids") or []
            if dropped:
                ids = ", ".join(f"e:{i}" for i in dropped)
                yield Static(f"Left out (outside the window, kept on disk): {ids}", classes="ctx-head")
        yield Footer()

    def on_mount(self) -> None:
        led = self.data.get("ledger") or {}
        table = self.query_one(DataTable)
        table.add_columns("section", "tokens", "share")
        total = max(int(led.get("total") or 0), 1)
        for name, n in (led.get("sections") or {}).items():
            table.add_row(Text(inert(str(name))), f"{int(n):,}", f"{int(n) / total:.0%}")
        table.add_row("total", f"{int(led.get('total') or 0):,}", f"budget {int(led.get('budget') or 0):,}")

    def action_close(self) -> None:
        """Back."""
        self.dismiss(None)
