"""Red team 34: a full disk is no damage; ``doctor`` on a search index that is a link, and on a
data dir that cannot be written.

- Finding 6: SQLite's "disk I/O error" / "database or disk is full" on a full disk quarantined the
  healthy search index and "rebuilt" an empty one. A write the file system refuses now leaves the
  index where it is, is told in one line in the words every failed write uses (``ENOSPC (No space
  left on device)``), and the next command with room catches up. A ``memory add`` whose store
  open fails for want of room leaves no empty ``lancedb/`` folders behind.
  The full disk is real to SQLite and LanceDB: ``RLIMIT_FSIZE`` in a child process makes their
  writes past the limit fail (``EFBIG``, as ``tests/faults/test_promise_redteam33_disk.py``
  does), and ``os.statvfs`` there reports no free block, as a full disk does.
- Finding 11: a search index that is a symbolic link is a ``doctor`` problem needing manual action,
  and the notice of a send beside it is whole, not cut mid-word.
- Finding 12: ``doctor`` on a data dir that cannot be written names the real provider and runs the
  read-only checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.faults.helpers import READ_ONLY_CLI, REPO, cli

SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}
MEMORY_ON = {"NEOTASK_MEMORY_ENABLED": "true"}

FULL_DISK = textwrap.dedent("""
    import os, resource, signal, sys
    limit = int(sys.argv.pop(1))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    real_statvfs = os.statvfs
    class Full:  # what a full disk says: no free block
        def __init__(self, st):
            self.st = st
        def __getattr__(self, name):
            return 0 if name in ("f_bfree", "f_bavail") else getattr(self.st, name)
    os.statvfs = lambda path: Full(real_statvfs(path))
    from neotask_tui.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def _full(limit: int, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``neotask ARGS`` in a child where no file grows past ``limit`` bytes and the disk says it is full."""
    return subprocess.run([sys.executable, "-c", FULL_DISK, str(limit), *args], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, **SCRIPTED, **(env or {})}, timeout=120)


def _index_files(data_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (data_dir / "search").iterdir() if p.name == "index.sqlite3"}


def _quarantined(data_dir: Path) -> list[str]:
    q = data_dir / "quarantine"
    return sorted(p.name for p in q.iterdir()) if q.is_dir() else []


@pytest.mark.promise("disk_full")
def test_a_search_on_a_full_disk_keeps_the_index_and_says_enospc(neotask_home: Path) -> None:
    data = neotask_home / "data"
    assert cli("send", "first message about otters", env=SCRIPTED).returncode == 0
    before = _index_files(data)
    assert before
    out = _full(2048, "search", "otters")  # opening the index makes its 32 KiB -shm file: refused
    assert out.returncode == 1, out.stderr
    lines = out.stderr.strip().splitlines()
    assert lines == ["neotask: error: could not search: the search index: ENOSPC (No space left on device)"], \
        out.stderr
    assert _quarantined(data) == [] and _index_files(data) == before  # nothing healthy was moved
    again = cli("search", "otters", env=SCRIPTED)  # room again: it works
    assert again.returncode == 0 and "first message about otters" in again.stdout, again.stderr


@pytest.mark.promise("disk_full")
def test_a_send_on_a_full_disk_tells_it_once_and_the_index_catches_up(neotask_home: Path) -> None:
    data = neotask_home / "data"
    assert cli("send", "first message about otters", env=SCRIPTED).returncode == 0
    before = _index_files(data)
    # the transcript and sessions.json (a few KiB) still fit; the index's -shm file (32 KiB) does not
    out = _full(16 * 1024, "send", "second message about beavers")
    assert out.returncode == 0, out.stderr
    said = [ln for ln in out.stderr.splitlines() if "search index" in ln]
    assert len(said) == 1, out.stderr
    assert "could not be updated: ENOSPC (No space left on device); it catches up later" in said[0], out.stderr
    assert "damaged" not in out.stderr and "rebuilt" not in out.stderr, out.stderr
    assert _quarantined(data) == [] and _index_files(data) == before
    found = cli("search", "beavers", env=SCRIPTED)
    assert found.returncode == 0 and "second message about beavers" in found.stdout, found.stderr
    assert cli("doctor", env=SCRIPTED).returncode == 0


@pytest.mark.promise("disk_full")
def test_a_memory_add_on_a_full_disk_leaves_no_empty_store_folders(neotask_home: Path) -> None:
    data = neotask_home / "data"
    assert cli("memory", "add", "first fact about otters", env=MEMORY_ON).returncode == 0  # the model is in place
    shutil.rmtree(data / "lancedb")  # a store not made yet: the full disk stops its first open
    out = _full(100, "memory", "add", "second fact about beavers", env=MEMORY_ON)
    assert out.returncode == 1, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "could not open the memory index: " in lines[0], out.stderr
    assert "MEMORY.md was not changed" in lines[0], out.stderr
    assert not (data / "lancedb").exists(), sorted(str(p) for p in (data / "lancedb").rglob("*"))
    again = cli("memory", "add", "second fact about beavers", env=MEMORY_ON)
    assert again.returncode == 0, again.stderr
    found = cli("memory", "search", "beavers", "--json", env=MEMORY_ON)
    assert found.returncode == 0 and "second fact about beavers" in found.stdout, found.stderr


def _linked_index(neotask_home: Path, tmp_path: Path) -> Path:
    assert cli("send", "hello there", env=SCRIPTED).returncode == 0
    index = neotask_home / "data" / "search" / "index.sqlite3"
    outside = tmp_path / "elsewhere.sqlite3"
    index.rename(outside)
    index.symlink_to(outside)
    return index


def test_doctor_lists_a_search_index_that_is_a_link(neotask_home: Path, tmp_path: Path) -> None:
    index = _linked_index(neotask_home, tmp_path)
    for flags in ((), ("--fix",)):
        out = cli("doctor", "--json", *flags, env=SCRIPTED)
        report = json.loads(out.stdout)
        assert out.returncode == 1 and not report["clean"], out.stdout
        lines = [p for p in report["problems"] if str(index) in p]
        assert len(lines) == 1 and "symbolic link" in lines[0] and lines[0] in report["manual"], report
    assert index.is_symlink()  # not ours to remove: what it points to is the user's


def test_a_send_beside_a_linked_search_index_says_so_whole(neotask_home: Path, tmp_path: Path) -> None:
    index = _linked_index(neotask_home, tmp_path)
    out = cli("send", "second message", env=SCRIPTED)
    assert out.returncode == 0, out.stderr
    said = [ln for ln in out.stderr.splitlines() if "search index" in ln]
    assert len(said) == 1, out.stderr
    assert f"{index} is a symbolic link; Neotask does not follow links inside its data dir" in said[0], said
    assert said[0].endswith("(see `neotask doctor`)"), said


def test_doctor_on_a_read_only_data_dir_names_the_provider_and_checks(neotask_home: Path) -> None:
    assert cli("send", "hello there", env=SCRIPTED).returncode == 0
    transcript = next((neotask_home / "data" / "sessions").glob("*.jsonl"))
    with transcript.open("ab") as f:  # a torn last line: the integrity check must see it
        f.write(b'{"type": "message", "ro')
    torn = transcript.read_bytes()
    for flags in ((), ("--fix",)):  # --fix can repair nothing there: it checks, and changes nothing
        out = subprocess.run([sys.executable, "-c", READ_ONLY_CLI, "erofs", "doctor", "--json", *flags], cwd=REPO,
                             capture_output=True, text=True, env={**os.environ, **SCRIPTED}, timeout=120)
        assert out.returncode == 1 and not out.stderr.strip(), out.stderr
        report = json.loads(out.stdout)
        assert report["provider"].startswith("scripted"), report["provider"]
        assert report["sessions"] == 1 and report["fixed"] == [], report
        home = [p for p in report["problems"] if "Read-only file system" in p and "NEOTASK_HOME" in p]
        assert len(home) == 1 and home[0] in report["manual"], report
        assert any(transcript.name in p for p in report["problems"]), report
    assert transcript.read_bytes() == torn
