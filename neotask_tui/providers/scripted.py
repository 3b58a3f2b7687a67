"""The ``scripted`` provider: a testing aid, never a default.

Replies (and their usage, tool calls and faults) are queued by tests with :meth:`ScriptedProvider.queue`
or read from a JSON-lines file named by ``NEOTASK_SCRIPT`` / ``provider.script``. Each line::

    {"text": "Hello!", "usage": {"input": 12, "output": 3, "cache_read": 0, "cache_write": 0},
     "tool_calls": [{"id": "c1", "name": "update_session_state", "arguments": {...}}],
     "error": {"kind": "connection", "after_chars": 5, "message": "cut"}, "delay": 0.0}

``usage`` omitted = the provider reports nothing (the engine then estimates and labels it so).
When the queue is empty the reply is ``"(scripted) <the last user message>"`` so demos and smoke
tests still get a deterministic answer.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neotask_tui.config import Settings
from neotask_tui.providers.base import (
    ChatMessage,
    ProviderError,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
    Usage,
)


@dataclass
class ScriptedReply:
    """One queued reply."""

    text: str = ""
    usage: dict[str, Any] | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    delay: float = 0.0
    chunk_chars: int = 4

    @classmethod
    def from_obj(cls, d: Any) -> ScriptedReply:
        """Build from a dict (or a bare string = text)."""
        if isinstance(d, str):
            return cls(text=d)
        if not isinstance(d, dict):
            raise ValueError("a scripted reply must be an object or a string")
        return cls(
            text=str(d.get("text", "")), usage=d.get("usage"), tool_calls=list(d.get("tool_calls") or []),
            error=d.get("error"), delay=float(d.get("delay", 0.0)), chunk_chars=int(d.get("chunk_chars", 4)),
        )


class ScriptedProvider:
    """Replies queued by tests or read from a script file."""

    name = "scripted"
    supports_tools = True
    context_window: int | None = None

    async def load(self, progress: Callable[[str], None] | None = None) -> None:
        """Nothing to load (the script was read when the provider was built)."""

    def __init__(self, replies: list[ScriptedReply] | None = None, model: str = "scripted") -> None:
        self.model = model
        self._queue: deque[ScriptedReply] = deque(replies or [])
        self.calls: list[list[ChatMessage]] = []
        self.tools_seen: list[list[ToolSpec] | None] = []

    @classmethod
    def from_settings(cls, settings: Settings) -> ScriptedProvider:
        """Build from ``settings.provider`` (reads ``script`` if set)."""
        path = settings.provider.script
        model = settings.provider.model or "scripted"
        return cls(cls.read_script(Path(path)) if path else [], model=model)

    @staticmethod
    def read_script(path: Path) -> list[ScriptedReply]:
        """Read a JSON-lines (or JSON list) script file.

        Raises:
            UserError: the file cannot be read or is not a script (one line naming the file).
        """
        from neotask_tui.errors import UserError

        where = f"scripted provider script {str(path)!r} (NEOTASK_SCRIPT / provider.script)"
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{where}: not valid UTF-8") from None
        except OSError as e:
            raise UserError(f"{where}: {e.strerror or type(e).__name__}") from None
        stripped = text.strip()
        n = 0
        try:
            if stripped.startswith("["):
                items = json.loads(stripped)
                if not isinstance(items, list):
                    raise ValueError("not a list")
                return [ScriptedReply.from_obj(o) for o in items]
            out: list[ScriptedReply] = []
            for line in text.splitlines():
                n += 1
                if line.strip():
                    out.append(ScriptedReply.from_obj(json.loads(line)))
            return out
        except (ValueError, TypeError, RecursionError) as e:
            at = f" line {n}" if n else ""
            raise UserError(f"{where}{at}: {str(e).splitlines()[0][:200] if str(e) else 'bad reply'}") from None

    def queue(self, *replies: ScriptedReply | str | dict[str, Any]) -> None:
        """Queue replies for the next calls."""
        for r in replies:
            self._queue.append(r if isinstance(r, ScriptedReply) else ScriptedReply.from_obj(r))

    @property
    def pending(self) -> int:
        """How many queued replies are left."""
        return len(self._queue)

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream the next queued reply."""
        self.calls.append(list(messages))
        self.tools_seen.append(tools)
        if self._queue:
            reply = self._queue.popleft()
        else:
            last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
            reply = ScriptedReply(text=f"(scripted) {last_user[:200]}")
        err = reply.error
        limit = int(err.get("after_chars", 0)) if err else None
        sent = 0
        step = max(1, reply.chunk_chars)
        for i in range(0, len(reply.text), step):
            if limit is not None and sent >= limit:
                break
            piece = reply.text[i : i + step]
            if limit is not None:
                piece = piece[: limit - sent]
            if reply.delay:
                await asyncio.sleep(reply.delay)
            else:
                await asyncio.sleep(0)
            sent += len(piece)
            yield TextDelta(piece)
        if err:
            raise ProviderError(
                err.get("kind", "server"), str(err.get("message", "scripted failure")),
                retryable=bool(err.get("retryable", True)),
            )
        for tc in reply.tool_calls:
            yield ToolCallEvent(ToolCall(id=str(tc.get("id", "call")), name=str(tc["name"]),
                                         arguments=dict(tc.get("arguments") or {})))
        usage = Usage.from_dict(reply.usage) if reply.usage is not None else None
        yield StreamEnd(usage=usage, stop_reason="tool_use" if reply.tool_calls else "stop")

    async def aclose(self) -> None:
        """Nothing to release."""
