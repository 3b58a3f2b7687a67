"""Anthropic Messages API through the official ``anthropic`` SDK (imported lazily).

System messages are sent as the separate ``system`` parameter. With prompt caching on, the system
block and the message marked ``ChatMessage.cache=True`` (the end of the stable prefix: system +
summary) carry ``cache_control: {"type": "ephemeral"}``. Usage maps ``input_tokens`` (uncached),
``output_tokens``, ``cache_read_input_tokens`` and ``cache_creation_input_tokens``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from neotask_tui.providers._retry import (
    looks_like_context_overflow,
    parse_retry_after,
    tool_call,
)
from neotask_tui.providers._sdk import SdkProvider
from neotask_tui.providers.base import (
    ChatMessage,
    ProviderError,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    Usage,
)
from neotask_tui.providers.openai_compat import _cause_text

if TYPE_CHECKING:
    from neotask_tui.config import Settings

DEFAULT_MODEL = "claude-haiku-4-5"  # fast and cheap; not on the SDK's deprecation list
_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}
_EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4


def to_anthropic(messages: list[ChatMessage], *, caching: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split our messages into Anthropic's ``system`` blocks and alternating ``messages``.

    Tool results become ``tool_result`` blocks in a user message; consecutive messages of the same
    role are merged (the API wants user/assistant alternation).

    Returns:
        ``(system_blocks, messages)``.
    """
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            if m.content:
                system.append({"type": "text", "text": m.content})
            if caching and m.cache and system:
                system[-1]["cache_control"] = dict(_EPHEMERAL)
            continue
        blocks: list[dict[str, Any]] = []
        if m.role == "tool":
            role = "user"
            blocks.append({"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content})
        else:
            role = m.role
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            for c in m.tool_calls if m.role == "assistant" else []:
                blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments})
        if not blocks:
            continue
        if caching and m.cache:
            blocks[-1]["cache_control"] = dict(_EPHEMERAL)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    if caching and system and not any("cache_control" in b for b in system):
        system[-1]["cache_control"] = dict(_EPHEMERAL)
    if caching:
        _limit_breakpoints(system, out)
    return system, out


def _limit_breakpoints(system: list[dict[str, Any]], messages: list[dict[str, Any]]) -> None:
    """The API rejects more than 4 cache breakpoints: keep the system one and the last ones."""
    marked = [b for b in system if "cache_control" in b]
    marked += [b for m in messages for b in m["content"] if "cache_control" in b]
    for block in marked[1 : max(1, len(marked) - (MAX_BREAKPOINTS - 1))]:
        del block["cache_control"]


