"""Garbage CLI arguments, slash-command arguments and tool-call arguments are one-line errors, never
a crash: durations are capped, numeric flags take their settings' ranges, read-only commands create
nothing, a bad NEOTASK_SCRIPT is a user error, and a failing tool call is an error result.

Exit codes (README): 0 success, 2 user error (one line on stderr), 3 locked, 1 other.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from neotask_tui.commands import dispatch
from neotask_tui.engine.state.model import MAX_DURATION_DAYS, parse_duration
from tests.faults.helpers import KEY, all_transcript_events, cli, run_turn

pytestmark = pytest.mark.promise("cli_errors")

SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}
MEMORY = {**SCRIPTED, "NEOTASK_MEMORY_ENABLED": "true"}
HUGE = "99999999999d"


def _one_line_user_error(r: object) -> str:
    rc, err = r.returncode, r.stderr  # type: ignore[attr-defined]
    assert rc == 2 and "Traceback" not in err, (rc, err[-600:])
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _snapshot(root: Path) -> dict[str, str]:
    """Every file under the data dir (but the lock and the memory index cache) with its digest."""
    out: dict[str, str] = {}
    if not root.exists():
        return out
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and rel != "neotask.lock" and not rel.startswith(("lancedb", "memory")):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# ------------------------------------------------------------------------------------- durations
@pytest.mark.parametrize("text", [HUGE, f"{MAX_DURATION_DAYS + 1}d", "522w", "99999999999999999999999999s",
                                  "9" * 400 + "d", "٥d", "５d", "1_0d", "", "7", "-1d"])
def test_a_duration_beyond_the_cap_or_not_ascii_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError) as exc:
        parse_duration(text)
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 200


def test_the_cap_itself_is_a_duration() -> None:
    assert parse_duration(f"{MAX_DURATION_DAYS}d").days == MAX_DURATION_DAYS
    assert parse_duration("2h").total_seconds() == 7200


@pytest.mark.parametrize("line", [
    f"/pref x --for {HUGE}", f"/state set a b --for {HUGE}", f"/state set goal b --for {'9' * 500}w",
    f"/pref x --for {MAX_DURATION_DAYS + 1}d", "/pref x --for ٥d",
    f"/state set expires_at {HUGE}", f"/state set expires_at 'ticket_closed + {HUGE}'",
])
async def test_a_huge_duration_in_a_slash_command_is_an_inline_error(engine: object, line: str) -> None:
    await run_turn(engine, "hello", KEY)
    before = len(engine.events(KEY))  # type: ignore[attr-defined]
    res = await dispatch(engine, KEY, line)
    assert res.error and "\n" not in res.text, res.text
    assert len(engine.events(KEY)) == before  # type: ignore[attr-defined]


def test_a_huge_duration_in_the_plain_repl_is_an_inline_error(data_dir: Path) -> None:
    r = cli("chat", "--plain", env=SCRIPTED,
            stdin=f"/pref x --for {HUGE}\n/state set a b --for {HUGE}\n/pref y --for 2h\n")
    assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-800:]
    assert (r.stdout + r.stderr).count("duration too long") == 2


def _tool_script(tmp_path: Path, arguments: dict[str, object], name: str = "update_session_state") -> Path:
    p = tmp_path / "script.jsonl"
    p.write_text(json.dumps({"text": "", "tool_calls": [{"id": "c1", "name": name, "arguments": arguments}]})
                 + "\n" + json.dumps({"text": "all done"}) + "\n")
    return p


@pytest.mark.parametrize("arguments", [
    {"field": "facts", "value": "x", "ttl": HUGE},
    {"field": "current_goal", "value": "x", "ttl": "9" * 5000 + "s"},
    {"field": "temporary_preferences", "value": "x", "ttl": "٥d"},
    {"field": "expires_at", "value": HUGE},
    {"field": "expires_at", "value": f"ticket_closed + {HUGE}"},
])
def test_a_tool_call_with_a_huge_ttl_gets_an_error_result_and_the_turn_finishes(
        data_dir: Path, tmp_path: Path, arguments: dict[str, object]) -> None:
    r = cli("send", "hi", env={**SCRIPTED, "NEOTASK_SCRIPT": str(_tool_script(tmp_path, arguments))})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-800:]
    assert "all done" in r.stdout
    evs = all_transcript_events(data_dir)
    results = [e for e in evs if e.get("type") == "tool_result"]
    assert len(results) == 1 and "error" in results[0]["content"], results
    replies = [e for e in evs if e.get("type") == "message" and e.get("role") == "assistant"]
    assert replies and replies[-1]["content"] == "all done"


async def test_any_exception_in_a_tool_handler_is_an_error_result(engine: object,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The class: whatever a handler raises on bad arguments, the model gets an error result."""
    state = engine.state  # type: ignore[attr-defined]

    async def boom(key: str, call: object) -> str:
        raise OverflowError("Python int too large to convert to C int")

    monkeypatch.setattr(state, "handle_tool", boom)
    engine._provider.queue(  # type: ignore[attr-defined]
        {"text": "", "tool_calls": [{"id": "c1", "name": "update_session_state", "arguments": {"field": "x"}}]},
        {"text": "recovered"})
    evs = await run_turn(engine, "hello", KEY)
    done = [e for e in evs if type(e).__name__ == "ToolCallFinished"]
    assert done and done[0].is_error and "too large" in done[0].result
    assert next(e for e in evs if type(e).__name__ == "TurnDone").text == "recovered"


