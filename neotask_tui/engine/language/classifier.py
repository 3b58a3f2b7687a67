"""Deterministic classifier of explicit statements (English and Russian).

It decides, without a model, what an explicit user statement means for memory — the lecture's
"Session memory vs user profile" table:

==============================================  ==================  ==============================
Statement                                       Session             Long-term
==============================================  ==================  ==============================
"Today answer briefly, I'm in a hurry."         temporary pref      no
"Always send me a short summary first."         —                   inbox candidate (user scope)
"For this project don't use external deps."     project-scoped rule inbox candidate (project scope)
"Now let's pick the Pro plan."                  selected_entity     no (an action, not a pref)
"My working language is Russian."               session fact        inbox candidate (user scope)
"Please do not use any paid tools."             session rule        no (lasting only if "always"...)
==============================================  ==================  ==============================

Temporariness beats permanence ("today always answer in English" is a session preference); a
question is never a statement; secrets are redacted from everything the classifier returns.
A negated directive that no other row claims ("don't use Redis", "не используй платные сервисы") is
a session rule; chatter ("don't worry", "I don't know") is told apart by
:func:`neotask_tui.engine.language.constraints.constraint_kind`.
The same marker lists feed the promotion criteria in :mod:`neotask_tui.engine.state.inbox`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from neotask_tui.engine.language.periods import period_of
from neotask_tui.text.remember import remembered
from neotask_tui.text.secrets import has_secrets, redact_secrets

Kind = Literal["temporary_preference", "session_choice", "session_goal", "project_rule", "promotion", "user_fact",
               "session_rule"]

__all__ = [
    "Classification",
    "Kind",
    "classify",
    "directive_start",
    "permanence_markers",
    "project_scope",
    "split_statements",
    "strip_leading_period",
    "temporary_markers",
]


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts), re.I)


_TEMP = _rx(
    # English
    r"\btoday\b", r"\btonight\b", r"\bfor now\b", r"\bright now\b", r"^\s*now\b", r"\bjust now\b",
    r"\bthis time\b", r"\btemporarily\b", r"\bfor a while\b",
    r"\b(?:for|in|during) (?:this|the current) (?:session|chat|conversation|call)\b",
    r"\bthis session\b", r"\buntil (?:the end of (?:the )?(?:day|session)|tomorrow|tonight)\b",
    # a deadline: "until Friday", "till end of day", "through the end of the week", "before the release"
    r"\b(?:until|till|til|through|thru) (?:the )?(?:end of (?:the |this )?(?:day|week|month|sprint|quarter|year"
    r"|session|shift)|eod|eow|(?:next |this )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|weekend|week|month)|noon|midnight|morning|evening|lunch|the (?:release|demo|freeze|launch|deploy)"
    r"|\d{1,2}(?::\d{2})?\s?(?:am|pm)?\b)",
    r"\b(?:for|during|over|within) the (?:next|coming) (?:\w+ )?(?:hours?|minutes?|days?|weeks?)\b",
    r"\bfor the rest of (?:the |this )?(?:week|month|sprint)\b", r"\b(?:this|for the) (?:week|weekend|sprint|month)\b",
    r"\b(?:all|this whole) week\b", r"\btomorrow\b",
    r"\bfor the (?:next|rest of the|rest of this) (?:\d+ |few |couple of )?"
    r"(?:session|chat|conversation|hours?|minutes?|day)\b",
    r"\bfor (?:\d+|an?|one|two|three|half an?) (?:hours?|hrs?|minutes?|mins?)\b",
    # Russian
    r"\bсегодня\b", r"\bсейчас\b", r"\bпока(?: что)?\b", r"\bна сегодня\b", r"\bвременно\b",
    r"\bв (?:этой|текущей) сессии\b", r"\bв этом (?:чате|разговоре|диалоге)\b", r"\bв этот раз\b",
    r"\bдо конца (?:дня|сессии|разговора)\b", r"\bна (?:ближайш\w+|следующ\w+ )?\s*\d+\s*(?:час|минут)\w*",
    r"\bна (?:час|полчаса|пару часов)\b",
    # a deadline or a period: "до пятницы", "до конца недели", "в течение двух часов", "на этой неделе"
    r"(?<!\w)до (?:конца (?:(?:этой|этого|текущей|текущего) )?(?:дня|недели|месяца|спринта|квартала|года|смены)"
    r"|завтра|вечера|утра|обеда|ночи|(?:следующ(?:ей|его) )?(?:понедельника|вторника|среды|четверга|пятницы"
    r"|субботы|воскресенья)|выходных|релиза|демо|деплоя|следующей недели|\d{1,2}(?::\d{2})?)(?!\w)",
    r"(?<!\w)(?:завтра|послезавтра|на завтра|всю (?:эту )?неделю|в этом месяце|в эти выходные)(?!\w)",
    r"(?<!\w)в течение (?:\S+\s+)?(?:час\w*|минут\w*|дн\w*|недел\w*|суток)(?!\w)",
    r"(?<!\w)(?:на этой неделе|на этих выходных|на выходные|на неделю|на ближайш\w+ (?:\S+ )?(?:дн\w*|недел\w*))(?!\w)",
)
_DEADLINE = _rx(
    r"\b(?:until|till|til|through|thru) (?!the end of (?:the )?(?:day|session)\b|tomorrow\b|tonight\b)\w",
    r"\b(?:for|during|over|within) the (?:next|coming) (?:\w+ )?(?:days?|weeks?)\b",
    r"\bfor the rest of (?:the |this )?(?:week|month|sprint)\b", r"\b(?:this|for the) (?:week|weekend|sprint)\b",
    r"(?<!\w)до (?!конца (?:дня|сессии|разговора)(?!\w))\w", r"(?<!\w)в течение (?:\S+\s+)?(?:дн\w*|недел\w*|суток)",
    r"(?<!\w)(?:на этой неделе|на этих выходных|на выходные|на неделю)(?!\w)",
    r"(?<!until )(?<!till )(?<!til )(?<!through )(?<!thru )\btomorrow\b", r"\bthis month\b",
    r"\b(?:all|this whole) week\b",
    r"(?<!\w)(?:завтра|послезавтра|на завтра|всю (?:эту )?неделю|в этом месяце|в эти выходные)(?!\w)",
)
"""A period kept in the session entry's text ("Until Friday, keep the flag off"): the entry's own
expiry (:mod:`.periods`) says when it ends, the text says what it is for; only "today" and
durations are taken out of the text."""
_TEMP_PHRASE = re.compile(
    r"(?:\b(?:just|only|тольк[оа])\s+)?(?:\b(?:for|until|during)\s+)?(?:" + _TEMP.pattern + ")", re.I
)
"""A temporariness marker with the words that lead into it ("just for today"), removed as one."""
_TODAY = _rx(
    r"\btoday\b", r"\btonight\b", r"\b(?:until|till|til|through) (?:the )?(?:end of (?:the |this )?day|eod)\b",
    r"\bfor the rest of the day\b",
    r"\bсегодня\b", r"\bдо конца дня\b",
)
"""Markers of a statement that holds until the end of the local day."""
_PERM = _rx(
    r"\balways\b", r"\bfrom now on\b", r"\bgoing forward\b", r"\bevery time\b", r"\bby default\b",
    r"\bin general\b", r"\bnever\b",
    r"\bin (?:all|every|future) (?:future )?(?:sessions?|chats?|conversations?)\b",
    r"\bremember that\b", r"(?<!\bi'd )(?<!\bi would )(?<!\bwe'd )(?<!\bwe would )\bprefer\b",
    r"\bвсегда\b", r"\bвпредь\b", r"\bотныне\b", r"\bс этого момента\b", r"\bникогда\b",
    r"\bкаждый раз\b", r"\bпо умолчанию\b", r"\bво всех (?:сессиях|чатах|разговорах)\b",
    r"\bзапомни(?:те)?\b", r"\bпредпочитаю\b", r"^(?:(?:and|also)\s+)?(?:please,?\s+)?remember\s*[:—–-]",
)
_SOFT_PREF = _rx(
    r"\b(?:i|we)(?:'d| would)(?: (?:much|really|just))? (?:rather|prefer|sooner)\b(?! have (?:been|\w+ed)\b)",
    r"(?<!\w)(?:я|мы) бы (?:(?:лучше|скорее|очень) )?(?:предпоч(?:ёл|ел|ла|ли)|хотел(?:а|и)?|лучше)(?!\w)",
    r"(?<!\w)(?:предпоч(?:ёл|ел|ла|ли)|хотел(?:а|и)?) бы(?!\w)", r"(?<!\w)мне бы хотелось(?!\w)",
    r"(?<!\w)мне (?:было бы )?удобнее(?!\w)",
)
"""A preference in the conditional ("I'd rather…", "I would prefer…", "я бы предпочёл…"): about this
conversation, not a lasting profile preference (that needs "always", "from now on", "всегда"...)."""
_SOFT_PREF_REPLY = re.compile(
    r"(?:you |that )?(?:not|didn'?t|wouldn'?t|don'?t|не)(?:\s+\S+)?|\S*", re.I
)
"""What follows "I'd rather" in a reply that states no preference ("I'd rather not say", "I'd rather
you didn't", "я бы лучше не стал")."""
_PERIOD_IMPERATIVE = re.compile(
    r"^(?:(?:не|никогда не|больше не)\s+)?[а-яё]+(?:й|йте|и|ите|ь|ьте)(?![а-яё])", re.I
)
"""A Russian imperative right after a period ("до пятницы не трогай прод"): a directive whatever its verb."""
_PROJECT = re.compile(
    r"\b(?:for|in|within) (?:this|the current|our) (?P<en>project|repo|repository|codebase|workspace)\b"
    r"|\b(?:для|в|в рамках) (?:этого |этом |текущего |текущем |нашего |нашем )?"
    r"(?P<ru>проект\w*|репозитори\w*|кодовой базы|воркспейс\w*)",
    re.I,
)
_CHOICE = _rx(
    r"\b(?:let'?s|let us|we(?:'ll| will| are going to)?|i(?:'ll| will)?)\s+"
    r"(?:go with|pick|choose|select|take|use|try|opt for)\s+(?P<en>.+)",
    r"^\s*(?:now,?\s+)?(?:pick|choose|select|go with)\s+(?P<en2>.+)",
    r"\b(?:давай(?:те)?\s+)?(?:выберем|выбираем|выбери|выберу|берём|берем|возьмём|возьмем|"
    r"остановимся на|остановимся на варианте)\s+(?P<ru>.+)",
)
_GOAL = _rx(
    # "My goal is to ship the tz fix", "Our main goal today: fix the importer", "The goal is …", "Goal: …"
    r"^\s*(?:(?:so|ok(?:ay)?|now|today|this week|from now on|for (?:today|this session))[,\s]+)?"
    r"(?:(?:my|our|the)\s+)?(?:(?:main|new|current|overall|immediate|next)\s+)?(?:goal|objective)"
    r"(?:\s+(?:here|today|now|for (?:today|now|this session|this week)))?"
    r"\s*(?:\bis\b\s*(?:to\s+)?|:\s*|\s[—–-]\s*)(?P<en>.+)",
    # "Моя цель — выпустить исправление", "Наша главная цель на сегодня: …", "Цель: …"
    r"^\s*(?:(?:итак|сейчас|сегодня|теперь|отныне|с этого момента)[,\s]+)?(?:(?:моя|наша)\s+)?"
    r"(?:(?:главная|основная|новая|текущая|ближайшая)\s+)?цель"
    r"(?:\s+(?:сейчас|сегодня|на сегодня|на эту неделю))?"
    r"\s*(?:—|–|-|:|\bэто\b|\bтакая\b\s*:?)\s*(?P<ru>.+)",
)
"""An explicit statement of the current goal: it sets ``current_goal`` (the latest wins), it is not a
fact about the user ("my goal is …" read as "my <thing> is …" went to the inbox as a lasting fact)."""
_FACT = _rx(
    r"\bmy (?P<ek>[a-z][a-z \-]{1,40}?) (?:is|are) (?P<ev>.+)",
    r"\bcall me (?P<ecall>.+)",
    r"\b(?:мой|моя|моё|мое|мои)\s+(?P<rk>[а-яё][а-яё \-]{1,40}?)\s*(?:—|–|-|:|\bэто\b)\s*(?P<rv>.+)",
    r"\bменя зовут (?P<rname>.+)",
)
_DIRECTIVE = _rx(
    r"\b(?:answer|reply|respond|write|use|don'?t|do not|never|avoid|send|give|speak|talk|explain|be|"
    r"keep|format|show|call|add|include|skip|stop|make|prefer|switch|please|focus|limit|output|"
    r"return|list|translate|want|need|like)\b",
    r"\b(?:не\s+)?(?:отвеча|ответь|пиш|напиш|использ|присыл|пришл|шли|говор|объясн|дела|сдела|"
    r"дава|дай|показ|покаж|избега|сокращ|держ|форматир|перевод|переведи|добав|обращ|пропуск|"
    r"перестань|хочу|нужн|предпочита|будь|старайся|присла)\w*",
)
_DURATION_EN = re.compile(
    r"\bfor (?:the next )?(?P<n>\d+|an?|one|two|three|half an?) "
    r"(?P<u>hours?|hrs?|minutes?|mins?|days?)\b",
    re.I,
)
_DURATION_RU = re.compile(
    r"\bна (?:ближайш\w+ |следующ\w+ )?(?P<n>\d+|полчаса|час|пару часов)"
    r"\s*(?P<u>час\w*|минут\w*|дн\w*|день)?",
    re.I,
)
_UNTIL_EVENT = re.compile(
    r"\buntil (?:the )?(?:event )?(?P<en>[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b|\bдо события (?P<ru>[\w\-]+)", re.I
)
_NO_STORE = _rx(
    r"\bdon'?t (?:remember|save|store)\b", r"\bdo not remember\b", r"\bне (?:запоминай|сохраняй|записывай)(?:те)?\b"
)
_SPLIT = re.compile(r"(?<=[.!?…])\s+|\n+|;\s*")
_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}


