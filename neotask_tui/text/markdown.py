"""Markdown parsed to be shown rendered, without losing or rewriting what it says.

A reply's Markdown is rendered in the app and in ``chat --plain`` (emphasis, lists, code blocks),
but the words are the reply's own: a developer who writes ``&lt;b&gt;`` or ``&#x1b;`` means those
characters, not ``<b>`` or a decoded ESC (shown ``�``), and an inline ``<b>``, ``<br>`` or a
``<div>`` block is text to read, not a tag for the renderer to drop. Both renderers (Rich for the
plain front ends, Textual for the app) parse with :func:`as_typed`.
"""

from __future__ import annotations

from typing import Final

from markdown_it import MarkdownIt

REWRITING_RULES: Final = ("entity", "html_inline", "html_block")
"""markdown-it rules whose output is not the text as typed: ``entity`` decodes ``&lt;`` and
``&#x1b;``; ``html_inline`` and ``html_block`` make raw HTML tokens that Rich and Textual drop."""


def as_typed(md: MarkdownIt) -> MarkdownIt:
    """``md`` with :data:`REWRITING_RULES` off: an entity shows as typed (``&lt;b&gt;``, never
    ``<b>``), raw HTML is plain text. Everything else stays Markdown (a backslash escape too)."""
    return md.disable(list(REWRITING_RULES))