# ------------------------------------------------------------------------------ numeric CLI flags
BAD_DAYS = ["-5", "0", "36501", "999999999999", "9" * 5000, "٥", "5_0", "1.5", "inf", "x", "5e0",
            "4.9999999999999999"]


@pytest.mark.parametrize("days", BAD_DAYS, ids=[d[:14] for d in BAD_DAYS])
def test_archive_days_takes_the_cleanup_days_range(data_dir: Path, days: str) -> None:
    assert cli("send", "hello", env=SCRIPTED).returncode == 0
    before = _snapshot(data_dir)
    line = _one_line_user_error(cli("sessions", "archive", "--days", days, env=SCRIPTED))
    assert "--days" in line
    assert _snapshot(data_dir) == before
    listed = json.loads(cli("sessions", "list", "--json", env=SCRIPTED).stdout)
    assert [r["key"] for r in listed if not r["archived"]] == [KEY]


def test_archive_days_in_range_keeps_the_fresh_session(data_dir: Path) -> None:
    assert cli("send", "hello", env=SCRIPTED).returncode == 0
    r = cli("sessions", "archive", "--days", "1", "--json", env=SCRIPTED)
    assert r.returncode == 0 and json.loads(r.stdout) == [], r.stderr


async def test_engine_cleanup_refuses_days_out_of_range(engine: object) -> None:
    from neotask_tui.errors import UserError

    await run_turn(engine, "hello", KEY)
    for d in (-5, 0, 36501, 10**12):
        with pytest.raises(UserError):
            await engine.cleanup(d)  # type: ignore[attr-defined]
    assert engine.store.get(KEY) is not None  # type: ignore[attr-defined]


@pytest.mark.parametrize(("argv", "flag"), [
    (("memory", "search", "foo", "--k", "0"), "--k"),
    (("memory", "search", "foo", "--k", "1001"), "--k"),
    (("memory", "search", "foo", "--k", "99999999999999999999"), "--k"),
    (("memory", "search", "foo", "--k", "٥"), "--k"),
    (("memory", "search", "foo", "--k", "1e1"), "--k"),  # red team 30: read as 10
    (("memory", "search", "foo", "--k", "7.9999999999999999"), "--k"),
    (("inbox", "accept", "٥"), "n"),
    (("inbox", "accept", "0"), "n"),
    (("inbox", "reject", "99999999999999999999999"), "n"),
])
def test_every_numeric_flag_is_range_checked(data_dir: Path, argv: tuple[str, ...], flag: str) -> None:
    line = _one_line_user_error(cli(*argv, env=SCRIPTED))
    assert f"argument {flag}" in line, line


@pytest.mark.parametrize("n", ["²", "٥", "99999999999999999999999999"])
async def test_inbox_numbers_are_ascii_digits(engine: object, n: str) -> None:
    res = await dispatch(engine, KEY, f"/inbox accept {n}")
    assert res.error and "\n" not in res.text


# ------------------------------------------------------------------- read-only commands create nothing
UNKNOWN = "agent:zed:tui:q"
READ_ONLY = [
    ("compact", UNKNOWN, "--preview"), ("compact", UNKNOWN, "--preview", "--json"),
    ("compact", UNKNOWN, "--preview", "--rebuild"), ("compact", UNKNOWN, "--undo"),
    ("context", UNKNOWN), ("context", UNKNOWN, "--json"), ("context", UNKNOWN, "-m", "draft", "--json"),
    ("state", UNKNOWN), ("state", UNKNOWN, "--audit", "--json"), ("transcript", UNKNOWN),
    ("transcript", UNKNOWN, "--archived"), ("sessions", "show", UNKNOWN), ("inbox", "list"),
    ("--session", UNKNOWN, "inbox", "list", "--json"),
]


