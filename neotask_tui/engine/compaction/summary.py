"""The compaction summary: its fixed shape, the prompt that asks a model for it, and its parser.

A summary is a list of :class:`SummaryLine` values, each in one of :data:`SECTIONS`, each citing
the transcript event ids it came from and each saying who said it (``user``, ``assistant``,
``tool``). Rendered as Markdown::

    ## Current goal
    - user: I want to ship the CSV importer fix for acme-prod. [e:3]
    ## Decisions
    - user: (superseded by e:9) Let's go with option B for the queue: RabbitMQ. [e:5]
    - user: We go with option C: Postgres LISTEN/NOTIFY, no separate broker. [e:9]
    - assistant (proposal): We'll use a cron job for the retries. [e:6]
    ## Constraints and rules
    - user: Do not use Redis. [e:7]
    ## Assumptions
    - user: (assumption) The problem is probably the timezone. [e:11]
    ## Still to do
    - user: We still need to update the docs. [e:13]
    ## Latest user request
    - user: Can you write the migration now? [e:15]
    ## Exact identifiers
    - user: `build-4471`, `feat/tz-fix`, `src/app/time_utils.py` [e:3]

The shape is the drift control of the lecture: the current goal is the latest one stated;
decisions, assumptions and open questions are kept apart; a decision a later turn revoked is marked
superseded and names the event that replaced it; negations and conditions are copied verbatim;
identifiers the user or a tool gave live in their own section; the assistant's proposals are never
the user's decisions; and every line cites its sources so it can be checked against the primary
events.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from neotask_tui.providers.base import Role
from neotask_tui.storage.events import Event

SECTIONS: tuple[str, ...] = (
    "Current goal",
    "Decisions",
    "Constraints and rules",
    "Assumptions",
    "Open questions",
    "Done",
    "Still to do",
    "Latest user request",
    "Exact identifiers",
)
"""The summary's sections, in rendering order."""

ASSUMPTION_MARK = "(assumption)"
ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system")
"""Who a line came from (the roles of the events it cites)."""
PROPOSAL = "assistant (proposal)"
"""How an assistant's decision-shaped line is labelled: a proposal, never the user's decision."""

# Heading synonyms a model might use (lowercase, punctuation stripped) -> canonical section.
_ALIASES: dict[str, str] = {
    "goal": "Current goal", "goals": "Current goal", "objective": "Current goal", "task": "Current goal",
    "цель": "Current goal", "current goal": "Current goal", "текущая цель": "Current goal",
    "decisions": "Decisions", "decision": "Decisions", "decisions made": "Decisions", "решения": "Decisions",
    "constraints and rules": "Constraints and rules", "constraints": "Constraints and rules",
    "rules": "Constraints and rules", "constraints rules": "Constraints and rules",
    "ограничения": "Constraints and rules", "правила": "Constraints and rules",
    "assumptions": "Assumptions", "assumption": "Assumptions", "предположения": "Assumptions",
    "open questions": "Open questions", "questions": "Open questions", "открытые вопросы": "Open questions",
    "uncertainties": "Assumptions", "assumptions uncertainties": "Assumptions",
    "assumptions and uncertainties": "Assumptions", "done": "Done", "completed": "Done", "сделано": "Done",
    "still to do": "Still to do", "to do": "Still to do", "todo": "Still to do", "remaining": "Still to do",
    "pending user asks": "Still to do", "pending asks": "Still to do", "next steps": "Still to do",
    "user asks": "Still to do", "pending requests": "Still to do", "осталось": "Still to do",
    "осталось сделать": "Still to do", "latest user request": "Latest user request",
    "latest request": "Latest user request", "last request": "Latest user request",
    "последний запрос": "Latest user request",
    "exact identifiers": "Exact identifiers", "identifiers": "Exact identifiers",
    "идентификаторы": "Exact identifiers",
}

_CITE_RE = re.compile(r"\[\s*e\s*:?\s*\d+(?:\s*[,;]\s*(?:e\s*:?\s*)?\d+)*\s*\]", re.IGNORECASE)
_NUM_RE = re.compile(r"\d+")
_HEADING_RE = re.compile(r"^\s*(?:#{1,6}\s*|\*\*|__)?(?P<name>[^#*_:\[\]]{2,40}?)\s*(?:\*\*|__)?\s*:?\s*$")
_BULLET_RE = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")
_WHO_RE = re.compile(r"^\(?(?P<who>user|assistant|tool|system)(?:\s*\(proposal\))?\)?:\s+", re.IGNORECASE)
_SUPERSEDED_RE = re.compile(r"\(superseded by e:(?P<id>\d+)\)\s*", re.IGNORECASE)


