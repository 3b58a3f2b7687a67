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

from neotask_tui.engine.compaction.summary import Summary, SummaryLine, event_text
from neotask_tui.engine.language.constraints import clauses, constraint_kind, core, is_rule, unlabel
from neotask_tui.storage.events import Event
from neotask_tui.tuning import GUARD_CONSTRAINT_COVERAGE, GUARD_INVERSION_OVERLAP, GUARD_ITEM_COVERAGE

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

_URL = r"(?:https?|ftp|file|ssh|git)://[^\s<>\"'`)\]]+"
# EMAIL and the relative PATH start only where their character run starts: tried at every position
# inside a long run, each would rescan the rest of the run (quadratic).
_EMAIL = r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_PATH = r"(?:~|\.{1,2})?/(?:[\w.@%+-]+/)*[\w.@%+-]+/?|(?<![\w.-])(?:[\w.-]+/)+[\w.-]+\.\w{1,8}"
_FILE = (
    r"\b[\w-]+\.(?:py|pyi|js|ts|tsx|jsx|json|toml|yaml|yml|md|txt|csv|sql|sh|rs|go|java|c|h|cpp|hpp|rb"
    r"|ini|cfg|env|lock|html|css|tcss|jsonl|log)\b"
)
_VERSION = r"\bv?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?\b"
_SNAKE = r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b"
_CAMEL = r"\b[a-z]+(?:[A-Z][a-z0-9]+)+\b|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b"
_DOTTED = r"\b[a-z_][\w]*(?:\.[a-z_]\w*){1,5}\(?\)?"
_HEXID = r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"
_ALNUM_ID = r"\b(?=[A-Za-z-]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+\b|\b[A-Z]{2,}-\d+\b"
_DATE = r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"
_NUMBER = r"(?<![\w.])\d{3,}(?:[.,]\d+)?(?!\w|[.,]\d)|(?<![\w.])\d+[.,]\d+(?!\w|[.,]\d)"
_CALL = r"\b[A-Za-z_]\w*\(\)"
_ID_RE = re.compile(
    "|".join(
        f"(?:{p})"
        for p in (_URL, _EMAIL, _PATH, _FILE, _VERSION, _HEXID, _ALNUM_ID, _CALL, _DOTTED, _DATE, _SNAKE,
                  _CAMEL, _NUMBER)
    )
)
_BACKTICK_RE = re.compile(r"`([^`\n]{1,120})`")
_LONG_RUN_RE = re.compile(rf"(?<!\S)\S{{{MAX_IDENTIFIER_CHARS + 1},}}")

_NEG_EN = (
    r"\bdo not\b|\bdon'?t\b|\bdoesn'?t\b|\bnever\b|\bmust not\b|\bmustn'?t\b|\bshould not\b|\bshouldn'?t\b"
    r"|\bcannot\b|\bcan'?t\b|\bwon'?t\b|\bnot allowed\b|\bavoid\b|\bno longer\b|\bwithout\b|\bdo NOT\b"
)
_NEG_RU = r"(?<!\w)(?:не|нельзя|никогда|ни в коем случае|запрещено|без|избегай|нет)(?!\w)"
_COND = (
    r"\bonly\b|\bunless\b|\bexcept\b"
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
    r"|(?<!\w)пожалуйста|(?<!\w)сделай|(?<!\w)напиши|(?<!\w)добавь|(?<!\w)исправь|(?<!\w)можешь",
    re.IGNORECASE,
)
"""A request by its form anywhere in the sentence ("please", "can you", "сделай"); see :func:`is_ask`."""
_ASK_VERB = re.compile(
    r"^(?:make|add|write|fix|implement|create|update|change|remove|delete|rename|refactor|run|check|review"
    r"|explain|show|generate|build|move|test|document|install|set up|convert|find|investigate|debug"
    r"|optimi[sz]e|draft|summari[sz]e|list|replace|migrate|port|split|merge|revert|bump|upgrade|tell me"
    r"|remind me)\b",
    re.IGNORECASE,
)
"""A request by an imperative verb at the start of a clause ("Add a test", "so fix the import")."""
_JOINED = re.compile(r"\s+(?:and|or|и|или)\s+", re.IGNORECASE)
_INFO_ASK = re.compile(
    r"\b(?:tell|remind|show|give)\s+(?:me|us)\b|\bexplain\b|\bdescribe\b|(?<!\w)(?:расскажи|объясни|подскажи)",
    re.IGNORECASE,
)
"""An ask for information ("can you tell me why...?"): once answered, it is no longer pending."""
_UNSURE_RE = re.compile(
    r"\b(?:not (?:sure|certain)|(?:don'?t|do not) know|no idea|can'?t (?:tell|say|answer|find)|cannot (?:tell|say"
    r"|answer|find)|unable to|couldn'?t find|unclear)\b|(?<!\w)(?:не знаю|не уверен\w*|не могу сказать)",
    re.IGNORECASE,
)
"""A reply that says it could not answer: the question stays open."""
ASSUME_RE = re.compile(
    r"\bassum\w*|\bprobably\b|\bmaybe\b|\bperhaps\b|\bi think\b|\bi guess\b|\bmight be\b|\blikely\b"
    r"|(?<!\w)возможно|(?<!\w)наверное|(?<!\w)предполож|(?<!\w)кажется|(?<!\w)вероятно",
    re.IGNORECASE,
)
_SENT_RE = re.compile(r"(?<=[.!?…])\s+|\n+")
_WORD_RE = re.compile(r"\w+", re.UNICODE)
_STOP_WORDS = (
    "a an the and or but of to in on at by for with from as is are was were be it this that i you we "
    "me my your our it's its so if then please и в на с к по а но что это я ты мы вы"
)
_STOP = frozenset(_STOP_WORDS.split())


