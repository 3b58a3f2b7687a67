"""Recall of a session's own compacted-away turns into its context (the ``summary`` strategy).

The rolling summary keeps the structure of old history; this puts its *words* back in reach: for
the next user message, the lineage's archived turns are ranked (the memory service's hybrid search
over archived transcripts, then :class:`~neotask_tui.engine.recall.archive.ArchiveRecall`) and the
best ones fill the recall section within the room the rest of the context leaves.
"""

from __future__ import annotations

import dataclasses
import logging

from neotask_tui.engine.compaction.inputs import head_summary, lineage_events
from neotask_tui.engine.compaction.summary import event_text
from neotask_tui.engine.context.assembly import ContextInputs, RecallItem, fence_recall, recall_room
from neotask_tui.engine.context.budget import recall_reserve
from neotask_tui.engine.ports import SessionsWithMemory
from neotask_tui.engine.recall.archive import CONTINUATION_NOTE, ArchiveRecall, format_turns, outliers, select_turns
from neotask_tui.memory.index.embedder import Embedder
from neotask_tui.memory.index.indexer import redacted_messages
from neotask_tui.memory.search.hybrid import content_score
from neotask_tui.memory.search.relevance import covered
from neotask_tui.storage.events import Event, without_superseded
from neotask_tui.text import tokens
from neotask_tui.text.lexical import asked
from neotask_tui.text.tokens import MESSAGE_OVERHEAD
from neotask_tui.tuning import (
    ARCHIVE_FEEDBACK_SEEDS,
    ARCHIVE_MEMORY_FEEDBACK_DOCS,
    ARCHIVE_MEMORY_HIT_TOKENS,
    ARCHIVE_MEMORY_MIN_HITS,
    ARCHIVE_OWN_OUTLIER_Z,
)

log = logging.getLogger(__name__)

FEEDBACK_DOCS = ARCHIVE_MEMORY_FEEDBACK_DOCS
"""Pseudo-relevance feedback of the memory service's search here (see
:data:`~neotask_tui.tuning.ARCHIVE_MEMORY_FEEDBACK_DOCS`)."""


