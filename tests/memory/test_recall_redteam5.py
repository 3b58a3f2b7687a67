"""Red team 5: auto-recall and memory search (README "What it remembers").

- "the same text found in two places is one item": also for two consented copies (MEMORY.md and a
  ``memory/`` note, two headings of MEMORY.md, a dated entry and a plain line);
- "a passage is recalled only when it holds most of your message's words or is close to it in
  meaning": an unrelated history turn, or an English turn for a Russian request, is not "close";
  an English question still finds the Russian note that answers it;
- memory search: a heading alone does not outrank the line that answers; a hit scoring nothing is
  not a hit.

Real memory service / engine: the bundled embedding models, LanceDB on the test's tmp dir, the
scripted provider for replies.
"""

from __future__ import annotations

import argparse
import json
from zoneinfo import ZoneInfo

import pytest

from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.facade import Engine
from neotask_tui.memory.service import MemoryService
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tuning import MEMORY_RECALL_MIN_COSINE
from tests.doubles import scripted

KEY = "agent:main:tui:default"
MANAGER = "My manager is Priya Raman."


def _write(mem: MemoryService, files: dict[str, str]) -> None:
    ws = mem.workspace("main")
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text, encoding="utf-8")


def _recall(mem: MemoryService, query: str) -> list[str]:
    return [h.text for h in mem.recall(query, agent_id="main", budget_tokens=4000, k=8)]


# -- 1. the same text from two sources is one item -------------------------------------------------
@pytest.mark.parametrize("files", [
    {"MEMORY.md": f"# Memory\n\n## Work\n\n- {MANAGER}\n", "memory/team.md": f"# Team\n\n- {MANAGER}\n"},
    {"MEMORY.md": f"# Memory\n\n## Work\n\n- {MANAGER}\n\n## People\n\n- {MANAGER}\n"},
    {"MEMORY.md": f"# Memory\n\n## Remembered\n\n- 2026-01-05 09:00 [user] {MANAGER}\n",
     "memory/team.md": f"{MANAGER}\n"},
], ids=["memory-md-and-note", "two-headings", "dated-entry-and-plain-line"])
def test_one_fact_in_two_consented_places_is_recalled_once(mem: MemoryService, files: dict[str, str]) -> None:
    _write(mem, files)
    mem.reindex("main")
    found = mem.search("Who is my manager?", agent_id="main", k=8)
    assert sum("Priya" in h.text for h in found) == 2, "precondition: both copies are indexed and found"
    got = _recall(mem, "Who is my manager?")
    assert sum("Priya" in t for t in got) == 1, got


def test_two_different_facts_under_one_heading_text_are_both_recalled(mem: MemoryService) -> None:
    # the control: only what a passage *says* is compared, so two different lines stay two items
    _write(mem, {"MEMORY.md": f"# Memory\n\n## Work\n\n- {MANAGER}\n",
                 "memory/team.md": "# Work\n\n- My manager is Priya Raman; her manager is Tom Berg.\n"})
    mem.reindex("main")
    got = _recall(mem, "Who is my manager?")
    assert any("Tom Berg" in t for t in got), got


# -- 2/3. nothing below the floor: unrelated history, a Russian request and English turns ---------
def _engine() -> Engine:
    s = Settings()
    s.session.daily_reset_hour = -1
    return Engine(s, provider=ScriptedProvider(), tz=ZoneInfo("UTC"))


async def _say(engine: Engine, text: str) -> None:
    scripted(engine).queue("ok")
    _ = [e async for e in engine.send(text, KEY)]


HISTORY = ("Which day do we usually deploy?", "My cat is called Miso and she hates the vacuum cleaner.",
           "What's the staging host and port again?", "Can you recommend a good book about distributed systems?",
           "Who is my manager, do you remember?")


async def _history(engine: Engine) -> MemoryService:
    for text in HISTORY:
        await _say(engine, text)
    await engine.new_session(KEY)
    await engine.recall(KEY, "warm-up")  # loads the service and indexes the archived session
    assert engine.memory is not None
    return engine.memory


_BOTH_MODELS_AGREE = pytest.mark.xfail(strict=True, reason=(
    "known, not fixed: MiniLM and e5 both put two questions about a day close (floor similarity 0.30 "
    "against the message's own baseline, 0.345 calibrated before); no word is shared"))


@pytest.mark.parametrize("message", [pytest.param("Is it going to rain tomorrow?", marks=_BOTH_MODELS_AGREE),
                                     "Напиши рецепт борща."])
