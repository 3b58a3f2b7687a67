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
from dataclasses import dataclass, replace
from typing import Any, Literal

from neotask_tui.engine.language.periods import period_of
from neotask_tui.engine.language.refusals import bare_refusal
from neotask_tui.text.quoted import mask_quoted
from neotask_tui.text.remember import remembered_span
from neotask_tui.text.secrets import announces_secret, has_secrets, redact_part, redact_secrets, without_markers
from neotask_tui.text.terminal import without_controls
from neotask_tui.text.wraps import join_wraps
from neotask_tui.tuning import INBOX_PROPOSAL_MAX_CHARS

Kind = Literal["temporary_preference", "session_choice", "session_goal", "project_rule", "promotion", "user_fact",
               "session_rule"]

__all__ = [
    "Classification",
    "Kind",
    "bare_refusal_for_a_period",
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
    r"\btoday\b(?!['’]s\b)", r"\btonight\b(?!['’]s\b)", r"\bfor now\b", r"\bright now\b", r"^\s*now\b", r"\bjust now\b",
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
    r"\b(?:all|this whole) week\b", r"\btomorrow\b(?!['’]s\b)",
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
    r"(?<!\w)в течение (?:\S+\s+)?(?:час\w*|получаса|минут\w*|дн\w*|недел\w*|суток)(?!\w)",
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
    r"\btoday\b(?!['’]s\b)", r"\btonight\b(?!['’]s\b)",
    r"\b(?:until|till|til|through) (?:the )?(?:end of (?:the |this )?day|eod)\b",
    r"\bfor the rest of the day\b",
    r"\bсегодня\b", r"\bдо конца дня\b",
)
"""Markers of a statement that holds until the end of the local day."""
_PERM = _rx(
    r"\balways\b", r"\bfrom now on\b", r"\bgoing forward\b", r"\bevery time\b", r"\bby default\b",
    r"\bin general\b", r"\bnever\b(?![^\S\n]+(?:mind|again|ever)\b)",
    r"\bin (?:all|every|future) (?:future )?(?:sessions?|chats?|conversations?)\b",
    r"\bremember that\b", r"(?<!\bi'd )(?<!\bi would )(?<!\bwe'd )(?<!\bwe would )\bprefer\b",
    r"\bвсегда\b(?![^\S\n]+так\b)", r"\bвпредь\b", r"\bотныне\b", r"\bс этого момента\b", r"\bникогда\b",
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
_CLAUSE_LEAD = frozenset(("so", "and", "then", "ok", "okay", "now", "well", "fine", "alright", "right", "yes",
                          "first", "next", "great", "good", "sure", "cool", "please"))
_IDIOM_OBJECT = re.compile(
    r"\s*(?:to\s+\w|an?\s+(?:break|look|walk|step|nap|rest|moment|minute|second|seat|chance|trip|photo|picture|"
    r"day|breath|shower|stroll|ride|deep)\b|(?:care|part|place|time|turns|notes|advantage|pride|it easy)\b)",
    re.I,
)


_RELATIVE_REST = re.compile(
    r"\s*(?:(?!(?:what|which|whatever|whichever|that|this|it|them)\b)[\w'-]+\s+){0,2}(?:is|was|are|were)\b", re.I)
"""What follows "I use" in a relative clause: the sentence's own verb ("The password I use everywhere is
…", "the tool we use is …"), so nothing was picked."""


def _not_a_choice(stmt: str, m: re.Match[str]) -> bool:
    """Whether a :data:`_CHOICE` match picks nothing: "I try to organize my time", "we take a break",
    "I use vim" (a habit: "I'll use vim", "let's use vim" pick),
    "take care", "let us" with someone else as its subject ("They let us take a break"), or a relative
    clause ("The password I use everywhere is …": :data:`_RELATIVE_REST`)."""
    if m["en"] is None:
        return False
    if _RELATIVE_REST.match(stmt, m.start("en")):
        return True
    lead = m.group(0)[: m.start("en") - m.start()]
    if re.fullmatch(r"(?:i|we)\s+use\s+", lead, re.I):
        return True  # "I use vim", "we use Postgres": how one works, not a pick in this workflow
    if lead.lower().startswith("let us"):
        before = stmt[: m.start()].rstrip().lower()
        last = re.findall(r"[a-z']+$", before)
        if last and last[0] not in _CLAUSE_LEAD:
            return True  # "They let us take a break": their permission, not our pick
    return bool(_IDIOM_OBJECT.match(stmt, m.start("en")))


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
    # where one lives and works, what one is allergic to (red team 34, F4)
    r"^(?:\w+,?\s+)?(?:i(?:\s+(?:currently|now|still))?\s+(?:live in|work (?:at|for|as))"
    r"|i(?:['’]m|\s+am)\s+(?:allergic to|based in))"
    r"\s+(?!(?:fear|hope|denial|the moment|the past)\b)(?P<eabout>\S.*)",
    r"\b(?:мой|моя|моё|мое|мои)\s+(?P<rk>[а-яё][а-яё \-]{1,40}?)\s*(?:—|–|-|:|\bэто\b)\s*(?P<rv>.+)",
    r"\bменя зовут (?P<rname>.+)",
    r"^(?:\w+,?\s+)?я\s+(?:сейчас\s+)?(?:живу в|работаю в|работаю на|работаю)\s+(?P<rabout>\S.*)",
    r"\bу меня аллергия на (?P<rall>.+)",
)
_GOING = re.compile(
    # "my hard work is paying off", "my writing is consuming me", "my dreams are comin' true": how it goes
    r"(?:\w+ing|\w+in['’])\s+(?:off|on|up|out|down|well|great|fine|badly|me|us|him|her|them|it|true|along|better"
    r"|worse|so|really|nuts|crazy)\b"
)
_VERDICT = re.compile(
    _GOING.pattern
    + r"|(?:failing|passing|working|running|breaking|crashing|loading|going|getting|coming|paying|improving|growing"
    r"|killing|driving|consuming|happening|starting|ending|waiting|taking|looking|doing|feeling|stuck)\b"
    # "my meetings are so exciting", "my vision is awesome", "my laptop is like half my lifeline": a verdict
    r"|(?:so|such|really|very|pretty|super|quite|too|totally|absolutely|kinda|kind of|sort of|truly|just|like"
    r"|full of|a bit|a little|all over|the best|the worst|one of the best)\b"
    r"|(?:awesome|amazing|great|good|nice|cool|fine|okay|ok|bad|terrible|awful|horrible|exciting|excited|incredible"
    r"|wonderful|fantastic|beautiful|perfect|important|special|hard|tough|crazy|insane|wild|fun|boring|busy|better"
    r"|worse|lovely|sweet|cute|huge|tiny|brilliant|stunning|gorgeous|ready|done|over|broken|gone|finished|fixed"
    r"|the most|the best|the worst|the greatest|not|never|no longer)\b"
    # "my studio is bringing its best moves": what something is doing (unless the thing is an activity, below)
    r"|[a-z]+(?:ing|in['’])\s+\w"
)
_ACTIVITY = re.compile(
    r"(?:.*\s)?(?:hobby|hobbies|job|passion|favou?rite(?:\s+\w+)?|thing|plan|dream|goal|idea|specialty"
    r"|profession|occupation|role|focus|interest|method|approach|way|routine|habit|task|field|area|career|business"
    r"|pastime|side project)",
    re.IGNORECASE,
)
"""A "my X" that names an activity: "my hobby is painting landscapes", "my job is teaching kids" are
facts whatever follows the gerund."""
"""What makes "my X is Y" a report of how X is going or a verdict on it, not a fact about the user
to keep (and propose for long-term memory): Y, when it starts in lower case, opens with one of these.
"My favourite band is Cool Kids", "my editor is neovim", "my hobby is painting" stay facts."""
_DIRECTIVE = _rx(
    r"\b(?:answer|reply|respond|write|use|don'?t|do not|never|avoid|send|give|speak|talk|explain|be|"
    r"keep|format|show|call|add|include|skip|stop|make|prefer|switch|please|focus|limit|output|"
    r"return|list|translate|want|need|like)\b",
    r"\b(?:не\s+)?(?:отвеча|ответь|пиш|напиш|использ|присыл|пришл|шли|говор|объясн|дела|сдела|"
    r"дава|дай|показ|покаж|избега|сокращ|держ|форматир|перевод|переведи|добав|обращ|пропуск|"
    r"перестань|хочу|нужн|предпочита|будь|старайся|присла)\w*",
)
_NOT_ASKED = _rx(
    # "sounds like", "looks like": a comparison, not "I like"
    r"\b(?:sounds?|looks?|feels?|seems?|just|more|much)\s+like\b",
    # "I want to help people", "I need to finish it": what the speaker will do, not how to answer
    r"\b(?:i|we)\s+(?:really\s+|just\s+|still\s+)?(?:want|need|would\s+like|'d\s+like)\s+to\s+"
    r"(?!(?:see|get|have|receive|read)\b)",
    r"(?<!\w)(?:(?:я|мы)\s+)?(?:хочу|хотим|хотел[аи]?\s+бы|нужно|надо)\s+(?!видеть|получ)[а-яё]+(?:ть|ти|чь)(?![а-яё])",
)
"""Where :data:`_DIRECTIVE`'s "want", "need", "like" ("хочу", "нужно") ask the assistant for nothing: "Now I
want to help people go through it too" and "Sounds like you're really loving life right now!" are no
preferences of the session, "Now I want short answers" and "now I want you to answer in Russian" are."""


