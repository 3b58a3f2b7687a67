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


def _dialogue(*texts: str) -> list[Event]:
    return [Event(type="message", id=i + 2, parent=i + 1, ts="2026-03-14T10:00:00+00:00",
                  data={"role": "user" if i % 2 == 0 else "assistant", "content": t}) for i, t in enumerate(texts)]


def test_an_elliptic_reply_clears_the_floor_with_the_message_it_answers_and_is_recalled_with_it() -> None:
    from neotask_tui.engine.recall.archive import select_turns
    from neotask_tui.text.tokens import count_text

    chatter = [f"the train was late and the lunch was cold, round {i}" for i in range(40)]
    asked = "Which career path are you thinking about, Caroline?"
    reply = "Working with trans people, helping them accept themselves."
    events = _dialogue(*chatter, asked, reply, *chatter[:10])
    archive = ArchiveRecall(embedder=None)  # the passage's words: lexical side of the floor
    query = "What career path has Caroline decided to pursue?"
    alone = archive.relevant(events, query, own=True)
    q_id, r_id = events[40].id, events[41].id
    assert q_id in alone and r_id not in alone  # the reply alone holds none of the question's words
    answers = archive.answers(events, query)
    assert answers == {r_id: q_id}  # the reply with the message it answers; no chatter with chatter
    by_id = {e.id: e for e in events}
    needs = {i: by_id[p] for i, p in answers.items()}
    reply_ev, asked_ev = by_id[r_id], by_id[q_id]
    # recalled together or not at all: room for the reply alone takes neither
    alone_cost = count_text(f"[e:{reply_ev.id} · 2026-03-14 Sat 10:00] assistant: {reply}")
    assert select_turns([reply_ev], events, alone_cost + 2, count_text, needs=needs) == []
    both = select_turns([reply_ev], events, 200, count_text, needs=needs)
    assert both == [asked_ev, reply_ev]
    # the partner ranked on its own too is quoted once
    chosen = select_turns([reply_ev, asked_ev], events, 200, count_text, needs=needs)
    assert chosen == [asked_ev, reply_ev]


def test_chatter_after_chatter_is_no_passage_and_thanks_has_none() -> None:
    events = _dialogue(*FILLER, "Caroline: I went to a LGBTQ support group yesterday", "That is lovely.")
    archive = ArchiveRecall(embedder=None)
    answers = archive.answers(events, "When did Caroline go to the LGBTQ support group?")
    assert answers == {events[-1].id: events[-2].id}
    assert archive.answers(events, "thanks!") == {}
    assert archive.answers(events, "What is the capital of Peru?") == {}
