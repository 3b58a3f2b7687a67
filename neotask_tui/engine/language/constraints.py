"""Which negations and conditions are *constraints* (English and Russian, no model).

The guard must never let a summary drop a negated constraint ("do not use Redis" must never become
"use Redis"), so such sentences are required items, copied verbatim. But most negations in a chat
are not constraints at all: "can't wait!", "I don't know", "never saw this coming", "don't worry".
Treating them as constraints fills the summary with chatter and takes the room recalled history
needs. :func:`constraint_kind` tells them apart:

- **prohibitions** anywhere: "must not", "should not", "not allowed", "avoid", "no longer",
  "нельзя", "запрещено", "не надо", "не должны", "ни в коем случае";
- **negated imperatives** at the start of a clause: "Do not use Redis", "please never commit to
  main", "stop adding comments", "No emojis in commit messages", "hold off on upgrading postgres",
  "не используй", "никогда не коммить", "ничего не удаляй" — except a few formulae of chat ("don't
  worry", "never give up", "don't be afraid") and stories ("ничего не случилось"); also after advice or
  an exception ("better not touch the migrations", "лучше не трогай миграции", "без моего разрешения
  ничего не удаляй"), asked politely ("I'd prefer you didn't rename the tables", not "I'd prefer you
  didn't worry") or with no verb ("not a single deploy on sunday", not "not a single person came");
- **team rules and preferences**: "we don't/won't/never X", "let's not X", "I don't want X",
  "I can't use X", "you can't X", "мы не используем", "не хочу" — except verbs of thinking and
  feeling ("we don't know", "I can't wait", "you never know");
- **scoped rules**: a negation before a directive verb in a statement the classifier scopes to a
  project or a period ("for this project don't use external deps", "today don't answer in
  English");
- **conditions**: "unless", "except", "only if/for/when...", a clause starting with "only", limits
  ("no more than 3", "at most", "under 250 ms", "не больше 3", "не менее", "максимум"),
  "только если/для...", "кроме", "за исключением", and "without"/"без" in an imperative clause
  ("write it without regex"); a bare "without X" / "без X" / "no X" (:mod:`.refusals`) is a negation,
  also limited to a period ("до пятницы без смайликов");
- **temporary rules**: an instruction limited to a period ("today answer briefly", "for now keep
  the old schema", "сегодня отвечай коротко"): binding, but only for that period, so the period is
  part of the rule.
"""

from __future__ import annotations

import re
from typing import Literal

from neotask_tui.engine.language.classifier import (
    bare_refusal_for_a_period,
    directive_start,
    permanence_markers,
    project_scope,
    strip_leading_period,
    temporary_markers,
)
from neotask_tui.engine.language.refusals import NO_IDIOMS, bare_refusal

Kind = Literal["negation", "condition", "temporary"]

_APOS = re.compile(r"[’‘`´]")
_LABEL = re.compile(r"^\s*[A-Za-zА-Яа-яЁё][\w .'-]{0,30}:\s+")
_CLAUSE = re.compile(
    r"[,;:()\[\]]|\s[-—–]+\s|[—–]|\b(?:and|but|so|or|then|because|while|though|although)\b"
    r"|(?<!\w)(?:и|но|а|или|потому что|так что|поэтому)(?!\w)",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:please|pls|plz|kindly|also|just|oh|ok|okay|again|remember|note|reminder|important|and|but|so|then"
    r"|really|seriously|absolutely|and please|now|next|first|finally|пожалуйста|также|тоже|просто|и|но|а|ещё|еще"
    r"|важно|запомни|теперь|сначала|затем)\s+",
    re.IGNORECASE,
)

# Formulae of chat after a negated imperative: "don't worry", "never give up", "don't be afraid".
_IDIOM_AFTER_IMPERATIVE = re.compile(
    r"^(?:ever\s+)?(?:worry|mind|give up|quit|hesitate|forget|be (?:afraid|sorry|shy|sad|silly|so|too)"
    r"|say never|get me wrong|feel|lose (?:hope|faith)|you|we|it|i|let (?:anyone|anything|them|it|this|that)"
    r"|look back|take it|stop believing|count on)\b",
    re.IGNORECASE,
)
_MENTION_IT = re.compile(r"^(?:ever\s+)?mention(?:\s+(?:it|that))?\s*[.!…]*$", re.IGNORECASE)
""""Don't mention it" (you're welcome) is chat; "don't mention Acme in the replies" is a rule."""
# Past forms after "never": a story, not a rule ("never saw this coming", "never been on a team").
_PAST = re.compile(
    r"^(?:ever\s+)?(?:been|had|was|were|did|saw|seen|knew|known|thought|felt|got|gotten|went|gone|came|said"
    r"|heard|met|done|made|took|taken|\w+ed|\w*[^siu\W]s)\b",
    re.IGNORECASE,
)
# Verbs of thinking and feeling: "we don't know", "I can't wait", "you won't believe it".
_MENTAL = re.compile(
    r"^(?:(?:really|even|just|ever|quite|always)\s+)?(?:know|think|believe|wait|imagine|understand|remember"
    r"|recall|forget|care|mind|guess|expect|wonder|doubt|feel|see|get|wish|worry|regret|blame|complain"
    r"|stop|help|beat|miss|tell|say|describe|express|explain|thank|go wrong|lose|give up|quit|let|last"
    r"|matter|seem|mean|hear|agree|deny|have to|need to worry)\b",
    re.IGNORECASE,
)

