"""How a line of a pasted chat log or a bridged group chat names its sender.

``Bob: …``, ``Mary Ann: …``, ``[2026-03-02 09:14] Bob: …``, ``<bob> …``. One home for the shape,
used where a line's sender matters: the secret scanner skips it (a value alone after a sender is
still a value alone on its line), and the memory index keeps it (a question naming a person finds
that person's lines).
"""

from __future__ import annotations

from typing import Final

SENDER_NAME: Final = r"[A-Z][\w'’.-]{0,30}(?:[ \t][A-Z][\w'’.-]{0,30}){0,2}"
"""A sender's name as it stands before a colon: one to three capitalised words."""

LINE_PREFIX: Final = r"(?:\[[^\]\n]{1,40}\][ \t]*)?(?:" + SENDER_NAME + r":[ \t]+|<[^<>\s]{1,32}>[ \t]+)?"
"""What may stand before a chat line's text: a time in brackets, then ``Name: `` or ``<nick> ``
(each optional; matches the empty string)."""
