"""Red-team findings fixed on branch misc24: an API key typed as the model name, hard-linked
transcripts and what `doctor` says `--fix` will change, and what `neotask send` prints around a reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.helpers import cli as neotask

_SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}


def _said_hello(home: Path) -> Path:
    """``neotask send hello`` with the scripted provider: a session with one reply; its live transcript."""
    r = neotask("send", "hello", env=_SCRIPTED)
    assert r.returncode == 0, r.stderr
    (path,) = (home / "data" / "sessions").glob("*.jsonl")
    return path


_WORDS = " ".join(f"word{i}" for i in range(60))
"""About 130 tokens: two such messages in a 600-token window start a compaction at the third turn."""


@pytest.mark.promise("cli_errors")
def _tool_tokens() -> int:
    """Tokens of the tool definitions the scripted provider is given with every call, with the settings
    the CLI reads from the environment."""
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    async def count() -> int:
        eng = Engine(load_settings(), provider=ScriptedProvider())  # the env's settings (memory off here)
        try:
            return eng.tool_tokens()
        finally:
            await eng.aclose()  # the data dir's lock goes with it

    import asyncio
    import os
    import tempfile

    home = os.environ.get("NEOTASK_HOME")
    with tempfile.TemporaryDirectory() as tmp:  # an engine of its own, away from the test's data dir
        os.environ["NEOTASK_HOME"] = tmp
        try:
            return asyncio.run(count())
        finally:
            if home is None:
                os.environ.pop("NEOTASK_HOME", None)
            else:
                os.environ["NEOTASK_HOME"] = home


def test_send_says_an_auto_compaction_in_one_line_not_a_dict(neotask_home: Path) -> None:
    # `neotask send` printed "[Compacted] {'key': ..., 'repaired': [...], 'kind': 'Compacted'}".
    # 600 tokens for the messages: the tool definitions sent with every call count against the window
    env = {"NEOTASK_PROVIDER": "scripted", "NEOTASK_CONTEXT_WINDOW_TOKENS": str(600 + _tool_tokens()),
           "NEOTASK_CONTEXT_REPLY_RESERVE_TOKENS": "100", "NEOTASK_COMPACTION_MIN_MESSAGES": "2"}
    err = ""
    for text in (f"first {_WORDS}", f"second {_WORDS}", "third"):
        r = neotask("send", text, env=env)
        assert r.returncode == 0, r.stderr
        err += r.stderr
    lines = [line for line in err.splitlines() if line.startswith("compacted ")]
    assert len(lines) == 1, err
    assert "{" not in err and "'kind'" not in err, err
    assert " tokens" in lines[0] and "--undo" in lines[0], lines[0]


@pytest.mark.promise("honest_counters")
def test_a_slash_command_through_send_leaves_no_counters_caught_up_line(neotask_home: Path) -> None:
    # After `neotask send "/pref ..."` (a state event, no usage, newer than the index's activity time) the
    # next command said "token counters caught up with the transcript for 1 session(s)": nothing was.
    _said_hello(neotask_home)
    assert neotask("send", "/pref answer briefly", env=_SCRIPTED).returncode == 0
    r = neotask("send", "and now?", "--json", env=_SCRIPTED)
    assert r.returncode == 0, r.stderr
    assert "caught up" not in r.stdout + r.stderr, r.stdout + r.stderr


# --------------------------------------------------------------------------- an API key as the model name
_KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9o"
"""An OpenAI-format key: the redactor knows it by its shape."""
_PLAIN_KEY = "k-test-alphabravocharliedeltaechofoxtrot"
"""A configured key of no known shape: only the configured-key check knows it."""


def _pieces(key: str) -> list[str]:
    """Every 16 characters in a row of ``key`` (the mask's window), none of which may be printed or stored."""
    return [key[i:i + 16] for i in range(len(key) - 15)]


def _leaks(text: str, key: str) -> list[str]:
    return [p for p in _pieces(key) if p in text]


def _stored(home: Path, key: str) -> list[str]:
    """Files under NEOTASK_HOME's data dir holding any 16 characters of ``key`` in a row."""
    out = []
    for p in sorted((home / "data").rglob("*")) if (home / "data").exists() else []:
        if p.is_file() and not p.is_symlink():
            blob = p.read_bytes().decode("utf-8", "replace")
            out += [f"{p.name}: {hit}" for hit in _leaks(blob, key)[:1]]
    return out


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("line", [f"/model {_KEY}", f"/model openai {_KEY}", f"/model local {_KEY}",
                                  f"/model ollama {_KEY[8:]}", f"/model anthropic {_KEY}", f"/{_KEY}"])
def test_model_refuses_an_api_key_through_send_and_echoes_none_of_it(neotask_home: Path, line: str) -> None:
    # `/model sk-proj-…` said "unknown provider 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w'"; `/model local
    # sk-…` echoed 80 characters of it; `/model openai sk-…` showed it as the model and a turn stored it;
    # a key pasted after "/" said "unknown command /sk-proj-ab3def6hij9klm2nop5qrs8tuv1wxy4z".
    env = {"OPENAI_API_KEY": "sk-test-configured-0000000000000000", "ANTHROPIC_API_KEY": "ant-test-0000000000000000"}
    r = neotask("send", line, env=env)
    assert r.returncode == 2, (r.returncode, r.stderr)
    what = "a model name" if line.startswith("/model") else "a command"
    assert f"looks like an API key, not {what}; nothing stored" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not _leaks((r.stdout + r.stderr).lower(), _KEY.lower()), r.stderr
    assert not _stored(neotask_home, _KEY)


@pytest.mark.promise("secrets")
async def test_model_refuses_part_of_a_configured_key_and_keeps_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from neotask_tui.commands import dispatch
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine

    monkeypatch.setenv("OPENAI_API_KEY", _PLAIN_KEY)
    engine = Engine(load_settings())
    try:
        before = engine.choose_provider()
        for line in (f"/model openai {_PLAIN_KEY[7:30]}", f"/model openai {_PLAIN_KEY.upper()}",
                     f"/model {_PLAIN_KEY[2:]}"):
            res = await dispatch(engine, engine.default_key(), line)
            assert res.error and "looks like an API key" in res.text and not _leaks(res.text, _PLAIN_KEY), res.text
            assert engine.choose_provider() == before
        ok = await dispatch(engine, engine.default_key(), "/model openai gpt-4o")  # a name still switches
        assert not ok.error and engine.choose_provider().model == "gpt-4o"
    finally:
        await engine.aclose()


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("where", ["NEOTASK_MODEL", "NEOTASK_PROVIDER_MODEL", "config.toml"])
def test_a_configured_model_that_is_an_api_key_is_refused_naming_where(neotask_home: Path, where: str) -> None:
    # provider.model = "sk-…" (config, NEOTASK_MODEL) was the status line's model, the assistant
    # message's "model" in the transcript and `doctor`'s provider line.
    env = {"NEOTASK_PROVIDER": "scripted"}
    if where == "config.toml":
        cfg = neotask_home / "config" / "config.toml"
        cfg.parent.mkdir(parents=True)
        cfg.write_text(f'[provider]\nmodel = "{_KEY}"\n', encoding="utf-8")
        named = f"{cfg}:2"
    else:
        env[where] = _KEY
        named = f"env {where}"
    r = neotask("send", "hello", env=env)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.strip() == (f"neotask: error: {named}: provider.model: that looks like an API key, not a model "
                                "name; nothing was sent or stored (a key goes in OPENAI_API_KEY, ANTHROPIC_API_KEY "
                                "or provider.api_key)"), r.stderr
    assert not _stored(neotask_home, _KEY) and not (neotask_home / "data" / "sessions").exists()
    d = neotask("doctor", env=env)
    assert d.returncode == 1 and "provider.model: that looks like an API key" in d.stdout, d.stdout
    assert not _leaks(d.stdout + d.stderr, _KEY), d.stdout


@pytest.mark.promise("secrets")
async def test_the_repl_keeps_a_refused_model_line_out_of_the_input_history(neotask_home: Path) -> None:
    from neotask_tui import paths
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider
    from tests.doubles import drive_repl, plain_settings

    engine = Engine(plain_settings(), provider=ScriptedProvider())
    try:
        out = await drive_repl(engine, f"/model openai {_KEY}\r/model {_KEY}\r/{_KEY}\r/goal ship it\r/quit\r", 120)
    finally:
        await engine.aclose()
    assert out.count("looks like an API key, not a model name") == 2 and not _leaks(out.lower(), _KEY.lower()), out
    assert out.count("looks like an API key, not a command") == 1, out
    history = paths.history_file().read_text(encoding="utf-8")
    assert "+/goal ship it" in history and not _leaks(history, _KEY), history


@pytest.mark.promise("secrets")
def test_an_api_key_as_the_provider_name_is_not_echoed(neotask_home: Path) -> None:
    # NEOTASK_PROVIDER=sk-… said "unknown provider 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z'".
    r = neotask("sessions", "list", env={"NEOTASK_PROVIDER": _KEY})
    assert r.returncode == 2 and "env NEOTASK_PROVIDER: provider.name: unknown provider" in r.stderr, r.stderr
    assert not _leaks(r.stderr, _KEY), r.stderr
    named = neotask("sessions", "list", env={"NEOTASK_PROVIDER": "gemini"})  # a name is still named
    assert "unknown provider 'gemini'" in named.stderr, named.stderr


# --------------------------------------------------------------------------- transcripts that are links
@pytest.mark.promise("one_writer")
def test_a_hard_linked_transcript_is_reported_by_the_writer_and_doctor(neotask_home: Path, tmp_path: Path) -> None:
    # A transcript with a second name (st_nlink 2) was written and called clean: whatever writes
    # through the other name, outside Neotask, changes the record.
    transcript = _said_hello(neotask_home)
    other = tmp_path / "elsewhere.jsonl"
    other.hardlink_to(transcript)
    r = neotask("send", "again", env=_SCRIPTED)
    assert r.returncode == 0, r.stderr
    told = [line for line in r.stderr.splitlines() if "has 2 names (a hard link)" in line]
    assert len(told) == 1 and str(transcript) in told[0], r.stderr
    assert other.read_bytes() == transcript.read_bytes()  # kept as it is: reported, not changed
    rep = json.loads(neotask("doctor", "--json", env=_SCRIPTED).stdout)
    assert rep["clean"] and rep["fixable"] == 0, rep
    (link,) = rep["links"]
    assert str(transcript) in link and link in rep["manual"], rep
    out = neotask("doctor", env=_SCRIPTED).stdout
    assert "needs manual action" in out and "--fix`" not in out, out


@pytest.mark.promise("one_writer")
def test_a_transcript_that_is_a_symbolic_link_is_refused_not_followed(neotask_home: Path, tmp_path: Path) -> None:
    transcript = _said_hello(neotask_home)
    outside = tmp_path / "outside.jsonl"
    transcript.rename(outside)
    transcript.symlink_to(outside)
    before = outside.read_bytes()
    r = neotask("send", "again", env=_SCRIPTED)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"neotask: error: {transcript} is a symbolic link; Neotask does not follow links inside its data dir"], r.stderr
    assert outside.read_bytes() == before
    d = neotask("doctor", env=_SCRIPTED)
    assert d.returncode == 1 and f"✗ {transcript} is a symbolic link" in d.stdout, d.stdout
    assert d.stdout.strip().splitlines()[-1] == "problems found (1 needs manual action, marked above)", d.stdout


