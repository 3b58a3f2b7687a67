"""Hybrid ranking: dense cosine + BM25, normalised and fused, with optional decay, PRF and MMR.

Plain reciprocal-rank fusion throws away how *sure* each retriever is, and measured below BM25 alone
here. Instead each side is normalised per query:

- dense: cosine mapped to ``(cos - base) / max(best - base, 0.4)``, where ``base`` is the mean
  cosine of the query against every visible chunk (how similar an unrelated chunk is, clamped to
  ``[0, 0.2]``) and the 0.4 floor keeps a weak best match from getting full marks;
- lexical: BM25 divided by the best BM25 of the query, times the share of the query's IDF that
  best match holds (``lexical_cover``).

Both are clipped to ``[0, 1]`` and combined with weights (default 0.4 dense / 0.6 lexical), plus a
coarse score (BM25 of the hit's whole session or file, weight 0.3; none for a chunk alone in
its file, whose words it would count twice) and, when the query names them, a
date period and a message sender (0/1 matches). Those three say where, when and who; they count in
full only for a chunk whose dense + lexical score says it matches what the query asks
(``signal_gate``). The lexical query also carries words close in meaning to the query's own
(:mod:`.termvec`). The
lexical query is built from normalised terms (stemmed, stopwords removed, see :mod:`.lexical`) and
scored in process (:mod:`.bm25`, no LanceDB round trip per query); a second, weaker BM25 over the
``ctx`` column (neighbouring turns of a transcript) adds context. Pseudo-relevance feedback
re-embeds nothing: it moves the query vector towards the centroid of the top dense+lexical hits
(Rocchio) for a second dense pass. Time decay (half-life in days) and MMR are opt-in.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from neotask_tui import tuning
from neotask_tui.memory.search import dates
from neotask_tui.memory.search.relevance import calibrated, like_query, similarity
from neotask_tui.memory.search.termvec import TermVectors
from neotask_tui.text import lexical
from neotask_tui.text.bm25 import FieldIndex

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class Corpus(Protocol):
    """What ranking reads of the chunk store's snapshot (:class:`~..index.store.Snapshot`)."""

    @property
    def ids(self) -> list[str]:
        """Chunk id of every row (snapshot order)."""
        ...

    @property
    def ts(self) -> npt.NDArray[np.float64]:
        """Timestamp of every row (0 when undated)."""
        ...

    def field_index(self, column: str) -> FieldIndex:
        """The BM25 index of a full-text column (``lex``, ``ctx``)."""
        ...

    def groups(self) -> tuple[npt.NDArray[np.int64], int]:
        """``(code per row, number of codes)``: rows grouped by source path."""
        ...

    def senders(self) -> tuple[npt.NDArray[np.int64], list[str]]:
        """``(code per row, names)`` of the transcript messages' senders (code -1: none)."""
        ...


@dataclass
class RankParams:
    """Knobs of the hybrid ranker (defaults are what the benches measure)."""

    dense_weight: float = tuning.MEMORY_RANK_DENSE_WEIGHT
    """Weight of the normalised dense score."""
    lexical_weight: float = tuning.MEMORY_RANK_LEXICAL_WEIGHT
    """Weight of the normalised BM25 score."""
    ctx_boost: float = tuning.MEMORY_RANK_CTX_BOOST
    """Boost of BM25 over neighbouring-context terms relative to the chunk's own terms."""
    prf_docs: int = 0
    """Pseudo-relevance feedback: top fused hits averaged into the query vector (0 = off)."""
    prf_weight: float = tuning.MEMORY_RANK_PRF_WEIGHT
    """Weight of the feedback centroid in the second dense pass."""
    half_life_days: float | None = None
    """Exponential time decay of dated chunks; ``None`` = off."""
    mmr_lambda: float | None = None
    """MMR trade-off (1 = relevance only); ``None`` = off."""
    min_score: float = 0.0
    """Drop hits whose fused score is below this. A row scoring 0 is never a hit: it shares no word
    with the query and its cosine is at or below the mean of the pool (the dense side's zero)."""
    group_weight: float = tuning.MEMORY_RANK_GROUP_WEIGHT
    """Weight of the coarse score: BM25 of the hit's whole group (transcript session or file),
    normalised by the best group; 0 = off; left out of the sum of a chunk alone in its file (a short
    note: its group score is its own BM25 again). Coarse-to-fine: a passage in the session where the
    question's terms co-occur beats an equally good passage elsewhere (LoCoMo dev, categories 1-4:
    R@5 0.631 -> 0.659 with ``ctx_boost`` 0.3, 0.672 with 0.5)."""
    date_weight: float = tuning.MEMORY_RANK_DATE_WEIGHT
    """Weight of "dated within a period the query names" ("in May 2023", "на прошлой неделе", see
    :mod:`.dates`); only counted when the query names one and some row is dated then; 0 = off."""
    sender_weight: float = tuning.MEMORY_RANK_SENDER_WEIGHT
    """Weight of "the message's sender is named in the query" (messages that start with a sender
    name, as group chats and pasted logs write them); only counted when the query names one."""
    signal_gate: float = tuning.MEMORY_RANK_SIGNAL_GATE
    """The group, date and sender signals say *where*, *when* and *who*; they count in full only
    for a chunk that also matches *what* the query asks: scaled by ``min(1, content / gate)``, where
    content is the chunk's weighted dense + lexical score in ``[0, 1]``. Without it, "Gina: Bye Jon!
    You got this!" outranks a matching message of the other speaker for "how did Gina promote her
    store?" just for its sender and its session. 0 = off (signals always in full)."""
    sem_weight: float = tuning.MEMORY_RANK_SEM_WEIGHT
    """BM25 weight (times the cosine) of vocabulary words close in meaning to the query's words
    (see :mod:`.termvec`); 0 = off."""
    sem_k: int = tuning.MEMORY_RANK_SEM_K
    """Expansion words per query word."""
    sem_min: float = tuning.MEMORY_RANK_SEM_MIN
    """Minimum cosine of an expansion word."""


