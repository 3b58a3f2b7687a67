"""Pilot tests: each command does its job on the engine (state, sessions, compaction, inbox, theme...)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from textual.widgets import Static

from neotask_tui.engine.events import RecallReceipt
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.inbox import Candidate
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.screens.compact_review import CompactReviewScreen
from neotask_tui.tui.screens.context import ContextScreen
from neotask_tui.tui.screens.inbox import InboxScreen
from neotask_tui.tui.screens.modals import InputModal
from neotask_tui.tui.screens.sessions import SessionsScreen, TranscriptScreen
from neotask_tui.tui.widgets.gauge import TokenGauge
from neotask_tui.tui.widgets.prompt import Prompt
from neotask_tui.tui.widgets.side import RecallSidebar, StatePanel
from neotask_tui.tui.widgets.transcript import MessageView, Transcript
from tests.tui.support import SIZE, drain, wait_for


async def _run(pilot: object, app: NeotaskApp, line: str) -> None:
    app.main.query_one(Prompt).text = line
    app.main.query_one("#prompt-input").focus()
    await pilot.press("enter")  # type: ignore[attr-defined]


async def _fill_session(engine: Engine, provider: ScriptedProvider, turns: int = 8) -> None:
    key = engine.default_key()
    for i in range(turns):
        provider.queue(f"Answer {i}: we decided to use option {i}. " + "detail " * 120)
        await drain(engine.send(f"Question {i}: should we use option {i}? " + "context " * 120, key))


async def _open_review(pilot: object, app: NeotaskApp) -> None:
    """F5, then wait for the compaction review modal with its widgets mounted."""
    await pilot.press("f5")  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: isinstance(app.screen, CompactReviewScreen)
                   and all(app.screen.query(w) for w in ("#review-title", "#review-summary", "#review-editor")),
                   "the review modal")


async def test_state_commands_fill_the_panel_and_the_panel_edits_and_clears(
        app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    key = engine.default_key()
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        panel = app.main.query_one(StatePanel)
        await _run(pilot, app, "/goal ship the TUI")
        await wait_for(pilot, lambda: panel.entries, "the goal in the panel")
        await _run(pilot, app, "/pref short answers --for 2h")
        await wait_for(pilot, lambda: len(panel.entries) == 2, "the preference in the panel")
        assert engine.state.get(key).value("current_goal") == "ship the TUI"
        pref = next(e for e in panel.entries if e.field == "temporary_preferences")
        assert pref.expires_at is not None
        # Edit the goal from the panel.
        app.main.query_one("#state-list").focus()
        await pilot.press("home")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, InputModal), "the edit dialog")
        app.screen.query_one("#modal-input").value = "ship the TUI and the REPL"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_for(pilot, lambda: engine.state.get(key).value("current_goal") == "ship the TUI and the REPL",
                       "the edited goal")
        # Clear the preference from the panel.
        await wait_for(pilot, lambda: any(e.field == "temporary_preferences" for e in panel.entries), "refresh")
        idx = next(i for i, e in enumerate(panel.entries) if e.field == "temporary_preferences")
        app.main.query_one("#state-list").focus()
        app.main.query_one("#state-list").highlighted = idx  # type: ignore[attr-defined]
        await pilot.press("d")
        await wait_for(pilot, lambda: not engine.state.get(key).values("temporary_preferences"), "the clear")
        await wait_for(pilot, lambda: any(e.expired_at is not None for e in panel.entries), "a struck-through entry")
        await _run(pilot, app, "/done")
        await wait_for(pilot, lambda: engine.state.get(key).value("current_goal") is None, "the workflow end")


async def test_new_and_reset_start_fresh_sessions(app_factory: Callable[..., NeotaskApp], engine: Engine,
                                                  provider: ScriptedProvider) -> None:
    key = engine.default_key()
    await drain(engine.send("remember this conversation", key))
    old = engine.current_record(key).session_id
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        transcript = app.main.query_one(Transcript)
        await wait_for(pilot, lambda: len(transcript.entries) == 2, "the old transcript")
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: engine.current_record(key).session_id != old, "the new session")
        await wait_for(pilot, lambda: [e.kind for e in transcript.entries] == ["notice"], "the marker")
        assert "/new" in transcript.entries[0].text


async def test_sessions_browser_resumes_views_and_restores(app_factory: Callable[..., NeotaskApp],
                                                           engine: Engine) -> None:
    other = "agent:main:tui:side-project"
    await drain(engine.send("hello from the side project", other))
    await drain(engine.send("hello main", engine.default_key()))
    archived = engine.current_record(engine.default_key()).session_id
    await engine.new_session(engine.default_key())
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.shown, "the browser")
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        # Search narrows the list.
        screen.query_one("#sessions-search").value = "side-project"  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: len(screen.shown) == 1, "the filtered list")
        screen.query_one("#sessions-table").focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.key == other, "the resumed key")
        await wait_for(pilot, lambda: any("side project" in e.text for e in app.main.query_one(Transcript).entries),
                       "the other transcript")
        # View an archived session read-only, then restore it.
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.shown, "the browser")
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        row = next(i for i, r in enumerate(screen.shown) if r["session_id"] == archived)
        table = screen.query_one("#sessions-table")
        table.move_cursor(row=row)  # type: ignore[attr-defined]
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the viewer")
        viewer = app.screen
        await wait_for(pilot, lambda: viewer.query_one(Transcript).entries, "the archived transcript")
        assert any(e.text == "hello main" for e in viewer.query_one(Transcript).entries)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen), "back to the browser")
        await pilot.press("r")
        await wait_for(pilot, lambda: engine.current_record(engine.default_key()).session_id == archived,
                       "the restored session")
        await wait_for(pilot, lambda: app.key == engine.default_key(), "the app on the restored key")


async def test_sessions_browser_closed_mid_search_does_not_crash(app_factory: Callable[..., NeotaskApp],
                                                                engine: Engine,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The browser's message-text search awaits the engine; the user may close the browser meanwhile. The
    search resuming on a screen whose widgets are gone must not take the app down (it did: NoMatches)."""
    await drain(engine.send("hello from the side project", "agent:main:tui:side-project"))
    gate, started = asyncio.Event(), asyncio.Event()
    original = engine.search

    async def gated(*args: Any, **kwargs: Any) -> Any:
        # The answer lands in the window between the screen losing its widgets and its workers being
        # cancelled: modelled by a search that finishes even though the cancel has arrived.
        result = await original(*args, **kwargs)
        started.set()
        with contextlib.suppress(asyncio.CancelledError):
            await gate.wait()
        return result

    monkeypatch.setattr(engine, "search", gated)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.shown, "the browser")
        app.screen.query_one("#sessions-search").focus()
        await pilot.press(*"side")
        await wait_for(pilot, started.is_set, "the message search")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionsScreen), "the browser closed")
        gate.set()
        await pilot.pause()
        assert app.is_running
        await _run(pilot, app, "/help")  # the app still answers keys
        assert app.is_running


