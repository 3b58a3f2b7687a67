"""Slash commands (/state, /goal, /pref, /event, /done, /inbox) and the ``neotask state``/``inbox`` CLI."""

from __future__ import annotations

import asyncio
import json

import pytest

from neotask_tui.cli import main
from neotask_tui.commands import dispatch
from neotask_tui.engine.facade import Engine
from tests.doubles import Clock
from tests.engine.state_support import KEY, open_engine


async def run(eng: Engine, line: str) -> tuple[str, bool]:
    r = await dispatch(eng, KEY, line)
    return r.text, r.error


async def test_new_says_what_it_carried_and_state_shows_it(engine: Engine) -> None:
    await run(engine, "/goal migrate the billing service")
    await run(engine, "/pref answer briefly --for 2h")
    old = engine.current_record(KEY).session_id
    text, err = await run(engine, "/new")
    assert not err and text.endswith(f"(previous {old} archived; 2 state entries carried over)")
    text, _ = await run(engine, "/state")
    assert f"**current_goal**: migrate the billing service _(user command, carried over by /new from {old})_" in text
    text, _ = await run(engine, "/reset")
    assert "carried" not in text and "state cleared" in text
    assert "_nothing active_" in (await run(engine, "/state"))[0]
    text, _ = await run(engine, "/help")
    assert "session state still active carries over" in text and "nothing carries over" in text


async def test_state_commands_round_trip(engine: Engine, clock: Clock) -> None:
    assert (await run(engine, "/goal fix the CSV importer"))[1] is False
    text, err = await run(engine, "/pref don't use emojis, it's Bob's demo --for 2h")
    assert not err and text == "preference for 2h: don't use emojis, it's Bob's demo"
    await run(engine, "/pref show prices in EUR --until-event checkout_paid")
    await run(engine, "/state set current_step verify purchase --scope chat")
    text, _ = await run(engine, "/state")
    assert "**current_goal**: fix the CSV importer" in text
    assert "**current_step**: verify purchase _(user command, chat agent:main:tui:default)_" in text
    text, _ = await run(engine, "/event checkout_paid")
    assert text == "event checkout_paid: 1 entry expired"
    text, _ = await run(engine, "/state")
    assert "~~**temporary_preferences**: show prices in EUR~~ _(event: checkout_paid)_" in text
    text, _ = await run(engine, "/state clear current_step")
    assert text.startswith("cleared current_step (1 entry")
    text, _ = await run(engine, "/done")
    assert text.startswith("workflow done: 1 entry expired")
    text, _ = await run(engine, "/state audit")
    assert "workflow end: done" in text and "manual: /state clear" in text
    clock.advance(hours=3)
    assert engine.state.block(KEY) == ""  # type: ignore[union-attr]


async def test_a_value_quoted_whole_is_stored_without_its_quotes(engine: Engine) -> None:
    """Users quote a value as in a shell; quotes that are part of the text stay."""
    assert (await run(engine, "/state set rule 'do not use Redis anywhere' --scope project"))[0] == (
        "rule = do not use Redis anywhere")
    assert (await run(engine, '/goal "ship the importer"'))[0] == "goal: ship the importer"
    assert (await run(engine, "/pref 'no emojis' --for 2h"))[0] == "preference for 2h: no emojis"
    assert (await run(engine, "/state set note 'a' and 'b'"))[0] == "note = 'a' and 'b'"
    assert (await run(engine, """/state set quip "say 'hi'" """))[0] == "quip = say 'hi'"
    assert "do not use Redis anywhere" in engine.state.block(KEY)  # type: ignore[union-attr]


@pytest.mark.parametrize("line", [
    "/state set", "/state set onlykey", "/state clear", "/state clear a b", "/state frobnicate",
    "/goal", "/pref", "/pref  --for 2h", "/pref x --for soonish", "/event", "/event two words",
    "/done now", "/inbox accept", "/inbox accept x", "/inbox edit 1", "/inbox reject", "/inbox reject 99",
    "/inbox explode", "/state set bad!key value", "/state set k v --scope galaxy",
])
async def test_bad_arguments_give_a_one_line_error(engine: Engine, line: str) -> None:
    text, err = await run(engine, line)
    assert err and text and "\n" not in text