@pytest.mark.parametrize("argv", READ_ONLY, ids=[" ".join(a) for a in READ_ONLY])
def test_a_read_only_command_on_an_unknown_key_creates_nothing(data_dir: Path, argv: tuple[str, ...]) -> None:
    assert cli("send", "hello", env=SCRIPTED).returncode == 0
    before = _snapshot(data_dir)
    r = cli(*argv, env=SCRIPTED)
    assert r.returncode in (0, 2) and "Traceback" not in r.stderr, r.stderr[-600:]
    if r.returncode == 2:
        _one_line_user_error(r)
    assert _snapshot(data_dir) == before


# ---------------------------------------------------------------------------------- NEOTASK_SCRIPT
@pytest.mark.parametrize("case", ["missing", "directory", "bad-json", "bad-field", "not-utf8"])
def test_a_bad_script_is_a_one_line_user_error_before_anything_is_stored(
        data_dir: Path, tmp_path: Path, case: str) -> None:
    p = tmp_path / "script.jsonl"
    if case == "missing":
        p = tmp_path / "nonexistent.jsonl"
    elif case == "directory":
        p = tmp_path
    elif case == "bad-json":
        p.write_text('{"text": "ok"}\n{bad\n')
    elif case == "bad-field":
        p.write_text('{"text": "x", "delay": "abc"}\n')
    else:
        p.write_bytes(b'{"text": "\xff"}\n')
    line = _one_line_user_error(cli("send", "hi", env={**SCRIPTED, "NEOTASK_SCRIPT": str(p)}))
    assert "NEOTASK_SCRIPT" in line and str(p) in line
    assert not [e for e in all_transcript_events(data_dir) if e.get("type") == "message"]


# ------------------------------------------------------------------------ memory add --file targets
_DEEP = "memory/" + "d/" * 40 + "x.md"


@pytest.mark.parametrize("target", [
    _DEEP, "memory/" + "d/" * 33 + "x.md", "memory/notes.txt", "memory/notes", "memory/.hidden.md",
    "memory/.d/x.md", "memory/ding\x07dong.md", "memory/two\nlines.md", "memory/tab\there.md",
    "memory/x.md\n", "memory/esc\x1b[2J.md",
])
def test_memory_add_refuses_a_file_that_would_never_be_read(neotask_home: Path, target: str) -> None:
    """A target the indexer never reads (too deep, not .md, hidden) or a name with a control
    character is a one-line user error, and nothing is written."""
    line = _one_line_user_error(cli("memory", "add", "--file", target, "hello", env=MEMORY))
    assert "memory file" in line, line
    written = [p.relative_to(neotask_home).as_posix() for p in neotask_home.rglob("*")
               if p.is_file() and "/memory/" in p.as_posix() and "lancedb" not in p.as_posix()]
    assert not written, written
    assert not list(neotask_home.rglob("*.md")), list(neotask_home.rglob("*.md"))


def test_memory_add_takes_the_deepest_file_that_is_read(neotask_home: Path) -> None:
    from neotask_tui.memory.files import MAX_DEPTH

    target = "memory/" + "d/" * MAX_DEPTH + "x.md"
    r = cli("memory", "add", "--file", target, "qzxdeepest7731 hello", env=MEMORY)
    assert r.returncode == 0, r.stderr
    assert "(0 chunk(s) embedded" not in r.stdout, r.stdout
    s = cli("memory", "search", "--json", "qzxdeepest7731", env=MEMORY)
    assert s.returncode == 0 and target in s.stdout, (s.stdout, s.stderr)


# --------------------------------------------------------------------- slash-command flag values
@pytest.mark.parametrize("line", [
    "/pref x --until-event", "/pref x --for", "/pref x --for --until-event e", "/pref x --for=",
    "/pref --until-event", "/state set a b --scope", "/state set a b --until-event",
    "/state set a b --for", "/state set a b --for --scope s", "/state set a b --ttl",
    "/inbox accept 1 --scope", "/inbox accept 1 --scope --for 2h",
])
async def test_a_flag_without_its_value_is_an_inline_error(engine: object, line: str) -> None:
    await run_turn(engine, "hello", KEY)
    before = len(engine.events(KEY))  # type: ignore[attr-defined]
    res = await dispatch(engine, KEY, line)
    assert res.error and "\n" not in res.text, res.text
    assert "needs a value" in res.text, res.text
    assert len(engine.events(KEY)) == before  # type: ignore[attr-defined]
    view = await dispatch(engine, KEY, "/state")
    assert "--" not in view.text, view.text


async def test_a_flag_with_its_value_still_works(engine: object) -> None:
    await run_turn(engine, "hello", KEY)
    res = await dispatch(engine, KEY, "/pref short answers --until-event checkout_paid")
    assert not res.error and res.text == "preference until checkout_paid: short answers", res.text