@dataclass
class Ranked:
    """One ranked row of the snapshot."""

    row: int
    score: float
    components: dict[str, float] = field(default_factory=dict)
    matched: list[str] = field(default_factory=list)


def rank(
    qvec: npt.NDArray[np.float32],
    vectors: npt.NDArray[np.float32],
    rows: npt.NDArray[np.int64],
    bm25: npt.NDArray[np.float64],
    *,
    k: int,
    params: RankParams,
    offsets: Sequence[float] = (0.0,),
    ts: npt.NDArray[np.float64] | None = None,
    now: float | None = None,
    group: npt.NDArray[np.float64] | None = None,
    when: npt.NDArray[np.float64] | None = None,
    sender: npt.NDArray[np.float64] | None = None,
    lexical_cover: float = 1.0,
) -> list[Ranked]:
    """Fuse dense and BM25 evidence over the visible rows.

    Args:
        qvec: Unit query vector.
        vectors: All cached vectors (snapshot order).
        rows: Indices of the rows the caller may see (agent/scope/source filtered).
        bm25: BM25 score of every cached row (snapshot order; rows that did not match are 0).
        k: Number of results.
        params: Ranking knobs.
        ts: Per-row timestamps (seconds) for time decay.
        now: Reference time for decay (defaults to now).
        group: Coarse score of every cached row's group (normalised to ``[0, 1]``), or ``None``.
        when: 1.0 for every cached row dated within a period the query names, else 0.0; ``None``
            when the query names none.
        sender: 1.0 for every cached row whose sender the query names, else 0.0; ``None`` when it
            names none.
        lexical_cover: How much of the query the best BM25 match holds (:func:`query_signals`):
            the normalised BM25 side is scaled by it.
        offsets: The embedding model's cosine of unrelated text, one per model of a pair
            (``ModelSpec.offsets``, see :func:`~.relevance.similarity`); ``dense`` in the components
            is calibrated.

    Returns:
        Up to ``k`` rows, best first, with score components.
    """
    import numpy as np

    if len(rows) == 0:
        return []
    everything = len(rows) == len(vectors)
    # One pass over the whole matrix beats copying the visible rows out first.
    whole = everything or len(rows) * 4 > len(vectors)
    cos = _sim(vectors if whole else vectors[rows], qvec, offsets)
    if not everything and len(cos) != len(rows):
        cos = cos[rows]
    raw = bm25 if everything else bm25[rows]
    coarse = None if group is None else (group if everything else group[rows])
    dated = None if when is None else (when if everything else when[rows])
    by = None if sender is None else (sender if everything else sender[rows])
    extra = _signals(len(rows), params, coarse, dated, by)
    fused, parts = _fuse(cos, raw, params, extra, lexical_cover)
    if params.prf_docs > 0 and len(rows) > params.prf_docs:
        top = np.argpartition(-fused, params.prf_docs - 1)[: params.prf_docs]
        centroid = vectors[rows[top]].mean(axis=0)
        q2 = (1 - params.prf_weight) * qvec + params.prf_weight * centroid
        q2 = like_query(q2, qvec, len(offsets))
        cos = _sim(vectors[rows], q2, offsets)
        fused, parts = _fuse(cos, raw, params, extra, lexical_cover)
    decay = None
    if params.half_life_days and ts is not None:
        age_days = np.maximum(0.0, ((now or time.time()) - ts[rows]) / 86400.0)
        decay = np.where(ts[rows] > 0, np.power(0.5, age_days / params.half_life_days), 1.0)
        fused = fused * (tuning.MEMORY_DECAY_FLOOR + (1 - tuning.MEMORY_DECAY_FLOOR) * decay)
    n_pool = min(len(rows), max(k * 4, 32) if params.mmr_lambda is not None else k)
    pool = np.argpartition(-fused, n_pool - 1)[:n_pool] if n_pool < len(rows) else np.arange(len(rows))
    pool = pool[np.argsort(-fused[pool], kind="stable")]
    if params.mmr_lambda is not None:
        pool = _mmr(pool, fused, vectors[rows[pool]], params.mmr_lambda, k, offsets)
    out: list[Ranked] = []
    dn, ln, raw_bm = parts
    for j in pool[:k]:
        score = float(fused[j])
        if score <= 0 or score < params.min_score:
            continue  # 0: no evidence at all (the cosine at or below the pool's mean, no word shared)
        comp = {
            "dense": float(cos[j]),
            "dense_norm": float(dn[j]),
            "lexical": float(raw_bm[j]),
            "lexical_norm": float(ln[j]),
        }
        if coarse is not None and not math.isnan(coarse[j]):
            comp["group_norm"] = float(coarse[j])
        if dated is not None:
            comp["date_match"] = float(dated[j])
        if by is not None:
            comp["sender_match"] = float(by[j])
        if decay is not None:
            comp["decay"] = float(decay[j])
        out.append(Ranked(int(rows[j]), score, comp))
    return out