async def test_compaction_review_cancel_then_accept(app_factory: Callable[..., NeotaskApp], engine: Engine,
                                                    provider: ScriptedProvider) -> None:
    key = engine.default_key()
    await _fill_session(engine, provider)
    before = engine.current_record(key).session_id
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _open_review(pilot, app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CompactReviewScreen), "the cancel")
        await wait_for(pilot, lambda: any("cancelled" in v.entry.text for v in app.main.query(MessageView)),
                       "the cancel notice")
        assert engine.current_record(key).session_id == before
        await _run(pilot, app, "/compact focus on the decisions")
        await wait_for(pilot, lambda: isinstance(app.screen, CompactReviewScreen), "the review modal")
        draft = app.screen.result["summary"]  # type: ignore[attr-defined]
        await pilot.press("a")
        await wait_for(pilot, lambda: engine.current_record(key).session_id != before, "the compaction")
        head = [e for e in engine.events(key) if e.type == "compaction"]
        assert head and head[0].data["summary"].strip() and head[0].data.get("instructions") == "focus on the decisions"
        assert draft.splitlines()[0] in head[0].data["summary"]
        transcript = app.main.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.entries and transcript.entries[0].kind == "marker", "the marker")
        assert transcript.entries[0].title.startswith("compacted ")
        # And /undo-compact brings the old session back.
        await _run(pilot, app, "/undo-compact")
        await wait_for(pilot, lambda: engine.current_record(key).session_id == before, "the undo")


