"""``/help`` (F1): every command, grouped, on one screen; the key bindings one keypress away."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from neotask_tui.text.terminal import inert

Groups = list[tuple[str, list[tuple[str, str]]]]


def commands_renderable(groups: Groups) -> Group:
    """Per group a title, then one line per command: its usage as typed, then what it does (never
    read as markup; a narrow screen wraps the line, nothing is cut)."""
    parts: list[Any] = []
    for i, (title, rows) in enumerate(groups):
        parts.append(Text(("\n" if i else "") + title, style="bold underline"))
        for usage, what in rows:
            line = Text(overflow="fold")
            line.append(inert(usage), style="bold")
            line.append("  ")
            line.append(inert(what))
            parts.append(line)
    return Group(*parts)


def keys_renderable(keys: list[tuple[str, str]]) -> Group:
    """The key bindings of the main screen (as remapped), key then what it does."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for key, what in keys:
        grid.add_row(Text(inert(key)), Text(inert(what)))
    return Group(Text("keys", style="bold underline"), grid)


class HelpScreen(ModalScreen[None]):
    """The grouped command list; ``k`` (or Tab) switches to the key bindings and back."""

    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,f1", "close", "Close", id="help_close"),
        Binding("k,tab", "toggle_keys", "Keys / commands", id="help_keys"),
    ]

    def __init__(self, groups: Groups, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.groups = groups
        self.keys = keys
        self.showing_keys = False

    def compose(self) -> Any:
        with Vertical(id="help-dialog"):
            with VerticalScroll(id="help-body"):
                yield Static(commands_renderable(self.groups), id="help-content")
            yield Static(self._hint(), id="help-hint", markup=False)

    def _hint(self) -> str:
        other = "commands" if self.showing_keys else "keys"
        return f"k: {other} · ↑↓ scroll · Esc: close · /help NAME: one command"

    def action_toggle_keys(self) -> None:
        """Show the key bindings instead of the commands (or back)."""
        self.showing_keys = not self.showing_keys
        body = keys_renderable(self.keys) if self.showing_keys else commands_renderable(self.groups)
        self.query_one("#help-content", Static).update(body)
        self.query_one("#help-hint", Static).update(self._hint())
        self.query_one("#help-body", VerticalScroll).scroll_home(animate=False)

    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)
