"""README promise: ``/context``, F4 and ``neotask context`` show exactly what the next call sends.

Recall included (the untrusted part), computed read-only: a preview records no recall receipt and
writes nothing. ``neotask context KEY --json`` carries the assembled messages themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neotask_tui.commands import dispatch
from neotask_tui.config import load_settings
from neotask_tui.engine.context.budget import compaction_point
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from tests.faults.helpers import KEY, cli, run_turn

pytestmark = pytest.mark.promise("context_view")

NOTE = "The lighthouse keeper's boat is called Marigold."
QUESTION = "what is the lighthouse keeper's boat called?"
ENV = {"NEOTASK_MEMORY_ENABLED": "true", "NEOTASK_SESSION_DAILY_RESET_HOUR": "-1"}


@pytest.fixture
def memory_home(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    ws = data_dir / "agents" / "main"
    ws.mkdir(parents=True)
    (ws / "MEMORY.md").write_text(f"# Memory\n\n- {NOTE}\n- Deploys happen on Thursdays.\n")
    return data_dir


def _files(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under ``root`` with its mtime and bytes (a preview must change none of them)."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(root.rglob("*")) if p.is_file()}


async def _one_turn() -> None:
    prov = ScriptedProvider()
    e = Engine(load_settings(), provider=prov)
    try:
        prov.queue({"text": "It is called Marigold."})
        await run_turn(e, QUESTION, KEY)
        assert any(NOTE in m.content for m in prov.calls[-1]), "the note is not recalled by a real turn"
    finally:
        await e.aclose()


async def test_cli_context_json_carries_the_messages_recall_included_and_writes_nothing(
        memory_home: Path, neotask_home: Path) -> None:
    await _one_turn()
    before = _files(neotask_home)
    out = cli("context", KEY, "--json", env=ENV)
    assert out.returncode == 0, out.stderr
    assert _files(neotask_home) == before
    doc = json.loads(out.stdout)
    msgs = doc["messages"]
    assert msgs and all(set(m) >= {"role", "content", "section"} for m in msgs)
    recall = [m for m in msgs if m["section"] == "recall"]
    assert len(recall) == 1 and NOTE in recall[0]["content"] and recall[0]["role"] == "system"
    assert "<recalled-memory" in recall[0]["content"]
    assert doc["recall"]["basis"] == "last_user_message" and doc["recall"]["query"] == QUESTION
    assert doc["ledger"]["sections"]["recall"] > 0
    assert next(m["content"] for m in msgs if m["section"] == "recent") == QUESTION


async def test_cli_context_with_a_draft_recalls_for_the_draft(memory_home: Path, neotask_home: Path) -> None:
    await _one_turn()
    before = _files(neotask_home)
    out = cli("context", KEY, "--json", "--message", "when do deploys happen?", env=ENV)
    assert out.returncode == 0, out.stderr
    assert _files(neotask_home) == before
    doc = json.loads(out.stdout)
    assert doc["recall"]["basis"] == "draft" and doc["recall"]["query"] == "when do deploys happen?"
    recall = [m["content"] for m in doc["messages"] if m["section"] == "recall"]
    assert len(recall) == 1 and "Thursdays" in recall[0]
    assert doc["messages"][-1] == {"role": "user", "content": "when do deploys happen?", "section": "new_message"}
    # The plain output says which recall it shows.
    out = cli("context", KEY, "--message", "when do deploys happen?", env=ENV)
    assert out.returncode == 0, out.stderr
    assert "recall" in out.stdout and "your draft" in out.stdout


async def test_slash_context_shows_recall_and_records_no_receipt(memory_home: Path, neotask_home: Path) -> None:
    await _one_turn()
    prov = ScriptedProvider()
    e = Engine(load_settings(), provider=prov)
    try:
        n_events = len(e.events(KEY))
        await e.get_memory()  # the preview itself must not write: the index is already current
        before = _files(neotask_home)
        res = await dispatch(e, KEY, "/context")
        assert not res.error, res.text
        assert NOTE in res.text and "last message" in res.text
        recall = [m for m in res.data["messages"] if m["section"] == "recall"]
        assert len(recall) == 1 and NOTE in recall[0]["content"]
        # where the context stands against automatic compaction: the compactor's own numbers
        led = res.data["ledger"]
        at = compaction_point(e.settings, e.message_window())
        assert led["compaction_at"] == at > 0
        without_recall = led["total"] - led["sections"]["recall"]
        assert f"without recall the context is {without_recall:,} tokens" in res.text
        assert f"automatic compaction fires at {at:,}" in res.text
        res2 = await dispatch(e, KEY, "/context when do deploys happen?")
        assert "Thursdays" in res2.text and "draft" in res2.text
        assert len(e.events(KEY)) == n_events and e.last_ledger.get(KEY) is None
        assert prov.calls == []
        assert _files(neotask_home) == before
    finally:
        await e.aclose()


async def test_f4_screen_shows_recall_for_the_prompt_draft(memory_home: Path) -> None:
    from neotask_tui.tui.app import make_app
    from neotask_tui.tui.screens.context import ContextScreen
    from neotask_tui.tui.widgets.prompt import Prompt

    await _one_turn()
    settings = load_settings()
    settings.provider.name = "scripted"
    settings.memory.watch = False
    e = Engine(settings, provider=ScriptedProvider())
    app = make_app(settings, engine=e)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(600):
                if app.ready.is_set():
                    break
                await pilot.pause(0.05)
            app.main.query_one(Prompt).text = "when do deploys happen?"
            await pilot.press("f4")
            for _ in range(1200):
                if isinstance(app.screen, ContextScreen):
                    break
                await pilot.pause(0.05)
            assert isinstance(app.screen, ContextScreen)
            data = app.screen.data
            recall = [m for m in data["messages"] if m["section"] == "recall"]
            assert len(recall) == 1 and "Thursdays" in recall[0]["content"]
            assert data["recall"]["basis"] == "draft"
            shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
            assert "Thursdays" in shown and "draft" in shown
            at = compaction_point(e.settings, e.message_window())
            assert f"automatic compaction fires at {at:,}" in shown  # as `/context` says it
            await pilot.press("escape")
            # The draft is still in the prompt, unsent.
            assert app.main.query_one(Prompt).text == "when do deploys happen?"
    finally:
        await e.aclose()


async def test_cli_context_before_memory_is_indexed_writes_nothing_and_says_so(
        memory_home: Path, neotask_home: Path) -> None:
    prov = ScriptedProvider()
    e = Engine(load_settings(), provider=prov)
    try:
        e.settings.memory.enabled = False  # a session exists, memory was never opened (nor indexed)
        await run_turn(e, "hello", KEY)
    finally:
        await e.aclose()
    before = _files(neotask_home)
    out = cli("context", KEY, "--json", "--message", QUESTION, env=ENV)
    assert out.returncode == 0, out.stderr
    assert _files(neotask_home) == before
    doc = json.loads(out.stdout)
    assert doc["recall"]["basis"] == "draft" and "not indexed yet" in doc["recall"]["note"]
    assert not (memory_home / "lancedb").exists()


# ------------------------------------------------------------------ red team F8

async def test_preview_says_archived_transcripts_are_not_indexed_yet(memory_home: Path, neotask_home: Path) -> None:
    """The next call indexes new archived sessions before it recalls: the preview (read-only) says so."""
    prov = ScriptedProvider()
    e = Engine(load_settings(), provider=prov)
    try:
        prov.queue({"text": "Noted: the ferry leaves at dawn."})
        await run_turn(e, "remember that the ferry to Inishmore leaves at dawn", KEY)
        await e.get_memory()
        await e.new_session(KEY)  # the old transcript is archived, not indexed yet
        before = _files(neotask_home)
        ctx = await e.preview(KEY, "when does the ferry leave?")
        assert _files(neotask_home) == before
        assert "archived session" in ctx.recall_note and "not indexed yet" in ctx.recall_note, ctx.recall_note
        prov.queue({"text": "At dawn."})
        await run_turn(e, "when does the ferry leave?", KEY)  # indexes the archived session first
        ctx = await e.preview(KEY, "when does the ferry leave?")
        assert "archived" not in ctx.recall_note, ctx.recall_note
    finally:
        await e.aclose()


async def test_preview_carries_the_tool_definitions_the_call_sends(memory_home: Path, neotask_home: Path) -> None:
    from neotask_tui.engine.session.turn import tool_definitions

    prov = ScriptedProvider()
    e = Engine(load_settings(), provider=prov)
    try:
        res = await dispatch(e, KEY, "/context hello")
        prov.queue({"text": "hi"})
        await run_turn(e, "hello", KEY)
        sent = prov.tools_seen[-1]
        assert sent, "the scripted provider takes tools"
        assert res.data["tools"] == tool_definitions(sent)
        assert res.data["tool_tokens"] > 10 * len(sent)
        assert f"tools: {len(sent)} definitions sent with the call" in res.text
        # The ledger's total is still exactly the messages' count (the gauge).
        from neotask_tui.text.tokens import count_messages

        ctx = await e.preview(KEY, "hello again")
        assert sum(ctx.ledger.sections.values()) == ctx.ledger.total == count_messages(ctx.messages, e.count_text)
    finally:
        await e.aclose()
    scripted = {**ENV, "NEOTASK_PROVIDER_NAME": "scripted"}
    out = cli("context", KEY, "--json", env=scripted)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [t["name"] for t in doc["tools"]] == [t.name for t in sent] and doc["tool_tokens"] > 0
    out = cli("context", KEY, env=scripted)
    assert "tools:" in out.stdout and "definitions sent with the call" in out.stdout
    # The bundled local model takes no tools: none are sent, and the preview says so.
    out = cli("context", KEY, "--json", env={**ENV, "NEOTASK_PROVIDER_NAME": "local"})
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["tools"] == [] and doc["tool_tokens"] == 0
