"""MemoryService on real fastembed + LanceDB: add/search/forget, reindex counts, scopes, recall."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from neotask_tui.config import MemorySettings
from neotask_tui.memory.service import MemoryService
from neotask_tui.storage.events import Event


def _ws(mem: MemoryService, agent: str = "main") -> Path:
    return mem.workspace(agent)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    # make sure the mtime differs from the previous version even on coarse clocks
    st = path.stat()
    import os

    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_add_search_forget_roundtrip(mem: MemoryService) -> None:
    rec = mem.add("main", "My cat is called Pixel and she loves tuna.")
    assert rec.path == "MEMORY.md"
    assert rec.stats.chunks_embedded >= 1
    assert rec.chunk_ids
    mem.add("main", "The staging database is PostgreSQL 16 on port 5433.", file="memory/infra.md")
    hits = mem.search("what is my cat's name", agent_id="main", k=3)
    assert hits[0].path == "MEMORY.md"
    assert "Pixel" in hits[0].text
    assert set(hits[0].components) >= {"dense", "lexical", "dense_norm", "lexical_norm"}
    assert hits[0].why
    hit = mem.search("staging database port", agent_id="main", k=1)[0]
    assert hit.path == "memory/infra.md" and hit.line_start >= 1 and hit.line_end >= hit.line_start
    assert "5433" in mem.get("main", hit.path, (hit.line_start, hit.line_end))

    receipt = mem.forget("main", "cat called Pixel")
    assert receipt.verified and not receipt.tombstoned
    assert any("Pixel" in t for t in receipt.removed)
    assert "Pixel" not in (_ws(mem) / "MEMORY.md").read_text(encoding="utf-8")
    assert all("Pixel" not in h.text for h in mem.search("Pixel cat tuna", agent_id="main", k=10))
    # the other file is untouched
    assert "5433" in (_ws(mem) / "memory" / "infra.md").read_text(encoding="utf-8")


def test_forget_by_id(mem: MemoryService) -> None:
    mem.add("main", "I am allergic to peanuts.")
    hit = mem.search("allergy", agent_id="main", k=1)[0]
    receipt = mem.forget("main", hit.id)
    assert receipt.verified
    assert hit.id in receipt.chunk_ids
    assert "peanuts" not in (_ws(mem) / "MEMORY.md").read_text(encoding="utf-8")
    assert all("peanuts" not in h.text for h in mem.search("peanuts allergy", agent_id="main"))


def test_forget_nothing_matches(mem: MemoryService) -> None:
    with pytest.raises(ValueError, match="nothing in memory"):
        mem.forget("main", "anything at all")


def test_incremental_reindex_counts(mem: MemoryService) -> None:
    ws = _ws(mem)
    paras = [f"Paragraph {i} is about topic number {i} with a few distinct words like w{i}x." for i in range(12)]
    _write(ws / "memory" / "notes.md", "# Notes\n\n" + "\n\n".join(paras) + "\n")
    _write(ws / "MEMORY.md", "# Memory\n\nPrefers tabs over spaces.\n")
    first = mem.reindex("main")
    assert first.chunks_embedded > 2 and first.files_seen == 2
    total = first.chunks_embedded

    again = mem.reindex("main")
    assert again.chunks_embedded == 0
    assert again.chunks_unchanged == total
    assert again.chunks_deleted == 0

    # change one paragraph at the end: only the chunk(s) holding it are re-embedded
    paras[-1] = "Paragraph eleven was rewritten entirely to mention zebras."
    _write(ws / "memory" / "notes.md", "# Notes\n\n" + "\n\n".join(paras) + "\n")
    changed = mem.reindex("main")
    assert 1 <= changed.chunks_embedded < total - 1
    assert changed.chunks_embedded + changed.chunks_unchanged == total
    assert "zebras" in mem.search("zebras", agent_id="main", k=1)[0].text

    # touching a file without changing it costs nothing
    _write(ws / "MEMORY.md", "# Memory\n\nPrefers tabs over spaces.\n")
    assert mem.reindex("main").chunks_embedded == 0

    # deleting a file removes its chunks
    (ws / "memory" / "notes.md").unlink()
    gone = mem.reindex("main")
    assert gone.chunks_deleted >= total - 1
    assert all(h.path != "memory/notes.md" for h in mem.search("paragraph topic zebras", agent_id="main", k=10))


def test_search_never_answers_from_stale_index(mem: MemoryService) -> None:
    ws = _ws(mem)
    _write(ws / "MEMORY.md", "# Memory\n\nThe deploy day is Tuesday.\n")
    assert "Tuesday" in mem.search("deploy day", agent_id="main", k=1)[0].text
    _write(ws / "MEMORY.md", "# Memory\n\nThe deploy day is Thursday.\n")
    hits = mem.search("deploy day", agent_id="main", k=5)
    assert "Thursday" in hits[0].text
    assert all("Tuesday" not in h.text for h in hits)


def test_full_reindex_reembeds_everything(mem: MemoryService) -> None:
    mem.add("main", "Favourite colour is teal.")
    stats = mem.reindex("main", full=True)
    assert stats.chunks_embedded >= 1 and stats.chunks_unchanged == 0


def test_model_change_triggers_full_reindex(neotask_home: Path) -> None:
    svc = MemoryService(MemorySettings())
    svc.add("main", "Favourite colour is teal.")
    svc.index_transcript("main", "s1", [Event("message", 1, None, "2025-01-01T10:00:00+00:00",
                                              {"role": "user", "content": "We chose Kubernetes."})], "agent:main")
    old_table = svc.store.name
    assert svc.reindex("main").chunks_embedded == 0
    svc.close()

    # A copy of the bundled weights loaded as a local model stands in for "another model" offline.
    import shutil

    from neotask_tui.memory.index.embedder import bundled_model_dir
    from neotask_tui.memory.index.models import MINILM

    copy = neotask_home / "other-model"
    shutil.copytree(bundled_model_dir(), copy)
    other = MemoryService(MemorySettings(embedding_model=f"{MINILM.name}@{copy}"))
    assert other.store.name != old_table
    assert old_table not in other.store.table_names()  # migrated, then dropped
    stats = other.reindex("main")
    assert stats.chunks_embedded >= 1  # memory files re-embedded for the new model
    assert "teal" in other.search("colour", agent_id="main", k=1)[0].text
    hits = other.search("Kubernetes", agent_id="main", k=1, sources=("transcript",))
    assert hits and "Kubernetes" in hits[0].text  # transcripts carried over, re-embedded
    other.close()


def test_scope_isolation_between_agents(mem: MemoryService) -> None:
    mem.add("alice", "Alice's secret project codename is BLUEFIN.")
    mem.add("bob", "Bob's project codename is REDWOOD.")
    mem.index_transcript("alice", "s1", [Event("message", 1, None, "2025-01-01T10:00:00+00:00",
                                               {"role": "user", "content": "BLUEFIN ships in May."})], "agent:alice")
    sources = ("memory", "transcript", "inbox")
    for q in ("project codename", "BLUEFIN", "BLUEFIN ships in May"):
        # Non-vacuous: the same query does find BLUEFIN for alice, so bob not seeing it is the fence.
        assert any("BLUEFIN" in h.text for h in mem.search(q, agent_id="alice", k=10, sources=sources)), q
        hits = mem.search(q, agent_id="bob", k=10, sources=sources)
        assert all("BLUEFIN" not in h.text for h in hits)
        assert all(h.scope != "agent:alice" for h in hits)
    assert any("REDWOOD" in h.text for h in mem.search("project codename", agent_id="bob", k=10, sources=sources))
    assert all("REDWOOD" not in h.text for h in mem.search("REDWOOD codename", agent_id="alice", k=10))
    assert mem.recall("BLUEFIN", agent_id="bob", budget_tokens=500, k=5) == [] or all(
        "BLUEFIN" not in h.text for h in mem.recall("BLUEFIN", agent_id="bob", budget_tokens=500, k=5)
    )


def test_a_one_note_agent_finds_its_note_by_meaning(mem: MemoryService) -> None:
    """A pool of one: its mean is the note itself, so a meaning-only match scored 0 and was no hit
    (found by CI in test_colliding_agents_keep_separate_memory_end_to_end). A row's baseline is the
    other rows' mean, 0 for a pool of one."""
    mem.add("solo", "alice-dot likes tea")
    hits = mem.search("who deploys and what do they drink", agent_id="solo", k=5)
    assert hits and "tea" in hits[0].text
    assert hits[0].score > 0


