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
import unicodedata
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
        once the run it belongs to is known), or the start of a token that may hold it (up to
        :data:`TOKEN_HOLD` characters), waits for the next delta, so a key split across deltas, and the
        token it sits in, are masked whole; what is held is sent, masked, before anything else and
        when the stream ends or fails."""
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
                        # the key's run may go on, and so may the token it would be masked with
                        cut = min(len(raw) - _key_prefix_tail(raw, keys), _token_tail_start(raw))
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
TOKEN_HOLD = 512
"""How many characters of a token (:func:`_in_token`) at the end of a streamed delta wait for the rest
of it, so a key found in it masks the token whole; a longer run (a pasted blob) is sent as it comes,
its part in each delta masked on its own."""
_SEPARATORS = frozenset("-_\uff3f" + HYPHEN_LOOKALIKES)
"""What joins the parts of a token (``ghp_…``, ``glpat-…``)."""
_KEY_PREFIXES = frozenset({
    "sk", "pk", "rk", "ant", "api03", "proj", "svcacct", "ghp", "gho", "ghu", "ghs", "ghr", "github", "pat",
    "glpat", "gldt", "glrt", "glptt", "glsoat", "xoxa", "xoxb", "xoxe", "xoxo", "xoxp", "xoxr", "xoxs", "xapp",
    "hf", "npm", "pypi", "dop", "doo", "dor", "shpat", "shpss", "shpca", "sq0atp", "sq0csp",
})
"""The public prefixes of known key formats, lower case: a part of a token a key's run sits in, though
it has no secret's shape (``ghp_`` + the run)."""


def _in_word(c: str) -> bool:
    """Whether ``c`` belongs to one part of a token: a letter or digit of any script, an invisible
    character or a combining mark."""
    return c.isalnum() or bool(IGNORABLE.match(c)) or unicodedata.combining(c) > 0


def _in_token(c: str) -> bool:
    """Whether ``c`` may belong to a token such as a key: a part's character (:func:`_in_word`) or a
    hyphen or underscore between parts. A space, a quote, ``=``, ``:``, ``/``, ``.`` or a bracket ends
    one, so a word beside a key is kept."""
    return _in_word(c) or c in _SEPARATORS


def _secret_part(part: str) -> bool:
    """Whether ``part`` of a token, beyond a hyphen or underscore from a key's run, belongs to the same
    secret: it holds a digit, a capital after a small letter's word start (``Qw7Er``, ``aBcD``), or it is
    a known public prefix (``ghp``, ``glpat``); not a name such as ``NEOTASK`` or ``my``."""
    word = "".join(c for c in part if c.isalnum())
    return (any(c.isdigit() for c in word) or (any(c.islower() for c in word) and any(c.isupper() for c in word[1:]))
            or word.lower() in _KEY_PREFIXES)


def _grow(text: str, start: int, end: int, floor: int) -> tuple[int, int]:
    """The span ``[start, end)`` of a key's run grown to the token it sits in (not before ``floor``):
    over its part at each edge, then across each hyphen or underscore into the next part while that
    part is of the secret (:func:`_secret_part`)."""
    while start > floor and _in_word(text[start - 1]):
        start -= 1
    while True:
        sep = start
        while sep > floor and text[sep - 1] in _SEPARATORS:
            sep -= 1
        part = sep
        while part > floor and _in_word(text[part - 1]):
            part -= 1
        if sep == start or part == sep or not _secret_part(text[part:sep]):
            break
        start = part
    n = len(text)
    while end < n and _in_word(text[end]):
        end += 1
    while True:
        sep = end
        while sep < n and text[sep] in _SEPARATORS:
            sep += 1
        part = sep
        while part < n and _in_word(text[part]):
            part += 1
        if sep == end or part == sep or not _secret_part(text[sep:part]):
            break
        end = part
    return start, end


def _token_tail_start(text: str) -> int:
    """Where the run of token characters (:func:`_in_token`) that ends ``text`` starts: ``len(text)``
    when there is none or it is longer than :data:`TOKEN_HOLD`."""
    i = len(text)
    stop = max(0, i - TOKEN_HOLD - 1)
    while i > stop and _in_token(text[i - 1]):
        i -= 1
    return len(text) if len(text) - i > TOKEN_HOLD else i


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
    through the changes above) replaced by ``[REDACTED:api_key]``, with the rest of the token it sits
    in (:func:`_grow`): a run inside a longer token (``ghp_`` + 16 characters of the key + more)
    masks the whole token, never leaving its other characters (another secret's) beside the mask; a
    name joined to it (``NEOTASK_X_`` + the run) is kept."""
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
    grown: list[list[int]] = []  # in the text, each grown to its whole token (:func:`_grow`); one token, one mask
    for a, b in merged:
        start, end = where[a], where[b - 1] + 1
        floor = grown[-1][1] if grown else 0
        if grown and start <= floor:  # in (or touching) the token masked before
            grown[-1][1] = _grow(text, floor, max(floor, end), floor)[1]
        else:
            grown.append(list(_grow(text, start, end, floor)))
    out: list[str] = []
    last = 0
    for start, end in grown:
        out.append(text[last:start])
        out.append(API_KEY_MARK)
        last = end
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
