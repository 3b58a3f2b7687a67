"""A request to remember, at the start of a message: "Remember: …", "Please remember that …",
"Запомни, что …", "Запомните — …".

The request is what the user asks the app to do; the memory is what follows. The classifier proposes
what follows (:mod:`neotask_tui.engine.language.classifier`), and recall treats the message and the
memory made from it as one passage (:func:`neotask_tui.memory.search.relevance.covered`).
"""

from __future__ import annotations

import re
from typing import Final

REQUEST_PATTERN: Final = (
    r"(?:(?:and|also|и|а|ещё|еще|также)\s+)?(?:please,?\s+|пожалуйста,?\s+)?"
    r"(?:remember|запомни(?:те)?)(?:,?\s*(?:please|пожалуйста),?)?(?:\s+(?:this|это))?"
    r"(?:\s*,?\s*(?:that|что)(?![\w-])|\s*[:—–-])\s*"
)
"""The request's words (no anchor, no flags), for patterns that read it inside a line
(:mod:`neotask_tui.text.secrets`: "Remember: V" after an announced password)."""
REQUEST: Final = re.compile(r"^\s*" + REQUEST_PATTERN, re.IGNORECASE)
"""The request: "remember"/"запомни(те)" (after "and"/"и", with "please"/"пожалуйста", "this"/"это")
followed by "that"/"что" or a colon or dash ("Remember to run the tests" is not one: the request is
the content; "Запомни что-нибудь" neither)."""


def remembered(text: str) -> str:
    """``text`` without a leading request to remember, its first letter capitalised ("Запомни: ключи
    лежат в Vault" → "Ключи лежат в Vault"); ``text`` itself when it has no request, and ``""`` when
    nothing follows the request ("Remember:", "Запомни, что")."""
    rest = REQUEST.sub("", text, count=1)
    if rest == text:
        return text
    rest = rest.strip()
    if not rest.strip(" .,;:!?…—–-"):
        return ""
    return rest[0].upper() + rest[1:]