_BLAS_MIN = 8_000_000
"""Below this many matrix elements a single-threaded einsum beats BLAS gemv: on a busy 2-core
machine, waking BLAS threads costs more than the product (measured 10k x 384: p50 1.4 ms einsum
vs 0.4-12 ms gemv, p95 9 ms vs 35 ms)."""


def _sim(
    mat: npt.NDArray[np.float32], vec: npt.NDArray[np.float32], offsets: Sequence[float]
) -> npt.NDArray[np.float32]:
    """Calibrated cosines of ``mat``'s rows to ``vec`` (:func:`~.relevance.similarity`)."""
    import numpy as np

    if len(offsets) > 1:
        return similarity(mat, vec, offsets).astype(np.float32)
    if mat.size < _BLAS_MIN:
        return calibrated(np.einsum("ij,j->i", mat, vec), offsets[0])
    return calibrated(mat @ vec, offsets[0])


def _fuse(
    cos: npt.NDArray[np.float32], raw: npt.NDArray[np.float64], params: RankParams,
    extra: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None, cover: float = 1.0,
) -> tuple[
    npt.NDArray[np.float64],
    tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]],
]:
    import numpy as np

    cos64 = cos.astype(np.float64)
    # Floor: how similar an unrelated chunk is: for each row the mean of the *other* rows (a row is not
    # its own evidence of what unrelated looks like: in a one-note pool the plain mean is the note itself
    # and every meaning-only match scored 0, i.e. was no hit), 0 (the calibrated level of unrelated
    # text) for a pool of one, kept within [0, MEMORY_DENSE_BASE_CAP] so tiny pools stay sane; span: at
    # least MEMORY_DENSE_SPAN_FLOOR so a best match that is itself weak does not get full marks.
    n = len(cos64)
    others = (cos64.sum() - cos64) / (n - 1) if n > 1 else np.zeros_like(cos64)
    base = np.clip(others, 0.0, tuning.MEMORY_DENSE_BASE_CAP)
    top = float(cos64.max()) if n else 0.0
    dn = np.clip((cos64 - base) / np.maximum(top - base, tuning.MEMORY_DENSE_SPAN_FLOOR), 0.0, 1.0)
    best = float(raw.max()) if len(raw) else 0.0
    ln = raw * (cover / best) if best > 0 else raw
    base_sum = params.dense_weight + params.lexical_weight
    fused = params.dense_weight * dn + params.lexical_weight * ln
    wsum: float | npt.NDArray[np.float64] = base_sum
    if extra is not None:
        signals = extra[0]
        if params.signal_gate > 0:
            signals = signals * np.minimum(fused / ((base_sum or 1.0) * params.signal_gate), 1.0)
        fused = fused + signals
        wsum = base_sum + extra[1]  # per row: a signal a row does not have is not counted against it
    fused = fused / np.where(wsum == 0, 1.0, wsum)
    return fused, (dn, ln, raw)


