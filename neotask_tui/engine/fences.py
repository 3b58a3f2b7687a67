"""Fences around untrusted text in the context: quoted data that can neither close nor open a fence.

Recalled memories, tool results and the rolling summary reach the model inside tags
(``<recalled-memory source="…" scope="…" id="…">``, ``<tool-output name="…">``,
``<conversation-summary>``). Two rules keep the data inside:

- attribute values (a memory file name, a scope, a tool name) are escaped as in XML, and so is
  every control, format (zero-width, bidi) and line-break character, so a value can never end its
  tag or add an attribute;
- in a body, anything a forgiving reader could take for one of these tags — any case, spaces or
  slashes around the name, ``_``/space/dash variants, full-width or small-form brackets and
  letters, Cyrillic/Greek look-alike letters, zero-width or soft-hyphen characters inside — has its
  opening bracket replaced by ``&lt;``: the text stays readable, the tag is gone.

Pure functions; no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

FENCE_TAGS: Final = ("recalled-memory", "tool-output", "conversation-summary")
"""Every tag the engine fences untrusted text with."""

# Characters a reader may take for "<", ">", "/" or '"' that NFKC leaves alone.
_LOOKALIKE: Final = {
    "\u2039": "<", "\u3008": "<", "\u27e8": "<", "\u276e": "<", "\u02c2": "<", "\u1438": "<", "\u2329": "<",
    "\u203a": ">", "\u3009": ">", "\u27e9": ">", "\u276f": ">", "\u02c3": ">", "\u1433": ">", "\u232a": ">",
    "\u2044": "/", "\u2215": "/", "\u29f8": "/", "\u2571": "/",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
}
# Latin look-alikes (Cyrillic, Greek) of the letters in our tag names.
_CONFUSABLE: Final = str.maketrans({
    "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0441": "c", "\u0440": "p", "\u0443": "y", "\u0445": "x",
    "\u0456": "i", "\u04cf": "l", "\u0442": "t", "\u043c": "m", "\u0455": "s", "\u0475": "v", "\u0501": "d",
    "\u03bf": "o", "\u03b1": "a", "\u03b5": "e", "\u03b9": "i", "\u03c1": "p", "\u03c5": "u", "\u03bd": "v",
    "\u03c4": "t", "\u03ba": "k", "\u0131": "i", "\u0269": "i", "\u217c": "l", "\u2170": "i",
    **_LOOKALIKE,
})
# `[\s/]*` (one class, not `\s*/?\s*`) keeps the scan linear on long runs of spaces.
_TAG_LIKE: Final = re.compile(r"<[\s/]*(?:recalled|tool|conversation)[\W_]{0,16}(?:memory|output|summary)")
_INVISIBLE: Final = ("Cf", "Mn", "Me")


def _skeleton(text: str) -> tuple[str, list[int]]:
    """``text`` as a forgiving reader sees it (invisible marks dropped, NFKC, case- and look-alike
    folded), and for each skeleton character the index of the character it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, c in enumerate(text):
        if c.isascii():
            s = c.lower()
        elif unicodedata.category(c) in _INVISIBLE:
            continue
        else:
            s = unicodedata.normalize("NFKC", c).casefold().translate(_CONFUSABLE)
        out.append(s)
        where.extend([i] * len(s))
    return "".join(out), where


def neutralise_tags(body: str) -> str:
    """``body`` with every look-alike of a fence tag (opener or closer) made inert.

    The opening bracket of each match becomes ``&lt;``; nothing else changes.
    """
    if "<" not in body and body.isascii():
        return body
    skel, where = _skeleton(body)
    starts = sorted({where[m.start()] for m in _TAG_LIKE.finditer(skel)})
    if not starts:
        return body
    parts: list[str] = []
    prev = 0
    for i in starts:
        parts += [body[prev:i], "&lt;"]
        prev = i + 1
    parts.append(body[prev:])
    return "".join(parts)


def _needs_ref(c: str) -> bool:
    if c in "&<>\"'":
        return True
    if c.isascii():
        return not c.isprintable()
    if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Mn", "Me") or c in _LOOKALIKE:
        return True
    return any(x in "&<>\"'/" for x in unicodedata.normalize("NFKC", c))


def escape_attr(value: str) -> str:
    """An attribute value that cannot end its tag: XML escapes for ``& < > " '``, and a numeric
    reference for every control, format, line-break and bracket/quote look-alike character
    (an XML 1.1 reader gives the value back; ``html.unescape`` turns C0 controls into U+FFFD)."""
    named = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
    return "".join((named.get(c) or f"&#x{ord(c):x};") if _needs_ref(c) else c for c in value)


def fence(tag: str, body: str, **attrs: str) -> str:
    """``body`` inside ``<tag attrs…>`` … ``</tag>``, attributes escaped and look-alike tags in the
    body neutralised."""
    head = "".join(f' {k}="{escape_attr(v)}"' for k, v in attrs.items())
    return f"<{tag}{head}>\n{neutralise_tags(body)}\n</{tag}>"
