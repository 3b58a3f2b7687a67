"""Screens and modals (each with a ``.tcss`` beside it)."""
from __future__ import annotations

from typing import Any

from textual.screen import Screen


def closed(screen: Screen[Any]) -> bool:
    """Has ``screen`` left the app's stack? A worker that awaited the engine (a search, a load) can resume
    after the user dismissed its screen: Textual removes the screen's widgets before it cancels the
    screen's workers, so a query then fails and the worker's error would take the app down."""
    return screen not in screen.app.screen_stack