@dataclass(slots=True)
class SummaryLine:
    """One line of a summary.

    Attributes:
        section: One of :data:`SECTIONS`.
        text: The line text without bullet or citation.
        cites: Event ids this line came from (sorted, unique).
        repaired: True when the quality guard appended the line (the model had dropped it).
        who: Who said it: one of :data:`ROLES`, several joined by ``+``, or ``None`` when unknown.
        superseded_by: The event id of the later statement that revoked this one, if any.
    """

    section: str
    text: str
    cites: list[int] = field(default_factory=list)
    repaired: bool = False
    who: str | None = None
    superseded_by: int | None = None

    def label(self) -> str:
        """The speaker prefix: ``user: ``, ``assistant (proposal): `` for an assistant's decision."""
        if not self.who:
            return ""
        if self.who == "assistant" and self.section in ("Decisions", "Current goal"):
            return f"{PROPOSAL}: "
        return f"{self.who}: "

    def render(self) -> str:
        """The Markdown bullet with speaker and citation, e.g. ``- user: Do not use Redis [e:7]``."""
        text = self.text
        if self.section == "Assumptions" and not text.lower().startswith(ASSUMPTION_MARK):
            text = f"{ASSUMPTION_MARK} {text}"
        if self.superseded_by is not None:
            text = f"(superseded by e:{self.superseded_by}) {text}"
        return f"- {self.label()}{text} {format_cites(self.cites)}".rstrip()


