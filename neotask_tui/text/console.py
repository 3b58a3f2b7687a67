"""A Rich console for the plain front ends (CLI, REPL) whose printed text is inert.

Strings printed through :class:`InertConsole` go through :func:`~neotask_tui.text.terminal.inert`
before Rich parses them (so a BEL or a CR shows as ``␇``/``␍`` instead of being dropped), and every
text segment of every renderable (Markdown, tables, panels) is made inert once rendered: whatever a
reply, a transcript, a memory passage or a file name carries (OSC 52, CSI 2J, C1 controls, bidi
overrides), the terminal receives visible characters. Rich's own styling is not text, so colours
still work on a terminal.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderableType, RenderHook, RenderResult
from rich.segment import Segment
from rich.text import Text

from neotask_tui.text.terminal import inert


class _Inert:
    """Renders ``inner`` and makes the text of every segment inert (control segments are Rich's own)."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for seg in console.render(self.inner, options):
            yield seg if seg.control else Segment(inert(seg.text), seg.style)


class InertRenderHook(RenderHook):
    """Makes the text of everything a console prints inert (push it on any Rich console)."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Inert(r) for r in renderables]


class InertConsole(Console):
    """A :class:`~rich.console.Console` whose printed text is inert (arguments as for Rich)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.push_render_hook(InertRenderHook())

    def render_str(self, text: str, **kw: Any) -> Text:
        """Rich's string → Text conversion, on the inert text (markup still applies)."""
        return super().render_str(inert(text), **kw)
