"""Recall of compacted-away turns from the session's own archived transcripts.

The rolling summary keeps the structure of old history; this keeps its *words* reachable. For the
next user message, the primary events of the lineage that are no longer in the live session (they
were compacted into the summary) are ranked by a fusion of BM25 and, when the embedder is
available, dense similarity; the best ones, with a neighbour turn each, enter the context's
"recall" section as quoted data citing their event ids and timestamps.

Everything here reads transcripts that already exist; nothing is written.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from neotask_tui.engine.compaction.summary import event_text
from neotask_tui.memory.index.embedder import Embedder
from neotask_tui.memory.index.models import ascii_share, passage_weights
from neotask_tui.memory.search.relevance import (
    floor_similarity,
    relevant,
    script,
    similarity,
    unit_parts,
    unrelated_vectors,
)
from neotask_tui.storage.events import Event
from neotask_tui.text.bm25 import BM25
from neotask_tui.text.lexical import about_nothing, terms
from neotask_tui.tuning import (
    ARCHIVE_FEEDBACK_MAX_SHARE,
    ARCHIVE_FEEDBACK_TERMS,
    ARCHIVE_FEEDBACK_WEIGHT,
    ARCHIVE_OWN_OUTLIER_Z,
    ARCHIVE_OWN_TERM_MAX_SHARE,
    ARCHIVE_RRF_DEPTH,
    ARCHIVE_RRF_K,
    RECALL_TIME_STEP_SECONDS,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)


@dataclass
class _Index:
    events: list[Event]
    bm25: BM25
    vectors: npt.NDArray[np.float32] | None = None
    floor: _FloorTexts | None = None
    """What the relevance floor needs of the texts, whatever the message (with :attr:`vectors`)."""
    chatter: frozenset[int] = frozenset()
    """Positions of the turns that only thank, acknowledge or greet
    (:func:`~neotask_tui.text.lexical.about_nothing`): never recalled, whatever the message."""


@dataclass(frozen=True)
class _FloorTexts:
    """Per turn, and per passage (a turn with the one after it), the ASCII share of the letters
    (:func:`~neotask_tui.memory.index.models.ascii_share`) and the script
    (:func:`~neotask_tui.memory.search.relevance.script`) the floor weighs and measures them by:
    computed once per index, not on every message (a few tens of ms for a few hundred turns)."""

    shares: list[float]
    scripts: list[str | None]
    pair_shares: list[float]
    pair_scripts: list[str | None]

    @classmethod
    def of(cls, texts: Sequence[str]) -> _FloorTexts:
        pairs = [f"{a}\n{b}" for a, b in itertools.pairwise(texts)]
        return cls([ascii_share(t) for t in texts], [script(t) for t in texts],
                   [ascii_share(t) for t in pairs], [script(t) for t in pairs])


class ArchiveRecall:
    """Ranks a lineage's compacted-away turns against a query (indexes cached per lineage).

    Args:
        embedder: The embedding model for the dense ranking (``None``: BM25 alone). Vectors are
            cached by event id: a replacement must be the same model.
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder
        self._terms = terms
        self._cache: dict[tuple[int, ...], _Index] = {}
        self._vectors: dict[int, npt.NDArray[np.float32]] = {}
        """Unit vector of every event embedded so far, by id (ids are unique in a lineage)."""

    def _index(self, events: Sequence[Event]) -> _Index:
        sig = tuple(e.id for e in events)
        idx = self._cache.get(sig)
        if idx is None:
            texts = [event_text(e) for e in events]
            idx = _Index(list(events), BM25([self._terms(t) for t in texts]),
                         chatter=frozenset(j for j, t in enumerate(texts) if about_nothing(t)))
            if self.embedder is not None and texts:
                import numpy as np

                try:
                    todo = [(e.id, t) for e, t in zip(events, texts, strict=True) if e.id not in self._vectors]
                    if todo:
                        vecs = self.embedder.embed([t for _, t in todo])
                        self._vectors.update({eid: vecs[i] for i, (eid, _) in enumerate(todo)})
                    idx.vectors = np.stack([self._vectors[e.id] for e in events])
                    idx.floor = _FloorTexts.of(texts)
                except Exception as e:  # dense is a bonus; BM25 still answers
                    log.warning("archive recall: embeddings unavailable (%s)", e)
            self._cache = {sig: idx}  # one lineage at a time is what a turn needs
        return idx

    def rankings(self, events: Sequence[Event], query: str) -> dict[str, list[int]]:
        """Separate rankings of ``events`` for ``query`` (positions into ``events``, best first).

        ``bm25`` holds only documents sharing a term with the query; ``dense`` (when embeddings
        are available) holds every document.
        """
        if not events or not query.strip():
            return {}
        idx = self._index(events)
        n = len(idx.events)
        out: dict[str, list[int]] = {}
        bm = idx.bm25.scores(self._terms(query))
        out["bm25"] = [j for j in sorted(range(n), key=lambda j: -bm[j]) if bm[j] > 0]
        if idx.vectors is not None and self.embedder is not None:
            try:
                sims = similarity(idx.vectors, self.embedder.embed_query(query), self.embedder.spec.offsets)
                out["dense"] = sorted(range(n), key=lambda j: -float(sims[j]))
            except Exception as e:
                log.warning("archive recall: dense query failed (%s)", e)
        return out

    def relevant(self, events: Sequence[Event], query: str, *, own: bool = False) -> set[int]:
        """Ids of the ``events`` that clear auto-recall's relevance floor for ``query``
        (:func:`~neotask_tui.memory.search.relevance.relevant`: most of its terms, or close enough in
        meaning; lexical alone without embeddings).

        ``own``: the events are this conversation's own compacted turns. They are on the subject of
        the conversation by construction, so one *distinctive* term of the message (a word in at
        most :data:`~neotask_tui.tuning.ARCHIVE_OWN_TERM_MAX_SHARE` of the turns: a name, a place,
        an object — "When did Caroline go to the support group?" and the turn that says "I went to a
        support group yesterday") is evidence enough; other sessions' turns need most of the
        message's terms. A message with no content term ("thanks!": courtesy words are stopwords;
        nor one besides acknowledgements and greetings, :func:`~neotask_tui.text.lexical.about_nothing`:
        "Okay, got it.", "Понятно.") recalls nothing.
        Once one of its own turns has cleared the floor (the message is about something said
        earlier), a turn whose cosine stands out from the others' (:func:`outliers`, at
        :data:`~neotask_tui.tuning.ARCHIVE_OWN_OUTLIER_Z` standard deviations) clears it too: an
        absolute cosine belongs to one embedding model, standing out from the conversation's own
        background does not.
        """
        return self.floor(events, query, own=own)[0]

    def answers(self, events: Sequence[Event], query: str) -> dict[int, int]:
        """This conversation's own compacted turns that clear the floor only as one passage with the
        turn before them: ``{turn id: id of the turn before it}``.

        A reply is often elliptic ("Yes, last Friday!", "I'm thinking of working with trans people"):
        the message it answers holds the words of a later question, the reply holds the answer. The
        memory index embeds a transcript turn with the message before it for that reason
        (:meth:`~neotask_tui.memory.index.indexer.Indexer.index_transcript`); here the two are judged
        as one passage by the floor of :meth:`relevant` (``own``): its words are both turns' words,
        its vector their normalised sum, and it stands out against the other such passages. The
        turn is then recalled only together with the turn before it (:func:`select_turns`), so what
        the context quotes is the passage that cleared the floor. A turn without a content word
        ("ok") carries nothing and is never one; a message about nothing said earlier (no turn and
        no passage clears the absolute floor) has none.
        """
        return self.floor(events, query, own=True, passages=True)[1]

    def floor(self, events: Sequence[Event], query: str, *, own: bool,
               passages: bool = False) -> tuple[set[int], dict[int, int]]:
        """:meth:`relevant` (the turns alone) and, with ``passages``, :meth:`answers`, in one pass."""
        if not events or not query.strip():
            return set(), {}
        q = set(self._terms(query))
        if not q or about_nothing(query):
            return set(), {}  # no content word ("thanks!", "Okay, got it.", "Понятно."): about nothing said before
        idx = self._index(events)
        n = len(idx.events)
        tfs = [tf.keys() for tf in idx.bm25.tf]  # set views, not copies: this runs on every turn
        rare: set[str] = set()
        if own:
            df: dict[str, int] = {}
            for tf in tfs:
                for w in q & tf:
                    df[w] = df.get(w, 0) + 1
            rare = {w for w, f in df.items() if f <= max(1.0, ARCHIVE_OWN_TERM_MAX_SHARE * n)}
        sims: list[float] | None = None  # on the model's calibrated scale: what stands out (outliers)
        pair_sims: list[float] | None = None
        floor_sims: list[float] | None = None  # on auto-recall's floor scale: what clears the floor
        floor_pairs: list[float] | None = None
        if idx.vectors is not None and idx.floor is not None and self.embedder is not None:
            try:
                import numpy as np

                qv = self.embedder.embed_query(query)
                spec = self.embedder.spec
                offsets = spec.offsets
                unrelated = unrelated_vectors(self.embedder)
                ft = idx.floor

                def on_floor(mat: npt.NDArray[np.float32], shares: Sequence[float], scripts: Sequence[str | None],
                             refs: Mapping[str | None, npt.NDArray[np.float32]]) -> list[float]:
                    weights = np.array(passage_weights(spec, query, shares), dtype=np.float64)
                    return [float(x) for x in floor_similarity(mat, qv, refs, weights, scripts)]

                sims = [float(x) for x in similarity(idx.vectors, qv, offsets)]
                floor_sims = on_floor(idx.vectors, ft.shares, ft.scripts, unrelated)
                if passages and n > 1:
                    pairs = unit_parts(idx.vectors[:-1] + idx.vectors[1:], len(offsets))
                    pair_sims = [float(x) for x in similarity(pairs, qv, offsets)]
                    # A passage is two turns' vectors summed: closer to whatever is common to all text
                    # than either turn, so it is measured against unrelated text summed the same way
                    # (each reference with the next), not against single sentences.
                    paired = {k: unit_parts(v[:-1] + v[1:], len(offsets)) for k, v in unrelated.items() if len(v) > 1}
                    floor_pairs = on_floor(pairs, ft.pair_shares, ft.pair_scripts, paired)
            except Exception as e:
                log.warning("archive recall: dense query failed (%s)", e)

        def clears(words: AbstractSet[str], cos: float | None) -> bool:
            # a turn without a content word ("ok") carries nothing to recall (see MemoryService.recall)
            return bool(words) and (bool(rare & words) or relevant(cos, len(q & words), len(q)))

        chat = idx.chatter  # small talk says nothing to recall, however close it is to the message
        alone = {ev.id for j, ev in enumerate(idx.events)
                 if j not in chat and clears(tfs[j], None if floor_sims is None else floor_sims[j])}
        # passage j: turn j + 1 with the turn before it (j)
        both = [j for j in range(n - 1) if tfs[j + 1] and j + 1 not in chat
                and clears(tfs[j] | tfs[j + 1], None if floor_pairs is None else floor_pairs[j])] if passages else []
        if own and (alone or both):
            if sims is not None:
                alone |= {idx.events[j].id for j in outliers(sims, ARCHIVE_OWN_OUTLIER_Z) if j not in chat}
            if pair_sims is not None:
                both += [j for j in outliers(pair_sims, ARCHIVE_OWN_OUTLIER_Z) if tfs[j + 1] and j + 1 not in chat]
        if not own:
            return alone, {}
        answers = {idx.events[j + 1].id: idx.events[j].id for j in sorted(set(both))
                   if idx.events[j + 1].id not in alone}
        return alone, answers

    def feedback_terms(self, events: Sequence[Event], query: str, seeds: Sequence[int],
                       n_terms: int = ARCHIVE_FEEDBACK_TERMS) -> list[str]:
        """Pseudo-relevance feedback: the most distinctive normalised terms of the ``seeds``
        (positions of the first round's best documents) that the query does not already have.

        Multi-hop questions name one thing and need another ("what did X's sister bring to the
        party?"): the first round finds the turn about the sister; her name, taken from it, finds
        the turn about the party.
        """
        if not seeds:
            return []
        idx = self._index(events)
        qset = set(self._terms(query))
        tf: dict[str, float] = {}
        for j in seeds:
            for w, f in idx.bm25.tf[j].items():
                if w not in qset:
                    tf[w] = tf.get(w, 0.0) + 1 + math.log(f)
        n = len(idx.events)
        # Distinctive: rare in the archive (idf), recurring in the seeds.
        cand = sorted(tf, key=lambda w: -tf[w] * idx.bm25.idf.get(w, 0.0))
        return [w for w in cand if idx.bm25.idf.get(w, 0.0) > math.log(1 + n / ARCHIVE_FEEDBACK_MAX_SHARE)][:n_terms]

    def feedback_ranking(self, events: Sequence[Event], query: str, seeds: Sequence[int],
                         n_terms: int = ARCHIVE_FEEDBACK_TERMS, weight: float = ARCHIVE_FEEDBACK_WEIGHT) -> list[int]:
        """BM25 again with the query plus :meth:`feedback_terms` of the ``seeds`` at a lower weight."""
        extra = self.feedback_terms(events, query, seeds, n_terms)
        if not extra:
            return []
        idx = self._index(events)
        q = self._terms(query)
        weights = {**dict.fromkeys(extra, weight), **dict.fromkeys(q, 1.0)}
        bm = idx.bm25.scores(list(weights), weights)
        return [j for j in sorted(range(len(idx.events)), key=lambda j: -bm[j]) if bm[j] > 0]

    def rank(self, events: Sequence[Event], query: str, *, extra: Sequence[Sequence[int]] = (),
             feedback: int = 0) -> list[Event]:
        """``events`` ordered by relevance to ``query`` (RRF of BM25 and dense ranks).

        Args:
            events: Candidate turns.
            query: The user's message.
            extra: Further rankings to fuse, as event ids best first (e.g. the memory service's
                hybrid hits mapped to their turns).
            feedback: When > 0, a second lexical round seeded by that many best turns of the first
                (pseudo-relevance feedback) is fused in too.
        """
        if not events or not query.strip():
            return []
        idx = self._index(events)
        lists = list(self.rankings(events, query).values())
        pos = {e.id: j for j, e in enumerate(idx.events)}
        lists += [[pos[i] for i in ids if i in pos] for ids in extra]
        order = reciprocal_rank_fusion(lists, len(idx.events))
        if feedback > 0 and order:
            lists.append(self.feedback_ranking(events, query, order[:feedback]))
            order = reciprocal_rank_fusion(lists, len(idx.events))
        return [idx.events[j] for j in order]