_NEG_IMPERATIVE = re.compile(
    r"^(?:do not|don'?t|dont|never|never ever|don'?t ever|let'?s not|let us not|no need to)\s+(?P<rest>.+)",
    re.IGNORECASE,
)
KEEP_OFF_IMPERATIVE = re.compile(
    # "Hands off the billing cron", "Stay away from the legacy module", "Please refrain from deleting
    # the bucket", "Leave the cron alone", "Hold off on upgrading postgres": a "do not" without a "not"
    r"^(?:(?:keep\s+(?:your\s+)?)?hands\s+off|stay\s+away\s+from|steer\s+clear\s+of|refrain\s+from"
    r"|hold\s+off\s+(?:on|with|from|\w+ing\b)|leave\s+(?!(?:me|us|him|her|them)\b)\S.{0,60}?\s+alone)\b",
    re.IGNORECASE,
)
_YOU_DARE = re.compile(r"^you\s+(?:dare|ever)\s+(?P<rest>.+)", re.IGNORECASE)
""""Don't you dare drop the audit log", "don't you ever push to main": a prohibition, not a question."""
_STOP_IMPERATIVE = re.compile(
    r"^(?:stop|quit)\s+\w+ing\b|^(?:перестань|перестаньте|прекрати|прекратите|хватит|бросай|брось)\s+[а-яё]+",
    re.IGNORECASE,
)
_NO_RULE = re.compile(r"^no\s+(?P<rest>[\w-]+)", re.IGNORECASE)
MAKE_SURE = r"(?:make sure|be sure|ensure|see to it)(?: that)? "
NOBODY = r"(?:nobody|no one|no-one)"
"""With :data:`MAKE_SURE`, a prohibition with no "not": "make sure nobody force-pushes to main" (shared
with the session rules)."""
RU_NO_CIRCUMSTANCES = (r"под никаким предлогом|ни под каким (?:предлогом|видом)"
                       r"|ни при каких (?:условиях|обстоятельствах)")
"""Russian "under no circumstances" (before a "не …": "под никаким предлогом не удаляй бакет")."""
NOBODY_MAY = (NOBODY + r"\s+(?:may|must|should|shall|is (?:allowed|permitted|supposed) to|gets to)"
              r"(?!\s+(?:ever\s+)?(?:have|be|know|care|think|feel|understand|need|worry|suffer|mind|want)\b)")
"""A prohibition on anybody with no "not": "no one may touch prod", "nobody should push to main"."""
RU_NOBODY = (r"(?:пусть\s+)?никто\s+(?:никогда\s+)?не\s+(?:долж(?:ен|на|ны|но)|смеет|имеет\s+права)"
             r"(?!\s+(?:был|была|были|было|страдать|знать)(?!\w))"
             r"|никому\s+(?:никогда\s+)?(?:не\s+(?:разрешено|позволено|разрешается|можно)|нельзя)")
"""Russian "nobody may": "никто не должен пушить в ветку release-9", "никому не разрешено трогать прод"."""