def content_score(components: Mapping[str, float], params: RankParams) -> float:
    """What a ranked row says, on its own: the weighted dense and BM25 parts of its components
    (``dense_norm``, ``lexical_norm``: BM25 with expansion words and context terms), as :func:`_fuse`
    sums them before the group, date and sender signals (which say where, when and who)."""
    return (params.dense_weight * components.get("dense_norm", 0.0)
            + params.lexical_weight * components.get("lexical_norm", 0.0))


def _signals(
    n: int, params: RankParams, coarse: npt.NDArray[np.float64] | None,
    dated: npt.NDArray[np.float64] | None, by: npt.NDArray[np.float64] | None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """Weighted sum of the signals beside dense and BM25 that this query has (group score, named
    date, named sender; each in ``[0, 1]``, NaN where a row has no such signal), and per row the
    sum of the weights of the signals it has."""
    import numpy as np

    total = np.zeros(n, dtype=np.float64)
    wsum = np.zeros(n, dtype=np.float64)
    for arr, w in ((coarse, params.group_weight), (dated, params.date_weight), (by, params.sender_weight)):
        if arr is not None and w > 0:
            present = ~np.isnan(arr)  # NaN: the row has no such signal (a chunk alone in its group)
            total += w * np.where(present, arr, 0.0)
            wsum += w * present
    return (total, wsum) if wsum.any() else None


def _mmr(
    pool: npt.NDArray[np.int64], fused: npt.NDArray[np.float64], vecs: npt.NDArray[np.float32],
    lam: float, k: int, offsets: Sequence[float] = (0.0,),
) -> npt.NDArray[np.int64]:
    """Maximal marginal relevance over ``pool`` (``vecs`` are the pool's vectors, same order)."""
    import numpy as np

    chosen: list[int] = []
    rest = list(pool)
    index = {int(j): i for i, j in enumerate(pool)}
    while rest and len(chosen) < k:
        best, best_val = rest[0], -math.inf
        for j in rest:
            red = 0.0
            if chosen:
                red = float(np.max(similarity(vecs[[index[c] for c in chosen]], vecs[index[int(j)]], offsets)))
            val = lam * float(fused[j]) - (1 - lam) * red
            if val > best_val:
                best, best_val = j, val
        chosen.append(int(best))
        rest.remove(best)
    return np.asarray(chosen, dtype=np.int64)


def explain(comp: dict[str, float], matched: Sequence[str], heading: str) -> str:
    """One line saying why a hit was returned."""
    bits = []
    if comp.get("lexical_norm", 0) > 0 and matched:
        bits.append("matched " + ", ".join(matched[:5]))
    if comp.get("dense_norm", 0) >= 0.5:
        bits.append(f"semantically close (cos {comp.get('dense', 0):.2f})")
    elif not bits:
        bits.append(f"nearest in meaning (cos {comp.get('dense', 0):.2f})")
    if "decay" in comp and comp["decay"] < 0.99:
        bits.append(f"age weight {comp['decay']:.2f}")
    if heading:
        bits.append(f"under {heading!r}")
    return "; ".join(bits)


def query_signals(
    snap: Corpus, query: str, p: RankParams, stats_mask: npt.NDArray[np.bool_], termvecs: TermVectors | None = None,
    named: Sequence[int] | None = None,
) -> tuple[
    list[str], npt.NDArray[np.float64],
    npt.NDArray[np.float64] | None, npt.NDArray[np.float64] | None, npt.NDArray[np.float64] | None, float,
]:
    """Per-row evidence for ``query`` over a store snapshot, for :func:`rank`.

    Args:
        snap: The chunk store's snapshot (field indexes, groups, senders, timestamps).
        query: The query text.
        p: Ranking knobs (which signals are on, their weights).
        stats_mask: Rows whose statistics BM25 uses (what this query may see).
        termvecs: The vocabulary's word vectors (:class:`~.termvec.TermVectors`) for semantic
            expansion, or ``None``.
        named: :func:`named_senders` of the query when the caller has them already.

    Returns:
        ``(terms, bm25, group, when, sender, cover)``: the query's normalised terms, the BM25 score
        of every row (own terms, neighbour context, expansion words), the coarse group score, date
        match and sender match arrays (``None`` when off or when the query names no date/sender),
        and the lexical cover: how much of the query the best BM25 match holds (its score over
        :meth:`~neotask_tui.text.bm25.FieldIndex.ideal`, at most 1), which the group score is
        already scaled by and :func:`rank` scales the BM25 side by.
    """
    import numpy as np

    terms = list(dict.fromkeys(lexical.terms(query)))
    lex = np.zeros(len(snap.ids), dtype=np.float64)
    if terms:
        # Corpus statistics over what this query may see (before per-session exclusions).
        snap.field_index("lex").score(terms, stats_mask, lex)
        if p.ctx_boost > 0:
            snap.field_index("ctx").score(terms, stats_mask, lex, p.ctx_boost)
    # The BM25 side is normalised by its best match (below, in rank), so a word the query shares by
    # chance with one passage ("how", "new") gave that passage full lexical marks: it counts now for
    # the share of the query's information (IDF) the best match holds, measured before expansion
    # words add to the scores (they stand in for words of the query, not for more of it).
    ideal = snap.field_index("lex").ideal(terms, stats_mask) if terms else 0.0
    cover = min(1.0, float(lex.max()) / ideal) if ideal > 0 and len(lex) else 1.0
    if terms and p.sem_weight > 0 and termvecs is not None:
        fi = snap.field_index("lex")
        for t, sim in termvecs.expand(query, exclude=set(terms), k=p.sem_k, min_sim=p.sem_min,
                                         usable=lambda st: fi.df(st, stats_mask) > 0):
            fi.score([t], stats_mask, lex, p.sem_weight * sim)
    group = None
    if terms and p.group_weight > 0:
        codes, n_codes = snap.groups()
        gs = snap.field_index("lex").group_score(terms, stats_mask, codes, n_codes)
        top = float(gs.max()) if len(gs) else 0.0
        if top > 0:
            group = gs[codes] * (cover / top)
            # A chunk alone in its file (a short memory note) *is* its group: the coarse score would
            # be its own BM25 a second time, not evidence of where. It has no group signal (NaN):
            # :func:`rank` leaves the weight out of that row's sum instead of counting its words twice.
            group[np.bincount(codes, minlength=n_codes)[codes] < 2] = np.nan
    when = None
    if p.date_weight > 0:
        windows = dates.query_windows(query)
        if windows:
            when = dates.window_match(snap.ts, windows)
            if not when.any():  # nothing dated then ("last year" over an older corpus): no evidence
                when = None
    sender = None
    if p.sender_weight > 0:
        codes, _ = snap.senders()
        named = named_senders(snap, query) if named is None else named
        if named:
            sender = np.isin(codes, list(named)).astype(np.float64)
    return terms, lex, group, when, sender, cover


def named_senders(snap: Corpus, query: str) -> list[int]:
    """Codes (see ``snap.senders()``) of the message senders ``query`` names ("what does Alice...",
    "Alice's")."""
    qwords = {lexical.unpossessive(w) for w in lexical.words(query)}
    return [c for c, n in enumerate(snap.senders()[1]) if set(n.split()) <= qwords]


def dense_query(snap: Corpus, query: str, named: Sequence[int] | None = None) -> str:
    """The text embedded for ``query``'s dense side: the query without the senders it names.

    In a transcript whose messages start with their sender ("Alice: ..."), a name in the query says
    *who*, which the sender signal and BM25 already match; left in the embedded text it pulls the
    query vector toward every message of that person (and every mention of the name), so the dense
    side stops telling messages apart by *what* they say. LoCoMo dev, recall of archived turns in the
    context bench (4k budget): the dense ranking alone brings all evidence for 0.73 of the questions
    with the names embedded, 0.81 without. A query that is nothing but a name is kept as it is.
    ``named``: :func:`named_senders` of the query when the caller has them already.
    """
    all_names = snap.senders()[1]
    names = [all_names[c] for c in (named_senders(snap, query) if named is None else named)]
    if not names:
        return query
    out = query
    for n in sorted(names, key=len, reverse=True):
        words = r"\s+".join(re.escape(w) for w in n.split())
        out = re.sub(rf"(?<!\w){words}(?:['’]s?)?(?!\w)", " ", out, flags=re.IGNORECASE)
    out = " ".join(out.split())
    return out if lexical.words(out) else query
