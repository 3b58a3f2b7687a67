"""Quoted text and code in a message, masked so a reader of the user's own words skips them.

A "Remember: …" or "always …" that the user quotes from someone else ('he said "remember: X"',
«Всегда отвечай по-русски», — сказал он), writes inside code (inline backticks, a fenced block),
cites as a Markdown block quote (``> …``) or pastes as a chat log (lines of two or more senders,
:func:`~neotask_tui.text.senders.pasted_log_lines`: "Bob: my name is Bob") is not the user's
request. :func:`mask_quoted` returns the text with every character inside such a span replaced by
``x`` (line breaks kept, the quote marks themselves kept), so the result has the same length: a
match found in the mask is a span of the original text, and the quoted words are still there to
be shown.
"""

from __future__ import annotations

import re
from typing import Final

from neotask_tui.text.senders import pasted_log_lines

MASK: Final = "x"
"""What a masked character becomes: a letter, so a quoted phrase still reads as one word
("my motto is \\"xxxx\\"" says something), never a marker or a sentence end."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*$", re.M)
_INLINE_CODE = re.compile(r"(`+)(?!`)([^\n]*?[^`\n])\1(?!`)")
_QUOTES = (
    re.compile(r"\"([^\"\n]{1,2000})\""),
    re.compile(r"“([^“”\n]{1,2000})”"),
    re.compile(r"„([^„“”\n]{1,2000})[“”]"),
    re.compile(r"«([^«»\n]{1,2000})»"),
    re.compile(r"‘([^‘’\n]{1,2000})’(?![\w])"),
    # a single-quoted phrase, not an apostrophe: the opening ' follows no letter, the closing one is
    # followed by none; an apostrophe inside ("'don't do it'") is one followed by a letter
    re.compile(r"(?<![\w'’])'(?=[^\s'])((?:[^'\n]|'(?=\w)){1,2000}?)(?<=\S)'(?![\w'’])"),
)
_BLOCK_QUOTE = re.compile(r"^ {0,3}>[^\n]*$", re.M)


def _fill(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = MASK


def mask_quoted(text: str) -> str:
    """``text`` with code and quoted text masked (see the module docstring); same length."""
    logs = pasted_log_lines(text) if ":" in text or ">" in text else []
    if not logs and not any(c in text for c in "`~\"'«»“”„‘’>"):
        return text
    chars = list(text)
    for start, end in logs:
        _fill(chars, start, end)
    fence: tuple[str, int] | None = None
    for m in _FENCE.finditer(text):
        mark = m.group(1)
        if fence is None:
            fence = (mark, m.start())
        elif mark[0] == fence[0][0] and len(mark) >= len(fence[0]) and not m.group(0).strip()[len(mark):].strip():
            _fill(chars, fence[1], m.end())
            fence = None
    if fence is not None:  # a block left open runs to the end of the text
        _fill(chars, fence[1], len(text))
    for m in _BLOCK_QUOTE.finditer(text):
        _fill(chars, m.start(), m.end())
    masked = "".join(chars)
    for m in _INLINE_CODE.finditer(masked):
        _fill(chars, m.start(), m.end())
    masked = "".join(chars)
    for rx in _QUOTES:
        for m in rx.finditer(masked):
            _fill(chars, m.start(1), m.end(1))
        masked = "".join(chars)
    return masked


__all__ = ["MASK", "mask_quoted"]