def outliers(sims: Sequence[float], z: float) -> list[int]:
    """Positions whose similarity stands out from the rest: at least ``z`` standard deviations above
    the mean of ``sims`` (empty when they are all alike)."""
    n = len(sims)
    if n < 2:
        return []
    mean = sum(sims) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in sims) / n)
    if sd < 1e-6:  # alike up to rounding
        return []
    return [j for j, x in enumerate(sims) if x >= mean + z * sd]


def reciprocal_rank_fusion(
    lists: Sequence[Sequence[int]], n: int, k: int = ARCHIVE_RRF_K, depth: int = ARCHIVE_RRF_DEPTH,
    weights: Sequence[float] | None = None,
) -> list[int]:
    """Reciprocal-rank fusion of rankings over ``n`` documents (each list: positions, best first).

    A document's fused score is the sum over the lists of ``weight / (k + rank)`` (rank from 0, the
    first ``depth`` entries of each list); documents in no list are left out; best first, ties in
    position order."""
    fused = [0.0] * n
    for li, lst in enumerate(lists):
        w = weights[li] if weights is not None else 1.0
        for r, j in enumerate(lst[:depth]):
            fused[j] += w / (k + r)
    return sorted((j for j in range(n) if fused[j] > 0), key=lambda j: -fused[j])


