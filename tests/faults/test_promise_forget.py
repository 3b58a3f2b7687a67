"""Promise: ``memory forget`` removes what the user asked to forget and nothing else, says exactly
what it removed, and leaves no trace of a forgotten transcript message under the data dir.

Real LanceDB and the real bundled embedder on tmp dirs, no mocks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("neotask_tui.memory.service")

from neotask_tui.memory.service import MemoryService
from neotask_tui.memory.types import ForgetReceipt
from neotask_tui.storage.events import Event
from neotask_tui.text import lexical
from tests.faults.helpers import cli, derived_files_containing

pytestmark = pytest.mark.promise("forget")

A = "main"
PROJECT = (
    "# Project notes\n\n"
    "The staging database is postgres 15 on db-stg-2.\n"
    "Deploys happen on Tuesdays; never deploy on Fridays.\n"
    "The build server is build-4471 at commit 3f2a9c1d.\n"
    "My old neighbour's cat is called Whiskerton.\n\n"
    "## Contacts\n\n"
    "Nate owns the billing service.\n"
)


def _write(svc: MemoryService, rel: str, text: str) -> Path:
    p = svc.workspace(A) / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def _accounted(old: str, new: str, rec: ForgetReceipt) -> None:
    """Every line that lost text is in the receipt with exactly what it lost, and nothing else moved."""
    before = old.splitlines()
    named = dict(rec.removed_lines)
    rebuilt: list[str] = []
    for n, line in enumerate(before, 1):
        if n not in named:
            rebuilt.append(line)
        elif n in rec.partial_lines:
            assert named[n] in line
            rebuilt.append(" ".join(line.replace(named[n], " ").split()))
        else:
            assert named[n] == line
    squash = [ln for ln in rebuilt if ln.strip()]
    assert [ln for ln in new.splitlines() if ln.strip()] == squash


# -- F1: a query removes the statements that hold its words, not the paragraph around them ----------


def test_forgetting_a_word_removes_only_its_line(svc: MemoryService) -> None:
    p = _write(svc, "memory/project.md", PROJECT)
    svc.reindex(A)
    rec = svc.forget(A, "Whiskerton")
    new = p.read_text(encoding="utf-8")
    assert "Whiskerton" not in new
    for kept in ("postgres 15 on db-stg-2", "never deploy on Fridays", "build-4471 at commit 3f2a9c1d",
                 "Nate owns the billing service", "# Project notes", "## Contacts"):
        assert kept in new, new
    assert rec.removed_lines == [(6, "My old neighbour's cat is called Whiskerton.")]
    assert rec.verified
    _accounted(PROJECT, new, rec)


def test_forgetting_a_list_item_keeps_the_next_item(svc: MemoryService) -> None:
    old = "# Notes\n\n- wombatword is the wifi password of the shed\n- kept line about otters\n- otters eat fish\n"
    p = _write(svc, "memory/list.md", old)
    svc.reindex(A)
    rec = svc.forget(A, "wombatword")
    new = p.read_text(encoding="utf-8")
    assert "wombatword" not in new
    assert "- kept line about otters" in new and "- otters eat fish" in new
    assert rec.removed_lines == [(3, "- wombatword is the wifi password of the shed")]
    _accounted(old, new, rec)


def test_forgetting_one_sentence_keeps_the_rest_of_its_line(svc: MemoryService) -> None:
    old = "# Ops\n\nDeploys happen on Tuesdays. The cat is called Whiskerton. Never deploy on Fridays.\n"
    p = _write(svc, "MEMORY.md", old)
    svc.reindex(A)
    rec = svc.forget(A, "Whiskerton the cat")
    new = p.read_text(encoding="utf-8")
    assert "Whiskerton" not in new
    assert "Deploys happen on Tuesdays. Never deploy on Fridays." in new
    assert rec.removed_lines == [(3, "The cat is called Whiskerton.")] and rec.partial_lines == [3]
    _accounted(old, new, rec)


def test_a_wrapped_sentence_is_forgotten_whole(svc: MemoryService) -> None:
    old = "# Office\n\nThe door code of the server room\nis 4471-2231 since March.\nThe printer is on floor 2.\n"
    p = _write(svc, "MEMORY.md", old)
    svc.reindex(A)
    rec = svc.forget(A, "door code of the server room")
    new = p.read_text(encoding="utf-8")
    assert "4471-2231" not in new and "door code" not in new
    assert "The printer is on floor 2." in new
    _accounted(old, new, rec)


def test_forget_by_id_never_removes_lines_outside_the_passage(svc: MemoryService) -> None:
    facts = [f"Fact {i}: the rack r{i} in hall h{i} holds the switch sw{i} and router rt{i}." for i in range(80)]
    old = "# Inventory\n\n" + "\n".join(facts) + "\n"  # one paragraph, many chunks
    p = _write(svc, "memory/inventory.md", old)
    svc.reindex(A)
    snap = svc.store.snapshot()
    rows = sorted((snap.row(i) for i in range(len(snap.ids)) if snap.cols["path"][i] == "memory/inventory.md"),
                  key=lambda r: r["line_start"])
    assert len(rows) >= 3
    mid = rows[1]
    own = range(int(mid["own_start"]) or int(mid["line_start"]), int(mid["line_end"]) + 1)
    rec = svc.forget(A, mid["id"])
    new = p.read_text(encoding="utf-8")
    assert rec.removed_lines and all(n in own for n, _ in rec.removed_lines)
    lines = old.splitlines()
    for n, line in enumerate(lines, 1):
        assert (line in new) == (n not in own), (n, line)
    _accounted(old, new, rec)


def test_the_cli_prints_every_removed_line(svc: MemoryService, capsys: pytest.CaptureFixture[str]) -> None:
    from neotask_tui.cli import main

    _write(svc, "memory/project.md", PROJECT)
    svc.reindex(A)
    svc.close()
    assert main(["memory", "forget", "Whiskerton"]) == 0
    out = capsys.readouterr().out
    assert "6: My old neighbour's cat is called Whiskerton." in out
    assert "never deploy on Fridays" not in out


# -- red team 31, finding 1: a query cuts only statements holding every one of its words ------------


def test_a_query_whose_words_no_memory_holds_removes_nothing(svc: MemoryService) -> None:
    """`memory forget "cat"` cut "My dog is called Rex" (the best passage by meaning, its only line),
    and "Thursday standup" cut "I deploy on Thursdays" (one word of two): README, *Forgetting*: only
    the statements "that contain every word of the query"."""
    svc.add(A, "My dog is called Rex", file="memory/pets.md")
    svc.add(A, "I deploy on Thursdays")
    svc.add(A, "Office wifi is on floor 3", file="memory/office.md")
    ws = svc.workspace(A)
    names = ("memory/pets.md", "MEMORY.md", "memory/office.md")
    files = {ws / n: (ws / n).read_text(encoding="utf-8") for n in names}
    for query in ("cat", "Thursday standup", "x", "the"):
        with pytest.raises(ValueError, match="nothing was removed"):
            svc.forget(A, query)
    assert {p: p.read_text(encoding="utf-8") for p in files} == files
    rec = svc.forget(A, "thursday deploys")  # every word, as the index reads words (case, endings)
    assert [t for _, t in rec.removed_lines] == [next(ln for ln in files[ws / "MEMORY.md"].splitlines()
                                                      if "Thursdays" in ln)]
    assert files[ws / "memory/pets.md"] == (ws / "memory/pets.md").read_text(encoding="utf-8")


def test_a_query_cuts_only_the_statements_that_hold_all_its_words(svc: MemoryService) -> None:
    old = "# Ops\n\n- Deploys happen on Tuesdays\n- The Tuesday standup is at 10:00\n- standup notes go to the wiki\n"
    p = _write(svc, "memory/ops.md", old)
    svc.reindex(A)
    rec = svc.forget(A, "Tuesday standup")
    new = p.read_text(encoding="utf-8")
    assert rec.removed_lines == [(4, "- The Tuesday standup is at 10:00")]
    assert "- Deploys happen on Tuesdays" in new and "- standup notes go to the wiki" in new
    _accounted(old, new, rec)


def test_forget_by_a_query_no_memory_holds_is_a_one_line_error_with_exit_2(svc: MemoryService) -> None:
    svc.add(A, "My dog is called Rex", file="memory/pets.md")
    pets = svc.workspace(A) / "memory" / "pets.md"
    before = pets.read_text(encoding="utf-8")
    svc.close()
    env = {"NEOTASK_PROVIDER": "scripted", "NEOTASK_MEMORY_ENABLED": "true"}
    for args in (("memory", "forget", "cat"), ("send", "/forget cat")):
        r = cli(*args, env=env)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (r.returncode, r.stderr[-400:])
        assert len(r.stderr.strip().splitlines()) == 1 and "nothing was removed" in r.stderr, r.stderr
        assert pets.read_text(encoding="utf-8") == before


# -- F2: a forgotten transcript message leaves no trace in its neighbours' rows -------------------------

SECRET = "My locksmith Zorbanski keeps the flumpering quixotically purple spare key under the birdbath."


def _events() -> list[Event]:
    talk = [
        ("user", "We should plan the garden party for next Saturday afternoon."),
        ("assistant", "Sure, a garden party next Saturday sounds lovely."),
        ("user", "Invite the neighbours from number twelve as well."),
        ("assistant", SECRET),
        ("user", "Lemonade and sandwiches will be enough for the guests."),
        ("assistant", "I will note lemonade and sandwiches for the party."),
        ("user", "The party ends before the evening rain starts."),
    ]
    evs = [Event("session", 1, None, "2025-03-01T09:00:00+00:00", {"session_id": "s1"})]
    for n, (role, text) in enumerate(talk, 2):
        evs.append(Event("message", n, n - 1, f"2025-03-01T09:00:{n:02d}+00:00", {"role": role, "content": text}))
    return evs


def _traces(data: Path, needles: list[bytes]) -> list[str]:
    return derived_files_containing(data, needles, lower=True)


def test_a_forgotten_transcript_message_is_gone_from_every_row_and_file(svc: MemoryService, neotask_home: Path) -> None:
    data = neotask_home / "data"
    events = _events()
    assert svc.index_transcript(A, "s1", events, "agent:main") == 7
    words = ["zorbanski", "flumpering", "quixotically", "birdbath"]
    stems = sorted({lexical.stem(w) for w in words})
    needles = [w.encode() for w in [*words, *stems]]
    assert _traces(data, needles)
    hit = svc.search("Zorbanski spare key birdbath", agent_id=A, k=1, sources=("transcript",))[0]
    assert "Zorbanski" in hit.text
    rec = svc.forget(A, hit.id)
    assert rec.tombstoned and rec.verified and rec.rewritten_ids
    rows = svc.store.rows_where(f"agent_id = '{A}'", ["text", "etext", "lex", "ctx"])
    assert len(rows) == 6
    for r in rows:
        for col in ("text", "etext", "lex", "ctx"):
            assert not any(s in r[col].lower() for s in stems), (col, r)
    assert _traces(data, needles) == []
    for q in ("Zorbanski", "locksmith spare key birdbath", "flumpering quixotically purple"):
        for h in svc.search(q, agent_id=A, k=3):
            assert "locksmith" not in h.text.lower()
    # archiving the same transcript again (a later compaction) brings none of it back
    svc.index_transcript(A, "s1", events, "agent:main")
    svc.store.purge()
    rows = svc.store.rows_where(f"agent_id = '{A}'", ["etext", "ctx"])
    assert len(rows) == 6 and not any(s in (r["etext"] + r["ctx"]).lower() for r in rows for s in stems)
    assert _traces(data, needles) == []
    # the neighbours are still found by their own words
    assert "number twelve" in svc.search("invite neighbours number twelve", agent_id=A, k=1)[0].text