@dataclass(frozen=True, slots=True)
class Classification:
    """What one explicit statement means for session state and long-term memory.

    Attributes:
        kind: The row of the lecture's table this statement falls in.
        text: The statement as said (secrets redacted, trailing punctuation removed).
        field: State field for the session entry (``None`` when no session entry is made).
        value: Value of the session entry.
        scope: Scope of the session entry (``session``, ``project`` or ``workspace``).
        ttl: Relative lifetime such as ``"2h"`` when the statement gave one.
        until_event: Event name that ends the entry ("until checkout_paid").
        candidate_scope: Proposed long-term scope when this is an inbox candidate, else ``None``.
        reason: One line explaining the decision (shown in notices and the inbox).
        markers: The temporary/permanence markers that decided it.
        contains_secret: The original text held a credential (it has been redacted).
        no_store: The user asked not to remember this.
        period: The period the statement limits itself to when no duration or event was given
            ("day:0" today, "day:1" tomorrow, "wd:4" until Friday, "week", "month"; see
            :mod:`.periods`): its entry expires at the period's local end.
    """

    kind: Kind
    text: str
    field: str | None
    value: str | None
    scope: str = "session"
    ttl: str | None = None
    until_event: str | None = None
    candidate_scope: str | None = None
    reason: str = ""
    markers: tuple[str, ...] = ()
    contains_secret: bool = False
    no_store: bool = False
    period: str | None = None

    @property
    def today(self) -> bool:
        """Whether the statement holds for today only ("just for today", "сегодня", "until tomorrow")."""
        return self.period == "day:0"

    @property
    def session_entry(self) -> bool:
        """Whether this statement creates a session-state entry."""
        return self.field is not None

    @property
    def candidate(self) -> bool:
        """Whether this statement is proposed for long-term memory (via the inbox)."""
        return self.candidate_scope is not None and not self.no_store


