"""The deterministic quality guard: nothing critical leaves a summary silently.

From the compacted events it extracts *critical items* — exact identifiers (paths, URLs, numbers,
ids, versions, code names) and constraints (negated rules and conditions, EN and RU: "do not use
Redis", "never commit to main", "we won't support 3.8", "only for the demo", "не используй",
"нельзя", "только если"...) — and checks that each one appears in the summary. Missing ones are
appended verbatim under their section with their citations and reported as *repaired*. Negations
of chat ("can't wait!", "I don't know", "don't worry") are not constraints and are not forced into
the summary (see :mod:`neotask_tui.engine.language.constraints`). It also computes the *dropped* list shown
by the preview: decisions, asks and open questions of the range that the summary does not cover.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from neotask_tui.engine.compaction.summary import ROLES, Summary, SummaryLine, event_text
from neotask_tui.engine.language.classifier import temporary_markers
from neotask_tui.engine.language.constraints import clauses, constraint_kind, core, is_rule, unlabel
from neotask_tui.engine.language.progress import names_todo, reports_done
from neotask_tui.engine.language.revocation import revocation_cue, strip_cues, strong_cue_at
from neotask_tui.storage.events import Event
from neotask_tui.text.wraps import join_wraps
from neotask_tui.tuning import (
    GUARD_CONSTRAINT_COVERAGE,
    GUARD_INVERSION_OVERLAP,
    GUARD_ITEM_COVERAGE,
    GUARD_RESTATED_SHARE,
    MAX_PROGRESS_ITEMS,
    MAX_TOOL_IDENTIFIERS,
)

MAX_CITES = 6
MAX_IDENTIFIER_CHARS: Final = 256
"""A run of more non-space characters than this is data (a pasted blob, a base64 block), not an
identifier to keep verbatim: it stays in the transcript and is not scanned. Bounding the run is
what keeps :func:`identifiers_in` linear in the length of the text (40k hex chars took 17 s)."""
MAX_IDENTIFIERS: Final = 1000
"""At most this many identifiers per text (the first ones): the substring check among them is
quadratic in their number."""
MAX_SENTENCE_CHARS: Final = 2000
"""A "sentence" longer than this (a paste with no sentence ends, a log, a data dump) is not read
as a rule, decision, question or ask: a user states those in a sentence, not in 2,000 characters
without a full stop. It stays in the transcript; identifiers in it are still kept. Classifying
every such run cost 8.7 s of a 1 MB paste's compaction preview (99 s for 7.8 MB)."""

# An identifier is a whole whitespace-delimited token (its surrounding quotes, brackets and sentence
# punctuation aside) of one of these shapes: "feat/tz-fix" stays whole, never "/tz-fix".
_FILE_EXT = (
    r"py|pyi|js|mjs|ts|tsx|jsx|json|toml|yaml|yml|md|rst|txt|csv|tsv|sql|sh|bash|zsh|rs|go|java|kt|c|h|cpp|hpp|cs"
    r"|rb|php|swift|ini|cfg|conf|env|lock|html|css|scss|tcss|jsonl|log|xml|proto|tf|gz|zip|tar|pdf|png|jpg|svg"
    r"|ipynb|dockerfile|service|db|sqlite|parquet"
)
_L = "A-Za-zА-Яа-яЁё"
_SHAPES = (
    r"(?:https?|ftp|file|ssh|git|wss?|postgres(?:ql)?|redis|mysql|mongodb|s3)://\S+",  # URL
    r"(?:sha(?:1|224|256|384|512)|md5|blake2b|sha3-\d+):[0-9a-fA-F]{16,}",  # content digest
    r"arn:[\w-]+:[\w-]*:[\w-]*:\d*:[\w/.:+=,@*-]+",  # AWS ARN
    r"urn:[\w-]+:[\w.:/%+=,@-]+",  # URN
    r"[A-Za-z]:\\[^\s\\]+(?:\\[^\s\\]+)*\\?|\\\\[^\s\\]+(?:\\[^\s\\]+)+",  # Windows / UNC path
    r"(?=[0-9A-Fa-f:]*\d)(?=[0-9A-Fa-f:]*::|(?:[0-9A-Fa-f]{1,4}:){7})"
    r"(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}",  # IPv6
    r"\$\{?[A-Z_][A-Z0-9_]*\}?(?:/[\w.@%+:-]+)*/?",  # environment variable, with a path after it
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",  # e-mail
    r"[$€£¥₽]\d[\d,.]*(?:[kKmMbB]|\s?[kKmM])?|\d[\d,.]*\s?[$€£¥₽]",  # money
    r"\d[\d,.]*\d%|\d%",  # percentage
    r"(?:~|\.{1,2})?/[\w.@%+:-]+(?:/[\w.@%+:-]+)*/?",  # absolute or home path
    r"[\w.@%+-]+(?:/[\w.@%+:-]+)+/?",  # relative path, branch, A/B pair (filtered below)
    rf"[\w.-]+\.(?:{_FILE_EXT})",  # file name
    r"\.[A-Za-z_][\w-]*(?:\.[\w-]+)*",  # dotfile: .env.staging, .gitignore
    r"v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)*",  # version (semver with pre-release and build), decimal
    r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+(?:\(\))?",  # dotted name (filtered below)
    r"[A-Za-z_]\w*\(\)",  # call
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?",  # date
    r"\d{1,2}:\d{2}(?::\d{2})?",  # time of day
    r"[\w.-]+:\d{2,5}",  # host:port
    r"[#!]\d+|@[A-Za-z][\w-]*(?:\.[\w-]+)*",  # issue / MR number, handle (@nate.smith)
    rf"#[{_L}][\w-]*(?:[-_][\w]+)+|#[{_L}]+\d[\w-]*",  # channel / tag: #ops-alerts, #релизы-прод
    r"[A-Za-z0-9]*_[\w]*[A-Za-z0-9]",  # snake_case, CONSTANT_NAME
    r"[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+",  # camelCase, PascalCase
    r"(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}",  # commit hash
    rf"(?=[\w-]*\d)(?=[\w-]*[{_L}])[{_L}0-9]+(?:[-.][{_L}0-9]+)+",  # build-4471, gpt-4o, узел-сборки-7
    r"(?=[A-Za-z]*\d)(?=\d*[A-Za-z])(?=(?:[^A-Za-z]*[A-Za-z]){2})[A-Za-z0-9]+",  # py311, 8GB, x86
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d{3,}",  # number
)
_TOKEN_SHAPE = re.compile("|".join(f"(?:{p})" for p in _SHAPES))
_TOKEN_RE = re.compile(r"\S+")
_AMOUNT_RE = re.compile(r"(?<![\w.,])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?[ \u00a0]?[₽$€£]"
                        r"|[$€£][ \u00a0]?\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?")