def _directs(statement: str) -> bool:
    """Whether ``statement`` tells the assistant how to work (:data:`_DIRECTIVE`, outside
    :data:`_NOT_ASKED`), or says how answers should be (:data:`_MANNER`) beside a directive word."""
    if _DIRECTIVE.search(_NOT_ASKED.sub(" ", statement)):
        return True
    return bool(_DIRECTIVE.search(statement) and _MANNER.search(statement))


_TASK = re.compile(
    r"^(?:(?:now|so|ok(?:ay)?|today|tonight|please|then|and|first|next|right now|for now|сейчас|теперь|"
    r"сегодня|пожалуйста|давай(?:те)?|а|и|так)[,\s]+)*"
    r"(?:write|draft|create|generate|fix|review|implement|add|run|build|refactor|update|delete|remove|"
    r"rename|deploy|prepare|summari[sz]e|check|test|debug|find|investigate|look|analy[sz]e|compare|"
    r"migrate|set up|configure|install|rewrite|edit|plan|outline|design|merge|ship|release|finish|do|translate|"
    r"(?P<ru>напиши|создай|сгенерируй|исправь|почини|проверь|подготовь|добавь|удали|переименуй|найди|"
    r"посмотри|разберись|настрой|собери|запусти|сделай|составь|сравни|реализуй|обнови|выкати|"
    r"задеплой|перепиши))(?!\w)(?!\s+not\b)",
    re.I,
)
"""A request for one piece of work ("Now please write the migration checklist for BILL-4521",
"Сейчас напиши чеклист миграции"): the leading verb asks for something to be done. With a time word
("now", "today", "сейчас") it is still a request, not a preference of the session, unless it says how
answers should be (:data:`_MANNER`). "Do not …" is a rule, never a task."""
_LANGUAGES = "english|russian|german|french|spanish|italian|chinese|japanese|ukrainian|polish|portuguese"
"""Languages an answer may be asked in ("in Russian"), for :data:`_MANNER` and :data:`_HOW_ANSWERED`."""
_MANNER = _rx(
    r"\b(?:answers?|repl(?:y|ies)|responses?|messages?|style|tone|format(?:ting)?|concise(?:ly)?|"
    r"brief(?:ly)?|short(?:er|ly)?|longer|detailed|verbose|simpl[ey]|simpler|without|only|emojis?|tabs|"
    r"spaces|bullets?|in (?:" + _LANGUAGES + r"|plain|full sentences|markdown|one (?:line|sentence|paragraph)))\b",
    r"(?<!\w)(?:по-\w+|на (?:русском|английском|немецком)|кратк\w*|коротк\w*|короче|подробн\w*|без|"
    r"только|ответ\w*|стил\w*|формат\w*|эмодзи)(?!\w)",
)
"""Words saying how answers should be ("write shorter answers", "explain simply", "напиши по-русски")."""


_ARTIFACT = re.compile(
    r"[^\S\n]+(?:(?:me|us)[^\S\n]+)?(?:a|an|the|this|that|these|those|my|our|some)[^\S\n]"
    r"(?![^.!?;\n]*\b(?:answers|replies|responses|messages)\b)",
    re.I,
)
"""The object of a task verb is a thing to make ("write *a short poem*", "translate *this README*"):
then a manner word in it ("short") describes the thing, not the answers."""