async def test_inbox_commands(engine: Engine) -> None:
    await engine.append(KEY, "message", {"role": "user", "content": "x"})
    prov = engine.provider
    assert prov is not None
    prov.queue("ok", "ok")  # type: ignore[attr-defined]
    [e async for e in engine.send("Always send me a short summary first.", KEY)]
    [e async for e in engine.send("Always answer in French.", KEY)]
    r = await dispatch(engine, KEY, "/inbox")
    assert r.action == "open_inbox" and [d["n"] for d in r.data] == [1, 2]
    assert "- **#1** Always send me a short summary first — _user, classifier e:" in r.text
    text, err = await run(engine, "/inbox edit 1 Send a short summary first, then details.")
    assert not err and text == "#1 is now: Send a short summary first, then details."
    text, err = await run(engine, "/inbox accept 1 --scope user")
    assert not err and text.startswith("#1 saved to long-term memory (user;")
    text, err = await run(engine, "/inbox reject #2")
    assert not err and "will not be proposed again" in text
    text, _ = await run(engine, "/inbox")
    assert text.startswith("the inbox is empty")


def test_cli_state_and_inbox_json(clock: Clock, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "false")

    async def setup() -> None:
        eng = open_engine(clock)
        try:
            await eng.state.set_goal(KEY, "fix the importer")  # type: ignore[union-attr]
            await eng.state.set(KEY, "current_step", "old")  # type: ignore[union-attr]
            await eng.state.set(KEY, "current_step", "new")  # type: ignore[union-attr]
            eng.provider.queue("ok")  # type: ignore[union-attr]
            [e async for e in eng.send("Всегда пиши код с type hints.", KEY)]
        finally:
            await eng.aclose()

    asyncio.run(setup())
    capsys.readouterr()

    assert main(["state", KEY, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {e["field"]: e["value"] for e in data["active"]} == {"current_goal": "fix the importer",
                                                                "current_step": "new"}
    assert main(["state", KEY, "--audit", "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)["audit"]
    assert [(a["value"], a["why"].split(" (e:")[0]) for a in audit] == [("old", "replaced by user command")]
    assert main(["state", "agent:nobody:tui:x", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["active"] == []

    assert main(["inbox", "list", "--json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["text"] == "Всегда пиши код с type hints" and entry["status"] == "pending"
    assert entry["failed"] == [] and entry["criteria"]["has_source"]["ok"] is True
    assert main(["inbox", "accept", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "accepted"
    assert main(["inbox", "reject", "1"]) == 2
    assert "already accepted" in capsys.readouterr().err
    assert main(["inbox", "list", "--all", "--json"]) == 0
    assert [e["status"] for e in json.loads(capsys.readouterr().out)] == ["accepted"]
    assert main(["inbox", "edit"]) == 2
    assert main(["state", KEY]) == 0
    assert "fix the importer" in capsys.readouterr().out


async def test_expired_entries_sit_under_their_own_heading(engine: Engine, clock: Clock) -> None:
    """An expired preference is shown struck through under "expired or cleared", never right under
    "nothing active" as if it were one."""
    await run(engine, "/pref answer briefly --for 1h")
    clock.advance(minutes=65)  # expired 5 minutes ago: still shown, struck through
    text, _ = await run(engine, "/state")
    lines = text.splitlines()
    assert "_nothing active_" in lines and "_expired or cleared (1)_" in lines
    assert lines.index("_expired or cleared (1)_") < next(i for i, ln in enumerate(lines) if "~~" in ln)


def test_the_audit_says_its_times_on_the_local_clock(clock: Clock, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Red team: `/state audit` and `neotask state --audit` printed UTC ("2026-12-06T15:00:00+00:00")
    # while `/state` prints local time with its zone.
    import time
    from datetime import UTC, datetime

    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "false")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        async def setup() -> str:
            eng = open_engine(clock)
            try:
                clock.set(datetime(2026, 12, 6, 14, 30, tzinfo=UTC))
                await eng.state.set(KEY, "current_step", "old")  # type: ignore[union-attr]
                clock.set(datetime(2026, 12, 6, 15, 0, tzinfo=UTC))  # local midnight in Tokyo
                await eng.state.set(KEY, "current_step", "new")  # type: ignore[union-attr]
                return (await run(eng, "/state audit"))[0]
            finally:
                await eng.aclose()

        slash = asyncio.run(setup())
        assert slash.startswith("- ~~**current_step**: old~~ — replaced by") and slash.endswith(
            " at 2026-12-07 00:00 JST"), slash
        capsys.readouterr()
        assert main(["state", KEY, "--audit"]) == 0
        out = capsys.readouterr().out
        assert "2026-12-06 23:30 JST" in out and "2026-12-07 00:00 JST" in out, out  # set, expired
        assert "+00:00" not in out and "T15:00" not in out
        assert main(["state", KEY, "--audit", "--json"]) == 0  # JSON keeps the exact stored value
        [row] = json.loads(capsys.readouterr().out)["audit"]
        assert datetime.fromisoformat(row["when"]) == datetime(2026, 12, 6, 15, 0, tzinfo=UTC)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
