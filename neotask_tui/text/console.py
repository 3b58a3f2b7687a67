"""A Rich console for the plain front ends (CLI, REPL) whose printed text is inert.

Strings printed through :class:`InertConsole` go through :func:`~neotask_tui.text.terminal.inert`
before Rich parses them (so a BEL or a CR shows as ``␇``/``␍`` instead of being dropped), and every
text segment of every renderable (Markdown, tables, panels) is made inert once rendered: whatever a
reply, a transcript, a memory passage or a file name carries (OSC 52, CSI 2J, C1 controls, bidi
overrides), the terminal receives visible characters. Rich's own styling is not text, so colours
still work on a terminal.

Text is never read as Rich markup either: an :class:`InertConsole` prints strings literally (no
markup, no ``:emoji:`` codes: a ``[/dim]`` or ``[link=…]`` in a file name, a reply or a state value
shows as typed, never raises, never styles), callers style with :func:`styled` (``Text`` parts),
and no hyperlink (OSC 8) is ever emitted: Markdown goes through :func:`markdown`, which shows every
link's and image's target next to its text, so what a link points at is never hidden, and loses or
rewrites no text (:mod:`neotask_tui.text.markdown`; an image is text in its line, where it stands).
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderableType, RenderHook, RenderResult
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from neotask_tui.text.markdown import as_typed, keep_written_targets
from neotask_tui.text.terminal import inert


class _Inert:
    """Renders ``inner`` and makes the text of every segment inert (control segments are Rich's own)."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for seg in console.render(self.inner, options):
            if seg.control:
                yield seg
            else:
                style = seg.style
                if style is not None and style.link:  # no hidden hyperlink target, ever (OSC 8)
                    style = style.update_link(None)
                yield Segment(inert(seg.text), style)


class InertRenderHook(RenderHook):
    """Makes the text of everything a console prints inert (push it on any Rich console)."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Inert(r) for r in renderables]


class InertConsole(Console):
    """A :class:`~rich.console.Console` whose printed text is inert (arguments as for Rich; strings
    are not parsed as markup or emoji codes unless ``markup=True``/``emoji=True`` is passed)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        kw.setdefault("markup", False)
        kw.setdefault("emoji", False)
        super().__init__(*args, **kw)
        self.push_render_hook(InertRenderHook())

    def render_str(self, text: str, **kw: Any) -> Text:
        """Rich's string → Text conversion, on the inert text."""
        return super().render_str(inert(text), **kw)

    def print(self, *objects: Any, **kw: Any) -> None:
        """Rich's print; Markdown is always wrapped to the width, never cut at it. (``soft_wrap``
        keeps a plain line whole for a pipe, but Rich's Markdown lays out list items at the width
        and a soft-wrapped console then crops them: a piped summary lost its "[e:N]".)"""
        if kw.get("soft_wrap") is None and self.soft_wrap and any(isinstance(o, Markdown) for o in objects):
            kw["soft_wrap"] = False
        super().print(*objects, **kw)


def styled(*parts: str | Text | tuple[str, str | Style]) -> Text:
    """One line from literal parts: strings, or ``(text, style)`` pairs; nothing is read as markup.

    String parts are made :func:`inert` first: a ``Text`` silently drops BEL, CR, VT and FF, so a
    file name carrying one would otherwise lose it instead of showing ``␇``/``␍``.
    """
    return Text.assemble(*(
        inert(p) if isinstance(p, str) else (inert(p[0]), p[1]) if isinstance(p, tuple) else p
        for p in parts
    ))


def _images_in_place(state: StateCore) -> None:
    """markdown-it core rule: each image becomes the text ``🌆 alt (target)`` where it stands.

    Rich renders an image as a block of its own, printed before the rest of its paragraph's line,
    which then overflowed the width and lost its last words ("iota kappa lambda…" of a message
    with an image in it, at 80 columns)."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        for i, tok in enumerate(block.children):
            if tok.type == "image":
                src = str(tok.attrs.get("src", ""))
                title = tok.content or src.strip("/").rsplit("/", 1)[-1]
                text = Token("text", "", 0)
                text.content = f"🌆 {title}" + (f" ({src})" if src else "")
                block.children[i] = text


def _parser() -> MarkdownIt:
    """Rich's own parser (CommonMark, strikethrough, tables), text as typed, images in place."""
    md = keep_written_targets(as_typed(MarkdownIt().enable("strikethrough").enable("table")))
    md.core.ruler.push("images_in_place", _images_in_place)
    return md


class SafeMarkdown(Markdown):
    """Rich Markdown whose links show their target (``text (url)``) and never become hyperlinks,
    and whose text is the text as typed (:func:`_parser`)."""

    def __init__(self, markup: str, **kw: Any) -> None:
        kw["hyperlinks"] = False
        super().__init__("", **kw)
        self.markup = markup
        self.parsed = _parser().parse(markup)


def markdown(text: str) -> Markdown:
    """``text`` (Markdown from a reply, a state or inbox view) to print: inert, every link and image
    shown with its target, no hyperlink, no word lost or rewritten."""
    return SafeMarkdown(inert(text))
