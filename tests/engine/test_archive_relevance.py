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
