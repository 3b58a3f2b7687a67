"""Ranking signals beyond dense + BM25: named dates, named senders, semantic query expansion.

Real fastembed model and LanceDB (the ``mem`` fixture); the word-vector cache is a real file.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from neotask_tui.memory.index.store import _sender
from neotask_tui.memory.search.hybrid import RankParams, dates, dense_query, rank
from neotask_tui.memory.search.termvec import TermVectors
from neotask_tui.memory.service import MemoryService
from neotask_tui.storage.events import Event


def _msg(eid: int, when: str, text: str, role: str = "user") -> Event:
    return Event("message", eid, eid - 1 or None, when, {"role": role, "content": text})


# -- dates -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Mel paint on October 13, 2023?", (2023, datetime(2023, 10, 13), datetime(2023, 10, 14))),
        ("What did Gina find on 1 February, 2023?", (2023, datetime(2023, 2, 1), datetime(2023, 2, 2))),
        ("what broke in November 2022", (2022, datetime(2022, 11, 1), datetime(2022, 12, 1))),
        ("what did we ship in Dec 2023", (2023, datetime(2023, 12, 1), datetime(2024, 1, 1))),
        ("How many times did she go to the beach in 2023?", (2023, datetime(2023, 1, 1), datetime(2024, 1, 1))),
    ],
)
def test_query_windows_absolute_dates(query: str, expected: tuple[int, datetime, datetime]) -> None:
    year, start, end = expected
    assert dates.query_windows(query) == [(year, start.timestamp(), end.timestamp())]


def test_query_windows_bare_month_and_nothing() -> None:
    (w,) = dates.query_windows("When did Melanie go camping in June?")
    assert w[0] is None and w[1] == 152.0  # June 1 is day 152 of a common year
    assert dates.query_windows("May I ask what we decided?") == []  # the verb, not the month
    assert dates.query_windows("what did we decide") == []  # relative periods: tests/memory/test_dates.py
    no_day = dates.query_windows("on 31 February, 2023")  # no such day: the month still counts
    assert no_day == [(2023, datetime(2023, 2, 1).timestamp(), datetime(2023, 3, 1).timestamp())]


def test_window_match_slack_undated_and_any_year() -> None:
    ts = [datetime(2023, 6, 20).timestamp(), datetime(2023, 7, 10).timestamp(),
          datetime(2023, 7, 20).timestamp(), datetime(2022, 6, 3).timestamp(), 0.0]
    # June in any year, reported up to 14 days after the month ends; undated rows never match
    assert dates.window_match(ts, dates.query_windows("camping in June?")).tolist() == [1, 1, 0, 1, 0]
    assert dates.window_match(ts, dates.query_windows("camping in June 2023?")).tolist() == [1, 1, 0, 0, 0]


def test_a_named_date_ranks_the_message_of_that_time_first(mem: MemoryService) -> None:
    text = "Melanie: We went camping by the lake with the kids."
    mem.index_transcript("main", "s-may", [_msg(1, "2023-05-20T10:00:00", text)], "agent:main")
    mem.index_transcript("main", "s-aug", [_msg(2, "2023-08-20T10:00:00", text)], "agent:main")
    for month, eid in (("May", 1), ("August", 2)):
        hits = mem.search(f"When did Melanie go camping in {month} 2023?", agent_id="main", k=2,
                          sources=("transcript",))
        assert [h.event_ids[0] for h in hits] == [eid, 3 - eid]
        assert hits[0].components["date_match"] == 1.0 and hits[1].components["date_match"] == 0.0
    hits = mem.search("When did Melanie go camping?", agent_id="main", k=2, sources=("transcript",))
    assert all("date_match" not in h.components for h in hits)  # no date named: no date signal


def test_a_russian_date_ranks_the_message_of_that_time_first(mem: MemoryService) -> None:
    text = "Мелани: Мы ходили в поход к озеру с детьми."
    mem.index_transcript("main", "s-may", [_msg(1, "2023-05-20T10:00:00", text)], "agent:main")
    mem.index_transcript("main", "s-aug", [_msg(2, "2023-08-20T10:00:00", text)], "agent:main")
    for period, eid in (("в мае 2023", 1), ("летом 2023 года", 2), ("с 15 по 25 августа 2023", 2)):
        hits = mem.search(f"Когда Мелани ходила в поход {period}?", agent_id="main", k=2, sources=("transcript",))
        assert [h.event_ids[0] for h in hits] == [eid, 3 - eid], period
        assert hits[0].components["date_match"] == 1.0 and hits[1].components["date_match"] == 0.0


def test_a_relative_period_counts_from_the_search_time(mem: MemoryService) -> None:
    from datetime import timedelta

    text = "Решили перенести релиз на следующий квартал."
    day = datetime.now().replace(hour=12, minute=0, second=0, microsecond=0)
    for eid, when in ((1, day - timedelta(days=1)), (2, day - timedelta(days=60))):
        mem.index_transcript("main", f"s-{eid}", [_msg(eid, when.isoformat(), text)], "agent:main")
    hits = mem.search("Что мы решили вчера про релиз?", agent_id="main", k=2, sources=("transcript",))
    assert [h.event_ids[0] for h in hits] == [1, 2] and hits[0].components["date_match"] == 1.0
    hits = mem.search("Что мы решили про релиз в прошлом веке?", agent_id="main", k=2, sources=("transcript",))
    assert all("date_match" not in h.components for h in hits)
    hits = mem.search("What did we decide in 1999?", agent_id="main", k=2, sources=("transcript",))
    assert all("date_match" not in h.components for h in hits)  # nothing dated then: no date evidence


# -- senders ------------------------------------------------------------------------------------


def test_sender_prefix_parsing() -> None:
    assert _sender("Nate: I adopted a dog") == "nate"
    assert _sender("Mary Ann: hi") == "mary ann"
    assert _sender("note: lowercase is not a sender") == ""
    assert _sender("See https://example.com: a link") == ""
    assert _sender("plain message") == ""


def test_a_named_sender_ranks_their_message_first(mem: MemoryService) -> None:
    events = [_msg(1, "2023-05-20T10:00:00", "Joanna: I finally adopted a puppy last week!"),
              _msg(2, "2023-05-20T10:01:00", "Nate: I finally adopted a puppy last week!", role="assistant")]
    mem.index_transcript("main", "s1", events, "agent:main")
    for name, eid in (("Nate", 2), ("Joanna", 1)):
        hits = mem.search(f"Which puppy did {name} adopt?", agent_id="main", k=2, sources=("transcript",))
        assert hits[0].event_ids == [eid]
        assert hits[0].components["sender_match"] == 1.0 and hits[1].components["sender_match"] == 0.0
    off = replace(mem.params, sender_weight=0.0)
    hits = mem.search("Which puppy did Nate adopt?", agent_id="main", k=2, sources=("transcript",), params=off)
    assert all("sender_match" not in h.components for h in hits)


# -- semantic expansion -------------------------------------------------------------------------


def test_expansion_reaches_words_the_query_does_not_contain(mem: MemoryService) -> None:
    mem.add("main", "Max is the new dog in the family; he sleeps on the couch.")
    mem.add("main", "The quarterly report is due on Friday.")
    off = replace(mem.params, sem_weight=0.0)
    plain = mem.search("pets", agent_id="main", k=2, params=off)
    assert all(h.components["lexical"] == 0.0 for h in plain)  # BM25 alone: no shared word
    hits = mem.search("pets", agent_id="main", k=2)
    assert "dog" in hits[0].text and hits[0].components["lexical"] > 0.0


def test_word_vectors_persist_and_forget_prunes_them(mem: MemoryService) -> None:
    mem.add("main", "We stayed in Zanzibar near the harbour.")
    mem.add("main", "The harbour cranes were loud.", file="memory/port.md")
    terms = mem._terms
    assert terms is not None and "zanzibar" in terms.index and terms.path.exists()
    again = TermVectors(terms.path, mem.embedder)  # reloaded from the file
    assert again.stems == terms.stems
    assert np.allclose(again._mat, terms._mat)  # type: ignore[arg-type]
    hit = mem.search("Zanzibar", agent_id="main", k=1)[0]
    mem.forget("main", hit.id)
    assert "zanzibar" not in terms.index  # a forgotten chunk's words do not stay behind
    assert "zanzibar" not in TermVectors(terms.path, mem.embedder).index
    assert "harbour" in terms.index  # still in a live row


def test_expansion_only_uses_words_the_caller_can_see(mem: MemoryService) -> None:
    mem.add("alice", "Alice's puppy is called Biscuit.")
    mem.add("bob", "Bob keeps three turtles in the garden.")
    snap = mem.store.snapshot()
    fi = snap.field_index("lex")
    bob = snap.mask("agent", ["bob"])
    assert fi.df("puppi", bob) == 0 and fi.df("puppi", snap.mask("agent", ["alice"])) == 1
    terms = mem._terms
    assert terms is not None
    got = terms.expand("pets", exclude=set(), k=5, min_sim=0.3, usable=lambda st: fi.df(st, bob) > 0)
    assert got and all(fi.df(st, bob) > 0 for st, _ in got)
    assert "puppi" not in [st for st, _ in got]


def test_damaged_word_vector_cache_is_rebuilt(mem: MemoryService, neotask_home: Path) -> None:
    mem.add("main", "Kubernetes manifests live in deploy/.")
    terms = mem._terms
    assert terms is not None
    terms.path.write_bytes(b"not an npz file")
    fresh = TermVectors(terms.path, mem.embedder)
    assert len(fresh) == 0  # unreadable: starts empty, no exception
    assert fresh.add_texts(["Kubernetes manifests"]) == 2
    assert len(TermVectors(terms.path, mem.embedder)) == 2


def test_a_message_kept_across_a_compaction_is_found_once(mem: MemoryService) -> None:
    kept = _msg(5, "2023-05-20T10:05:00", "We moved the importer cache to SQLite last week.")
    parent = [_msg(4, "2023-05-20T10:04:00", "How is the importer doing?", role="assistant"), kept]
    child = [kept, _msg(6, "2023-05-20T10:06:00", "The SQLite cache also made the importer twice as fast.")]
    mem.index_transcript("main", "s-parent", parent, "agent:main")
    mem.index_transcript("main", "s-child", child, "agent:main")  # compaction copied event 5 with its id
    hits = mem.search("importer cache SQLite", agent_id="main", k=3, sources=("transcript",))
    assert [h.event_ids for h in hits].count([5]) == 1
    assert {tuple(h.event_ids) for h in hits} == {(4,), (5,), (6,)}


def _reload(terms: TermVectors) -> TermVectors:
    return TermVectors(terms.path, terms.embedder)


def test_new_words_are_appended_to_a_log_not_a_rewrite(mem: MemoryService) -> None:
    mem.add("main", "We stayed in Zanzibar near the harbour.")
    terms = mem._terms
    assert terms is not None
    base = terms.path.read_bytes()
    assert terms.add_texts(["Lighthouse keepers"]) == 2
    assert terms.path.read_bytes() == base  # the file was not rewritten for two words...
    assert terms.log_path.exists()  # ...they went to the log
    again = _reload(terms)
    assert again.stems == terms.stems and np.allclose(again._mat, terms._mat)  # type: ignore[arg-type]


def test_a_torn_log_line_is_skipped_and_the_log_folded(mem: MemoryService) -> None:
    mem.add("main", "We stayed in Zanzibar near the harbour.")
    terms = mem._terms
    assert terms is not None
    terms.add_texts(["Lighthouse"])
    with terms.log_path.open("ab") as f:
        f.write(b'{"s": "torn", "w": "torn", "v": "AAAA')  # a crash mid-append
    again = _reload(terms)
    assert "lighthous" in again.index and "torn" not in again.index
    assert not again.log_path.exists()  # folded into the file at once
    assert again.add_texts(["Seagulls"]) == 1 and "seagul" in _reload(terms).index


def test_a_stale_log_never_brings_back_a_pruned_word(mem: MemoryService) -> None:
    mem.add("main", "The harbour cranes were loud.")
    terms = mem._terms
    assert terms is not None
    terms.add_texts(["Zanzibar"])
    stale = terms.log_path.read_bytes()
    terms.prune(st for st in terms.stems if st != "zanzibar")
    terms.log_path.write_bytes(stale)  # as if a crash came between the rewrite and the log's removal
    assert "zanzibar" not in _reload(terms).index


def test_the_log_is_folded_when_it_grows(mem: MemoryService, monkeypatch: pytest.MonkeyPatch) -> None:
    from neotask_tui.memory.search import termvec

    monkeypatch.setattr(termvec, "LOG_MIN", 3)
    mem.add("main", "The harbour cranes were loud.")
    terms = mem._terms
    assert terms is not None
    terms.add_texts(["Zanzibar"])
    assert terms.log_path.exists()
    terms.add_texts(["Lighthouse keepers"])  # 3 logged words: fold
    assert not terms.log_path.exists()
    assert {"zanzibar", "lighthous", "keeper"} <= set(_reload(terms).index)


def test_a_possessive_names_the_sender(mem: MemoryService) -> None:
    events = [_msg(1, "2023-05-20T10:00:00", "Joanna: I finally adopted a puppy last week!"),
              _msg(2, "2023-05-20T10:01:00", "Nate: I finally adopted a puppy last week!", role="assistant")]
    mem.index_transcript("main", "s1", events, "agent:main")
    hits = mem.search("What is the name of Nate's puppy?", agent_id="main", k=2, sources=("transcript",))
    assert hits[0].event_ids == [2] and hits[0].components["sender_match"] == 1.0


def test_the_dense_query_leaves_out_the_senders_it_names(mem: MemoryService) -> None:
    # Separate sessions: each vector is its own message's (no neighbour in the embedded context).
    mem.index_transcript("main", "s1", [_msg(1, "2023-05-20T10:00:00", "Caroline: This is Caroline speaking.")],
                         "agent:main")
    mem.index_transcript("main", "s2", [_msg(2, "2023-05-21T10:00:00", "Caroline: They loved the dinosaurs.")],
                         "agent:main")
    snap = mem.store.snapshot()
    assert dense_query(snap, "What do Caroline's kids like?") == "What do kids like?"
    assert dense_query(snap, "What does Bob like?") == "What does Bob like?"  # not a sender here
    assert dense_query(snap, "Caroline?") == "Caroline?"  # nothing but a name: kept
    # The name says who (the sender signal matches it); the vector compares what the messages say.
    # With the name embedded, "This is Caroline speaking." was the nearer of the two.
    hits = mem.search("What do Caroline's kids like?", agent_id="main", k=2, sources=("transcript",))
    dense = {h.event_ids[0]: h.components["dense"] for h in hits}
    assert dense[2] > dense[1]
    assert all(h.components["sender_match"] == 1.0 for h in hits)


def test_who_and_where_count_only_for_a_message_that_matches_what() -> None:
    # Three messages of one session (same group score): a strong match, a weak match from the other
    # speaker, and a goodbye from the sender the query names that matches nothing of what it asks.
    def unit(cos: float) -> list[float]:
        return [cos, math.sqrt(1 - cos * cos), 0.0]

    vectors = np.array([unit(0.8), unit(0.35), unit(0.0)], dtype=np.float32)
    qvec = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    bm25 = np.array([5.0, 1.0, 0.0])
    args = {"k": 3, "group": np.ones(3), "sender": np.array([1.0, 0.0, 1.0])}

    def ranked(gate: float) -> dict[int, float]:
        out = rank(qvec, vectors, np.arange(3), bm25, params=RankParams(signal_gate=gate), **args)
        assert out[0].row == 0
        return {r.row: r.score for r in out}

    gated, full = ranked(RankParams().signal_gate), ranked(0.0)
    assert full[2] > full[1]  # ungated, who said it and where outweighed what it says
    assert gated[1] > gated.get(2, 0.0)  # gated, the goodbye is below the weak match (or no hit at all)
    assert gated.get(2, 0.0) == pytest.approx(0.0)  # nothing of what was asked: no credit for who or where
    assert gated[1] == pytest.approx(full[1])  # a real match keeps its signals in full


def test_feedback_reaches_a_message_near_the_best_hits() -> None:
    # Ten strong hits share a second direction with one message the query is far from; another
    # message is a little nearer the query but unlike the hits. Feedback (the query moved toward its
    # best hits) ranks the first above the second; the plain query does not.
    hits = [[0.8, 0.6, 0.0]] * 10
    near_hits, near_query = [0.3, math.sqrt(1 - 0.09), 0.0], [0.45, 0.0, math.sqrt(1 - 0.2025)]
    vectors = np.array([*hits, near_hits, near_query], dtype=np.float32)
    qvec = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    bm25 = np.array([5.0] * 10 + [0.0, 0.0])

    def order(prf: int) -> list[int]:
        return [r.row for r in rank(qvec, vectors, np.arange(12), bm25, k=12, params=RankParams(prf_docs=prf))]

    assert order(0).index(11) < order(0).index(10)
    assert order(10).index(10) < order(10).index(11)
    assert set(order(10)[:10]) == set(range(10))  # the best hits stay the best


def test_the_bm25_side_counts_for_the_share_of_the_query_its_best_match_holds() -> None:
    # One passage close in meaning with no word of the query, one far from it sharing a single word
    # with it: the shared word alone took full lexical marks and won; covering a tenth of the query,
    # it counts a tenth.
    def unit(cos: float) -> list[float]:
        return [cos, math.sqrt(1 - cos * cos)]

    vectors = np.array([unit(0.7), unit(0.1)], dtype=np.float32)
    qvec = np.array([1.0, 0.0], dtype=np.float32)
    bm25 = np.array([0.0, 2.0])

    def top(cover: float) -> int:
        return rank(qvec, vectors, np.arange(2), bm25, k=2, params=RankParams(), lexical_cover=cover)[0].row

    assert top(1.0) == 1
    assert top(0.1) == 0


def test_a_paraphrase_outranks_a_note_sharing_one_incidental_word(mem: MemoryService) -> None:
    notes = {
        "canteen.md": "Lunch is served in the canteen from 11:30 to 14:00 on weekdays.",
        "train.md": "The release train leaves every time we tag main; hotfixes skip it.",
        "vpn.md": "The VPN config is in the ops wiki under Network > Remote access.",
        "laptops.md": "New hires get laptops from facilities within two days.",
    }
    ws = mem.workspace("main")
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    for name, text in notes.items():
        (ws / "memory" / name).write_text(text + "\n", encoding="utf-8")
    mem.reindex("main")
    hits = mem.search("what time does the cafeteria open", agent_id="main", k=3, sources=("memory",))
    assert hits[0].path == "memory/canteen.md"
    train = next(h for h in hits if h.path == "memory/train.md")
    assert train.components["lexical"] > 0 and train.components["lexical_norm"] < 0.5


def test_a_chunk_alone_in_its_file_has_its_words_counted_once() -> None:
    # Row 0 is a one-chunk memory note (its group score is its own BM25 again: NaN, no group signal);
    # rows 1-2 are chunks of one longer file. A note close in meaning (row 3, alone too) and the
    # note sharing one word: before, the shared word counted twice (as BM25 and as the "group")
    # and outweighed the meaning.
    def unit(cos: float) -> list[float]:
        return [cos, math.sqrt(1 - cos * cos)]

    vectors = np.array([unit(0.3), unit(0.2), unit(0.1), unit(0.7)], dtype=np.float32)
    qvec = np.array([1.0, 0.0], dtype=np.float32)
    bm25 = np.array([2.0, 1.0, 0.0, 0.0])
    p = RankParams(signal_gate=0.0)
    alone = rank(qvec, vectors, np.arange(4), bm25, k=4, params=p, lexical_cover=0.5,
                 group=np.array([np.nan, 0.5, 0.5, np.nan]))
    twice = rank(qvec, vectors, np.arange(4), bm25, k=4, params=p, lexical_cover=0.5,
                 group=np.array([0.5, 0.5, 0.5, 0.0]))
    assert twice[0].row == 0 and alone[0].row == 3
    by = {r.row: r for r in alone}
    content = (p.dense_weight * by[0].components["dense_norm"] + p.lexical_weight * by[0].components["lexical_norm"])
    assert by[0].score == pytest.approx(content / (p.dense_weight + p.lexical_weight))
    assert "group_norm" not in by[0].components and by[1].components["group_norm"] == 0.5
    # a chunk of a longer file keeps the group signal: its weight is in its sum
    c1 = p.dense_weight * by[1].components["dense_norm"] + p.lexical_weight * by[1].components["lexical_norm"]
    wsum = p.dense_weight + p.lexical_weight + p.group_weight
    assert by[1].score == pytest.approx((c1 + p.group_weight * 0.5) / wsum)


def test_the_group_score_is_left_out_for_a_one_chunk_file(mem: MemoryService) -> None:
    ws = mem.workspace("main")
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "memory" / "deploy.md").write_text("Deploys go out on Tuesdays after the standup.\n", encoding="utf-8")
    (ws / "memory" / "ops.md").write_text(
        "# Deploys\n\nDeploys need two approvals in the release channel.\n\n"
        "# Backups\n\nBackups run nightly at 02:00 and are kept for 30 days.\n", encoding="utf-8")
    mem.reindex("main")
    hits = mem.search("when do deploys go out", agent_id="main", k=5, sources=("memory",))
    by_path: dict[str, list[dict[str, float]]] = {}
    for h in hits:
        by_path.setdefault(h.path, []).append(h.components)
    assert all("group_norm" not in c for c in by_path["memory/deploy.md"])
    assert all("group_norm" in c for c in by_path["memory/ops.md"])