async def test_a_cancelled_review_leaves_the_drafts_call_in_the_gauge(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    # Red team 27, F2: the draft's call to the model was paid but never counted, and after a cancel
    # the gauge was not refreshed at all.
    key = engine.default_key()
    await _fill_session(engine, provider)
    before = engine.current_record(key).counters.input
    provider.queue({"text": "## Goal\n- use option 7 [e:2]", "usage": {"input": 500, "output": 40}})
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        gauge = app.main.query_one(TokenGauge)
        await wait_for(pilot, lambda: gauge.totals is not None and gauge.totals.input == before, "the gauge")
        await _open_review(pilot, app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: any("cancelled" in v.entry.text for v in app.main.query(MessageView)),
                       "the cancel notice")
        await wait_for(pilot, lambda: gauge.totals is not None and gauge.totals.input == before + 500,
                       "the draft's call in the gauge")
        assert engine.session_info(key)["totals"]["input"] == before + 500
        assert "compaction" not in {e.type for e in engine.events(key)}


async def test_compaction_review_edit_commits_the_edited_summary(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    key = engine.default_key()
    await _fill_session(engine, provider)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _open_review(pilot, app)
        await pilot.press("e")
        editor = app.screen.query_one("#review-editor")
        assert editor.display and app.screen.editing  # type: ignore[attr-defined]
        await pilot.press("a")  # types into the editor, does not accept
        assert isinstance(app.screen, CompactReviewScreen)
        draft = editor.text  # type: ignore[attr-defined]
        for nothing in ("  \n\n ", "-", "## Current goal\n## Decisions\n- \n*", "\u00a0\u200b"):
            editor.text = nothing  # type: ignore[attr-defined]  # emptied by hand: refused, nothing written
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, CompactReviewScreen), repr(nothing)
            assert not any(e.type == "compaction" for e in engine.events(key))
        editor.text = draft + "\n\n## Notes\n- reviewed by hand [e:2]\n"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any(e.type == "compaction" for e in engine.events(key)), "the compaction")
        summary = next(e for e in engine.events(key) if e.type == "compaction").data["summary"]
        assert "reviewed by hand" in summary


async def test_context_screen_shows_the_ledger(app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    await drain(engine.send("hello", engine.default_key()))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen), "the context screen")
        data = app.screen.data  # type: ignore[attr-defined]
        assert data["ledger"]["sections"]["system"] > 0
        assert data["messages"][0]["section"] == "system"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ContextScreen), "back")


async def _open_inbox(pilot: Any, app: NeotaskApp) -> InboxScreen:
    """Ctrl+B, and the inbox's table focused once its entries are read."""
    await pilot.press("ctrl+b")
    await wait_for(pilot, lambda: isinstance(app.screen, InboxScreen) and app.screen.entries, "the inbox")
    screen = app.screen
    assert isinstance(screen, InboxScreen)
    screen.query_one("#inbox-table").focus()
    return screen


async def test_inbox_accept_edit_reject(app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    agent = engine.parse_key(engine.default_key()).agent_id
    for text in ("I always prefer tabs over spaces", "Our team deploys on Fridays only"):
        await engine.state.inbox_add(agent, Candidate(text=text, scope="user", reason="stated preference",
                                                      source_ids=[2], explicit=True))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        side = app.main.query_one(RecallSidebar)
        await wait_for(pilot, lambda: "inbox: 2 pending" in str(side.query_one("#recall-foot").render()),
                       "the inbox count")
        screen = await _open_inbox(pilot, app)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, InputModal), "the edit dialog")
        app.screen.query_one("#modal-input").value = "I prefer tabs over spaces, always"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.entries and screen.entries[0].text == "I prefer tabs over spaces, always",
                       "the edited text")
        await pilot.press("a")
        await wait_for(pilot, lambda: len(screen.entries) == 1, "the accept")
        accepted = await engine.state.inbox_list(agent, status="accepted")
        assert [e.text for e in accepted] == ["I prefer tabs over spaces, always"]
        await pilot.press("r")
        await wait_for(pilot, lambda: not screen.entries, "the reject")
        assert len(await engine.state.inbox_list(agent, status="rejected")) == 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: "inbox:" not in str(side.query_one("#recall-foot").render()), "count cleared")


