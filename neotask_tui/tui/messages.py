"""Messages shared between screens and the app (kept in a light module: no screen imports)."""

from __future__ import annotations

from textual.message import Message


class InboxChanged(Message):
    """The number of pending inbox entries changed."""

    def __init__(self, pending: int) -> None:
        super().__init__()
        self.pending = pending


class PaletteCommandChosen(Message):
    """A slash command was chosen in the command palette (the app runs it or prefills the prompt)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class EditRequested(Message):
    """``/edit`` without text: the prompt edits your message ``event_id`` (its ``text``)."""

    def __init__(self, text: str, event_id: int) -> None:
        super().__init__()
        self.text = text
        self.event_id = event_id
