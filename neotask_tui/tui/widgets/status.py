"""Header/status line: session key, provider and model (and why), next automatic reset, activity."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from neotask_tui.text.terminal import inert
from neotask_tui.tui.widgets.side import countdown


class StatusBar(Widget):
    """One line at the top of the main screen."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    key: reactive[str] = reactive("")
    provider: reactive[str] = reactive("")
    reason: reactive[str] = reactive("")
    activity: reactive[str] = reactive("")
    offer: reactive[str] = reactive("")

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.next_reset: tuple[datetime, str] | None = None
        self.now: datetime | None = None

    def set_reset(self, next_reset: tuple[datetime, str] | None, now: datetime) -> None:
        """Update the countdown to the next automatic reset."""
        self.next_reset = next_reset
        self.now = now
        self.refresh()

    def render(self) -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append("neotask ", style="bold")
        t.append(self.key or "…")
        if self.provider:
            t.append("  ·  ")
            t.append(inert(self.provider), style="bold")
        if self.next_reset and self.now:
            when, kind = self.next_reset
            t.append("  ·  ")
            t.append(f"{kind} reset in {countdown(when, self.now)}")
        if self.offer:
            t.append("  ·  ")
            t.append(self.offer, style="bold reverse")
        if self.activity:
            t.append("  ·  ")
            t.append(self.activity, style="italic")
        if self.reason:
            t.append(inert(f"  ·  {self.reason}"), style="dim")
        return t