_MORE_CLAUSES = re.compile(r"(?<!\w)(?:and|then|but|also|и|а|потом|затем|также)(?!\w)|[,;:—–]", re.I)
"""A request for one thing is one clause: with another after it, the statement is judged as before."""
_HOW_ANSWERED = re.compile(
    r"(?<!\w)(?:ответ\w*|answers|replies|responses)(?!\w)|(?<!\w)по-\w+"
    r"|\bin (?:" + _LANGUAGES + r")\b"
    r"|(?<!\w)на (?:русском|английском|немецком|французском|испанском)(?!\w)",
    re.I,
)
"""What keeps a task with a thing to make a preference: it says how answers are or which language
("this month write the changelog in Russian")."""


def one_off_request(statement: str) -> bool:
    """Whether ``statement`` asks for one piece of work rather than saying how to work
    (:data:`_TASK`, and no :data:`_MANNER` word unless it describes the thing asked for,
    :data:`_ARTIFACT`; a Russian perfective verb asks for one thing whatever its object says)."""
    stmt = statement.strip()
    task = _TASK.match(stmt)
    if task is None or _MORE_CLAUSES.search(stmt, task.end()):
        return False  # "fix the build first and answer briefly": the clause after it may be a preference
    if _ARTIFACT.match(stmt, task.end()) or task["ru"]:
        return not _HOW_ANSWERED.search(stmt)
    return not _MANNER.search(stmt)


_DURATION_EN = re.compile(
    r"\b(?:for (?:the (?:next|coming) )?|(?:during|over|within) the (?:next|coming) )"
    r"(?P<n>\d+|an?|one|two|three|half an?) (?P<u>hours?|hrs?|minutes?|mins?|days?)\b",
    re.I,
)
_DURATION_RU = re.compile(
    r"\bна (?:ближайш\w+ |следующ\w+ )?(?P<n>\d+|полчаса|час|пару часов)"
    r"\s*(?P<u>час\w*|минут\w*|дн\w*|день)?",
    re.I,
)
_DURING_RU = re.compile(
    r"(?<!\w)в течение (?:(?:ближайш|следующ)\w+\s+)?"
    r"(?:(?P<n>\d+|одного|двух|тр[её]х|четыр[её]х|пяти)\s+(?P<u>час\w*|минут\w*|дн\w*|суток)"
    r"|(?P<one>часа|получаса|суток))(?!\w)",
    re.I,
)
"""A duration after "в течение" ("в течение 2 часов отвечай коротко", "в течение получаса"): as
"на 2 часа", the entry's lifetime; a marker of :data:`_TEMP` that gave none left the entry without an
end."""
_UNTIL_EVENT = re.compile(
    r"\buntil (?:the )?(?:event )?(?P<en>[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b|\bдо события (?P<ru>[\w\-]+)", re.I
)
_NO_STORE = _rx(
    r"\bdon'?t (?:remember|save|store)\b", r"\bdo not remember\b", r"\bне (?:запоминай|сохраняй|записывай)(?:те)?\b"
)
_GOAL_CLAUSE = (
    r"(?:,\s*(?:(?:and|but|so|и|а|но)\s+)?|\s+(?:and|и)\s+)"
    r"(?=(?:(?:my|our|моя|наша)\s+(?:(?:main|new|current|overall|immediate|next|главная|основная|новая|текущая"
    r"|ближайшая)\s+)?(?:goal|objective|цель)(?:\s+(?:here|today|now|for (?:today|now|this session|this week)"
    r"|сейчас|сегодня|на сегодня|на эту неделю))?\s*(?:\bis\b(?!['’])|:|—|–|\s-\s|\bэто\b)"
    r"|(?:goal|цель)\s*[:—–]))"
)
"""Where a goal statement starts after a comma or "and" ("for 2 hours answer briefly, my goal is ship
v9", "сегодня отвечай коротко, и моя цель — выпустить v9"): a statement of its own, as after a full
stop; else the goal would be read as part of the preference before it."""
_NOT_AN_ENTITY = "(?-i:" + "".join(
    [rf"(?<!&[a-z]{{{n}}})" for n in range(2, 9)] + [rf"(?<!&#\d{{{n}}})" for n in range(1, 8)]
    + [rf"(?<!&#[xX][0-9a-fA-F]{{{n}}})" for n in range(1, 7)]) + ")"
"""Before a ``;`` that ends an HTML entity (``&lt;``, ``&#39;``, ``&#x1b;``): no clause break there
("Q&As; do not…" still breaks: entity names are lower case)."""
_SPLIT = re.compile(r"(?<=[.!?…])\s+|\n+|" + _NOT_AN_ENTITY + r";\s*|" + _GOAL_CLAUSE, re.I)
_PERIOD_LED = re.compile(
    r"(?:,\s*(?:(?:and|but|so|и|а|но)\s+)?|\s+(?:and|и)\s+)(?=" + _TEMP_PHRASE.pattern + ")", re.I
)
"""Where a clause that starts with its own period may start a statement of its own, after a comma or
"and" ("my goal is ship v9, today answer briefly", "…, и до пятницы без смайликов"): the mirror of
:data:`_GOAL_CLAUSE`, checked by :func:`_period_led_clauses`."""
_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "одного": 1, "двух": 2, "трёх": 3, "трех": 3,
          "четырёх": 4, "четырех": 4, "пяти": 5}


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
        refused: Why a statement that would have been proposed is not (too long to be one memory),
            for a notice; ``""`` otherwise.
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
    refused: str = ""

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


_TRAILING_PERIOD = re.compile(r"[\s,:—–-]+(?:" + _TEMP_PHRASE.pattern + r")[\s.!…]*$", re.I)
"""A temporariness phrase that ends a statement ("no emojis until Friday", "без смайликов до пятницы")."""
_SO_FAR = re.compile(
    r"(?:(?:just|only|тольк[оа])\s+)?(?:for now|right now|just now|now|this time|пока(?: что)?|сейчас|в этот раз)",
    re.I,
)
"""Periods that also say "so far": "Пока без ответа", "for now no errors" report a state, they ask nothing."""