_PROHIBITION = re.compile(
    r"\bmust not\b|\bmustn'?t\b|\bmust never\b|\bshould not\b(?! have)|\bshouldn'?t\b(?! have)"
    r"|\bshould never\b|\bshall not\b|\bnot (?:be )?allowed\b|\bnot permitted\b|\bforbidden\b|\bprohibited\b"
    r"|\bunder no circumstances?\b|\b(?:is|are) not to\b|\bnot supposed to\b|\bavoid(?:s|ing)?\b"
    r"|\bno longer\b|\bno \w+ allowed\b|\bcan(?:not|'?t| not) be (?:used|changed|modified|touched|removed"
    r"|deleted|renamed|committed|pushed|merged|deployed|shared|exposed|logged|stored|sent|skipped)\b"
    r"|\bdo NOT\b"
    # a prohibition with no "not": "make sure nobody force-pushes to main", "no one may touch prod"
    r"|\b" + MAKE_SURE + r"(?:" + NOBODY + r"|none of (?:us|you|them))\b"
    r"|\b" + NOBODY_MAY + r"\b"
    r"|(?<!\w)(?:нельзя|запрещено|запрещается|недопустимо|ни в коем случае|не надо|не нужно|не стоит"
    r"|" + RU_NO_CIRCUMSTANCES +
    r"|не следует|не смей|не разрешается|никаких|никакого|никакой)(?!\w)"
    r"|(?<!\w)не\s+долж(?:ен|н\w*)(?!\s+(?:был|была|были|было)(?!\w))|(?<!\w)избега\w*|(?<!\w)не\s+хочу(?!\w)"
    # "никто не смеет трогать прод", "никому не разрешено пушить": a prohibition on anybody
    r"|(?<!\w)" + RU_NOBODY + r"(?!\w)",
    re.IGNORECASE,
)
_PROHIBITION_CASED = re.compile(r"\bdo NOT\b|\bDON'?T\b|\bNEVER\b")
_SUBJECT_NEG = re.compile(
    r"\b(?P<subj>we|i|you)\s+(?:(?:really|just|still|definitely|certainly|absolutely|simply)\s+)?"
    r"(?P<neg>don'?t|do not|won'?t|will not|never|can'?t|cannot|can not|aren'?t going to|are not going to"
    r"|am not going to|'m not going to|(?:are not|aren'?t)(?=\s+(?:\w+ing|allowed|supposed|permitted)\b))"
    r"\s+(?:ever\s+|really\s+|even\s+)?(?P<rest>.+)",
    re.IGNORECASE,
)
# First person singular: a preference or a limit the work must respect, not a feeling.
_I_VERBS = re.compile(
    r"^(?:want|like|use|allow|accept|need|install|access|run|share|eat|drink|touch|change|deploy|commit"
    r"|push|add|include|store|send|pay|afford|support|trust)\b",
    re.IGNORECASE,
)
_RU_IMPERATIVE = re.compile(
    r"^(?:(?:никогда|больше)\s+)?(?P<none>(?:ничего|никого|никому|ничем|никуда|нигде)\s+(?:(?:никогда|больше)\s+)?)?"
    r"не\s+(?P<verb>[а-яё]+(?:й|йте|и|ите|ь|ьте|йся|йтесь|ись|итесь|ься))(?![а-яё])",
    re.IGNORECASE,
)
_RU_NOT_IMPERATIVE = re.compile(r"(?:л|ла|ло|ли|лся|лась|лось|лись|ось|.[еиё]шь|.[еиё]тесь)$", re.IGNORECASE)
"""After "ничего не" / "никого не": a past or present form, a story ("ничего не случилось", "никого не
нашли", "ничего не понимаешь"), not an order ("ничего не удаляй", "никому не говори")."""
_BETTER_NOT = re.compile(
    r"^(?:you(?:'d|\s+had)?\s+)?better\s+not\s+(?P<rest>\S.*)|^лучше\s+(?P<ru>не\s+\S.*)", re.IGNORECASE
)
"""Advice that binds: "better not touch the migrations", "you'd better not push to main", "лучше не трогай
миграции" ("I'd better not" is the user's own plan)."""
_RU_INFINITIVE_NOT = re.compile(r"^не\s+(?P<verb>[а-яё]+(?:ть|ти|ться|тись))(?![а-яё])", re.IGNORECASE)
_RU_MENTAL_INFINITIVE = re.compile(
    r"^(?:знать|думать|вспоминать|видеть|слышать|спрашивать|говорить|рисковать|ждать|надеяться|верить|бывать)$",
    re.IGNORECASE,
)
""""Лучше не знать", "лучше не думать об этом": a feeling, not a rule ("лучше не трогать миграции" is one)."""
_WITHOUT_LEAD = re.compile(
    r"^(?:без|without)(?:\s+[\w'-]+){1,3}?\s+(?P<rest>(?:(?:ничего|никого|никому|никогда|больше)\s+)?не\s+\S.*"
    r"|(?:do not|don'?t|never)\s+\S.*)$",
    re.IGNORECASE,
)
"""A negated imperative after its "without" ("без моего разрешения ничего не удаляй", "without review don't
merge"): the "without" names the exception, the rest is the rule."""
_NOT_A_SINGLE = re.compile(
    r"^not\s+(?:a\s+single|one\s+(?:more|single)?|even\s+one)\s*(?P<what>[\w-]+)(?P<rest>.*)$", re.IGNORECASE
)
_RU_NOT_A_SINGLE = re.compile(r"^ни\s+(?:одного|одной|единого|единой)\s+(?P<what>[а-яё-]+)(?P<rest>.*)$", re.IGNORECASE)
_RU_VERB_OR_NOT = re.compile(
    r"(?<![а-яё])не(?![а-яё])|[а-яё]+(?:л|ла|ло|ли|лся|лась|лись|ет|ут|ют|ит|ат|ят|ется|ются|ть|ться)(?![а-яё])",
    re.IGNORECASE,
)
""""Ни одного деплоя в воскресенье" (no verb) forbids; "ни одного звонка не было", "ни одного не нашли" tell
what happened."""
_NOTHING_WITHOUT = re.compile(
    r"^nothing\s+(?:gets|should\s+(?:be|get)|must\s+(?:be|get)|may\s+be|is\s+to\s+be|can\s+be|will\s+be|goes)"
    r"\s+\w+(?:ed|en|wn|ne|out|in|live)?\s+(?:\w+\s+)?(?:without|unless|until|before|except)\b",
    re.IGNORECASE,
)
""""Nothing gets deleted without my permission", "nothing should be deployed until QA signs off": a "do not"
with its exception ("nothing gets done around here" is a complaint: no exception)."""
_STORY_WORD = re.compile(
    r"\b(?:i|he|she|they|we|you|it|was|were|is|are|am|has|had|have|did|does|do|came|went|got|said|made|knew|saw"
    r"|spoke|showed|left|stayed|could|would|can|will|should|thing|\w+ed)\b",
    re.IGNORECASE,
)
""""Not a single deploy on sunday" (no verb, no subject) forbids; "not a single person came", "not one of
them was there" tell what happened."""
_SOFT_NEG = re.compile(
    r"^(?:i|we)(?:'d|\s+would)(?:\s+(?:much|really|just))?\s+(?:prefer|rather)(?:\s+(?:it\s+)?(?:if|that))?\s+you"
    r"\s+(?:didn'?t|did not|wouldn'?t|would not|don'?t|do not|not|never)\s+(?P<rest>\S.*)",
    re.IGNORECASE,
)
"""A polite "do not": "I'd prefer you didn't rename the tables", "I'd rather you not touch prod" ("I'd prefer
you didn't worry" is comfort)."""
_RU_IDIOMS = frozenset(("волнуйся", "волнуйтесь", "переживай", "переживайте", "очень", "бойся", "бойтесь",
                        "сдавайся", "сдавайтесь"))
