"""The main screen's footer: the keys that fit the terminal's width, the essential ones always.

Textual's footer lists every shown binding and cuts what does not fit (at 80 columns the toggles and
the palette overlapped). Here each app key has a tier: the essential keys (help, focus, quit, the
command palette and the focused panel's own keys, which come first) show at any width; the session
keys from :data:`~neotask_tui.tuning.FOOTER_MEDIUM_WIDTH` columns; the panel toggles from
:data:`~neotask_tui.tuning.SIDE_COLUMN_MIN_WIDTH`; the inbox from
:data:`~neotask_tui.tuning.FOOTER_FULL_WIDTH`. A focused panel's keys take the room of the toggles,
the inbox, the session keys below 120 columns and the palette key below 70. ``/help`` and the
palette list them all.

Relies on ``textual.widgets._footer.FooterKey`` (its ``action``), pinned by ``tests/tui/test_textual_api.py``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class KeyFooter(Footer):
    """A footer that drops the less needed keys on narrow screens (by the screen's width class)."""

    SCOPED_CSS = False  # the rules name the screen's width class, above this widget
    DEFAULT_CSS = """
    Screen.-w-small KeyFooter FooterKey.-medium, Screen.-w-small KeyFooter FooterKey.-wide,
    Screen.-w-small KeyFooter FooterKey.-full, Screen.-w-medium KeyFooter FooterKey.-wide,
    Screen.-w-medium KeyFooter FooterKey.-full, Screen.-w-wide KeyFooter FooterKey.-full { display: none; }
    /* A focused panel's keys come first and make room: the toggles and the inbox go, the session
       keys too below 120 columns (they all work from the prompt), the palette key at the smallest. */
    Screen KeyFooter.-panel-keys FooterKey.-wide, Screen KeyFooter.-panel-keys FooterKey.-full,
    Screen.-w-medium KeyFooter.-panel-keys FooterKey.-medium,
    Screen.-w-wide KeyFooter.-panel-keys FooterKey.-medium { display: none; }
    Screen.-w-small KeyFooter.-panel-keys FooterKey.-command-palette { display: none; }
    """
    TIERS: ClassVar[dict[str, str]] = {
        "context": "-medium", "compact": "-medium", "sessions": "-medium", "new_session": "-medium",
        "toggle_state": "-wide", "toggle_recall": "-wide", "open_inbox": "-full",
    }
    """The tier class of an app action's key; any other key (help, focus, quit, restore, the focused
    widget's keys) is essential."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(compact=True, **kw)

    APP_KEYS: ClassVar[frozenset[str]] = frozenset({"help", "quit", "focus_next_panel", "undo_reset"})
    """Essential app actions; a key with an action neither here nor in :attr:`TIERS` is a panel's."""

    def compose(self) -> Any:
        widgets = list(super().compose())
        panel_keys = False
        for widget in widgets:
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                if widget.action in self.TIERS:
                    widget.add_class(self.TIERS[widget.action])
                elif widget.action not in self.APP_KEYS:
                    panel_keys = True
        self.set_class(panel_keys, "-panel-keys")
        yield from widgets