def test_scopes_filter_within_an_agent(mem: MemoryService) -> None:
    mem.add("main", "Use black for formatting in project foo.", file="memory/foo.md", scope="project:foo")
    mem.add("main", "The user prefers British spelling.", scope="user")
    mem.add("main", "The agent should answer briefly.")
    only_foo = mem.search("formatting spelling answer", agent_id="main", k=10, scopes=["project:foo"])
    assert only_foo and {h.scope for h in only_foo} == {"project:foo"}
    only_user = mem.search("formatting spelling answer", agent_id="main", k=10, scopes=["user"])
    assert only_user and {h.scope for h in only_user} == {"user"}
    everything = mem.search("formatting spelling answer", agent_id="main", k=10)
    assert {h.scope for h in everything} == {"project:foo", "user", "agent:main"}


def test_recall_respects_budget_and_exclude(mem: MemoryService) -> None:
    from neotask_tui.memory.index.chunking import token_counter

    count = token_counter()
    for i in range(8):
        mem.add("main", f"Fact {i}: the user enjoys hiking trail number {i} in the Alps during summer.",
                file=f"memory/f{i}.md")
    for budget in (40, 90, 400):
        hits = mem.recall("hiking in the Alps", agent_id="main", budget_tokens=budget, k=6)
        assert sum(count(h.text) + 12 for h in hits) <= budget
        assert len(hits) <= 6
    full = mem.recall("hiking in the Alps", agent_id="main", budget_tokens=2000, k=3)
    assert len(full) == 3
    again = mem.recall("hiking in the Alps", agent_id="main", budget_tokens=2000, k=3, exclude={full[0].id})
    assert full[0].id not in {h.id for h in again}
    assert mem.recall("hiking", agent_id="main", budget_tokens=0, k=3) == []


