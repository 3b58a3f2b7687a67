"""Small modals: a one-line text input and a read-only text viewer."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from neotask_tui.text.terminal import inert
from neotask_tui.tui.widgets.markdown import SafeMarkdown as Markdown


class InputModal(ModalScreen[str | None]):
    """Ask for one line of text (Enter accepts, Esc cancels)."""

    CSS_PATH = "modals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="modal_cancel")]

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.title_text = inert(title)
        self.value = inert(value)  # an edit starts from what is shown
        self.placeholder = placeholder

    def compose(self) -> Any:
        with Vertical(id="dialog"):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            yield Input(self.value, placeholder=self.placeholder, id="modal-input")
            yield Static("Enter to accept · Esc to cancel", classes="dialog-help")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Close without a value."""
        self.dismiss(None)


class TextModal(ModalScreen[None]):
    """Show Markdown read-only (a recalled passage, details)."""

    CSS_PATH = "modals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close", id="modal_close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = inert(title)
        self.text = inert(text)

    def compose(self) -> Any:
        with Vertical(id="dialog", classes="-wide"):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            with VerticalScroll():
                yield Markdown(self.text)
            yield Static("Esc to close", classes="dialog-help")

    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)
