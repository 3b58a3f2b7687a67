"""What the SDK-backed remote providers share: the lazily created client and the retried stream.

Subclasses say how to build the client (:meth:`SdkProvider._make_client`, run in a thread: the SDK
imports take seconds on a busy machine), which key to use (:meth:`SdkProvider._client_key`), the
request body and one streaming attempt.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from neotask_tui.providers._retry import with_retries
from neotask_tui.providers.base import ChatMessage, ProviderError, StreamEvent, TextDelta, ToolCallEvent, ToolSpec
from neotask_tui.text.secrets import HYPHEN_LOOKALIKES, IGNORABLE, redact_secrets
from neotask_tui.text.trees import map_strings

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

    def _keys(self) -> list[str]:
        """The configured keys, each also without its public prefix (:func:`key_body`): an endpoint
        that sends back "TESTKEYabc…" without "sk-proj-" sends back the secret all the same."""
        keys = [k for k in {self._api_key or "", self._used_key} if len(k) >= 6]
        return keys + [b for k in keys if (b := key_body(k)) != k and b not in keys]

    async def _masking(self, events: AsyncIterator[StreamEvent]) -> AsyncGenerator[StreamEvent, None]:
        """Pass the events through without the configured API key: an endpoint may echo the key it
        got (in its error body, or in the reply itself), and the reply is printed, stored in the
        transcript and indexed. A delta's tail that may be the start of the key waits for the next
        delta, so a key split across deltas is masked too."""
        held = ""
        try:
            # aclosing: a consumer that stops (Esc) closes the HTTP stream now, not when the
            # abandoned generators happen to be collected.
            async with aclosing(events):  # type: ignore[type-var]
                async for item in events:
                    keys = self._keys()
                    if isinstance(item, TextDelta) and keys:
                        text = _without_keys(held + item.text, keys)
                        cut = len(text) - _key_prefix_tail(text, keys)
                        held = text[cut:]
                        if text[:cut]:
                            yield dataclasses.replace(item, text=text[:cut])
                        continue
                    if held:
                        yield TextDelta(held)
                        held = ""
                    if isinstance(item, ToolCallEvent) and keys:
                        # every string of the arguments, mapping keys included
                        args = map_strings(item.call.arguments, functools.partial(_without_keys, keys=keys))
                        if args != item.call.arguments:
                            item = dataclasses.replace(item, call=dataclasses.replace(item.call, arguments=args))
                    yield item
            if held:
                yield TextDelta(held)
        except ProviderError as e:
            masked = self.mask(str(e))
            if masked == str(e):
                raise
            raise ProviderError(e.kind, masked, retry_after=e.retry_after, retryable=e.retryable) from None

    def mask(self, text: str) -> str:
        """``text`` without the API key this provider uses, URL credentials or other secrets."""
        text = _without_keys(text, self._keys())
        text = _URL_USERINFO.sub(r"\1[REDACTED]@", text)
        return redact_secrets(text)


# An endpoint may send the key back changed in ways a reader undoes at a glance: another case,
# full-width letters, a hyphen look-alike, or invisible characters and line breaks between its
# characters. Each of them still reads as the key.
_HYPHENS = "-\u2013\u2014" + HYPHEN_LOOKALIKES  # the redactor's look-alikes, and en and em dashes
_GAP = f"(?:{IGNORABLE.pattern}|\\s)*"


def _char_class(c: str) -> str:
    if c == "-":
        return f"[{_HYPHENS}]"
    forms = {c, c.lower(), c.upper()}
    forms |= {chr(ord(f) + 0xFEE0) for f in forms if "!" <= f <= "~"}  # full-width forms
    return "[" + "".join(re.escape(f) for f in sorted(forms)) + "]"


@functools.lru_cache(maxsize=16)
def _key_pattern(key: str) -> re.Pattern[str]:
    return re.compile(_GAP.join(_char_class(c) for c in key))


def _norm(c: str) -> str:
    """One character as the key comparison reads it ("" for an invisible one or a space)."""
    if IGNORABLE.match(c) or c.isspace():
        return ""
    if c in _HYPHENS:
        return "-"
    if "\uff01" <= c <= "\uff5e":
        c = chr(ord(c) - 0xFEE0)
    return c.lower()


_PREFIX_PART = re.compile(r"[A-Za-z0-9]{1,8}[-_]")
KEY_BODY_MIN = 16
"""A key's body shorter than this is not masked on its own (too likely to be ordinary text)."""


def key_body(key: str) -> str:
    """``key`` without its public prefix: the short leading parts ending in ``-`` or ``_``
    (``sk-``, ``proj-``, ``ant-``, ``api03-``, ``gsk_``), as long as what stays has at least
    :data:`KEY_BODY_MIN` characters; the key itself when it has no such prefix."""
    body = key
    while (m := _PREFIX_PART.match(body)) and len(body) - m.end() >= KEY_BODY_MIN:
        body = body[m.end():]
    return body


def _without_keys(text: str, keys: list[str]) -> str:
    for key in keys:
        text = _key_pattern(key).sub("[REDACTED:api_key]", text)
    return text


def _key_prefix_tail(text: str, keys: list[str]) -> int:
    """Length of the longest end of ``text`` that may be the start of one of ``keys`` (read as
    :func:`_norm` reads it; 0: none), so that it waits for the rest of the key."""
    best = 0
    longest = max(len(k) for k in keys)
    tail: list[tuple[int, str]] = []  # (position, normalised char), the last ones, newest last
    for i in range(len(text) - 1, -1, -1):
        c = _norm(text[i])
        if c:
            tail.insert(0, (i, c))
            if len(tail) >= longest:
                break
    for key in keys:
        low = "".join(_norm(c) for c in key)
        for n in range(min(len(low) - 1, len(tail)), 0, -1):
            if low.startswith("".join(ch for _, ch in tail[-n:])):
                best = max(best, len(text) - tail[-n][0])
                break
    return best
