"""Auto-recall's relevance floor and "the same text" (pure functions)."""

from __future__ import annotations

from neotask_tui.memory.search.relevance import covered, relevant
from neotask_tui.tuning import MEMORY_RECALL_MIN_COSINE


def test_relevant_needs_most_query_terms_or_a_close_meaning() -> None:
    assert relevant(None, matched=2, query_terms=3)          # most of the terms
    assert not relevant(None, matched=1, query_terms=2)      # half is not most
    assert not relevant(0.1, matched=0, query_terms=0)       # "thanks!": no terms, far in meaning
    assert relevant(MEMORY_RECALL_MIN_COSINE, matched=0, query_terms=4)
    assert not relevant(MEMORY_RECALL_MIN_COSINE - 0.01, matched=1, query_terms=4)
    # a fused score is relative; the floor is not: a best-of-nothing hit with cos 0.05 stays out
    assert not relevant(0.05, matched=0, query_terms=3)


def test_covered_is_the_same_words_in_order_punctuation_and_case_aside() -> None:
    fact = "- 2026-03-02 12:00 [user] The staging host is stage-db.internal on port 6432."
    assert covered("the staging host is STAGE-DB.internal on port 6432", fact)
    assert not covered("the staging host is not stage-db.internal", fact)  # "not" counts
    assert not covered(fact, "The staging host is stage-db.internal on port 6432.")  # the longer says more
    assert not covered("", fact)


def test_a_listed_score_never_reads_zero_for_a_real_hit() -> None:
    from neotask_tui.memory.types import score_text

    assert score_text(0.4567) == "0.457"
    assert score_text(0.00042) == "0.00042"  # weak, but a hit: not "0.000"
    assert score_text(0.0) == "0.000"


def test_a_passage_is_measured_against_references_in_its_own_script() -> None:
    from neotask_tui.memory.search.relevance import UNRELATED_BY_SCRIPT, references, script

    assert script("昨天下雨了，我们下了一下午的棋。") == "han"
    assert script("飛行機が二時間遅れた。") == "kana"  # Han and kana together are Japanese
    assert script("축구 경기는 무승부로 끝났다.") == "hangul"
    assert script("Χθες έβρεχε και παίξαμε σκάκι.") == "greek"
    assert script("المتحف مغلق") == "arabic"
    assert script("The staging host is stage-db.internal.") is None
    assert script("Вчера шёл дождь.") == "cyrillic"
    assert script("Хост базы стейджинга — stage-db.internal, порт 6432.") == "cyrillic"  # mostly Cyrillic
    assert script("Deploy 部署 on Thursday, then tell the whole team about it") is None  # mostly Latin
    assert script("42 — 17") is None
    # every script key has references, each in its own script
    for key, texts in UNRELATED_BY_SCRIPT.items():
        assert len(texts) >= 8 and all(script(t) == key for t in texts), key
    assert [k for k, _ in references()] == [None, *UNRELATED_BY_SCRIPT]
