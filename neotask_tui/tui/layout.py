"""Where the side panels go, and the focus cycle through the main screen's regions.

On a wide terminal the state panel and the recall sidebar sit in a column beside the transcript;
F2 / F3 show or hide each, and hiding both gives the transcript the full width. Below
:data:`~neotask_tui.tuning.SIDE_COLUMN_MIN_WIDTH` columns the column leaves the layout and one panel
at a time opens over the transcript (F2, F3, or F6 stopping on it; Esc closes it).

Everything is CSS classes (see ``app.tcss``), so the first frame is already right and a resize
needs no code: the screen's width class comes from the app's ``HORIZONTAL_BREAKPOINTS``;
``#state.-off`` / ``#recall.-off`` mark a panel the user hid, ``#side.-hidden`` both hidden, and
``#side.-open-state`` / ``#side.-open-recall`` the panel open over the transcript.
"""

from __future__ import annotations

from typing import Final

from textual.widget import Widget
from textual.widgets import OptionList

from neotask_tui import tuning
from neotask_tui.tui.main_view import MainView

WIDTH_CLASSES: Final = ((0, "-w-small"), (tuning.FOOTER_MEDIUM_WIDTH, "-w-medium"),
                        (tuning.SIDE_COLUMN_MIN_WIDTH, "-w-wide"), (tuning.FOOTER_FULL_WIDTH, "-w-full"))
"""The app's ``HORIZONTAL_BREAKPOINTS``: the class each screen gets for its width."""
NARROW: Final = ("-w-small", "-w-medium")
"""Width classes where the side panels open over the transcript."""
STOPS: Final = ("prompt", "state", "recall", "transcript")
"""The focus cycle (F6 forward, Shift+F6 back)."""
PANELS: Final = ("state", "recall")


def side_classes(show_state: bool, show_recall: bool) -> str:
    """The side column's classes for the first frame."""
    return "" if show_state or show_recall else "-hidden"


class SideLayout:
    """Shows, hides and opens the side panels of ``view``; moves focus between the regions.

    ``shown`` is what the user asked for on a wide screen (F2 / F3, starting from the settings);
    ``open`` is the panel open over the transcript on a narrow one (None: closed).
    """

    def __init__(self, view: MainView, show_state: bool, show_recall: bool) -> None:
        self.view = view
        self.shown = {"state": show_state, "recall": show_recall}
        self.open: str | None = None

    @property
    def narrow(self) -> bool:
        """The screen is too narrow for the side column."""
        screen = self.view.screen
        return any(screen.has_class(c) for c in NARROW)

    def _panel(self, name: str) -> Widget:
        return self.view.state if name == "state" else self.view.recall

    def _apply(self) -> None:
        for name in PANELS:
            self._panel(name).set_class(not self.shown[name], "-off")
        side = self.view.state.parent
        if isinstance(side, Widget):
            side.set_class(not any(self.shown.values()), "-hidden")
            for name in PANELS:
                side.set_class(self.open == name, f"-open-{name}")

    def toggle(self, name: str, focused: Widget | None) -> None:
        """F2 / F3: show or hide panel ``name`` (narrow: open it over the transcript, focus staying in
        the prompt, or close it)."""
        if self.narrow:
            if self.open == name:
                self.close()
            else:
                # Opened, not focused: the keys typed next are text for the prompt, never a panel's
                # own keys (an "f" of "fine" forgot the recalled memory line). F6 moves into it.
                self.open = name
                self._apply()
                if self.region(focused) in PANELS:
                    focus_now(self.view.prompt_area)
            return
        self.shown[name] = not self.shown[name]
        self.open = None
        self._apply()
        if not self.shown[name] and self.region(focused) == name:
            focus_now(self.view.prompt_area)

    def close(self) -> bool:
        """Close the panel open over the transcript (focus goes back to the prompt); False if none."""
        if self.open is None or not self.narrow:
            return False
        self.open = None
        self._apply()
        focus_now(self.view.prompt_area)
        return True

    def region(self, focused: Widget | None) -> str | None:
        """Which stop of the cycle ``focused`` is in (None: none of them)."""
        if focused is None:
            return None
        regions = {"prompt": self.view.prompt, "state": self.view.state, "recall": self.view.recall,
                   "transcript": self.view.transcript}
        ancestors = list(focused.ancestors_with_self)
        for name, widget in regions.items():
            if widget in ancestors:
                return name
        return None

    def cycle(self, focused: Widget | None, step: int) -> str:
        """Move focus to the next (``step=1``) or previous (``-1``) stop that can be shown; returns it."""
        here = self.region(focused)
        i = STOPS.index(here) if here is not None else (-1 if step > 0 else 0)
        for k in range(1, len(STOPS) + 1):
            stop = STOPS[(i + k * step) % len(STOPS)]
            if stop in PANELS and not self.narrow and not self.shown[stop]:
                continue
            self.focus_stop(stop)
            return stop
        return here or "prompt"

    def focus_stop(self, stop: str) -> None:
        """Focus ``stop`` (on a narrow screen a panel opens for it, and any open one closes otherwise)."""
        if self.narrow:
            self.open = stop if stop in PANELS else None
            self._apply()
        target: Widget
        if stop == "prompt":
            target = self.view.prompt_area
        elif stop == "transcript":
            target = self.view.transcript
        else:
            entries = self._panel(stop).query_one(OptionList)
            if entries.highlighted is None and entries.option_count:
                entries.highlighted = 0  # so e / d / o / f / n act at once
            target = entries
        focus_now(target)


def focus_now(widget: Widget) -> None:
    """Focus ``widget`` before the next key is handled. ``Widget.focus()`` defers the move to a callback
    queued behind the keys already read, so text typed right after F6 (a fast typist, a paste, tmux
    send-keys) went to the panel being left and was lost."""
    widget.screen.set_focus(widget)
