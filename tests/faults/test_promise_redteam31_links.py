"""Red team 31: links in the data dir (the input history, ``sessions.json``) and what `doctor`
says about them, about memory files it does not index and about loose modes."""

from __future__ import annotations

import json
import os
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


# --------------------------------------------------------------------------- doctor's warnings
_GHP = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
_PASS = "Hunter2Secret!x"


def _memory_dir(home: Path) -> Path:
    """The main agent's ``memory/`` folder, made as Neotask makes it (0700 down from the data dir)."""
    memory = home / "data" / "agents" / "main" / "memory"
    memory.mkdir(parents=True)
    for d in (memory, *memory.parents[:3]):
        d.chmod(0o700)
    return memory


@pytest.mark.promise("memory_files")
def test_doctor_marks_the_memory_files_it_does_not_index_as_needing_manual_action(
        neotask_home: Path, tmp_path: Path) -> None:
    # Finding 14: the "is not indexed" lines were not marked, the last line read "clean (… 5 warnings
    # above)" and --json had "manual": []. They are warnings (the integrity verdict stays clean, exit 0)
    # that --fix never changes: each is marked, counted in the last line and listed in `manual`.
    _said_hello = neotask("send", "hello", env=_SCRIPTED)
    assert _said_hello.returncode == 0, _said_hello.stderr
    memory = _memory_dir(neotask_home)
    (tmp_path / "t.md").write_text("elsewhere\n")
    (memory / "link.md").symlink_to(tmp_path / "t.md")
    (tmp_path / "h.md").write_text("two names\n")
    os.link(tmp_path / "h.md", memory / "hard.md")
    os.mkfifo(memory / "fifo.md", 0o600)
    (memory / "ding\x07dong.md").write_text("x\n")
    for p in (memory / "ding\x07dong.md", tmp_path / "h.md"):
        p.chmod(0o600)
    rep = json.loads(neotask("doctor", "--json", env=_SCRIPTED).stdout)
    assert rep["clean"] and len(rep["memory_skipped"]) == 4, rep
    assert set(rep["memory_skipped"]) <= set(rep["manual"]) and rep["fixable"] == 0, rep
    d = neotask("doctor", env=_SCRIPTED)
    assert d.returncode == 0, d.stdout
    lines = d.stdout.strip().splitlines()
    told = [line for line in lines if line.startswith("memory main/")]
    assert len(told) == 4 and all(line.endswith("— needs manual action (--fix does not change it)")
                                  for line in told), d.stdout
    assert lines[-1] == "clean (transcripts and index; 4 warnings above, 4 need manual action)", d.stdout
    assert neotask("doctor", "--fix", env=_SCRIPTED).returncode == 0  # warnings: nothing for --fix, no failure


@pytest.mark.promise("secrets")
def test_doctor_permission_lines_redact_a_secret_in_a_file_name(neotask_home: Path) -> None:
    # Finding 11: "permissions …/memory/ghp_….md is 0o644" and "…/pass=Hunter2Secret!x.md" showed the
    # secret, while the "is not indexed" line about the same file was redacted.
    memory = _memory_dir(neotask_home)
    for name in (f"{_GHP}\x01.md", f"pass={_PASS}.md"):
        (memory / name).write_text("x\n")
        (memory / name).chmod(0o644)
    d = neotask("doctor", env=_SCRIPTED)
    j = neotask("doctor", "--json", env=_SCRIPTED)
    for out in (d.stdout, j.stdout):
        assert _GHP not in out and _PASS not in out and _GHP[4:20] not in out, out
    assert "memory/[REDACTED:github_token]␁.md is 0o644, want 0o600" in d.stdout, d.stdout
    assert "memory/pass=[REDACTED:password].md is 0o644, want 0o600" in d.stdout, d.stdout
    rep = json.loads(j.stdout)
    assert any(line.endswith("memory/[REDACTED:github_token]\x01.md is 0o644, want 0o600")
               for line in rep["permissions"]), rep["permissions"]
    fixed = neotask("doctor", "--fix", "--json", env=_SCRIPTED).stdout  # what it made private: named the same way
    assert "[REDACTED:password].md is 0o644, want 0o600 (now private)" in fixed and _PASS not in fixed, fixed