def bare_refusal_for_a_period(statement: str) -> bool:
    """Whether ``statement`` is a bare refusal (:func:`~.refusals.bare_refusal`: "без X", "no X", at
    most two words an item) limited to a period before or after it: "до пятницы без смайликов",
    "until Friday no emojis", "no emojis for 2 hours". Not with a period that also means "so far"
    (:data:`_SO_FAR`: "Пока без ответа" is a status); "until Friday no one is in the office" is no
    bare refusal."""
    stmt = _LEAD_FILLER.sub("", statement.strip())
    lead = _TEMP_PHRASE.match(stmt)
    if lead is not None:
        period, rest = lead.group(0), stmt[lead.end():].lstrip(" ,:—–-")
    elif (trail := _TRAILING_PERIOD.search(stmt)) is not None:
        period, rest = trail.group(0), stmt[:trail.start()]
    else:
        return False
    return not _SO_FAR.fullmatch(period.strip(" ,:—–-.!…")) and bare_refusal(rest)


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
    """Split a message into statements (sentences, lines, ``;``-separated clauses, a goal stated after
    a comma or "and": :data:`_GOAL_CLAUSE`, a preference that starts with its own period after a
    statement: :func:`_period_led_clauses`); a line break inside a sentence is no end
    (:func:`~neotask_tui.text.wraps.join_wraps`). A message or sentence wrapped whole in parentheses,
    brackets or stars is its content (:func:`_unwrapped`). A "do not" clause after a period-led
    preference is split off later, when it is read as a rule (:func:`_with_its_rule`)."""
    joined = join_wraps(text)
    return [joined[a:b] for a, b in _statement_spans(text)]


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
    m = _DURING_RU.search(text)
    if m:
        one = (m.group("one") or "").lower()
        if one:
            return {"часа": "1h", "получаса": "30m"}.get(one, "1d")
        raw = m.group("n").lower()
        n = int(raw) if raw.isdigit() else _WORDS.get(raw, 1)
        u = m.group("u").lower()
        return f"{n}{'h' if u.startswith('час') else 'm' if u.startswith('мин') else 'd'}"
    return None


def _strip_markers(text: str) -> str:
    out = _TEMP_PHRASE.sub(" ", text)
    out = _DURATION_EN.sub(" ", out)
    out = _DURATION_RU.sub(" ", out)
    out = _DURING_RU.sub(" ", out)
    out = re.sub(r"\s+([)\]])", r"\1", re.sub(r"([(\[])\s+", r"\1", out))  # "Note (today X)" is "Note (X)"
    return _clean(out)


def _first_group(m: re.Match[str], *names: str) -> str:
    for n in names:
        v = m.groupdict().get(n)
        if v:
            return v
    return ""


_LEAD_FILLER = re.compile(
    r"^(?:(?:please|kindly|also|and|so|ok(?:ay)?|just|oh|btw|but|пожалуйста|и|а|также|ещё|еще|так|ну|кстати|но)"
    r"(?![\w'’-])[\s,:—–-]*)+",
    re.I,
)
_ADDRESSED = _rx(
    r"^(?:you|u)\s+(?:should|must|need to|have to|shall|will|'ll|are to|ought to)\b",
    r"^(?:make sure|be sure|let'?s|let us|do not|don'?t)\b",
    r"^(?:i|we)(?:'d| would)?\s+(?:(?:really|do|much|also|generally)\s+)?"
    r"(?:prefer|rather|want|like|need you|expect you|ask you|'d like|would like)\b",
    r"^(?:я|мы)\s+(?:(?:очень|бы|тоже|также)\s+)?(?:предпочитаю|предпочитаем|хочу|хотим|прошу|просим|хотел(?:а|и)?)(?!\w)",
    r"^мне\s+(?:\w+\s+)?(?:нужн\w*|удобн\w*|нравится,? когда)(?!\w)",
    r"^(?:ты|вы)\s+(?:должен|должна|должны|обязан\w*)(?!\w)",
    r"^(?:тебе|вам)\s+(?:нужно|надо|следует|стоит)(?!\w)",
    r"^(?:давай(?:те)?|не забывай(?:те)?)(?!\w)",
)
"""A lasting instruction that is not a bare imperative: addressed to the assistant ("you should
always …", "ты должен всегда …", "let's always …") or the user's own preference ("I always prefer
…", "я всегда хочу …")."""
_EN_IMPERATIVE = frozenset([
    "answer", "reply", "respond", "write", "use", "avoid", "send", "give", "speak", "talk", "explain", "be", "keep",
    "format", "show", "call", "add", "include", "skip", "stop", "make", "prefer", "switch", "focus", "limit",
    "output", "return", "list", "translate", "ask", "check", "run", "test", "start", "begin", "put", "cite",
    "mention", "quote", "remind", "tell", "say", "let", "follow", "sign", "address", "confirm", "provide",
    "summarize", "summarise", "suggest", "recommend", "prioritize", "prioritise", "treat", "assume", "consider",
    "think", "wrap", "indent", "comment", "document", "name", "label", "mark", "sort", "order", "number",
    "structure", "commit", "push", "lint", "type", "prefix", "end", "close", "open", "copy", "greet", "spell",
    "capitalize", "respect", "ignore", "leave", "remove", "delete", "drop", "omit", "hide", "print", "log", "save",
    "store", "fix", "review", "wait", "try", "remember", "double-check", "refer", "link", "note", "state", "stick",
    "stay", "sound", "reference", "warn", "flag", "highlight", "attach", "sanitize", "escape",
    "validate", "deploy", "ship", "release", "squash", "rebase", "merge", "code", "build",
    "measure", "round", "convert", "report", "specify", "define"
])
"""English verbs an instruction starts with ("always *use* tabs", "*answer* always in English"), for
a statement whose marker does not come first: "Users always complain" starts with its subject."""
_EN_SUBJECT = frozenset([
    "i", "we", "you", "he", "she", "it", "they", "me", "us", "him", "her", "them", "my", "our", "your", "his",
    "its", "their", "this", "that", "these", "those", "there", "here", "the", "a", "an", "some", "any", "all",
    "most", "many", "each", "every", "no", "none", "nobody", "everybody", "everyone", "someone", "somebody",
    "people", "nothing", "something", "everything", "one", "same", "such", "so"
])
_RU_IMPERATIVE = re.compile(r"(?:не\s+)?([а-яё]{2,}(?:й|йте|и|ите|ь|ьте)(?:сь|ся)?)(?![а-яё-])", re.I)
_RU_NOT_VERB = frozenset([
    "мои", "твои", "свои", "наши", "ваши", "эти", "те", "мой", "твой", "свой", "какой", "такой", "другой", "этой",
    "той", "самой", "одной", "всей", "моей", "твоей", "своей", "нашей", "вашей", "любой", "каждый", "какие",
    "такие", "другие", "все", "ни", "чьи"
])
_RU_VERB_STEM = re.compile(
    r"(?:отвеча|ответ|пиш|напиш|использ|присыл|пришл|шли|говор|объясн|дела|сдела|дава|дай|показ|покаж|избега"
    r"|сокращ|держ|форматир|перевод|переведи|добав|обращ|пропуск|перестань|будь|стара|присла|провер|запуск"
    r"|тестир|комментир|указ|цитир|упомина|называ|начина|заканчива|спрашива|уточня|предлага|напомина|сохраня"
    r"|остав|удаля|убира|выделя|став|клад|след|соблюда|учитыва|помн|пользу|оформля|подписыва|прикладыва"
    r"|проверя|исправля|делай|называй|ставь)",
    re.I,
)


