"""Red team 31: links in the data dir (the input history, ``sessions.json``) and what `doctor`
says about them, about memory files it does not index and about loose modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.helpers import cli as neotask

_SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}
_LINK = "is a symbolic link; Neotask does not follow links inside its data dir"


# --------------------------------------------------------------------------- the input history as a link
@pytest.mark.promise("one_writer")
def test_the_repl_runs_beside_a_history_that_is_a_link_and_writes_nothing_through_it(
        neotask_home: Path, tmp_path: Path) -> None:
    # Finding 4: `chat --plain` died with a traceback (ELOOP from prompt-toolkit's FileHistory).
    victim = tmp_path / "victim_history.txt"
    victim.write_text("+victim content\n")
    history = neotask_home / "data" / "history"
    history.parent.mkdir(parents=True)
    history.symlink_to(victim)
    r = neotask("chat", "--plain", env=_SCRIPTED, stdin="/goal ship it\n")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    said = "".join(r.stdout.split())  # the notice is wrapped at the console's width (in a long path too)
    notice = f"notice: {history} {_LINK}, so your input history is not saved (replace the link with a file)"
    assert "".join(notice.split()) in said and "goal:shipit" in said, r.stdout
    assert victim.read_text() == "+victim content\n" and history.is_symlink()
    d = neotask("doctor", env=_SCRIPTED)
    assert d.returncode == 1, d.stdout
    assert (f"✗ {history} {_LINK}, so your input history is not saved (replace the link with a file) — needs manual "
            "action (--fix does not change it)") in d.stdout, d.stdout
    assert d.stdout.strip().splitlines()[-1] == "problems found (1 needs manual action, marked above)", d.stdout
    assert neotask("doctor", "--fix", env=_SCRIPTED).returncode == 1  # the link stays: yours to replace
    assert victim.read_text() == "+victim content\n" and history.is_symlink()


# --------------------------------------------------------------------------- sessions.json as a link
@pytest.mark.promise("one_writer")
def test_a_sessions_index_that_is_a_link_is_refused_not_read_or_replaced(neotask_home: Path, tmp_path: Path) -> None:
    # Finding 15: `sessions list` read the link's target, and the next `send` replaced the link with a file.
    assert neotask("send", "hello base", env=_SCRIPTED).returncode == 0
    index = neotask_home / "data" / "sessions" / "sessions.json"
    victim = tmp_path / "victim_sessions.json"
    victim.write_bytes(index.read_bytes())
    index.unlink()
    index.symlink_to(victim)
    before = victim.read_bytes()
    for argv in (("sessions", "list"), ("send", "second")):
        r = neotask(*argv, env=_SCRIPTED)
        assert r.returncode == 2 and r.stderr.strip().splitlines() == [f"neotask: error: {index} {_LINK}"], r.stderr
    assert index.is_symlink() and victim.read_bytes() == before
    d = neotask("doctor", env=_SCRIPTED)
    assert d.returncode == 1 and (f"✗ {index} {_LINK}, so no session can be read or written (replace the link "
                                  "with the file) — needs manual action") in d.stdout, d.stdout
    assert "orphaned" not in d.stdout, d.stdout  # the transcripts are not orphans of an index it did not read
    assert d.stdout.strip().splitlines()[-1] == "problems found (1 needs manual action, marked above)", d.stdout
    assert neotask("doctor", "--fix", env=_SCRIPTED).returncode == 1
    assert index.is_symlink() and victim.read_bytes() == before
    assert len(list((neotask_home / "data" / "sessions").glob("*.jsonl"))) == 1  # nothing archived as an orphan
