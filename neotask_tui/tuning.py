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

# ---------------------------------------------------------------------------------------------
# engine.recall: memory recall and recall of compacted-away turns
# ---------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------
# engine.state and engine.session: state, inbox, the turn runner
# ---------------------------------------------------------------------------------------------

__all__ = ["Final"]
