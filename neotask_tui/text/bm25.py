"""In-process BM25 over the cached ``lex`` / ``ctx`` columns (no LanceDB round trips per query).

LanceDB stays the source of truth and keeps its own full-text indices; a search, though, scores
BM25 here: a compact inverted index (CSR postings: per term, the rows that contain it and how often)
is built with pyarrow/numpy from the snapshot's columns the first time a query needs it and dropped
with the snapshot on every write.

Scoring is the Okapi BM25 that LanceDB's native FTS uses (``k1 = 1.2``, ``b = 0.75``,
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, whitespace tokens of at most 64 characters, rows
without tokens not counted in ``N`` nor in the average length), with
one deliberate difference: ``N``, ``df`` and the average length are taken over the rows the caller
may see (one agent's rows of the requested sources/scopes), not over the whole table, so one
agent's notes never change how another agent's are ranked, and every visible row is scored (no
candidate pool cut-off).

Two indexes share that formula and :data:`K1` / :data:`B`:

- :class:`FieldIndex`, columnar (numpy CSR postings, float32 term frequencies): the memory store's
  chunks, whitespace tokens of the normalised ``lex`` / ``ctx`` columns, corpus statistics over
  the visible rows that have tokens.
- :class:`BM25`, pure Python (float64): a few hundred short documents given as term lists (recall
  of a session's compacted-away turns, :mod:`neotask_tui.engine.recall.archive`), per-term query
  weights, the postings readable for pseudo-relevance feedback. Its corpus statistics count every
  document, token-less ones included (``count_empty=True``, what archive recall was tuned with);
  ``count_empty=False`` leaves them out as :class:`FieldIndex` and LanceDB do. Documents are the
  term lists as given (no :data:`MAX_TOKEN` cap).

The two are not bit-identical on the same input (float32 vs float64 arithmetic, a different order
of the products): each keeps the exact scores its rankings were measured with.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from neotask_tui.tuning import BM25_B as B
from neotask_tui.tuning import BM25_K1 as K1

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["BM25", "K1", "MAX_TOKEN", "B", "FieldIndex", "okapi_idf"]

MAX_TOKEN = 64
"""Longest token :class:`FieldIndex` indexes (characters), as LanceDB's tokenizer."""