def test_inbox_secrets_never_indexed(mem: MemoryService) -> None:
    key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3
    gh = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
    rec = mem.add("main", f"Deploy key for staging is {key} and the GitHub token is {gh}.", source="inbox",
                  scope="project:foo")
    assert rec.redacted >= 2
    text = (_ws(mem) / "MEMORY.md").read_text(encoding="utf-8")
    assert key not in text and gh not in text
    snap = mem.store.snapshot()
    for col in ("text",):
        assert all(key not in (v or "") and gh not in (v or "") for v in snap.cols[col])
    rows = mem.store.rows_where("agent_id = 'main'", ["text", "etext", "lex", "ctx"])
    blob = repr(rows)
    assert key not in blob and gh not in blob and key.lower() not in blob
    hits = mem.search("staging deploy key", agent_id="main", k=3)
    assert hits[0].source == "inbox" and hits[0].scope == "project:foo"
    assert key not in hits[0].text


def test_transcript_secrets_redacted_and_event_ids_kept(mem: MemoryService) -> None:
    events = [
        Event("session", 1, None, "2025-03-01T09:00:00+00:00", {"session_id": "s1"}),
        Event("message", 2, 1, "2025-03-01T09:00:01+00:00",
              {"role": "user", "content": "my password=hunter2hunter2 for the VPN"}),
        Event("message", 3, 2, "2025-03-01T09:00:02+00:00",
              {"role": "assistant", "content": "Noted that the VPN is WireGuard."}),
    ]
    assert mem.index_transcript("main", "s1", events, "agent:main") == 2
    rows = mem.store.rows_where("agent_id = 'main'", ["text", "etext", "lex", "ctx", "event_ids"])
    assert "hunter2hunter2" not in repr(rows)
    hits = mem.search("which VPN", agent_id="main", k=2, sources=("transcript",))
    assert hits and all(h.source == "transcript" and h.path == "transcripts/s1" for h in hits)
    assert {e for h in hits for e in h.event_ids} <= {2, 3}
    # re-indexing the same transcript embeds nothing
    before = mem.embedder.calls
    mem.index_transcript("main", "s1", events, "agent:main")
    assert mem.embedder.calls == before
    # forgetting a transcript chunk tombstones it: re-indexing does not bring it back
    target = next(h for h in hits if "WireGuard" in h.text)
    rec = mem.forget("main", target.id)
    assert rec.tombstoned and rec.verified
    mem.index_transcript("main", "s1", events, "agent:main")
    assert all("WireGuard" not in h.text for h in mem.search("WireGuard VPN", agent_id="main", k=5))
    assert "[e:2]" in mem.get("main", "transcripts/s1")


