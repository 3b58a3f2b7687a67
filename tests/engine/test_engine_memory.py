"""The engine with real long-term memory: archived transcripts are recalled, and re-indexed if lost."""

from __future__ import annotations

import shutil
from zoneinfo import ZoneInfo

from neotask_tui import paths
from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.api import Engine
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
    assert any("ops-bastion" in it["text"] for it in recalled[0].items)
    mem = engine.memory
    assert mem is not None and mem.stats("main")["by_source"].get("transcript", 0) > 0
    await engine.aclose()

    # the LanceDB store is lost; the manifest still says "indexed" — recall must index again
    shutil.rmtree(paths.memory_db_dir(), ignore_errors=True)
    engine2 = Engine(s, provider=ScriptedProvider(), tz=ZoneInfo("UTC"))
    out = await _turn(engine2, "When does the password rotation happen on the bastion?")
    recalled = [e for e in out if isinstance(e, ev.Recalled)]
    assert recalled and any("ops-bastion" in it["text"] for it in recalled[0].items)
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