def okapi_idf(n_docs: int, df: int) -> float:
    """The Okapi BM25 inverse document frequency, ``ln(1 + (N - df + 0.5) / (df + 0.5))``."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


class BM25:
    """Okapi BM25 over a small in-memory corpus of term lists (pure Python, float64).

    Args:
        docs: The documents, each a list of normalised terms.
        k1: Term-frequency saturation.
        b: Length normalisation.
        count_empty: Whether documents without terms count in ``N`` and the average length
            (``True``: every document, archive recall's statistics; ``False``: as :class:`FieldIndex`).

    Attributes:
        tf: Term counts of every document.
        dl: Length (terms) of every document.
        avgdl: Average document length.
        idf: :func:`okapi_idf` of every term of the corpus.
    """

    def __init__(
        self, docs: Sequence[Sequence[str]], k1: float = K1, b: float = B, *, count_empty: bool = True
    ) -> None:
        self.k1, self.b = k1, b
        self.tf = [Counter(d) for d in docs]
        self.dl = [len(d) for d in docs]
        n = len(docs) if count_empty else sum(1 for x in self.dl if x)
        self.avgdl = sum(self.dl) / max(1, n)
        df = Counter(w for d in docs for w in set(d))
        self.idf = {w: okapi_idf(n, f) for w, f in df.items()}

    def scores(self, query: Sequence[str], weights: dict[str, float] | None = None) -> list[float]:
        """Score of every document for ``query`` (terms optionally weighted)."""
        out = []
        for tf, dl in zip(self.tf, self.dl, strict=True):
            s, norm = 0.0, self.k1 * (1 - self.b + self.b * dl / max(self.avgdl, 1e-9))
            for w in query:
                f = tf.get(w)
                if f:
                    s += self.idf[w] * f * (self.k1 + 1) / (f + norm) * (weights.get(w, 1.0) if weights else 1.0)
            out.append(s)
        return out


class FieldIndex:
    """Inverted index of one whitespace-tokenised text column.

    Args:
        column: A pyarrow string array (or anything ``pa.array`` accepts) of normalised texts.
    """

    def __init__(self, column: Any) -> None:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        arr = column if isinstance(column, pa.Array | pa.ChunkedArray) else pa.array(column, type=pa.string())
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks() if arr.num_chunks else pa.array([], type=pa.string())
        arr = pc.fill_null(arr, "")
        n = len(arr)
        self.n = n
        split = pc.utf8_split_whitespace(arr)
        per_doc = pc.list_value_length(split).to_numpy(zero_copy_only=False).astype(np.int64)
        flat = pc.list_flatten(split)
        doc = np.repeat(np.arange(n, dtype=np.int64), per_doc)
        tlen = pc.utf8_length(flat).to_numpy(zero_copy_only=False)
        keep = (tlen > 0) & (tlen <= MAX_TOKEN)
        enc = pc.dictionary_encode(flat)
        tid = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)[keep]
        doc = doc[keep]
        words = enc.dictionary.to_pylist()
        self.vocab: dict[str, int] = {w: i for i, w in enumerate(words)}
        self.doc_len: npt.NDArray[np.float64] = np.bincount(doc, minlength=n).astype(np.float64)
        key, tf = np.unique(tid * max(n, 1) + doc, return_counts=True)
        term = key // max(n, 1)
        # int32/float32 postings: half the memory (100k chunks x ~30 terms ~ 24 MB per column)
        self.rows: npt.NDArray[np.int32] = (key % max(n, 1)).astype(np.int32)
        self.tf: npt.NDArray[np.float32] = tf.astype(np.float32)
        self.offsets: npt.NDArray[np.int64] = np.searchsorted(term, np.arange(len(words) + 1))

    def score(
        self, terms: list[str], mask: npt.NDArray[np.bool_] | None, out: npt.NDArray[np.float64], weight: float = 1.0
    ) -> list[str]:
        """Add ``weight * BM25(terms)`` of every visible row into ``out`` (length ``n``).

        Args:
            terms: Distinct normalised query terms.
            mask: Visible rows (``None`` = all); corpus statistics are taken over them.
            out: Accumulator, one float per row.
            weight: Multiplier (field boost).

        Returns:
            The query terms that occur in at least one visible row.
        """
        import numpy as np

        known = [(w, self.vocab[w]) for w in terms if w in self.vocab]
        if not known or self.n == 0:
            return []
        # Rows without a single token are not in a full-text index at all: they count for nothing.
        lengths = self.doc_len if mask is None else self.doc_len[mask]
        n_docs = int(np.count_nonzero(lengths))
        avgdl = float(lengths.sum()) / n_docs if n_docs else 0.0
        if n_docs == 0 or avgdl <= 0:
            return []
        found: list[str] = []
        for word, t in known:
            a, b = int(self.offsets[t]), int(self.offsets[t + 1])
            rows = self.rows[a:b]
            tf = self.tf[a:b]
            if mask is not None:
                vis = mask[rows]
                rows, tf = rows[vis], tf[vis]
            df = len(rows)
            if df == 0:
                continue
            found.append(word)
            idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            norm = K1 * (1.0 - B + B * self.doc_len[rows] / avgdl)
            out[rows] += weight * idf * (tf * (K1 + 1.0)) / (tf + norm)
        return found

    def ideal(self, terms: Sequence[str], mask: npt.NDArray[np.bool_] | None) -> float:
        """The score :meth:`score` would give a visible row of average length holding each of
        ``terms`` once: the sum of their IDFs (a term no visible row holds counts at the highest IDF,
        ``df`` 0). What a row matching the whole query scores, for normalising a row that matches
        part of it."""
        import numpy as np

        lengths = self.doc_len if mask is None else self.doc_len[mask]
        n_docs = int(np.count_nonzero(lengths))
        if n_docs == 0:
            return 0.0
        return sum(okapi_idf(n_docs, self.df(w, mask)) for w in dict.fromkeys(terms))

    def df(self, term: str, mask: npt.NDArray[np.bool_] | None) -> int:
        """How many visible rows contain ``term``."""
        import numpy as np

        t = self.vocab.get(term)
        if t is None:
            return 0
        rows = self.rows[int(self.offsets[t]):int(self.offsets[t + 1])]
        return len(rows) if mask is None else int(np.count_nonzero(mask[rows]))

    def group_score(
        self, terms: list[str], mask: npt.NDArray[np.bool_] | None, groups: npt.NDArray[np.int64], n_groups: int
    ) -> npt.NDArray[np.float64]:
        """BM25 of whole groups of rows (a session, a file): each group is one document made of its
        visible rows' terms. Coarse evidence: a group where the query's terms co-occur, even in
        different rows, scores high.

        Args:
            terms: Distinct normalised query terms.
            mask: Visible rows (``None`` = all).
            groups: Group code of every row (``0 <= code < n_groups``).
            n_groups: Number of group codes.

        Returns:
            One score per group code.
        """
        import numpy as np

        out = np.zeros(n_groups, dtype=np.float64)
        known = [self.vocab[w] for w in terms if w in self.vocab]
        if not known or self.n == 0:
            return out
        vis = np.ones(self.n, dtype=bool) if mask is None else mask
        glen = np.bincount(groups[vis], weights=self.doc_len[vis], minlength=n_groups)
        n_docs = int(np.count_nonzero(glen))
        if n_docs == 0:
            return out
        avgdl = float(glen.sum()) / n_docs
        for t in known:
            a, b = int(self.offsets[t]), int(self.offsets[t + 1])
            rows, tf = self.rows[a:b], self.tf[a:b]
            if mask is not None:
                keep = mask[rows]
                rows, tf = rows[keep], tf[keep]
            if len(rows) == 0:
                continue
            gtf = np.bincount(groups[rows], weights=tf, minlength=n_groups)
            hit = np.flatnonzero(gtf)
            idf = np.log(1.0 + (n_docs - len(hit) + 0.5) / (len(hit) + 0.5))
            f = gtf[hit]
            out[hit] += idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * glen[hit] / avgdl))
        return out
