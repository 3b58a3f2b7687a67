"""One writer: every command that writes to the data dir takes the lock; readers keep working.

A real second process holds the lock (``DataLock`` in a child Python), the commands run as real
``python -m neotask_tui`` subprocesses, and the files on disk are checked afterwards.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.faults.helpers import KEY, cli, lock_holder

pytestmark = pytest.mark.promise("one_writer")

MEMORY_ON = {"NEOTASK_MEMORY_ENABLED": "true", "NEOTASK_MEMORY_WATCH": "false",
             "NEOTASK_PROVIDER": "scripted"}

@pytest.fixture
def holder() -> Iterator[subprocess.Popen[str]]:
    """Another process that holds the data-dir lock until the test ends."""
    with lock_holder() as proc:
        yield proc


def _seed(data_dir: Path) -> None:
    """A session, an inbox entry's worth of state and a memory entry to act on."""
    assert cli("send", "hello there", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    r = cli("memory", "add", "the build server is called hopper", env=MEMORY_ON)
    assert r.returncode == 0, r.stderr


WRITERS = [
    ("memory", "add", "a note written while the app runs"),
    ("memory", "forget", "hopper"),
    ("memory", "reindex"),
    ("memory", "reindex", "--full"),
    ("send", "a second writer"),
    ("sessions", "new", KEY),
    ("sessions", "reset", KEY),
    ("sessions", "undo-reset", KEY),
    ("sessions", "archive", "--days", "1"),
    ("sessions", "restore", "20250101-000000-00000000"),
    ("inbox", "accept", "1"),
    ("inbox", "reject", "1"),
    ("inbox", "edit", "1", "new text"),
    ("compact", KEY),
    ("doctor", "--fix"),
]

READERS = [
    ("memory", "search", "hopper"),
    ("inbox", "list"),
    ("transcript", KEY),
    ("context", KEY),
    ("state", KEY),
    ("sessions", "list"),
    ("sessions", "show", KEY),
    ("doctor",),
    ("compact", KEY, "--preview"),
]


def test_every_writer_is_refused_with_exit_3_and_every_reader_works_while_locked(
    data_dir: Path, holder: subprocess.Popen[str]
) -> None:
    # The holder took the lock on an empty data dir: a writer must be refused before it touches
    # anything, and a reader must answer (with "nothing here") instead of failing.
    memory_md = data_dir / "agents" / "main" / "MEMORY.md"
    refused: dict[str, str] = {}
    for argv in WRITERS:
        r = cli(*argv, env=MEMORY_ON)
        name = " ".join(argv[:2])
        if r.returncode != 3:
            refused[name] = f"exit {r.returncode}: {r.stderr.strip()[:200]}"
            continue
        line = r.stderr.strip()
        if not ("another neotask process" in line and f"pid {holder.pid}" in line and "\n" not in line):
            refused[name] = f"unclear message: {line[:200]}"
    assert refused == {}
    assert not memory_md.exists()  # nothing was written behind the holder's back
    for argv in READERS:
        r = cli(*argv, env=MEMORY_ON)
        assert r.returncode in (0, 1, 2), (argv, r.stderr)  # 2: "no session for ..." on the empty dir
        assert "Traceback" not in r.stderr and "another neotask process" not in r.stderr, (argv, r.stderr)
    # No reader created the memory store under the holder's lock (memory search opened, so made, it).
    assert not (data_dir / "lancedb").exists()


def test_readers_work_and_memory_writers_are_refused_on_a_seeded_data_dir(data_dir: Path) -> None:
    _seed(data_dir)
    memory_md = data_dir / "agents" / "main" / "MEMORY.md"
    before = memory_md.read_bytes()
    with lock_holder() as proc:
        for argv in (("memory", "add", "sneaky"), ("memory", "forget", "hopper")):
            r = cli(*argv, env=MEMORY_ON)
            assert r.returncode == 3 and f"pid {proc.pid}" in r.stderr, (argv, r.returncode, r.stderr)
        hits = cli("memory", "search", "build server", "--json", env=MEMORY_ON)
        assert hits.returncode == 0 and "hopper" in hits.stdout, hits.stderr
        t = cli("transcript", KEY, "--json")
        assert t.returncode == 0 and "hello there" in t.stdout
    assert memory_md.read_bytes() == before


def _adder(tag: str, n: int) -> list[tuple[str, int, str]]:
    out = []
    for i in range(n):
        text = f"entry {tag}-{i} zq{tag}{i}x"
        r = cli("memory", "add", text, env=MEMORY_ON)
        out.append((text, r.returncode, r.stderr))
    return out


def test_concurrent_memory_adders_lose_no_acknowledged_entry(data_dir: Path) -> None:
    with ThreadPoolExecutor(3) as pool:
        results = [x for fut in [pool.submit(_adder, t, 6) for t in "abc"] for x in fut.result()]
    memory_md = (data_dir / "agents" / "main" / "MEMORY.md").read_text(encoding="utf-8")
    acknowledged = [t for t, rc, _ in results if rc == 0]
    bad = [(t, rc, err[-300:]) for t, rc, err in results if rc not in (0, 3)]
    assert bad == []
    for _t, rc, err in results:
        if rc == 3:
            assert "another neotask process" in err and "Traceback" not in err
    lost = [t for t in acknowledged if t not in memory_md]
    assert acknowledged and lost == []
    # Every acknowledged entry appears exactly once: no torn or doubled rewrite.
    assert all(memory_md.count(t) == 1 for t in acknowledged)


# ------------------------------------------------------------------------------------- the lock file
def test_a_symlinked_lock_file_is_refused_and_its_target_untouched(tmp_path: Path, data_dir: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("do not overwrite me\n")
    data_dir.mkdir(parents=True)
    os.symlink(target, data_dir / "neotask.lock")
    r = cli("send", "hello", env={"NEOTASK_PROVIDER": "scripted"})
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert re.search(r"lock file .*neotask\.lock.* (symlink|not a regular file)", r.stderr), r.stderr
    assert target.read_text() == "do not overwrite me\n"


def test_a_hard_linked_lock_file_is_refused_and_its_other_name_untouched(tmp_path: Path, data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    target = data_dir / "notes.txt"  # a hard link needs the same filesystem
    target.write_text("do not truncate me\n")
    os.link(target, data_dir / "neotask.lock")
    r = cli("sessions", "new", KEY)
    assert r.returncode != 0 and "Traceback" not in r.stderr and "hard link" in r.stderr, r.stderr
    assert target.read_text() == "do not truncate me\n"


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused(data_dir: Path, kind: str) -> None:
    data_dir.mkdir(parents=True)
    lock = data_dir / "neotask.lock"
    if kind == "directory":
        lock.mkdir()
    else:
        os.mkfifo(lock)
    r = cli("memory", "add", "x", env=MEMORY_ON, timeout=60)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "not a regular file" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def _tree(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry under ``root`` (the root itself included) with its mtime, mode and bytes."""
    out = {}
    for p in [root, *sorted(root.rglob("*"))]:
        st = p.lstat()
        body = p.read_bytes() if p.is_file() and not p.is_symlink() else b""
        out[str(p.relative_to(root))] = (st.st_mtime_ns, st.st_mode, body)
    return out


def test_readers_beside_the_holder_answer_and_write_nothing_on_a_seeded_data_dir(data_dir: Path) -> None:
    """A preview of compaction and a plain doctor are read-only: they answer while the app runs (a
    preview was refused with exit 3) and change no byte, mode or mtime (doctor's write probe
    created and removed a file in the data dir)."""
    assert cli("send", "do not use Redis in the migration", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    assert cli("send", "ok, and the queue?", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    with lock_holder():
        before = _tree(data_dir)
        r = cli("compact", KEY, "--preview", "--json", env={"NEOTASK_PROVIDER": "scripted"})
        assert r.returncode == 0 and "Redis" in r.stdout, (r.returncode, r.stderr)
        d = cli("doctor", "--json")
        assert d.returncode in (0, 1) and "another neotask process" not in d.stderr, d.stderr
        assert _tree(data_dir) == before


def test_doctor_fix_beside_the_holder_writes_nothing(data_dir: Path) -> None:
    # Red team 25, F6: `doctor --fix` probed the data dir by creating (and removing) a file in it before it
    # found the lock held, so the dir changed though the command "writes nothing" and exits 3.
    _seed(data_dir)
    with lock_holder() as proc:
        before = data_dir.stat().st_mtime_ns
        r = cli("doctor", "--fix")
        assert r.returncode == 3 and f"pid {proc.pid}" in r.stderr, (r.returncode, r.stderr)
        assert data_dir.stat().st_mtime_ns == before
    assert cli("doctor", "--fix").returncode == 0  # the holder gone, it probes and fixes
