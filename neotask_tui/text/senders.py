"""How a line of a pasted chat log or a bridged group chat names its sender.

``Bob: …``, ``Mary Ann: …``, ``[2026-03-02 09:14] Bob: …``, ``<bob> …``. One home for the shape,
used where a line's sender matters: the secret scanner skips it (a value alone after a sender is
still a value alone on its line), the memory index keeps it (a question naming a person finds
that person's lines), and the reader of the user's own words skips a pasted log
(:func:`pasted_log_lines`, :mod:`neotask_tui.text.quoted`).
"""

from __future__ import annotations

import re
from typing import Final

_BRACKETED_TIME = r"\[[^\]\n]{1,40}\][ \t]*"
_NICK = r"[^<>\s]{1,32}"



def _capitalised_words(capitals: str) -> str:
    """One to three words, each starting with one of ``capitals`` (a character-class body)."""
    word = "[" + capitals + r"][\w'’.-]{0,30}"
    return word + r"(?:[ \t]" + word + r"){0,2}"


SENDER_NAME: Final = _capitalised_words("A-Z")
"""A sender's name as it stands before a colon: one to three capitalised words."""

LINE_PREFIX: Final = r"(?:" + _BRACKETED_TIME + r")?(?:" + SENDER_NAME + r":[ \t]+|<" + _NICK + r">[ \t]+)?"
"""What may stand before a chat line's text: a time in brackets, then ``Name: `` or ``<nick> ``
(each optional; matches the empty string)."""

_LOG_NAME = _capitalised_words("A-ZА-ЯЁ")
# a Latin or Cyrillic capitalised name: a log's senders; the index's sender signal and the secret
# scanner keep SENDER_NAME (their figures are measured with it)
_TIME = r"(?P<time>" + _BRACKETED_TIME + r"|\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]?[AaPp][Mm])?[ \t]+)?"
LOG_LINE: Final = re.compile(
    r"^[ \t]*" + _TIME + r"(?:(?P<bold>\*\*)?(?P<name>" + _LOG_NAME + r")(?(bold)\*\*):[ \t]"
    r"|<(?P<nick>" + _NICK + r")>[ \t])",
    re.M)
"""A line that starts with its sender, after an optional time (``[09:14]``, ``14:02``): ``Name:``,
``**Name**:`` (Slack, Markdown) or ``<nick>``; ``name`` or ``nick`` is the sender."""
_REQUEST = re.compile(r"(?i)(?:remember|запомни(?:те)?)\b")
"""A line that starts "Remember: …" is a request, not a sender called Remember."""


def pasted_log_lines(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of the lines of ``text`` that belong to a pasted chat log.

    A log is two or more different senders, each line starting with its sender (:data:`LOG_LINE`),
    that look like a conversation: a line carries a time, a ``<nick>`` or a bold name, or a sender
    speaks twice. A message of labelled lines ("Goal: …" / "Rules: …", "Note: …" / "Remember: …") is
    the user's own structure, not a log; a single "Bob: …" line may be the user's own way of writing.
    A log line's indented continuation lines belong to it.
    """
    found = [m for m in LOG_LINE.finditer(text) if not _REQUEST.match(m.group("name") or "")]
    senders = [(m.group("name") or m.group("nick")).casefold() for m in found]
    marked = any(m.group("time") or m.group("nick") or m.group("bold") for m in found)
    if len(set(senders)) < 2 or not (marked or len(senders) > len(set(senders))):
        return []
    spans = []
    for m in found:
        end = text.find("\n", m.start())
        while end >= 0 and text[end + 1: end + 2] in (" ", "\t"):  # an indented continuation
            nxt = text.find("\n", end + 1)
            if not text[end + 1: len(text) if nxt < 0 else nxt].strip():
                break
            end = nxt
        spans.append((m.start(), len(text) if end < 0 else end))
    return spans