def test_russian_text_round_trips(mem: MemoryService) -> None:
    mem.add("main", "Пользователь предпочитает тёмную тему и пишет на Rust.")
    mem.add("main", "Сервер развёрнут в Амстердаме.", file="memory/инфраструктура.md")
    hits = mem.search("какую тему предпочитает пользователь", agent_id="main", k=2)
    assert "тёмную тему" in hits[0].text
    hit = mem.search("где развёрнут сервер", agent_id="main", k=1)[0]
    assert hit.path == "memory/инфраструктура.md"
    assert "Амстердаме" in mem.get("main", hit.path)
    assert hit.to_dict()["text"] == hit.text


@pytest.mark.parametrize(
    "bad", ["/etc/passwd", "../x.md", "memory/../../x.md", "memory/.hidden.md", "notes.md", "memory/x.txt", ""]
)
def test_traversal_and_bad_paths_refused(mem: MemoryService, bad: str) -> None:
    with pytest.raises(ValueError) as ei:
        mem.add("main", "text", file=bad)
    assert "\n" not in str(ei.value)
    with pytest.raises(ValueError):
        mem.get("main", bad)


def test_watcher_picks_up_an_edit(mem: MemoryService) -> None:
    ws = _ws(mem)
    _write(ws / "MEMORY.md", "# Memory\n\nThe office plant is a fern.\n")
    seen = []
    mem.start_watcher("main", on_change=seen.append)
    try:
        _write(ws / "memory" / "new.md", "The coffee machine is on floor three.\n")

        def indexed() -> bool:  # read the store only: a search would index the file itself
            return any("floor three" in str(t) for t in mem.store.snapshot().cols.get("text", []))

        def reported() -> bool:
            return any("memory/new.md" in s.files_changed for s in seen)

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (indexed() and reported()):
            time.sleep(0.1)
        # (a reindex racing the write may first see the file half-written; the write's own event
        # brings the full text)
        assert indexed() and reported()
        # the index already holds it: a search needs no embedding of files
        stats = mem.reindex("main")
        assert stats.chunks_embedded == 0
        assert "floor three" in mem.search("coffee machine", agent_id="main", k=1)[0].text
    finally:
        mem.stop_watcher()


def test_hits_serialise(mem: MemoryService) -> None:
    mem.add("main", "Lunch is at noon.")
    d = mem.search("lunch", agent_id="main", k=1)[0].to_dict()
    assert d["location"].startswith("MEMORY.md:") and 0 <= d["score"] <= 1


