"""What a statement says about the work's progress: done, or still to do (English and Russian).

"The migration is done", "I've fixed the import", "готово", "я уже починил тесты" report work
done; "we still need to update the docs", "the README is not done yet", "next: rename the module",
"осталось обновить доку", "тесты ещё не исправлены" name work still open. A negated report ("it
isn't fixed yet", "ещё не сделано") is work still to do, never work done.
"""

from __future__ import annotations

import re

_DONE_WORDS = (
    r"done|finished|complete|completed|merged|fixed|deployed|shipped|resolved|closed|released|landed|sorted out"
    r"|added|removed|implemented|written|pushed|migrated|updated|renamed|installed|configured|upgraded|reverted"
)
_DONE = re.compile(
    r"\b(?:is|are|was|were|has been|have been|got|'s|'re)\s+(?:now\s+|already\s+|finally\s+|all\s+)?"
    rf"(?:{_DONE_WORDS})\b"
    rf"|\b(?:i|we)(?:'ve| have)?\s+(?:already\s+|just\s+|now\s+|finally\s+)?(?:done|finished|completed|merged|fixed"
    rf"|deployed|shipped|resolved|closed|released|added|removed|implemented|wrote|pushed|migrated|updated|renamed"
    rf"|installed|configured|upgraded|reverted)\b"
    r"|^(?:done|finished|fixed|merged|deployed)\b|\b(?:works|passes|builds) now\b|\bis (?:now )?green\b"
    r"|(?<!\w)(?:готово|сделано|сделан[аоы]?|выполнено|исправлено|починено|закрыт[аоы]?|завершен[аоы]?|задеплоен\w*"
    r"|смержен\w*|выкачен\w*)(?!\w)"
    r"|(?<!\w)(?:я |мы )?(?:уже |только что |наконец )?(?:исправил\w*|сделал\w*|закончил\w*|добавил\w*|починил\w*"
    r"|смержил\w*|задеплоил\w*|выкатил\w*|переименовал\w*|написал\w*|обновил\w*|удалил\w*|перенёс|перенесл\w*)"
    r"(?!\w)|(?<!\w)(?:теперь |уже )работает(?!\w)",
    re.IGNORECASE,
)
_NOT_DONE = re.compile(
    rf"\b(?:not|n't|never)\s+(?:been\s+|yet\s+|quite\s+|fully\s+)?(?:{_DONE_WORDS}|working)\b|\bnot yet\b|\byet to\b"
    r"|(?<!\w)(?:ещё|еще|пока)\s+не(?!\w)|(?<!\w)не\s+(?:\w+\s+)?(?:сделан\w*|готов\w*|исправ\w*|законч\w*|работает"
    r"|смерж\w*|задеплоен\w*|починил\w*|сделал\w*|закрыт\w*)",
    re.IGNORECASE,
)
_TODO = re.compile(
    r"\bstill (?:need|needs|to|must|missing|open|pending|left)\b"
    # "we still have two failing tests", not "I still have that dog you gave me" (a thing kept)
    r"|\bstill (?:have|has|got)\b(?! (?:that|this|those|these|my|your|his|her|our|their|it|them|him|one)\b)"
    r"|\bto-?do\b|\bremaining\b|\bleft to\b|\bnext(?: step)?(?:,|:| we| i| you| is| up)"
    # "after that" as a step (first, at the end, before a comma), not "after that tough week" (which one)
    r"|(?:^|[,;:]\s*|\b(?:and|then)\s+)after that\b|\bafter that\s*(?:[,;:.!]|$)"
    r"|\bthen we\b|\bwe (?:also )?(?:need|have) to\b"
    r"|\byet to\b|\bnot (?:\w+ )?yet\b|\bpending\b|\bopen items?\b|\bstill open\b"
    r"|(?<!\w)(?:осталось|остается|остаётся|ещё нужно|еще нужно|ещё надо|еще надо|нужно ещё|нужно еще|потом|дальше"
    r"|следующ\w+ шаг|затем|в планах|пока не)(?!\w)|(?<!\w)(?:ещё|еще) не(?!\w)",
    re.IGNORECASE,
)


def reports_done(sentence: str) -> bool:
    """Whether ``sentence`` reports work as done ("the migration is done", "я починил тесты")."""
    return bool(_DONE.search(sentence)) and not _NOT_DONE.search(sentence) and not sentence.rstrip().endswith("?")


def names_todo(sentence: str) -> bool:
    """Whether ``sentence`` names work still open ("we still need to...", "ещё не сделано", "next: ...")."""
    if sentence.rstrip().endswith("?"):
        return False
    return bool(_TODO.search(sentence) or (_DONE.search(sentence) and _NOT_DONE.search(sentence)))
