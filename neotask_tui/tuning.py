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

# engine.state

STATE_CLASSIFY_MAX_CHARS: Final = 20_000
"""Only this much of a user message is classified (a huge paste is data, not statements).

Chosen by the fault suite (``tests/faults/hostile_cases.py``, 10 MB paste): classifying the whole
paste took ~60 s on the event loop and froze the UI; the head of a message is where goals and
preferences are stated."""

STATE_CLASSIFY_THREAD_CHARS: Final = 2000
"""A user message longer than this (after the cap above) is classified in a worker thread, off the
event loop; a shorter one inline (a thread hop costs more than classifying it). Set with the cap."""

__all__ = ["Final"]
