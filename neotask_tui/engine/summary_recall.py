"""Recall of compacted-away turns from the session's own archived transcripts.

The rolling summary keeps the structure of old history; this keeps its *words* reachable. For the
next user message, the primary events of the lineage that are no longer in the live session (they
were compacted into the summary) are ranked by a fusion of BM25 and, when the embedder is
available, dense similarity; the best ones, with a neighbour turn each, enter the context's
"recall" section as quoted data citing their event ids and timestamps.

Everything here reads transcripts that already exist; nothing is written.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from neotask_tui.engine.summary import event_text
from neotask_tui.storage.events import Event

log = logging.getLogger(__name__)

RRF_K = 60
_TOKEN = re.compile(r"\w+", re.UNICODE)


def _terms_fn() -> Callable[[str], list[str]]:
    try:
        from neotask_tui.memory.lexical import terms

        return terms
    except Exception:  # the memory package is optional here
        return lambda text: [w.lower() for w in _TOKEN.findall(text) if len(w) > 2]


class BM25:
    """Okapi BM25 over short documents (k1=1.2, b=0.75)."""

    def __init__(self, docs: Sequence[list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = [Counter(d) for d in docs]
        self.dl = [len(d) for d in docs]
        self.avgdl = sum(self.dl) / max(1, len(docs))
        df = Counter(w for d in docs for w in set(d))
        n = len(docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def scores(self, query: list[str]) -> list[float]:
        """Score of every document for ``query``."""
        out = []
        for tf, dl in zip(self.tf, self.dl, strict=True):
            s, norm = 0.0, self.k1 * (1 - self.b + self.b * dl / max(self.avgdl, 1e-9))
            for w in query:
                f = tf.get(w)
                if f:
                    s += self.idf[w] * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out


@dataclass
class _Index:
    events: list[Event]
    bm25: BM25
    vectors: Any = None


class ArchiveRecall:
    """Ranks a lineage's compacted-away turns against a query (indexes cached per lineage).

    Args:
        embedder: Optional object with ``embed(texts)`` / ``embed_query(text)`` returning unit vectors.
    """

    def __init__(self, embedder: Any = None) -> None:
        self.embedder = embedder
        self._terms = _terms_fn()
        self._cache: dict[tuple[int, ...], _Index] = {}
        self._vectors: dict[int, Any] = {}  # event id -> unit vector (ids are unique in a lineage)

    def _index(self, events: Sequence[Event]) -> _Index:
        sig = tuple(e.id for e in events)
        idx = self._cache.get(sig)
        if idx is None:
            texts = [event_text(e) for e in events]
            idx = _Index(list(events), BM25([self._terms(t) for t in texts]))
            if self.embedder is not None and texts:
                try:
                    import numpy as np

                    todo = [(e.id, t) for e, t in zip(events, texts, strict=True) if e.id not in self._vectors]
                    if todo:
                        vecs = self.embedder.embed([t for _, t in todo])
                        self._vectors.update({eid: vecs[i] for i, (eid, _) in enumerate(todo)})
                    idx.vectors = np.stack([self._vectors[e.id] for e in events])
                except Exception as e:  # dense is a bonus; BM25 still answers
                    log.warning("archive recall: embeddings unavailable (%s)", e)
            self._cache = {sig: idx}  # one lineage at a time is what a turn needs
        return idx

    def rank(self, events: Sequence[Event], query: str) -> list[Event]:
        """``events`` ordered by relevance to ``query`` (RRF of BM25 and dense ranks)."""
        if not events or not query.strip():
            return []
        idx = self._index(events)
        n = len(idx.events)
        fused = [0.0] * n
        bm = idx.bm25.scores(self._terms(query))
        for r, j in enumerate(sorted(range(n), key=lambda j: -bm[j])):
            if bm[j] > 0:
                fused[j] += 1.0 / (RRF_K + r)
        if idx.vectors is not None and self.embedder is not None:
            try:
                sims = idx.vectors @ self.embedder.embed_query(query)
                for r, j in enumerate(sorted(range(n), key=lambda j: -float(sims[j]))):
                    fused[j] += 1.0 / (RRF_K + r)
            except Exception as e:
                log.warning("archive recall: dense query failed (%s)", e)
        order = sorted((j for j in range(n) if fused[j] > 0), key=lambda j: -fused[j])
        return [idx.events[j] for j in order]


def format_turn(ev: Event) -> str:
    """One recalled turn: ``[e:12 · 2023-05-08 13:56] user: text``."""
    when = ev.ts[:16].replace("T", " ")
    who = ev.role or ev.type
    return f"[e:{ev.id} · {when}] {who}: {' '.join(event_text(ev).split())}"


def select_turns(
    ranked: Sequence[Event], all_events: Sequence[Event], budget: int, count: Callable[[str], int],
    neighbours: int = 0,
) -> list[Event]:
    """Take ranked turns (plus ``neighbours`` on each side) until ``budget`` tokens; chronological."""
    pos = {e.id: i for i, e in enumerate(all_events)}
    chosen: dict[int, Event] = {}
    used = 0
    for ev in ranked:
        i = pos.get(ev.id)
        group = [ev] if i is None else list(all_events[max(0, i - neighbours): i + neighbours + 1])
        for g in sorted(group, key=lambda e: e.id != ev.id):
            if g.id in chosen:
                continue
            cost = count(format_turn(g)) + 1
            if used + cost > budget:
                if g.id == ev.id:
                    return sorted(chosen.values(), key=lambda e: e.id)
                continue
            chosen[g.id] = g
            used += cost
    return sorted(chosen.values(), key=lambda e: e.id)
