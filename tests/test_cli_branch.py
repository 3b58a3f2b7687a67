"""`neotask sessions fork`, `sessions list` with forks, `send --retry` / `--edit` (real subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KEY = "agent:main:tui:default"


def neotask(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "neotask_tui", *args], capture_output=True, text=True, env=e,
                          timeout=120)


def _script(tmp_path: Path, *replies: dict[str, object], name: str = "script") -> dict[str, str]:
    """Each process reads its script from the top: one script per call."""
    script = tmp_path / f"{name}.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in replies))
    return {"NEOTASK_PROVIDER": "scripted", "NEOTASK_SCRIPT": str(script)}


def test_send_retry_and_edit_mark_the_old_turn_and_count_every_call(tmp_path: Path) -> None:
    env = _script(tmp_path, {"text": "wrong", "usage": {"input": 10, "output": 1}}, name="one")
    assert neotask("send", "question", env=env).returncode == 0
    env = _script(tmp_path, {"text": "right", "usage": {"input": 10, "output": 1}}, name="two")
    r = neotask("send", "--retry", "--json", env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["reply"] == "right" and len(out["superseded"]) == 1
    assert out["totals"]["input"] == 20  # the superseded call was really sent
    env = _script(tmp_path, {"text": "edited answer", "usage": {"input": 12, "output": 2}}, name="three")
    r = neotask("send", "--edit", "a better question", "--json", env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["reply"] == "edited answer" and len(out["superseded"]) == 2 and out["totals"]["input"] == 32
    r = neotask("transcript", KEY)
    assert r.returncode == 0
    assert r.stdout.count("superseded") == 3 and "a better question" in r.stdout
    for args in (("send", "--retry", "text"), ("send",), ("send", "--edit")):
        r = neotask(*args, env=env)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def test_sessions_fork_and_list_show_the_branch(tmp_path: Path) -> None:
    env = {"NEOTASK_PROVIDER": "scripted"}  # an empty queue answers "(scripted) <message>"
    assert neotask("send", "one", env=env).returncode == 0
    assert neotask("send", "two", env=env).returncode == 0
    evs = json.loads(neotask("transcript", KEY, "--json").stdout)
    root = evs[0]["session_id"]
    r1 = next(e for e in evs if e.get("content") == "(scripted) one")
    r = neotask("sessions", "fork", KEY, "--at", f"e:{r1['id']}", "--json")
    assert r.returncode == 0, r.stderr
    fork = json.loads(r.stdout)
    assert fork["parent_session_id"] == root and fork["fork_at"] == r1["id"] and fork["archived"] == root
    forked = json.loads(neotask("transcript", KEY, "--json").stdout)
    assert [e.get("content") for e in forked if e["type"] == "message"] == ["one", "(scripted) one"]
    assert [e["id"] for e in forked[1:]] == [e["id"] for e in evs[1:] if e["id"] <= r1["id"]]
    rows = json.loads(neotask("sessions", "list", "--all", "--json").stdout)
    cur = next(x for x in rows if not x["archived"])
    assert cur["reason"] == "fork" and cur["parent_session_id"] == root and cur["fork_at"] == r1["id"]
    r = neotask("sessions", "list", "--all", env={"COLUMNS": "160"})
    lines = r.stdout.splitlines()
    root_line = next(i for i, line in enumerate(lines) if root in line)
    assert "└ " + fork["session_id"] in lines[root_line + 1] and f"fork at e:{r1['id']}" in lines[root_line + 1]
    # bad input: one line, exit 2, nothing written
    for at in ("e:zz", "e:999", f"e:{evs[0]['id']}"):
        r = neotask("sessions", "fork", KEY, "--at", at)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (at, r.stderr)
    assert json.loads(neotask("sessions", "show", KEY, "--json").stdout)["session_id"] == fork["session_id"]
