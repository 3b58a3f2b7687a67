"""Snapshot tests (pytest-textual-snapshot) at a fixed size with a fixed clock and no cursor blink.

Session ids are made deterministic by patching the random part of ``new_session_id``. Update the
SVGs with ``pytest tests/tui/test_snapshots.py --snapshot-update`` after looking at the report.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC
from typing import Any

import pytest
from textual.pilot import Pilot

from neotask_tui.engine.events import RecallReceipt
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.inbox import Candidate
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp, make_app
from neotask_tui.tui.screens.compact_review import CompactReviewScreen
from neotask_tui.tui.screens.inbox import InboxScreen
from neotask_tui.tui.screens.search import SearchScreen
from neotask_tui.tui.screens.sessions import SessionsScreen
from neotask_tui.tui.widgets.prompt import Prompt
from neotask_tui.tui.widgets.side import RecallSidebar
from tests.doubles import Clock
from tests.tui.support import SIZE, drain, ui_settings, wait_for

REPLY = """Here's a plan for the **session-state panel**:

1. Read the state with `engine.state.get(key)` in a worker.
2. Render each entry with its source and TTL.

```python
view = engine.state.get(key)
for entry in view.active:
    print(entry.field, entry.value)
```

| field | TTL |
|---|---|
| current_goal | until /done |
| temporary_preferences | 2h |
"""


@pytest.fixture(autouse=True)
def fixed_session_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = itertools.count(1)
    monkeypatch.setattr("neotask_tui.storage.store.secrets.token_hex", lambda n=4: f"{next(counter):0{2 * n}x}")


@pytest.fixture
def scene(clock: Clock) -> Iterator[tuple[Engine, ScriptedProvider, Clock]]:
    provider = ScriptedProvider()
    engine = Engine(ui_settings(), provider=provider, clock=clock, tz=UTC)
    yield engine, provider, clock
    engine.close()


async def _settle(pilot: Pilot[Any], app: NeotaskApp) -> None:
    await wait_for(pilot, app.ready.is_set, "engine")
    await wait_for(pilot, lambda: app.engine.last_ledger or app.main.query_one("#gauge").ledger, "the gauge")
    for area in app.main.query("#prompt-input"):
        area.cursor_blink = False  # type: ignore[attr-defined]
    await pilot.pause()


async def _conversation(engine: Engine, provider: ScriptedProvider) -> None:
    key = engine.default_key()
    await engine.state.set_goal(key, "ship the Neotask TUI")
    await engine.state.add_pref(key, "short answers, code first", for_="2h")
    provider.queue({"text": "Sure — what part first?", "usage": {"input": 180, "output": 9}})
    await drain(engine.send("Help me build the state panel.", key))
    provider.queue({"text": REPLY, "usage": {"input": 420, "output": 160, "cache_read": 128}})
    await drain(engine.send("The state panel, with TTL countdowns.", key))


def _recall(app: NeotaskApp) -> None:
    app.main.query_one(RecallSidebar).show("state panel TTL", [
        RecallReceipt(id="m1", text="User prefers Textual for terminal UIs.", source="MEMORY.md:3-4",
                      score=0.82, scope="user"),
        RecallReceipt(id="m2", text="Project neotask: TTLs are shown as countdowns.",
                      source="memory/neotask.md:10-12", score=0.61, scope="project"),
    ])


def _main_scene(theme: str = "neotask-dark") -> Callable[[Engine, ScriptedProvider], tuple[NeotaskApp, Any]]:
    def build(engine: Engine, provider: ScriptedProvider) -> tuple[NeotaskApp, Any]:
        settings = ui_settings(theme=theme)
        engine.settings = settings
        app = make_app(settings, engine=engine)

        async def run_before(pilot: Pilot[Any]) -> None:
            await wait_for(pilot, app.ready.is_set, "engine")
            await _conversation(engine, provider)
            await app.load_session()
            _recall(app)
            await _settle(pilot, app)

        return app, run_before

    return build


def test_main_screen_mid_conversation(snap_compare: Callable[..., bool],
                                      scene: tuple[Engine, ScriptedProvider, Clock]) -> None:
    engine, provider, _clock = scene
    app, run_before = _main_scene()(engine, provider)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_light_theme(snap_compare: Callable[..., bool], scene: tuple[Engine, ScriptedProvider, Clock]) -> None:
    engine, provider, _clock = scene
    app, run_before = _main_scene("neotask-light")(engine, provider)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def _with_screen(engine: Engine, provider: ScriptedProvider, seed: Callable[[], Awaitable[None]], key: str,
                 screen: type[Any]) -> tuple[NeotaskApp, Any]:
    app = make_app(engine.settings, engine=engine)

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_for(pilot, app.ready.is_set, "engine")
        await seed()
        await app.load_session()
        await _settle(pilot, app)
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(app.screen, screen), screen.__name__)
        await wait_for(pilot, lambda: not app.screen.query("#sessions-table, #inbox-table")
                       or any(t.row_count for t in app.screen.query("#sessions-table, #inbox-table")),  # type: ignore
                       "the table rows")
        await pilot.pause(0.2)

    return app, run_before


def test_compaction_review_modal(snap_compare: Callable[..., bool],
                                 scene: tuple[Engine, ScriptedProvider, Clock]) -> None:
    engine, provider, _clock = scene

    async def seed() -> None:
        key = engine.default_key()
        for i in range(6):
            provider.queue(f"Decision {i}: we will use approach {i}. " + "detail " * 100)
            await drain(engine.send(f"Question {i}: which approach for part {i}? " + "context " * 100, key))

    app, run_before = _with_screen(engine, provider, seed, "f5", CompactReviewScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_sessions_browser(snap_compare: Callable[..., bool], scene: tuple[Engine, ScriptedProvider, Clock]) -> None:
    engine, provider, clock = scene

    async def seed() -> None:
        await drain(engine.send("hello from the side project", "agent:main:tui:side-project"))
        clock.advance(minutes=5)
        await drain(engine.send("hello main", engine.default_key()))
        await engine.new_session(engine.default_key())
        await drain(engine.send("a fresh start", engine.default_key()))

    app, run_before = _with_screen(engine, provider, seed, "ctrl+o", SessionsScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_sessions_branch_tree(snap_compare: Callable[..., bool],
                              scene: tuple[Engine, ScriptedProvider, Clock]) -> None:
    """Forks sit under the session they were forked from, each with its fork point (#21 item 2)."""
    engine, provider, clock = scene

    async def seed() -> None:
        key = engine.default_key()
        for text in ("plan the parser", "use a Pratt parser", "add error recovery"):
            clock.advance(minutes=1)
            await drain(engine.send(text, key))
        root = engine.current_record(key).session_id
        clock.advance(minutes=1)
        await engine.fork_session(key, 3)  # at the first reply
        await drain(engine.send("use parser combinators instead", key))
        clock.advance(minutes=1)
        await engine.fork_session(key, 5, from_session=root)  # the root again, at the second reply

    app, run_before = _with_screen(engine, provider, seed, "ctrl+o", SessionsScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_superseded_reply_is_dimmed_and_labelled(snap_compare: Callable[..., bool],
                                                 scene: tuple[Engine, ScriptedProvider, Clock]) -> None:
    """After /retry the old reply stays in the transcript, labelled superseded (#21 item 3)."""
    engine, provider, _clock = scene
    app = make_app(engine.settings, engine=engine)

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_for(pilot, app.ready.is_set, "engine")
        key = engine.default_key()
        provider.queue({"text": "The staging host is marmalade-7.", "usage": {"input": 60, "output": 9}})
        await drain(engine.send("Which host runs staging?", key))
        provider.queue({"text": "I don't know; check the inventory file.", "usage": {"input": 58, "output": 10}})
        await drain(engine.retry(key))
        await app.load_session()
        await _settle(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.fixture
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC (hits show local times), whatever the machine's zone."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_search_results(snap_compare: Callable[..., bool], scene: tuple[Engine, ScriptedProvider, Clock],
                        utc_zone: None) -> None:
    engine, provider, clock = scene

    async def seed() -> None:
        key = engine.default_key()
        provider.queue("Check the upstream block, then reload **nginx**.")
        await drain(engine.send("the nginx proxy on api-7 returns 502 after the deploy", key))
        clock.advance(minutes=5)
        await engine.new_session(key)
        provider.queue("Встреча перенесена; nginx подождёт.")
        await drain(engine.send("Когда встреча по релизу nginx?", "agent:ops:cli:night"))

    app = make_app(engine.settings, engine=engine)

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_for(pilot, app.ready.is_set, "engine")
        await seed()
        await app.load_session()
        await _settle(pilot, app)
        app.main.query_one(Prompt).text = "/search nginx"
        app.main.query_one("#prompt-input").focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen), "the results")
        await wait_for(pilot, lambda: app.screen.query_one("#search-table").row_count, "the rows")  # type: ignore
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_inbox(snap_compare: Callable[..., bool], scene: tuple[Engine, ScriptedProvider, Clock]) -> None:
    engine, provider, _clock = scene

    async def seed() -> None:
        agent = engine.parse_key(engine.default_key()).agent_id
        for text, scope in (("I always prefer tabs over spaces", "user"),
                            ("For this project we deploy on Fridays only", "project")):
            await engine.state.inbox_add(agent, Candidate(text=text, scope=scope, reason="stated preference",
                                                          source_ids=[2], explicit=True,
                                                          created_at="2026-03-14T15:09:26+00:00"))

    app, run_before = _with_screen(engine, provider, seed, "ctrl+b", InboxScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("size", [(140, 40), (80, 24), (60, 20)], ids=["140x40", "80x24", "60x20"])
def test_main_screen_sizes(snap_compare: Callable[..., bool], scene: tuple[Engine, ScriptedProvider, Clock],
                           size: tuple[int, int]) -> None:
    """Wide: the side column; 80 and 60 columns: the transcript takes the width, the footer fits (#17)."""
    engine, provider, _clock = scene
    app, run_before = _main_scene()(engine, provider)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_state_panel_over_the_transcript_at_80x24(snap_compare: Callable[..., bool],
                                                  scene: tuple[Engine, ScriptedProvider, Clock]) -> None:
    """F2 on a small terminal opens the state panel over the transcript (the prompt keeps the focus);
    F6 moves into it, with its keys in the footer."""
    engine, provider, _clock = scene
    app, settle = _main_scene()(engine, provider)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("f2", "f6")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("size", [(140, 40), (80, 24), (60, 20)], ids=["140x40", "80x24", "60x20"])
def test_help_screen(snap_compare: Callable[..., bool], scene: tuple[Engine, ScriptedProvider, Clock],
                     size: tuple[int, int]) -> None:
    from neotask_tui.tui.screens.help import HelpScreen

    engine, _provider, _clock = scene
    app = make_app(engine.settings, engine=engine)

    async def run_before(pilot: Pilot[Any]) -> None:
        await _settle(pilot, app)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_first_screen_welcome_with_the_bundled_model(snap_compare: Callable[..., bool], clock: Clock) -> None:
    settings = ui_settings()
    settings.provider.name = ""  # nothing configured: the bundled demo model would answer (not loaded here)
    settings.provider.probe_ollama = False
    engine = Engine(settings, clock=clock, tz=UTC)
    app = make_app(settings, engine=engine)

    async def run_before(pilot: Pilot[Any]) -> None:
        await _settle(pilot, app)
        await wait_for(pilot, lambda: app.main.query_one("#transcript").entries, "the welcome")  # type: ignore
        await pilot.pause(0.2)

    try:
        assert snap_compare(app, terminal_size=(140, 40), run_before=run_before)
    finally:
        engine.close()
