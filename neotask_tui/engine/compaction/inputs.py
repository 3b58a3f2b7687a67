"""What a compaction summarizes and what it keeps: pure functions over transcript events.

- :func:`split_recent` picks the recent raw messages kept verbatim (a sliding window by tokens that
  never starts with an orphaned tool result) and the older range to summarize.
- :func:`lineage_events` walks the parent chain of compaction-created sessions and returns the
  *primary* events (messages, tool calls and results, state changes) deduplicated by id — what a
  rebuild summarizes, instead of the previous summary.
- :func:`previous_items` turns the rolling summary being extended into guard items, so a merge
  cannot silently drop an older constraint or identifier.
- :func:`memory_candidates` proposes durable-looking facts of the compacted range for the
  long-term-memory promotion inbox (the memory flush).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from neotask_tui.engine.compaction.guard import CriticalItem, identifiers_in, sentences
from neotask_tui.engine.compaction.summary import Summary, event_text
from neotask_tui.engine.language.constraints import constraint_kind
from neotask_tui.storage.events import Event, superseded_ids
from neotask_tui.storage.keys import header_agent

CONTEXT_TYPES = frozenset({"message", "tool_call", "tool_result"})


def is_context_event(ev: Event) -> bool:
    """Events that enter the model context as conversation (not headers, markers, summaries)."""
    return ev.type in CONTEXT_TYPES


def head_summary(events: Sequence[Event]) -> Event | None:
    """The rolling summary: the ``compaction`` record at the head of a session, if any."""
    for ev in events[:3]:
        if ev.type == "compaction":
            return ev
    return None


@dataclass(slots=True)
class Split:
    """A session's events divided for compaction.

    Attributes:
        head: Conversation events to summarize (oldest first).
        kept: Events copied verbatim into the new session (the recent window). Session-state events
            are not copied: the state manager folds them over the whole lineage.
        first_kept_id: Id of the first kept conversation event (``None`` when none is kept).
    """

    head: list[Event] = field(default_factory=list)
    kept: list[Event] = field(default_factory=list)
    first_kept_id: int | None = None


def split_recent(events: Sequence[Event], count_event: Callable[[Event], int], keep_tokens: int) -> Split:
    """Choose the recent window to keep raw and the older range to summarize.

    The window holds the newest conversation events within ``keep_tokens`` (at least the last
    one), but never more than half of them, so a compaction always compacts something when there
    are two or more. It never starts with a tool result whose call would be summarized away.

    Args:
        events: The current session's events (header and summary record are ignored, and so are
            events a ``superseded`` marker retired).
        count_event: Token estimate of one event.
        keep_tokens: Budget of the raw window.

    Returns:
        The split.
    """
    gone = superseded_ids(events)  # replaced by /retry or /edit: never summarized, never kept
    conv = [e for e in events if is_context_event(e) and e.id not in gone]
    if not conv:
        return Split()
    max_keep = max(1, len(conv) // 2) if len(conv) >= 2 else 0
    n, used = 0, 0
    for ev in reversed(conv):
        cost = count_event(ev)
        if n >= max_keep or (n >= 1 and used + cost > keep_tokens):
            break
        n += 1
        used += cost
    start = len(conv) - n
    # Do not orphan tool results: move the boundary forward past them (they get summarized).
    while start < len(conv) and conv[start].type == "tool_result":
        start += 1
    head, recent = conv[:start], conv[start:]
    first_kept = recent[0].id if recent else None
    return Split(head=head, kept=recent, first_kept_id=first_kept)


def lineage_events(
    current: Sequence[Event], load: Callable[[str], Sequence[Event]], max_depth: int = 1000
) -> tuple[list[Event], list[str]]:
    """Primary events of a whole compaction lineage, oldest first, deduplicated by id (see
    :func:`lineage_bounds`, which also says where each session's part of the lineage ends)."""
    events, bounds = lineage_bounds(current, load, max_depth)
    return events, list(bounds)


def lineage_bounds(
    current: Sequence[Event], load: Callable[[str], Sequence[Event]], max_depth: int = 1000
) -> tuple[list[Event], dict[str, int | None]]:
    """Primary events of a whole compaction lineage, oldest first, deduplicated by id.

    A fork (header ``reason`` ``fork``) continues its parent's lineage up to its fork point: the
    parent's events (and its ancestors') after ``fork_at`` belong to the other branch.

    Args:
        current: Events of the current session.
        load: Loads the events of a session id (archived transcripts included).
        max_depth: Guard against a corrupt cyclic chain.

    Returns:
        ``(events, sessions)``: the primary conversation and state events, and the sessions read
        (current first; a missing one as ``"<id> (missing)"``), each with the last event id of it that
        belongs to the lineage (``None``: all of it; past a fork, its fork point).
    """
    by_id: dict[int, Event] = {}
    sessions: dict[str, int | None] = {}
    evs: Sequence[Event] = current
    seen: set[str] = set()
    gone: set[int] = set()  # retired by /retry or /edit in any session of the lineage
    cap: int | None = None  # past a fork: only the parent's events up to the fork point
    agent: str | None = None  # the lineage's agent (its current session's)
    for _ in range(max_depth):
        header = evs[0] if evs and evs[0].type == "session" else None
        sid = str(header.data.get("session_id")) if header else ""
        owner = header_agent(header.data) if header else None
        if sid in seen or (sessions and owner != agent):  # another agent's session: not this lineage
            break
        agent = owner
        seen.add(sid)
        sessions[sid] = cap
        if cap is not None:
            evs = [e for e in evs if e.type == "session" or e.id <= cap]  # a header's id may be above
        gone |= superseded_ids(evs)
        for ev in evs:
            if (is_context_event(ev) or ev.type == "state") and ev.id not in by_id:
                by_id[ev.id] = ev
        parent = header.data.get("parent_session_id") if header else None
        reason = header.data.get("reason") if header else None
        if not parent or header is None or reason not in ("compaction", "fork"):
            break
        if reason == "fork":
            at = header.data.get("fork_at")
            if not isinstance(at, int) or isinstance(at, bool):
                break
            cap = at if cap is None else min(cap, at)
        try:
            evs = load(str(parent))
        except Exception:  # a missing ancestor: rebuild from what is left, and say so via sessions
            sessions[f"{parent} (missing)"] = cap
            break
    return sorted((e for e in by_id.values() if e.id not in gone), key=lambda e: e.id), sessions


def previous_items(previous: Summary) -> list[CriticalItem]:
    """Guard items from a rolling summary being extended (its constraints and identifiers).

    Only lines that are constraints by :func:`~neotask_tui.engine.language.constraints.constraint_kind` are
    enforced again, so a chatty negation an older summary kept ("Can't wait!") can now leave it.
    """
    items: list[CriticalItem] = []
    for ln in previous.lines:
        who = ln.who or "user"
        if ln.section == "Constraints and rules" and constraint_kind(ln.text):
            items.append(CriticalItem("constraint", ln.text, list(ln.cites), who, ln.superseded_by))
        elif ln.section == "Exact identifiers":
            for ident in identifiers_in(ln.text) or [ln.text.strip("` ")]:
                items.append(CriticalItem("identifier", ident, list(ln.cites), who))
    return items


_DURABLE_RE = re.compile(
    r"\bi prefer\b|\bi always\b|\bi never\b|\bi usually\b|\bmy name is\b|\bcall me\b|\bi work (?:at|on|for)\b"
    r"|\bi live\b|\bi use\b|\bwe use\b|\bour (?:team|stack|project)\b|\bremember\b|\bfrom now on\b"
    r"|\bin (?:all|every) (?:project|session)s?\b|(?<!\w)запомни|(?<!\w)я предпочитаю|(?<!\w)я всегда"
    r"|(?<!\w)меня зовут|(?<!\w)мы используем|(?<!\w)впредь",
    re.IGNORECASE,
)
_TEMPORARY_RE = re.compile(
    r"\btoday\b|\bfor now\b|\bthis session\b|\bjust this\b|\btemporar\w*"
    r"|\bonly for (?:the|this) (?:demo|test)\b"
    r"|(?<!\w)сегодня|(?<!\w)пока что|(?<!\w)временно",
    re.IGNORECASE,
)


def memory_candidates(events: Sequence[Event]) -> list[dict[str, Any]]:
    """Durable-looking user statements of a range, proposed for long-term memory.

    Only the user's own sentences qualify (never the assistant's), and nothing marked temporary.
    Each candidate carries its source event id and timestamp so it can be reviewed, edited or
    rejected in the promotion inbox; nothing is written to MEMORY.md here.
    """
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ev in events:
        if ev.type != "message" or ev.role != "user":
            continue
        for s in sentences(event_text(ev)):
            if s.endswith("?") or not _DURABLE_RE.search(s) or _TEMPORARY_RE.search(s):
                continue
            key = s.lower()
            if key in seen:
                continue
            seen.add(key)
            out.append({"text": s, "source_event_id": ev.id, "ts": ev.ts, "reason": "compaction flush"})
    return out