class AnthropicProvider(SdkProvider):
    """A provider speaking Anthropic's Messages API.

    Attributes:
        name: Always ``anthropic``.
        model: The model name.
        prompt_caching: Whether the stable prefix is marked for caching.
    """

    name = "anthropic"
    supports_tools = True

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_tokens: int = 512,
        prompt_caching: bool = True,
        backoff_base: float = 0.5,
    ) -> None:
        """Configure the provider; the HTTP client is created on first use.

        Args:
            model: Model name.
            api_key: The API key (``ANTHROPIC_API_KEY``).
            base_url: API base URL; None means Anthropic's.
            timeout: Per-request network timeout in seconds.
            max_retries: Bounded retries on 429, 5xx/529 and timeouts before anything was streamed.
            max_tokens: Default reply limit (the API requires one).
            prompt_caching: Mark the system prompt and the ``cache=True`` message as cacheable.
            backoff_base: First backoff delay in seconds absent Retry-After.
        """
        self.model = model
        self.base_url = base_url.rstrip("/") if base_url else None
        self.prompt_caching = prompt_caching
        self._init_common(api_key=api_key, timeout=timeout, max_retries=max_retries, max_tokens=max_tokens,
                          backoff_base=backoff_base)

    @classmethod
    def from_settings(
        cls, settings: Settings, *, model: str, base_url: str | None, api_key: str | None
    ) -> AnthropicProvider:
        """Build from settings plus a resolved model/base URL/key (see ``selection``)."""
        p = settings.provider
        return cls(
            model=model, api_key=api_key, base_url=base_url, timeout=p.timeout_seconds,
            max_retries=p.max_retries, max_tokens=p.max_tokens, prompt_caching=p.prompt_caching,
        )

    def _client_key(self) -> str:
        if not self._api_key:
            raise ProviderError("auth", "no API key set: check your API key (ANTHROPIC_API_KEY)")
        return self._api_key

    def _make_client(self, key: str) -> Any:
        import anthropic  # seconds on a busy machine: never on the event loop (see SdkProvider)

        return anthropic.AsyncAnthropic(api_key=key, base_url=self.base_url, max_retries=0, timeout=self._timeout)

    def request_body(
        self, messages: list[ChatMessage], *, tools: list[ToolSpec] | None = None, max_tokens: int | None = None
    ) -> dict[str, Any]:
        """The exact JSON body :meth:`stream` sends (also useful to show the user what is sent)."""
        system, msgs = to_anthropic(messages, caching=self.prompt_caching)
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": msgs,
            "max_tokens": max_tokens or self._max_tokens,
            "stream": True,
        }
        if system:
            payload["system"] = system
        if tools:
            payload["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
        return payload

    async def _attempt(self, payload: dict[str, Any]) -> AsyncGenerator[StreamEvent, None]:
        client = await self._get_client()
        try:
            stream = await client.messages.create(**payload)
        except ProviderError:
            raise
        except Exception as e:
            raise self._map_error(e) from e
        usage = Usage()
        stop: str | None = None
        done = False
        tools: dict[int, dict[str, str]] = {}
        try:
            async for ev in stream:
                kind = getattr(ev, "type", None)
                if kind == "message_start":
                    self._merge_usage(usage, ev.message.usage)
                elif kind == "content_block_start":
                    block = ev.content_block
                    if block.type == "tool_use":
                        tools[ev.index] = {"id": block.id, "name": block.name, "args": ""}
                    elif block.type == "text" and getattr(block, "text", ""):
                        yield TextDelta(block.text)
                elif kind == "content_block_delta":
                    delta = ev.delta
                    if delta.type == "text_delta" and delta.text:
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta" and ev.index in tools:
                        tools[ev.index]["args"] += delta.partial_json or ""
                elif kind == "content_block_stop" and ev.index in tools:
                    t = tools.pop(ev.index)
                    yield ToolCallEvent(tool_call(t["id"], t["name"], t["args"]))
                elif kind == "message_delta":
                    stop = getattr(ev.delta, "stop_reason", None) or stop
                    self._merge_usage(usage, ev.usage)
                elif kind == "message_stop":
                    done = True
        except ProviderError:
            raise
        except Exception as e:
            raise self._map_error(e) from e
        finally:
            await stream.close()
        if not done:
            raise ProviderError(
                "protocol", "the server ended the stream before the reply was complete", retryable=True
            )
        yield StreamEnd(usage=usage, stop_reason=_STOP.get(stop or "end_turn", stop or "stop"))

    @staticmethod
    def _merge_usage(usage: Usage, u: Any) -> None:
        """Fold a usage object in; later events carry cumulative numbers, absent fields stay."""
        if u is None:
            return
        for ours, theirs in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read_tokens", "cache_read_input_tokens"),
            ("cache_write_tokens", "cache_creation_input_tokens"),
        ):
            value = getattr(u, theirs, None)
            if value is not None:
                setattr(usage, ours, int(value))

    def _map_error(self, e: Exception) -> ProviderError:
        import anthropic

        where = self.base_url or "api.anthropic.com"
        if isinstance(e, anthropic.APITimeoutError):
            return ProviderError("timeout", f"{where} did not answer within {self._timeout:g} s", retryable=True)
        if isinstance(e, anthropic.APIConnectionError):
            return ProviderError("connection", f"cannot reach {where}: {_cause_text(e)}", retryable=True)
        if isinstance(e, anthropic.APIStatusError):
            status = e.status_code
            detail = _error_detail(e)
            if status in (401, 403) or "authentication_error" in detail or "permission_error" in detail:
                return ProviderError("auth", f"{where} refused the request ({status}): check your API key "
                                     "(ANTHROPIC_API_KEY)")
            if status == 429 or "rate_limit_error" in detail:
                return ProviderError("rate_limit", f"rate limited by {where}: {detail}",
                                     retry_after=parse_retry_after(e.response.headers), retryable=True)
            if status == 404 or "not_found_error" in detail:
                return ProviderError("model", f"model {self.model!r} not found at {where}: {detail}")
            if looks_like_context_overflow(detail):
                return ProviderError("context_overflow", f"the prompt does not fit {self.model}: {detail}")
            if status >= 500 or "overloaded_error" in detail or "api_error" in detail:
                return ProviderError("server", f"{where} failed ({status}): {detail}", retryable=True)
            return ProviderError("bad_request", f"{where} rejected the request ({status}): {detail}")
        return ProviderError("protocol", f"malformed reply from {where}: {type(e).__name__}: {e}", retryable=True)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            await self._client.close()
            self._client = None


def _error_detail(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            parts = [str(err.get(k)) for k in ("type", "message") if err.get(k)]
            if parts:
                return ": ".join(parts)
    return str(getattr(e, "message", e))