def _slow_accepts(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> tuple[asyncio.Event, list[int]]:
    """Make every inbox accept wait for the returned event before it writes (the write takes its time:
    embedding, index); the list collects the entry numbers asked for."""
    gate = asyncio.Event()
    real = engine.state.inbox_accept
    calls: list[int] = []

    async def slow_accept(agent_id: str, n: int, scope: str | None = None) -> Any:
        calls.append(n)
        await gate.wait()
        return await real(agent_id, n, scope)

    monkeypatch.setattr(engine.state, "inbox_accept", slow_accept)
    return gate, calls


async def test_an_inbox_decision_in_flight_is_shown_and_not_taken_twice(
        app_factory: Callable[..., NeotaskApp], engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team 20 (low): while an accept was being written the inbox showed the entry as if nothing
    happened, and a second ``a`` accepted it again (an error notice). It now says "accepting #1…" and
    a second key waits for the first."""
    agent = engine.parse_key(engine.default_key()).agent_id
    await engine.state.inbox_add(agent, Candidate(text="I always prefer tabs over spaces", scope="user",
                                                  reason="stated preference", source_ids=[2], explicit=True))
    gate, calls = _slow_accepts(engine, monkeypatch)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        screen = await _open_inbox(pilot, app)
        await pilot.press("a")
        detail = screen.query_one("#inbox-detail")
        await wait_for(pilot, lambda: "accepting #1" in str(detail.render()), "the accept in flight")
        assert "(accepting…)" in str(screen.query_one("#inbox-why").render())
        await pilot.press("a")
        await wait_for(pilot, lambda: any("still accepting" in n.message for n in app._notifications),
                       "the notice")
        gate.set()
        await wait_for(pilot, lambda: not screen.entries, "the accept")
        assert calls == [1]
        assert not [n.message for n in app._notifications if n.message.startswith("cannot")]
        assert "accepting" not in str(screen.query_one("#inbox-detail").render())
        accepted = await engine.state.inbox_list(agent, status="accepted")
        assert [e.text for e in accepted] == ["I always prefer tabs over spaces"]


async def test_esc_after_a_refused_key_during_an_accept_closes_the_inbox(
        app_factory: Callable[..., NeotaskApp], engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team 22, F9 (low): ``a``, then ``r`` while the accept ran (refused, "still accepting"), then
    Esc: the inbox stayed open after the accept finished and the keys typed after it went nowhere."""
    agent = engine.parse_key(engine.default_key()).agent_id
    for text in ("I always prefer tabs over spaces", "Our team deploys on Fridays only"):
        await engine.state.inbox_add(agent, Candidate(text=text, scope="user", reason="stated preference",
                                                      source_ids=[2], explicit=True))
    gate, _ = _slow_accepts(engine, monkeypatch)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        screen = await _open_inbox(pilot, app)
        await pilot.press("a")
        await wait_for(pilot, lambda: "accepting #1" in str(screen.query_one("#inbox-detail").render()), "accepting")
        await pilot.press("r")
        await wait_for(pilot, lambda: any("still accepting" in n.message for n in app._notifications), "the notice")
        await pilot.press("escape")
        gate.set()
        await wait_for(pilot, lambda: not isinstance(app.screen, InboxScreen), "the inbox closed")
        await pilot.press("x", "y", "z")
        await wait_for(pilot, lambda: app.main.query_one("#prompt").text.endswith("xyz"), "typing reaches the prompt")
        assert [e.text for e in await engine.state.inbox_list(agent, status="accepted")] == [
            "I always prefer tabs over spaces"]


async def test_recall_sidebar_never_recall_here(app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        side = app.main.query_one(RecallSidebar)
        side.show("tabs?", [RecallReceipt(id="m1", text="prefers tabs", source="MEMORY.md:3-3", score=0.9,
                                          scope="user")])
        side.query_one("#recall-list").focus()
        await pilot.press("down")
        await pilot.press("n")
        key = engine.default_key()
        await wait_for(pilot, lambda: engine.current_record(key).config.get("never_recall") == ["m1"], "the config")
        assert side.items == []


async def test_forget_from_the_recall_sidebar(app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    engine.settings.memory.enabled = True
    key = engine.default_key()
    mem = await engine.get_memory()
    assert mem is not None
    agent = engine.parse_key(key).agent_id
    added = mem.add(agent, "The deploy password rotates every Monday", source="test")
    hits = mem.search("deploy password rotates", agent_id=agent, k=3)
    assert hits
    app = app_factory()
    app.settings.memory.enabled = True
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        side = app.main.query_one(RecallSidebar)
        side.show("deploy", [RecallReceipt(id=h.id, text=h.text, source=h.location, score=h.score, scope=h.scope)
                             for h in hits[:1]])
        side.query_one("#recall-list").focus()
        await pilot.press("down")
        await pilot.press("f")
        await wait_for(pilot, lambda: not side.items, "the forget")
    assert added is not None
    assert not [h for h in mem.search("deploy password rotates", agent_id=agent, k=3) if "rotates" in h.text]


async def test_memory_files_are_watched_while_the_app_runs(
        app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    from neotask_tui import paths

    app = app_factory()
    app.settings.memory.enabled = True
    agent = engine.parse_key(engine.default_key()).agent_id
    ws = paths.ensure_dir(paths.workspace_dir(agent))
    (ws / "MEMORY.md").write_text("# Memory\n\nThe office plant is a fern.\n", encoding="utf-8")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await wait_for(pilot, lambda: engine.memory is not None and engine.memory._watcher is not None, "the watcher")
        (ws / "memory").mkdir()
        (ws / "memory" / "office.md").write_text("The coffee machine is on floor three.\n", encoding="utf-8")
        await wait_for(pilot, lambda: any("memory/office.md" in n.message for n in app._notifications),
                       "the reindex notice")
        # indexed by the watcher: the search that follows embeds nothing
        assert engine.memory.reindex(agent).chunks_embedded == 0
        assert "floor three" in engine.memory.search("coffee machine", agent_id=agent, k=1)[0].text


async def test_theme_switch_and_unknown_theme(app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        assert app.theme == "neotask-dark"
        await _run(pilot, app, "/theme neotask-light")
        await wait_for(pilot, lambda: app.theme == "neotask-light", "the light theme")
        await _run(pilot, app, "/theme solarized-purple")
        await wait_for(pilot, lambda: any("unknown theme" in v.entry.text for v in app.main.query(MessageView)),
                       "the inline error")
        assert app.theme == "neotask-light"
        await _run(pilot, app, "/theme")
        await wait_for(pilot, lambda: any("neotask-high-contrast" in v.entry.text
                                          for v in app.main.query(MessageView)), "the theme list")
    # the choice is kept for the next start ...
    assert app_factory().theme == "neotask-light"
    # ... unless config.toml's theme changed since it was made (the newer wish wins)
    assert app_factory(theme="neotask-high-contrast").theme == "neotask-high-contrast"


async def test_quit_command_exits(app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _run(pilot, app, "/quit")
        await wait_for(pilot, lambda: not app.is_running, "the exit")
    assert app.return_code == 0


@pytest.mark.parametrize("short", [True, False])
async def test_compaction_review_says_when_compacting_saves_nothing(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider, short: bool) -> None:
    key = engine.default_key()
    if short:  # three short exchanges: the summary costs as much as what it replaces
        for i in range(3):
            provider.queue(f"Use port 80{i}.")
            await drain(engine.send(f"Which port for service {i}? Do not use port 22.", key))
    else:
        await _fill_session(engine, provider)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _open_review(pilot, app)
        r = app.screen.result  # type: ignore[attr-defined]
        title = str(app.screen.query_one("#review-title", Static).render())
        assert (r["tokens_after"] >= r["tokens_before"]) is short
        assert ("no saving" in title) is short
        await pilot.press("escape")


async def test_ctrl_n_carries_the_state_and_the_panel_says_so(app_factory: Callable[..., NeotaskApp],
                                                             engine: Engine) -> None:
    key = engine.default_key()
    await engine.state.set(key, "constraints", "do not use Redis anywhere in the migration")
    old = engine.current_record(key).session_id
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        panel = app.main.query_one(StatePanel)
        await wait_for(pilot, lambda: panel.entries, "the rule in the panel")
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: engine.current_record(key).session_id != old, "the new session")
        await wait_for(pilot, lambda: [e.carried_from for e in panel.entries] == [old], "the carried rule")
        foot = str(app.main.query_one("#state-foot", Static).render())
        assert "1 active (1 carried over from the previous session)" in foot


async def test_re_embedding_after_a_model_change_is_shown(
        app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    """A memory index built by another embedding model is re-embedded when the app opens it, and the
    app says so while it works (not a silent minute of CPU)."""
    from neotask_tui import paths
    from neotask_tui.config import MemorySettings
    from neotask_tui.memory.index.models import MINILM
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.storage.events import Event

    agent = engine.parse_key(engine.default_key()).agent_id
    ws = paths.ensure_dir(paths.workspace_dir(agent))
    (ws / "MEMORY.md").write_text("# Memory\n\nThe office plant is a fern.\n", encoding="utf-8")
    old = MemoryService(MemorySettings(embedding_model=MINILM.model_id))
    old.reindex(agent)
    old.index_transcript(agent, "s1", [Event("message", 1, None, "2025-01-01T10:00:00+00:00",
                                             {"role": "user", "content": "We chose Kubernetes."})],
                         f"agent:{agent}")
    old.close()
    app = app_factory()
    app.settings.memory.enabled = True
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await wait_for(pilot, lambda: engine.memory is not None and engine.memory._watcher is not None, "the watcher")
        await wait_for(pilot, lambda: any(n.message.startswith("memory: migrating transcripts")
                                          for n in app._notifications), "the re-embed notice")
        notes = [n.message for n in app._notifications if n.message.startswith("memory: ")]
        assert any("1/1" in m and "done" in m for m in notes)


async def _hold_the_queue(pilot: object, app: NeotaskApp) -> asyncio.Event:
    """A job that runs until the returned event is set: what is asked for after it waits (as behind
    a long reply)."""
    from neotask_tui.tui.input_queue import Job

    gate = asyncio.Event()
    assert app.inputs.submit(Job("hold", gate.wait, "command"))
    await wait_for(pilot, lambda: app.inputs.running == "hold", "the held job")
    return gate


async def _review_opening(pilot: object, app: NeotaskApp, typed: str, *, burst: bool = False) -> None:
    """F5 queued behind a held job, then ``typed`` (``burst``: as a terminal delivers keys typed
    fast, see :func:`_burst`), then the job ends and the review opens."""
    await wait_for(pilot, app.ready.is_set, "engine")
    gate = await _hold_the_queue(pilot, app)
    if burst:
        _burst(app, "f5", typed)
        await wait_for(pilot, lambda: app.main.query_one(Prompt).text == typed and app.inputs.waiting,
                       "the typing and the queued /compact")
    else:
        await pilot.press("f5", *typed)  # type: ignore[attr-defined]
    gate.set()
    await wait_for(pilot, lambda: isinstance(app.screen, CompactReviewScreen), "the review")


async def test_a_review_that_opens_while_you_type_sends_your_typing_to_the_prompt(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    """F5 queued behind a reply, then typing the next message: the review opens under your fingers.
    Its one-letter keys (``a`` accepts, ``e`` edits) must not take those letters (red team 18)."""
    key = engine.default_key()
    await _fill_session(engine, provider)
    before = engine.current_record(key).session_id
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _review_opening(pilot, app, "next ")
        await pilot.press(*"agenda: ace", "backspace", "enter")
        await pilot.pause()
        assert isinstance(app.screen, CompactReviewScreen) and not app.screen.editing  # type: ignore[attr-defined]
        assert engine.current_record(key).session_id == before  # nothing compacted
        assert app.main.query_one(Prompt).text == "next agenda: ac"  # every key kept, Enter sent nothing
        await pilot.press("tab", "a")  # turning to the screen: its keys work again
        await wait_for(pilot, lambda: engine.current_record(key).session_id != before, "the compaction")
        head = next(e for e in engine.events(key) if e.type == "compaction")
        assert head.data["summary"].strip()
        assert app.main.query_one(Prompt).text == "next agenda: ac"


def _burst(app: NeotaskApp, key: str, text: str) -> None:
    """``key`` and then ``text`` as a terminal delivers them typed fast: all queued before the app
    handles the first (a key binding runs only once its key has bubbled up, behind the rest)."""
    from textual import events

    app.post_message(events.Key(key, None))
    for ch in text:
        app.post_message(events.Key("space" if ch == " " else ch, ch))


async def test_typing_right_behind_f5_counts_as_typed_after_asking(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    """F5 then the next message, typed fast: F5's action runs after those characters reached the
    prompt, but they were typed after asking, so the review that opens is guarded (tmux walk)."""
    key = engine.default_key()
    await _fill_session(engine, provider)
    before = engine.current_record(key).session_id
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _review_opening(pilot, app, "and also ", burst=True)
        await pilot.press(*"about a")
        await pilot.pause()
        assert isinstance(app.screen, CompactReviewScreen)
        assert engine.current_record(key).session_id == before
        assert app.main.query_one(Prompt).text == "and also about a"


async def test_a_review_asked_for_without_typing_after_takes_its_keys_at_once(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    key = engine.default_key()
    await _fill_session(engine, provider)
    before = engine.current_record(key).session_id
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _review_opening(pilot, app, "")
        await pilot.press("a")
        await wait_for(pilot, lambda: engine.current_record(key).session_id != before, "the compaction")
        assert app.main.query_one(Prompt).text == ""


async def _a_candidate(engine: Engine) -> str:
    """One pending inbox candidate; returns the agent id."""
    agent = engine.parse_key(engine.default_key()).agent_id
    await engine.state.inbox_add(agent, Candidate(text="I always prefer tabs over spaces", scope="user",
                                                  reason="stated preference", source_ids=[2], explicit=True))
    return agent


async def _open_the_inbox_typing(pilot: object, app: NeotaskApp, typed: str) -> None:
    """Ctrl+B queued behind a held job, then ``typed``: the inbox opens while you type."""
    await wait_for(pilot, app.ready.is_set, "engine")
    gate = await _hold_the_queue(pilot, app)
    await pilot.press("ctrl+b", *typed)  # type: ignore[attr-defined]
    gate.set()
    await wait_for(pilot, lambda: isinstance(app.screen, InboxScreen) and app.screen.entries, "the inbox")


async def test_an_inbox_that_opens_while_you_type_accepts_nothing_you_typed(
        app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    """Accepting a candidate puts it in long-term memory: only a key meant for the inbox may do it."""
    agent = await _a_candidate(engine)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _open_the_inbox_typing(pilot, app, "ok")
        await pilot.press(*" are we there", "enter")
        await pilot.pause()
        assert isinstance(app.screen, InboxScreen)
        assert await engine.state.inbox_list(agent, status="accepted") == []
        assert await engine.state.inbox_list(agent, status="rejected") == []
        assert app.main.query_one(Prompt).text == "ok are we there"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, InboxScreen), "the inbox closed")
        assert await engine.state.inbox_list(agent, status="accepted") == []


async def test_typing_in_the_palette_guards_the_screen_that_opens_over_it(
        app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    """Red team 20: Ctrl+B queued behind a reply, then typing in the command palette: the inbox opened
    unguarded over it and the next "a" accepted a candidate. Typing in any text field counts, and
    goes back to that field."""
    from textual.command import CommandPalette
    from textual.widgets import Input

    agent = await _a_candidate(engine)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        gate = await _hold_the_queue(pilot, app)
        await pilot.press("ctrl+b", "ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"rea")
        gate.set()
        await wait_for(pilot, lambda: isinstance(app.screen, InboxScreen) and app.screen.entries, "the inbox")
        await pilot.press("a", "backspace", "d")
        await pilot.pause()
        assert isinstance(app.screen, InboxScreen)
        assert await engine.state.inbox_list(agent, status="accepted") == []
        palette = next(s for s in app.screen_stack if isinstance(s, CommandPalette))
        assert palette.query_one(Input).value == "read"


async def test_the_prompts_editing_keys_edit_the_prompt_behind_a_guarded_screen(
        app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    """Red team 19: Delete, Home, End or Ctrl+W turned the guarded inbox back to normal, and the next
    letter accepted a candidate into MEMORY.md. Only a key that moves in the screen turns to it."""
    agent = await _a_candidate(engine)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _open_the_inbox_typing(pilot, app, "ok")
        prompt = app.main.query_one(Prompt)
        await pilot.press("home", "delete", "a")
        assert prompt.text == "ak"
        await pilot.press("end", *" yes", "ctrl+w", "a", "ctrl+k", "ctrl+z", "e", "r")
        await pilot.pause()
        assert isinstance(app.screen, InboxScreen)
        assert await engine.state.inbox_list(agent, status="accepted") == []
        assert await engine.state.inbox_list(agent, status="rejected") == []
        assert prompt.text.startswith("ak ") and prompt.text.endswith("er"), prompt.text
        await pilot.press("down", "a")  # an arrow turns to the screen: its keys work again
        await wait_for(pilot, lambda: not app.screen.entries, "the accept")  # type: ignore[attr-defined]
        accepted = await engine.state.inbox_list(agent, status="accepted")
        assert [e.text for e in accepted] == ["I always prefer tabs over spaces"]