@pytest.mark.promise("terminal")
def test_doctor_json_keeps_a_control_character_in_a_name_exact(neotask_home: Path) -> None:
    # Finding 12: `doctor --json` held "evil␛]0;T␇.md" (U+241B, U+2407), not the name's own characters.
    memory = _memory_dir(neotask_home)
    name = "evil\x1b]0;T\x07.md"
    (memory / name).write_text("x\n")
    (memory / name).chmod(0o644)
    j = neotask("doctor", "--json", env=_SCRIPTED)
    assert "\x1b" not in j.stdout and "\x07" not in j.stdout, j.stdout  # escaped, never raw
    assert "evil\\u001b]0;T\\u0007.md" in j.stdout and "␛" not in j.stdout, j.stdout
    rep = json.loads(j.stdout)
    assert f"main/memory/{name} is not indexed: a control character in its name" in rep["memory_skipped"], rep
    assert any(line.endswith(f"memory/{name} is 0o644, want 0o600") for line in rep["permissions"]), rep
    d = neotask("doctor", env=_SCRIPTED)  # the text report stays inert
    assert "\x1b" not in d.stdout and "\x07" not in d.stdout and "evil␛]0;T␇.md is not indexed" in d.stdout, d.stdout


# --------------------------------------------------------------------------- wording (finding 16)
@pytest.mark.promise("cli_errors")
def test_a_limit_out_of_range_is_quoted_as_written_and_a_long_one_is_cut(neotask_home: Path) -> None:
    # `--limit 99999999999999999999999` was quoted cut to 20 digits; 5,000 digits gave Python's own
    # "Exceeds the limit (4300 digits)" error.
    r = neotask("search", "x", "--limit", "9" * 23)
    assert r.returncode == 2 and r.stderr.strip() == (
        f"neotask: error: --limit takes a whole number from 1 to 500, not '{'9' * 23}'"), r.stderr
    r = neotask("search", "x", "--limit", "9" * 5000)
    assert r.returncode == 2 and r.stderr.strip() == (
        f"neotask: error: --limit takes a whole number from 1 to 500, not '{'9' * 59}…"), r.stderr
    assert neotask("search", "x", "--limit", "0005").returncode == 0  # leading zeros: still 5


@pytest.mark.promise("cli_errors")
def test_an_export_folder_that_is_a_link_outside_the_data_dir_is_refused_in_its_own_words(
        neotask_home: Path, tmp_path: Path) -> None:
    # `--output ex/datalink` (a link outside the data dir, into it) said "Neotask does not follow links
    # inside its data dir": the link is not inside it.
    assert neotask("send", "hello", env=_SCRIPTED).returncode == 0
    link = tmp_path / "ex" / "datalink"
    link.parent.mkdir()
    link.symlink_to(neotask_home / "data", target_is_directory=True)
    r = neotask("transcript", "agent:main:tui:default", "--format", "md", "--output", str(link))
    assert r.returncode == 2 and r.stderr.strip() == (
        f"neotask: error: {link} is a symbolic link; Neotask does not follow it (name the folder it points to "
        "instead)"), r.stderr
    assert not list((neotask_home / "data").glob("*.md"))


@pytest.mark.promise("one_writer")
def test_the_repl_tells_a_corrupt_line_it_found_loading_the_session(neotask_home: Path) -> None:
    # README: "A torn or corrupt line is copied to quarantine/ and reported": `chat --plain` said nothing.
    assert neotask("send", "hello", env=_SCRIPTED).returncode == 0
    [transcript] = (neotask_home / "data" / "sessions").glob("*.jsonl")
    with transcript.open("ab") as f:
        f.write(b'{"broken json\n')
    r = neotask("chat", "--plain", env=_SCRIPTED, stdin="/quit\n")
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())
    assert f"notice: {transcript.name} line 4: corrupt line" in said, r.stdout
