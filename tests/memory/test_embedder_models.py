"""The bundled embedders, their query/passage prefixes and cosine calibration, and the re-embed after a
model change (real models, real LanceDB on the test's data dir)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from neotask_tui.config import MemorySettings
from neotask_tui.memory.index.embedder import Embedder
from neotask_tui.memory.index.models import (
    BUNDLED,
    DEFAULT,
    E5_SMALL,
    MINILM,
    PAIR,
    prefixes,
    query_weights,
    spec_for,
)
from neotask_tui.memory.search.relevance import calibrated, similarity, unit_parts
from neotask_tui.memory.service import MemoryService


@pytest.mark.parametrize(
    ("name", "query", "passage"),
    [
        ("intfloat/multilingual-e5-large", "query: ", "passage: "),
        ("intfloat/e5-small-v2", "query: ", "passage: "),
        ("BAAI/bge-small-en-v1.5", "Represent this sentence for searching relevant passages: ", ""),
        ("BAAI/bge-small-zh-v1.5", "为这个句子生成表示以用于检索相关文章：", ""),
        ("nomic-ai/nomic-embed-text-v1.5", "search_query: ", "search_document: "),
        ("snowflake/snowflake-arctic-embed-s", "Represent this sentence for searching relevant passages: ", ""),
        ("sentence-transformers/all-MiniLM-L6-v2", "", ""),
        ("sentence-transformers/paraphrase-multilingual-mpnet-base-v2", "", ""),
        ("BAAI/bge-m3", "", ""),
    ],
)
def test_prefixes_of_a_configured_model(name: str, query: str, passage: str) -> None:
    assert prefixes(name) == (query, passage)
    spec = spec_for(name)
    assert (spec.query_prefix, spec.passage_prefix) == (query, passage)
    assert spec.backend == "fastembed" and spec.model_id == name


def test_e5_instruct_gets_its_instruction_and_no_passage_prefix() -> None:
    q, p = prefixes("intfloat/multilingual-e5-large-instruct")
    assert q.startswith("Instruct: ") and q.endswith("Query: ") and p == ""


def test_local_model_dir_keeps_its_prefixes(tmp_path: Path) -> None:
    spec = spec_for(f"intfloat/multilingual-e5-small@{tmp_path / 'e5'}")
    assert spec.model_id == "intfloat/multilingual-e5-small@e5"
    assert (spec.query_prefix, spec.passage_prefix) == ("query: ", "passage: ")


def test_bundled_registrations() -> None:
    assert spec_for("") is DEFAULT is PAIR
    assert spec_for(MINILM.model_id) is MINILM and spec_for(E5_SMALL.model_id) is E5_SMALL
    assert set(BUNDLED) == {MINILM.model_id, E5_SMALL.model_id, PAIR.model_id}
    assert E5_SMALL.prefixed and not MINILM.prefixed and PAIR.prefixed
    assert PAIR.offsets == (0.0, E5_SMALL.cos_offset) and MINILM.offsets == (0.0,)


def test_fastembed_model_gets_its_prefixes_on_the_text(neotask_home: Path) -> None:
    """A prefixed fastembed model (the bundled MiniLM files standing in, offline) embeds a query as
    ``prefix + text``: the query vector is the passage vector of the prefixed text."""
    from neotask_tui.memory.index.embedder import bundled_model_dir

    emb = Embedder(f"intfloat/multilingual-e5-small@{bundled_model_dir()}")
    assert emb.spec.query_prefix == "query: "
    emb.spec = dataclasses.replace(emb.spec, name=MINILM.name)  # the files are MiniLM's architecture
    q = emb.embed_query("where are the staging keys")
    plain = Embedder(MINILM.model_id)
    same = plain.embed(["query: where are the staging keys"])[0]
    bare = plain.embed(["where are the staging keys"])[0]
    assert float(q @ same) > 0.999
    assert float(q @ bare) < 0.99
    p = emb.embed(["the keys are in vault"])[0]
    assert float(p @ plain.embed(["passage: the keys are in vault"])[0]) > 0.999


def test_e5_query_and_passage_differ_and_cross_languages(neotask_home: Path) -> None:
    emb = Embedder(E5_SMALL.model_id)
    assert emb.model_id == E5_SMALL.model_id and emb.dim == 384
    q = emb.embed_query("где хранятся учётные данные тестового стенда")
    assert q.shape == (384,) and abs(float(q @ q) - 1.0) < 1e-4
    as_passage = emb.embed(["где хранятся учётные данные тестового стенда"])[0]
    assert float(q @ as_passage) < 0.99  # the query: / passage: prefixes are applied
    vw, pw = emb.embed_query_with("ключи от стенда", ["vault"])
    assert pw.shape == (1, 384) and float(pw[0] @ emb.embed(["vault"])[0]) > 0.999  # extras are passages
    assert vw is emb.embed_query("ключи от стенда")  # the query is cached as a query
    notes = emb.embed(["Ключи от staging лежат в Vault.", "Марина делает ревью до обеда."])
    sims = calibrated(notes @ q, emb.spec.cos_offset)
    assert sims[0] > sims[1]
    en = emb.embed(["The staging credentials are kept in Vault."])[0]
    ru = emb.embed(["Учётные данные тестового стенда хранятся в Vault."])[0]
    other = emb.embed(["Марина делает ревью до обеда."])[0]
    assert float(en @ ru) > float(en @ other)  # one meaning across languages


def test_calibrated_maps_the_unrelated_level_to_zero() -> None:
    import numpy as np

    assert calibrated(0.5, 0.0) == 0.5
    assert calibrated(0.72, 0.72) == pytest.approx(0.0)
    assert calibrated(1.0, 0.72) == pytest.approx(1.0)
    arr = calibrated(np.array([0.72, 0.86]), 0.72)
    assert arr == pytest.approx([0.0, 0.5])


def test_recall_floor_holds_on_e5(neotask_home: Path) -> None:
    """On e5 an unrelated passage scores ~0.75-0.82 raw: calibrated, it stays under the recall floor,
    and the note asked back in another language still is recalled (the floor is strict on e5: a
    looser paraphrase scores like chatter, see ``E5_SMALL``)."""
    svc = MemoryService(MemorySettings())
    try:
        svc.add("main", "The billing backup copies go to the cold-vault bucket in eu-west.")
        assert svc.recall("What should I cook for dinner tonight?", agent_id="main", budget_tokens=500, k=3) == []
        hits = svc.recall("Копии бэкапа биллинга идут в бакет cold-vault в eu-west?", agent_id="main",
                          budget_tokens=500, k=3)
        assert hits and "cold-vault" in hits[0].text
    finally:
        svc.close()


def test_index_built_with_the_old_model_is_re_embedded_with_the_new(neotask_home: Path) -> None:
    """An index built by the previous bundled model (MiniLM) is re-embedded by the new default on
    first open: transcripts migrated (with progress), memory files re-chunked, the old table dropped."""
    from neotask_tui.storage.events import Event

    old = MemoryService(MemorySettings(embedding_model=MINILM.model_id))
    old.add("main", "Ключи от staging лежат в Vault, доступ выдаёт Олег.")
    old.index_transcript("main", "s1", [Event("message", 1, None, "2025-01-01T10:00:00+00:00",
                                              {"role": "user", "content": "We chose Kubernetes."})], "agent:main")
    old_table = old.store.name
    assert "minilm" in old_table
    old.close()

    seen: list[tuple[str, int, int]] = []
    new = MemoryService(MemorySettings(), progress=lambda phase, done, total: seen.append((phase, done, total)))
    try:
        assert new.embedder.model_id == DEFAULT.model_id
        assert new.store.name != old_table and old_table not in new.store.table_names()
        assert ("migrating transcripts", 1, 1) in seen  # the transcript row, re-embedded with progress
        stats = new.reindex("main")
        assert stats.chunks_embedded >= 1
        assert any(p.startswith("embedding ") for p, _, _ in seen)
        hit = new.search("где учётные данные тестового стенда", agent_id="main", k=1, sources=("memory",))
        assert hit and "Vault" in hit[0].text
        kube = new.search("Kubernetes", agent_id="main", k=1, sources=("transcript",))
        assert kube and "Kubernetes" in kube[0].text
        assert new.reindex("main").chunks_embedded == 0  # once, not on every open
    finally:
        new.close()


@pytest.mark.parametrize(
    ("text", "weights"),
    [
        ("where are the staging keys", (0.5, 0.5)),
        ("где ключи от стенда", (0.0, 1.0)),
        ("Ключі від стенду", (0.0, 1.0)),
        ("502", (0.5, 0.5)),  # no letters: both models
        ("docker на проде", (0.5 * 6 / 13, 1 - 0.5 * 6 / 13)),  # 6 of its 13 letters are ASCII
    ],
)
def test_query_weights_of_the_pair(text: str, weights: tuple[float, float]) -> None:
    assert query_weights(PAIR, text) == pytest.approx(weights)
    assert query_weights(E5_SMALL, text) == (1.0,)


def test_similarity_is_the_weighted_sum_of_each_models_calibrated_cosine() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    a = unit_parts(rng.normal(size=(5, 4)).astype(np.float32))  # model A's passages
    b = unit_parts(rng.normal(size=(5, 4)).astype(np.float32))  # model B's
    qa, qb = a[0].copy(), b[1].copy()
    passages = unit_parts(np.concatenate([a, b], axis=1), 2)
    assert np.linalg.norm(passages, axis=1) == pytest.approx(np.ones(5))
    offsets = (0.1, 0.72)
    for w in ((0.5, 0.5), (0.0, 1.0), (0.3, 0.7)):
        q = np.concatenate([2 * w[0] * qa, 2 * w[1] * qb]) / np.sqrt(2)
        want = w[0] * calibrated(a @ qa, 0.1) + w[1] * calibrated(b @ qb, 0.72)
        assert similarity(passages, q, offsets) == pytest.approx(want, abs=1e-5)
    # two passages compared: each model counts half, a passage is fully similar to itself
    pp = similarity(passages, passages[2], offsets)
    assert pp[2] == pytest.approx(1.0, abs=1e-5)
    assert pp == pytest.approx(0.5 * calibrated(a @ a[2], 0.1) + 0.5 * calibrated(b @ b[2], 0.72), abs=1e-5)
    # a matrix of queries gives one row per query
    assert similarity(passages, passages[:2], offsets).shape == (2, 5)


def test_the_bundled_pair_scores_russian_by_e5_alone_and_english_by_both(neotask_home: Path) -> None:
    """The shipped default embeds with both bundled models; a Cyrillic question is scored by e5 alone
    (MiniLM's cosines of Cyrillic text are noise), an English one by the mean of both models'
    calibrated cosines."""
    pair, e5, mini = Embedder(), Embedder(E5_SMALL.model_id), Embedder(MINILM.model_id)
    notes = ["Ключи от staging лежат в Vault, доступ выдаёт Олег.", "Марина делает ревью до обеда.",
             "The design mockups live in Figma, in the Mobile 2.0 project."]
    p = pair.embed(notes)
    assert pair.dim == 768 and p.shape == (3, 768)
    ru = "где хранятся учётные данные тестового стенда"
    got = similarity(p, pair.embed_query(ru), PAIR.offsets)
    assert got == pytest.approx(similarity(e5.embed(notes), e5.embed_query(ru), E5_SMALL.offsets), abs=1e-4)
    assert int(got.argmax()) == 0
    en = "where can I see the screen designs"
    got = similarity(p, pair.embed_query(en), PAIR.offsets)
    want = 0.5 * similarity(mini.embed(notes), mini.embed_query(en), MINILM.offsets) + 0.5 * similarity(
        e5.embed(notes), e5.embed_query(en), E5_SMALL.offsets)
    assert got == pytest.approx(want, abs=1e-4)
    assert int(got.argmax()) == 2