@pytest.mark.promise("one_writer")
def test_doctor_suggests_fix_only_for_what_fix_changes(neotask_home: Path) -> None:
    # `doctor` ended every report with "(run `neotask doctor --fix`)", also when --fix changes none of the
    # problems (a setting, a foreign parent, a link), and suggested it beside a hard link's loose mode.
    transcript = _said_hello(neotask_home)
    env = {**_SCRIPTED, "NEOTASK_SESION_IDLE_RESET_MINUTES": "5"}  # a typo: yours to fix
    d = neotask("doctor", env=env)
    assert d.returncode == 1, d.stdout
    assert "NEOTASK_SESION_IDLE_RESET_MINUTES" in d.stdout and "needs manual action" in d.stdout, d.stdout
    assert "--fix`" not in d.stdout, d.stdout
    with transcript.open("ab") as f:
        f.write(b'{"type": "message", "id": 9')  # a torn last line: --fix repairs this one
    d = neotask("doctor", env=env)
    assert d.stdout.strip().splitlines()[-1] == (
        "problems found (run `neotask doctor --fix`; 1 needs manual action, marked above)"), d.stdout
    rep = json.loads(neotask("doctor", "--json", env=env).stdout)
    assert rep["fixable"] == 1 and len(rep["manual"]) == 1 and len(rep["problems"]) == 2, rep
    fixed = neotask("doctor", "--fix", env=env)
    assert fixed.stdout.strip().splitlines()[-1] == "problems found (1 needs manual action, marked above)", fixed.stdout
    # what --fix could not change is still there: not a success (it exited 0)
    assert fixed.returncode == 1, fixed.stdout
    assert neotask("doctor", "--fix", env=_SCRIPTED).returncode == 0  # the typo gone: nothing left
