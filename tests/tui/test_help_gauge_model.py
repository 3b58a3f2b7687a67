"""Pilot tests for issue #17: a readable /help, an honest gauge, a model that says what it is."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import UTC

import pytest

from neotask_tui.commands import REGISTRY
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tui.app import NeotaskApp, make_app
from neotask_tui.tui.widgets.gauge import TokenGauge
from neotask_tui.tui.widgets.prompt import Prompt
from neotask_tui.tui.widgets.status import StatusBar
from neotask_tui.tui.widgets.transcript import Transcript
from tests.doubles import Clock
from tests.tui.support import drain, ui_settings, wait_for


async def _run(pilot: object, app: NeotaskApp, line: str) -> None:
    app.main.query_one(Prompt).text = line
    app.main.query_one("#prompt-input").focus()
    await pilot.press("enter")  # type: ignore[attr-defined]


def screen_lines(app: NeotaskApp) -> list[str]:
    """What the terminal shows now, one string per row (read from the SVG screenshot)."""
    svg = app.export_screenshot()
    rows: dict[int, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text[^>]*\bx="([0-9.]+)"[^>]*line-(\d+)\)"[^>]*>([^<]*)</text>', svg):
        rows.setdefault(int(m.group(2)), []).append((float(m.group(1)), html.unescape(m.group(3))))
    width = 12.2  # Rich's SVG cell width
    out = []
    for n in sorted(rows):
        line = ""
        for x, text in sorted(rows[n]):
            col = round(x / width)
            line = line.ljust(col) + text
        out.append(line.replace("\xa0", " "))
    return out


async def test_help_fits_a_140x40_screen_with_every_usage_and_description(
        app_factory: Callable[..., NeotaskApp]) -> None:
    from neotask_tui.tui.screens.help import HelpScreen

    app = app_factory()
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        await pilot.pause()
        body = app.screen.query_one("#help-body")
        assert body.max_scroll_y == 0, "the help list scrolls at 140x40"
        shown = "\n".join(screen_lines(app))
        for cmd in REGISTRY.values():  # usage and description on one line, intact (| included)
            assert f"{cmd.usage}  {cmd.help}" in shown, cmd.usage
        for group in ("sessions", "context & compaction", "state", "memory", "app"):
            assert group in shown
        await pilot.press("k")
        await pilot.pause()
        keys = "\n".join(screen_lines(app))
        assert "Compact" in keys and "Sessions" in keys and "/compact [" not in keys
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen), "the help screen closed")


async def _gauge_settles(pilot: object, app: NeotaskApp, engine: Engine, what: str) -> str:
    """Wait until the gauge shows our estimate of the next call on the current session; its text."""
    key = engine.default_key()
    gauge = app.main.query_one(TokenGauge)

    async def expected() -> int:
        return (await engine.context(key)).ledger.total

    want = await expected()
    await wait_for(pilot, lambda: gauge.ledger is not None and gauge.ledger.total == want
                   and gauge.for_call == "next" and not app.streaming, what)
    await pilot.pause()
    return str(gauge.render())


async def test_gauge_says_where_each_number_comes_from_and_follows_every_change(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    key = engine.default_key()
    app = app_factory()
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        provider.queue({"text": "Fine. " + "words " * 200, "usage": {"input": 356, "output": 210}})
        await _run(pilot, app, "tell me about the staging host " * 20)
        await wait_for(pilot, lambda: engine.last_call_usage(key) is not None, "the reply")
        text = await _gauge_settles(pilot, app, engine, "the estimate after the turn")
        assert "last call 356 in (reported)" in text
        assert "next call ≈" in text and "(estimated)" in text and "(reported)" not in text.split("·")[1]
        full = app.main.query_one(TokenGauge).fill

        await _run(pilot, app, "/goal ship the staging migration and keep the DNS names")
        text = await _gauge_settles(pilot, app, engine, "the estimate after /goal")
        assert app.main.query_one(TokenGauge).ledger.sections.get("state", 0) > 0  # type: ignore[union-attr]

        await _run(pilot, app, "/new")
        await wait_for(pilot, lambda: engine.last_call_usage(key) is None, "the new session")
        text = await _gauge_settles(pilot, app, engine, "the estimate after /new")
        assert "no call yet in this session" in text and "356" not in text
        assert app.main.query_one(TokenGauge).fill < full
        assert "■" in text  # the section legend is still there


async def test_gauge_follows_compaction_its_undo_and_a_stopped_turn(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    key = engine.default_key()
    for i in range(6):
        provider.queue({"text": f"Decision {i}: approach {i}. " + "detail " * 100, "usage": {"input": 900 + i}})
        await drain(engine.send(f"Question {i}: which approach? " + "context " * 100, key))
    app = app_factory()
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        text = await _gauge_settles(pilot, app, engine, "the first estimate")
        assert "last call 905 in (reported)" in text
        before = app.main.query_one(TokenGauge).total
        old = engine.current_record(key).session_id
        await _run(pilot, app, "/compact --now")
        await wait_for(pilot, lambda: engine.current_record(key).session_id != old, "the compaction")
        await _gauge_settles(pilot, app, engine, "the estimate after compaction")  # the new session's
        await _run(pilot, app, "/undo-compact")
        await wait_for(pilot, lambda: engine.current_record(key).session_id == old, "the undo")
        text = await _gauge_settles(pilot, app, engine, "the estimate after the undo")
        assert "last call 905 in (reported)" in text and app.main.query_one(TokenGauge).total == before

        provider.queue({"text": "partial " * 400, "delay": 0.05})
        await _run(pilot, app, "a long answer please")
        await wait_for(pilot, lambda: app.streaming and app.main.query_one(TokenGauge).for_call == "this",
                       "the streaming turn")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.streaming, "the stop")
        await _gauge_settles(pilot, app, engine, "the estimate after the stop")
        assert app.main.query_one(TokenGauge).total > before  # the message and the partial reply count


async def test_first_screen_welcomes_and_model_switches_without_a_restart(
        monkeypatch: pytest.MonkeyPatch, clock: Clock) -> None:
    from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

    settings = ui_settings()
    settings.provider.name = ""  # nothing configured: the bundled model would answer
    settings.provider.probe_ollama = False
    engine = Engine(settings, clock=clock, tz=UTC)
    app = make_app(settings, engine=engine)
    try:
        with OpenAIServer() as srv:
            async with app.run_test(size=(140, 40)) as pilot:
                await wait_for(pilot, app.ready.is_set, "engine")
                transcript = app.main.query_one(Transcript)
                await wait_for(pilot, lambda: transcript.entries, "the welcome")
                welcome = transcript.entries[0]
                assert welcome.title == "welcome" and "local · smollm2-135m-instruct" in welcome.text
                assert "small offline demo" in welcome.text and "GGUF" in welcome.text
                assert engine.provider is None  # saying so loaded nothing
                status = app.main.query_one(StatusBar)
                await wait_for(pilot, lambda: status.provider.startswith("local"), "the status line")

                monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
                monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
                await _run(pilot, app, "/model openai gpt-4o")
                await wait_for(pilot, lambda: status.provider == "openai · gpt-4o", "the switched status line")
                srv.queue(Reply(chunks=["hello ", "from the server"], usage=ReplyUsage(input=41, output=4)))
                await _run(pilot, app, "hi")
                await wait_for(pilot, lambda: engine.last_call_usage(engine.default_key()) is not None, "the reply")
                assert srv.requests[-1]["model"] == "gpt-4o"
                text = await _gauge_settles(pilot, app, engine, "the gauge")
                assert "last call 41 in (reported)" in text
    finally:
        await engine.aclose()


async def test_undo_compact_confirms_after_the_reload(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    key = engine.default_key()
    for i in range(6):
        provider.queue(f"Decision {i}: approach {i}. " + "detail " * 80)
        await drain(engine.send(f"Question {i}: which approach? " + "context " * 80, key))
    await engine.compact(key)
    app = app_factory()
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await _run(pilot, app, "/undo-compact")
        transcript = app.main.query_one(Transcript)
        await wait_for(pilot, lambda: any(e.kind == "command" and "Compaction undone" in e.text
                                          for e in transcript.entries), "the confirmation")
        await pilot.pause(0.3)
        assert any("Compaction undone" in e.text for e in transcript.entries)  # not wiped by the reload


async def test_sessions_browser_says_why_a_session_was_archived(
        app_factory: Callable[..., NeotaskApp], engine: Engine, provider: ScriptedProvider) -> None:
    from neotask_tui.tui.screens.sessions import SessionsScreen

    key = engine.default_key()
    for i in range(6):
        provider.queue(f"Decision {i}: approach {i}. " + "detail " * 80)
        await drain(engine.send(f"Question {i}: which approach? " + "context " * 80, key))
    first = engine.current_record(key).session_id
    await engine.compact(key)
    second = engine.current_record(key).session_id  # started by compaction, then archived by /new
    await engine.new_session(key)
    app = app_factory()
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.shown, "the browser")
        screen = app.screen
        table = screen.query_one("#sessions-table")
        states = {str(r["session_id"]): str(table.get_row_at(i)[-1])  # type: ignore[attr-defined]
                  for i, r in enumerate(screen.shown)}  # type: ignore[attr-defined]
        assert states[first] == "archived (compacted)"
        assert states[second] == "archived"  # not "archived (compaction)": that is how it started


async def test_inbox_shows_the_whole_why_of_the_selected_candidate(
        app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    from neotask_tui.engine.state.inbox import Candidate
    from neotask_tui.tui.screens.inbox import InboxScreen

    why = "you said 'always' about a tool choice that holds across projects, twice in this session"
    agent = engine.parse_key(engine.default_key()).agent_id
    await engine.state.inbox_add(agent, Candidate(text="I always prefer tabs over spaces", scope="user", reason=why,
                                                  source_ids=[2], explicit=True,
                                                  created_at="2026-03-14T15:09:26+00:00"))
    app = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        await pilot.press("ctrl+b")
        await wait_for(pilot, lambda: isinstance(app.screen, InboxScreen) and app.screen.entries, "the inbox")
        await pilot.pause()
        assert why in " ".join(" ".join(screen_lines(app)).split())
