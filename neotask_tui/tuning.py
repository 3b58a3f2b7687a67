"""Every tuned constant of the engine and memory, in one place, each a documented ``Final``.

A *tuned* constant is a number chosen by measurement (a weight, a share, a floor, a cap picked on a
bench), as opposed to a user setting (those are in :mod:`neotask_tui.config`, with ranges) or a
fact (a wire-protocol limit, a file format). Each entry says what it does and how it was chosen;
the figures that chose it are in ``CHANGELOG.md`` next to the change that set it. Changing one is
a behaviour change: the benches in ``bench/`` must be rerun and quoted.

Sections follow the layers (text, memory, engine parts). This module imports nothing of ours.
"""

from __future__ import annotations

from typing import Final

# ---------------------------------------------------------------------------------------------
# text: tokens, lexical terms, BM25
# ---------------------------------------------------------------------------------------------

BM25_K1: Final = 1.2
"""BM25 term-frequency saturation (:mod:`neotask_tui.text.bm25`, both indexes): LanceDB's native
FTS value, which the in-process scores match."""
BM25_B: Final = 0.75
"""BM25 length normalisation (both indexes): LanceDB's native FTS value."""

# ---------------------------------------------------------------------------------------------
# memory: indexing, hybrid search, fusion, recall floors
# ---------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------
# engine.context: budget shares of the context sections
# ---------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------
# engine.compaction: the guard, summary shares, the compactor
# ---------------------------------------------------------------------------------------------

SUMMARY_MAX_TOKENS: Final = 1500
"""Reply budget asked of the model for one summary (:mod:`neotask_tui.engine.compaction.compactor`)."""
SUMMARY_PROMPT_SHARE: Final = 0.6
"""Share of the model window a summarization prompt's events may take (rolling chunks beyond)."""
SUMMARY_CHUNK_MIN_TOKENS: Final = 512
"""Floor of a summarization chunk (tokens of events), however small the window."""
SUMMARY_SHARE: Final = 0.1
"""Soft cap of an extractive summary: this share of the usable window (and no more than the raw
recent window, ``compaction.keep_recent_tokens``). Required lines (identifiers, negated constraints)
may exceed it; the rest of the window goes to the raw recent messages and to recalled history,
which quotes the compacted turns themselves."""
SUMMARY_MIN_TOKENS: Final = 200
"""Floor of that cap for very small windows."""
GUARD_CONSTRAINT_COVERAGE: Final = 0.7
"""The guard counts a constraint as covered by a summary line sharing this share of its content
words (:mod:`neotask_tui.engine.compaction.guard`)."""
GUARD_ITEM_COVERAGE: Final = 0.6
"""The same share for the other items (decisions, asks, questions, assumptions)."""
GUARD_INVERSION_OVERLAP: Final = 0.7
"""A summary line without a negation that shares this share of a negated constraint's content words
(and is at most twice as long) restates it inverted ("use Redis" for "never use Redis"): removed."""

# ---------------------------------------------------------------------------------------------
# engine.recall: memory recall and recall of compacted-away turns
# ---------------------------------------------------------------------------------------------

ARCHIVE_MEMORY_FEEDBACK_DOCS: Final = 10
"""Pseudo-relevance feedback for the memory service's search of the archived transcripts (its
``RankParams.prf_docs``, off in its own defaults; :mod:`neotask_tui.engine.recall.lineage`): the query
vector moves toward its ten best hits for a second dense pass. Recall of compacted-away turns fills
the window with some sixty turns, so it wants depth: a list question ("what activities does Melanie
do?") finds the first few of its answers by their words, the rest only near those. LoCoMo dev,
context bench (4k budget, question-only reruns): answerability 0.900 → 0.907, 5 feedback docs 0.904,
20 0.905; a heavier centroid (0.5) 0.897. The top ten barely move (memory recall R@5 0.740 → 0.737,
R@10 0.817 → 0.818), so the user-facing search keeps it off."""
ARCHIVE_MEMORY_HIT_TOKENS: Final = 12
"""Hits asked of that search: one per this many tokens of the turns' budget (a short turn's cost)..."""
ARCHIVE_MEMORY_MIN_HITS: Final = 20
"""...and at least this many."""
ARCHIVE_FEEDBACK_SEEDS: Final = 5
"""The lineage's own ranking (:class:`~neotask_tui.engine.recall.archive.ArchiveRecall`): best turns
of the first round that seed its lexical pseudo-relevance-feedback round."""
ARCHIVE_FEEDBACK_TERMS: Final = 8
"""Terms that feedback round adds to the query (the seeds' most distinctive ones)."""
ARCHIVE_FEEDBACK_WEIGHT: Final = 0.5
"""Weight of an added feedback term (a query term weighs 1)."""
ARCHIVE_FEEDBACK_MAX_SHARE: Final = 50
"""A feedback term must be rarer than in about one turn out of this many (``idf > ln(1 + N / 50)``)."""
ARCHIVE_RRF_K: Final = 60
"""Reciprocal-rank fusion constant of the archive rankings (``1 / (k + rank)``; the usual 60)."""
ARCHIVE_RRF_DEPTH: Final = 400
"""Entries of each ranking that reciprocal-rank fusion reads."""

# ---------------------------------------------------------------------------------------------
# engine.state and engine.session: state, inbox, the turn runner
# ---------------------------------------------------------------------------------------------

__all__ = ["Final"]