_RU_WE = re.compile(r"(?<!\w)мы\s+(?:никогда\s+)?не\s+(?P<verb>[а-яё]+)", re.IGNORECASE)
_RU_MENTAL = re.compile(r"^(?:знаем|думаем|понимаем|помним|ждём|ждем|верим|можем дождаться|уверены)$",
                        re.IGNORECASE)
_SCOPED_NEG = re.compile(
    r"\b(?:do not|don'?t|never)\s+(?P<rest>\w+)|(?<!\w)(?:никогда\s+)?не\s+(?P<ru>[а-яё]+)", re.IGNORECASE
)
_CONDITION = re.compile(
    r"\bno (?:more|less|fewer) than\b|\bat (?:most|least)\b|\bunder \d|\bwithin \d"
    r"|(?<!\w)(?:не (?:больше|более|меньше|менее|дольше|позже|раньше)|максимум|минимум)(?!\w)"
    r"|\bunless\b|\bexcept\b|\bexcepting\b|(?<!not )\bonly (?:if|when|for|in|on|with|after|before|during|via"
    r"|through|from|to|use|allow|run|on|while|once|by)\b"
    r"|(?<!\w)(?:только (?:если|когда|для|в|на|при|через|с|после|до|по)|кроме|за исключением|если только"
    r"|лишь (?:если|когда|для|в|на|при)|при условии)(?!\w)",
    re.IGNORECASE,
)
_CLAUSE_ONLY = re.compile(r"^(?:only|только|лишь)\s+\w+", re.IGNORECASE)
_WITHOUT = re.compile(r"\bwithout\b|(?<!\w)без(?!\w)", re.IGNORECASE)
_RU_IMPERATIVE_START = re.compile(r"^[а-яё]+(?:й|йте|и|ите|ь|ьте)(?![а-яё])", re.IGNORECASE)


def unlabel(sentence: str) -> str:
    """``sentence`` without a leading speaker label ("Caroline: ...", "assistant: ...")."""
    return _LABEL.sub("", sentence, count=1)


def _unfill(text: str) -> str:
    while True:
        stripped = _FILLER.sub("", text)
        if stripped == text:
            return text
        text = stripped


def core(sentence: str) -> str:
    """``sentence`` without a leading speaker label and leading fillers ("Caroline: Please never
    commit to main." → "never commit to main."): what a summary must copy verbatim."""
    return _unfill(_unquoted(unlabel(sentence.removeprefix("assistant: ")).strip(" \t'*_")))


def _unquoted(s: str) -> str:
    """``s`` without the double quotes that wrap it: a quote that closes a quoted name ('Do not
    delete the bucket "x"') stays."""
    while s[:1] == '"' and s.count('"') % 2:
        s = s[1:].strip(" \t'*_")
    while s[-1:] == '"' and s.count('"') % 2:
        s = s[:-1].strip(" \t'*_")
    if len(s) > 1 and s[0] == s[-1] == '"' and s.count('"') == 2:
        s = s[1:-1].strip(" \t'*_")
    return s


def clauses(sentence: str) -> list[str]:
    """The clauses of a sentence, with a leading speaker label and fillers ("please", "also") removed."""
    text = unlabel(_APOS.sub("'", sentence))
    out: list[str] = []
    for part in _CLAUSE.split(text):
        c = _unfill(part.strip(" \t\"'*_.!?…"))
        if c:
            out.append(c)
    return out


def _imperative_negation(clause: str) -> bool:
    if KEEP_OFF_IMPERATIVE.match(clause):
        return True
    m = _NEG_IMPERATIVE.match(clause)
    if m:
        rest = m.group("rest")
        dare = _YOU_DARE.match(rest)
        if dare:
            return not (_MENTAL.match(dare.group("rest")) or _PAST.match(dare.group("rest")))
        return not (_IDIOM_AFTER_IMPERATIVE.match(rest) or _MENTION_IT.match(rest) or _PAST.match(rest))
    if _STOP_IMPERATIVE.match(clause):
        return True
    m = _NO_RULE.match(clause)
    if m and m.group("rest").lower() not in NO_IDIOMS:
        return True
    r = _RU_IMPERATIVE.match(clause)
    if r and r.group("verb").lower() not in _RU_IDIOMS and not (r.group("none")
                                                                and _RU_NOT_IMPERATIVE.search(r.group("verb"))):
        return True
    return _led_negation(clause)


