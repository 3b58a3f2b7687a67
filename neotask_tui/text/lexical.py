"""Lexical normalisation shared by indexing and querying (the BM25 side of hybrid search).

Text is lower-cased, split into word tokens, stripped of stopwords (English and Russian) and
stemmed with Snowball (English for Latin words, Russian for Cyrillic ones) via ``py_rust_stemmers``
(a fastembed dependency). The normalised string is what the LanceDB full-text index sees, so the
index itself only splits on whitespace: the same function runs on documents and queries.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

_TOKEN = re.compile(r"[0-9a-zà-ÿа-яё]+(?:['’][a-z]+)?", re.IGNORECASE)

_EN = """a an the and or but if of to in on at by for with from as is are was were be been being do does
    did doing have has had having i me my mine myself you your yours yourself he him his himself she her
    hers herself it its itself we us our ours ourselves they them their theirs themselves this that these
    those what which who whom whose when where why how there here than then so not no nor can could would
    should will shall may might must just also too very about into over after before up down out off again
    further once all any both each few more most other some such only own same s t d ll m o re ve y ever
    am let lets let's i'm i've i'd i'll you're you've he's she's it's we're they're that's what's don't
    doesn't didn't isn't wasn't aren't weren't won't can't couldn't wouldn't shouldn't hey hi oh yeah
    yes ok okay wow really well thanks thank"""
_RU = """и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее её мне
    было вот от меня еще ещё нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до
    вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их
    чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой
    совсем ним здесь этом один почти мой тем чтобы нее неё сейчас были куда зачем всех никогда можно при
    наконец два об другой хоть после над больше тот через эти нас про всего них какая много разве три
    эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно
    всю между это"""
STOP_EN = frozenset(_EN.split())
STOP_RU = frozenset(_RU.split())
STOPWORDS = STOP_EN | STOP_RU


@functools.cache
def _stemmers() -> tuple[Callable[[str], str], Callable[[str], str]]:
    try:
        from py_rust_stemmers import SnowballStemmer
    except ImportError:  # pragma: no cover - fastembed depends on it

        def ident(w: str) -> str:
            return w

        return ident, ident
    en = SnowballStemmer("english")
    ru = SnowballStemmer("russian")
    return en.stem_word, ru.stem_word


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball stem of one lower-case word (Russian rules for Cyrillic, English otherwise)."""
    en, ru = _stemmers()
    if any("а" <= c <= "я" or c == "ё" for c in word):
        return ru(word.replace("ё", "е"))
    return en(word.replace("’", "'"))


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (stopwords kept, not stemmed)."""
    return [m.group(0).lower().replace("’", "'") for m in _TOKEN.finditer(text)]


def unpossessive(word: str) -> str:
    """A word token (see :func:`words`) without a possessive ending: "nate's" → "nate", "james'" → "james"."""
    return word.rsplit("'", 1)[0] if word.endswith(("'s", "'")) else word


def terms(text: str) -> list[str]:
    """Normalised terms: tokens minus stopwords, stemmed, possessive ``'s`` dropped."""
    out: list[str] = []
    for w in words(text):
        if w in STOPWORDS:
            continue
        w = unpossessive(w)
        if not w or w in STOPWORDS:
            continue
        out.append(stem(w))
    return out


def normalize(text: str) -> str:
    """The whitespace-joined :func:`terms` of ``text`` (what the FTS index stores)."""
    return " ".join(terms(text))
