"""A bare refusal: a request that is only "without X" / "no X" ("Пожалуйста, без эмодзи.", "No emojis,
please."), shared by the session rules (:mod:`.constraints`, :mod:`.rules`) and the temporary
preferences of the classifier ("до пятницы без смайликов", "until Friday no emojis").

Each item names at most two words, so a description ("Без эмодзи текст выглядит лучше", "no one is in
the office") is not one; neither is a formula of chat or a status report ("без проблем", "no worries",
"без изменений", "no change").
"""

from __future__ import annotations

import re

__all__ = ["NO_IDIOMS", "WITHOUT_IDIOMS", "bare_refusal"]

_BARE = re.compile(
    r"(?:please,?\s+|пожалуйста,?\s+)?(?P<lead>without|без|no)\s+(?P<what>[\w-]+(?:\s+[\w-]+)?)"
    r"(?:(?:\s*,\s*|\s+(?:and|or|и|или)\s+)(?:without\s+|без\s+|no\s+)?[\w-]+(?:\s+[\w-]+)?)*"
    r"(?:,?\s+(?:please|pls|пожалуйста))?[\s.!…]*",
    re.IGNORECASE,
)
WITHOUT_IDIOMS = frozenset((
    "a", "doubt", "question", "problem", "problems", "проблем", "вопросов", "понятия", "сомнения", "сомнений",
    "разницы", "шуток", "обид", "толку", "проблемы",
    # a status, not a request: "Пока без изменений", "до пятницы без изменений" (nothing changes till then)
    "изменений", "перемен",
))
"""What after "without" / "без" makes a formula of chat or a status ("без проблем"), not a request."""
NO_IDIOMS = frozenset((
    "way", "worries", "worry", "problem", "problems", "doubt", "doubts", "wonder", "kidding", "idea", "matter",
    "pressure", "thanks", "thank", "one", "biggie", "big", "offense", "offence", "clue", "joke", "sweat", "rush",
    "hard", "change",
))
"""What after "no" makes a formula of chat or a status ("no worries", "no one", "no change")."""


def bare_refusal(text: str) -> bool:
    """Whether ``text`` (fillers and a speaker label already removed) is only "without X" / "без X" /
    "no X", each item at most two words and not a formula (:data:`WITHOUT_IDIOMS`, :data:`NO_IDIOMS`)."""
    m = _BARE.fullmatch(text.strip())
    if m is None:
        return False
    first = m.group("what").split()[0].lower()
    return first not in (NO_IDIOMS if m.group("lead").lower() == "no" else WITHOUT_IDIOMS)