@dataclass(slots=True)
class CriticalItem:
    """Something the summary must keep.

    Attributes:
        kind: ``identifier``, ``constraint``, ``decision``, ``ask``, ``question`` or ``assumption``.
        text: The verbatim text (the identifier, or the sentence).
        cites: Event ids where it occurs (first :data:`MAX_CITES`).
    """

    kind: str
    text: str
    cites: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (stored in the compaction record's ``repaired`` list)."""
        return {"kind": self.kind, "text": self.text, "cites": list(self.cites)}


SECTION_OF = {
    "identifier": "Exact identifiers",
    "constraint": "Constraints and rules",
    "decision": "Decisions",
    "ask": "Pending user asks",
    "question": "Open questions",
    "assumption": "Assumptions",
}


def sentences(text: str) -> list[str]:
    """Split text into trimmed sentences (code fences are skipped)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    return [s.strip(" \t-*•>") for s in _SENT_RE.split(text) if len(s.strip()) > 2]


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
    return any(_ASK_VERB.match(c) for c in candidates)


def identifiers_in(text: str) -> list[str]:
    """Exact identifiers found in ``text``, in order of appearance, unique."""
    found: list[str] = []
    for m in _BACKTICK_RE.finditer(text):
        found.append(m.group(1).strip())
    stripped = _LONG_RUN_RE.sub(" ", _BACKTICK_RE.sub(" ", text))
    for m in _ID_RE.finditer(stripped):
        tok = m.group(0).rstrip(".,;:!?")
        if tok.endswith(")") and "(" not in tok:
            tok = tok[:-1]
        if len(tok) >= 3:
            found.append(tok)
    seen: set[str] = set()
    out: list[str] = []
    for tok in found:
        if tok and tok not in seen:
            seen.add(tok)
            out.append(tok)
            if len(out) >= MAX_IDENTIFIERS:
                break
    # Drop identifiers that are a substring of a longer one found in the same text.
    return [t for t in out if not any(t != o and t in o for o in out)]


def _merge(items: dict[tuple[str, str], CriticalItem], kind: str, text: str, eid: int) -> None:
    key = (kind, text)
    item = items.get(key)
    if item is None:
        items[key] = CriticalItem(kind, text, [eid])
    elif eid not in item.cites and len(item.cites) < MAX_CITES:
        item.cites.append(eid)


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


def extract_items(events: Sequence[Event]) -> list[CriticalItem]:
    """All critical and notable items of a range of events, in order of first appearance.

    Identifiers come from user/assistant messages and tool calls (tool *output* is data; its full
    text stays in the transcript). Constraints, decisions, asks and assumptions come from what the
    user said; decisions also from assistant messages that state one ("we'll use ..."), which are
    kept as the assistant's, never attributed to the user. A question the assistant's reply answered
    is not an open question (nor is a request for information like "can you tell me why...?").
    """
    items: dict[tuple[str, str], CriticalItem] = {}
    for i, ev in enumerate(events):
        if ev.type not in {"message", "tool_call"}:
            continue
        text = event_text(ev)
        for ident in identifiers_in(text):
            _merge(items, "identifier", ident, ev.id)
        if ev.type != "message":
            continue
        role = ev.role
        answered: bool | None = None
        for s in sentences(text):
            if len(s) > MAX_SENTENCE_CHARS:
                continue
            if role == "user" or role == "system":
                if s.endswith("?"):
                    ask = is_ask(s)
                    if not ask or _INFO_ASK.search(s):
                        answered = _answered(events, i) if answered is None else answered
                        if answered:
                            continue  # the reply answered it: not an open question
                    _merge(items, "ask" if ask else "question", s, ev.id)
                elif constraint_kind(s) or is_rule(s):
                    _merge(items, "constraint", s, ev.id)
                elif is_decision(s):
                    _merge(items, "decision", s, ev.id)
                elif ASSUME_RE.search(s):
                    _merge(items, "assumption", s, ev.id)
                elif is_ask(s):
                    _merge(items, "ask", s, ev.id)
            elif role == "assistant" and is_decision(s, _ASSISTANT_DECISION_RE) and not (
                s.endswith("?") or ASSUME_RE.search(s)
            ):
                _merge(items, "decision", f"assistant: {s}", ev.id)
    return list(items.values())


def _norm(s: str) -> str:
    return " ".join(s.lower().split()).strip(" .!?;:")


def covers(summary_text: str, item: CriticalItem) -> bool:
    """Whether the summary keeps ``item``.

    Identifiers must appear character for character, and so must a negated constraint (a leading
    "please" or speaker label aside): "you should avoid Redis" does not keep "Do not use Redis."
    A condition is covered by a verbatim copy or by one line that has a condition marker *and* at
    least 70% of its content words. Other items need 60% of their words on one line.
    """
    if item.kind == "identifier":
        return item.text in summary_text
    if _norm(item.text) in _norm(summary_text):
        return True
    if item.kind == "constraint" and constraint_kind(item.text) == "negation":
        return _norm(core(item.text)) in _norm(summary_text)
    want = words(item.text.removeprefix("assistant: "))
    if not want:
        return True
    marked = bool(NEGATION_RE.search(item.text) or CONDITION_RE.search(item.text))
    need_marker = item.kind == "constraint" and marked
    ratio = GUARD_CONSTRAINT_COVERAGE if item.kind == "constraint" else GUARD_ITEM_COVERAGE
    for line in summary_text.splitlines():
        if need_marker and not (NEGATION_RE.search(line) or CONDITION_RE.search(line)):
            continue
        if len(want & words(line)) >= ratio * len(want):
            return True
    return False


def is_required(item: CriticalItem) -> bool:
    """Items the guard enforces: identifiers and negated/conditional constraints (not chatty negations)."""
    if item.kind == "identifier":
        return True
    return item.kind == "constraint" and constraint_kind(item.text) is not None


@dataclass(slots=True)
class GuardReport:
    """What the guard found.

    Attributes:
        repaired: Required items the summary lacked and that were appended, plus summary lines
            removed because they inverted a negation (kind ``inverted``).
        dropped: Notable items (decisions, asks, questions, other rules) still not covered.
    """

    repaired: list[CriticalItem] = field(default_factory=list)
    dropped: list[CriticalItem] = field(default_factory=list)


def _inverts(line: SummaryLine, item: CriticalItem) -> bool:
    """A line that restates a negated constraint without any negation ("use Redis")."""
    if line.repaired or NEGATION_RE.search(line.text) or not NEGATION_RE.search(item.text):
        return False
    want = words(NEGATION_RE.sub(" ", item.text))
    if len(want) < 2:
        return False
    overlap = len(want & words(line.text)) >= GUARD_INVERSION_OVERLAP * len(want)
    return overlap and len(words(line.text)) <= 2 * len(want)


def guard(summary: Summary, items: Sequence[CriticalItem]) -> GuardReport:
    """Append every missing required item to ``summary`` (in place) and list what else it drops.

    Args:
        summary: The parsed summary; repaired lines are appended with ``repaired=True``.
        items: From :func:`extract_items` over the compacted range.

    Returns:
        The repaired and the dropped items.
    """
    report = GuardReport()
    # Only a negated constraint can be inverted ("don't forget to X" is a reminder: "X" keeps it).
    constraints = [i for i in items if i.kind == "constraint" and constraint_kind(i.text) == "negation"]
    for line in list(summary.lines):
        bad = next((c for c in constraints if _inverts(line, c)), None)
        if bad is not None:
            summary.lines.remove(line)
            report.repaired.append(CriticalItem("inverted", line.text, sorted(line.cites)))
    text = summary.render()
    for item in items:
        if covers(text, item):
            continue
        if is_required(item):
            shown = f"`{item.text}`" if item.kind == "identifier" else item.text
            summary.lines.append(SummaryLine(SECTION_OF[item.kind], shown, sorted(item.cites), repaired=True))
            report.repaired.append(item)
        else:
            report.dropped.append(item)
    return report


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
