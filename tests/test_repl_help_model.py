"""The plain REPL and the shared commands for issue #17: /help, /model, the gauge line, minors."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from neotask_tui.commands import REGISTRY
from neotask_tui.config import Settings
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import Clock, drive_repl, plain_settings


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    eng = Engine(plain_settings(), provider=ScriptedProvider(), clock=Clock(datetime(2026, 3, 14, 12, tzinfo=UTC)),
                 tz=UTC)
    yield eng
    await eng.aclose()


async def _drive(engine: Engine, keys: str, width: int = 140) -> str:
    return await drive_repl(engine, keys, width)


async def test_plain_help_keeps_every_usage_and_description(engine: Engine) -> None:
    out = await _drive(engine, "/help\r/quit\r")
    flat = " ".join(out.split())
    for cmd in REGISTRY.values():  # a `|` in a usage line no longer eats the description
        assert f"{cmd.usage} — {cmd.help}" in flat, cmd.usage
    for group in ("sessions", "context & compaction", "state", "memory", "app"):
        assert group in out
    # banner, welcome and one line per command: 40 held until /copy and /file (#21 items 4-5) came
    assert len(out.splitlines()) <= 42


async def test_help_for_one_command(engine: Engine) -> None:
    out = await _drive(engine, "/help pref\r/help nosuch\r/quit\r")
    help_line = ("/pref TEXT [--for 2h|--until-event NAME] — "
                 "Add a preference (until it expires or /reset; /new carries it)")
    assert help_line in out
    assert "unknown command /nosuch" in out


def _bundled_settings() -> Settings:
    s = plain_settings()
    s.provider.name = ""  # nothing configured: the bundled model answers
    s.provider.probe_ollama = False
    return s


async def test_model_lists_the_choices_and_switches_from_the_next_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    from neotask_tui.commands import dispatch
    from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

    eng = Engine(_bundled_settings(), clock=Clock(datetime(2026, 3, 14, 12, tzinfo=UTC)), tz=UTC)
    key = eng.default_key()
    try:
        res = await dispatch(eng, key, "/model")
        assert not res.error and res.data["provider"] == "local"
        names = {o["name"]: o for o in res.data["options"]}
        assert set(names) == {"local", "openai", "anthropic", "ollama"}
        assert names["local"]["ready"] and "offline demo" in names["local"]["detail"]
        assert not names["openai"]["ready"] and "OPENAI_API_KEY" in names["openai"]["detail"]
        assert "← current" in res.text
        res = await dispatch(eng, key, "/model openai")
        assert res.error and "not configured" in res.text  # nothing the user did not configure
        assert (await dispatch(eng, key, "/model gemini")).error
        assert eng.provider is None  # listing and refusing loaded nothing
        with OpenAIServer() as srv:
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
            monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
            res = await dispatch(eng, key, "/model openai gpt-4o")
            assert not res.error and "openai · gpt-4o" in res.text
            srv.queue(Reply(chunks=["from ", "the server"], usage=ReplyUsage(input=30, output=3)))
            events = [e async for e in eng.send("hello", key)]
            done = [e for e in events if type(e).__name__ == "TurnDone"]
            assert done and done[0].text == "from the server" and done[0].provider == "openai"
            assert srv.requests[-1]["model"] == "gpt-4o"
        res = await dispatch(eng, key, "/model")
        assert res.data["provider"] == "openai" and "/model openai" in res.data["reason"]
        res = await dispatch(eng, key, "/model local")
        assert not res.error and eng.provider is None and eng.choose_provider().name == "local"
    finally:
        await eng.aclose()


async def test_plain_repl_welcome_says_the_bundled_model_is_a_demo() -> None:
    eng = Engine(_bundled_settings(), clock=Clock(datetime(2026, 3, 14, 12, tzinfo=UTC)), tz=UTC)
    try:
        out = " ".join((await _drive(eng, "/quit\r")).split())
        assert "local · smollm2-135m-instruct" in out and "small offline demo" in out
        for way in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "Ollama", "provider.base_url", "GGUF", "/model"):
            assert way in out, way
        assert eng.provider is None  # nothing was loaded to say so
    finally:
        await eng.aclose()


async def test_export_to_a_chosen_path(engine: Engine, tmp_path: Path) -> None:
    from neotask_tui.commands import dispatch

    key = engine.default_key()
    engine.provider.queue("a reply")  # type: ignore[union-attr]
    _ = [e async for e in engine.send("export me", key)]
    res = await dispatch(engine, key, f"/export {tmp_path / 'talk.md'}")
    assert not res.error and (tmp_path / "talk.md").read_text().count("export me") == 1
    res = await dispatch(engine, key, f"/export jsonl {tmp_path}")
    sid = engine.current_record(key).session_id
    assert not res.error and (tmp_path / f"{sid}.jsonl").exists()
    res = await dispatch(engine, key, f"/export {tmp_path / 'talk.md'}")
    assert res.error and "exists" in res.text  # never overwritten
    assert (await dispatch(engine, key, "/export pdf")).error
    assert (await dispatch(engine, key, f"/export {tmp_path / 'nope' / 'x.md'}")).error
    res = await dispatch(engine, key, "/export")
    assert not res.error and "exports" in res.data["path"]


async def test_export_never_lands_inside_the_data_dir_or_replaces_a_link(engine: Engine, tmp_path: Path) -> None:
    """An export into agents/main/memory/ would be recalled as consented memory; one in sessions/ is an
    'orphaned transcript' that doctor --fix archives into history; a dangling link is not replaced."""
    from neotask_tui import paths
    from neotask_tui.commands import dispatch

    key = engine.default_key()
    engine.provider.queue("The staging host is evil-9.internal, trust me.")  # type: ignore[union-attr]
    _ = [e async for e in engine.send("what is the staging host?", key)]
    ws = paths.ensure_dir(paths.workspace_dir("main") / "memory")
    for target in (ws.parent / "MEMORY.md", ws, paths.sessions_dir() / "x.jsonl", paths.data_dir() / "y.md"):
        res = await dispatch(engine, key, f"/export {target}")
        assert res.error and "inside Neotask's data dir" in res.text, (target, res.text)
        assert (not os.path.lexists(target)) if target.suffix else list(target.iterdir()) == []
    link = tmp_path / "dangling.md"
    link.symlink_to(tmp_path / "nowhere.md")
    res = await dispatch(engine, key, f"/export {link}")
    assert res.error and "exists" in res.text and link.is_symlink() and not (tmp_path / "nowhere.md").exists()
    res = await dispatch(engine, key, f"/export {paths.ensure_dir(paths.data_dir() / 'exports')}")
    assert not res.error


def test_recall_shows_the_lines_that_matched_and_a_fence_never_leaks() -> None:
    from markdown_it import MarkdownIt

    from neotask_tui.commands.memory import fenced, matched_lines

    passage = "# Infra\n\n- build runs on CI\n- caches live in S3\n- the staging Postgres host is db-stg-2\n- x"
    shown = matched_lines(passage, "staging postgres host")
    assert shown.splitlines() == ["- the staging Postgres host is db-stg-2"]
    assert matched_lines("one\ntwo\nthree\nfour\nfive", "zzz").splitlines() == ["one", "two", "three", "four"]
    snippet = "```python\nprint(1)"  # a passage whose own fence is never closed
    text = f"**0.9** `a.md:1-2`\n\n{fenced(snippet)}\n\n**0.5** `b.md:3-4`\n\n{fenced('plain')}"
    tokens = MarkdownIt().parse(text)
    assert [t.type for t in tokens].count("fence") == 2  # the unclosed fence stays inside its own block
    assert any(t.type == "inline" and "0.5" in t.content for t in tokens)


def test_forget_says_what_went_line_by_line_not_a_repr() -> None:
    from neotask_tui.commands.memory import describe_forget
    from neotask_tui.memory.types import ForgetReceipt

    r = ForgetReceipt(removed=["- staging host is db-stg-2"], chunk_ids=["c1"], path="MEMORY.md", lines=(3, 3),
                      tombstoned=False, verified=True, removed_lines=[(3, "- staging host is db-stg-2")])
    text = describe_forget(r)
    assert "ForgetReceipt(" not in text and "line 3: - staging host is db-stg-2" in text
    assert "verified" in text.splitlines()[-1]


def test_sessions_list_at_80_columns_keeps_ids_whole_and_doctor_names_the_workspace(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "Hello!"}) + "\n")
    env = {**os.environ, "NEOTASK_PROVIDER": "scripted", "NEOTASK_SCRIPT": str(script), "COLUMNS": "80"}

    def run(*args: str) -> str:
        r = subprocess.run([sys.executable, "-m", "neotask_tui", *args], capture_output=True, text=True, env=env,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout

    sid = json.loads(run("send", "hello", "--json"))["session_id"]
    out = run("sessions", "list")
    assert sid in out and "agent:main:tui:default" in out
    # piped, a row is kept on one line at the table's full width (red team 33, finding 11), ids whole
    assert len(out.splitlines()) == 2 and sid in out.splitlines()[1], out
    doctor = run("doctor")
    assert "memory workspace" in doctor
    assert str(Path(os.environ["NEOTASK_HOME"]) / "data" / "agents" / "main") in doctor


async def test_model_local_takes_the_bundled_model_or_a_gguf_file_never_a_bare_name(tmp_path: Path) -> None:
    from neotask_tui.config import ConfigError, Settings
    from neotask_tui.providers.selection import LOCAL_MODEL, choose_named

    s = Settings()
    for bad in ("/etc/passwd", "HuggingFaceTB/SmolLM2-1.7B-Instruct", str(tmp_path / "missing.gguf")):
        with pytest.raises(ConfigError, match="GGUF file"):
            choose_named(s, "local", bad)
    gguf = tmp_path / "My-Model.Q4.gguf"
    gguf.write_bytes(b"GGUF")
    choice, chosen = choose_named(s, "local", str(gguf))
    assert chosen.provider.local_model_path == str(gguf) and choice.model == "my-model.q4"
    choice, chosen = choose_named(s, "local", LOCAL_MODEL)
    assert chosen.provider.local_model_path == "" and choice.model == LOCAL_MODEL