"""An amount written with spaces between its thousands ("1 990 ₽"), kept as one identifier."""
_LEAD = "\"'`([{<«“‘„*_"
_TRAIL = "\"'`)]}>»”’*_.,;:!?…"
_ABBREV = re.compile(r"^(?:[A-Za-zА-Яа-яЁё]{1,3}\.){1,3}[A-Za-zА-Яа-яЁё]{0,3}\.?$")
"""e.g, i.e., a.m., U.S., т.е., и.т.д: abbreviations, never identifiers."""
_ORDINAL = re.compile(
    r"^\d+(?:st|nd|rd|th|am|pm|s|x|h|m|d|y|yr|yrs|k)$"
    r"|^\d+-?(?:й|я|е|го|му|м|х|ми|ю|ое|ая|ый|ий|ой|ого|ому|ых|ым|ти|ми|ть|ух|ёх|ex)$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"^(?:1[89]|20)\d\d(?:s|'s)?$")
_PLAIN_PAIR = re.compile(r"^[A-Za-zА-Яа-яЁё]+(?:/[A-Za-zА-Яа-яЁё]+)+$")
_PATH_CUE = re.compile(
    r"^(?:in|at|from|under|into|to|inside|folder|directory|dir|path|repo|branch|file|module|package|папк[аеуи]"
    r"|каталог[еау]?|директори[июя]|файл[еа]?|ветк[аеуи]|модул[ьея]|пакет[еа]?|репозитори[йияю]|в|из|во)$",
    re.IGNORECASE,
)
"""A word after which "db/migrations" is a path, not a pair of words like "and/or"."""
_COMMON_WORDS = (
    "a an the and or but of to in on at by for with from as is are was were be it this that so if then "
    "not no yes do does did e.g i.e etc vs via per eg ie aka и в на с к по а но что это или не да нет"
)
_COMMON = frozenset(_COMMON_WORDS.split())
_COMPOUND = re.compile(r"[a-z]{2,}(?:-[a-z]{2,})+")
"""Lowercase words joined by hyphens: how buckets, hosts, crons and services are named ("nightly-ledger",
"acme-ledger-archive"), and how English joins words ("well-known", "follow-up")."""
_ENGLISH_HEADS = (
    "well ill self non co re pre post anti multi semi sub half so all ever never much long short high low full "
    "open real brand first second third one two three"
)
_ENGLISH_TAILS = (
    "up down in on off out over back by away after only based like free wide level time term known made related "
    "specific friendly safe aware driven oriented style sized scale quality class grade hand way run running "
    "looking minded ready proof"
)
_ENGLISH_HEAD = frozenset(_ENGLISH_HEADS.split())
_ENGLISH_TAIL = frozenset(_ENGLISH_TAILS.split())
"""First and last words of English compounds ("well-known", "self-hosted", "long-term", "read-only",
"follow-up", "built-in"): a compound with one of them is a word, not a name. "e-mail" and "x-ray" have a
one-letter part and are no :data:`_COMPOUND`."""
_MORE_FUNCTION_WORDS = "you your me my we us our after"
_FUNCTION_WORDS = _COMMON | frozenset(_MORE_FUNCTION_WORDS.split())
_NAME_CUE = re.compile(
    r"^(?:cron|cronjob|job|bucket|host|hostname|server|cluster|database|db|service|queue|topic|table|branch|repo"
    r"|repository|namespace|pod|deployment|instance|node|project|workspace|pipeline|container|image|volume|index"
    r"|schema|stack|function|lambda|worker|tenant|account|channel|env|environment|named|called"
    r"|крон|бакет|хост|сервер|кластер|сервис|базу?|ветк[аеуи]|джоб[аеуы]?|проект|очередь)$",
    re.IGNORECASE,
)
"""A word after which a lowercase hyphenated compound is a name: "the billing cron nightly-ledger"."""


def _english_compound(tok: str) -> bool:
    """Whether a :data:`_COMPOUND` joins English words as English does: with a function word
    ("up-to-date", "state-of-the-art") or an English compound's first or last word ("well-known",
    "long-term", "read-only", "follow-up")."""
    parts = tok.split("-")
    return parts[0] in _ENGLISH_HEAD or parts[-1] in _ENGLISH_TAIL or any(p in _FUNCTION_WORDS for p in parts)


def _names_compound(tok: str, before: str = "") -> bool:
    """Whether ``tok``, lowercase words joined by hyphens (:data:`_COMPOUND`), is a name: not an
    English compound (:func:`_english_compound`), and either three words or more ("acme-ledger-archive")
    or after a word that announces a name ("cron nightly-ledger", "bucket cold-archive"). A name with a
    digit ("pg-prod-7") has a shape of its own."""
    if not _COMPOUND.fullmatch(tok) or _english_compound(tok):
        return False
    return tok.count("-") >= 2 or bool(_NAME_CUE.match(before))


def _whole(raw: str) -> str:
    """A token without the quotes, brackets and sentence punctuation around it (``make_app()`` keeps
    its call parentheses, ``https://x.io/a_(b)`` its balanced ones)."""
    tok = raw.lstrip(_LEAD)
    while tok and tok[-1] in _TRAIL:
        if tok.endswith("()") or (tok[-1] == ")" and tok.count("(") >= tok.count(")")):
            break
        tok = tok[:-1]
    return tok


def _is_identifier(tok: str, before: str = "") -> bool:
    """Whether a whole token has an identifier's shape and is not an abbreviation, a common word, an
    ordinal, a bare year or a pair of plain words ("and/or", "client/server"; after a word such as
    "in" or "folder", "db/migrations" is a path). A lowercase hyphenated name is one too when it is
    clearly a name (:func:`_names_compound`: "cron nightly-ledger", "acme-ledger-archive")."""
    if len(tok) < 2 or tok.lower() in _COMMON or _ABBREV.match(tok) or _ORDINAL.match(tok) or _YEAR.match(tok):
        return False
    if _names_compound(tok, before):
        return True
    if not _TOKEN_SHAPE.fullmatch(tok):
        return False
    if _PLAIN_PAIR.match(tok):  # LISTEN/NOTIFY and TCP/IP are names; and/or, yes/no are words
        parts = tok.split("/")
        return all(p.isupper() and len(p) > 1 for p in parts) or bool(_PATH_CUE.match(before)) or len(parts) > 2
    if "/" not in tok and "\\" not in tok and "." in tok and not any(c.isdigit() for c in tok) and "_" not in tok \
            and "(" not in tok:
        # a dotted name: only code (``os.path``, ``Node.js``, ``config.toml``), not "end.Then" typos
        parts = tok.split(".")
        return all(p and (p[0].islower() or p[0] == "_") for p in parts[1:]) and len(parts[-1]) > 1
    return len(tok) >= 3 or tok[0] in "$€£¥₽#!@" or tok.endswith("%")


_BACKTICK_RE = re.compile(r"`([^`\n]{1,120})`")
_LONG_RUN_RE = re.compile(rf"(?<!\S)\S{{{MAX_IDENTIFIER_CHARS + 1},}}")

_NEG_EN = (
    r"\bdo not\b|\bdon'?t\b|\bdoesn'?t\b|\bnever\b|\bmust not\b|\bmustn'?t\b|\bshould not\b|\bshouldn'?t\b"
    r"|\bcannot\b|\bcan'?t\b|\bwon'?t\b|\bnot allowed\b|\bavoid\b|\bno longer\b|\bwithout\b|\bdo NOT\b"
)
_NEG_RU = r"(?<!\w)(?:не|нельзя|никогда|ни в коем случае|запрещено|без|избегай|нет)(?!\w)"
_COND = (
    r"\bonly\b|\bunless\b|\bexcept\b|\buntil\b|\btill\b|(?<!\w)пока(?!\w)"
    r"|(?<!\w)только(?!\w)|(?<!\w)кроме(?!\w)|(?<!\w)если(?!\w)|(?<!\w)лишь(?!\w)"
)
NEGATION_RE = re.compile(f"{_NEG_EN}|{_NEG_RU}", re.IGNORECASE)
"""Any negation marker (broad: also "can't wait"). Used to check that a summary line restating a
negated constraint still carries a negation; which sentences *are* constraints is decided by
:func:`~neotask_tui.engine.language.constraints.constraint_kind`."""
CONDITION_RE = re.compile(_COND, re.IGNORECASE)
DECISION_RE = re.compile(
    r"\blet['’]s\b|^lets\b|\bwe['’]ll\b|\bwe will\b|\bdecided\b|(?<!keep )(?<!keeps )\bgo(?:ing)? with\b"
    r"|\b(?:we|i)(?:['’]ve| have)?\s+agreed\b|\bagreed (?:to|on|upon|that)\b"
    r"|\b(?:we|i)(?:['’]ve| have)?\s+(?:(?:finally|just|already)\s+)?(?:chose|chosen|picked)\b|\bchose to\b"
    r"|\bswitch(?:ed)? to\b|\bsettled on\b|\bplan is\b"
    r"|(?<!\w)давай|(?<!\w)решил|(?<!\w)будем(?!\w)|(?<!\w)выбрал|(?<!\w)остановимся",
    re.IGNORECASE,
)
"""A decision's form: "let's", "we'll", "we decided", "go with", "we agreed", "we chose". Not "well"
(the apostrophe is required), nor somebody else's past choice ("I love that you chose pottery"), nor
"I can't decide", nor "keep going with your dreams"; see :func:`is_decision` for what else is not."""
_NOT_DECIDED = re.compile(
    r"\b(?:not|never|yet to|haven'?t|hasn'?t|didn'?t|can'?t|cannot|couldn'?t)\s+(?:\w+\s+)?(?:decided?|chosen"
    r"|chose|picked|agreed|settled)\b|\bundecided\b|(?<!\w)не\s+(?:решил\w*|выбрал\w*)",
    re.IGNORECASE,
)
_EXHORTATION = re.compile(
    r"(?:let['’]?s|we['’]ll|we will)\s+(?:(?:just|all|definitely|totally|both)\s+)?(?:"
    r"keep\s+(?:on\s+)?(?:\w+ing\b|it up|at it|each other|in touch|the faith)"
    r"|stay\s+(?:in touch|positive|strong|safe|connected|motivated|focused|tuned)"
    r"|do\s+(?:it|this|that)(?=\s*(?:[!.,;]|$))|make\s+(?:it|this|that)\s+happen|make a difference"
    r"|get to work|have (?:so much |some |a )?(?:fun|blast|good time|great time)|hope|support each other"
    r"|catch up|hang out|celebrate|go for it|see\b|let you know|get there|be (?:fine|okay|ok|alright)|miss\b"
    r"|talk|figure it out|make (?:\w+ )?(?:\w+ )?memories)",
    re.IGNORECASE,
)


def is_decision(sentence: str, pattern: re.Pattern[str] = DECISION_RE) -> bool:
    """Whether ``sentence`` states a decision: a decision form (``pattern``) that is not negated ("I
    haven't decided yet", "we can't agree on") and not an exhortation of chat ("let's keep going!",
    "let's do it", "we'll make some memories", "we'll let you know")."""
    if _NOT_DECIDED.search(sentence):
        return False
    return any(not _EXHORTATION.match(sentence, m.start()) for m in pattern.finditer(sentence))


_ASSISTANT_DECISION_RE = re.compile(
    r"\bwe['’]ll use\b|\bwe will use\b|\bdecided\b|(?<!keep )(?<!keeps )\bgo(?:ing)? with\b"
    r"|\b(?:we|i)(?:['’]ve| have)?\s+agreed\b|\bagreed (?:to|on|upon|that)\b|\bsettled on\b"
    r"|\bswitch(?:ed|ing)? to\b|(?<!\w)решили|(?<!\w)выбрали|(?<!\w)остановимся",
    re.IGNORECASE,
)
ASK_RE = re.compile(
    r"\bplease\b|\b(?:can|could|would|will) you\b|\bi need you\b|\bi want you\b|\bi['’]d like you\b"
    # polite forms: "It would be great if you could draft …", "I'd love it if you …", "I would like a
    # short summary …" (a thing, not "to <do something>"), "I also need the changelog"
    r"|\b(?:it would|it['’]d) be (?:great|nice|good|helpful|awesome|perfect|ideal) if you\b"
    r"|\bi(?: would|['’]d) (?:love|appreciate) it if you\b"
    r"|\bi(?: would|['’]d) (?:really )?like (?:a|an|the|some|your)\b"
    r"|\bi (?:also |still )?need (?:the|a|an) (?!(?:break|rest|vacation|holiday|nap|minute|moment|hug)\b)"
    r"|(?<!\w)(?:было бы (?:здорово|хорошо|отлично|неплохо|удобно),? если бы ты"
    r"|(?:я\s+)?(?:хочу|хотел(?:а)? бы|бы хотел(?:а)?|хотелось бы),? чтобы ты"
    r"|мне (?:ещё |еще |также |тоже )?нуж(?:ен|на|но|ны) (?![а-яё]+(?:ть|ти|чь)(?![а-яё])))(?!\w)?"
    r"|(?<!\w)(?:пожалуйста|сделай|напиши|добавь|исправь|можешь|можете|обнови|перепиши|проверь|запусти|удали"
    r"|переименуй|покажи|подготовь|настрой|почини|объясни|разберись|посмотри|пингани|пингуй|сообщи|напомни"
    r"|отправь|пришли|задеплой|выкати|перезапусти|пересобери|собери|открой|закрой|создай|дай знать|откати"
    r"|уведоми|позови|опубликуй)(?!\w)",
    re.IGNORECASE,
)
"""A request by its form anywhere in the sentence ("please", "can you", "сделай"); see :func:`is_ask`."""
_ASK_VERB = re.compile(
    r"^(?:make|add|write|fix|implement|create|update|change|remove|delete|rename|refactor|run|check|review"
    r"|explain|show|generate|build|move|test|document|install|set up|convert|find|investigate|debug"
    r"|optimi[sz]e|draft|summari[sz]e|list|replace|migrate|port|split|merge|revert|bump|upgrade|tell me"
    r"|remind me|ping|notify|alert|send|email|message|post|deploy|restart|reboot|rebuild|redeploy|roll ?back"
    r"|restore|back up|start|open|close|tag|release|ship|publish|push|pull|fetch|clone|sync|rotate|reindex"
    r"|benchmark|profile|measure|compare|assume|grant|revoke|provision|scale|schedule"
    r"|finish|complete|verify|configure|enable|disable|prepare"
    # "let me know if you need anything" offers help, asks for nothing
    r"|let (?:me|us) know(?!,? if (?:you|u|ya) (?:ever )?(?:need|want|'d like|would like|have any)\b"
    r"|,? if there(?:'s| is) anything))\b",
    re.IGNORECASE,
)
"""A request by an imperative verb at the start of a clause ("Add a test", "so fix the import")."""
_JOINED = re.compile(r"\s+(?:and|or|и|или)\s+", re.IGNORECASE)
_THEN_ASK = re.compile(r"(?:also|then|afterwards|additionally)\s+(.+)", re.IGNORECASE | re.DOTALL)
_INFO_ASK = re.compile(
    r"\b(?:tell|remind|show|give)\s+(?:me|us)\b|\bexplain\b|\bdescribe\b|(?<!\w)(?:расскажи|объясни|подскажи)",
    re.IGNORECASE,
)
"""An ask for information ("can you tell me why...?"): once answered, it is no longer pending."""
_LOOK_OR_TELL = re.compile(
    r"^(?:(?:yeah|yes|yep|sure|and|so|oh|hey|wow|ok|okay|well|also|here|now)\b[,!]?\s+)*"
    r"(?:check (?:it|this|that|these|those|out (?:this|that|these|those|my|our))\b|(?:take|have) a look\b"
    r"|look at (?:this|that|these|those|it|my|our)\b|tell me (?:more |all |everything )?about\b"
    r"|let me know (?:what you think|how you like|if you like)\b"
    r"|(?:глянь|взгляни|посмотри на (?:это|этот|эту|эти|мой|мою|мои))(?!\w))",
    re.IGNORECASE,
)
"""An ask to look at something shown or to say more ("Check out this piece I made!", "Take a look",
"Tell me more about it!", "Let me know what you think"): a reply that says something fulfils it, so
once answered it is no longer pending either, with or without a question mark."""


def _only_looks(sentence: str) -> bool:
    """Whether ``sentence`` asks only to look or to tell (:data:`_LOOK_OR_TELL`): "Take a look at the
    failing test and fix it" also asks for work."""
    text = core(sentence)
    if not _LOOK_OR_TELL.match(text):
        return False
    rest = _JOINED.split(text)[1:]
    return not any(_ASK_VERB.match(p.strip()) or _THEN_ASK.match(p.strip()) or ASK_RE.search(p) for p in rest)
_UNSURE_RE = re.compile(
    r"\b(?:not (?:sure|certain)|(?:don'?t|do not) know|no idea|can'?t (?:tell|say|answer|find)|cannot (?:tell|say"
    r"|answer|find)|unable to|couldn'?t find|unclear)\b|(?<!\w)(?:не знаю|не уверен\w*|не могу сказать)",
    re.IGNORECASE,
)
"""A reply that says it could not answer: the question stays open."""
ASSUME_RE = re.compile(
    # "assume the role ..." / "assume ownership" is an instruction, not an assumption
    r"\bassum\w*\b(?!\s+(?:the\s+|an?\s+|this\s+|that\s+|my\s+|our\s+)?(?:iam\s+|aws\s+)?(?:role|identity"
    r"|ownership|control|responsibility|command|persona|account|credentials?|duties)\b)"
    r"|\bprobably\b|\bmaybe\b|\bperhaps\b|\bi think\b|\bi guess\b|\bmight\b|\blikely\b"
    r"|\bnot (?:sure|certain)\b|\bunsure\b|\bcould be\b|\bmay be\b|\bi suspect\b|\bi believe\b|\bseems?\b"
    r"|\bpossibly\b|\bunconfirmed\b|\bto be confirmed\b|\btbc\b"
    r"|(?<!\w)(?:возможно|наверное|предполож\w*|кажется|вероятно|может быть|не уверен\w*|похоже|скорее всего"
    r"|видимо|по-моему|не факт)(?!\w)",
    re.IGNORECASE,
)
_NOT_A_GUESS = re.compile(
    # "maybe we can watch a movie" is a suggestion, "I think about it often" a thought, "I might try it"
    # a plan, "I think you'd love it" a recommendation: none is a guess about how things are
    r"\bmaybe,? (?:we|i|you) (?:can|could|should|will|'ll)\b|\bi think (?:about|of)\b"
    r"|\bi think you(?:'d| would|'ll| will) (?:love|like|enjoy)\b|\b(?:i|we) might(?! be\b)",
    re.IGNORECASE,
)
"""Hedge words that make no assumption of a user's sentence when they are all it has (the hedge itself
still counts where a summary must keep one, see :func:`_keep_uncertain`)."""


def _guesses(sentence: str) -> bool:
    """Whether a user's sentence states an assumption: a hedge (:data:`ASSUME_RE`) that is not only
    a suggestion, a plan, a thought or a recommendation (:data:`_NOT_A_GUESS`)."""
    return bool(ASSUME_RE.search(_NOT_A_GUESS.sub(" ", sentence)))


_SENT_RE = re.compile(r"(?<=[.!?…])\s+|\n+")
_WORD_RE = re.compile(r"\w+", re.UNICODE)
_STOP_WORDS = (
    "a an the and or but of to in on at by for with from as is are was were be it this that i you we "
    "me my your our it's its so if then please и в на с к по а но что это я ты мы вы"
)
_STOP = frozenset(_STOP_WORDS.split())


@dataclass(slots=True)
class CriticalItem:
    """Something the summary must keep (or should, budget permitting).

    Attributes:
        kind: ``identifier``, ``constraint``, ``decision``, ``ask``, ``todo``, ``done``, ``question``,
            ``assumption``, ``goal`` (the current goal) or ``request`` (the latest user request).
        text: The verbatim text (the identifier, or the sentence).
        cites: Event ids where it occurs (first :data:`MAX_CITES`).
        who: Who said it: ``user``, ``assistant``, ``tool`` or ``system``.
        superseded_by: Id of the later event that revoked it, if one did.
    """

    kind: str
    text: str
    cites: list[int] = field(default_factory=list)
    who: str = "user"
    superseded_by: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (stored in the compaction record's ``repaired`` list)."""
        out: dict[str, Any] = {"kind": self.kind, "text": self.text, "cites": list(self.cites), "who": self.who}
        if self.superseded_by is not None:
            out["superseded_by"] = self.superseded_by
        return out


SECTION_OF = {
    "identifier": "Exact identifiers",
    "constraint": "Constraints and rules",
    "decision": "Decisions",
    "ask": "Still to do",
    "todo": "Still to do",
    "done": "Done",
    "question": "Open questions",
    "assumption": "Assumptions",
    "goal": "Current goal",
    "request": "Latest user request",
}


def role_of(ev: Event) -> str:
    """Who an event comes from: ``tool`` for tool calls and results, else the message's role."""
    if ev.type in ("tool_call", "tool_result"):
        return "tool"
    return ev.role if ev.role in ("user", "assistant", "system") else "user"


def sentences(text: str) -> list[str]:
    """Split text into trimmed sentences (code fences are skipped; a line break inside a sentence is
    no end: :func:`~neotask_tui.text.wraps.join_wraps`)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    return [s.strip(" \t-*•>") for s in _SENT_RE.split(join_wraps(text)) if len(s.strip()) > 2]


def words(text: str) -> set[str]:
    """Lowercase content words (stop words removed) for fuzzy coverage checks."""
    return {w for w in _WORD_RE.findall(text.lower()) if w not in _STOP and len(w) > 1}


def is_ask(sentence: str) -> bool:
    """Whether ``sentence`` asks for something: a request form ("please", "can you", "сделай") or an
    imperative verb starting one of its clauses ("Add a test", "so fix the import"). "Those friends
    make everything worth it" is not an ask: the verb must lead its clause. A clause joined by
    "and"/"or" shares the subject of the one before it, so it is not a new imperative: "it's a great
    way to grow and show your love", "I'm lucky to have you to remind me" ask nothing."""
    if ASK_RE.search(sentence):
        return True
    head, *rest = _JOINED.split(unlabel(sentence))
    candidates = clauses(head) + [c for part in rest for c in clauses(part)[1:]]
    # "…, and also add a rollback section", "… and then run the tests": a new imperative after all
    candidates += [m.group(1) for part in rest if (m := _THEN_ASK.match(part))]
    return any(_ASK_VERB.match(c) for c in candidates)


def identifiers_in(text: str) -> list[str]:
    """Exact identifiers in ``text``: whole tokens of an identifier's shape (paths, branches, URLs,
    e-mails, amounts, numbers, ids, versions, code names) and short backticked spans, in order of
    appearance, unique. Abbreviations ("e.g"), common words, ordinals and bare years are not
    identifiers; a token longer than :data:`MAX_IDENTIFIER_CHARS` is data, not scanned."""
    found: list[str] = []
    for m in _BACKTICK_RE.finditer(text):
        span = m.group(1).strip()
        if span and span.lower() not in _COMMON and not _ABBREV.match(span) and (
            " " not in span or _TOKEN_SHAPE.search(span)
        ):
            found.append(span)
    stripped = _LONG_RUN_RE.sub(" ", _BACKTICK_RE.sub(" ", text))
    for m in _AMOUNT_RE.finditer(stripped):
        found.append(m.group(0).strip())
    stripped = _AMOUNT_RE.sub(" ", stripped)
    before = ""
    for m in _TOKEN_RE.finditer(stripped):
        raw = m.group(0)
        # NAME=value (an environment variable, a config line): the name and the value are each one
        parts = raw.split("=") if "=" in raw and "://" not in raw and "==" not in raw else [raw]
        for part in parts:
            tok = _whole(part)
            if _is_identifier(tok, before):
                found.append(tok)
            before = tok
    seen: set[str] = set()
    out: list[str] = []
    for tok in found:
        if tok and tok not in seen:
            seen.add(tok)
            out.append(tok)
            if len(out) >= MAX_IDENTIFIERS:
                break
    return out


def _merge(
    items: dict[tuple[str, str], CriticalItem], kind: str, text: str, eid: int, who: str = "user"
) -> CriticalItem:
    key = (kind, text)
    item = items.get(key)
    if item is None:
        item = items[key] = CriticalItem(kind, text, [eid], who)
    elif eid not in item.cites and len(item.cites) < MAX_CITES:
        item.cites.append(eid)
    return item


def _answered(events: Sequence[Event], i: int) -> bool:
    """Whether the user message ``events[i]`` got an answer in the range: the next assistant message
    (after any further user messages and tool calls) is complete, says something besides questions
    back ("Which one do you mean?") and does not say it cannot answer ("I'm not sure", "не знаю")."""
    for ev in events[i + 1:]:
        if ev.type != "message" or ev.role != "assistant":
            continue
        if ev.data.get("status", "complete") != "complete" or _UNSURE_RE.search(ev.content):
            return False
        return any(not s.endswith("?") for s in sentences(ev.content))
    return False


_ASKS_YOU = r"(?!\s+(?:you|u|ya)\b)"
"""After "I need"/"I want": "I need you to check the lag" asks for something; it states no goal."""
_ASKS_YOU_RU = r"(?!,?\s+(?:чтобы|что\s?бы)\s+(?:ты|вы)(?!\w))"
_TELLS = (r"(?:(?:tell|show|ask|thank|give|send|remind|let)\s+(?:you|u|ya)\b|(?:say|hear)\b"
          r"|(?:share|talk|chat)\s+(?:\w+\s+)?(?:with|to)\s+(?:you|u|ya)\b)")
_TELLS_YOU = rf"(?!\s+to\s+{_TELLS})"
_TO_TELL_YOU = rf"(?!\s+{_TELLS})"
"""After "I want"/"I'd like": "There's something I want to tell you", "I'd like to thank you" say
what comes next in the conversation, not what the user works on."""
GOAL_RE = re.compile(
    rf"\bi want\b{_ASKS_YOU}{_TELLS_YOU}|(?<!\bif )\bi need\b{_ASKS_YOU}|\bmy goal\b|\bthe goal\b|\bour goal\b"
    rf"|\bwe need\b{_ASKS_YOU}"
    r"|\bi(?:'m| am) trying to\b|\bwe(?:'re| are) trying to\b"
    # "your support will help me make it happen" is no request for help
    r"|(?<!\bwill )(?<!\bwould )(?<!'ll )(?<!\bcould )(?<!\bmight )\bhelp me\b"
    r"|\b(?:i'm|i am|we're|we are) working on\b"
    r"|\bthe task is\b"
    r"|\bmy task\b|\bnow (?:let's|we|i) (?:work on|focus on|move on to|switch to|turn to)\b|\bnext task\b"
    rf"|\bnew goal\b|\bmain goal\b|\bi'd like to\b{_TO_TELL_YOU}|\bi would like to\b{_TO_TELL_YOU}"
    rf"|(?<!\w)(?:я хочу|хочу|мне нужно|нам нужно)(?!\w){_ASKS_YOU_RU}"
    r"|(?<!\w)(?:цель|задача|помоги|работаю над|работаем над|займёмся|займемся|переключимся на)(?!\w)",
    re.IGNORECASE,
)
"""A sentence stating what the user is working on ("I want to...", "my goal is...", "нужно...")."""
_IF = re.compile(r"(?:if|when|whenever|unless|если|когда)\b", re.IGNORECASE)
_CHOICE_VERB = re.compile(
    r"\bgo(?:ing)? with\b|\b(?:chose|chosen|picked|decided|settled on|switch(?:ed)? to|agreed on|opt(?:ed)? for)\b"
    r"|(?<!\w)(?:выбрал\w*|выбираем|решил\w*|остановимся|берём|берем|переходим на)(?!\w)",
    re.IGNORECASE,
)
"""A decision by its verb: a sentence with it is a decision even when it also holds a negation."""
_GENERIC_WORDS = (
    "let lets s go going goes use using used ll will we now then that this it do make take our us also "
    "one just really давай давайте будем используем используй используйте берём берем это то мы "
    # a negation or a modal says no topic: "не стоит менять схему" and "лучше не трогай миграции" share none
    "не ни not never don dont doesn didn won никогда стоит лучше better should shouldn must"
)
_GENERIC = frozenset(_GENERIC_WORDS.split())
REVOCABLE = frozenset(("decision", "constraint", "goal", "ask", "todo", "assumption"))
"""Kinds a later statement can revoke."""


def _topic(text: str) -> set[str]:
    return words(strip_cues(text)) - _GENERIC


def supersede(prior: Sequence[CriticalItem], new: Sequence[CriticalItem], text: str, eid: int) -> CriticalItem | None:
    """Mark the earlier statement the user message ``eid`` (``text``, with items ``new``) revokes.

    A message revokes only when it has a cue (:func:`~neotask_tui.engine.language.revocation.revocation_cue`).
    Its target is the latest earlier user statement of a revocable kind sharing the most topic words
    with what the message now says (a negation or a modal is no topic word: "лучше не трогай миграции"
    shares nothing with "не стоит менять схему", it takes no rule back; after a weak cue a prohibition
    takes no other prohibition back: it adds one); with a strong cue ("scrap that",
    "передумал") and no shared word, the user's statement just before. A strong cue also takes back the
    assistant's proposal when that is the statement just before (:func:`_proposals_just_before`):
    "Actually, scrap that, we use SQLite" answers the reply that suggested PostgreSQL. Returns the revoked
    item (its ``superseded_by`` set): the user's statement, else the proposal.
    """
    # A question takes nothing back: "Any more paintings coming up?", "Are you no longer on Redis?"
    cue = revocation_cue(" ".join(x for x in sentences(text) if not x.endswith("?")))
    if cue is None:
        return None
    at = strong_cue_at(text)
    # "We use MySQL. Scrap that.": a statement of the message itself before the cue is nearer
    own = at is not None and any(n.kind in REVOCABLE and 0 <= text.find(n.text) < at for n in new)
    answered = _proposals_just_before(prior, eid) if at is not None and not own else []
    for p in answered:
        p.superseded_by = eid
    open_ = [p for p in prior if p.kind in REVOCABLE and p.who != "assistant" and p.superseded_by is None
             and eid not in p.cites]
    if not open_:
        return answered[0] if answered else None
    said = " ".join(n.text for n in new if n.kind != "identifier") or text
    topic = _topic(said)
    best: CriticalItem | None = None
    # A take-back revokes the latest *decision* (or rule, ask...) on the topic; the goal only when
    # no other statement is a candidate: "scrap that, use SQLite instead of PostgreSQL" revokes
    # "we decided to use PostgreSQL 15", not the goal "migrate the billing database to PostgreSQL".
    if cue != "strong" and constraint_kind(strip_cues(said)) == "negation":
        # A weak cue before a prohibition adds one: "лучше не лезь в схему биллинга" after "не стоит менять
        # схему" is a second rule, not a take-back of the first (red team 40); "Лучше не трогай схему"
        # still takes back "давай поменяем схему", which forbade nothing.
        open_ = [p for p in open_ if constraint_kind(p.text) != "negation"]
    statements = [p for p in open_ if p.kind != "goal"]
    for pool in (statements, [p for p in open_ if p.kind == "goal"]):
        best_score = 0
        for p in reversed(pool):  # newest first: ties go to the latest statement
            score = len(topic & _topic(p.text))
            if score > best_score:
                best, best_score = p, score
        if best is not None:
            break
    if best is None and cue == "strong":
        for pool in (statements, open_):
            if not pool:
                continue
            last = max(max(p.cites) for p in pool)
            best = next((p for p in reversed(pool) if max(p.cites) == last and p.kind != "assumption"), None)
            if best is not None:
                break
    if best is not None:
        best.superseded_by = eid
        # The assistant's proposals built on the revoked statement go with it.
        was = _topic(best.text)
        for p in prior:
            if p.who == "assistant" and p.kind == "decision" and p.superseded_by is None and (
                min(p.cites) > min(best.cites) and max(p.cites) < eid and was & _topic(p.text)
            ):
                p.superseded_by = eid
    return best if best is not None or not answered else answered[0]


def _proposals_just_before(prior: Sequence[CriticalItem], eid: int) -> list[CriticalItem]:
    """The assistant's open proposals (decisions) of the latest event before ``eid`` that holds a
    revocable statement, when that event is the assistant's: what a "scrap that" right after them
    refers to. None when the user's own statement is nearer ("We use MySQL. … Scrap that.")."""
    stated = [p for p in prior if p.kind in REVOCABLE and p.kind != "goal" and p.cites and eid not in p.cites
              and max(p.cites) < eid]
    if not stated:
        return []
    last = max(max(p.cites) for p in stated)
    there = [p for p in stated if max(p.cites) == last]
    if any(p.who != "assistant" for p in there):
        return []
    return [p for p in there if p.kind == "decision" and p.superseded_by is None]


def _classify(sentence: str, role: str) -> str | None:
    """The kind of one user sentence (``None``: nothing to keep)."""
    if sentence.endswith("?"):
        if _POLITE_NOT.search(sentence):
            return "constraint"  # "Could you not use pandas?": a rule asked politely
        return "ask" if is_ask(sentence) else "question"
    if constraint_kind(sentence) or is_rule(sentence):
        if is_decision(sentence) and _CHOICE_VERB.search(sentence):
            return "decision"
        return "constraint"
    if _guesses(sentence):
        return "assumption"
    if is_decision(sentence):
        return "decision"
    if names_todo(sentence):
        return "todo"
    if reports_done(sentence) and not _WOULD.search(sentence):
        return "done"
    if is_ask(sentence):
        return "ask"
    return None


_WOULD = re.compile(r"(?<!\w)(?:бы|чтобы)(?!\w)|\bif you (?:could|would)\b|\bwould have\b", re.IGNORECASE)
"""The conditional: "было бы здорово, если бы ты написал …" reports no work done."""


_REQUEST_KINDS = frozenset(("ask", "question", "todo"))
# A rule that starts by forbidding ("Please do not rename …", "Не трогай …") asks for no work; one that
# asks for work and sets its limit ("Please write the runbook and keep it under 20 lines") is a request too.
_FORBIDS = re.compile(r"(?i)^\W*(?:(?:please|pls|пожалуйста)\W+)?(?:do\s+not|don['’]t|never|avoid|refrain"
                      r"|hands\s+off|keep\s+away|stop|no\s|не\s|никогда|нельзя|без\s|хватит|перестань)")


_AFTER_FORBID = re.compile(r",?\s+(?:and|but|и|но|а)\s+", re.IGNORECASE)
_ASK_LEAD = re.compile(r"(?:also|please|then|make sure (?:to|you)|be sure to|пожалуйста,?|ещё|еще|также)\s+",
                       re.IGNORECASE)
_POLITE_NOT = re.compile(r"\b(?:can|could|would|will) you (?:please )?not\b|(?<!\w)(?:можешь|могли бы|мог бы) не(?!\w)",
                         re.IGNORECASE)


def _asks_for_work(sentence: str, kind: str | None) -> bool:
    """Whether a user sentence of ``kind`` belongs in the latest request: a request, or a rule that
    also asks for work ("Keep it under 20 lines, and also add a rollback section"; "Never use global
    state, and make sure to add docstrings": after the prohibition, a clause of its own asks)."""
    if kind in _REQUEST_KINDS:
        return True
    if kind != "constraint":
        return False
    text = unlabel(sentence)
    if _POLITE_NOT.search(text):
        return False  # "Could you not use pandas?": a rule, asked politely
    if not _FORBIDS.match(text):
        return is_ask(sentence)
    parts = _AFTER_FORBID.split(text, maxsplit=1)
    if len(parts) < 2:
        return False
    lead = _ASK_LEAD.match(parts[1])
    rest = parts[1][lead.end():] if lead else parts[1]
    return bool(_ASK_VERB.match(rest) or ASK_RE.match(parts[1]) or (lead is not None and is_ask(rest)))


def extract_items(events: Sequence[Event]) -> list[CriticalItem]:
    """All critical and notable items of a range of events: identifiers first (the user's, then the
    tools'), then the rest in order of first appearance.

    Identifiers come from what the user said and from tool calls and results (the first
    :data:`MAX_TOOL_IDENTIFIERS` of each result); one only the assistant produced is no fact and no
    item (the archived transcript keeps it). Constraints, decisions, asks, to-dos, done work and
    assumptions come from what the user said; decisions also from assistant messages that state one
    ("we'll use ..."), kept as the assistant's proposals, and done work also from assistant reports
    that settle a user's ask. A question the assistant's reply answered is not an open question.
    A user message that takes back an earlier statement (:func:`supersede`) marks it superseded.
    The ``goal`` item is the latest goal the user stated; the ``request`` item is the user's latest
    request, verbatim.
    """
    items: dict[tuple[str, str], CriticalItem] = {}
    said: list[CriticalItem] = []  # the user's statements, in order (for revocations)
    goals: list[CriticalItem] = []
    reports: list[CriticalItem] = []  # the assistant's reports of done work
    request: CriticalItem | None = None
    for i, ev in enumerate(events):
        if ev.type not in {"message", "tool_call", "tool_result"}:
            continue
        who = role_of(ev)
        text = event_text(ev)
        if who != "assistant":
            idents = identifiers_in(text)
            if ev.type == "tool_result":
                idents = idents[:MAX_TOOL_IDENTIFIERS]
            for ident in idents:
                _merge(items, "identifier", ident, ev.id, who)
        if ev.type != "message":
            continue
        answered: bool | None = None
        mine: list[CriticalItem] = []
        asked: list[str] = []
        for s in sentences(text):
            if len(s) > MAX_SENTENCE_CHARS:
                continue
            if who == "assistant":
                if s.endswith("?") or ASSUME_RE.search(s):
                    continue
                if is_decision(s, _ASSISTANT_DECISION_RE):
                    said.append(_merge(items, "decision", s, ev.id, who))
                elif reports_done(s):
                    reports.append(CriticalItem("done", s, [ev.id], who))
                continue
            kind = _classify(s, who)
            if kind in ("question", "ask") and ((s.endswith("?") and (kind == "question" or _INFO_ASK.search(s)))
                                                or (kind == "ask" and _only_looks(s))):
                answered = _answered(events, i) if answered is None else answered
                if answered:
                    if who == "user":
                        asked.append(s)  # still what the user asked last, when it is the latest
                    continue  # the reply answered it: not an open question
            if GOAL_RE.search(s) and not (s.endswith("?") or reports_done(s) or _IF.match(unlabel(s))):
                goal = CriticalItem("goal", s, [ev.id], who)
                goals.append(goal)
                mine.append(goal)
            if kind is None:
                continue
            mine.append(_merge(items, kind, s, ev.id, who))
            if _asks_for_work(s, kind):
                asked.append(s)
        # Only the user takes a statement back: an assistant's "actually, scrap that" (or its echo of
        # the user's words) revokes nothing of theirs.
        revoked = supersede(said + goals, mine, text, ev.id) if who == "user" else None
        if revoked is not None and not any(m.kind in ("decision", "constraint") for m in mine):
            # What replaces the revoked statement is the user's new decision, whatever its form.
            said_now = [x for x in sentences(text) if _topic(x) and len(x) <= MAX_SENTENCE_CHARS
                        and not x.endswith("?")]
            # the sentence that takes back ("I actually started on a book"), not a greeting before it
            now = next((x for x in said_now if revocation_cue(x)), said_now[0] if said_now else None)
            if now is not None:
                mine.append(_merge(items, "decision", now, ev.id, who))
        said.extend(m for m in mine if m.kind != "goal")
        if asked and who == "user":
            request = CriticalItem("request", _clip(" ".join(asked)), [ev.id], who)
    _settle(said, [*said, *reports], items)
    out = [i for i in items.values() if i.kind == "identifier" and i.who != "tool"]
    out += [i for i in items.values() if i.kind == "identifier" and i.who == "tool"]
    progress = [i for i in items.values() if i.kind in ("done", "todo")]
    older = {id(i) for i in progress[:-MAX_PROGRESS_ITEMS]} if len(progress) > MAX_PROGRESS_ITEMS else set()
    out += [i for i in items.values() if i.kind != "identifier" and id(i) not in older and not (
        i.superseded_by is not None and i.kind in ("ask", "todo", "question"))]
    current = next((g for g in reversed(goals) if g.superseded_by is None), None)
    if current is not None:
        out.append(current)
    if request is not None and request.superseded_by is None:
        out.append(request)
    return out


def _settle(said: list[CriticalItem], done: list[CriticalItem], items: dict[tuple[str, str], CriticalItem]) -> None:
    """Asks and to-dos a later report of done work covers are done: they leave the open items, and
    an assistant's report that settles one is kept (as the assistant's)."""
    for task in [t for t in said if t.kind in ("ask", "todo")]:
        want = _topic(task.text)
        if not want:
            continue
        for rep in done:
            if rep.kind != "done" or min(rep.cites) <= max(task.cites):
                continue
            if _shares(want, _topic(rep.text)):
                items.pop((task.kind, task.text), None)
                if rep.who != "user":
                    _merge(items, "done", rep.text, rep.cites[0], rep.who)
                break


_MAX_LINE_CHARS = 400


def _clip(s: str) -> str:
    return s if len(s) <= _MAX_LINE_CHARS else s[: _MAX_LINE_CHARS - 1] + "…"


def _norm(s: str) -> str:
    return " ".join(s.lower().split()).strip(" .!?;:")


def _marker_ok(item: CriticalItem, line: str) -> bool:
    """A line restating a constraint keeps its kind of marker: a negation, a condition, a period."""
    kind = constraint_kind(item.text)
    if kind == "temporary":
        return bool(temporary_markers(line))
    return bool(NEGATION_RE.search(line) or CONDITION_RE.search(line))


def covers(summary_text: str, item: CriticalItem) -> bool:
    """Whether the summary keeps ``item``.

    Identifiers must appear character for character, and so must a negated constraint (a leading
    "please" or speaker label aside): "you should avoid Redis" does not keep "Do not use Redis."
    A condition or a time limit is covered by a verbatim copy or by one line that keeps its marker
    *and* at least 70% of its content words. The latest request is copied verbatim. Other items need
    60% of their words on one line.
    """
    if item.kind == "identifier":
        return item.text in summary_text
    if _norm(item.text) in _norm(summary_text):
        return True
    if item.kind == "request":
        return False
    if item.kind in ("constraint", "decision") and constraint_kind(item.text) == "negation":
        return _norm(core(item.text)) in _norm(summary_text)
    want = words(item.text.removeprefix("assistant: "))
    if not want:
        return True
    need_marker = item.kind in ("constraint", "decision") and constraint_kind(item.text) is not None
    ratio = GUARD_CONSTRAINT_COVERAGE if item.kind == "constraint" else GUARD_ITEM_COVERAGE
    for line in summary_text.splitlines():
        if need_marker and not _marker_ok(item, line):
            continue
        if len(want & words(line)) >= ratio * len(want):
            return True
    return False


def is_required(item: CriticalItem) -> bool:
    """Items the guard enforces: identifiers, negated/conditional/temporary constraints (not chatty
    negations), the current goal, the latest request, and the latest reports of work done or still
    to do (:data:`~neotask_tui.tuning.MAX_PROGRESS_ITEMS`)."""
    if item.kind in ("identifier", "goal", "request", "done", "todo"):
        return True
    return item.kind in ("constraint", "decision") and constraint_kind(item.text) is not None


@dataclass(slots=True)
class GuardReport:
    """What the guard found.

    Attributes:
        repaired: Required items the summary lacked and that were appended, plus what it changed in
            the summary's own lines: lines removed because they inverted a negation or dropped a
            condition (kind ``inverted``), lines marked superseded (``superseded``), moved to the
            assumptions (``uncertain``), re-attributed to their speaker (``role``), identifiers
            no user or tool gave (``unsourced``), and work reported done on a request alone
            (``unsupported done``); :data:`CHANGES` names them all.
        dropped: Notable items (decisions, asks, questions, other rules) still not covered.
    """

    repaired: list[CriticalItem] = field(default_factory=list)
    dropped: list[CriticalItem] = field(default_factory=list)


def _inverts(line: SummaryLine, item: CriticalItem) -> bool:
    """A line that restates a constraint without its marker: "use Redis" for "never use Redis",
    "listen on port 8080" for "only for the demo, listen on port 8080"."""
    if line.repaired or _marker_ok(item, line.text) or line.section == "Exact identifiers":
        return False  # an identifier states nothing to invert
    if _squashed(item.text) in _squashed(line.text):
        return False  # the rule itself, word for word, whatever its marker looks like ("keep it under 20 lines")
    if constraint_kind(item.text) == "negation" and not NEGATION_RE.search(item.text):
        return False  # "avoid X" restated as "X" is caught by coverage, not here
    want = words(NEGATION_RE.sub(" ", CONDITION_RE.sub(" ", item.text))) - words(" ".join(temporary_markers(item.text)))
    if len(want) < 2:
        return False
    said = words(line.text)
    overlap = len(want & said) >= GUARD_INVERSION_OVERLAP * len(want)
    if overlap and len(said) <= 2 * len(want):
        return True
    if said and set(line.cites) & set(item.cites) and _only_words_of(said, words(item.text)):
        return True  # the rule's own message, some of its words and nothing else: "abort the copy" of "if …, abort it"
    # A part of the rule without its marker ("disable auth" of "only for the demo, disable auth").
    return len(said) >= 2 and len(said & want) >= GUARD_RESTATED_SHARE * len(said) and 2 * len(said & want) >= len(want)


def _only_words_of(said: set[str], rule: set[str]) -> bool:
    """Whether every word of ``said`` is a word of ``rule`` (or shares its first five letters with one:
    "остановить" and "останови", "aborting" and "abort")."""
    stems = {w[:5] for w in rule if len(w) >= 5}
    return all(w in rule or (len(w) >= 5 and w[:5] in stems) for w in said)


def _squashed(text: str) -> str:
    """``text`` casefolded, its words only (for a word-for-word comparison)."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def _overlap(a: str, b: str) -> float:
    want = _topic(a)
    return len(want & _topic(b)) / len(want) if want else 0.0


def _sources(line: SummaryLine, said: dict[int, str]) -> list[int]:
    """The line's citations that say what it says: of several, those of the messages that hold an
    identifier the line names (any of the line's words when it names none); all of them when none
    does. A draft citing the user's goal beside the assistant's reply that named a host does not make
    that host the user's decision."""
    if len(line.cites) < 2:
        return line.cites
    idents = identifiers_in(line.text)
    mine = words(line.text)
    known = [c for c in line.cites if c in said]
    if idents:
        kept = [c for c in known if any(t in said[c] for t in idents)]
    else:
        kept = [c for c in known if words(said[c]) & mine]
    if not kept:
        return line.cites
    return sorted({*kept, *(c for c in line.cites if c not in said)})


def _who(cites: Sequence[int], roles: dict[int, str]) -> str | None:
    found = [r for r in ROLES if any(roles.get(c) == r for c in cites)]
    return "+".join(found) if found else None


def guard(summary: Summary, items: Sequence[CriticalItem], events: Sequence[Event] = ()) -> GuardReport:
    """Check ``summary`` against the items of the compacted range and repair it in place.

    Every line gets its speaker from the events it cites (``events``; a model's "user decided" for
    an assistant's words becomes the assistant's proposal). A line restating a negation or a
    condition without it is removed; one restating a revoked statement as current is marked
    superseded; one stating an assumption as fact moves to the assumptions; an identifier no user
    or tool gave leaves the identifiers; a "Done" line citing only the user's request leaves (unless
    a reply or a tool says that work was done). Then every missing required item is appended
    (``repaired=True``), and the notable items still missing are listed as dropped.

    Args:
        summary: The parsed summary.
        items: From :func:`extract_items` over the compacted range (plus a rolling summary's).
        events: The compacted events, for the speakers of cited ids.

    Returns:
        The repaired and the dropped items.
    """
    report = GuardReport()
    roles = {ev.id: role_of(ev) for ev in events}
    said = {ev.id: event_text(ev) for ev in events}
    for line in summary.lines:
        line.cites = _sources(line, said)
        who = _who(line.cites, roles)
        if who is None:
            continue
        if line.who == "user" and "user" not in who.split("+"):
            report.repaired.append(CriticalItem("role", line.text, sorted(line.cites), who))
        line.who = who
    live = [i for i in items if i.kind in ("constraint", "decision") and i.superseded_by is None
            and constraint_kind(i.text) is not None]
    for line in list(summary.lines):
        bad = next((c for c in live if _inverts(line, c)), None)
        if bad is not None:
            _drop(summary, report, line, "inverted")
    _unsupported_done(summary, report, said, roles)
    _mark_superseded(summary, items, report)
    _current_goal_only(summary, items, report)
    _keep_uncertain(summary, items, report)
    _sourced_identifiers(summary, items, report, said, roles)
    _resection(summary, items, report)
    _latest_request_only(summary, items, report)
    text = _reworded_rules(summary, items, report)
    missing_ids: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    unseen: list[CriticalItem] = []
    # what a later turn took an earlier statement back *for* ("scrap that, use pgcat instead") must stay
    replacing = {i.superseded_by for i in items if i.superseded_by is not None}
    for item in items:
        where = text
        if item.kind in _OWN_SECTION:
            where = "\n".join(ln.render() for ln in summary.section(SECTION_OF[item.kind]))
        if covers(where, item):
            continue
        if item.kind == "identifier":
            missing_ids.setdefault((item.who, tuple(sorted(item.cites))), []).append(item.text)
            report.repaired.append(item)
        elif is_required(item) or (item.kind == "decision" and item.who == "user" and item.superseded_by is None
                                   and replacing & set(item.cites)):
            summary.lines.append(SummaryLine(SECTION_OF[item.kind], item.text, sorted(item.cites), repaired=True,
                                             who=item.who, superseded_by=item.superseded_by))
            report.repaired.append(item)
        else:
            unseen.append(item)
    for (who, cites), idents in missing_ids.items():
        summary.lines.append(SummaryLine("Exact identifiers", ", ".join(f"`{t}`" for t in idents), list(cites),
                                         repaired=True, who=who))
    if unseen:  # what the loop put back may carry them: the ask the latest request, restored after it, holds
        text = summary.render()
        report.dropped = [i for i in unseen if not covers(text, i)]
    return report


CHANGES: Final[dict[str, str]] = {
    "role": "said by the assistant or a tool, not you: its speaker is corrected",
    "inverted": "removed: it says the opposite of a rule or decision still in force",
    "moved": "moved to its own section",
    "superseded": "marked as replaced by what was said later",
    "stale goal": "removed from the current goal: a later goal replaced it",
    "stale request": "removed from the latest request: not what you last asked, word for word",
    "reworded": "removed: your rule or goal reworded with its force, limit or name changed (back in your words)",
    "uncertain": "kept with its hedge, under assumptions",
    "unsourced": "left out of the identifiers: no message of yours or a tool's gives it outside a secret",
    "unsupported done": "removed from done: it cites only your request, and no reply or tool says the work was done",
}
"""The guard's changes to a draft, as the compaction review and ``/compact`` explains them (every other kind the guard
reports is an item the draft had lost and the guard put back)."""


LEFT_OUT: Final[dict[str, str]] = {
    "constraint": "a rule with no \"not\", condition or time limit: the guard puts back only those",
}
"""Why the guard did not put back an item the review lists as not in the summary, by kind (a kind without an
entry is a note of the conversation the guard does not enforce)."""


_OWN_SECTION = frozenset(("identifier", "goal", "request", "done", "todo"))
"""Kinds a summary keeps only in their own section: the current goal said as a decision, or the
latest request buried in the goal, is not where the next turn looks for it."""
_MOVABLE = frozenset(("done", "todo", "ask", "question", "assumption", "constraint"))


def _drop(summary: Summary, report: GuardReport, line: SummaryLine, kind: str) -> None:
    """Remove a draft ``line`` from ``summary`` and report the change (``kind``, one of :data:`CHANGES`),
    with the line's words, citations and speaker (the user's when it has none)."""
    summary.lines.remove(line)
    report.repaired.append(CriticalItem(kind, line.text, sorted(line.cites), line.who or "user"))


def _resection(summary: Summary, items: Sequence[CriticalItem], report: GuardReport) -> None:
    """A line that copies a done report, a task, a question or an assumption verbatim into another
    section (a model's "decision") moves to that item's section."""
    for line in summary.lines:
        if line.repaired or line.section in ("Exact identifiers", "Latest user request", "Current goal"):
            continue
        for item in items:
            if item.kind not in _MOVABLE or item.superseded_by is not None:
                continue
            want = SECTION_OF[item.kind]
            if line.section != want and _norm(item.text) == _norm(line.text):
                report.repaired.append(CriticalItem("moved", line.text, sorted(line.cites), line.who or "user"))
                line.section = want
                break


def _unsupported_done(summary: Summary, report: GuardReport, said: dict[int, str], roles: dict[int, str]) -> None:
    """A draft's "Done" line whose only sources are the user's requests ("Done: the runbook was written
    [e:29]" for "Please write the runbook", e:29) reports work nobody said was done: it leaves, unless a
    reply of the range reports that work done or a tool call or result after the request is about it
    (the draft cited the wrong message). A user's message that reports the work itself ("I wrote the
    runbook") is a source."""
    for line in [ln for ln in summary.lines if ln.section == SECTION_OF["done"] and not ln.repaired]:
        if not line.cites or any(roles.get(c) != "user" for c in line.cites):
            continue
        asked = [sentences(said[c]) for c in line.cites]
        if any(reports_done(x) for xs in asked for x in xs) or not any(is_ask(x) for xs in asked for x in xs):
            continue
        want = _topic(line.text)
        if any(_about(want, said[eid], roles[eid]) for eid in said if eid > min(line.cites)):
            continue
        _drop(summary, report, line, "unsupported done")


def _about(want: set[str], text: str, role: str) -> bool:
    """Whether an event (``text`` by ``role``) says work on topic ``want`` was done: a reply's report of
    it, or a tool call or result about it."""
    if role == "tool":
        return _shares(want, _topic(text))
    return role == "assistant" and any(reports_done(s) and _shares(want, _topic(s)) for s in sentences(text))


def _shares(want: set[str], got: set[str]) -> bool:
    """Whether ``got`` is on the topic ``want``: most of its words, or two of them (how a report of
    done work settles a task in :func:`_settle`, and says a "Done" line's work was done)."""
    common = len(want & got)
    return bool(want) and (common >= GUARD_ITEM_COVERAGE * len(want) or common >= 2)


def _mark_superseded(summary: Summary, items: Sequence[CriticalItem], report: GuardReport) -> None:
    """A line that restates a revoked statement (more than what replaced it) is marked superseded;
    a revoked goal or task is not current, so its line leaves those sections."""
    revoked = [i for i in items if i.superseded_by is not None]
    if not revoked:
        return
    by_event: dict[int, list[str]] = {}
    for i in items:
        for c in i.cites:
            by_event.setdefault(c, []).append(i.text)
    for line in list(summary.lines):
        if line.superseded_by is not None or line.section in ("Exact identifiers", "Latest user request"):
            continue
        for old in revoked:
            assert old.superseded_by is not None
            then = _overlap(old.text, line.text) if _norm(old.text) not in _norm(line.text) else 1.0
            in_span = bool(line.cites) and all(min(old.cites) <= c < old.superseded_by for c in line.cites)
            if then < GUARD_ITEM_COVERAGE and not (in_span and _topic(old.text) & _topic(line.text)):
                continue
            now = max((_overlap(t, line.text) for t in by_event.get(old.superseded_by, [])), default=0.0)
            if now >= then:
                continue
            # not _drop: the line may stay (marked), and either way the report names what replaced it
            if line.section in ("Still to do", "Open questions", "Current goal") and old.kind != "decision":
                summary.lines.remove(line)
            else:
                line.superseded_by = old.superseded_by
                if line.section == "Current goal":
                    line.section = "Decisions"
            report.repaired.append(CriticalItem("superseded", line.text, sorted(line.cites), line.who or "user",
                                                old.superseded_by))
            _add_replacement(summary, items, old.superseded_by, report)
            break


def _add_replacement(summary: Summary, items: Sequence[CriticalItem], eid: int, report: GuardReport) -> None:
    """The statement that took a summary line back ("actually, scrap that, use batch size 2000"), when
    the summary does not say it: a line marked superseded must not be the last word on its subject."""
    text = summary.render()
    for new in items:
        if (eid in new.cites and new.superseded_by is None and new.kind in ("decision", "constraint", "goal")
                and not covers(text, new)):
            summary.lines.append(SummaryLine(SECTION_OF[new.kind], new.text, sorted(new.cites), repaired=True,
                                             who=new.who))
            report.repaired.append(new)
            text = summary.render()


def _current_goal_only(summary: Summary, items: Sequence[CriticalItem], report: GuardReport) -> None:
    """When the range states a goal, the goal section holds that one: a line there that does not
    restate it (the first thing said, an older goal) is no current goal and leaves."""
    goal = next((i for i in items if i.kind == "goal"), None)
    if goal is None:
        return
    for line in [ln for ln in summary.lines if ln.section == "Current goal" and not ln.repaired]:
        if covers(line.render(), goal):
            continue
        _drop(summary, report, line, "stale goal")


def _latest_request_only(summary: Summary, items: Sequence[CriticalItem], report: GuardReport) -> None:
    """The latest request is the user's words, verbatim: a draft's other line there (a paraphrase, an
    older request, a message that was not compacted) leaves; the request itself is put back after."""
    request = next((i for i in items if i.kind == "request"), None)
    if request is None:
        return
    for line in list(summary.lines):
        if line.section == SECTION_OF["request"] and _norm(request.text) not in _norm(line.text):
            _drop(summary, report, line, "stale request")


def _reworded_rules(summary: Summary, items: Sequence[CriticalItem], report: GuardReport) -> str:
    """A draft's rule or decision that cites a rule's message and shares its topic but keeps none of the rule
    ("the billing cron may be adjusted when needed" for "hands off the billing cron", "finish the
    cutover by Monday" for "… by Friday") is the draft's version of that rule, with its force or its
    limit changed: it leaves, and the rule comes back in the user's words. So does a current goal
    naming an identifier the user never gave ("pg-prod-9" for the goal's "pg-prod-7").

    Returns:
        The summary rendered after the change (the rendering it started from when it removed nothing).
    """
    text = summary.render()
    before = len(summary.lines)
    rules = [i for i in items if i.kind in ("constraint", "decision") and is_required(i)
             and i.superseded_by is None and not covers(text, i)]
    given = {i.text for i in items if i.kind == "identifier"}
    goal = next((i for i in items if i.kind == "goal"), None)
    for line in list(summary.lines):
        if line.repaired or line.section in ("Exact identifiers", SECTION_OF["request"]):
            continue
        if (goal is not None and line.section == SECTION_OF["goal"] and set(line.cites) & set(goal.cites)
                and any(t not in given for t in identifiers_in(line.text))):
            _drop(summary, report, line, "reworded")
            continue
        if line.section not in (SECTION_OF["constraint"], SECTION_OF["decision"]):
            continue  # a report of work done or a task on the same topic is no version of the rule
        # a prohibition restated as one ("you should avoid Redis") keeps its force: only the model's words
        cited = [r for r in rules if set(line.cites) & set(r.cites) and _topic(line.text) & _topic(r.text)
                 and not (constraint_kind(r.text) == "negation" == constraint_kind(line.text))]
        if not cited:
            continue
        said = [i for i in items if set(line.cites) & set(i.cites) and i.kind != "identifier" and i not in cited]
        if any(covers(line.text, i) for i in said):
            continue  # it keeps another item of that message
        _drop(summary, report, line, "reworded")
    return text if len(summary.lines) == before else summary.render()  # it only removes lines


def _keep_uncertain(summary: Summary, items: Sequence[CriticalItem], report: GuardReport) -> None:
    """A line that states an assumption of the range without any hedge moves to the assumptions."""
    hedged = [i for i in items if i.kind == "assumption"]
    for line in list(summary.lines):
        if line.section == "Assumptions" or line.repaired or ASSUME_RE.search(line.text):
            continue
        if line.section in ("Exact identifiers", "Latest user request"):
            continue
        for a in hedged:
            want = words(ASSUME_RE.sub(" ", a.text))
            if want and len(want & words(line.text)) >= GUARD_ITEM_COVERAGE * len(want):
                if any(o.section == "Assumptions" and _norm(o.text) == _norm(a.text) for o in summary.lines):
                    _drop(summary, report, line, "uncertain")  # the hedge is there already: once is enough
                    break
                # the hedge, verbatim, with its own message and speaker (not the draft's citation)
                line.section, line.text, line.cites, line.who = "Assumptions", a.text, sorted(a.cites), a.who
                report.repaired.append(CriticalItem("uncertain", line.text, sorted(line.cites), line.who or "user"))
                break


def _sourced_identifiers(summary: Summary, items: Sequence[CriticalItem], report: GuardReport,
                         said: dict[int, str], roles: dict[int, str]) -> None:
    """Identifiers the user or a tool gave stay listed; the others (the assistant's, or invented)
    leave the identifiers section: they are in the archived transcript, not facts to carry. A
    lowercase hyphenated name the draft lists that the user or a tool typed word for word beside a
    word announcing a name (:func:`_typed` of ``said``) was given too, though that word alone comes
    after it ("the nightly-ledger cron"); an English compound ("read-only") is not."""
    given = {i.text for i in items if i.kind == "identifier"}
    typed: set[str] | None = None
    for line in list(summary.lines):
        if line.section != "Exact identifiers":
            continue
        found = identifiers_in(line.text) or [t.strip() for t in re.split(r"[,;]\s*", line.text.strip("` "))]
        names = [t for t in found if t not in given and _COMPOUND.fullmatch(t) and not _english_compound(t)]
        if names:
            typed = _typed(said, roles) if typed is None else typed
            given |= typed.intersection(names)
        keep = [t for t in found if t in given]
        gone = [t for t in found if t not in given]
        if not gone:
            continue
        # not _drop: each identifier is reported, not the line, and one with no speaker is nobody's fact
        for t in gone:
            report.repaired.append(CriticalItem("unsourced", t, sorted(line.cites), line.who or "assistant"))
        if keep:
            line.text = ", ".join(f"`{t}`" for t in keep)
        else:
            summary.lines.remove(line)


def _typed(said: dict[int, str], roles: dict[int, str]) -> set[str]:
    """The lowercase hyphenated compounds (:data:`_COMPOUND`, whole tokens without their quotes and
    punctuation) of the user's and the tools' events that stand next to a word announcing a name, before
    or after it: "cron nightly-ledger", "the nightly-ledger cron" (not "the dark-launch toggle")."""
    out: set[str] = set()
    for eid, text in said.items():
        if roles.get(eid) not in ("user", "tool"):
            continue
        toks = [_whole(t) for t in _TOKEN_RE.findall(text)]
        for i, tok in enumerate(toks):
            if _COMPOUND.fullmatch(tok) and any(_NAME_CUE.match(w) for w in toks[max(0, i - 1):i + 2:2]):
                out.add(tok)
    return out


def attributor(events: Sequence[Event]) -> Callable[[str], list[int]]:
    """A function mapping an uncited summary line to the ids of the events it most likely came from."""
    bags = [(ev.id, words(event_text(ev))) for ev in events]

    def attribute(line: str) -> list[int]:
        want = words(line)
        if not want:
            return []
        scored = sorted(((len(want & bag), eid) for eid, bag in bags if want & bag), reverse=True)
        if not scored:
            return []
        best = scored[0][0]
        return sorted(eid for score, eid in scored[:3] if score >= max(1, best // 2))

    return attribute
