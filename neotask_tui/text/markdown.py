"""Markdown parsed to be shown rendered, without losing or rewriting what it says.

A reply's Markdown is rendered in the app and in ``chat --plain`` (emphasis, lists, code blocks),
but the words are the reply's own: a developer who writes ``&lt;b&gt;`` or ``&#x1b;`` means those
characters, not ``<b>`` or a decoded ESC (shown ``�``), and an inline ``<b>``, ``<br>`` or a
``<div>`` block is text to read, not a tag for the renderer to drop. Both renderers (Rich for the
plain front ends, Textual for the app) parse with :func:`as_typed`.

A link's target is shown as written too (:func:`keep_written_targets`): one that holds a control
character (made visible by :func:`~neotask_tui.text.terminal.inert` before parsing) is never
IDNA-encoded into a host nobody wrote.
"""

from __future__ import annotations

import re
from typing import Final

from markdown_it import MarkdownIt

from neotask_tui.text.terminal import is_inert

REWRITING_RULES: Final = ("entity", "html_inline", "html_block")
"""markdown-it rules whose output is not the text as typed: ``entity`` decodes ``&lt;`` and
``&#x1b;``; ``html_inline`` and ``html_block`` make raw HTML tokens that Rich and Textual drop."""


def as_typed(md: MarkdownIt) -> MarkdownIt:
    """``md`` with :data:`REWRITING_RULES` off: an entity shows as typed (``&lt;b&gt;``, never
    ``<b>``), raw HTML is plain text. Everything else stays Markdown (a backslash escape too)."""
    return md.disable(list(REWRITING_RULES))


_SHOWN_CONTROL = re.compile(r"[\u2400-\u2426]|\\x[89][0-9a-fA-F]|\\u20(?:2[a-eA-E]|6[6-9])")
"""A control character as :func:`~neotask_tui.text.terminal.inert` shows it: its Control Picture
(``␛``), or ``\\x9b`` / ``\\u202e`` spelled out for a C1 control or a bidi override."""


def holds_control(url: str) -> bool:
    """Whether a link target (as written) holds a control character, raw or made visible."""
    return not is_inert(url) or _SHOWN_CONTROL.search(url) is not None


def keep_written_targets(md: MarkdownIt) -> MarkdownIt:
    """``md`` keeping a link target that holds a control character as written (red team 39).

    markdown-it normalises a target: its host IDNA-encoded, other characters percent-encoded. The
    ``␛`` of an OSC 8 hyperlink made visible went into the host, and ``http://evil.example␛`` was
    shown as ``(http://evil.xn--example-ws3d)``, a host that appears nowhere in the text. Such a target
    is now left as written (the renderers show it, control visible, and never open it); any other is
    normalised as before."""
    normalize = md.normalizeLink

    def written(url: str) -> str:
        return url if holds_control(url) else normalize(url)

    md.normalizeLink = written  # type: ignore[method-assign]
    return md
