"""The CLI as a user runs it (real subprocesses, scripted provider)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from neotask_tui import paths

KEY = "agent:main:tui:default"


def neotask(
    *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "neotask_tui", *args], capture_output=True, text=True, env=e,
                          input=stdin, timeout=120)


def test_send_json_then_sessions_list_shows_counters(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "Hello!", "usage": {"input": 11, "output": 2, "cache_read": 3,
                                                               "cache_write": 1}}) + "\n")
    env = {"NEOTASK_PROVIDER": "scripted", "NEOTASK_SCRIPT": str(script)}
    r = neotask("send", "hello", "--json", env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["reply"] == "Hello!" and out["provider"] == "scripted"
    assert out["usage"] == {"input": 11, "output": 2, "cache_read": 3, "cache_write": 1, "reported": True}
    r = neotask("sessions", "list", "--json", env=env)
    rows = json.loads(r.stdout)
    assert rows[0]["key"] == KEY and rows[0]["session_id"] == out["session_id"]
    assert rows[0]["counters"]["input"] == 11 and rows[0]["counters"]["cache_read"] == 3
    r = neotask("transcript", KEY, "--json")
    evs = json.loads(r.stdout)
    assert [e["type"] for e in evs] == ["session", "message", "message"]


def test_user_errors_exit_2_with_one_line() -> None:
    for args in (("sessions", "show", "agent:../../etc"), ("send", "x", "--session", "nope"),
                 ("sessions", "bogus"), ("transcript", "no-such-session")):
        r = neotask(*args, env={"NEOTASK_PROVIDER": "scripted"})
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_bad_config_names_the_line(neotask_home: Path) -> None:
    cfg = neotask_home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("[session]\ndaily_reset_hour = 4\nidle_reset_minutes = \"soon\"\n")
    r = neotask("sessions", "list")
    assert r.returncode == 2 and "config.toml:3" in r.stderr and "idle_reset_minutes" in r.stderr


def test_doctor_reports_and_fixes_torn_line(neotask_home: Path) -> None:
    env = {"NEOTASK_PROVIDER": "scripted"}
    assert neotask("send", "hi", env=env).returncode == 0
    sid = json.loads(neotask("sessions", "list", "--json").stdout)[0]["session_id"]
    t = neotask_home / "data" / "sessions" / f"{sid}.jsonl"
    with open(t, "ab") as f:
        f.write(b'{"id": 99, "type": "mess')
    r = neotask("doctor", "--json", env=env)
    rep = json.loads(r.stdout)
    assert r.returncode == 1 and not rep["clean"] and any("torn" in p for p in rep["problems"])
    r = neotask("doctor", "--fix", "--json", env=env)
    assert json.loads(r.stdout)["fixed"]
    r = neotask("doctor", "--json", env=env)
    assert r.returncode == 0 and json.loads(r.stdout)["clean"]


def test_transcript_of_a_key_without_a_session_is_an_error(neotask_home: Path) -> None:
    r = neotask("transcript", "agent:main:tui:nobody-here", env={"NEOTASK_PROVIDER": "scripted"})
    assert r.returncode == 2 and r.stderr.strip() == "neotask: error: no session for agent:main:tui:nobody-here"
    r = neotask("transcript", "agent:main:tui:nobody-here", "--archived", env={"NEOTASK_PROVIDER": "scripted"})
    assert r.returncode == 0 and "no archived sessions for agent:main:tui:nobody-here" in r.stdout


def test_doctor_reports_settings_a_command_would_refuse(neotask_home: Path) -> None:
    cfg = neotask_home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('[general]\nagent = "../x"\ndefault_key = "agent:main:tui"\n[ui]\ntheme = "nope"\n')
    r = neotask("doctor", "--json", env={"NEOTASK_PROVIDER": "scripted"})
    rep = json.loads(r.stdout)
    assert r.returncode == 1 and not rep["clean"]
    assert [p.split(":")[1].strip() for p in rep["problems"]] == ["general.agent", "general.default_key", "ui.theme"]
    cfg.write_text('[general]\nagent = "work"\n[ui]\ntheme = "neotask-light"\n')
    assert json.loads(neotask("doctor", "--json", env={"NEOTASK_PROVIDER": "scripted"}).stdout)["clean"]
    rep = json.loads(neotask("doctor", "--json", env={"NEOTASK_PROVIDER": "scripted",
                                                      "NEOTASK_MEMORY_ENABLE": "0"}).stdout)
    assert rep["problems"] == ["env NEOTASK_MEMORY_ENABLE: read by nothing (not a setting, or one only "
                               "config.toml sets), ignored (did you mean NEOTASK_MEMORY_ENABLED?)"]


def test_an_unloadable_embedding_model_is_one_line_and_writes_nothing(neotask_home: Path) -> None:
    r = neotask("memory", "add", "the deploy target is Frankfurt",
                env={"NEOTASK_MEMORY_EMBEDDING_MODEL": "no-such/model"})
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "cannot load embedding model" in r.stderr
    assert not (neotask_home / "data" / "agents" / "main" / "MEMORY.md").exists()


def test_an_unknown_provider_name_says_where_it_was_set(neotask_home: Path) -> None:
    r = neotask("send", "hi", env={"NEOTASK_PROVIDER_NAME": "nope"})
    assert r.returncode == 2 and r.stderr.startswith("neotask: error: env NEOTASK_PROVIDER_NAME: provider.name:")
    assert len(r.stderr.strip().splitlines()) == 1
    r = neotask("send", "hi", env={"NEOTASK_PROVIDER": "nope"})
    assert r.returncode == 2 and r.stderr.startswith("neotask: error: env NEOTASK_PROVIDER: provider.name:")
    cfg = neotask_home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('[provider]\nname = "nope"\n')
    r = neotask("doctor", "--json")
    assert "config.toml:2: provider.name: unknown provider 'nope'" in r.stdout


def test_sessions_list_tells_a_corrupt_index_on_stderr(neotask_home: Path) -> None:
    """A damaged sessions.json is rebuilt from the transcripts for the listing, and said so on stderr
    (stdout stays parseable JSON); read-only, so the file is not rewritten."""
    assert neotask("send", "hi", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    index = next(neotask_home.rglob("sessions.json"))
    index.write_text("{bad")
    r = neotask("sessions", "list", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)[0]["key"] == KEY
    assert "sessions.json was corrupt" in r.stderr and "read 1 sessions from transcripts" in r.stderr
    assert index.read_text() == "{bad"


def test_doctor_reports_a_remap_that_would_never_fire(neotask_home: Path) -> None:
    """Textual ignores an unknown binding id or key name silently; doctor names each one."""
    cfg = neotask_home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('[ui]\nbindings = { compactt = "ctrl+k", sessions = "f99", retry = "ctrl+kk,f8" }\n')
    rep = json.loads(neotask("doctor", "--json", env={"NEOTASK_PROVIDER": "scripted"}).stdout)
    problems = [p for p in rep["problems"] if "ui.bindings" in p]
    assert len(problems) == 3, rep["problems"]
    assert "'compactt'" in problems[0] and "did you mean 'compact'" in problems[0]
    assert "'f99'" in problems[1] and "'ctrl+kk'" in problems[2]
    cfg.write_text('[ui]\nbindings = { compact = "ctrl+k", sessions = "f9", search_query = "question_mark" }\n')
    rep = json.loads(neotask("doctor", "--json", env={"NEOTASK_PROVIDER": "scripted"}).stdout)
    assert not [p for p in rep["problems"] if "ui.bindings" in p], rep["problems"]


def test_send_runs_a_slash_command_as_the_app_does(neotask_home: Path, tmp_path: Path) -> None:
    # `neotask send "/remember …"` remembers (it used to send the command text to the model as a message)
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "ok"}) + "\n")
    env = {"NEOTASK_PROVIDER": "scripted", "NEOTASK_SCRIPT": str(script)}
    r = neotask("send", "/remember The build host is b-07-east", env=env)
    assert r.returncode == 0, r.stderr
    assert "remembered" in r.stdout
    r = neotask("memory", "search", "build host", "--json", env=env)
    assert "b-07-east" in r.stdout
    r = neotask("transcript", KEY, "--json", env=env)
    assert "/remember" not in r.stdout  # nothing was sent to the model
    # '//' sends a message that starts with '/', as in the app
    r = neotask("send", "//usr/bin is slow", "--json", env=env)
    assert r.returncode == 0, r.stderr
    evs = json.loads(neotask("transcript", KEY, "--json", env=env).stdout)
    assert [e["content"] for e in evs if e["type"] == "message" and e["role"] == "user"] == ["/usr/bin is slow"]
    r = neotask("context", KEY, "--message", "//usr/bin is slower", "--json", env=env)  # read as `send` reads it
    assert json.loads(r.stdout)["messages"][-1]["content"] == "/usr/bin is slower"


def test_send_says_where_a_screen_command_works(neotask_home: Path, tmp_path: Path) -> None:
    r = neotask("send", "/quit", "--json")
    assert r.returncode == 2
    out = json.loads(r.stdout)
    assert out["error"] is True and out["command"] == "/quit" and "neotask chat --plain" in out["text"]
    (tmp_path / "notes.txt").write_text("some notes\n")
    r = neotask("send", f"/file {tmp_path / 'notes.txt'}")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--file PATH" in r.stderr
    r = neotask("send", "/nosuch-command")
    assert r.returncode == 2 and "unknown command /nosuch-command" in r.stderr
    # red team 28: a slash command with --file was a traceback (UnboundLocalError)
    r = neotask("send", "/remember the build host is b-07", "--file", str(tmp_path / "notes.txt"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not with a slash command" in r.stderr, r.stderr
    # red team 28: `context --message` reads a draft as `send` does
    r = neotask("context", KEY, "--message", "/remember x")
    assert r.returncode == 2 and "nothing to preview" in r.stderr
    assert neotask("sessions", "list", "--json").stdout.strip() in ("[]", "")  # no turn was taken


def test_context_of_a_draft_that_sets_state_is_what_sending_it_sends(neotask_home: Path) -> None:
    """Red team 27, F4: `neotask context --message` previewed a draft that sets a temporary
    preference and a goal without the "Current session:" block sending it adds (state 0, then 37);
    the preview writes nothing (state, transcript, inbox)."""
    env = {"NEOTASK_PROVIDER": "scripted"}
    assert neotask("send", "hello there", env=env).returncode == 0
    draft = "For the next 2 hours answer briefly. My goal is to ship v9. Remember that the staging host is st-04."
    written = [neotask(*args, "--json", env=env).stdout for args in (("state", KEY), ("transcript", KEY), ("inbox",))]
    r = neotask("context", KEY, "--message", draft, "--json", env=env)
    assert r.returncode == 0, r.stderr
    preview = json.loads(r.stdout)
    assert [neotask(*args, "--json", env=env).stdout for args in (("state", KEY), ("transcript", KEY),
                                                                  ("inbox",))] == written
    assert preview["messages"][1]["section"] == "state" and "ship v9" in preview["messages"][1]["content"]
    r = neotask("send", draft, "--json", env=env)
    assert r.returncode == 0, r.stderr
    sent = json.loads(r.stdout)["context"]
    assert (preview["ledger"]["sections"], preview["ledger"]["total"]) == (sent["sections"], sent["total"])


def test_send_says_an_automatic_reset_in_one_line(neotask_home: Path) -> None:
    env = {"NEOTASK_PROVIDER": "scripted", "NEOTASK_SESSION_DAILY_RESET_HOUR": "-1",
           "NEOTASK_SESSION_IDLE_RESET_MINUTES": "1"}
    assert neotask("send", "evening", env=env).returncode == 0
    index = paths.sessions_index()
    body = json.loads(index.read_text(encoding="utf-8"))
    old = body["sessions"][KEY]["session_id"]
    body["sessions"][KEY]["last_activity_at"] = "2020-01-01T00:00:00+00:00"  # long idle
    index.write_text(json.dumps(body), encoding="utf-8")
    r = neotask("send", "morning", env=env)
    assert r.returncode == 0, r.stderr
    new = json.loads(index.read_text(encoding="utf-8"))["sessions"][KEY]["session_id"]
    assert f"new session {new} (idle expiry); the previous one, {old}, is archived · idle for more than 1 minutes " \
           f"(`neotask sessions undo-reset {KEY}` restores it)" in r.stderr.splitlines(), r.stderr


def test_piped_sessions_list_keeps_every_row_on_one_line() -> None:
    """Piped at 80 columns, a long session key squeezed "last activity" into one character per
    line (red team 33, finding 11): a pipe gets each session on one line, nothing folded or cut."""
    env = {"NEOTASK_PROVIDER": "scripted", "COLUMNS": "80"}
    long_key = "agent:main:tui:Ab3dEf6hIj9kLm2nOp5qRs8tUvWx"
    for key in (KEY, long_key):
        assert neotask("send", "-s", key, "hi", env=env).returncode == 0
    rows = json.loads(neotask("sessions", "list", "--json", env=env).stdout)
    r = neotask("sessions", "list", env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1 + len(rows) and "last activity" in lines[0], r.stdout
    for row in rows:
        when = row["last_activity_at"][:19].replace("T", " ")
        line = next(ln for ln in lines if row["session_id"] in ln)
        assert row["key"] in line and when in line and "…" not in line, r.stdout
