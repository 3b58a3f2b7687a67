"""Markdown that never hides where a link points.

Textual's Markdown widget shows a link as its text only (``[your bank](https://evil.example)``
reads "your bank" and opens the hidden target on a click) and an image as its alt text. Every
Markdown the app shows (replies, slash-command output, summaries, recalled passages) is parsed with
:func:`parser`, which adds the target after each link and image as plain text — ``your bank
(https://evil.example)`` — unless the text already is the target (an autolink). A target that holds a
control character (made visible, ``␛``) is shown as written and is no link (red team 39). Text is never read
as Textual markup (the widget builds ``Content`` from the parsed tokens), and never rewritten: an
entity (``&lt;b&gt;``) or raw HTML (``<b>``) shows as typed (:func:`~neotask_tui.text.markdown.as_typed`).
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from textual.widgets import Markdown

from neotask_tui.text.markdown import as_typed, holds_control, keep_written_targets


def _shown(text: str, href: str) -> bool:
    """Whether the visible text already says where the link goes (an autolink, a bare URL)."""
    text = text.strip()
    return bool(text) and href in (text, f"mailto:{text}", f"http://{text}", f"https://{text}")


def _target(href: str) -> Token:
    tok = Token("text", "", 0)
    tok.content = f" ({href})"
    return tok


def show_link_targets(state: StateCore) -> None:
    """markdown-it core rule: a ``(target)`` text token after every link and image."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        out: list[Token] = []
        opened: list[tuple[str, int, bool]] = []
        for tok in block.children:
            if tok.type == "link_open":
                href = str(tok.attrs.get("href", ""))
                linked = not holds_control(href)  # a target with a control in it: text, never a link
                if linked:
                    out.append(tok)
                opened.append((href, len(out), linked))
                continue
            if tok.type == "link_close" and opened:
                href, start, linked = opened.pop()
                if linked:
                    out.append(tok)
                text = "".join(t.content for t in out[start:] if t.type in ("text", "code_inline"))
                if href and not _shown(text, href):
                    out.append(_target(href))
                continue
            out.append(tok)
            if tok.type == "image":
                src = str(tok.attrs.get("src", ""))
                if src:
                    out.append(_target(src))
        block.children = out


def parser() -> MarkdownIt:
    """Textual's default ("gfm-like") parser, text as typed, with every link's and image's target shown."""
    md = keep_written_targets(as_typed(MarkdownIt("gfm-like")))
    md.core.ruler.push("show_link_targets", show_link_targets)
    return md


class SafeMarkdown(Markdown):
    """:class:`~textual.widgets.Markdown` whose links and images show their targets."""

    def __init__(self, markdown: str | None = None, **kw: Any) -> None:
        kw.setdefault("parser_factory", parser)
        super().__init__(markdown, **kw)
