"""``neotask search`` as a user runs it (real subprocesses, real lock, scripted provider)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from neotask_tui.storage.lock import DataLock


def neotask(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "neotask_tui", *args], capture_output=True, text=True, env=e,
                          timeout=120)


SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}


def test_search_json_text_filters_and_errors() -> None:
    assert neotask("send", "the nginx proxy on api-7 returns 502", env=SCRIPTED).returncode == 0
    assert neotask("send", "Встреча по релизу в пятницу", "--session", "agent:ops:cli:night",
                   env=SCRIPTED).returncode == 0
    assert neotask("sessions", "new", env=SCRIPTED).returncode == 0  # the first session is archived
    r = neotask("search", "nginx", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    users = [h for h in out["hits"] if h["role"] == "user"]
    assert [(h["ref"], h["archived"], h["key"]) for h in users] == [("e:2", True, "agent:main:tui:default")]
    line = users[0]["line"]
    assert [line[a:b] for a, b in users[0]["highlights"]] == ["nginx"]
    assert any(h["role"] == "assistant" for h in out["hits"])  # "(scripted) the nginx proxy…"
    r = neotask("search", "встреча", "--agent", "ops")
    assert r.returncode == 0 and "agent:ops:cli:night" in r.stdout and "e:2" in r.stdout
    assert "\x1b[" not in r.stdout  # not a terminal: no styling
    assert neotask("search", "встреча", "--agent", "main", "--json").stdout.count('"ref"') == 0
    assert json.loads(neotask("search", "nginx", "--since", "2999-01-01", "--json").stdout)["hits"] == []
    for bad in (("search", "!!!"), ("search", "x", "--since", "someday"), ("search", "x", "--limit", "0"),
                ("search", "x", "--agent", "../etc")):
        r = neotask(*bad)
        assert r.returncode == 2, (bad, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_search_works_beside_the_lock_holder_and_writes_nothing() -> None:
    assert neotask("send", "remember the lighthouse", env=SCRIPTED).returncode == 0
    lock = DataLock()
    lock.acquire()
    try:
        r = neotask("search", "lighthouse", "--json")
        assert r.returncode == 0, r.stderr
        assert [h["role"] for h in json.loads(r.stdout)["hits"]] == ["assistant", "user"]  # newest first
        r = neotask("sessions", "new")  # a writer still refuses, as before
        assert r.returncode == 3
    finally:
        lock.release()