def _led_negation(clause: str) -> bool:
    """A "do not" with words before it or no "not" of an imperative: "лучше не трогай миграции", "better
    not touch it", "без моего разрешения ничего не удаляй", "not a single deploy on sunday", "I'd prefer you
    didn't rename the tables"."""
    m = _BETTER_NOT.match(clause)
    if m and m.group("rest"):
        rest = m.group("rest")
        return not (_IDIOM_AFTER_IMPERATIVE.match(rest) or _MENTAL.match(rest) or _PAST.match(rest))
    if m and m.group("ru"):
        inf = _RU_INFINITIVE_NOT.match(m.group("ru"))
        if inf:
            return not _RU_MENTAL_INFINITIVE.match(inf.group("verb"))
        return _imperative_negation(m.group("ru"))
    m = _WITHOUT_LEAD.match(clause)
    if m:
        return _imperative_negation(m.group("rest"))
    m = _NOT_A_SINGLE.match(clause)
    if m:
        return m.group("what").lower() not in ("of", "bit", "word", "thing", "one") and not _STORY_WORD.search(
            m.group("rest"))
    m = _RU_NOT_A_SINGLE.match(clause)
    if m:
        return not (_RU_VERB_OR_NOT.search(m.group("rest")) or _RU_VERB_OR_NOT.fullmatch(m.group("what")))
    if _NOTHING_WITHOUT.match(clause):
        return True
    m = _SOFT_NEG.match(clause)
    return bool(m and not (_IDIOM_AFTER_IMPERATIVE.match(m.group("rest")) or _MENTAL.match(m.group("rest"))))


def _subject_negation(clause: str) -> bool:
    for m in _SUBJECT_NEG.finditer(clause):
        subj, neg, rest = m.group("subj").lower(), m.group("neg").lower(), m.group("rest")
        if _MENTAL.match(rest) or _PAST.match(rest):
            continue
        if subj == "we":
            return True
        if subj == "i" and _I_VERBS.match(rest):
            return True
        if subj == "you" and neg in ("can't", "cant", "cannot", "can not"):
            return True
    return any(not _RU_MENTAL.match(m.group("verb")) for m in _RU_WE.finditer(clause))


def _scoped_negation(sentence: str) -> bool:
    perm = [p for p in permanence_markers(sentence) if p not in ("never", "никогда")]
    if not (project_scope(sentence) or temporary_markers(sentence) or perm):
        return False
    for m in _SCOPED_NEG.finditer(sentence):
        rest = m.group("rest") or m.group("ru") or ""
        if directive_start(rest) or directive_start(f"не {rest}"):
            return True
    return False


def is_negated_constraint(sentence: str) -> bool:
    """Whether ``sentence`` states a negated rule, prohibition or decision (see the module doc)."""
    if _PROHIBITION.search(sentence) or _PROHIBITION_CASED.search(sentence):
        return True
    parts = clauses(sentence)
    if any(_imperative_negation(c) or _subject_negation(c) for c in parts):
        return True
    # "До конца недели не трогай конфиг", "for the next hour don't restart it": the period aside,
    # a negated imperative.
    if temporary_markers(sentence) and any(
        _imperative_negation(_unfill(strip_leading_period(c))) for c in parts
    ):
        return True
    if bare_refusal(core(sentence)) or bare_refusal_for_a_period(sentence):
        return True  # "Пожалуйста, без эмодзи", "до пятницы без смайликов"
    if _WITHOUT.search(sentence) and any(
        _WITHOUT.search(c) and (directive_start(c) or _RU_IMPERATIVE_START.match(c)) for c in parts
    ):
        return True
    return _scoped_negation(sentence)


_IF_LEAD = (r"(?:if|when|whenever|once|as soon as|in case|если|когда|как только|в случае(?:,)? если)")
_COND_FIRST = re.compile(rf"^{_IF_LEAD}\s+(?P<cond>[^,]+?),\s*(?:then\s+|то\s+)?(?P<main>\S.*)$", re.IGNORECASE)
_COND_LAST = re.compile(rf"^(?P<main>\S.*?),?\s+{_IF_LEAD}\s+(?P<cond>.+)$", re.IGNORECASE)
_IF_LEAD_ONLY = re.compile(rf"^{_IF_LEAD}\b", re.IGNORECASE)
_LIMIT = re.compile(
    # "more"/"less" after a quantifier is an amount asked for, not a threshold: "let me know if you need
    # any more suggestions" sets no limit
    r"\d|\b(?<!\bany )(?<!\bsome )(?<!\bno )(?<!\bmuch )(?<!\bmany )(?<!\beven )"
    r"(?:longer|shorter|more|less|fewer|over|above|below|under|exceeds?|exceeding|reach(?:es)?|hits?"
    r"|drops?|falls?|an? (?:hour|minute|second|day)|one|two|three|four|five|ten|half)\b"
    r"|(?<!\w)(?:больше|меньше|дольше|выше|ниже|превыс\w*|достигн\w*|упад\w*|час\w*|минут\w*|секунд\w*"
    r"|один|одна|два|две|три|пять|десять|полчаса)(?!\w)",
    re.IGNORECASE,
)
"""A threshold or an amount in a condition: a number, a comparison, a unit of time."""
_SUBJECT_START = re.compile(
    # after a sentence adverb too: "Sometimes it's hard when things don't go my way …" says how it is
    r"^(?:(?:sometimes|usually|often|honestly|actually|really|yeah|yes|well|oh|wow|and|but|so|now|still"
    r"|иногда|обычно|честно|ну|да|и|но|а)\b[\s,]+)*"
    r"(?:i|i'[a-z]+|we|we'[a-z]+|you|you'[a-z]+|he|she|it|it's|they|they'[a-z]+|that|that's|this|there"
    r"|there's|my|our|your|his|her|their|its|the|a|an|what|how|why|so|then it"
    r"|я|мы|ты|вы|он|она|оно|они|это|мой|моя|мои|наш|наша|ваш|ваша|их|его|её|все|всё)\b",
    re.IGNORECASE,
)
"""A main clause that starts with its subject says what happens or happened ("If I get 40 points,
I'll be happy", "When I was 10, we moved"): no instruction."""


