"""Lexical normalisation shared by indexing and querying (the BM25 side of hybrid search).

One function of the text, run on documents and on queries alike (the normalised string is what the
LanceDB full-text index sees, so the index itself only splits on whitespace):

1. **NFKC and casefolding**: full-width forms, ligatures (``ﬁ``), superscripts and compatibility
   characters fold to their plain form; ``Straße`` becomes ``strasse``, ``ΣΟΦΊΑ`` ``σοφία``;
   typographic apostrophes (``’``, ``ʼ``) become ``'``.
2. **Tokens**: runs of letters, digits and combining marks of every script (``привіт``,
   ``zażółć``, ``kız``, ``नमस्ते`` stay whole; an inner apostrophe joins: ``don't``, ``м'ясо``).
   Scripts written without spaces (Han, Hiragana, Katakana, Hangul, Thai, Lao, Khmer, Myanmar)
   become overlapping **character bigrams** (``机器学习`` → ``机器 器学 学习``; a lone character
   stays a unigram), so a phrase matches wherever its characters occur in that order, without a
   dictionary segmenter.
3. **Stopwords** (English and Russian) are dropped.
4. **Stemming**, Snowball via ``py_rust_stemmers`` (a declared dependency, imported directly: no
   silent fallback), with the language chosen **per token, from the token alone**: Cyrillic is
   Russian unless a letter marks another language (``і ї є ґ`` Ukrainian, ``ў`` Belarusian,
   ``ђ ј љ њ ћ џ ѓ ќ ѕ`` Serbian/Macedonian: no stemmer, left as they are); Greek, Arabic and
   Tamil have their own stemmers; a plain a–z word is English (the corpus this was tuned on); a
   Latin word with other letters takes a language that writes every one of them (``ñ`` Spanish,
   ``ı ğ ş`` Turkish, ``ã õ`` Portuguese, ``ő ű`` Hungarian, ``ă ș ț`` Romanian, ``ì ò`` Italian,
   ``æ ø`` Norwegian, ``å`` Swedish), the most widely written one when the letters fit several
   (:data:`_LATIN_PRIORITY`: ``ä ö ü`` German, ``é è ç`` French), and is left unstemmed when no
   stemmer language writes them all (Polish ``ł``, Czech ``ř``). Every other script is left
   unstemmed. Dutch, Danish and Finnish words cannot be told from German, Norwegian or Swedish
   ones by their letters, so those three stemmers are never chosen.

Why per token and not per text: a term must be a function of the word form only, or the same word
would be indexed under one term and queried under another. A text-level language detector sees a
whole note at indexing time but two or three words in a query (often in another language than the
note's bulk), so its choice differs between the two sides exactly when it matters; a token-level
rule gives ``Häuser`` the same term in a German note and in an English query. The price is that
two forms of one lemma with different letters (``Häuser``/``Haus``) may take different stemmers.

:data:`VERSION` names this normalisation; the memory store keeps it beside the ``lex``/``ctx``
columns and rebuilds them when it changes.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable, Iterator
from typing import Final

import regex
from py_rust_stemmers import SnowballStemmer

from neotask_tui.text.wraps import join_wraps

VERSION: Final = "unicode-3"
"""Identifies the normalisation (tokens, stopwords, stemmer choice). Change it with any change that
alters a term: stores whose ``lex``/``ctx`` columns were built by another version rebuild them."""

_UNSEGMENTED = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\u30fc\u3005"
"""Scripts written without spaces between words (plus the Katakana length mark and the ideographic
iteration mark, which are script Common): tokenised as character bigrams."""
_LETTER = rf"[[\p{{L}}\p{{N}}\p{{M}}]--[{_UNSEGMENTED}]]"
_TOKEN = regex.compile(rf"(?P<cjk>[{_UNSEGMENTED}]+)|{_LETTER}+(?:'{_LETTER}+)*", regex.V1)
_FOLD = str.maketrans({"’": "'", "ʼ": "'", "‘": "'", "ˈ": "'"})

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
_COURTESY = """thanks thank thx ty tysm cheers please pls plz sorry hello bye goodbye appreciate
    appreciated np lol awesome perfect excellent
    спасибо спс благодарю пожалуйста привет здравствуйте пока извините простите отлично супер ладно окей
    ок ага угу
    дякую будь ласка danke bitte merci gracias grazie obrigado obrigada"""
"""Courtesy and chatter ("thanks!", "cheers!", "спасибо!", "отлично!"): a message of these alone is
about nothing, so it must not match the turn of a conversation that once said the same word."""
STOP_EN = frozenset(_EN.split())
STOP_RU = frozenset(_RU.split())
STOP_COURTESY = frozenset(_COURTESY.split())
STOPWORDS = STOP_EN | STOP_RU | STOP_COURTESY

_GOING_ON_WORDS = """yep yup yeah yea ya nope nah k kk sure right alright fine gotcha understood noted
    interesting cool nice great good neat sweet agreed exactly absolutely definitely indeed totally
    correct true hmm hmmm mhm uh huh ah aha haha hehe brb afk ttyl later continue proceed morning evening
    much many lot lots ton tons heaps big huge truly super u ya everyone everybody guys folks y'all
    понятно ясно ага угу точно верно согласен согласна круто класс здорово интересно понял поняла
    принято норм нормально продолжай продолжим продолжаем дальше давай вернулся вернулась клево
    прикольно большое огромное премного очень всем вам тебе спасибочки спасибки"""
_GOING_ON_PHRASES = """i'm back|im back|welcome back|got it|got you|makes sense|make sense|i see|sounds good|
    sounds great|go ahead|go on|keep going|how are you|how are you today|how are you doing today|
    how's it going|how is it going|what's up|
    good afternoon|good night|tell me more|thanks a lot|that helps|one sec|one second|hold on|never mind|
    no problem|no worries|fair enough|all right|of course|i understand|i agree|good point|nice one|
    well done|hi there|hey there|see you|talk later|talk soon|can you help me|help me|
    добрый день|доброе утро|добрый вечер|спокойной ночи|я вернулся|я вернулась|как дела|как ты|
    как поживаешь|до встречи|без проблем|не за что|
    it works|it worked|that works|works now|all good|all set|let's begin|let's start|let's go|
    let's continue|ready when you are|i'm ready|im ready|
    hi team|hey team|hello team|morning team|thanks team|thank you team|hi all|hello all|morning all|
    thanks all|hi guys|hey guys|thanks guys|good morning team|good morning all|good morning guys|
    доброе утро коллеги|добрый день коллеги|добрый вечер коллеги|доброе утро ребята|
    привет коллеги|утро коллеги|день коллеги|спасибо коллеги|всем спасибо|привет ребята|спасибо ребята|
    всё понятно|все понятно|всё ясно|все ясно|всё работает|все работает|поехали|начнём|начнем|начинаем"""
GOING_ON: Final = frozenset(_GOING_ON_WORDS.split())
"""Acknowledgements, greetings and go-ons ("yep", "interesting", "понятно"), with the intensifiers
and addressees that go with them ("thank you *so much*", "спасибо *большое*", "hi *everyone*"):
words that say the conversation goes on, not what it is about. They are not stopwords (a passage's "an interesting
bug" or "back pain" keeps its words); only a *message* made of them alone, with the phrases of
:data:`GOING_ON_PHRASES`, stopwords and courtesy words, is about nothing (:func:`about_nothing`)."""
GOING_ON_PHRASES: Final = tuple(sorted((tuple(p.split()) for p in _GOING_ON_PHRASES.split("|")), key=len, reverse=True))
"""Several-word acknowledgements and greetings ("got it", "I'm back", "makes sense", "как дела"),
as folded word tokens (:func:`words`): "back", "see" or "help" alone are about something."""


def about_nothing(text: str) -> bool:
    """Whether a message says only that the conversation goes on: no word of it is a term (see
    :func:`terms`) once the acknowledgements and greetings of :data:`GOING_ON` and
    :data:`GOING_ON_PHRASES` are set aside ("Okay, got it.", "Hey, I'm back.", "Interesting.",
    "Понятно."). Auto-recall takes nothing for such a message: on an embedding model any small talk
    is close in meaning to earlier small talk, which is not a reason to quote it."""
    toks = words(text)
    i, rest = 0, []
    while i < len(toks):
        hit = next((len(p) for p in GOING_ON_PHRASES if tuple(toks[i:i + len(p)]) == p), 0)
        if hit:
            i += hit
            continue
        rest.append(toks[i])
        i += 1
    return not terms(" ".join(w for w in rest if w not in GOING_ON))


def _has_a_word(text: str) -> bool:
    """Whether ``text`` has a word of its own, though no term: "Thanks.", "Hey!", "Got it." (the "S."
    of "C. S. Lewis" is an initial, not a sentence)."""
    return any(len(t) > 1 for t in words(text))


_SENTENCE_END: Final = regex.compile(r"(?<=[.!?…;])\s+|\n+")


def asked(text: str) -> str:
    """``text`` without its sentences that only say the conversation goes on (:func:`about_nothing`):
    "Got it. And the backup schedule?" → "And the backup schedule?". The whole text when none of its
    sentences, or all of them, are such. What a message asks about is what recall searches for: left
    in, the acknowledgement pulls the query's embedding toward earlier small talk."""
    parts = [p.strip() for p in _SENTENCE_END.split(join_wraps(text)) if p.strip()]
    kept = [p for p in parts if not (about_nothing(p) and _has_a_word(p))]
    if not kept or len(kept) == len(parts):
        return text
    return " ".join(kept)


LANGUAGES: Final = (
    "arabic", "danish", "dutch", "english", "finnish", "french", "german", "greek", "hungarian", "italian",
    "norwegian", "portuguese", "romanian", "russian", "spanish", "swedish", "tamil", "turkish",
)
"""The Snowball stemmers ``py_rust_stemmers`` ships (see the module docstring for which are chosen)."""

_LATIN_PRIORITY: Final = (
    "german", "french", "spanish", "portuguese", "italian", "turkish", "hungarian", "romanian", "swedish",
    "norwegian", "dutch", "danish", "finnish",
)
"""Which of several candidate languages a Latin word's letters allow takes it: the most widely
written first (a German ``ü`` word is far likelier than a Spanish ``güe`` one)."""
_LATIN_LETTERS: dict[str, frozenset[str]] = {
    k: frozenset(v.split()) for k, v in {
        "ß": "german",
        "ä": "german finnish swedish",
        "ö": "german finnish swedish hungarian turkish",
        "ü": "german hungarian turkish spanish",
        "å": "swedish danish norwegian finnish",
        "æ": "danish norwegian", "ø": "danish norwegian",
        "é": "french spanish portuguese italian hungarian dutch danish norwegian swedish",
        "è": "french italian dutch", "ê": "french portuguese", "ë": "french dutch", "ï": "french dutch",
        "î": "french romanian", "â": "french portuguese romanian turkish", "ô": "french portuguese",
        "û": "french turkish", "ù": "french italian", "ÿ": "french", "œ": "french",
        "ç": "french portuguese turkish", "à": "french italian portuguese",
        "ì": "italian", "ò": "italian",
        "á": "spanish portuguese hungarian", "í": "spanish portuguese hungarian italian",
        "ó": "spanish portuguese hungarian italian dutch", "ú": "spanish portuguese hungarian italian",
        "ñ": "spanish", "ã": "portuguese", "õ": "portuguese",
        "ő": "hungarian", "ű": "hungarian",
        "ă": "romanian", "ș": "romanian", "ț": "romanian",
        "ı": "turkish", "ğ": "turkish", "ş": "turkish romanian",
    }.items()
}
"""For the letters of Latin-script words beyond a–z: the stemmer languages that write them. Any
other letter (Polish ``ł``, Czech ``ř``, Latvian ``ā`` …) belongs to no stemmer language."""
_NOT_RUSSIAN = frozenset("іїєґўђјљњћџѓќѕ")
_SCRIPT_STEMMER = (
    (regex.compile(r"\p{Greek}"), "greek"),
    (regex.compile(r"\p{Arabic}"), "arabic"),
    (regex.compile(r"\p{Tamil}"), "tamil"),
)
_CYRILLIC = regex.compile(r"\p{Cyrillic}")
_LATIN = regex.compile(r"\p{Latin}")
_ASCII_WORD = regex.compile(r"[a-z0-9']+")
_NONE: frozenset[str] = frozenset()


@functools.cache
def _stemmer(language: str) -> Callable[[str], str]:
    return SnowballStemmer(language).stem_word


def fold(text: str) -> str:
    """NFKC-normalised, casefolded ``text`` with one apostrophe (what tokens are cut from)."""
    text = unicodedata.normalize("NFKC", text).casefold().translate(_FOLD)
    # casefold turns Turkish "İ" into "i" + combining dot above; the dot carries nothing here
    return text.replace("i\u0307", "i") if "\u0307" in text else text


@functools.lru_cache(maxsize=65_536)
def language(word: str) -> str | None:
    """The Snowball language :func:`stem` uses for a folded word token (``None``: left unstemmed).

    Decided from the token alone (see the module docstring), so a word gets the same term in every
    text, document or query.
    """
    if _ASCII_WORD.fullmatch(word):
        return "english"
    if _CYRILLIC.search(word):
        return None if _NOT_RUSSIAN.intersection(word) else "russian"
    for pattern, lang in _SCRIPT_STEMMER:
        if pattern.search(word):
            return lang
    if not _LATIN.search(word):
        return None
    langs: frozenset[str] | None = None
    for c in word:
        if "a" <= c <= "z" or not c.isalpha():
            continue
        got = _LATIN_LETTERS.get(c, _NONE)
        langs = got if langs is None else langs & got
        if not langs:
            return None
    if langs is None:  # no letter beyond a–z but a digit or a mark: Latin, not plain ASCII
        return "english"
    return min(langs, key=_LATIN_PRIORITY.index)


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball stem of one folded word token (the language from :func:`language`)."""
    lang = language(word)
    if lang is None:
        return word
    if lang == "russian":
        word = word.replace("ё", "е")
    return _stemmer(lang)(word)


def _bigrams(run: str) -> Iterator[str]:
    if len(run) == 1:
        yield run
        return
    for i in range(len(run) - 1):
        yield run[i : i + 2]


def words(text: str) -> list[str]:
    """Folded word tokens of ``text`` in order (stopwords kept, not stemmed); a run of an
    unsegmented script (CJK, Thai …) gives its character bigrams."""
    out: list[str] = []
    for m in _TOKEN.finditer(fold(text)):
        if m.group("cjk"):
            out.extend(_bigrams(m.group(0)))
        else:
            out.append(m.group(0))
    return out


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
