"""A request to remember: "Remember: …", "Please remember that …", "Запомни, что …", "Запомните — …",
at the start of a message or of a clause ("…, and remember that …").

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


_REQUEST_IN: Final = re.compile(
    r"(?:^|[,;:—–(]|(?<![\w'’-])(?:so|ok|okay|oh|btw|anyway|but|кстати|ну|итак|слушай|короче|но)(?![\w'’-]),?)"
    r"[^\S\n]*(" + REQUEST_PATTERN + ")",
    re.IGNORECASE | re.MULTILINE,
)
"""A request at the start of a clause: the message's start, a line's start, after a comma, colon,
semicolon or dash, or after an interjection ("so remember that …", "кстати, запомни: …"). "I can't
remember that guy's name" and "Do you remember: …" are not requests: "remember" follows its subject."""

_CONJ = (r"(?:and(?:[^\S\n]+(?:then|also))?|then|also|plus|but|so"
         r"|и(?:[^\S\n]+(?:ещё|еще|потом|также|заодно))?|а(?:[^\S\n]+(?:ещё|еще|потом|также|теперь|заодно))?"
         r"|потом|затем|также|заодно|но|теперь|btw|by[^\S\n]+the[^\S\n]+way|кстати)")
_EN_ADDRESSED = (r"(?:(?:tell|show|give|send|remind|help|let|teach|get|bring|find|email|text|call|ask)"
                 r"[^\S\n]+(?:me|us)|(?:can|could|would|will)[^\S\n]+you|please)(?![\w'’-])")
_EN_TASK = (r"(?:say|answer|reply|respond|explain|describe|write|draft|translate|summari[sz]e|list|find|check"
            r"|look|search|calculate|compute|count|convert|suggest|recommend|make|create|generate|book|schedule"
            r"|set|add|open|run|fix|plan|compare|recap|repeat|confirm|print|show|tell|give|send|remind|help"
            r"|estimate|pick|choose|name|guess|review|rewrite|fetch|update|do)(?![\w'’-])")
_RU_TASK = (r"(?:(?:скаж|ответ|напиш|покаж|расскаж|объясн|подскаж|перевед|посчита|подсчита|найд|провер|сдела"
            r"|да|пришл|напомн|помог|посовету|предлож|состав|сгенериру|вывед|созда|сообщ|опиш|придума|назов"
            r"|выбер|сравн|повтор|уточн|поищ|запланиру|постав|добав|откр|запуст|исправ|глян|посмотр|прикин"
            r"|оцен|позвон|звон|поздрав|пожела|купи|закаж|забронир|отправ|подготов|переда|ищи)[а-яё]{0,4}?"
            r"(?:и|ите|ь|ьте|й|йте)(?:сь|ся)?"
            # any other imperative with the user as its object: "и поздравь меня", "а потом разбуди нас"
            r"|[а-яё]{2,}(?:ай|яй|ей|уй|ь|ьте|йте|ите)(?:сь|ся)?[^\S\n]+(?:мне|меня|нам|нас)(?![а-яё])"
            r"|(?:можешь|можете|сможешь|сможете|(?:не[^\S\n]+)?мог(?:ла|ли)?[^\S\n]+бы))(?![а-яё-])")
_ASKING: Final = re.compile(r"suggest|recommend|explain|translate|summari[sz]e|calculate|compute|convert"
                            r"|describe|recap|estimate", re.I)
"""English task verbs that ask the assistant even after a bare "and" ("Remember that I'm vegan and
suggest a recipe"): said of oneself they rarely follow a fact ("… and work in Munich")."""
_QUESTION = (r"(?:what|when|where|which|who|why|how|is[^\S\n]+it|are[^\S\n]+there|do[^\S\n]+you"
             r"|котор\w+|как\w*|сколько|когда|где|куда|почему|зачем|что)(?![\w'’-])")
_TRAILING: Final = re.compile(
    r"(?P<sep>[^\S\n]*[,;][^\S\n]*|[^\S\n]+)(?:(?P<conj>" + _CONJ + r")[^\S\n]*,?[^\S\n]+)?"
    r"(?:(?P<please>please|пожалуйста)[^\S\n]*,?[^\S\n]+)?"
    r"(?:(?P<addr>" + _EN_ADDRESSED + r")|(?P<task>" + _EN_TASK + r")|(?P<ru>" + _RU_TASK + r")"
    r"|(?P<q>" + _QUESTION + r"))",
    re.IGNORECASE,
)
"""A request to the assistant after the fact to remember: "…, and tell me what time it is", "… и
скажи, который час", "…, then give me a recipe", "…, and what time is it there?"."""


def _trailing_request(content: str) -> int | None:
    """Where a request to the assistant starts in ``content`` (the text after "Remember …"), if one does.

    A Russian imperative or "можешь" after any break; an English "tell me", "can you", "please" after
    a comma or a conjunction; another English verb ("…, and translate it") after a comma and a
    conjunction or after "then"; a question word only when the statement is a question ("…, and what
    time is it?"). "I live in Berlin and work in Munich" has none: "work" asks nothing of anyone.
    """
    question = content.rstrip().endswith("?")
    for m in _TRAILING.finditer(content):
        if m.start() == 0:
            continue
        comma = "," in m["sep"] or ";" in m["sep"]
        conj = (m["conj"] or "").casefold()
        broken = comma or bool(conj) or bool(m["please"])
        if m["ru"] or (m["addr"] and broken) or (m["q"] and question and (comma or conj)):
            return m.start()
        if m["task"] and ((comma and conj) or conj.endswith("then") or bool(m["please"])
                          or (conj and _ASKING.fullmatch(m["task"]))):
            return m.start()
    return None


def remembered_span(statement: str) -> tuple[int, int] | None:
    """Where the memory that a request to remember asks for sits in ``statement`` (one sentence).

    It starts after the request ("Remember: ", "…, and remember that ", "Запомни, что ") and ends
    before a request to the assistant that follows it ("…, и скажи, который час"), trailing spaces
    and punctuation not included. ``None`` when the statement holds no request at a clause start;
    an empty span when nothing follows the request.

    Read ``statement`` with quotes and code masked (:func:`neotask_tui.text.quoted.mask_quoted`):
    the span is the same in the original.
    """
    m = _REQUEST_IN.search(statement)
    if m is None:
        return None
    start = m.end()
    content = statement[start:]
    cut = _trailing_request(content)
    end = start + (cut if cut is not None else len(content))
    while end > start and statement[end - 1] in " \t\n,;:—–-.!…":
        end -= 1
    return start, max(start, end)