def is_conditional_limit(sentence: str) -> bool:
    """Whether ``sentence`` is an instruction that applies under a measured condition: "if the copy
    takes longer than 2 hours, abort it", "when the replica lag exceeds 30 seconds, pause the job",
    "abort the copy if it takes more than 2 hours", "если копирование займёт больше 3 часов, останови
    его". The condition names a threshold or an amount (:data:`_LIMIT`) and the other clause is an
    instruction, not a statement with its subject (:data:`_SUBJECT_START`): "If you ever need
    anything, let me know" and "When I was 10, we moved" are no limits."""
    text = _unfill(unlabel(sentence).strip().rstrip(".!…"))
    for rx in (_COND_FIRST, _COND_LAST):
        m = rx.match(text)
        if m is None:
            continue
        main = m.group("main").strip()
        if rx is _COND_LAST:  # "Thanks, I'll do it when …": the clause the condition belongs to
            main = main.rsplit(",", 1)[-1]
        main = _unfill(main.strip())
        if not main or main.endswith("?") or _SUBJECT_START.match(main):
            continue
        if rx is _COND_LAST and _IF_LEAD_ONLY.match(main):
            continue
        if _LIMIT.search(m.group("cond")):
            return True
    return False


_UNIT_EN = r"(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|days?|weeks?)"
_UNIT_RU = r"(?:сек\w*|мин\w*|час\w*|дн\w*|день|недел\w*|мс|%)"
_AMOUNT = r"(?:\d+(?:[.,]\d+)?|an?|one|two|three|four|five|ten|half an?|пол|одн\w*|два|две|три|пять|десять)"
_WEEKDAY_OR_TIME = (r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|noon|midnight"
                    r"|eod|eow|the end of \w+|\d{1,2}(?::\d{2})?\s*(?:am|pm|utc)?)")
_TIME_LIMIT = re.compile(
    rf"\b(?:after|within)\s+{_AMOUNT}\s*-?\s*{_UNIT_EN}\b|\bby\s+{_WEEKDAY_OR_TIME}\b"
    rf"|\b(?:before|until|till)\s+\d{{1,2}}:\d{{2}}\b"
    rf"|(?<!\w)(?:через|в течение)\s+{_AMOUNT}?\s*{_UNIT_RU}(?!\w)"
    r"|(?<!\w)до\s+(?:\d{1,2}:\d{2}|понедельника|вторника|среды|четверга|пятницы|субботы|воскресенья|завтра"
    r"|конца\s+\w+)(?!\w)",
    re.IGNORECASE,
)
"""A time limit on an instruction: "after 45 minutes", "within 3 days", "by Friday", "before 18:00",
"через 2 часа", "в течение 3 часов", "до пятницы", "до 18:00"."""
_NOT_IMPERATIVE = re.compile(
    r"^(?:thanks?|thank you|great|nice|wow|yeah|yes|no|ok(?:ay)?|sure|lol|haha|cool|awesome|hey|hi|hello|sorry"
    r"|congrats|can|can't|cannot|could|would|will|won't|should|must|might|may|do|does|did|is|are|was|were|have"
    r"|has|had|been|being|just|really|also|still|gonna|going|see you|talk|catch up|glad|happy|good|hope)\b",
    re.IGNORECASE,
)
"""A first word that makes the clause no instruction ("Thanks for 2 hours of help", "Can't wait to see
you in 2 days", "See you by Friday")."""
_AT_THRESHOLD_RU = re.compile(
    r"^при\s+[^,]+?\s+(?:больше|меньше|выше|ниже|свыше|более|менее)\s+\S+(?:\s+" + _UNIT_RU + r")?\s*,?\s*"
    r"(?P<main>\S.*)$",
    re.IGNORECASE,
)
"""A Russian condition without "если": "при задержке больше 5 секунд останови репликацию"."""
_DEADLINE = re.compile(
    r"\bdeadline\b[^.?!]*\d|\b(?:closes|ends|is due|are due|due)\b[^.?!]*\b\d{1,2}:\d{2}\b"
    r"|\bwe have until\b|(?<!\w)(?:дедлайн|срок\w*|нужно до|надо до|сдать до)(?!\w)[^.?!]*\d",
    re.IGNORECASE,
)
"""A stated deadline: "the deadline is Friday 17:00", "the maintenance window closes at 14:00 UTC",
"we have until 18:00 to finish", "сдать отчёт нужно до 18:00 пятницы"."""


