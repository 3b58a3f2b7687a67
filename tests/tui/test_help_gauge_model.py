"""Pilot tests for issue #17: a readable /help, an honest gauge, a model that says what it is."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from neotask_tui.commands import REGISTRY
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.screens.help import HelpScreen
from neotask_tui.tui.widgets.prompt import Prompt
from tests.tui.support import wait_for


async def _run(pilot: object, app: NeotaskApp, line: str) -> None:
    app.main.query_one(Prompt).text = line
    app.main.query_one("#prompt-input").focus()
    await pilot.press("enter")  # type: ignore[attr-defined]


def screen_lines(app: NeotaskApp) -> list[str]:
    """What the terminal shows now, one string per row (read from the SVG screenshot)."""
    svg = app.export_screenshot()
    rows: dict[int, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text[^>]*\bx="([0-9.]+)"[^>]*line-(\d+)\)"[^>]*>([^<]*)</text>', svg):
        rows.setdefault(int(m.group(2)), []).append((float(m.group(1)), html.unescape(m.group(3))))
    width = 12.2  # Rich's SVG cell width
    out = []
    for n in sorted(rows):
        line = ""
        for x, text in sorted(rows[n]):
            col = round(x / width)
            line = line.ljust(col) + text
        out.append(line.replace("\xa0", " "))
    return out


async def test_help_fits_a_140x40_screen_with_every_usage_and_description(
        app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory()
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        await pilot.pause()
        body = app.screen.query_one("#help-body")
        assert body.max_scroll_y == 0, "the help list scrolls at 140x40"
        shown = "\n".join(screen_lines(app))
        for cmd in REGISTRY.values():  # usage and description on one line, intact (| included)
            assert f"{cmd.usage}  {cmd.help}" in shown, cmd.usage
        for group in ("sessions", "context & compaction", "state", "memory", "app"):
            assert group in shown
        await pilot.press("k")
        await pilot.pause()
        keys = "\n".join(screen_lines(app))
        assert "Compact" in keys and "Sessions" in keys and "/compact [" not in keys
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen), "the help screen closed")
