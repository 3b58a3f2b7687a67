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

from neotask_tui.engine.compaction.guard import (
    SECTION_OF,
    CriticalItem,
    extract_items,
    is_required,
    supersede,
    words,
)
from neotask_tui.engine.compaction.summary import Summary, SummaryLine
from neotask_tui.engine.language.constraints import constraint_kind, unlabel
from neotask_tui.storage.events import Event

# Which kinds are kept first when the budget is tight (required kinds are never trimmed).
_PRIORITY = ("constraint", "decision", "ask", "todo", "done", "question", "assumption", "identifier", "goal",
             "request")
_MAX_LINE_CHARS = 400
_MIN_WORDS = 3
"""An optional line needs this many content words: "How was it?" or "Anything fun?" say nothing."""
_KIND_OF = {section: kind for kind, section in SECTION_OF.items()}
_KIND_OF["Still to do"] = "ask"


def _clip(s: str) -> str:
    return s if len(s) <= _MAX_LINE_CHARS else s[: _MAX_LINE_CHARS - 1] + "…"


def goal_lines(events: Sequence[Event], items: Sequence[CriticalItem] | None = None) -> list[SummaryLine]:
    """The current goal: the latest goal the user stated ("I want...", "my goal is...", "нужно...")
    and did not revoke. None stated, none shown: the first thing said is not a goal, and the latest
    request has its own section."""
    found = list(items) if items is not None else extract_items(events)
    goal = next((i for i in found if i.kind == "goal"), None)
    if goal is None:
        return []
    return [SummaryLine("Current goal", _clip(goal.text), sorted(goal.cites), who=goal.who)]


def _line(item: CriticalItem) -> SummaryLine:
    return SummaryLine(SECTION_OF[item.kind], _clip(item.text), sorted(item.cites), who=item.who,
                       superseded_by=item.superseded_by)


def extractive_summary(
    events: Sequence[Event],
    *,
    budget_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
    instructions: str | None = None,
    previous: Summary | None = None,
) -> Summary:
    """Summarize ``events`` by copying their key sentences verbatim, with citations and speakers.

    Args:
        events: The compacted range (primary events).
        budget_tokens: Soft size limit for the rendered summary; required items may exceed it.
        count: Token counter for the budget (defaults to ~4 characters per token).
        instructions: User focus; sentences sharing words with it are kept first.
        previous: A rolling summary being extended: its identifiers and constraints are kept, and its
            goal unless the range states a newer one; a statement of the range can revoke its
            decisions; its other lines compete with the new items for ``budget_tokens``.

    Returns:
        The summary.
    """
    counter = count or (lambda s: max(1, len(s) // 4))
    items = extract_items(events)
    focus = {w for w in re.findall(r"\w+", (instructions or "").lower()) if len(w) > 3}
    lines: list[SummaryLine] = []
    older: list[CriticalItem] = []  # optional lines of the rolling summary, competing with new items
    goals = goal_lines(events, items)
    states_goal = any(i.kind == "goal" for i in items)
    carried: list[tuple[SummaryLine, CriticalItem]] = []
    for ln in previous.lines if previous else []:
        as_item = CriticalItem(_KIND_OF.get(ln.section, "decision"), ln.text, list(ln.cites), ln.who or "user",
                               ln.superseded_by)
        carried.append((ln, as_item))
    _revoke_carried([it for _, it in carried], events, items)
    for ln, it in carried:
        ln.superseded_by = it.superseded_by
        if ln.section == "Current goal":
            if not states_goal and it.superseded_by is None:  # else the range states a newer goal
                lines.append(ln)
        elif ln.section == "Latest user request":
            if not any(i.kind == "request" for i in items):
                lines.append(ln)
        elif ln.section == "Exact identifiers" or ln.repaired or (
            ln.section == "Constraints and rules" and constraint_kind(ln.text)
        ):
            lines.append(ln)
        elif it.superseded_by is not None and it.kind in ("ask", "todo", "question"):
            continue
        else:
            older.append(it)
    have = {ln.text for ln in lines}
    if not any(ln.section == "Current goal" for ln in lines):  # a rolling summary keeps the goal it had
        for g in goals:
            if g.text not in have:
                lines.append(g)
                have.add(g.text)  # not repeated as an ask or a decision
    required = [i for i in items if is_required(i) and i.kind != "goal"]
    optional = [i for i in items if not is_required(i) and i.text not in have]
    said_again = {i.text for i in optional}  # an older line said again is cited by its newest events
    optional += [o for o in older if o.text not in said_again]

    def rank(item: CriticalItem) -> tuple[int, int, int, int]:
        hit = 0 if focus & set(re.findall(r"\w+", item.text.lower())) else 1
        # Newer items first within a kind: the latest decisions and asks matter most; a revoked
        # statement only when there is room left.
        return (item.superseded_by is not None, hit, _PRIORITY.index(item.kind), -max(item.cites, default=0))

    used = sum(counter(ln.render()) for ln in lines)
    by_source: dict[tuple[str, tuple[int, ...]], SummaryLine] = {}
    for item in required:
        if item.kind == "identifier":
            shown = f"`{item.text}`"
            if any(shown in t for t in have):
                continue
            key = (item.who, tuple(sorted(item.cites)))
            group = by_source.get(key)
            if group is None:
                group = by_source[key] = SummaryLine("Exact identifiers", shown, list(key[1]), who=item.who)
                lines.append(group)
            else:
                used -= counter(group.render())
                group.text = f"{group.text}, {shown}"
            have.add(shown)
            used += counter(group.render())
            continue
        ln = _line(item)
        if ln.text in have and item.kind != "request":
            continue
        lines.append(ln)
        have.add(ln.text)
        used += counter(ln.render())
    for item in sorted(optional, key=rank):
        if len(words(unlabel(item.text))) < _MIN_WORDS - (item.kind in ("done", "todo", "decision")):
            continue
        ln = _line(item)
        cost = counter(ln.render())
        if budget_tokens is not None and used + cost > budget_tokens:
            continue
        lines.append(ln)
        used += cost
    # Keep chronological order inside each section (rendering groups by section).
    lines.sort(key=lambda ln: min(ln.cites) if ln.cites else 0)
    return Summary(lines=lines)


def _revoke_carried(carried: list[CriticalItem], events: Sequence[Event], items: Sequence[CriticalItem]) -> None:
    """Let the range's user messages revoke statements of the rolling summary being extended."""
    if not carried:
        return
    for ev in events:
        if ev.type != "message" or ev.role != "user":
            continue
        if any(i.superseded_by == ev.id for i in items):
            continue  # it revoked a statement of the range itself
        mine = [i for i in items if ev.id in i.cites and i.kind != "identifier"]
        supersede(carried, mine, ev.content, ev.id)
