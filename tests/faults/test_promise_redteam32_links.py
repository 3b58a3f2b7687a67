"""Red team 32, finding 7: an input ``history`` with a second name (a hard link) was written
through (the outside name got what you typed, its mode went 644 → 600) and reported nowhere.
It is treated as a ``history`` that is a symbolic link: not written, its mode not changed, a
one-line notice, and ``doctor`` lists it as needing manual action."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from neotask_tui.storage.history import append_history, history_problem
from tests.faults.helpers import cli as neotask

_SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}


def _hard_linked_history(neotask_home: Path, tmp_path: Path) -> tuple[Path, Path]:
    victim = tmp_path / "victim_hist_hl.txt"
    victim.write_text("victim\n")
    victim.chmod(0o644)
    history = neotask_home / "data" / "history"
    history.parent.mkdir(parents=True, exist_ok=True)
    os.link(victim, history)
    return history, victim


def test_append_history_refuses_a_hard_linked_file(neotask_home: Path, tmp_path: Path) -> None:
    history, victim = _hard_linked_history(neotask_home, tmp_path)
    with pytest.raises(OSError, match="hard link"):
        append_history(history, "typed line secret")
    assert victim.read_text() == "victim\n"
    assert (why := history_problem(history)) and "2 names (a hard link)" in why and "not saved" in why


@pytest.mark.promise("one_writer")
def test_the_repl_writes_nothing_through_a_hard_linked_history_and_doctor_lists_it(
        neotask_home: Path, tmp_path: Path) -> None:
    assert neotask("send", "hello", env=_SCRIPTED).returncode == 0
    history, victim = _hard_linked_history(neotask_home, tmp_path)
    r = neotask("chat", "--plain", env=_SCRIPTED, stdin="typed line secret\n")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    said = "".join(r.stdout.split())
    assert "".join(f"notice: {history} has 2 names (a hard link)".split()) in said, r.stdout
    assert victim.read_text() == "victim\n" and (victim.stat().st_mode & 0o777) == 0o644
    assert victim.stat().st_nlink == 2
    d = neotask("doctor", env=_SCRIPTED)
    assert d.returncode == 1, d.stdout
    assert f"✗ {history} has 2 names (a hard link)" in d.stdout and "needs manual action" in d.stdout, d.stdout
    assert neotask("doctor", "--fix", env=_SCRIPTED).returncode == 1
    assert victim.read_text() == "victim\n" and (victim.stat().st_mode & 0o777) == 0o644