def format_turn(ev: Event) -> str:
    """One recalled turn: ``[e:12 · 2023-05-08 13:56] user: text``."""
    when = ev.ts[:16].replace("T", " ")
    who = ev.role or ev.type
    return f"[e:{ev.id} · {when}] {who}: {' '.join(event_text(ev).split())}"


def _when(ev: Event) -> datetime | None:
    """The event's time (None if its timestamp does not parse)."""
    try:
        return datetime.fromisoformat(ev.ts)
    except ValueError:
        return None


def _day(ev: Event, when: datetime | None) -> str:
    """``2023-05-08 Mon 13:56`` from the event's time ``when`` (:func:`_when`; the raw prefix of its
    timestamp if that did not parse)."""
    return when.strftime("%Y-%m-%d %a %H:%M") if when is not None else ev.ts[:16].replace("T", " ")


def format_turns(turns: Sequence[Event]) -> list[str]:
    """Recalled turns as compact lines, chronological.

    The first turn of each day carries its date, weekday and time (``[e:12 · 2023-05-08 Mon 13:56]``);
    the next turns of that day only their id (``[e:15]``) — the dates are what temporal questions
    need, and repeating them on every line would cost a third of a short turn — unless a turn came
    :data:`~neotask_tui.tuning.RECALL_TIME_STEP_SECONDS` or more after the last time shown: it carries
    its own time of day (``[e:40 · 18:02]``), so a line is never read as hours earlier than it was
    written. A turn that directly follows the previous line's event (id + 1, same day, no time of
    its own) carries no id at all (:data:`CONTINUATION_NOTE`): the id costs 4 tokens, a sixth of a
    short chat turn.
    """
    out: list[str] = []
    day = ""
    shown: datetime | None = None
    prev: Event | None = None
    for ev in turns:
        who = ev.role or ev.type
        text = " ".join(event_text(ev).split())
        when = _when(ev)
        if ev.ts[:10] != day:
            day, shown = ev.ts[:10], when
            out.append(f"[e:{ev.id} · {_day(ev, when)}] {who}: {text}")
        elif when is not None and shown is not None and _seconds(when, shown) >= RECALL_TIME_STEP_SECONDS:
            shown = when
            out.append(f"[e:{ev.id} · {when.strftime('%H:%M')}] {who}: {text}")
        elif prev is not None and ev.id == prev.id + 1:
            out.append(f"{who}: {text}")
        else:
            out.append(f"[e:{ev.id}] {who}: {text}")
        prev = ev
    return out