_PREFER = re.compile(r"prefer|предпочитаю", re.I)
_REQUEST_MARKER = re.compile(r"remember|запомни", re.I)
"""Permanence markers that are a request to remember: a request counts only where
:func:`~neotask_tui.text.remember.remembered_span` finds one ("I can't remember that guy's name" is none)."""


_OWN_PRACTICE = re.compile(
    # "I always use uv", "from now on we'll use uv", "from now on I'm going to drink less coffee" (a plan
    # of one's own, with a verb no instruction uses: a habit to be, not an instruction)
    r"(?:i|we|я|мы)(?:['’]ll|\s+will|['’]m going to|\s+am going to|['’]re going to|\s+are going to|\s+shall)?"
    r"\s+([^\W\d_][\w'’-]*)", re.I)
_NOT_TALKING = re.compile(r"^let(?:['’]s| us)\s+(?:never|not)\s+(?:\w+\s+)?(?:talk|speak)\s+(?:about|of)\b", re.I)
""""Let's never talk about the outage again": a wish about the chat, no instruction to keep."""


def _standing(view: str) -> bool:
    """Whether a statement with a permanence marker ("always", "never", "всегда"…) is a standing
    instruction ("Always use tabs", "Всегда отвечай по-русски", "You should always …", "I always
    prefer …") rather than a description of someone or a habit ("My colleague always uses tabs",
    "Я всегда забываю ключи", "Users always complain"): with the markers taken out it starts with an
    imperative, an address to the assistant, the user's own preference, or the user's own working
    practice with a verb an instruction would use ("I always use uv" is "use uv"; "I always forget my
    keys" is a habit)."""
    # a scope or a period is not the subject: "In this repo always use …", "До пятницы всегда …"
    lead = _LEAD_FILLER.sub("", strip_leading_period(_PROJECT.sub(" ", view).strip(" ,:—–-")))
    marker_first = (m := _PERM.search(lead)) is not None and not lead[:m.start()].strip(" ,:—–-")
    # the markers go, except a preference verb ("I always prefer …" is "I prefer …")
    core = _PERM.sub(lambda w: w.group(0) if _PREFER.fullmatch(w.group(0)) else " ", lead)
    core = _LEAD_FILLER.sub("", re.sub(r"\s+", " ", core).strip(" ,:—–-"))
    if _NOT_TALKING.match(lead):
        return False
    if _ADDRESSED.search(core):
        return True
    own = _OWN_PRACTICE.match(core)
    if own is not None:  # "I always use uv", "я всегда пишу тесты": how the user works, not a habit
        verb = own.group(1).casefold()
        return verb in _EN_IMPERATIVE or bool(_RU_VERB_STEM.match(verb))
    first = re.match(r"[^\W\d_][\w'’-]*", core)
    if first is None:
        return False
    word = first.group(0).casefold()
    if word.isascii():
        if word in _EN_IMPERATIVE:
            return True
        return marker_first and word not in _EN_SUBJECT and not word.endswith(("'s", "’s"))
    ru = _RU_IMPERATIVE.match(core.casefold())
    if ru is None or ru.start(1) > 3:
        return False
    verb = ru.group(1)
    if verb in _RU_NOT_VERB or verb.endswith(("ый", "ий")):
        return False
    return bool(_RU_VERB_STEM.match(verb)) or marker_first


def _trimmed(view: str, a: int, b: int) -> tuple[int, int]:
    """The span ``a:b`` of ``view`` without the white space at its ends."""
    while a < b and view[a].isspace():
        a += 1
    while b > a and view[b - 1].isspace():
        b -= 1
    return a, b


_WRAPPERS = (("**", "**"), ("*", "*"), ("(", ")"), ("[", "]"))
"""Marks a whole message or sentence may be wrapped in ("(do not use emojis)", "[today answer briefly]",
"**my goal is ship v9**"): the statement is its content. Quotes and code are not among them: what
they hold is data (:func:`~neotask_tui.text.quoted.mask_quoted`)."""


def _closing(view: str, a: int, e: int) -> int:
    """Where the bracket at ``view[a]`` closes before ``e`` (-1: it does not)."""
    op, cl, depth = view[a], {"(": ")", "[": "]"}[view[a]], 0
    for i in range(a, e):
        depth += (view[i] == op) - (view[i] == cl)
        if depth == 0:
            return i
    return -1


def _unwrapped(view: str, a: int, b: int) -> tuple[int, int]:
    """The span ``a:b`` of ``view`` without the wrappers (:data:`_WRAPPERS`) around all of it, nested
    ones too, and the sentence's end after them ("(do not use emojis)." is "do not use emojis"). A
    bracket must close at the end ("(a) and (b)" is no wrapped statement); an emphasis holds no other
    star ("*a* and *b*"); a question mark after the wrapper keeps it ("(do you?)?" is a question)."""
    while True:
        e = b
        while e > a and view[e - 1] in ".!…":
            e -= 1
        for op, cl in _WRAPPERS:
            if e - a <= len(op) + len(cl) or not view.startswith(op, a) or not view.startswith(cl, e - len(cl)):
                continue
            inner = view[a + len(op):e - len(cl)]
            if op in "([":
                if _closing(view, a, e) != e - 1:
                    continue
            elif "*" in inner or inner[:1].isspace() or inner[-1:].isspace():
                continue
            a2, b2 = _trimmed(view, a + len(op), e - len(cl))
            if a2 < b2:
                break
        else:
            return a, b
        a, b = a2, b2


def _statement_spans(view: str) -> list[tuple[int, int]]:
    """The statements of a (masked) message as spans: :func:`split_statements`, with positions. A
    message or sentence wrapped in parentheses, brackets or stars is its content (:func:`_unwrapped`)."""
    out: list[tuple[int, int]] = []
    joined = join_wraps(view)
    pos, end = _unwrapped(view, *_trimmed(view, 0, len(view)))
    for m in [*_SPLIT.finditer(joined, pos, end), None]:
        a, b = _trimmed(view, pos, m.start() if m is not None else end)
        if a < b:
            a, b = _unwrapped(view, a, b)
            out.extend(_period_led_clauses(joined, a, b))
        if m is None:
            break
        pos = m.end()
    return out


