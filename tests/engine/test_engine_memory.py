"""The engine with real long-term memory: archived transcripts are recalled, and re-indexed if lost."""

from __future__ import annotations

import shutil
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from neotask_tui import paths
from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.recall.lineage import FEEDBACK_DOCS
from neotask_tui.providers.scripted import ScriptedProvider

KEY = "agent:main:tui:default"


async def _turn(engine: Engine, text: str) -> list[ev.EngineEvent]:
    return [e async for e in engine.send(text, KEY)]


async def test_archived_transcript_recalled_and_reindexed_after_store_loss() -> None:
    s = Settings()
    engine = Engine(s, provider=ScriptedProvider(), tz=ZoneInfo("UTC"))
    await _turn(engine, "The deployment password rotation happens every Tuesday in the ops-bastion host.")
    await engine.new_session(KEY)
    out = await _turn(engine, "When does the password rotation happen on the bastion?")
    recalled = [e for e in out if isinstance(e, ev.Recalled)]
    assert recalled, "the archived session should be recalled"
    assert any("ops-bastion" in it.text for it in recalled[0].items)
    mem = engine.memory
    assert mem is not None and mem.stats("main")["by_source"].get("transcript", 0) > 0
    await engine.aclose()

    # the LanceDB store is lost; the manifest still says "indexed" — recall must index again
    shutil.rmtree(paths.memory_db_dir(), ignore_errors=True)
    engine2 = Engine(s, provider=ScriptedProvider(), tz=ZoneInfo("UTC"))
    out = await _turn(engine2, "When does the password rotation happen on the bastion?")
    recalled = [e for e in out if isinstance(e, ev.Recalled)]
    assert recalled and any("ops-bastion" in it.text for it in recalled[0].items)
    await engine2.aclose()


async def test_agent_b_never_recalls_agent_a_transcripts() -> None:
    s = Settings()
    engine = Engine(s, provider=ScriptedProvider(), tz=ZoneInfo("UTC"))
    await _turn(engine, "Secret project codename is BLUEHERON for agent main only.")
    await engine.new_session(KEY)
    out = [e async for e in engine.send("What is the project codename BLUEHERON?", "agent:other:tui:default")]
    recalled = [e for e in out if isinstance(e, ev.Recalled)]
    assert not any("BLUEHERON" in it["text"] for r in recalled for it in r.items)
    await engine.aclose()


async def test_remember_recall_forget_slash_commands() -> None:
    from neotask_tui.commands import dispatch

    engine = Engine(Settings(), provider=ScriptedProvider(), tz=ZoneInfo("UTC"))
    r = await dispatch(engine, KEY, "/remember Max is our new dog; he sleeps on the couch.")
    assert not r.error, r.text
    assert "Max is our new dog" in (paths.workspace_dir("main") / "MEMORY.md").read_text(encoding="utf-8")
    r = await dispatch(engine, KEY, "/recall pets")  # no shared word: found by meaning
    assert not r.error and "Max is our new dog" in r.text
    r = await dispatch(engine, KEY, "/forget Max dog couch")
    assert not r.error, r.text
    assert "Max is our new dog" not in (paths.workspace_dir("main") / "MEMORY.md").read_text(encoding="utf-8")
    await engine.aclose()


async def test_recall_of_compacted_turns_searches_with_feedback(monkeypatch: pytest.MonkeyPatch) -> None:
    s = Settings()
    s.memory.recall_budget_tokens = 300
    engine = Engine(s, provider=ScriptedProvider(), tz=ZoneInfo("UTC"))
    try:
        await _turn(engine, "The nightly backup of the billing database runs on the ops-bastion host at 02:00.")
        for i in range(3):
            await _turn(engine, f"Unrelated note number {i} about the weather and lunch plans.")
        prov = engine.provider
        assert isinstance(prov, ScriptedProvider)
        prov.queue("## Goal\n- keep notes [e:2]")
        await engine.compact(KEY)
        await engine.recall(KEY, "warm-up")  # loads the memory service and indexes the archive
        mem = engine.memory
        assert mem is not None
        seen: list[int] = []
        real = mem.search

        def spy(*args: Any, **kw: Any) -> Any:
            params = kw.get("params")
            seen.append(params.prf_docs if params is not None else 0)
            return real(*args, **kw)

        monkeypatch.setattr(mem, "search", spy)
        ctx = await engine.context(KEY, "Where does the billing backup run?")
        recall = [m.content for m, sec in zip(ctx.messages, ctx.section_of, strict=True) if sec == "recall"]
        assert recall and "ops-bastion" in recall[0]
        assert FEEDBACK_DOCS in seen  # the archive is searched with pseudo-relevance feedback
    finally:
        await engine.aclose()