@dataclass(slots=True)
class Summary:
    """A structured compaction summary.

    Attributes:
        lines: The lines, in any order (rendering groups them by section).
        issues: Problems the parser found and fixed (uncited lines, unknown sections, bad cites).
    """

    lines: list[SummaryLine] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    headings: int = 0
    """How many known section headings the parsed text had (0 = not in the summary shape)."""

    def section(self, name: str) -> list[SummaryLine]:
        """Lines of one section, in order."""
        return [ln for ln in self.lines if ln.section == name]

    def cited_ids(self) -> list[int]:
        """Every cited event id, sorted."""
        return sorted({i for ln in self.lines for i in ln.cites})

    def render(self) -> str:
        """Markdown text (empty sections are omitted)."""
        out: list[str] = []
        for name in SECTIONS:
            lines = self.section(name)
            if lines:
                out.append(f"## {name}")
                out.extend(ln.render() for ln in lines)
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able structured form (for ``--json`` and the TUI review modal)."""
        return {
            name: [
                {"text": ln.text, "cites": ln.cites, "repaired": ln.repaired, "who": ln.who,
                 "superseded_by": ln.superseded_by}
                for ln in self.section(name)
            ]
            for name in SECTIONS
        }


def format_cites(ids: Iterable[int]) -> str:
    """``[e:3,e:7]`` for ids ``[3, 7]``; empty string when there are none."""
    uniq = sorted(set(ids))
    return "[" + ",".join(f"e:{i}" for i in uniq) + "]" if uniq else ""


def _canonical_section(raw: str) -> str | None:
    key = re.sub(r"[^\w\s]", " ", raw.lower())
    key = " ".join(key.split())
    return _ALIASES.get(key)


def says_something(text: str) -> bool:
    """Whether a summary text has at least one line with a word or a number (headings, bullets and
    punctuation alone say nothing)."""
    return any(any(c.isalnum() for c in ln.text) for ln in parse_summary(text).lines)


def parse_summary(
    text: str,
    valid_ids: Iterable[int] | None = None,
    attribute: Callable[[str], list[int]] | None = None,
) -> Summary:
    """Parse a model-written summary into the fixed shape, repairing what it can.

    Lenient about headings (``## Goal``, ``**Goal**``, ``Goal:``) and bullets; a ``user:`` /
    ``assistant:`` / ``tool:`` prefix is read as the line's speaker and ``(superseded by e:N)`` as
    its revocation. Problems are fixed and recorded in :attr:`Summary.issues`: lines before any
    heading go to *Current goal*; lines under an
    unknown heading go to *Decisions*; citations of ids outside ``valid_ids`` are dropped; a line
    left with no citation is attributed with ``attribute`` (best-matching event ids), if given.

    Args:
        text: The model output.
        valid_ids: Ids of the summarized events; ``None`` accepts any id.
        attribute: Maps an uncited line to the event ids it most likely came from.

    Returns:
        The parsed summary (possibly empty).
    """
    valid = set(valid_ids) if valid_ids is not None else None
    summary = Summary()
    section: str | None = None
    unknown: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("```"):
            continue
        if not _BULLET_RE.match(line):
            m = _HEADING_RE.match(line)
            if m and not _CITE_RE.search(line):
                canon = _canonical_section(m.group("name"))
                if canon:
                    section, unknown = canon, None
                    summary.headings += 1
                    continue
                if line.startswith(("#", "**", "__")) or line.endswith(":"):
                    section, unknown = "Decisions", m.group("name").strip()
                    summary.issues.append(f"unknown section {unknown!r} mapped to Decisions")
                    continue
        body = _BULLET_RE.sub("", line)
        cites: list[int] = []
        for cm in _CITE_RE.finditer(body):
            cites.extend(int(n) for n in _NUM_RE.findall(cm.group(0)))
        body = _CITE_RE.sub("", body).strip()
        body = re.sub(r"\s+([.,;:])$", r"\1", body)
        if not body:
            continue
        if valid is not None:
            bad = [c for c in cites if c not in valid]
            if bad:
                summary.issues.append(f"dropped citations of unknown events {bad} in {body[:40]!r}")
                cites = [c for c in cites if c in valid]
        if not cites and attribute is not None:
            cites = attribute(body)
            if not cites:  # every line says where it came from: one that came from nothing is not kept
                summary.issues.append(f"line citing no compacted message left out: {body[:40]!r}")
                continue
            summary.issues.append(f"uncited line attributed to {format_cites(cites)}: {body[:40]!r}")
        target = section or "Current goal"
        if section is None:
            summary.issues.append(f"line before any section put under Current goal: {body[:40]!r}")
        who: str | None = None
        wm = _WHO_RE.match(body)
        if wm:
            who, body = wm.group("who").lower(), body[wm.end():]
        superseded: int | None = None
        sm = _SUPERSEDED_RE.match(body)
        if sm:
            superseded, body = int(sm.group("id")), body[sm.end():]
        if body.lower().startswith(ASSUMPTION_MARK):
            body = body[len(ASSUMPTION_MARK):].strip()
            target = "Assumptions" if target != "Assumptions" else target
        if not body:
            continue
        summary.lines.append(SummaryLine(target, body, sorted(set(cites)), who=who, superseded_by=superseded))
    return summary


def event_text(ev: Event) -> str:
    """The text of an event as the summarizer sees it (messages, tool calls and results)."""
    if ev.type == "message":
        return ev.content
    if ev.type == "tool_call":
        args = ev.data.get("arguments", {})
        return f"{ev.data.get('name', '')}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"
    if ev.type == "tool_result":
        return ev.content
    if ev.type == "compaction":
        s = ev.data.get("summary", "")
        return s if isinstance(s, str) else ""
    return ""


def summarizable(events: Sequence[Event]) -> list[Event]:
    """The events a summary is written from: messages, tool calls and tool results."""
    return [e for e in events if e.type in {"message", "tool_call", "tool_result"} and event_text(e).strip()]


SUMMARY_SYSTEM_PROMPT = """You compress the older part of a conversation into a structured summary.
Write ONLY these Markdown sections, in this order, omitting empty ones:
## Current goal
## Decisions
## Constraints and rules
## Assumptions
## Open questions
## Done
## Still to do
## Latest user request
## Exact identifiers
Rules:
- One fact per bullet line, starting with who said it: "- user: ...", "- assistant: ..." or
  "- tool: ...". End EVERY line with the ids of the events it came from, e.g. [e:12,e:15].
  Event ids are shown as [e:N] before each event below.
- Current goal: what the user is working on NOW (the latest goal stated), not the first thing said.
- A decision a later turn revoked ("actually, scrap that", "instead", "передумал") is not current:
  write it as "- user: (superseded by e:N) ..." where e:N is the turn that replaced it.
- Copy negations, conditions and time limits verbatim ("Do not use Redis", "only for the demo",
  "today answer briefly"): never turn "do not X" into "X" or drop the condition.
- Copy paths, URLs, numbers, ids, versions and code names exactly, character for character. List
  under Exact identifiers only those the user or a tool gave, never ones the assistant made up.
- Decisions are what the user decided or agreed to; an opinion or suggestion of the assistant is
  not a decision of the user: write it as "- assistant: ..." (a proposal).
- Anything uncertain ("maybe", "probably", "I think") goes under Assumptions, marked (assumption).
- Latest user request: the user's last request, copied verbatim.
- Do not invent anything that is not in the events."""


def render_events_for_prompt(events: Sequence[Event], max_chars_per_event: int = 4000) -> str:
    """The transcript part of the prompt: one ``[e:N] role: text`` block per event."""
    out: list[str] = []
    for ev in events:
        text = event_text(ev).strip()
        if not text:
            continue
        if len(text) > max_chars_per_event:
            half = max_chars_per_event // 2
            text = f"{text[:half]}\n[... {len(text) - 2 * half} characters omitted ...]\n{text[-half:]}"
        who = ev.role or ev.type
        if ev.type == "compaction":
            who = "earlier summary"
        out.append(f"[e:{ev.id}] {who}: {text}")
    return "\n\n".join(out)


def build_summary_prompt(
    events: Sequence[Event], instructions: str | None = None, previous_summary: str | None = None
) -> list[tuple[Role, str]]:
    """The (role, content) messages asking a model for the summary.

    Args:
        events: The events being compacted (primary events, not an earlier summary, on rebuild).
        instructions: Optional user instructions steering what the summary focuses on.
        previous_summary: The rolling summary being extended (already cited); ``None`` on rebuild.

    Returns:
        A system and a user message.
    """
    parts: list[str] = []
    if previous_summary:
        parts.append(
            "Earlier summary (keep its lines and citations unless the events below supersede them):\n"
            + previous_summary
        )
    parts.append("Events to summarize:\n" + render_events_for_prompt(events))
    if instructions and instructions.strip():
        parts.append(
            "The user asks the summary to focus on the following (this steers emphasis; the rules "
            "above still apply):\n" + instructions.strip()
        )
    parts.append("Write the summary now.")
    return [("system", SUMMARY_SYSTEM_PROMPT), ("user", "\n\n".join(parts))]