def _says_more_than_its_scope(clause: str) -> bool:
    """Whether ``clause`` holds more than a scope, a period and fillers ("For this project, today skip
    the tests" leads with its scope: "For this project" alone is no statement)."""
    core = strip_leading_period(_PROJECT.sub(" ", clause).strip(" ,:—–-"))
    return bool(_LEAD_FILLER.sub("", core).strip(" ,.;:!?…—–-"))


_DIRECTIVE_CLAUSE = re.compile(r",\s*(?:(?:and|but|so|и|а|но)\s+)?(?=\S)|\s+(?:and|и)\s+(?=\S)", re.I)
"""A comma clause that may be an instruction ending with its own period ("my goal is ship v9, answer
briefly today"): a cut of :func:`_period_led_clauses` when :func:`_ends_with_a_period` says so."""


def _ends_with_a_period(view: str, c0: int, b: int) -> bool:
    """Whether the clause from ``c0`` (to the next comma, or ``b``) starts with a directive verb and
    ends with a period (:data:`_TRAILING_PERIOD`): "answer briefly today", "отвечай коротко сегодня"."""
    end = view.find(",", c0, b)
    clause = view[c0:b if end < 0 else end]
    return directive_start(_LEAD_FILLER.sub("", clause)) and _TRAILING_PERIOD.search(clause) is not None


def _period_led_clauses(view: str, a: int, b: int) -> list[tuple[int, int]]:
    """The statement ``view[a:b]`` as spans, split before each clause that :data:`_PERIOD_LED` starts
    when that clause is a temporary preference of its own and what comes before it is a statement
    of its own too ("my goal is ship v9, today answer briefly" is the goal "ship v9" and the preference
    "answer briefly" until midnight; "моя цель — выпустить v9, в течение 2 часов отвечай коротко").

    The clause is judged on its own, as a statement is (:func:`_classify_one`), so a list inside a
    goal ("ship v9, v10 and v11"), a request ("…, today fix the test") or a description ("…, today we
    test it") stays where it is, and so does a preference after words that state nothing ("I'm in a
    hurry, today answer briefly") or only a scope ("For this project, today skip the tests"). Each
    clause is classified once, and the words before it again only when the clause is a preference."""
    led = list(_PERIOD_LED.finditer(view, a, b))
    at = {m.start() for m in led}
    # a clause that ends with its period ("…, answer briefly today") is one too when it is an instruction
    trailing = [m for m in _DIRECTIVE_CLAUSE.finditer(view, a, b) if m.start() not in at
                and _ends_with_a_period(view, m.end(), b)]
    cuts = sorted([*led, *trailing], key=lambda m: m.start())
    if not cuts:
        return [(a, b)]
    out: list[tuple[int, int]] = []
    start = a  # where the statement being built starts
    known: tuple[int, Classification | None] | None = None  # its end and its classification, once read
    for i, cut in enumerate(cuts):
        c0, c1 = _trimmed(view, cut.end(), cuts[i + 1].start() if i + 1 < len(cuts) else b)
        clause = _classify_one(view[c0:c1], view[c0:c1]) if c0 < c1 else None
        if clause is None or clause.kind != "temporary_preference":
            continue
        h0, h1 = _trimmed(view, start, cut.start())
        if known is None or known[0] != h1:
            head = view[h0:h1]
            known = (h1, _classify_one(head, head) if _says_more_than_its_scope(head) else None)
        if known[1] is None:
            continue
        out.append((h0, h1))
        start, known = c0, (c1, clause)
    h0, h1 = _trimmed(view, start, b)
    out.append((h0, h1))
    return out


def _classify_one(raw: str, view: str | None = None) -> Classification | None:
    """One statement: ``raw`` as typed, ``view`` the same with quotes and code masked
    (:func:`~neotask_tui.text.quoted.mask_quoted`), where every decision is read."""
    if view is None:
        raw = raw.strip()
        view = mask_quoted(raw)
    full_raw = raw
    requested = False
    span = remembered_span(view)
    if span is not None:  # "…, remember that X, and tell me Y": the memory is X
        a, b = span
        content = view[a:b]
        if not _PERM.sub(" ", content).strip(" ,.;:!?…—–-\n\t`'\"«»"):
            return None  # "Remember:", "Запомни, что", "Remember: always.": nothing to remember
        if content.endswith("?"):
            return None  # "…, remember that party?"
        raw, view, requested = raw[a:b], content, True
    elif not view or view.endswith("?"):
        return None
    if announces_secret(view):  # "my password is in the next message": no fact, nothing to keep
        return None
    stmt = view
    if requested:
        redacted, secret = redact_part(full_raw, a, b)
    else:
        redacted, secret = redact_part(raw, 0, len(raw))
    text = _clean(redacted)
    temp = temporary_markers(stmt)
    perm = [p for p in permanence_markers(stmt) if not _REQUEST_MARKER.match(p)] + (["remember"] if requested else [])
    # "always" in a description ("My colleague always uses tabs") is no sign of a lasting rule
    lasting = bool(perm) and (requested or _standing(stmt))
    no_store = no_store_marker(stmt)
    ttl = _duration(stmt)
    ev = _UNTIL_EVENT.search(stmt)
    until = _group(ev, raw, "en", "ru") if ev else None
    if until:
        temp.append(f"until {until}")
    too_long = len(text) > INBOX_PROPOSAL_MAX_CHARS

    def mk(kind: Kind, field_: str | None, value: str | None, shown: str | None = None,
           **kw: Any) -> Classification:
        if too_long and kw.get("candidate_scope"):
            kw["candidate_scope"] = None
            kw["refused"] = (f"not proposed for long-term memory: {len(text):,} characters, more than a "
                             f"memory holds ({INBOX_PROPOSAL_MAX_CHARS}); /remember keeps what you choose")
        return Classification(
            kind, text if shown is None else shown, field_, value, ttl=ttl, until_event=until, contains_secret=secret,
            no_store=no_store, period=None if ttl or until else period_of(stmt), **kw,
        )

    proj = _PROJECT.search(stmt)
    if proj and (lasting or not perm):
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
        obj = _clean(_redacted_group(goal, raw, "en", "ru"))
        if obj:
            return mk(
                "session_goal", "current_goal", obj,
                reason="the goal stated for this conversation: session state, not a fact about you",
                markers=tuple(temp),
            )
    choice = _CHOICE.search(stmt)
    if choice and _not_a_choice(stmt, choice):
        choice = None
    if choice and not (lasting and not temp):
        obj = _clean(_redacted_group(choice, raw, "en", "en2", "ru"))
        if obj:
            return mk(
                "session_choice", "selected_entity", obj,
                reason="a choice in the current workflow: an action, not a preference",
                markers=tuple(temp),
            )
    if lasting and not temp:
        return mk(
            "promotion", None, None, text[:1].upper() + text[1:] if requested else text, candidate_scope="user",
            reason="explicit lasting preference: proposed for long-term memory, not a session fact",
            markers=tuple(perm),
        )
    after_period = strip_leading_period(stmt)
    if (temp and (_directs(stmt) or (after_period != stmt and _PERIOD_IMPERATIVE.match(after_period))
                  or bare_refusal_for_a_period(stmt))
            and not one_off_request(after_period)):
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
    if (fact and fact.group("ev") and _VERDICT.match(value := stmt[fact.start("ev"):].lstrip())
            and value[:1].islower() and not (_ACTIVITY.fullmatch(fact.group("ek") or "")
                                             and re.match(r"[a-z]+ing\b", value) and not _GOING.match(value))):
        fact = None  # "my hard work is paying off", "my meetings are so exciting": no fact to keep
    if fact and not _says_more_than_a_secret(fact, raw):
        fact = None  # "мой пароль от почты — <secret>": all it would keep is the marker
    if fact:
        return mk(
            "user_fact", "facts", text, candidate_scope=None if temp else "user",
            reason="a stated fact about the user: kept in the session; long-term only if confirmed",
            markers=tuple(temp),
        )
    return None