def temporary_markers(text: str) -> list[str]:
    """Temporariness markers in ``text`` ("today", "for now", "сегодня", "в этой сессии", ...)."""
    return [m.group(0).strip().lower() for m in _TEMP.finditer(text)]


def strip_leading_period(clause: str) -> str:
    """``clause`` without a temporariness phrase at its start ("Until Friday keep..." → "keep...",
    "до конца недели не трогай..." → "не трогай..."); unchanged when it does not start with one."""
    m = _TEMP_PHRASE.match(clause.lstrip())
    if m is None:
        return clause
    return clause.lstrip()[m.end():].lstrip(" ,:—–-")


def permanence_markers(text: str) -> list[str]:
    """Explicit-permanence markers in ``text`` ("always", "from now on", "всегда", ...)."""
    return [m.group(0).strip().lower() for m in _PERM.finditer(text)]


def project_scope(text: str) -> str | None:
    """``project`` or ``workspace`` when ``text`` scopes itself to one ("for this repo ..."), else ``None``."""
    m = _PROJECT.search(text)
    if m is None:
        return None
    word = _first_group(m, "en", "ru").lower()
    return "workspace" if word.startswith(("workspace", "воркспейс")) else "project"


def directive_start(text: str) -> bool:
    """Whether ``text`` starts with a directive verb ("use ...", "write ...", "не используй ...")."""
    m = _DIRECTIVE.match(text.lstrip())
    return m is not None and m.start() == 0


