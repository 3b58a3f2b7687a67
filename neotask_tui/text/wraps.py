"""Line breaks that continue a sentence.

A message typed or pasted with a line break inside a sentence ("I always use token ghp_…\\nfor the
acme/api repo, and from now on answer in English.") is one sentence. Every splitter of messages
into sentences or statements (session state, inbox proposals, compaction, what recall searches for)
treats a line break as a sentence end, so such a sentence became two fragments: the part after the
break lost what it was about, and the identifier in it its sentence. :func:`join_wraps` makes such
a break a space before splitting, keeping every position (one character for one), so spans found on
the joined text are spans of the original.

A break is a wrap when the next line starts with a lower-case letter and the line before it ends
inside a sentence: with a comma or a function word ("in", "the", "и"), or with a letter, a digit
or a closing bracket or quote after at least :data:`~neotask_tui.tuning.WRAPPED_LINE_CHARS`
characters (a line that long was wrapped; a short one is an item of a list typed without bullets:
"fix tests\nupdate docs" stays two). A line ending in ``.!?…:;``, a line starting with a capital,
a digit or a bullet, and a blank line stay apart, except a secret's value on the line after its cue
word ("password\nHunter2 tonight") or where a redacted one stands (``[REDACTED:…]``).
"""

from __future__ import annotations

from typing import Final

import regex

from neotask_tui.tuning import WRAPPED_LINE_CHARS

_OPEN_END: Final = regex.compile(
    r"(?<!\w)(?:a|an|the|to|of|in|on|at|for|with|and|or|but|from|by|as|is|are|was|were|my|our|your|"
    r"their|his|her|its|that|и|в|во|на|с|со|к|по|а|но|из|для|о|об|от|что|я|мы|ты|вы|он|она|они|это|"
    r"не|или|же)$",
    regex.I,
)
"""A line ending in a function word ("stop using emojis in", "Меня зовут Боб, и я") goes on below."""
_BREAK: Final = regex.compile(r"(?<=([^\n]*))\n(?=[ \t]*\p{Ll})")
_VALUE_BREAK: Final = regex.compile(
    r"(?<=(?<!\w)(?:password|passphrase|passcode|pin|token|key|secret|пароль|пин|токен|ключ)"
    r"(?:[ \t]*(?:is|stays|remains|equals|:|=|—|–|-|это|оста[её]тся))?[ \t]*)\n(?=[ \t]*\S*[\d!@#$%^&*+?~_])"
    r"|\n(?=[ \t]*\[REDACTED:)",
    regex.I,
)
"""A value on the line after its cue ("…and password\nSumWrap44 tonight"), or where a redacted one
stood: the same sentence, whatever letter the value starts with. The value must have a digit or a
symbol in its first word: "Rotate the key\nUpdate the docs" stays two lines."""


def join_wraps(text: str) -> str:
    """``text`` with each line break inside a sentence made a space (same length, same positions)."""
    if "\n" not in text:
        return text

    def one(m: regex.Match[str]) -> str:
        line = m.group(1).rstrip(" \t")
        if line.endswith(",") or _OPEN_END.search(line):
            return " "
        if len(line.strip()) >= WRAPPED_LINE_CHARS and regex.search(r"[\w)\]»”'\"]$", line):
            return " "
        return "\n"

    return _BREAK.sub(one, _VALUE_BREAK.sub(" ", text))