async def test_an_unrelated_message_recalls_no_history_turn_that_only_a_loose_cosine_admits(message: str) -> None:
    engine = _engine()
    try:
        mem = await _history(engine)
        hits = mem.search(message, agent_id="main", k=8, sources=("transcript",), sync=False)
        assert any(h.components["dense"] >= MEMORY_RECALL_MIN_COSINE for h in hits), (
            "precondition: an unrelated turn's calibrated cosine clears the floor",
            [(round(h.components["dense"], 3), h.text) for h in hits])
        got = await engine.recall(KEY, message)
        assert got == [], [(r.kind, round(r.score, 3), r.text) for r in got]
    finally:
        await engine.aclose()


async def test_a_related_question_still_recalls_the_history_turn() -> None:
    engine = _engine()
    try:
        await _history(engine)
        got = await engine.recall(KEY, "On which day of the week do we deploy?")
        assert any("deploy" in r.text and r.kind == "history" for r in got), [(r.kind, r.text) for r in got]
    finally:
        await engine.aclose()


async def test_a_russian_request_about_nothing_spends_no_recall_tokens_on_english_history() -> None:
    engine = _engine()
    try:
        await _history(engine)
        scripted(engine).queue("ok")
        out = [e async for e in engine.send("Напиши рецепт борща.", KEY)]
        built = [e for e in out if isinstance(e, ev.ContextBuilt)]
        assert built and built[-1].ledger.sections["recall"] == 0, built[-1].ledger.sections
    finally:
        await engine.aclose()


# -- 4. memory search: a heading alone does not outrank the line that answers ---------------------
@pytest.mark.parametrize("files", [
    {"MEMORY.md": "# Memory\n\n## Food\n\n- Likes pasta.\n\n## Health\n\n- I am allergic to peanuts.\n"},
    {"MEMORY.md": "# Memory\n\n- I am allergic to peanuts.\n\n## Food\n"},
    {"MEMORY.md": "# Memory\n\n## Food\n\n- Likes pasta.\n", "memory/health.md": "I am allergic to peanuts.\n"},
    {"MEMORY.md": "# Memory\n\n## Food\n\n- Likes pasta.\n\n## Health\n\n- I am allergic to peanuts.\n",
     "memory/notes.md": "# Notes\n\nI am allergic to peanuts.\n"},
], ids=["two-sections", "empty-heading", "section-and-note", "sections-and-a-copy"])
def test_a_heading_alone_does_not_outrank_the_line_that_answers(mem: MemoryService, files: dict[str, str]) -> None:
    _write(mem, files)
    hits = mem.search("what food am I allergic to?", agent_id="main", k=5)
    assert hits and "allergic to peanuts" in hits[0].text, [(round(h.score, 3), h.text) for h in hits]


def test_memory_search_cli_lists_the_answer_first(mem: MemoryService, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from neotask_tui.cli.memory_cmd import cmd_search

    _write(mem, {"MEMORY.md": "# Memory\n\n## Food\n\n- Likes pasta.\n\n## Health\n\n- I am allergic to peanuts.\n"})
    mem.close()
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    cmd_search(argparse.Namespace(query="what food am I allergic to?", k=5, source=None, scope=None,
                                  agent="main", json=True, session=None))
    hits = json.loads(capsys.readouterr().out)
    assert hits and "allergic to peanuts" in hits[0]["text"], [h["text"] for h in hits]


# -- 5. an English question finds the Russian note that answers it --------------------------------
@pytest.mark.parametrize("question", ["Am I allergic to anything?", "What am I allergic to?",
                                      "Do I have any food allergies?"])
def test_an_english_question_recalls_the_russian_note(mem: MemoryService, question: str) -> None:
    _write(mem, {"MEMORY.md": f"# Memory\n\n- {MANAGER}\n- We deploy on Thursdays.\n",
                 "memory/health.md": "- У меня аллергия на арахис.\n"})
    got = _recall(mem, question)
    assert any("арахис" in t for t in got), got
    assert not any("Thursdays" in t for t in got), got


# -- 6. a hit that scores nothing is not a hit ----------------------------------------------------
def test_memory_search_lists_no_hit_that_scores_nothing(mem: MemoryService, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from neotask_tui.cli.memory_cmd import cmd_search

    _write(mem, {"MEMORY.md": f"# Memory\n\n- {MANAGER}\n", "memory/deploy.md": "- We deploy on Thursdays.\n",
                 "memory/health.md": "- I am allergic to peanuts.\n"})
    hits = mem.search("Am I allergic to anything?", agent_id="main", k=8)
    assert hits and "peanuts" in hits[0].text
    assert all(h.score > 0 for h in hits), [(h.score, h.text) for h in hits]
    mem.close()
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    cmd_search(argparse.Namespace(query="Am I allergic to anything?", k=8, source=None, scope=None,
                                  agent="main", json=False, session=None))
    out = capsys.readouterr().out
    assert "peanuts" in out and "score 0.000" not in out, out

