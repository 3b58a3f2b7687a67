"""The relevance floor for this conversation's own compacted turns vs other sessions' turns."""

from __future__ import annotations

from neotask_tui.engine.recall.archive import ArchiveRecall
from neotask_tui.storage.events import Event


def _turns(*texts: str) -> list[Event]:
    return [Event(type="message", id=i + 2, parent=i + 1, ts="2026-03-14T10:00:00+00:00",
                  data={"role": "user", "content": t}) for i, t in enumerate(texts)]


FILLER = [f"Caroline: we talked about the weather and lunch plans, round {i}" for i in range(30)]


def test_one_distinctive_word_is_enough_in_this_conversation_not_in_history() -> None:
    events = _turns(*FILLER, "Caroline: I went to a LGBTQ support group yesterday and it was powerful")
    target = events[-1].id
    query = "When did Caroline go to the LGBTQ support group?"
    archive = ArchiveRecall(embedder=None)  # lexical only: the floor's term side
    assert target in archive.relevant(events, query, own=True)
    # the same turn in another session's history needs most of the message's terms
    query = "Did Caroline like the support meetup Melanie recommended?"
    assert target in archive.relevant(events, query, own=True)
    assert target not in archive.relevant(events, query)


def test_background_words_and_chatter_recall_nothing_even_in_this_conversation() -> None:
    events = _turns(*FILLER, "Caroline: I went to a LGBTQ support group yesterday")
    archive = ArchiveRecall(embedder=None)
    assert archive.relevant(events, "thanks!", own=True) == set()
    # "Caroline" is in every turn: the conversation's background, not a pointer to one of them
    assert archive.relevant(events, "Caroline, tell me something new", own=True) == set()


def test_outliers_are_the_turns_well_above_the_conversation_background() -> None:
    from neotask_tui.engine.recall.archive import outliers

    sims = [0.1] * 20 + [0.5, 0.45]
    assert outliers(sims, 1.0) == [20, 21]
    assert outliers([0.2] * 10, 1.0) == []  # all alike: nothing stands out
    assert outliers([0.3], 1.0) == []


def test_once_the_message_is_about_the_conversation_close_turns_clear_the_floor_too() -> None:
    from neotask_tui.memory.index.embedder import Embedder
    from neotask_tui.memory.search.relevance import similarity
    from neotask_tui.tuning import MEMORY_RECALL_MIN_COSINE

    background = [f"the train was late and the lunch was cold, round {i}" for i in range(40)]
    anchor = "Caroline loves creative hobbies like pottery"
    related = "I spent the evening with brushes and watercolours on a canvas of the lake"
    events = _turns(*background, anchor, related)
    emb = Embedder()
    archive = ArchiveRecall(embedder=emb)
    query = "What creative hobbies does Caroline enjoy?"
    # the related turn shares no word with the message and is below the absolute cosine floor...
    cos = float(similarity(emb.embed([related]), emb.embed_query(query), emb.spec.offsets)[0])
    assert cos < MEMORY_RECALL_MIN_COSINE
    assert events[-1].id not in archive.relevant(events, query)
    # ...but stands out from the conversation's background once the message is about it
    got = archive.relevant(events, query, own=True)
    assert {events[-2].id, events[-1].id} <= got
    assert not got & {e.id for e in events[:40]}
    # a message about nothing said before still recalls nothing
    assert archive.relevant(events, "thanks!", own=True) == set()