def _says_more_than_a_secret(fact: re.Match[str], raw: str) -> bool:
    """Whether what a stated fact says (its value, to the end of the statement) holds more than
    redacted secrets: "мой пароль от почты — <secret>" keeps nothing but the marker."""
    start = next((fact.start(n) for n in ("ev", "ecall", "eabout", "rv", "rname", "rabout", "rall")
                 if fact.groupdict().get(n)), len(raw))
    said = without_markers(redact_secrets(redact_part(raw, start, len(raw))[0]))
    return bool(re.search(r"\w", said))


def _group(m: re.Match[str], raw: str, *names: str) -> str:
    """The first non-empty named group of ``m`` (matched on the masked view), read from ``raw``."""
    for n in names:
        if m.groupdict().get(n):
            return raw[m.start(n):m.end(n)]
    return ""


def _redacted_group(m: re.Match[str], raw: str, *names: str) -> str:
    """:func:`_group` with its secrets redacted as they read in all of ``raw``: the object of "The
    password I use everywhere is V" ("everywhere is V") no longer holds the cue word that makes
    ``V`` a secret."""
    for n in names:
        if m.groupdict().get(n):
            return redact_secrets(redact_part(raw, m.start(n), m.end(n))[0])
    return ""


def classify(text: str, fallback: Callable[[str], Classification | None] | None = None,
             last: Callable[[str], Classification | None] | None = None) -> list[Classification]:
    """Classify every explicit statement in a user message.

    Quoted text and code are read as data (:func:`~neotask_tui.text.quoted.mask_quoted`): a
    "Remember:" or "always" inside them is not the user's; the statement's text keeps them.

    Args:
        text: The user's message.
        fallback: Classifies a statement no row claims (the session rules of :mod:`.rules`); it is
            asked only when the statement, quotes and code masked, is still one.
        last: Asked, as ``fallback`` is, of a statement that neither a row nor ``fallback`` claims
            (the rules that hold until something happens); never of a part of a statement.

    Returns:
        One :class:`Classification` per statement that means something for memory; ordinary chat
        and questions yield nothing.
    """
    return [c for c in classify_each(text, fallback, last) if c is not None]


def classify_each(text: str, fallback: Callable[[str], Classification | None] | None = None,
                  last: Callable[[str], Classification | None] | None = None) -> list[Classification | None]:
    """:func:`classify`, one entry per statement of ``text`` (:func:`split_statements`, quotes and
    code masked): ``None`` for a statement that means nothing for memory (ordinary chat, a question)."""
    out: list[Classification | None] = []
    # escape sequences say nothing: "my goal is \x1b]0;x\x07 ship v9" sets the goal "ship v9" (red team 34)
    text = without_controls(text)
    view = mask_quoted(text)
    for a, b in _statement_spans(view):
        raw, v = text[a:b], view[a:b]
        c = _classify_one(raw, v)
        if c is None and fallback is not None:
            c = _for_its_period(_asked_fallback(raw, v, fallback), v)
        if c is None and last is not None:
            c = _for_its_period(_asked_fallback(raw, v, last), v)
        elif c is not None and c.kind == "promotion" and fallback is not None:
            lead = _LASTING_LEAD.match(v)
            at = lead.end() if lead else 0
            c = _also_a_rule(c, _asked_fallback(raw[at:], v[at:], fallback))
        out.extend(_with_its_rule(raw, v, c, fallback))
    return out


_LASTING_LEAD = re.compile(
    r"^\s*(?:(?:from now on|going forward|from today|in (?:all|every) future (?:sessions?|chats?)|впредь|отныне"
    r"|с этого момента|с сегодняшнего дня)[\s,:—–-]+)", re.I)
"""What leads a lasting rule ("From now on, never push to main"): the rule is what follows it."""


def _also_a_rule(c: Classification, rule: Classification | None) -> Classification:
    """A lasting preference that is a negated directive ("Never delete the bucket logs-prod",
    "никогда не пушь в main"; ``rule`` is the rule reader's reading of it) is a rule of this session
    too: it holds from now, so ``/new`` carries it and compaction restores it, while its proposal
    waits in the inbox for consent."""
    if rule is None or rule.kind != "session_rule":
        return c
    return replace(c, field=rule.field, value=rule.value,
                   reason="explicit lasting rule: a rule for this session now, proposed for long-term memory")


def _asked_fallback(raw: str, view: str,
                    fallback: Callable[[str], Classification | None]) -> Classification | None:
    """``fallback``'s reading of the statement ``raw`` (secrets and all), asked only when ``view`` (the
    same with quotes and code masked) is still one for it: a "do not" inside quotes is data."""
    return fallback(raw) if view == raw or fallback(view) is not None else None


_RULE_CLAUSE = re.compile(
    r"(?:,\s*(?:(?:and|but|also|и|а|но|также)\s+)?|\s+(?:and|и)\s+)"
    r"(?=(?:(?:please|пожалуйста),?\s+)?(?:do not|don'?t|never|не|никогда не|больше не)\s)",
    re.I,
)
"""Where a "do not" clause starts after a comma or "and" ("today answer briefly, and do not use emojis",
"на 2 часа отвечай кратко, не упоминай имя клиента"): checked by :func:`_with_its_rule`."""


