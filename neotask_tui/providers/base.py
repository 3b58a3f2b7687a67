"""The provider Protocol: stream a reply from messages, report usage.

Every provider (local llama.cpp, OpenAI-compatible, Anthropic, scripted) implements
:class:`Provider`. ``stream`` is an async iterator of :data:`StreamEvent` values and always ends with
exactly one :class:`StreamEnd` on success. Failures raise :class:`ProviderError` with a ``kind`` the
engine understands (it keeps the partial reply and marks it ``interrupted``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(slots=True)
class ToolCall:
    """A complete tool call requested by the model."""

    id: str
    name: str
    arguments: dict[str, Any]
    error: str = ""
    """Why the arguments could not be read (not JSON, not an object, nested too deeply), or "": the
    call is then answered with an error result, so the model can try again."""


@dataclass(slots=True)
class ChatMessage:
    """One message sent to a provider.

    ``tool_calls`` is set on assistant messages that called tools; ``tool_call_id``/``name`` on
    ``tool`` role messages carrying a result. ``cache`` marks the end of a stable prefix that
    providers with prompt caching may cache (Anthropic ``cache_control``).
    """

    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    cache: bool = False


@dataclass(slots=True)
class ToolSpec:
    """A tool the model may call (JSON-schema parameters)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class Usage:
    """Token usage of one call. ``reported`` is False when the numbers are our estimates.

    ``input_tokens`` counts *uncached* prompt tokens only (Anthropic's convention; OpenAI's
    ``prompt_tokens`` minus ``cached_tokens``), so the four counters add up and each has one price.
    :attr:`prompt_tokens` is everything the model read.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reported: bool = True

    @property
    def prompt_tokens(self) -> int:
        """All prompt tokens of the call: uncached input + cache read + cache write."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form stored in transcripts."""
        return {
            "input": self.input_tokens,
            "output": self.output_tokens,
            "cache_read": self.cache_read_tokens,
            "cache_write": self.cache_write_tokens,
            "reported": self.reported,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Usage:
        """Inverse of :meth:`to_dict`."""
        return cls(
            input_tokens=int(d.get("input", 0)),
            output_tokens=int(d.get("output", 0)),
            cache_read_tokens=int(d.get("cache_read", 0)),
            cache_write_tokens=int(d.get("cache_write", 0)),
            reported=bool(d.get("reported", True)),
        )


@dataclass(slots=True)
class TextDelta:
    """A piece of reply text."""

    text: str


@dataclass(slots=True)
class ToolCallEvent:
    """The model finished describing a tool call."""

    call: ToolCall


@dataclass(slots=True)
class StreamEnd:
    """End of a successful stream. ``usage`` is None if the provider reported nothing."""

    usage: Usage | None
    stop_reason: str = "stop"


StreamEvent = TextDelta | ToolCallEvent | StreamEnd

ErrorKind = Literal[
    "auth", "rate_limit", "timeout", "connection", "server", "protocol", "context_overflow",
    "bad_request", "model", "cancelled",
]


class ProviderError(Exception):
    """A provider call failed.

    Attributes:
        kind: What failed (drives retry and the user-facing message).
        retry_after: Seconds the server asked us to wait (429), if any.
        retryable: Whether retrying the same call could succeed.
    """

    def __init__(
        self, kind: ErrorKind, message: str, *, retry_after: float | None = None, retryable: bool = False
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.retry_after = retry_after
        self.retryable = retryable


@runtime_checkable
class Provider(Protocol):
    """What the engine needs from a model provider."""

    name: str  # "local" | "openai" | "anthropic" | "scripted"
    model: str
    supports_tools: bool

    @property
    def context_window(self) -> int | None:
        """The context length the model is loaded with (local models), None when the model table says."""
        ...

    async def load(self, progress: Callable[[str], None] | None = None) -> None:
        """Prepare the model (load a local GGUF); ``progress`` gets human-readable steps."""
        ...

    def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream a reply. Raises :class:`ProviderError` on failure."""
        ...

    async def aclose(self) -> None:
        """Release resources (HTTP clients, model handles)."""
        ...
