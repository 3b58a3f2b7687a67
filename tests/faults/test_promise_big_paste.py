"""Promise: a 100 KB paste never stalls a turn or a compaction, memory included.

Three 100 KB pastes and a compaction made the next turn index the archived transcript inline: 126
rows for one paste, every neighbour's row carrying the whole paste in ``etext``/``ctx``, embedded
64 at a time (78 s and 5 GB of RAM). These tests assert structure, never time (figures:
``bench/faults.py``, ``big_paste``): what one message puts in the index is bounded, embedder
batches are bounded in tokens, a big archive is indexed in the background (with a notice) and an
indexing cut short by a close is resumed, reusing what it had embedded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("neotask_tui.memory.service")

from neotask_tui.engine import events as ev
from neotask_tui.memory.index.chunking import chunk_markdown, token_counter
from neotask_tui.memory.index.embedder import EMBED_BATCH_TOKENS, _est_tokens, token_batches
from neotask_tui.memory.index.indexer import CONTEXT_EXCERPT_CHARS, TRANSCRIPT_MESSAGE_MAX_CHARS, Cancelled
from neotask_tui.storage.events import Event
from tests.faults.helpers import KEY, run_turn

pytestmark = pytest.mark.promise("big_paste")

PASTE = "x " * 50_000  # the red team's 100 KB paste: 50,000 one-token words
QUESTION = "why does the zebracorn build fail"


@pytest.fixture
def memory_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    # The promises here are about indexing a big paste in the background (never blocking a turn,
    # stopped by a close, finished by the next start), not about the model: one bundled model
    # instead of the shipped pair embeds these pastes three times faster (the pair has its own tests).
    monkeypatch.setenv("NEOTASK_MEMORY_EMBEDDING_MODEL", "all-MiniLM-L6-v2-int8")


def _events(*contents: tuple[str, str]) -> list[Event]:
    out = [Event("session", 1, None, "2026-01-01T10:00:00+00:00", {})]
    for i, (role, text) in enumerate(contents, start=2):
        out.append(Event("message", i, i - 1, f"2026-01-01T10:00:{i:02d}+00:00", {"role": role, "content": text}))
    return out


def _service() -> Any:
    from neotask_tui.config import load_settings
    from neotask_tui.memory.service import MemoryService

    return MemoryService(load_settings().memory)


def _rows(svc: Any, session_id: str) -> list[dict[str, Any]]:
    return svc.store.rows_where(f"session_id = '{session_id}'", ["text", "etext", "ctx", "event_ids"])


def test_one_100kb_message_is_indexed_as_bounded_rows(memory_on: None) -> None:
    svc = _service()
    try:
        events = _events(("user", "here is the log"), ("user", PASTE + QUESTION), ("assistant", "noted"),
                         ("user", PASTE))
        svc.index_transcript("main", "s1", events, "agent:main")
        rows = _rows(svc, "s1")
        paste = [r for r in rows if r["event_ids"] == [3]]
        size = svc.settings.chunk_tokens
        count = token_counter()
        # at most the cap's worth of chunks (chunk overlap included), not the 126 of the whole paste
        assert 1 < len(paste) <= 2 * len(chunk_markdown("x " * (TRANSCRIPT_MESSAGE_MAX_CHARS // 2), size=size))
        assert sum(len(r["text"]) for r in paste) <= 2 * TRANSCRIPT_MESSAGE_MAX_CHARS
        assert any(QUESTION in r["text"] for r in paste), "what follows the paste is indexed too"
        for r in rows:
            assert count(r["text"]) <= size
            assert len(r["etext"]) <= len(r["text"]) + CONTEXT_EXCERPT_CHARS + 1
            assert len(r["ctx"]) <= 4 * CONTEXT_EXCERPT_CHARS, "a neighbour's context is an excerpt"
        reply = [r for r in rows if r["event_ids"] == [4]]
        assert reply and len(reply[0]["etext"]) < 2 * CONTEXT_EXCERPT_CHARS
    finally:
        svc.close()


def test_a_blob_without_spaces_is_cut_into_chunks() -> None:
    blob = "3f9a1c0b7e" * 20_000
    drafts = chunk_markdown(blob, size=400)
    count = token_counter()
    assert len(drafts) > 10 and all(count(d.text) <= 400 for d in drafts)
    assert "".join(d.text for d in drafts) == blob, "the pieces of one word are rejoined without spaces"


def test_embedder_batches_are_bounded_in_tokens() -> None:
    texts = ["x " * 300] * 40 + ["short query"] * 100
    batches = token_batches(texts, 64)
    assert [j for r in batches for j in r] == list(range(len(texts)))
    for r in batches:
        assert len(r) <= 64
        assert len(r) == 1 or len(r) * max(_est_tokens(texts[j]) for j in r) <= EMBED_BATCH_TOKENS
    assert max(len(r) for r in batches) == 64, "short texts still go many at a time"


def test_an_indexing_cut_short_keeps_its_vectors_and_resumes(memory_on: None, monkeypatch: pytest.MonkeyPatch) -> None:
    svc = _service()
    try:
        varied = " ".join(f"w{i}" for i in range(20_000))  # no two chunks alike (alike ones share a vector)
        events = _events(("user", varied), ("assistant", "noted"))
        ix = svc.indexer
        real = ix.embed_in_context
        calls: list[int] = []

        def first_step_then_close(texts: Any, contexts: Any) -> Any:
            calls.append(len(texts))
            ix.cancel.set()  # engine close during the first step
            return real(texts, contexts)

        monkeypatch.setattr(ix, "embed_in_context", first_step_then_close)
        with pytest.raises(Cancelled):
            ix.index_transcript("main", "s2", events, "agent:main", set())
        kept = len(_rows(svc, "s2"))
        assert kept == calls[0] > 0, "what was embedded before the close is kept"
        monkeypatch.setattr(ix, "embed_in_context", real)
        ix.cancel.clear()
        total, embedded = ix.index_transcript("main", "s2", events, "agent:main", set())
        assert embedded == total - kept, "the next start embeds only the rest"
        assert len(_rows(svc, "s2")) == total
    finally:
        svc.close()


def _manifest(data_dir: Path) -> dict[str, Any]:
    f = data_dir / "memory-transcripts.json"
    return json.loads(f.read_text()) if f.exists() else {}


async def test_three_pastes_compaction_then_a_turn_indexes_the_archive_in_the_background(
    memory_on: None, data_dir: Path,
) -> None:
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    engine: Any = Engine(load_settings(), provider=ScriptedProvider())
    try:
        for i in range(3):
            engine.provider.queue({"text": f"noted paste {i}"})
            await run_turn(engine, PASTE + f"\npaste number {i}", KEY)
        engine.provider.queue({"text": "## Decisions\n- keep the pastes [e:2]"})
        await engine.compact(KEY)
        archived = [a.session_id for a in engine.store.list_archived()]
        assert archived
        engine.provider.queue({"text": "fine"})
        out = await run_turn(engine, "small question", KEY)
        notes = [e.text for e in out if isinstance(e, ev.Notice)]
        assert any("in the background" in n for n in notes), notes
        mem = engine.memory
        assert mem is not None
        mem.wait_for_index()
        assert set(archived) <= set(_manifest(data_dir))
        assert mem.stats("main")["by_source"].get("transcript", 0) > 0
        engine.provider.queue({"text": "ok"})
        out = await run_turn(engine, "what was paste number 2?", KEY)
        assert not any("in the background" in e.text for e in out if isinstance(e, ev.Notice))
    finally:
        await engine.aclose()
    assert engine.memory is None or not engine.memory.background_busy()


async def test_a_close_stops_the_background_and_the_next_start_finishes(memory_on: None, data_dir: Path) -> None:
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    engine: Any = Engine(load_settings(), provider=ScriptedProvider())
    try:
        for i in range(2):
            engine.provider.queue({"text": f"noted {i}"})
            await run_turn(engine, PASTE + f"\nblob {i}", KEY)
        await engine.new_session(KEY)
        engine.provider.queue({"text": "fine"})
        await run_turn(engine, "small question", KEY)
        mem = engine.memory
    finally:
        await engine.aclose()
    assert mem is not None and not mem.background_busy(), "close waits for (or stops) the background"
    engine2: Any = Engine(load_settings(), provider=ScriptedProvider())
    try:
        engine2.provider.queue({"text": "fine"})
        await run_turn(engine2, "another question", KEY)
        if engine2.memory is not None:
            engine2.memory.wait_for_index()
        archived = {a.session_id for a in engine2.store.list_archived()}
        assert archived and archived <= set(_manifest(data_dir))
    finally:
        await engine2.aclose()
