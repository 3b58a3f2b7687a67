"""Absolute relevance and "the same text" for auto-recall (pure functions, no I/O).

Ranking scores are relative: each side is normalised by the best hit of the query, so the best
passage for "thanks!" scores as high as the best one for a real question. Auto-recall needs an
absolute floor instead: a passage is recalled only when there is evidence that it is about what the
message asks — most of the message's terms, or a raw cosine at least
:data:`~neotask_tui.tuning.MEMORY_RECALL_MIN_COSINE`. A message that finds nothing above the floor
recalls nothing and spends no tokens on recall.

A passage is covered by another when its words (lower-cased, punctuation dropped, stopwords kept so
"not" counts) appear, in order and contiguous, in the other: the same line in ``MEMORY.md`` and in an
archived transcript, or a message quoted inside a longer memory entry, is one item (the one kept is
the one recall ranks first: consented memory before transcripts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from neotask_tui.text import lexical
from neotask_tui.tuning import MEMORY_RECALL_MIN_COSINE

_C = TypeVar("_C")


def calibrated(cos: _C, offset: float) -> _C:
    """Cosine(s) on the scale every floor is set on: ``(cos - offset) / (1 - offset)``, where
    ``offset`` is the embedding model's cosine of unrelated text (``ModelSpec.cos_offset``; 0 for the
    MiniLM the floors were set on, so its cosines are unchanged). Works on floats and numpy arrays."""
    if not offset:
        return cos
    return (cos - offset) / (1.0 - offset)  # type: ignore[operator, return-value]


def relevant(cosine: float | None, matched: int, query_terms: int,
             floor: float = MEMORY_RECALL_MIN_COSINE) -> bool:
    """Whether a passage clears auto-recall's relevance floor.

    Args:
        cosine: Raw cosine of the passage to the message (``None``: no embeddings, lexical only).
        matched: How many of the message's distinct normalised terms the passage's own text holds.
        query_terms: How many distinct normalised terms the message has.
        floor: The cosine floor.

    Returns:
        True when the passage holds more than half of the message's terms, or its cosine reaches
        ``floor``.
    """
    if query_terms > 0 and 2 * matched > query_terms:
        return True
    return cosine is not None and cosine >= floor


def word_seq(text: str) -> tuple[str, ...]:
    """The lower-cased words of ``text`` (see :func:`neotask_tui.text.lexical.words`), in order."""
    return tuple(lexical.words(text))


def repeats(part: Sequence[str], whole: Sequence[str]) -> bool:
    """Whether the words ``part`` appear, contiguous and in order, in ``whole`` (both from
    :func:`word_seq`); an empty ``part`` never does."""
    n = len(part)
    if n == 0 or n > len(whole):
        return False
    first = part[0]
    p = tuple(part)
    return any(whole[i] == first and tuple(whole[i:i + n]) == p for i in range(len(whole) - n + 1))


def covered(text: str, by: str) -> bool:
    """Whether ``text`` says nothing that ``by`` does not: its words repeat in ``by`` (see the
    module docstring). The same passage from two sources is covered both ways."""
    return repeats(word_seq(text), word_seq(by))