def _seconds(later: datetime, earlier: datetime) -> float:
    """``later - earlier`` in seconds (0 when one is timezone-aware and the other is not)."""
    try:
        return (later - earlier).total_seconds()
    except TypeError:
        return 0.0


CONTINUATION_NOTE = "a line without [e:N] is the event after the line above"
"""How :func:`format_turns` numbers consecutive turns (said once, in the recall item's source)."""


def turn_cost(ev: Event, count: Callable[[str], int]) -> int:
    """Tokens of one recalled turn line (a dated first line of a day costs a few more, see
    :func:`format_turns`; budgeting at the undated size plus a margin per new day is close)."""
    return count(f"[e:{ev.id}] {ev.role or ev.type}: {' '.join(event_text(ev).split())}") + 1


def select_turns(
    ranked: Sequence[Event], all_events: Sequence[Event], budget: int, count: Callable[[str], int],
    neighbours: int = 0, needs: Mapping[int, Event] | None = None,
) -> list[Event]:
    """Take ranked turns (plus ``neighbours`` on each side) until ``budget`` tokens; chronological.

    A turn that does not fit is skipped and smaller ones further down still get their chance (a
    long turn must not end the recall). Every new day costs a dated line (about 10 tokens more).
    Turns are budgeted at their dearest (with an id); what :func:`format_turns` saves on consecutive
    turns is measured on the formatted lines and refilled with the next ranked turns, a few rounds.

    ``needs``: a turn that is recalled only with another (:meth:`ArchiveRecall.answers`: the turn
    before it, with which it cleared the relevance floor) maps to that turn; the two are taken
    together or not at all, and dropped together.
    """
    pos = {e.id: i for i, e in enumerate(all_events)}
    needs = needs or {}
    chosen: dict[int, Event] = {}
    days: set[str] = set()

    def fill(room: int) -> bool:
        used, added = 0, False
        for ev in ranked:
            if room - used < 12:
                break
            if ev.id in needs:
                # all or nothing: the turn and the one it cleared the floor with
                unit = [g for g in (needs[ev.id], ev) if g.id not in chosen]
                new_days = {g.ts[:10] for g in unit} - days
                cost = sum(turn_cost(g, count) for g in unit) + 10 * len(new_days)
                if unit and used + cost <= room:
                    for g in unit:
                        chosen[g.id] = g
                        days.add(g.ts[:10])
                    used += cost
                    added = True
                continue
            i = pos.get(ev.id)
            group = [ev] if i is None else list(all_events[max(0, i - neighbours): i + neighbours + 1])
            for g in sorted(group, key=lambda e: e.id != ev.id):
                if g.id in chosen:
                    continue
                cost = turn_cost(g, count) + (0 if g.ts[:10] in days else 10)
                if used + cost > room:
                    continue
                chosen[g.id] = g
                days.add(g.ts[:10])
                used += cost
                added = True
        return added

    def measured() -> int:
        return count("\n".join(format_turns(sorted(chosen.values(), key=lambda e: e.id))))

    fill(budget)
    for _ in range(3):
        room = budget - measured()
        if room < 12 or not fill(room):
            break
    # A day's dated line can cost a little more than budgeted: drop the least relevant turns until
    # the formatted lines fit (the caller's budget is exact). A turn taken for another one ranks as
    # that one, and a turn whose partner is dropped goes with it.
    order = {e.id: r for r, e in enumerate(ranked)}
    for r, e in enumerate(ranked):
        if e.id in needs:
            p = needs[e.id].id
            order[p] = min(order.get(p, r), r)
    while chosen and measured() > budget:
        del chosen[max(chosen, key=lambda i: order.get(i, len(order)))]
        _drop_orphans(chosen, needs, {e.id for e in ranked})
    return sorted(chosen.values(), key=lambda e: e.id)


def _drop_orphans(chosen: dict[int, Event], needs: Mapping[int, Event], ranked: set[int]) -> None:
    """Drop the chosen turns that are no longer recallable (see :func:`select_turns`): a turn is
    kept when it clears the floor alone, when the turn it needs is chosen, or when it is the partner
    of a chosen turn that needs it."""
    taken_for = {p.id for p in needs.values()}
    while True:
        partners = {needs[i].id for i in chosen if i in needs}
        gone = [i for i in chosen if i not in partners and (
            (i in needs and needs[i].id not in chosen) or (i not in ranked and i in taken_for))]
        if not gone:
            return
        for i in gone:
            del chosen[i]
