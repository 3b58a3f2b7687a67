"""Pilot tests: ``/search`` shows hits from every session and opens one at its message; the
sessions browser finds sessions by their message text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.screens.search import SearchScreen
from neotask_tui.tui.screens.sessions import SessionsScreen, TranscriptScreen
from neotask_tui.tui.widgets.prompt import Prompt
from neotask_tui.tui.widgets.transcript import Transcript
from tests.tui.support import SIZE, drain, wait_for


async def _seed(engine: Engine, provider: ScriptedProvider) -> str:
    """An archived session holding the word "zeppelin" in its first turn, then newer turns."""
    key = engine.default_key()
    provider.queue("Airships were popular in the 1930s.")
    await drain(engine.send("tell me about the zeppelin hangar", key))
    for i in range(3):
        provider.queue(f"reply {i}")
        await drain(engine.send(f"filler question {i}", key))
    archived = engine.current_record(key).session_id
    await engine.new_session(key)
    provider.queue("Sure.")
    await drain(engine.send("something else entirely", key))
    return archived


async def _search(pilot: Pilot[Any], app: NeotaskApp, query: str) -> None:
    """Type ``/search QUERY`` in the prompt, press Enter, wait for the results screen."""
    app.main.query_one(Prompt).text = f"/search {query}"
    app.main.query_one("#prompt-input").focus()
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen), "the results")


async def test_search_opens_the_archived_hit_at_its_message(app_factory: Callable[..., NeotaskApp], engine: Engine,
                                                            provider: ScriptedProvider) -> None:
    archived = await _seed(engine, provider)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _search(pilot, app, "zeppelin")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        hits = screen.result.hits
        assert [(h.session_id, h.ref, h.archived, h.role) for h in hits] == [(archived, "e:2", True, "user")]
        assert screen.query_one("#search-table").row_count == 1  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the transcript")
        viewer = app.screen
        transcript = viewer.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.hit_view() is not None, "the marked message")
        hit = transcript.hit_view()
        assert hit is not None and hit.entry.event_id == 2 and "zeppelin" in hit.entry.text
        assert "archived, read-only" in str(viewer.query_one("#transcript-title").render())  # type: ignore[attr-defined]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen), "back to the results")
        # A new query from the screen itself; a query without a word is a notice, the hits stay.
        box = screen.query_one("#search-query")
        box.value = '"something else"'  # type: ignore[attr-defined]
        box.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: [h.ref for h in screen.result.hits] == ["e:2"]
                       and not screen.result.hits[0].archived, "the new hits")


async def test_the_sessions_browser_finds_a_session_by_its_message_text(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    archived = await _seed(engine, provider)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.shown, "the browser")
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        screen.query_one("#sessions-search").value = "hangar"  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: archived in screen.content, "the content search")
        assert [r["session_id"] for r in screen.shown] == [archived]  # no key/id/reason holds "hangar"
        screen.query_one("#sessions-table").focus()
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the viewer")
        transcript = app.screen.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.hit_view() is not None, "the marked message")
        assert transcript.hit_view().entry.event_id == 2  # type: ignore[union-attr]


async def test_resume_here_forks_the_archived_session_at_the_hit(app_factory: Callable[..., NeotaskApp],
                                                                 engine: Engine, provider: ScriptedProvider) -> None:
    """`r` on a hit in an archived transcript: a new branch holding the history up to that message
    becomes the key's current session (by key only), the archived transcript is untouched."""
    archived = await _seed(engine, provider)
    key = engine.default_key()
    was_current = engine.current_record(key).session_id
    before = [e.id for e in engine.store.events(archived)]
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _search(pilot, app, "zeppelin")
        await pilot.press("r")
        await wait_for(pilot, lambda: not isinstance(app.screen, SearchScreen), "back in the chat")
        rec = engine.current_record(key)
        assert rec.session_id not in (archived, was_current)
        assert rec.parent_session_id == archived and rec.fork_at == 2
        copied = [e for e in engine.store.events(rec.session_id) if e.type == "message"]
        assert [e.id for e in copied] == [2] and "zeppelin" in str(copied[0].data["content"])
        assert [e.id for e in engine.store.events(archived)] == before
        entries = app.main.query_one(Transcript).entries  # the app shows the new branch
        assert any("zeppelin" in getattr(x, "text", "") for x in entries)
