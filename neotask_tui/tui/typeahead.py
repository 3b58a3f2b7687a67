"""A screen that opens while you type does not take your typing.

A command's screen can open seconds after you asked for it: the compaction review once its draft is
written, the inbox or the sessions browser once the reply they were queued behind has ended. By
then you may be typing your next message, and the screen's one-letter keys (``a`` accepts the
compaction, or an inbox candidate into long-term memory; ``r`` restores a session) would act on
letters meant for the prompt. So a screen that opens after you typed since asking for it (in the
prompt, the command palette, a dialog's input) opens *guarded*: what you type (characters, pastes,
Ctrl+J) goes on into that field behind it, and so do its editing keys (Backspace, Delete, Home, End,
Ctrl+W…); Enter sends nothing while it is open. A key that moves in the screen or closes it (Tab,
an arrow, PageUp/PageDown, Esc) or a click turns you to it — from then on the screen takes keys as
usual, starting with that one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea

from neotask_tui.tui.input_queue import ASKED_TYPED

TURN_KEYS: Final = frozenset({"tab", "shift+tab", "up", "down", "left", "right", "pageup", "pagedown", "escape"})
"""The keys that turn you to a guarded screen (and then act on it): moving in it, or closing it."""


def _insert(field: Widget, text: str) -> None:
    """Type ``text`` into a text field at its cursor."""
    if isinstance(field, TextArea):
        field.insert(text)
    elif isinstance(field, Input):
        field.insert_text_at_cursor(text)


def _editing_action(field: Widget, key: str) -> str | None:
    """The action ``field`` (the prompt, an input) binds ``key`` to, if any (from its class bindings)."""
    for cls in type(field).__mro__:
        for binding in vars(cls).get("BINDINGS", ()):
            if isinstance(binding, Binding) and key in (k.strip() for k in binding.key.split(",")):
                return binding.action
    return None


class TypeAhead:
    """Guards the screens that open while you type (see the module's text).

    ``area`` gives the prompt's text area. The app hands every key, click and paste to :meth:`take`
    and then, if not taken, to :meth:`note`, as it arrives: before the key reaches a widget. A key
    binding (F5) runs only after its key has bubbled up from the prompt to the app, behind the
    characters typed right after it, so what was typed *before* a command was asked for is counted
    when its key arrives (:attr:`mark`), not when its action runs.
    """

    def __init__(self, app: App[Any], area: Callable[[], TextArea]) -> None:
        self._app = app
        self._area = area
        self._guarded: Screen[Any] | None = None
        self._told = False
        self.typed = 0
        """Characters (and pastes) typed into a text field so far (the prompt, the palette, a
        dialog's input), counted as they arrive."""
        self._field: Widget | None = None
        """The text field typed into last: a guarded screen's typing goes back there (the prompt if
        it is gone, a closed palette)."""
        self.mark = 0
        """:attr:`typed` when the last key that is not a character (or a click) arrived: what an
        input asked for by that key (Enter, F5, Ctrl+B, a palette choice) counts as typed before it."""

    def note(self, event: events.Event) -> None:
        """Count ``event`` (a key, click or paste not taken by a guarded screen) as it arrives."""
        typing = isinstance(event, events.Paste) or (
            isinstance(event, events.Key) and event.is_printable and bool(event.character))
        focused = self._app.focused
        if not typing:
            self.mark = self.typed
        elif isinstance(focused, (TextArea, Input)):
            self.typed += 1
            self._field = focused

    def opening(self, screen: Screen[Any]) -> None:
        """``screen`` is about to open. Opened by a job of the input queue, it is guarded when you typed
        in a text field since that job was asked for; opened right away (``/help``, a dialog of the
        panels) it is not."""
        asked = ASKED_TYPED.get()
        if asked is not None and self.typed > asked:
            self._guarded, self._told = screen, False
        else:
            self._guarded = None

    async def take(self, event: events.Event) -> bool:
        """Handle ``event`` (not yet forwarded) for the guarded screen; True when it was taken (it
        went to the field you were typing in, or was an Enter that must not act on the screen).

        Characters, pastes, Ctrl+J and the field's editing keys (Backspace, Delete, Home, End,
        Ctrl+W, Ctrl+K, Ctrl+Z, Shift+arrows…: whatever the field binds) edit that field; Enter is
        held. Only the keys that turn to the screen (:data:`TURN_KEYS`) or a click end the guard; any
        other key (Ctrl+Q, a shortcut the app gives priority) does what it always does, and the
        guard stays."""
        screen = self._guarded
        if screen is None:
            return False
        if self._app.screen is not screen:  # closed, or another screen is over it
            if screen not in self._app.screen_stack:
                self._guarded = None
            return False
        if isinstance(event, events.MouseDown):
            self._guarded = None
            return False
        field = self._field if self._field is not None and self._field.is_attached else self._area()
        if isinstance(event, events.Paste):
            _insert(field, event.text)
            self._tell()
            return True
        if not isinstance(event, events.Key):
            return False
        key = event.key
        if key in TURN_KEYS:
            self._guarded = None
            return False
        if key == "enter":
            self._app.notify("not sent: your text waits behind this screen until it is closed (Esc)",
                             timeout=4)
            return True
        if event.is_printable and event.character:
            _insert(field, event.character)
        elif key in self._app_priority_keys():
            return False
        elif (action := _editing_action(field, key)) is not None:
            await field.run_action(action)
        else:
            return False
        self._tell()
        return True

    def _app_priority_keys(self) -> set[str]:
        """Keys the app binds with priority (Ctrl+Q, Ctrl+C, Ctrl+U…): they act as on the main screen."""
        return {k for k, b in self._app.screen.active_bindings.items()
                if b.binding.priority and b.node is self._app}

    def _tell(self) -> None:
        if not self._told:
            self._told = True
            self._app.notify("this screen opened while you typed: your typing goes where you were typing — "
                             "press Tab or an arrow key (or click) to use the screen, Esc to close it",
                             timeout=6)
