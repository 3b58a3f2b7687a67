"""The compaction summary: its fixed shape, the prompt that asks a model for it, and its parser.

A summary is a list of :class:`SummaryLine` values, each in one of :data:`SECTIONS` and each citing
the transcript event ids it came from. Rendered as Markdown::

    ## Goal
    - Ship the CSV importer fix for acme-prod [e:3]
    ## Constraints and rules
    - Do not use Redis. [e:7]
    ## Assumptions
    - (assumption) The problem is probably the timezone [e:9]

The shape is the drift control of the lecture: decisions, assumptions and open questions are kept
apart, negations are copied verbatim, identifiers live in their own section, and every line cites
its sources so a wrong line can be checked against the primary events.
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
    "Goal",
    "Decisions",
    "Constraints and rules",
    "Assumptions",
    "Open questions",
    "Pending user asks",
    "Exact identifiers",
)
"""The summary's sections, in rendering order."""

ASSUMPTION_MARK = "(assumption)"

# Heading synonyms a model might use (lowercase, punctuation stripped) -> canonical section.
_ALIASES: dict[str, str] = {
    "goal": "Goal", "goals": "Goal", "objective": "Goal", "task": "Goal", "цель": "Goal",
    "decisions": "Decisions", "decision": "Decisions", "decisions made": "Decisions", "решения": "Decisions",
    "constraints and rules": "Constraints and rules", "constraints": "Constraints and rules",
    "rules": "Constraints and rules", "constraints rules": "Constraints and rules",
    "ограничения": "Constraints and rules", "правила": "Constraints and rules",
    "assumptions": "Assumptions", "assumption": "Assumptions", "предположения": "Assumptions",
    "open questions": "Open questions", "questions": "Open questions", "открытые вопросы": "Open questions",
    "pending user asks": "Pending user asks", "pending asks": "Pending user asks",
    "user asks": "Pending user asks", "pending requests": "Pending user asks",
    "exact identifiers": "Exact identifiers", "identifiers": "Exact identifiers",
    "идентификаторы": "Exact identifiers",
}

_CITE_RE = re.compile(r"\[\s*e\s*:?\s*\d+(?:\s*[,;]\s*(?:e\s*:?\s*)?\d+)*\s*\]", re.IGNORECASE)
_NUM_RE = re.compile(r"\d+")
_HEADING_RE = re.compile(r"^\s*(?:#{1,6}\s*|\*\*|__)?(?P<name>[^#*_:\[\]]{2,40}?)\s*(?:\*\*|__)?\s*:?\s*$")
_BULLET_RE = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")


@dataclass(slots=True)
class SummaryLine:
    """One line of a summary.

    Attributes:
        section: One of :data:`SECTIONS`.
        text: The line text without bullet or citation.
        cites: Event ids this line came from (sorted, unique).
        repaired: True when the quality guard appended the line (the model had dropped it).
    """

    section: str
    text: str
    cites: list[int] = field(default_factory=list)
    repaired: bool = False

    def render(self) -> str:
        """The Markdown bullet with its citation, e.g. ``- Do not use Redis [e:7]``."""
        text = self.text
        if self.section == "Assumptions" and not text.lower().startswith(ASSUMPTION_MARK):
            text = f"{ASSUMPTION_MARK} {text}"
        return f"- {text} {format_cites(self.cites)}".rstrip()


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
            name: [{"text": ln.text, "cites": ln.cites, "repaired": ln.repaired} for ln in self.section(name)]
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


def parse_summary(
    text: str,
    valid_ids: Iterable[int] | None = None,
    attribute: Callable[[str], list[int]] | None = None,
) -> Summary:
    """Parse a model-written summary into the fixed shape, repairing what it can.

    Lenient about headings (``## Goal``, ``**Goal**``, ``Goal:``) and bullets. Problems are fixed
    and recorded in :attr:`Summary.issues`: lines before any heading go to *Goal*; lines under an
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
            where = format_cites(cites) or "nothing"
            summary.issues.append(f"uncited line attributed to {where}: {body[:40]!r}")
        target = section or "Goal"
        if section is None:
            summary.issues.append(f"line before any section put under Goal: {body[:40]!r}")
        if target == "Assumptions" and body.lower().startswith(ASSUMPTION_MARK):
            body = body[len(ASSUMPTION_MARK):].strip()
        summary.lines.append(SummaryLine(target, body, sorted(set(cites))))
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
## Goal
## Decisions
## Constraints and rules
## Assumptions
## Open questions
## Pending user asks
## Exact identifiers
Rules:
- One fact per bullet line ("- ..."). End EVERY line with the ids of the events it came from,
  e.g. [e:12,e:15]. Event ids are shown as [e:N] before each event below.
- Copy negations and conditions verbatim ("Do not use Redis", "only for the demo"): never turn
  "do not X" into "X".
- Copy paths, URLs, numbers, ids, versions and code names exactly, character for character.
- Decisions are what the user decided or agreed to; an opinion or suggestion of the assistant is
  not a decision of the user - say "assistant suggested ...".
- Anything uncertain ("maybe", "probably", "I think") goes under Assumptions, marked (assumption).
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
