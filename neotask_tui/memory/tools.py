"""Model tools over long-term memory: ``memory_search(query, k)`` and ``memory_get(path, lines)``.

Results are returned as quoted data (the engine fences tool output as untrusted) with their
sources, so the model can cite them, and with secrets redacted (a user-written memory file is read
as it is on disk).
"""

from __future__ import annotations

import json
import re
from typing import Any

from neotask_tui.memory.types import MemoryReader, history_admits, recall_rank
from neotask_tui.providers.base import ToolSpec
from neotask_tui.text.secrets import redact_secrets

MAX_K = 20

_LOCATION = re.compile(r"(?P<path>.+?)(?::(?P<start>\d+)-(?P<end>\d+)|#e:\d+(?:-\d+)?)")
"""A search hit's ``source`` (``MEMORY.md:3-7``, ``transcripts/<session>#e:12``) given back as a path."""


def tool_specs() -> list[ToolSpec]:
    """The memory tools offered to providers with tool calling."""
    return [
        ToolSpec(
            name="memory_search",
            description="Search the user's long-term memory (MEMORY.md, memory/ and archived sessions). "
            "Returns ranked passages with their source file and lines.",
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to look for, in natural language"},
                    "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 5},
                },
                "required": ["query"],
            },
        ),
        ToolSpec(
            name="memory_get",
            description="Read lines of a memory file (as returned by memory_search).",
            parameters={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "path relative to the agent workspace, or a "
                             "memory_search result's source as it is"},
                    "start": {"type": "integer", "minimum": 1},
                    "end": {"type": "integer", "minimum": 1},
                },
                "required": ["path"],
            },
        ),
    ]


_TRANSCRIPT_LINE = re.compile(r"^\[e:\d+\] (?:[^\n]*? · )?(?P<who>user|assistant|tool|system): ")
"""A line of ``memory_get("transcripts/<id>")``: ``[e:3] 2026-12-01 17:08 · assistant: text``."""


def handle_tool(mem: MemoryReader, agent_id: str, name: str, args: dict[str, Any], *,
                history: str = "user") -> str | None:
    """Run a memory tool (blocking; the engine calls it in a thread). None if ``name`` isn't ours.

    ``history`` is ``memory.recall_history``: the tools show the model other sessions' messages
    exactly as auto-recall would (consented memory first; by default only the user's own words).

    Raises:
        ValueError: on bad arguments (the engine turns it into a tool error result).
    """
    if name == "memory_search":
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ValueError("memory_search needs a non-empty 'query' string")
        k = args.get("k", 5)
        if not isinstance(k, int) or isinstance(k, bool):
            raise ValueError("'k' must be an integer")
        want = max(1, min(k, MAX_K))
        found = mem.search(query, agent_id=agent_id, k=min(MAX_K, want * 3))
        kept = [h for h in found if history_admits(h.kind, h.speaker, history)]
        hits = sorted(kept, key=lambda h: recall_rank(h.kind))[:want]  # stable: rank within a kind
        # A transcript passage is history: who said it and when, never a bare fact.
        return json.dumps(
            [{"id": h.id, "score": round(h.score, 4), "kind": h.kind, "source": h.location, "scope": h.scope,
              **({"speaker": h.speaker, "said_on": h.said_on} if h.speaker else {}),
              "text": redact_secrets(h.text)} for h in hits],
            ensure_ascii=False,
        )
    if name == "memory_get":
        path = args.get("path")
        if not isinstance(path, str) or not path:
            raise ValueError("memory_get needs a 'path' string")
        start, end = args.get("start"), args.get("end")
        loc = _LOCATION.fullmatch(path)
        if loc and start is None and end is None:  # the model passed memory_search's "source" as it is
            path = loc["path"]
            if loc["start"]:
                start, end = int(loc["start"]), int(loc["end"])
        lines = None
        if start is not None or end is not None:
            if not isinstance(start, int) or not isinstance(end, int) or start < 1 or end < start:
                raise ValueError("'start' and 'end' must be integers with 1 <= start <= end")
            lines = (start, end)
        if path.startswith("transcripts/"):
            if history == "off":
                raise ValueError("transcripts are not available: memory.recall_history is off")
            rows = str(mem.get(agent_id, path, lines)).splitlines()
            if history == "user":
                rows = [r for r in rows if (m := _TRANSCRIPT_LINE.match(r)) is None or m["who"] == "user"]
            note = ("(a transcript of an earlier session: what was said, not verified facts"
                    + ("; only the user's own messages)" if history == "user" else
                       "; assistant lines are earlier replies, not facts)"))
            return redact_secrets("\n".join([note, *rows]))
        # A memory file is the user's and may hold a secret; what the model reads never does.
        return redact_secrets(str(mem.get(agent_id, path, lines)))
    return None
