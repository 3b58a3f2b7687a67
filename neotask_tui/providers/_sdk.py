"""What the SDK-backed remote providers share: the lazily created client and the retried stream.

Subclasses say how to build the client (:meth:`SdkProvider._make_client`, run in a thread: the SDK
imports take seconds on a busy machine), which key to use (:meth:`SdkProvider._client_key`), the
request body and one streaming attempt.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from neotask_tui.providers._retry import with_retries
from neotask_tui.providers.base import ChatMessage, ProviderError, StreamEvent, ToolSpec
from neotask_tui.text.secrets import redact_secrets

_URL_USERINFO = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/@]+@")


class SdkProvider:
    """Base of :class:`~neotask_tui.providers.openai_compat.OpenAICompatProvider` and
    :class:`~neotask_tui.providers.anthropic.AnthropicProvider`."""

    context_window: int | None = None
    """Remote models: the model table's window applies."""
    _used_key = ""
    """The key the client was built with (from the settings or the environment)."""

    async def load(self, progress: Callable[[str], None] | None = None) -> None:
        """Nothing to load: a remote API (the client is made on the first call)."""

    def _init_common(
        self, *, api_key: str | None, timeout: float, max_retries: int, max_tokens: int, backoff_base: float
    ) -> None:
        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max(0, max_retries)
        self._max_tokens = max_tokens
        self._backoff_base = backoff_base
        self._client: Any = None

    def _client_key(self) -> str:
        """The key the client is built with (raise ``ProviderError("auth", ...)`` when missing)."""
        raise NotImplementedError

    def _make_client(self, key: str) -> Any:
        """Import the SDK and build its async client (runs in a worker thread)."""
        raise NotImplementedError

    def request_body(
        self, messages: list[ChatMessage], *, tools: list[ToolSpec] | None = None, max_tokens: int | None = None
    ) -> dict[str, Any]:
        """The exact JSON body :meth:`stream` sends."""
        raise NotImplementedError

    def _attempt(self, payload: dict[str, Any]) -> AsyncGenerator[StreamEvent, None]:
        """One streaming request."""
        raise NotImplementedError

    async def _get_client(self) -> Any:
        """The SDK client, created on first use; the slow SDK import runs in a thread."""
        if self._client is None:
            key = self._client_key()
            self._used_key = key
            client = await asyncio.to_thread(self._make_client, key)
            if self._client is None:
                self._client = client
        return self._client

    def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream a reply: text deltas, tool calls, then one :class:`StreamEnd` with usage.

        Raises:
            ProviderError: on failure, after bounded retries of what is safe to retry.
        """
        payload = self.request_body(messages, tools=tools, max_tokens=max_tokens)
        return self._masking(with_retries(
            lambda: self._attempt(payload), max_retries=self._max_retries, backoff_base=self._backoff_base
        ))

    async def _masking(self, events: AsyncIterator[StreamEvent]) -> AsyncGenerator[StreamEvent, None]:
        """Pass the events through; an error's message never shows the configured API key or URL
        credentials (a server may echo the Authorization header back in its error body)."""
        try:
            # aclosing: a consumer that stops (Esc) closes the HTTP stream now, not when the
            # abandoned generators happen to be collected.
            async with aclosing(events):  # type: ignore[type-var]
                async for item in events:
                    yield item
        except ProviderError as e:
            masked = self.mask(str(e))
            if masked == str(e):
                raise
            raise ProviderError(e.kind, masked, retry_after=e.retry_after, retryable=e.retryable) from None

    def mask(self, text: str) -> str:
        """``text`` without the API key this provider uses, URL credentials or other secrets."""
        for key in {self._api_key or "", self._used_key}:
            if len(key) >= 6:
                text = text.replace(key, "[REDACTED:api_key]")
        text = _URL_USERINFO.sub(r"\1[REDACTED]@", text)
        return redact_secrets(text)
