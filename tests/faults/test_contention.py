"""Contention: two processes on one data dir (a real turn in flight), and the lock after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.faults.helpers import KEY, REPO, cli


def _slow_script(tmp: Path) -> Path:
    script = tmp / "slow.jsonl"
    script.write_text(json.dumps({"text": "a slow reply " * 40, "delay": 0.05, "chunk_chars": 8}) + "\n")
    return script


def _start_slow_send(tmp: Path, text: str) -> subprocess.Popen[str]:
    env = {**os.environ, "NEOTASK_PROVIDER": "scripted", "NEOTASK_SCRIPT": str(_slow_script(tmp))}
    proc = subprocess.Popen([sys.executable, "-m", "neotask_tui", "send", text], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.read(6)  # the reply has started streaming: the first process holds the lock
    return proc


def test_second_writer_gets_a_clear_message_while_a_turn_is_in_flight(tmp_path: Path, data_dir: Path) -> None:
    first = _start_slow_send(tmp_path, "first process")
    try:
        second = cli("send", "second process", env={"NEOTASK_PROVIDER": "scripted"})
        assert second.returncode == 3
        assert "another neotask process" in second.stderr and f"pid {first.pid}" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1 and "Traceback" not in second.stderr
        # Read-only commands work alongside the writer.
        ro = cli("sessions", "list", "--json")
        assert ro.returncode == 0, ro.stderr
        ro = cli("doctor", "--json")
        assert ro.returncode in (0, 1) and "Traceback" not in ro.stderr
    finally:
        _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    t = cli("transcript", KEY, "--json")
    contents = [e.get("content") for e in json.loads(t.stdout) if e["type"] == "message"]
    assert contents[0] == "first process" and "second process" not in contents
    assert cli("doctor", "--json").returncode == 0


def test_sigkill_mid_turn_releases_the_lock_and_keeps_the_user_message(tmp_path: Path, data_dir: Path) -> None:
    first = _start_slow_send(tmp_path, "killed mid reply")
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    after = cli("send", "next process", "--json", env={"NEOTASK_PROVIDER": "scripted"})
    assert after.returncode == 0, after.stderr
    t = json.loads(cli("transcript", KEY, "--json").stdout)
    users = [e["content"] for e in t if e["type"] == "message" and e["role"] == "user"]
    assert users == ["killed mid reply", "next process"]
    fixed = json.loads(cli("doctor", "--fix", "--json").stdout)
    assert fixed["clean"]
    assert json.loads(cli("doctor", "--json").stdout)["clean"]


async def test_tui_refuses_a_locked_data_dir_with_a_message(tmp_path: Path, data_dir: Path) -> None:
    from neotask_tui.config import load_settings
    from neotask_tui.tui.app import make_app

    first = _start_slow_send(tmp_path, "holder")
    try:
        app = make_app(load_settings())
        async with app.run_test() as pilot:
            for _ in range(200):
                if app.startup_error is not None:
                    break
                await pilot.pause(0.05)
        assert app.startup_error is not None
        code, msg = app.startup_error
        assert code == 3 and "another neotask process" in msg and f"pid {first.pid}" in msg
    finally:
        first.communicate(timeout=120)
