"""How a line of a pasted chat log or a bridged group chat names its sender.

``Bob: …``, ``Mary Ann: …``, ``[2026-03-02 09:14] Bob: …``, ``<bob> …``. One home for the shape,
used where a line's sender matters: the secret scanner skips it (a value alone after a sender is
still a value alone on its line), and the memory index keeps it (a question naming a person finds
that person's lines).
"""

from __future__ import annotations

import re
from typing import Final

SENDER_NAME: Final = r"[A-Z][\w'’.-]{0,30}(?:[ \t][A-Z][\w'’.-]{0,30}){0,2}"
"""A sender's name as it stands before a colon: one to three capitalised words."""

LINE_PREFIX: Final = r"(?:\[[^\]\n]{1,40}\][ \t]*)?(?:" + SENDER_NAME + r":[ \t]+|<[^<>\s]{1,32}>[ \t]+)?"
"""What may stand before a chat line's text: a time in brackets, then ``Name: `` or ``<nick> ``
(each optional; matches the empty string)."""

LOG_LINE: Final = re.compile(
    r"^[ \t]*(?:\[[^\]\n]{1,40}\][ \t]*)?(?:(?P<name>" + SENDER_NAME + r"):[ \t]|<(?P<nick>[^<>\s]{1,32})>[ \t])",
    re.M)
"""A line that starts with its sender (after an optional time in brackets); ``name`` or ``nick``
is the sender."""


def pasted_log_lines(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of the lines of ``text`` that belong to a pasted chat log: lines
    starting with a sender, when at least two different senders speak. One "Bob: …" line may be the
    user's own way of writing; two people's lines are a record of a conversation, not the user's words.
    """
    lines = [(m.start(), m.group("name") or m.group("nick")) for m in LOG_LINE.finditer(text)]
    if len({who.casefold() for _, who in lines}) < 2:
        return []
    spans = []
    for start, _ in lines:
        end = text.find("\n", start)
        spans.append((start, len(text) if end < 0 else end))
    return spans