def no_store_marker(text: str) -> bool:
    """Whether the user asked not to remember/save this ("don't remember", "не запоминай")."""
    return bool(_NO_STORE.search(text))


def split_statements(text: str) -> list[str]:
    """Split a message into statements (sentences, lines, ``;``-separated clauses)."""
    return [s.strip() for s in _SPLIT.split(text) if s and s.strip()]


def _clean(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    s = s.strip(" ,.;:!—–-")
    return s


def _duration(text: str) -> str | None:
    m = _DURATION_EN.search(text)
    if m:
        raw = m.group("n").lower()
        if raw.startswith("half"):
            return "30m"
        n = int(raw) if raw.isdigit() else _WORDS.get(raw, 1)
        u = m.group("u").lower()[0]
        return f"{n}{'h' if u == 'h' else 'm' if u == 'm' else 'd'}"
    m = _DURATION_RU.search(text)
    if m and (m.group("u") or not m.group("n").isdigit()):
        raw = m.group("n").lower()
        if raw == "полчаса":
            return "30m"
        if raw == "час":
            return "1h"
        if raw == "пару часов":
            return "2h"
        u = (m.group("u") or "час").lower()
        return f"{int(raw)}{'h' if u.startswith('час') else 'm' if u.startswith('мин') else 'd'}"
    return None


def _strip_markers(text: str) -> str:
    out = _TEMP_PHRASE.sub(" ", text)
    out = _DURATION_EN.sub(" ", out)
    out = _DURATION_RU.sub(" ", out)
    return _clean(out)


def _first_group(m: re.Match[str], *names: str) -> str:
    for n in names:
        v = m.groupdict().get(n)
        if v:
            return v
    return ""


def _classify_one(raw: str) -> Classification | None:
    stmt = raw.strip()
    if not stmt or stmt.endswith("?"):
        return None
    secret = has_secrets(stmt)
    redacted = redact_secrets(stmt)
    text = _clean(redacted)
    temp = temporary_markers(stmt)
    perm = permanence_markers(stmt)
    no_store = no_store_marker(stmt)
    ttl = _duration(stmt)
    ev = _UNTIL_EVENT.search(stmt)
    until = _first_group(ev, "en", "ru") if ev else None
    if until:
        temp.append(f"until {until}")

    def mk(kind: Kind, field_: str | None, value: str | None, shown: str | None = None,
           **kw: Any) -> Classification:
        return Classification(
            kind, text if shown is None else shown, field_, value, ttl=ttl, until_event=until, contains_secret=secret,
            no_store=no_store, period=None if ttl or until else period_of(stmt), **kw,
        )

    proj = _PROJECT.search(stmt)
    if proj:
        word = _first_group(proj, "en", "ru").lower()
        scope = "workspace" if word.startswith(("workspace", "воркспейс")) else "project"
        return mk(
            "project_rule", "constraints", text, scope=scope,
            candidate_scope=None if temp else scope,
            reason=f"{scope}-scoped rule: applies in this {scope}; belongs in {scope} memory, "
            "not the user profile",
            markers=(proj.group(0).lower(), *temp, *perm),
        )
    goal = _GOAL.search(stmt)
    # A stated goal is this conversation's goal even when it says "always" or "from now on" ("my goal
    # is always to keep the build green"): a goal is session state, never a lasting preference.
    if goal:
        obj = _clean(redact_secrets(_first_group(goal, "en", "ru")))
        if obj:
            return mk(
                "session_goal", "current_goal", obj,
                reason="the goal stated for this conversation: session state, not a fact about you",
                markers=tuple(temp),
            )
    choice = _CHOICE.search(stmt)
    if choice and not (perm and not temp):
        obj = _clean(redact_secrets(_first_group(choice, "en", "en2", "ru")))
        if obj:
            return mk(
                "session_choice", "selected_entity", obj,
                reason="a choice in the current workflow: an action, not a preference",
                markers=tuple(temp),
            )
    if perm and not temp:
        memory = _clean(remembered(redacted))  # before _clean: "Remember:" keeps its colon
        if not _PERM.sub(" ", memory).strip(" ,.;:!?…—–-\n\t`'\"«»"):
            return None  # "Remember:", "Always.", "Запомни, что": nothing to remember
        return mk(
            "promotion", None, None, memory, candidate_scope="user",
            reason="explicit lasting preference: proposed for long-term memory, not a session fact",
            markers=tuple(perm),
        )
    after_period = strip_leading_period(stmt)
    if temp and (_DIRECTIVE.search(stmt) or (after_period != stmt and _PERIOD_IMPERATIVE.match(after_period))):
        return mk(
            "temporary_preference", "temporary_preferences",
            # a period longer than today ("until Friday", "tomorrow", "до конца недели") stays in its text
            text if _DEADLINE.search(stmt) and period_of(stmt) != "day:0" else _strip_markers(text) or text,
            reason="temporary preference: marked as temporary, lives in this session only",
            markers=tuple(temp),
        )
    soft = _SOFT_PREF.search(stmt)
    if soft and not _SOFT_PREF_REPLY.fullmatch(stmt[soft.end():].strip(" ,.!…")):
        return mk(
            "temporary_preference", "temporary_preferences", text,
            reason="a preference for this conversation (conditional, no sign it is lasting): lives in "
            "this session only",
            markers=(soft.group(0).lower(),),
        )
    fact = _FACT.search(stmt)
    if fact:
        return mk(
            "user_fact", "facts", text, candidate_scope=None if temp else "user",
            reason="a stated fact about the user: kept in the session; long-term only if confirmed",
            markers=tuple(temp),
        )
    return None


def classify(text: str, fallback: Callable[[str], Classification | None] | None = None) -> list[Classification]:
    """Classify every explicit statement in a user message.

    Args:
        text: The user's message.

    Returns:
        One :class:`Classification` per statement that means something for memory; ordinary chat
        and questions yield nothing.
    """
    out: list[Classification] = []
    for stmt in split_statements(text):
        c = _classify_one(stmt) or (fallback(stmt) if fallback is not None else None)
        if c is not None:
            out.append(c)
    return out


def session_rule(raw: str, rule: str) -> Classification | None:
    """A statement that only :mod:`.rules` recognised as a negated directive: a rule for this
    session (``rule`` is its text without fillers); ``None`` when the user asked not to keep it."""
    stmt = raw.strip()
    if not stmt or stmt.endswith("?") or no_store_marker(stmt):
        return None
    return Classification(
        "session_rule", _clean(redact_secrets(stmt)), "constraints", _clean(redact_secrets(rule)),
        contains_secret=has_secrets(stmt),
        reason="a negated directive: a rule for this session (lasting only if said so)",
    )