class LineageRecall:
    """Ranks and selects a lineage's compacted-away turns for a call's context.

    Args:
        engine: The engine (settings, store, events, the memory service once it is built).
    """

    def __init__(self, engine: SessionsWithMemory) -> None:
        self.engine = engine
        self._archive: ArchiveRecall | None = None
        self._own_embedder: Embedder | None = None

    def _embedder(self) -> Embedder | None:
        """The embedding model for dense ranking: none when memory is off (BM25 alone), the memory
        service's when it is built (one copy of the model in memory), else one of our own, of the
        same model (``memory.embedding_model``), dropped once the service has its own."""
        eng = self.engine
        if not eng.settings.memory.enabled:
            return None
        mem = eng.memory
        if mem is not None and mem.settings.embedding_model == eng.settings.memory.embedding_model:
            self._own_embedder = None
            return mem.embedder
        if self._own_embedder is None:
            self._own_embedder = Embedder(eng.settings.memory.embedding_model)
        return self._own_embedder

    def _archive_recall(self) -> ArchiveRecall:
        if self._archive is None:
            self._archive = ArchiveRecall()
        self._archive.embedder = self._embedder()
        return self._archive

    def augment(self, key: str, inp: ContextInputs) -> None:
        """Add the most relevant compacted-away turns of the lineage to ``inp.recall``.

        Only for the ``summary`` strategy and only once the session has been compacted. The turns
        are quoted data with their event ids and dates, one short line each, within the room
        :func:`~neotask_tui.engine.context.assembly.recall_room` gives recall (the reserve of
        :func:`~neotask_tui.engine.context.budget.recall_reserve` at least, more when the rest of
        the context leaves it free).

        Ranking: the memory service's hybrid search over the archived transcripts (when it is
        available; with pseudo-relevance feedback, :data:`FEEDBACK_DOCS`), then this lineage's own
        BM25 + dense ranking with a pseudo-relevance-feedback round for turns it does not reach.
        Memories already recalled for the turn that quote a turn of this lineage (kind
        ``conversation``) are merged into the turn list (no duplicates, and nothing that is already in
        the live window). A turn below the relevance floor is not recalled (so a message about nothing
        said before spends no tokens here; once one turn or passage clears it, a turn whose content
        score in the memory service's search stands out from the other hits' clears it too, as a
        turn whose cosine stands out does), nor one a consented memory already says, nor a message of the
        user's that the session state holds whole (``inp.state_says``); a turn that
        clears the floor only as one passage with the turn before it
        (:meth:`~neotask_tui.engine.recall.archive.ArchiveRecall.answers`) is recalled only together
        with that turn. The item is labelled ``conversation`` and goes after the memories, before
        history.
        """
        eng = self.engine
        if inp.strategy != "summary":
            return
        events = without_superseded(eng.events(key))
        if head_summary(events) is None:
            return
        live = {e.id for e in events}
        primary, sessions = lineage_events(events, eng.store.events)
        archived = self._recallable(key, [e for e in primary
                                          if e.type == "message" and e.id not in live and e.content.strip()])
        query = inp.new_message
        if not query:
            pinned = next((e for e in events if e.id == inp.new_event_id), None)
            last_user = next((e for e in reversed(events) if e.type == "message" and e.role == "user"), None)
            anchor = pinned or last_user
            query = anchor.content if anchor is not None else ""
        if not archived or not query:
            return
        query = asked(query)  # "Got it. And the backup?" searches for the backup, not for small talk
        count = tokens.count_text
        by_id = {e.id: e for e in archived}
        lineage = set(by_id) | live
        first: list[int] = []  # turns the memory service already chose for this turn
        kept: list[RecallItem] = []
        for r in inp.recall:
            if r.kind == "conversation" and r.event_ids and all(i in lineage for i in r.event_ids):
                first.extend(i for i in r.event_ids if i in by_id and i not in first)
            else:
                kept.append(r)
        inp.recall = kept
        room = recall_room(inp, recall_reserve(eng.settings, inp.window))
        source = f"archived transcripts of this session ({len(sessions) - 1} compacted; {CONTINUATION_NOTE})"
        widest = max(by_id)
        probe = RecallItem(id=f"archive:{widest}-{widest}", text="", source=source, scope="session",
                           kind="conversation")
        # The fence, the tags and the message cost what they cost: the turns get the rest, measured.
        budget = room - count(fence_recall([*kept, probe])) - MESSAGE_OVERHEAD - 4
        if budget <= 0:
            return
        k = max(budget // ARCHIVE_MEMORY_HIT_TOKENS, ARCHIVE_MEMORY_MIN_HITS)
        found, scores = self._memory_turns(key, query, set(by_id), k=k)
        memory_ids = [*first, *(i for i in found if i not in first)]
        archive = self._archive_recall()
        fallback = archive.rank(archived, query, feedback=ARCHIVE_FEEDBACK_SEEDS)
        seen = set(memory_ids)
        # Below the relevance floor nothing is recalled; a turn a consented memory already says is not
        # repeated (that memory is the one item for it).
        alone, answers = archive.floor(archived, query, own=True, passages=True)
        ok = alone | set(first)  # ``first``: past the memory service's floor
        if alone or answers:  # about something said earlier: what the search's content score sets apart
            ok |= {found[j] for j in outliers([scores[i] for i in found], ARCHIVE_OWN_OUTLIER_Z)}
        consented = [r.text for r in kept if r.kind == "memory"]

        def said(e: Event) -> bool:  # by a consented memory, or by the session state the context carries
            text = event_text(e)
            return any(covered(text, t) for t in consented) or bool(
                inp.state_says is not None and e.role == "user" and inp.state_says(text))

        # A turn that clears the floor only with the turn before it (one passage) is recalled with it
        # (not at all when a consented memory says that turn: the passage would repeat it).
        needs = {i: by_id[p] for i, p in answers.items() if i not in ok and not said(by_id[p])}
        ranked = [e for e in [by_id[i] for i in memory_ids] + [e for e in fallback if e.id not in seen]
                  if (e.id in ok or e.id in needs) and not said(e)]
        turns = select_turns(ranked, archived, budget, count, needs=needs)
        if turns:
            texts = [event_text(t) for t in turns]
            item = RecallItem(
                id=f"archive:{turns[0].id}-{turns[-1].id}", text="\n".join(format_turns(turns)),
                source=source, scope="session", event_ids=[t.id for t in turns], kind="conversation",
            )
            mem = [r for r in inp.recall if r.kind == "memory"]
            rest = [r for r in inp.recall if r.kind != "memory"
                    and not (r.kind == "history" and any(covered(r.text, t) for t in texts))]
            inp.recall = [*mem, item, *rest]

    def _recallable(self, key: str, archived: list[Event]) -> list[Event]:
        """The archived turns as recall may quote them: redacted as the memory index holds them
        (:func:`~neotask_tui.memory.index.indexer.redacted_messages`, so the fence says what the receipt
        says), without the ones forgotten or silenced (``never_recall``) in the memory service."""
        red = {eid: text for eid, _, text, _ in redacted_messages(archived)}
        out = [e if red.get(e.id, e.content) == e.content
               else Event(e.type, e.id, e.parent, e.ts, {**e.data, "content": red[e.id]}) for e in archived]
        eng = self.engine
        mem = eng.memory
        if mem is None:
            return out
        try:
            agent = eng.parse_key(key).agent_id
            excl = set(eng.current_record(key).config.get("never_recall", []))
            withheld = mem.withheld_turns(agent, archived, excl)
        except Exception as e:  # as in _memory_turns: never breaks a turn
            log.warning("archive recall: forgotten and silenced turns unknown (%s)", e)
            return out
        return [e for e in out if e.id not in withheld]

    def _memory_turns(self, key: str, query: str, wanted: set[int], k: int) -> tuple[list[int], dict[int, float]]:
        """Event ids among ``wanted`` that the memory service's transcript search ranks for
        ``query``, best first, and each one's *content* score: the search's weighted dense and BM25
        parts (BM25 with the expansion words and the neighbours' context terms), without the signals
        that say who, when or where (a named sender lifts every line of that person alike). Empty
        when memory is off or not built yet; never raises."""
        eng = self.engine
        mem = eng.memory
        if mem is None or not eng.settings.memory.include_transcripts:
            return [], {}
        try:
            agent = eng.parse_key(key).agent_id
            excl = set(eng.current_record(key).config.get("never_recall", []))
            deep = dataclasses.replace(mem.params, prf_docs=FEEDBACK_DOCS)
            hits = mem.search(query, agent_id=agent, k=k, sources=("transcript",), exclude=excl, params=deep)
        except Exception as e:  # memory is a bonus here; the lineage's own ranking still answers
            log.warning("archive recall: memory search failed (%s)", e)
            return [], {}
        out: list[int] = []
        scores: dict[int, float] = {}
        for h in hits:
            for i in h.event_ids:
                if i in wanted and i not in out:
                    out.append(i)
                    scores[i] = content_score(h.components, deep)
        return out, scores
