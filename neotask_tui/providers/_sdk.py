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
from neotask_tui.text.secrets import (
    API_KEY_MARK,
    HYPHEN_LOOKALIKES,
    IGNORABLE,
    TO_LATIN,
    fold_letter_forms,
    redact_secrets,
)
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
        return [k for k in {self._api_key or "", self._used_key} if len(k) >= 6]

    async def _masking(self, events: AsyncIterator[StreamEvent]) -> AsyncGenerator[StreamEvent, None]:
        """Pass the events through without the configured API key: an endpoint may echo the key it
        got (in its error body, or in the reply itself), and the reply is printed, stored in the
        transcript and indexed. A delta's tail that may be part of the key (as typed: it is masked
        once the run it belongs to is known) waits for the next delta, so a key split across deltas is
        masked whole; what is held is sent, masked, before anything else and when the stream ends or
        fails."""
        held = ""  # raw text: the tail that may continue into the next delta
        keys: list[str] = []
        try:
            # aclosing: a consumer that stops (Esc) closes the HTTP stream now, not when the
            # abandoned generators happen to be collected.
            async with aclosing(events):  # type: ignore[type-var]
                async for item in events:
                    keys = self._keys()
                    if isinstance(item, TextDelta) and keys:
                        raw = held + item.text
                        cut = len(raw) - _key_prefix_tail(raw, keys)
                        held = raw[cut:]
                        if raw[:cut]:
                            yield dataclasses.replace(item, text=without_keys(raw[:cut], keys))
                        continue
                    if held:
                        yield TextDelta(without_keys(held, keys))
                        held = ""
                    if isinstance(item, ToolCallEvent) and keys:
                        # every string of the arguments, mapping keys included
                        args = map_strings(item.call.arguments, functools.partial(without_keys, keys=keys))
                        if args != item.call.arguments:
                            item = dataclasses.replace(item, call=dataclasses.replace(item.call, arguments=args))
                    yield item
            if held:
                yield TextDelta(without_keys(held, keys))
        except ProviderError as e:
            if held:  # the partial reply the error keeps ends with it
                yield TextDelta(without_keys(held, keys))
            masked = self.mask(str(e))
            if masked == str(e):
                raise
            raise ProviderError(e.kind, masked, retry_after=e.retry_after, retryable=e.retryable) from None

    def mask(self, text: str) -> str:
        """``text`` without the API key this provider uses, URL credentials or other secrets."""
        text = without_keys(text, self._keys())
        text = _URL_USERINFO.sub(r"\1[REDACTED]@", text)
        return redact_secrets(text)


# An endpoint may send the key back changed in ways a reader undoes at a glance: another case,
# full-width letters, Cyrillic or Greek look-alike letters, hyphens or underscores added or dropped,
# invisible characters, combining marks, another script's digits, spaces, line breaks, quotes or a
# "+" between its characters (a string split in two literals), or only part of it (without its
# public prefix "sk-proj-", its last 28 characters, 18 from its middle). Each still gives the secret
# away: any :data:`KEY_WINDOW` characters of the key in a row, read through those changes, are masked.
KEY_WINDOW = 16
"""How many characters of the key in a row (read as :func:`_norm` reads them) give it away; a key
shorter than this is masked only whole."""
_GAP_CHARS = frozenset("-_\u2013\u2014\"'`+" + HYPHEN_LOOKALIKES)


def _norm(c: str) -> str:
    """One character as the key comparison reads it: "" for one it skips (invisible, a space, a
    hyphen, an underscore, a quote, "+"), else lowercase, full-width and look-alike letters read as
    the Latin letter they look like."""
    if IGNORABLE.match(c) or c.isspace() or c in _GAP_CHARS:
        return ""
    if not c.isascii():  # a combining mark is skipped; another script's digit, a "𝐀" or "ᴀ" read as ASCII
        c = fold_letter_forms(c)
        if not c:
            return ""
    if "\uff01" <= c <= "\uff5e":
        c = chr(ord(c) - 0xFEE0)
    return c.translate(TO_LATIN).lower()


