"""What we rely on in Textual beyond its documented API: each test fails if a Textual release changes it.

``install_themes`` selects the first theme the way ``App.theme = name`` would (``App._watch_theme``)
without the CSS refresh that would follow, and refreshes the ANSI → truecolor line filter with
``App._refresh_truecolor_filter``, which has no public equivalent.
"""

from __future__ import annotations

import pytest
from rich.color import Color as RichColor
from rich.color import ColorTriplet
from rich.style import Style
from rich.terminal_theme import TerminalTheme
from textual.app import App
from textual.filter import ANSIToTruecolor

from neotask_tui.tui.themes import install_themes, load_themes

BACKGROUND = RichColor.from_rgb(0, 0, 0)


def _ansi_red(app: App[None]) -> ColorTriplet | None:
    """How the app's ANSI → truecolor filter renders ANSI red (None: no such filter is on)."""
    filters = [f for f in app.get_line_filters() if isinstance(f, ANSIToTruecolor)]
    if not filters:
        return None
    colour = filters[0].truecolor_style(Style(color="red"), BACKGROUND).color
    assert colour is not None
    return colour.get_truecolor()


def test_refresh_truecolor_filter_maps_ansi_colours_with_the_given_palette() -> None:
    app: App[None] = App()
    palette = TerminalTheme((250, 250, 250), (10, 10, 10), [(i, 2 * i, 3 * i) for i in range(8)])
    app._refresh_truecolor_filter(palette)
    assert _ansi_red(app) == ColorTriplet(1, 2, 3)  # ANSI colour 1, from the palette given


@pytest.mark.parametrize("name", ["neotask-dark", "neotask-light", "neotask-high-contrast"])
def test_install_themes_is_what_setting_app_theme_does(name: str) -> None:
    ours: App[None] = App()
    notes = install_themes(ours, name)
    assert notes == []
    public: App[None] = App()  # the documented way: register, then set App.theme
    for theme in load_themes().themes.values():
        public.register_theme(theme)
    public.theme = name
    assert ours.theme == public.theme == name
    assert set(ours.classes) == set(public.classes)
    assert _ansi_red(ours) == _ansi_red(public)
    assert ours.get_css_variables() == public.get_css_variables()
    # ... and the stylesheet is built with the theme's variables from the start (no refresh needed)
    assert ours.stylesheet._variables == ours.get_css_variables()


def test_escape_cr_is_read_as_ctrl_j_once_installed() -> None:
    """``read_alt_enter_as_ctrl_j`` adds ESC CR to Textual's private table of terminal sequences."""
    from textual._xterm_parser import XTermParser

    from neotask_tui.tui.widgets.prompt import ALT_ENTER, read_alt_enter_as_ctrl_j

    read_alt_enter_as_ctrl_j()
    parser = XTermParser(False)
    keys = [t.key for t in [*parser.feed(ALT_ENTER), *parser.feed("")] if hasattr(t, "key")]
    assert keys == ["ctrl+j"]


def test_footer_keys_carry_their_action() -> None:
    """``KeyFooter`` tiers the footer's keys by ``FooterKey.action`` (a private widget)."""
    from textual.widgets._footer import FooterKey

    key = FooterKey("f6", "f6", "Focus", "focus_next_panel")
    assert key.action == "focus_next_panel"
