"""Whether a statement takes back an earlier one (English and Russian, no model).

"Let's go with option B." then "Actually, scrap that. We go with option C." — the second message
revokes the first decision; a summary that keeps option B as current has drifted. The cue words
come in two strengths:

- **strong** cues revoke on their own: "scrap that", "forget that", "never mind", "change of plan",
  "on second thought", "I changed my mind", "cancel that", "scratch that", "отбой", "забудь",
  "передумал", "отменяем"; with nothing else to go on they revoke the user's statement just before,
  and an assistant's proposal that is the statement just before is revoked with whatever else is;
- **weak** cues ("actually", "instead", "rather", "not X but Y", "switch to", "no longer", "на самом
  деле", "всё-таки", "вместо", "не X, а Y", "уже не", "больше не", "лучше") revoke only an earlier
  statement on the same topic (sharing a content word), since "actually, one more thing" and "use
  tabs instead of spaces" revoke nothing by themselves.
"""

from __future__ import annotations

import re
from typing import Literal

Strength = Literal["strong", "weak"]

_STRONG = re.compile(
    r"\bscrap (?:that|it|this|the\b)|\bscratch (?:that|it|this)\b|\bforget (?:that|it|this|about (?:it|that|this))\b"
    r"|\bnever ?mind\b|\bchange of plans?\b|\bon second thoughts?\b"
    r"|\b(?:i|we)(?:'ve| have)? changed (?:my|our) minds?\b"
    r"|\bcancel (?:that|it|this)\b|\bdrop (?:that|it|this) (?:idea|plan)\b|\bignore (?:that|what i said"
    r"|my (?:last|previous|earlier))\b|\bthat'?s (?:off|cancelled|canceled)\b|\bno,? wait\b|\bwait,? no\b"
    r"|\b(?:revert|reverse|undo) (?:that|the|this) (?:decision|choice)\b"
    r"|(?<!\w)(?:отбой|забудь\w*|передумал\w*|отмена|отменя\w*|отменим|переиграем|поменяем план"
    r"|планы поменялись)(?!\w)",
    re.IGNORECASE,
)
_WEAK = re.compile(
    r"\bactually\b|\brather\b|\binstead\b|\bnot \w+(?: \w+)?,? but\b|\bswitch(?:ing|ed)? (?:to|over)\b"
    r"|\bno longer\b|\bnot anymore\b|\bany ?more\b"
    r"|\bafter all\b|\bnow we\b|\bfrom now\b|\bupdate:|\bcorrection\b|\bturns out\b"
    r"|(?<!\w)(?:на самом деле|всё-таки|все-таки|уже не|больше не|лучше|переходим на|переключ\w+ на|теперь"
    r"|поправка|исправление|вместо|наоборот)(?!\w)|(?<!\w)не\s+[\w-]+(?:\s+[\w-]+)?,\s+а(?!\w)",
    re.IGNORECASE,
)


def revocation_cue(text: str) -> Strength | None:
    """``strong`` or ``weak`` when ``text`` takes something back (see the module doc), else ``None``."""
    if _STRONG.search(text):
        return "strong"
    if _WEAK.search(text):
        return "weak"
    return None


def strong_cue_at(text: str) -> int | None:
    """Where the first strong cue of ``text`` starts ("scrap that", "передумал"), or ``None``."""
    m = _STRONG.search(text)
    return None if m is None else m.start()


def strip_cues(text: str) -> str:
    """``text`` without its cue words: what is left names the topic ("scrap that, option C" → "option C")."""
    return _WEAK.sub(" ", _STRONG.sub(" ", text))