@functools.lru_cache(maxsize=16)
def _key_view(key: str) -> tuple[str, int, frozenset[str]]:
    """The key as read (:func:`_norm`), the window length and every window of it."""
    low = "".join(_norm(c) for c in key)
    w = min(KEY_WINDOW, len(low))
    return low, w, frozenset(low[i:i + w] for i in range(len(low) - w + 1))


def _view(text: str) -> tuple[str, list[int]]:
    """``text`` as read (:func:`_norm`) and, for each character of it, its index in ``text``."""
    chars: list[str] = []
    where: list[int] = []
    for i, c in enumerate(text):
        n = _norm(c)
        if n:
            chars.append(n)
            where.append(i)
    return "".join(chars), where


_SKIPPED = re.compile(IGNORABLE.pattern[:-1] + "".join(re.escape(c) for c in sorted(_GAP_CHARS)) + r"\s]+")
_FULL_WIDTH = str.maketrans({c: chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)})


def _holds_a_window(text: str, keys: list[str]) -> bool:
    """Whether :func:`_view` of ``text`` holds a window of one of ``keys``, found with whole-string
    operations (a 10 MB paste is read in a fraction of a second, not character by character).
    The same reading as :func:`_norm`'s: ``str.lower`` of a whole string differs from that of its
    characters only for a capital sigma (final form at a word's end), read here as a plain one."""
    text = fold_letter_forms(text)
    low = _SKIPPED.sub("", text).translate(_FULL_WIDTH).translate(TO_LATIN).replace("\u03a3", "\u03c3").lower()
    return any(g in low for key in keys for g in _key_view(key)[2])


def without_keys(text: str, keys: list[str]) -> str:
    """``text`` with every run of :data:`KEY_WINDOW` or more characters of one of ``keys`` (read
    through the changes above) replaced by ``[REDACTED:api_key]``."""
    if not text or not keys or not _holds_a_window(text, keys):
        return text
    low, where = _view(text)
    spans: list[tuple[int, int]] = []  # in the view: [start, end), every window of every key found
    for key in keys:
        _, w, grams = _key_view(key)
        if w == 0:
            continue
        spans.extend((i, i + w) for i in range(len(low) - w + 1) if low[i:i + w] in grams)
    if not spans:
        return text
    spans.sort()
    merged: list[list[int]] = []  # overlapping or touching spans as one
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out: list[str] = []
    last = 0
    for a, b in merged:
        out.append(text[last:where[a]])
        out.append(API_KEY_MARK)
        last = where[b - 1] + 1
    out.append(text[last:])
    return "".join(out)


def holds_key(text: str, keys: list[str]) -> bool:
    """Whether ``text`` holds :data:`KEY_WINDOW` characters in a row of one of ``keys`` (a key
    shorter than that: whole), read as the mask reads them (case, look-alikes, hyphens, spaces)."""
    return without_keys(text, [k for k in keys if k]) != text


def _key_prefix_tail(text: str, keys: list[str]) -> int:
    """Length of the longest end of ``text`` that is part of one of ``keys`` (read as :func:`_norm`
    reads it; 0: none), so that it waits for the rest of the run it may begin or continue."""
    best = 0
    longest = max(len(_key_view(k)[0]) for k in keys)
    tail: list[tuple[int, str]] = []  # (position, normalised char), the last ones, newest last
    for i in range(len(text) - 1, -1, -1):
        c = _norm(text[i])
        if c:
            tail.insert(0, (i, c))
            if len(tail) >= longest:
                break
    for key in keys:
        low, _, _ = _key_view(key)
        for n in range(min(len(low), len(tail)), 0, -1):
            if "".join(ch for _, ch in tail[-n:]) in low:
                best = max(best, len(text) - tail[-n][0])
                break
    return best