def is_time_limit(sentence: str) -> bool:
    """Whether ``sentence`` is an instruction with a time limit ("abort the import after 45 minutes",
    "finish the cutover by Friday", "через 2 часа останови копирование"), a Russian condition
    without "если" ("при задержке больше 5 секунд останови репликацию") or a stated deadline ("the
    deadline is Friday 17:00"). A statement with its subject ("I went home after 3 hours", "we talked
    for 2 hours") or a formula of chat ("Can't wait to see you in 2 days") is none."""
    text = _unfill(unlabel(sentence).strip().rstrip(".!…"))
    if not text or text.endswith("?"):
        return False
    if _DEADLINE.search(text):
        return True
    m = _AT_THRESHOLD_RU.match(text)
    if m is not None and _RU_IMPERATIVE_START.match(_unfill(m.group("main"))):
        return True
    lim = _TIME_LIMIT.search(text)
    if lim is None:
        return False
    rest = _unfill((text[lim.end():] if lim.start() == 0 else text).lstrip(" ,"))
    if not rest or _SUBJECT_START.match(rest) or _NOT_IMPERATIVE.match(rest) or _PAST.match(rest):
        return False
    if re.match(r"[а-яё]", rest, re.IGNORECASE):
        return bool(_RU_IMPERATIVE_START.match(rest))
    return bool(re.match(r"[a-z]", rest, re.IGNORECASE))


_UNTIL_LAST = re.compile(
    r"^(?P<main>\S.*?),?\s+(?:until|till|up until|(?:for )?as long as|(?P<while>(?<!\ba )while)"
    r"|(?:пока|до тех пор,?\s+пока)(?:\s+не)?)\s+(?P<cond>\S.*)$",
    re.IGNORECASE,
)
_UNTIL_FIRST = re.compile(
    r"^(?:until|till|up until|(?:for )?as long as|(?P<while>while)|пока(?:\s+не)?|до тех пор,?\s+пока(?:\s+не)?)"
    r"\s+(?P<cond>[^,]+),\s*(?:то\s+)?(?P<main>\S.*)$",
    re.IGNORECASE,
)
_FINITE_SECOND = re.compile(
    r"^[\w'-]+\s+(?:was|were|is|are|am|has|had|have|will|would|could|did|does|went|got|seemed|looked|felt|kept"
    r"|stayed|\w+ed)\b",
    re.IGNORECASE,
)
"""A statement's verb in second place ("Everything was fine until the update", "Work kept me busy until
9"): no instruction."""
_UNTIL_CHAT = re.compile(
    r"^(?:(?:just\s+)?wait|hold on|hang on|stay tuned|sleep|rest|relax|dance|party|enjoy|have (?:fun|a)|hang out"
    r"|celebrate|take care|keep (?:it|that|this|going|at it)|go for it|make the most)\b"
    r"|^you\s+(?:see|hear|try|taste|meet|can|could)\b|^you(?:'re| are)\s+at\s+it\b",
    re.IGNORECASE,
)
""""Wait until you see it!", "Sleep well until tomorrow", "Dance until the morning!", "Keep it up while you
can!", "While you're at it, add tests" (one request): chat, not a rule."""


def is_until_rule(sentence: str) -> bool:
    """Whether ``sentence`` is an instruction that holds until an event or while something lasts: "keep
    the replica read-only until the migration finishes", "until the audit is over, freeze the schema",
    "while the migration runs, keep the replica read-only", "держи реплику только на чтение, пока не
    закончится миграция", "пока идёт миграция, держи реплику только на чтение". The other clause must
    be an instruction: "I waited until noon", "Everything was fine until the update", "Wait until you
    see it!" are none."""
    text = _unfill(unlabel(sentence).strip().rstrip(".!…"))
    if not text or text.endswith("?"):
        return False
    for rx in (_UNTIL_FIRST, _UNTIL_LAST):
        m = rx.match(text)
        if m is None:
            continue
        main = _unfill(m.group("main").strip(" ,"))
        cond = m.group("cond").strip()
        if len(main.split()) < 2 or not cond or _UNTIL_CHAT.match(main) or _UNTIL_CHAT.match(cond):
            continue
        if m.group("while") and not (directive_start(main) and _SUBJECT_START.match(cond)):
            continue  # "while" also contrasts and tells stories: only "do X while <subject> <verb>" binds
        if re.match(r"[а-яё]", main, re.IGNORECASE):
            if _RU_IMPERATIVE_START.match(main):
                return True
            continue
        if (not re.match(r"[a-z]", main, re.IGNORECASE) or _SUBJECT_START.match(main) or _NOT_IMPERATIVE.match(main)
                or _PAST.match(main) or _FINITE_SECOND.match(main) or main.split()[0].lower().endswith("ing")):
            continue
        return True
    return False


