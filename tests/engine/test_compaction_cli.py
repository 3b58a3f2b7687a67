"""``/compact``, ``/undo-compact``, ``neotask compact`` and ``neotask context``."""

from __future__ import annotations

import json

import pytest

from neotask_tui.cli import main
from neotask_tui.commands import dispatch
from neotask_tui.commands.compaction import apply_review
from tests.doubles import scripted
from tests.engine.compaction_support import CONVERSATION, KEY, chat, open_engine


async def test_slash_compact_previews_then_applies_the_reviewed_summary() -> None:
    eng = open_engine()
    try:
        await chat(eng)
        scripted(eng).queue("## Goal\n- Fix the importer [e:2]")
        res = await dispatch(eng, KEY, "/compact focus on limits")
        assert res.action == "compact_review" and not res.error
        assert res.data["preview"] and res.data["apply"]["instructions"] == "focus on limits"
        assert eng.current_record(KEY).compaction_count == 0
        edited = res.data["summary"] + "\n## Open questions\n- Which row limit applies? [e:16]"
        done = await apply_review(eng, KEY, edited, instructions="focus on limits")
        assert done.data["model"] == "reviewed"
        assert "Which row limit applies?" in eng.events(KEY)[1].data["summary"]
        assert eng.current_record(KEY).compaction_count == 1
        undo = await dispatch(eng, KEY, "/undo-compact")
        assert not undo.error and eng.current_record(KEY).compaction_count == 0
        bad = await dispatch(eng, KEY, "/compact --bogus")
        assert bad.error
    finally:
        await eng.aclose()


async def test_slash_compact_now() -> None:
    eng = open_engine()
    try:
        await chat(eng)
        scripted(eng).queue("## Goal\n- Fix the importer [e:2]")
        res = await dispatch(eng, KEY, "/compact --now")
        assert not res.error and res.data["new_session_id"]
    finally:
        await eng.aclose()


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOTASK_PROVIDER", "scripted")
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "false")
    monkeypatch.setenv("NEOTASK_SESSION_DAILY_RESET_HOUR", "-1")
    monkeypatch.setenv("NEOTASK_COMPACTION_KEEP_RECENT_TOKENS", "40")
    for user, _ in CONVERSATION:
        assert main(["send", user]) == 0


def test_cli_context_preview_compact_undo(seeded: None, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["context", KEY, "--json"]) == 0
    led = json.loads(capsys.readouterr().out)["ledger"]
    assert led["total"] == sum(led["sections"].values())
    assert led["budget"] > 0 and 0 < led["fill"] < 1
    assert main(["compact", KEY, "--preview", "--json"]) == 0
    prev = json.loads(capsys.readouterr().out)
    assert prev["preview"] and prev["new_session_id"] is None
    assert main(["compact", KEY, "--instructions", "keep ids", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["new_session_id"] and done["instructions"] == "keep ids"
    assert "Do not use Redis." in done["summary"]
    assert main(["context", KEY, "--json"]) == 0
    after = json.loads(capsys.readouterr().out)["ledger"]
    assert after["sections"]["summary"] > 0
    assert main(["compact", KEY, "--undo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["restored_session_id"] == done["old_session_id"]
    assert main(["compact", KEY, "--undo"]) == 2
