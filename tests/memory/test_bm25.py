"""In-process BM25 (:mod:`neotask_tui.text.bm25`): same scores as LanceDB's FTS, per-agent statistics."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neotask_tui.memory.index.store import ChunkStore
from neotask_tui.text.bm25 import FieldIndex


def _meta(lex: list[str], ctx: list[str], agents: list[str]) -> dict[str, list[Any]]:
    n = len(lex)
    return {
        "id": [f"c{i}" for i in range(n)], "agent_id": agents, "scope": ["s"] * n, "source": ["transcript"] * n,
        "path": ["p"] * n, "line_start": [0] * n, "own_start": [0] * n, "line_end": [0] * n,
        "heading": [""] * n, "text": lex, "etext": lex, "lex": lex, "ctx": ctx, "hash": ["h"] * n,
        "file_hash": [""] * n, "file_mtime": [0.0] * n, "file_size": [0] * n, "ts": [0.0] * n,
        "event_ids": [[i] for i in range(n)], "session_id": [""] * n,
    }


def test_scores_match_lancedb_fts(tmp_path: Path) -> None:
    from lancedb import query as lq

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(80)]

    def doc() -> str:  # Zipf-ish, some empty rows (LanceDB does not count those)
        return " ".join(vocab[min(79, int(rng.paretovariate(0.8)))] for _ in range(rng.randint(0, 20)))

    n = 400
    lex, ctx = [doc() for _ in range(n)], [doc() for _ in range(n)]
    store = ChunkStore(str(tmp_path / "db"), "m", 4)
    store.add_arrays(_meta(lex, ctx, ["a"] * n), np.ones((n, 4), dtype=np.float32))
    snap = store.snapshot()
    for q in ("w1 w5 w40", "w3", "w70 w2 nothere"):
        ref = dict(store.fts(lq.BooleanQuery([
            (lq.Occur.SHOULD, lq.MatchQuery(q, "lex")),
            (lq.Occur.SHOULD, lq.MatchQuery(q, "ctx", boost=0.3)),
        ]), "agent_id = 'a'", n))
        ours = np.zeros(n)
        snap.field_index("lex").score(q.split(), None, ours)
        snap.field_index("ctx").score(q.split(), None, ours, 0.3)
        assert {snap.ids[i] for i in np.flatnonzero(ours)} == set(ref)
        for cid, score in ref.items():
            assert ours[snap.index[cid]] == pytest.approx(score, rel=1e-4)


def test_statistics_and_results_only_over_visible_rows() -> None:
    lex = ["apple pie", "apple", "pear", "apple pear", "", "banana"]
    idx = FieldIndex(lex)
    mask = np.array([False, True, True, False, True, False])
    out = np.zeros(len(lex))
    found = idx.score(["apple", "banana", "kiwi"], mask, out)
    assert found == ["apple"]  # banana exists only in a hidden row
    assert np.flatnonzero(out).tolist() == [1]
    # N = 2 non-empty visible rows, df = 1 -> idf = ln(1 + 1.5 / 1.5)
    avgdl = 1.0
    expect = np.log(2.0) * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 1 / avgdl))
    assert out[1] == pytest.approx(expect)
    # another agent's rows change nothing: same visible subset in a bigger table scores the same
    big = FieldIndex(lex + ["apple apple apple"] * 50)
    out2 = np.zeros(len(lex) + 50)
    big.score(["apple"], np.concatenate([mask, np.zeros(50, dtype=bool)]), out2)
    assert out2[1] == pytest.approx(expect)


def test_tokens_and_edge_cases() -> None:
    idx = FieldIndex([" a  b ", None, "x" * 65 + " a", ""])
    assert idx.doc_len.tolist() == [2.0, 0.0, 1.0, 0.0]  # blank tokens and >64-char tokens dropped
    out = np.zeros(4)
    assert idx.score([], None, out) == [] and not out.any()
    assert idx.score(["a"], np.zeros(4, dtype=bool), out) == []
    empty = FieldIndex([])
    assert empty.score(["a"], None, np.zeros(0)) == []


def test_group_score_rewards_terms_spread_over_a_group() -> None:
    # group 0 has both terms in different rows; group 1 only one of them; group 2 is hidden
    lex = ["apple", "pear", "apple", "plum", "apple pear"]
    groups = np.array([0, 0, 1, 1, 2])
    idx = FieldIndex(lex)
    mask = np.array([True, True, True, True, False])
    gs = idx.group_score(["apple", "pear"], mask, groups, 3)
    assert gs[0] > gs[1] > 0 and gs[2] == 0
    assert not idx.group_score(["kiwi"], mask, groups, 3).any()


def test_ideal_is_the_score_of_an_average_row_holding_the_whole_query() -> None:
    lex = ["red fox", "blue owl", "red owl", "green cat"]  # every row 2 tokens: average length 2
    idx = FieldIndex(lex)
    out = np.zeros(len(lex))
    idx.score(["red", "fox"], None, out)
    assert out[0] == pytest.approx(idx.ideal(["red", "fox"], None))  # row 0 holds both terms once
    assert out[2] < idx.ideal(["red", "fox"], None)  # row 2 holds one of them
    # a term no visible row holds counts at the highest IDF (N = 4, df = 0)
    assert idx.ideal(["zebra"], None) == pytest.approx(np.log(1 + 4.5 / 0.5))
    assert idx.ideal(["red", "red"], None) == pytest.approx(idx.ideal(["red"], None))
    assert idx.ideal(["red"], np.zeros(4, dtype=bool)) == 0.0