def _with_its_rule(raw: str, view: str, c: Classification | None,
                   fallback: Callable[[str], Classification | None] | None) -> list[Classification | None]:
    """``c``, the classification of the statement ``raw`` (``view`` masked), or, when it is a temporary
    preference that starts with its own period and ends in a "do not" clause (:data:`_RULE_CLAUSE`)
    that ``fallback`` calls a rule, the preference before the clause and the clause as a rule of its
    own with the same end: "for 2 hours answer briefly, do not mention the client name" is the
    preference "answer briefly" and the rule "do not mention the client name", both for 2 hours. A
    rule stays a rule (the state block keeps rules first), and the period that leads the sentence
    covers both. A clause with its own period is read on its own (:func:`_classify_one`).

    A statement nothing claims whole that is an instruction (:func:`directive_start`: "answer briefly,
    do not use emojis", "отвечай коротко, не используй эмодзи") keeps its "do not" clause as a rule
    (:func:`_clause_rule`): the instruction before it has no period and states nothing to keep, the
    prohibition is a rule as it would be alone."""
    if c is None and fallback is not None:
        return [_clause_rule(raw, view, fallback)]
    if (c is not None and c.kind == "temporary_preference" and fallback is not None and isinstance(c.value, str)
            and (c.ttl or c.until_event or c.period)):
        whole = _timed_rule(c, fallback)
        if whole is not None:
            return [whole]
    if (c is None or c.kind != "temporary_preference" or fallback is None
            or not (c.ttl or c.until_event or c.period)):
        return [c]
    for m in _RULE_CLAUSE.finditer(view):
        head = _classify_one(raw[:m.start()], view[:m.start()])
        if head is None or head.kind != "temporary_preference":
            continue
        t0 = m.end()
        tail_raw, tail_view = raw[t0:], view[t0:]
        tail = _classify_one(tail_raw, tail_view)
        if tail is not None and tail.kind == "temporary_preference":
            # "…, and do not use emojis until Friday": its own period (a rule until then)
            return [head, _timed_rule(tail, fallback) or tail]
        if tail is not None and tail.kind != "promotion":
            continue  # a scope, a goal, a choice: the statement is read whole, as before
        # "never" in it is no lasting preference: the period that leads the sentence beats it
        rule = _asked_fallback(tail_raw, tail_view, fallback)
        if rule is None or rule.kind != "session_rule":
            continue
        return [head, replace(rule, ttl=head.ttl, until_event=head.until_event, period=head.period,
                              markers=head.markers,
                              reason="a negated directive after a preference limited to a period: a rule "
                              "for this session, ending with the preference")]
    return [c]


def _for_its_period(c: Classification | None, view: str) -> Classification | None:
    """A rule only the rule reader recognised (``c``, from the statement ``view``), with the period or
    duration the statement names (:func:`_duration`, :func:`~.periods.period_of`): "не трогай прод до
    пятницы", "не трогай прод в течение 2 часов" end then, as "do not touch prod until Friday" does
    (a Russian verb the preference rows do not list left them rules for good)."""
    if c is None or c.kind != "session_rule" or c.ttl or c.until_event or c.period:
        return c
    ttl = _duration(view)
    period = None if ttl else period_of(view)
    if not (ttl or period):
        return c
    return replace(c, ttl=ttl, period=period, reason="a negated directive limited to a period: a rule for this "
                   "session, ending with it")


def _timed_rule(c: Classification, fallback: Callable[[str], Classification | None]) -> Classification | None:
    """The temporary preference ``c`` as a rule with its end when what it says, its period aside, is a
    negated directive (``fallback`` calls it a rule): "for 2 hours do not touch staging", "сегодня не
    деплой ничего", "until Friday do not merge to main" are rules until then, as "for 2 hours answer
    briefly, do not touch prod" makes its clause one: a prohibition keeps a rule's priority in the state
    block however it is timed. ``None`` when it is no rule ("today answer briefly") or a bare refusal
    ("until Friday no emojis", "сегодня без эмодзи": a preference, :func:`bare_refusal_for_a_period`)."""
    value = str(c.value)
    bare = strip_leading_period(value)
    trail = _TRAILING_PERIOD.search(bare)
    bare = (bare[:trail.start()] if trail is not None else bare).strip()
    rule = fallback(bare) if bare and not bare_refusal(bare) else None
    if rule is None or rule.kind != "session_rule" or rule.value is None:
        return None
    return replace(rule, text=c.text, value=rule.value if bare == value else value, ttl=c.ttl,
                   until_event=c.until_event, period=c.period, markers=c.markers,
                   contains_secret=c.contains_secret or rule.contains_secret,
                   reason="a negated directive limited to a period: a rule for this session, ending with it")


def _clause_rule(raw: str, view: str,
                 fallback: Callable[[str], Classification | None]) -> Classification | None:
    """The rule in the "do not" clause (:data:`_RULE_CLAUSE`) of an instruction no kind claims whole
    ("answer briefly, do not use emojis" → the rule "do not use emojis"), or ``None``. The part before
    the clause must start with a directive verb (:func:`directive_start`, after "please"/"и"...): "Here
    is the log, do not worry" or "We shipped v2 and never looked back" state no rule."""
    for m in _RULE_CLAUSE.finditer(view):
        head = _LEAD_FILLER.sub("", view[:m.start()]) if m.start() else ""
        if not head.strip() or not directive_start(head):
            continue
        tail_raw, tail_view = raw[m.end():], view[m.end():]
        if _classify_one(tail_raw, tail_view) is not None:
            continue  # the clause is something else (its own period, a scope...): not read here
        rule = _asked_fallback(tail_raw, tail_view, fallback)
        if rule is not None and rule.kind == "session_rule":
            return replace(rule, reason="a negated directive after an instruction: a rule for this session "
                                        "(lasting only if said so)")
    return None


def _redacted_part(whole: str, part: str) -> str:
    """``part`` (a piece of ``whole``) with the secrets it holds as they read in ``whole``."""
    i = whole.find(part)
    return redact_secrets(part if i < 0 else redact_part(whole, i, i + len(part))[0])


def session_rule(raw: str, rule: str) -> Classification | None:
    """A statement that only :mod:`.rules` recognised as a negated directive: a rule for this
    session (``rule`` is its text without fillers); ``None`` when the user asked not to keep it."""
    stmt = raw.strip()
    if not stmt or stmt.endswith("?") or no_store_marker(stmt):
        return None
    return Classification(
        "session_rule", _clean(redact_secrets(stmt)), "constraints", _clean(_redacted_part(stmt, rule)),
        contains_secret=has_secrets(stmt),
        reason="a negated directive: a rule for this session (lasting only if said so)",
    )
