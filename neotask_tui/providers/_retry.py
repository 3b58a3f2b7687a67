"""Bounded retries with backoff shared by the remote providers (no SDK imports here).

The SDKs' own retries are off (``max_retries=0``): we retry ourselves so that we never retry after
part of a reply was already streamed to the user, and so Retry-After is honoured uniformly.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing

from neotask_tui.providers.base import ProviderError, StreamEvent, TextDelta, ToolCall, ToolCallEvent

AUTO_RETRY_KINDS = frozenset({"rate_limit", "server", "timeout"})
"""Error kinds retried automatically (when nothing was streamed yet)."""
MAX_RETRY_AFTER = 60.0
"""A server asking us to wait longer than this fails fast instead (the user can retry)."""


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date), if any."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(attempt: int, base: float, retry_after: float | None) -> float:
    """Delay before retry number ``attempt`` (0-based): Retry-After if given, else jittered exponential."""
    if retry_after is not None:
        return min(retry_after, MAX_RETRY_AFTER)
    return min(base * (2**attempt), 30.0) * (0.75 + random.random() / 2)


async def with_retries(
    attempt: Callable[[], AsyncGenerator[StreamEvent, None]],
    *,
    max_retries: int,
    backoff_base: float,
) -> AsyncIterator[StreamEvent]:
    """Run ``attempt`` (one streamed call) with bounded retries.

    Retries only retryable errors in :data:`AUTO_RETRY_KINDS`, at most ``max_retries`` times, and never once a
    text delta or tool call was yielded (the partial reply is the user's to keep).

    Raises:
        ProviderError: the last error, with ``retryable`` telling whether a manual retry may work.
    """
    tries = 0
    while True:
        emitted = False
        try:
            async with aclosing(attempt()) as events:
                async for ev in events:
                    if isinstance(ev, TextDelta | ToolCallEvent):
                        emitted = True
                    yield ev
            return
        except ProviderError as err:
            too_long = err.retry_after is not None and err.retry_after > MAX_RETRY_AFTER
            give_up = emitted or not err.retryable or err.kind not in AUTO_RETRY_KINDS
            if give_up or tries >= max_retries or too_long:
                raise
            await asyncio.sleep(backoff_delay(tries, backoff_base, err.retry_after))
            tries += 1


def tool_call(call_id: str, name: str, raw: str) -> ToolCall:
    """A tool call from its streamed arguments (empty means no arguments).

    Arguments that cannot be read (not JSON, not a JSON object, nested too deeply to decode) make a
    call with :attr:`ToolCall.error` set and no arguments: the turn answers it with an error result
    and the model may try again; the turn itself goes on.
    """
    if not raw.strip():
        return ToolCall(id=call_id, name=name, arguments={})
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        return ToolCall(id=call_id, name=name, arguments={}, error=f"the arguments are not valid JSON: {e}")
    except RecursionError:  # e.g. 100,000 nested arrays: json's decoder recurses per level
        return ToolCall(id=call_id, name=name, arguments={}, error="the arguments are nested too deeply to decode")
    if not isinstance(value, dict):
        return ToolCall(id=call_id, name=name, arguments={}, error="the arguments are not a JSON object")
    return ToolCall(id=call_id, name=name, arguments=value)


CONTEXT_MARKERS = (
    "context_length_exceeded", "context length", "context window", "maximum context", "prompt is too long",
    "too many tokens", "reduce the length", "input is too long",
)


def looks_like_context_overflow(text: str) -> bool:
    """Whether an error message says the prompt does not fit the model's context."""
    low = text.lower()
    return any(m in low for m in CONTEXT_MARKERS)
