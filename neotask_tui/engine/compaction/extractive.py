"""The deterministic extractive summarizer.

Used when the model fails or times out (compaction never blocks on it), by the benchmark, and
whenever a model-free summary is wanted. It copies sentences verbatim from the events into the
summary's sections — so it cannot drift — and cites each one. Required items (identifiers and
negated constraints) are always kept; the rest is trimmed to fit a token budget, by kind (rules,
decisions and asks first) and newest first. Extending a rolling summary, its optional lines compete
with the new ones for that budget, so the summary stays bounded instead of growing with every
compaction (they are still cited in the archived transcripts, where recall finds them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from neotask_tui.engine.compaction.guard import SECTION_OF, CriticalItem, extract_items, is_required, sentences, words
from neotask_tui.engine.compaction.summary import Summary, SummaryLine
from neotask_tui.engine.language.constraints import constraint_kind, unlabel
from neotask_tui.storage.events import Event

_GOAL_RE = re.compile(
    r"\bi want\b|\bi need\b|\bgoal\b|\bwe need\b|\btrying to\b|\bhelp me\b|\bbuild\b|\bworking on\b"
    r"|(?<!\w)хочу|(?<!\w)нужно|(?<!\w)цель|(?<!\w)задача|(?<!\w)помоги",
    re.IGNORECASE,
)
# Which kinds are kept first when the budget is tight (required kinds are never trimmed).
_PRIORITY = ("constraint", "decision", "ask", "question", "assumption", "identifier")
_MAX_LINE_CHARS = 400
_MIN_WORDS = 3
"""An optional line needs this many content words: "How was it?" or "Anything fun?" say nothing."""
_KIND_OF = {section: kind for kind, section in SECTION_OF.items()}


def _clip(s: str) -> str:
    return s if len(s) <= _MAX_LINE_CHARS else s[: _MAX_LINE_CHARS - 1] + "…"


_GREETING = re.compile(
    r"^(?:hi|hey|hello|hiya|yo|howdy|greetings|good (?:morning|afternoon|evening|day)|thanks|thank you"
    r"|how (?:are|have|'ve) (?:you|ya|things)|how(?:'s| is) (?:it going|everything|life)|what'?s up"
    r"|(?:nice|good|great) to (?:see|meet|hear)|long time|привет|здравствуй\w*|добр\w+ (?:утро|день|вечер)"
    r"|как (?:дела|ты|вы)|спасибо)\b",
    re.IGNORECASE,
)


def _says_something(sentence: str) -> bool:
    """A sentence with :data:`_MIN_WORDS` content words besides a speaker label, not a greeting."""
    text = unlabel(sentence)
    return not _GREETING.match(text) and len(words(text)) >= _MIN_WORDS


def goal_lines(events: Sequence[Event]) -> list[SummaryLine]:
    """The goal: the user's first sentence that says something (greetings and "how are you?" are
    skipped), plus the latest sentence that states a goal."""
    users = [e for e in events if e.type == "message" and e.role == "user" and e.content.strip()]
    first = next(((ev, s) for ev in users for s in sentences(ev.content) if _says_something(s)), None)
    if first is None:
        return []
    out = [SummaryLine("Goal", _clip(first[1]), [first[0].id])]
    for ev in reversed(users):
        if ev.id == first[0].id:
            break
        hit = next((s for s in sentences(ev.content) if _GOAL_RE.search(s)), None)
        if hit and hit not in out[0].text:
            out.append(SummaryLine("Goal", _clip(hit), [ev.id]))
            break
    return out


def extractive_summary(
    events: Sequence[Event],
    *,
    budget_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
    instructions: str | None = None,
    previous: Summary | None = None,
) -> Summary:
    """Summarize ``events`` by copying their key sentences verbatim, with citations.

    Args:
        events: The compacted range (primary events).
        budget_tokens: Soft size limit for the rendered summary; required items may exceed it.
        count: Token counter for the budget (defaults to ~4 characters per token).
        instructions: User focus; sentences sharing words with it are kept first.
        previous: A rolling summary being extended: its goal, identifiers and constraints are kept;
            its other lines compete with the new items for ``budget_tokens``.

    Returns:
        The summary.
    """
    counter = count or (lambda s: max(1, len(s) // 4))
    items = extract_items(events)
    focus = {w for w in re.findall(r"\w+", (instructions or "").lower()) if len(w) > 3}
    lines: list[SummaryLine] = []
    older: list[CriticalItem] = []  # optional lines of the rolling summary, competing with new items
    for ln in previous.lines if previous else []:
        if ln.section in ("Goal", "Exact identifiers") or ln.repaired or (
            ln.section == "Constraints and rules" and constraint_kind(ln.text)
        ):
            lines.append(ln)
        else:
            older.append(CriticalItem(_KIND_OF.get(ln.section, "decision"), ln.text, list(ln.cites)))
    have = {ln.text for ln in lines}
    if not any(ln.section == "Goal" for ln in lines):  # a rolling summary keeps the goal it had
        for g in goal_lines(events):
            if g.text not in have:
                lines.append(g)
                have.add(g.text)  # not repeated as an ask or a decision
    required = [i for i in items if is_required(i)]
    optional = [i for i in items if not is_required(i) and i.text not in have]
    said_again = {i.text for i in optional}  # an older line said again is cited by its newest events
    optional += [o for o in older if o.text not in said_again]

    def rank(item: CriticalItem) -> tuple[int, int, int]:
        hit = 0 if focus & set(re.findall(r"\w+", item.text.lower())) else 1
        # Newer items first within a kind: the latest decisions and asks matter most.
        return (hit, _PRIORITY.index(item.kind), -max(item.cites, default=0))

    used = sum(counter(ln.render()) for ln in lines)
    for item in required:
        shown = f"`{item.text}`" if item.kind == "identifier" else _clip(item.text)
        if shown in have:
            continue
        ln = SummaryLine(SECTION_OF[item.kind], shown, sorted(item.cites))
        lines.append(ln)
        have.add(shown)
        used += counter(ln.render())
    for item in sorted(optional, key=rank):
        if len(words(unlabel(item.text.removeprefix("assistant: ")))) < _MIN_WORDS:
            continue
        ln = SummaryLine(SECTION_OF[item.kind], _clip(item.text), sorted(item.cites))
        cost = counter(ln.render())
        if budget_tokens is not None and used + cost > budget_tokens:
            continue
        lines.append(ln)
        used += cost
    # Keep chronological order inside each section (rendering groups by section).
    lines.sort(key=lambda ln: min(ln.cites) if ln.cites else 0)
    return Summary(lines=lines)