def is_condition(sentence: str) -> bool:
    """Whether ``sentence`` states a condition a rule depends on ("only for the demo", "unless...",
    a limit: :func:`is_conditional_limit`)."""
    if _CONDITION.search(sentence):
        return True
    if any(_CLAUSE_ONLY.match(c) for c in clauses(sentence)):
        return True
    return is_conditional_limit(sentence) or is_time_limit(sentence)


_TEMP_LEAD = re.compile(
    r"^(?:(?:just|only)\s+)?(?:today|tonight|for now|this time|for this session|in this session"
    r"|for the rest of (?:the|this) (?:session|chat|conversation|day)|until tomorrow|temporarily"
    r"|for (?:the next )?(?:\d+|an?|one|two|three) (?:hours?|minutes?|days?)"
    r"|сегодня|пока(?: что)?|временно|в этот раз|в этой сессии|до конца (?:дня|сессии)"
    r"|на (?:ближайш\w+ )?(?:\d+ )?(?:час\w*|минут\w*|день|дня|дней))\s*,?\s*",
    re.IGNORECASE,
)


_SEQUENCE = frozenset(("now", "right now", "just now", "сейчас"))


def is_temporary_rule(sentence: str) -> bool:
    """Whether ``sentence`` is an instruction limited to a period: a temporariness marker and a clause
    that, the period aside, starts with a directive verb ("Today answer briefly", "For now keep the
    old schema", "Сегодня отвечай коротко"). "I'm busy today" and "today was fun" are not rules."""
    if not [m for m in temporary_markers(sentence) if m not in _SEQUENCE]:
        return False  # "now write the note" orders the work; it does not limit a rule in time
    for c in clauses(sentence):
        rest = _unfill(_TEMP_LEAD.sub("", c, count=1))
        if rest == c:
            rest = _unfill(strip_leading_period(c))
        if rest != c and (directive_start(rest) or _RU_IMPERATIVE_START.match(rest)):
            return True
        if directive_start(c) and not c.lower().startswith(("want", "need", "like")):
            return True
    return False


def constraint_kind(sentence: str) -> Kind | None:
    """``negation``, ``condition`` or ``temporary`` when ``sentence`` is a constraint the guard must
    keep, else ``None``."""
    if is_negated_constraint(sentence):
        return "negation"
    if is_condition(sentence):
        return "condition"
    if is_temporary_rule(sentence):
        return "temporary"
    if is_until_rule(sentence):
        return "condition"
    return None


_RULE_START = re.compile(
    r"^(?:always(?!\s+(?:been|here|there|ready|happy|glad|down|up|fun|good|great|nice|so|a|an|the|my|your"
    r"|his|her|our|their|on|in|at|\w+ed)\b)|make sure|be sure to|remember to|don'?t forget to|never forget to|ensure"
    r"|prefer|всегда|обязательно|убедись|не забудь)\b",
    re.IGNORECASE,
)
# Epistemic "must" (a guess about something, not an obligation): "that must be fun", "it must feel
# great", "you must have been proud", "must be quite a journey"; nor a compound noun ("a must-see", "a
# must-have"). A rule's "must" is followed by a
# verb of doing or by "be" + a requirement ("it must be UTF-8", "tests must pass").
_EPISTEMIC_MUST = re.compile(
    r"\bmust(?:'ve\b|n't have\b|-(?=\w)"
    r"|\s+(?:have\b|-|feel\b|look\b|sound\b|seem\b|mean\b|add\b|bring\b|give\b|make you\b"
    r"|be\s+(?:so|really|very|quite|such|pretty|super|truly|a|an|the|fun|nice|great|amazing|awesome|hard"
    r"|tough|exciting|lovely|cool|tiring|scary|wonderful|proud|happy|incredible|beautiful|rewarding|special"
    r"|difficult|interesting|fascinating|challenging|stressful|exhausting|thrilling|fulfilling|satisfying"
    r"|inspiring|relaxing|fantastic|gorgeous|stunning|intense|crazy|wild|heartbreaking|surreal|nerve-wracking"
    r"|emotional|overwhelming|bittersweet|memorable|magical|breathtaking|peaceful|calming|rough)\b))",
    re.IGNORECASE,
)
_RULE_ANY = re.compile(
    r"\bwe\s+(?:always|must|have to|need to|should)\b|\bi (?:always )?prefer\b|\bby default\b|\bfrom now on\b"
    r"|\bmust\b"
    r"|(?<!\w)(?:мы всегда|обязательно|впредь|по умолчанию)(?!\w)|(?<!\w)долж(?:ен|н)",
    re.IGNORECASE,
)


def is_rule(sentence: str) -> bool:
    """Whether ``sentence`` states a positive rule ("always run the tests", "it must be UTF-8").

    Not enforced by the guard (only negations and conditions are), but ranked first among the
    optional lines of an extractive summary. "That must have been fun" and "I'm always down for
    it" are not rules.
    """
    for m in _RULE_ANY.finditer(sentence):
        if m.group(0).lower() == "must" and _EPISTEMIC_MUST.match(sentence, m.start()):
            continue
        return True
    return any(_RULE_START.match(c) for c in clauses(sentence))