def _with_damaged_store(home: Path, entry: str) -> MemoryService:
    """A service opened on a store whose files were cut to a third after ``entry`` was added."""
    svc = MemoryService(MemorySettings())
    svc.add("main", entry)
    svc.close()
    for p in (home / "data" / "lancedb").rglob("*"):
        if p.is_file():
            p.write_bytes(p.read_bytes()[: max(1, p.stat().st_size // 3)])
    return MemoryService(MemorySettings())


def test_damaged_store_is_rebuilt_from_files(neotask_home: Path) -> None:
    again = _with_damaged_store(neotask_home, "The deploy target is Frankfurt.")
    try:
        assert "Frankfurt" in again.search("where do we deploy", agent_id="main", k=1)[0].text
        assert any((neotask_home / "data" / "quarantine").iterdir())
    finally:
        again.close()


def test_forget_leaves_no_copy_in_a_quarantined_store(neotask_home: Path) -> None:
    again = _with_damaged_store(neotask_home, "The vault code is Zorbanski-7741.")
    try:
        assert "Zorbanski" in again.search("vault code", agent_id="main", k=1)[0].text  # rebuilt
        qdir = neotask_home / "data" / "quarantine"
        [copy] = [p for p in qdir.iterdir() if ".lance." in p.name]
        rec = again.forget("main", "vault code Zorbanski")
        assert rec.verified and rec.dropped_copies == [copy.name]
        assert not copy.exists()
        left = [p for p in (neotask_home / "data").rglob("*") if p.is_file() and b"Zorbanski" in p.read_bytes()]
        assert left == []
    finally:
        again.close()


def test_query_vectors_are_cached(mem: MemoryService) -> None:
    emb = mem.embedder
    before = emb.calls
    a = emb.embed_query("where did I park the car")
    b = emb.embed_query("where did I park the car")
    assert a is b and emb.calls == before + 1
    assert not a.flags.writeable
    emb.clear_query_cache()
    assert emb.embed_query("where did I park the car") is not a and emb.calls == before + 2


def test_watcher_treats_a_new_memory_folder_as_a_change(tmp_path: Path) -> None:
    from neotask_tui.memory.watcher import _relevant

    (tmp_path / "memory" / "sub").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    assert _relevant(str(tmp_path / "memory"), tmp_path)  # its files may raise no event of their own
    assert _relevant(str(tmp_path / "memory" / "sub"), tmp_path)
    assert _relevant(str(tmp_path / "memory" / "sub" / "x.md"), tmp_path)
    assert not _relevant(str(tmp_path / "memory" / "x.txt"), tmp_path)
    assert not _relevant(str(tmp_path / ".git"), tmp_path)
    assert not _relevant(str(tmp_path / "elsewhere.md"), tmp_path)


def test_a_hit_says_where_it_is_and_memory_get_reads_it_back(mem: MemoryService) -> None:
    from neotask_tui.memory.tools import handle_tool

    mem.add("main", "Lunch is at noon.")
    events = [Event("message", 2, None, "2025-03-01T09:00:01+00:00",
                    {"role": "user", "content": "The VPN is WireGuard on port 51820."})]
    mem.index_transcript("main", "s1", events, "agent:main")
    def source(query: str, text: str) -> str:
        found = json.loads(handle_tool(mem, "main", "memory_search", {"query": query}) or "[]")
        return str(next(h["source"] for h in found if text in h["text"]))

    # A transcript passage has no lines: its receipt is its event id (it used to read ":0-0").
    assert source("VPN WireGuard port", "WireGuard") == "transcripts/s1#e:2"
    file_source = source("when is lunch", "Lunch is at noon.")
    assert re.fullmatch(r"MEMORY\.md:\d+-\d+", file_source)
    # The model may hand a source back to memory_get as the path.
    assert "51820" in str(handle_tool(mem, "main", "memory_get", {"path": "transcripts/s1#e:2"}))
    assert "Lunch is at noon." in str(handle_tool(mem, "main", "memory_get", {"path": file_source}))


def test_entries_go_to_their_own_heading_not_the_last_one(mem: MemoryService) -> None:
    md = _ws(mem) / "MEMORY.md"
    _write(md, "# Memory\n\nSome notes.\n\n## Pets\n\n- Rex is a dog.\n")
    first = mem.add("main", "The staging port is 5433.")
    second = mem.add("main", "Deploys happen on Tuesdays.")
    text = md.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[:7] == ["# Memory", "", "Some notes.", "", "## Pets", "", "- Rex is a dog."]
    assert lines[7:10] == ["", "## Remembered", ""]
    assert lines[first.line_start - 1].endswith("[user] The staging port is 5433.")
    assert second.line_start == first.line_end + 1
    assert lines[second.line_start - 1].endswith("[user] Deploys happen on Tuesdays.")
    # A heading the user adds later does not capture the next entry.
    _write(md, text + "\n## Work\n\n- Uses vim.\n")
    third = mem.add("main", "Lunch is at noon.")
    lines = md.read_text(encoding="utf-8").splitlines()
    assert third.line_start == second.line_end + 1
    assert lines[third.line_start - 1].endswith("[user] Lunch is at noon.")
    assert lines[third.line_start:third.line_start + 4] == ["", "## Work", "", "- Uses vim."]
    hit = mem.search("when is lunch", agent_id="main", k=1)[0]
    assert "Lunch is at noon" in hit.text and "Work" not in hit.text


def test_adding_the_same_words_again_writes_no_second_copy(mem: MemoryService) -> None:
    first = mem.add("main", "My cat is called Pixel.")
    again = mem.add("main", "my cat is called  Pixel", source="inbox", scope="user")
    text = (_ws(mem) / "MEMORY.md").read_text(encoding="utf-8")
    assert text.count("called Pixel") == 1
    assert again.existing and not first.existing
    assert (again.line_start, again.line_end) == (first.line_start, first.line_end)
    mem.forget("main", "cat called Pixel")
    assert all("Pixel" not in h.text for h in mem.search("Pixel cat", agent_id="main", k=10))


def test_a_message_after_a_long_silence_is_embedded_without_the_one_before_it(mem: MemoryService) -> None:
    """The first message of the next day's chat opens a new exchange: yesterday's goodbye is not its
    context (tuning.EXCHANGE_GAP_SECONDS); a reply minutes later keeps the message it answers."""
    events = [
        Event("message", 1, None, "2025-03-01T21:00:00+00:00", {"role": "user", "content": "Bye, talk tomorrow!"}),
        Event("message", 2, 1, "2025-03-02T09:30:00+00:00",
              {"role": "user", "content": "Morning! I started a weekend yoga class."}),
        Event("message", 3, 2, "2025-03-02T09:31:00+00:00", {"role": "assistant", "content": "Which studio?"}),
    ]
    mem.index_transcript("main", "s1", events, "agent:main")
    rows = {r["event_ids"][0]: r for r in mem.store.rows_where("agent_id = 'main'", ["etext", "text", "event_ids"])}
    assert rows[2]["etext"] == rows[2]["text"]
    assert "Bye, talk tomorrow!" not in rows[2]["etext"]
    assert rows[3]["etext"].startswith("Morning! I started a weekend yoga class.")


def test_exchange_start_stops_at_a_long_silence_and_at_unknown_times() -> None:
    from neotask_tui.memory.index.indexer import exchange_start
    from neotask_tui.tuning import EXCHANGE_GAP_SECONDS

    gap = EXCHANGE_GAP_SECONDS
    assert exchange_start([1000.0, 1060.0], 1) == 0
    assert exchange_start([1000.0, 1000.0 + gap + 1], 1) == 1
    assert exchange_start([100.0, 160.0, 160.0 + gap + 1, 200.0 + gap], 3, context_turns=3) == 2
    assert exchange_start([0.0, 0.0, 5.0], 2, context_turns=2) == 0  # unknown times: one exchange
    assert exchange_start([10.0], 0) == 0
