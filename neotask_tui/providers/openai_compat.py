"""OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter).

Uses the official ``openai`` SDK (imported lazily: it is slow to import). Streaming asks for a final
usage chunk (``stream_options.include_usage``); ``prompt_tokens_details.cached_tokens`` becomes
``cache_read_tokens`` and ``input_tokens`` is the uncached rest. The SDK's retries are off; ours
(:mod:`neotask_tui.providers._retry`) never retry once text was streamed.
"""

from __future__ import annotations

import json
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

if TYPE_CHECKING:
    from neotask_tui.config import Settings

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
_FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "function_call": "tool_calls"}


def to_openai_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """Convert our messages to the chat-completions wire format."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content})
        elif m.role == "assistant" and m.tool_calls:
            out.append({
                "role": "assistant",
                "content": m.content or None,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
                    }
                    for c in m.tool_calls
                ],
            })
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Convert tool specs to the chat-completions ``tools`` parameter."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def _cause_text(e: BaseException) -> str:
    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or "refused" in str(seen).lower():
            return "connection refused"
        seen = seen.__cause__ or seen.__context__
    return str(e.__cause__ or e)


class OpenAICompatProvider(SdkProvider):
    """A provider speaking the OpenAI chat-completions API.

    Attributes:
        name: ``openai`` or ``ollama`` (used for the model table lookup).
        model: The model name sent to the server.
        base_url: The server's base URL (ending in ``/v1``).
    """

    supports_tools = True

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        name: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_tokens: int = 512,
        backoff_base: float = 0.5,
        key_env: str = "OPENAI_API_KEY",
    ) -> None:
        """Configure the provider; the HTTP client is created on first use.

        Args:
            model: Model name.
            name: Provider name reported to the engine.
            base_url: Server base URL; None means OpenAI's.
            api_key: API key; servers other than OpenAI's accept a placeholder.
            timeout: Per-request network timeout in seconds.
            max_retries: Bounded retries on 429, 5xx and timeouts before anything was streamed.
            max_tokens: Default reply limit when ``stream`` gets none.
            backoff_base: First backoff delay in seconds (doubles per retry) absent Retry-After.
            key_env: The env var named in "check your API key" messages.
        """
        self.name = name
        self.model = model
        self.base_url = (base_url or OPENAI_BASE_URL).rstrip("/")
        self._init_common(api_key=api_key, timeout=timeout, max_retries=max_retries, max_tokens=max_tokens,
                          backoff_base=backoff_base)
        self._key_env = key_env

    @classmethod
    def from_settings(
        cls, settings: Settings, *, name: str, model: str, base_url: str | None, api_key: str | None
    ) -> OpenAICompatProvider:
        """Build from settings plus a resolved model/base URL/key (see ``selection``)."""
        p = settings.provider
        return cls(
            model=model, name=name, base_url=base_url, api_key=api_key, timeout=p.timeout_seconds,
            max_retries=p.max_retries, max_tokens=p.max_tokens,
        )

    @property
    def is_official(self) -> bool:
        """Whether this talks to api.openai.com (which wants ``max_completion_tokens``)."""
        return self.base_url == OPENAI_BASE_URL

    def _client_key(self) -> str:
        if self._api_key:
            return self._api_key
        if self.is_official:
            raise ProviderError("auth", f"no API key set: check your API key ({self._key_env})")
        return "not-needed"  # local servers ignore it, the SDK insists on one

    def _make_client(self, key: str) -> Any:
        import openai  # seconds on a busy machine: never on the event loop (see SdkProvider)

        return openai.AsyncOpenAI(api_key=key, base_url=self.base_url, max_retries=0, timeout=self._timeout)

    def request_body(
        self, messages: list[ChatMessage], *, tools: list[ToolSpec] | None = None, max_tokens: int | None = None
    ) -> dict[str, Any]:
        """The exact JSON body :meth:`stream` sends (also useful to show the user what is sent)."""
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        # OpenAI's newer models only accept max_completion_tokens; other servers know max_tokens.
        payload["max_completion_tokens" if self.is_official else "max_tokens"] = max_tokens or self._max_tokens
        if tools:
            payload["tools"] = to_openai_tools(tools)
        return payload

    async def _attempt(self, payload: dict[str, Any]) -> AsyncGenerator[StreamEvent, None]:
        client = await self._get_client()
        try:
            stream = await client.chat.completions.create(**payload)
        except ProviderError:
            raise
        except Exception as e:
            raise self._map_error(e) from e
        calls: dict[int, dict[str, str]] = {}
        usage: Usage | None = None
        finish: str | None = None
        try:
            async for chunk in stream:
                if getattr(chunk, "usage", None) is not None:
                    usage = self._usage(chunk.usage)
                for choice in getattr(chunk, "choices", None) or []:
                    delta = choice.delta
                    if delta is not None:
                        if delta.content:
                            yield TextDelta(str(delta.content))
                        for tc in delta.tool_calls or []:
                            acc = calls.setdefault(int(tc.index or 0), {"id": "", "name": "", "args": ""})
                            acc["id"] = tc.id or acc["id"]
                            if tc.function is not None:
                                acc["name"] += tc.function.name or ""
                                acc["args"] += tc.function.arguments or ""
                    if choice.finish_reason:
                        finish = str(choice.finish_reason)
        except ProviderError:
            raise
        except Exception as e:
            raise self._map_error(e) from e
        finally:
            await stream.close()
        if finish is None:
            raise ProviderError(
                "protocol", "the server ended the stream before the reply was complete", retryable=True
            )
        for i in sorted(calls):
            acc = calls[i]
            yield ToolCallEvent(tool_call(acc["id"] or f"call_{i}", acc["name"], acc["args"]))
        yield StreamEnd(usage=usage, stop_reason=_FINISH.get(finish, finish))

    @staticmethod
    def _usage(u: Any) -> Usage:
        prompt = int(getattr(u, "prompt_tokens", 0) or 0)
        details = getattr(u, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
        return Usage(
            input_tokens=max(0, prompt - cached),
            output_tokens=int(getattr(u, "completion_tokens", 0) or 0),
            cache_read_tokens=cached,
        )

    def _map_error(self, e: Exception) -> ProviderError:
        import openai

        where = self.base_url
        if isinstance(e, openai.APITimeoutError):
            return ProviderError("timeout", f"{where} did not answer within {self._timeout:g} s", retryable=True)
        if isinstance(e, openai.APIConnectionError):
            return ProviderError("connection", f"cannot reach {where}: {_cause_text(e)}", retryable=True)
        if isinstance(e, openai.APIStatusError):
            status = e.status_code
            detail = _error_detail(e)
            if status in (401, 403):
                return ProviderError("auth", f"{where} refused the request ({status}): check your API key "
                                     f"({self._key_env})")
            if status == 429:
                quota = "insufficient_quota" in detail
                return ProviderError(
                    "rate_limit", f"rate limited by {where}: {detail}",
                    retry_after=parse_retry_after(e.response.headers), retryable=not quota,
                )
            if status == 404:
                return ProviderError("model", f"model {self.model!r} not found at {where}: {detail}")
            if looks_like_context_overflow(detail):
                return ProviderError("context_overflow", f"the prompt does not fit {self.model}: {detail}")
            if status >= 500:
                return ProviderError("server", f"{where} failed ({status}): {detail}", retryable=True)
            return ProviderError("bad_request", f"{where} rejected the request ({status}): {detail}")
        if isinstance(e, openai.APIResponseValidationError):
            return ProviderError("protocol", f"malformed reply from {where}: {e}", retryable=True)
        if isinstance(e, openai.APIError):  # an error object sent inside the stream
            if looks_like_context_overflow(str(e)):
                return ProviderError("context_overflow", f"the prompt does not fit {self.model}: {e}")
            return ProviderError("server", f"{where} reported an error mid-stream: {e}", retryable=True)
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
            parts = [str(err.get(k)) for k in ("code", "type", "message") if err.get(k)]
            if parts:
                return ": ".join(parts)
    return str(getattr(e, "message", e))
