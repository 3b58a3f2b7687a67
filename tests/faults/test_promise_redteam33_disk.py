"""Red team 33: ``memory add`` on a full disk, a data dir that cannot be written, a bad lock file.

- A failed ``MEMORY.md`` write is one ``neotask: error: could not …: ENOSPC`` line (exit 1) and the
  file is unchanged; a failed index write keeps the entry (the memory files are the index's truth)
  with a one-line error saying it is indexed later, and what LanceDB left half-written never breaks
  the next open (a real short write: ``RLIMIT_FSIZE`` in a child process).
- A data dir that cannot be written (EROFS, EACCES: injected at ``os.open``, as root's access check
  passes everywhere) stops every writer with the ``NEOTASK_HOME`` error (exit 2), while ``search``,
  ``memory search`` and ``compact --preview`` answer read-only and ``doctor`` names the cause.
- A lock file that is a folder, FIFO or link is a ``doctor`` problem needing manual action.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.faults.helpers import READ_ONLY_CLI, REPO, cli

MEMORY_ON = {"NEOTASK_MEMORY_ENABLED": "true"}

FULL_MEMORY_FILE = textwrap.dedent("""
    import errno, sys
    from neotask_tui.storage import atomic
    def hook(path):
        if path.name == "MEMORY.md":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
    atomic.io_hooks.before_write = hook
    from neotask_tui.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def _one_error_line(stderr: str, *parts: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0].startswith("neotask: error: could not "), stderr
    for p in parts:
        assert p in lines[0], stderr
    return lines[0]


def test_memory_add_on_a_full_disk_is_one_line_and_leaves_memory_md_unchanged(data_dir: Path) -> None:
    assert cli("memory", "add", "first fact about otters", env=MEMORY_ON).returncode == 0
    memory_md = data_dir / "agents" / "main" / "MEMORY.md"
    before = memory_md.read_bytes()
    out = subprocess.run([sys.executable, "-c", FULL_MEMORY_FILE, "memory", "add", "second fact about beavers"],
                         cwd=REPO, capture_output=True, text=True, env={**os.environ, **MEMORY_ON}, timeout=120)
    assert out.returncode == 1
    _one_error_line(out.stderr, "MEMORY.md", "ENOSPC", "not changed")
    assert memory_md.read_bytes() == before
    assert not [p.name for p in memory_md.parent.iterdir() if p.name.endswith(".tmp")]
    again = cli("memory", "add", "second fact about beavers", env=MEMORY_ON)
    assert again.returncode == 0, again.stderr
    assert b"second fact about beavers" in memory_md.read_bytes()


SHORT_INDEX_WRITE = textwrap.dedent("""
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    # MEMORY.md (a few hundred bytes) fits; LanceDB's new data file (several KiB) is cut short (EFBIG).
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, resource.RLIM_INFINITY))
    from neotask_tui.cli import main
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.parametrize("then", ["memory search", "memory add"])
def test_a_failed_index_write_keeps_the_entry_and_the_next_open_works(data_dir: Path, then: str) -> None:
    assert cli("memory", "add", "first fact about otters", env=MEMORY_ON).returncode == 0
    memory_md = data_dir / "agents" / "main" / "MEMORY.md"
    out = subprocess.run([sys.executable, "-c", SHORT_INDEX_WRITE, "memory", "add", "second fact about beavers"],
                         cwd=REPO, capture_output=True, text=True, env={**os.environ, **MEMORY_ON}, timeout=120)
    assert out.returncode == 1
    line = _one_error_line(out.stderr, "could not index MEMORY.md", "EFBIG", "the entry is saved",
                           "indexed at the next")
    assert "not changed" not in line
    assert "second fact about beavers" in memory_md.read_text()  # kept, as the line says
    if then == "memory search":  # brings the index up to date first
        found = cli("memory", "search", "beavers", "--json", env=MEMORY_ON)
        assert found.returncode == 0, found.stderr
        assert "second fact about beavers" in found.stdout
    else:  # retrying the same add writes no second copy and indexes it
        again = cli("memory", "add", "second fact about beavers", "--json", env=MEMORY_ON)
        assert again.returncode == 0, again.stderr
        assert memory_md.read_text().count("second fact about beavers") == 1
        assert cli("memory", "add", "third fact about herons", env=MEMORY_ON).returncode == 0
        found = cli("memory", "search", "beavers herons", "--json", env=MEMORY_ON)
        assert "second fact about beavers" in found.stdout and "third fact about herons" in found.stdout


def _read_only(how: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", READ_ONLY_CLI, how, *args], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, **MEMORY_ON, "NEOTASK_PROVIDER": "scripted"}, timeout=120)


@pytest.mark.parametrize(("how", "why"), [("erofs", "Read-only file system"), ("eacces", "Permission denied")])
def test_a_data_dir_that_cannot_be_written(how: str, why: str, neotask_home: Path) -> None:
    assert cli("send", "a note about otters", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    assert cli("memory", "add", "otters hold hands while they sleep", env=MEMORY_ON).returncode == 0
    for writing in (["send", "hello"], ["memory", "add", "beavers build dams"], ["sessions", "new"]):
        out = _read_only(how, *writing)
        assert out.returncode == 2, (writing, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("neotask: error: "), out.stderr
        assert f"NEOTASK_HOME={neotask_home}" in lines[0] and why in lines[0] and "lock file" not in lines[0]
    found = _read_only(how, "search", "otters")  # read-only commands keep working without the lock
    assert found.returncode == 0 and "a note about otters" in found.stdout, found.stderr
    found = _read_only(how, "memory", "search", "otters", "--json")
    assert found.returncode == 0 and "otters hold hands" in found.stdout, found.stderr
    preview = _read_only(how, "compact", "--preview", "--json")  # drafted read-only, as beside a lock holder
    assert preview.returncode == 0, preview.stderr
    draft = json.loads(preview.stdout)
    assert draft["model"] == "extractive" and "cannot be written" in draft["summarizer_note"]
    doctor = _read_only(how, "doctor")
    assert doctor.returncode != 0
    assert f"cannot use {neotask_home / 'data'} ({why})" in doctor.stdout, doctor.stdout


@pytest.mark.parametrize("what", ["folder", "fifo", "symlink", "hard link"])
def test_doctor_names_a_lock_file_every_writer_refuses(what: str, data_dir: Path, tmp_path: Path) -> None:
    """A lock file that is a folder, FIFO, symbolic or hard link blocks every write: ``doctor`` lists
    it as needing manual action and exits 1, and suggests no ``--fix`` (which refuses it too)."""
    assert cli("send", "hi", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    lock = data_dir / "neotask.lock"
    lock.unlink()
    if what == "folder":
        lock.mkdir(mode=0o755)
    elif what == "fifo":
        os.mkfifo(lock, 0o644)
    elif what == "symlink":
        lock.symlink_to(tmp_path / "elsewhere")
    else:
        (tmp_path / "other-name").write_text("")
        os.link(tmp_path / "other-name", lock)
    out = cli("doctor")
    assert out.returncode == 1, out.stdout
    lines = [ln for ln in out.stdout.splitlines() if str(lock) in ln]
    assert len(lines) == 1, out.stdout  # the lock itself, and no mode line for it
    assert lines[0].startswith("✗") and "needs manual action" in lines[0] and "--fix`" not in lines[0]
    assert "clean" not in out.stdout.splitlines()[-1] and "--fix`" not in out.stdout, out.stdout
    report = json.loads(cli("doctor", "--json").stdout)
    assert report["clean"] is False and report["fixable"] == 0
    assert [p for p in report["manual"] if str(lock) in p] == [p for p in report["problems"] if str(lock) in p]
    sent = cli("send", "x", env={"NEOTASK_PROVIDER": "scripted"})
    assert sent.returncode != 0 and str(lock) in sent.stderr  # what doctor said: every write is refused


def test_a_full_disk_when_the_memory_store_opens_is_no_damage(data_dir: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """LanceDB failing for want of room while the store opens is reported, and the store is not
    moved to quarantine/ as damaged (it is whole: only the write failed)."""
    from neotask_tui.config import load_settings
    from neotask_tui.errors import StorageError
    from neotask_tui.memory.index import store as store_mod
    from neotask_tui.memory.service import MemoryService

    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    svc = MemoryService(load_settings().memory)
    svc.add("main", "otters hold hands while they sleep")
    svc.close()
    memory_md = data_dir / "agents" / "main" / "MEMORY.md"
    before = memory_md.read_bytes()

    def full(self: object, *a: object, **kw: object) -> None:
        raise RuntimeError("lance error: LanceError(IO): No space left on device (os error 28), commit.rs:1663:50")

    with monkeypatch.context() as m:
        m.setattr(store_mod.ChunkStore, "snapshot", full)
        svc = MemoryService(load_settings().memory)
        try:
            with pytest.raises(StorageError,
                               match=r"could not open the memory index: ENOSPC .*MEMORY\.md was not changed"):
                svc.add("main", "beavers build dams")
        finally:
            svc.close()
    assert memory_md.read_bytes() == before
    quarantine = data_dir / "quarantine"
    assert not quarantine.exists() or not any(quarantine.iterdir())
    svc = MemoryService(load_settings().memory)
    try:
        assert "otters hold hands" in " ".join(h.text for h in svc.search("otters", agent_id="main", k=3))
    finally:
        svc.close()


def test_memory_search_and_reindex_on_a_full_disk(data_dir: Path) -> None:
    """The commands the error above points to: on a disk still full, ``memory search`` answers from
    what the index holds (and says so in one line), ``memory reindex`` is one error line; both work
    once there is room."""
    assert cli("memory", "add", "otters hold hands while they sleep", env=MEMORY_ON).returncode == 0
    memory_md = data_dir / "agents" / "main" / "MEMORY.md"
    with memory_md.open("a") as f:  # an edit by hand: indexed at the next sync
        f.write("- pelicans fish in groups, herding the fish together\n" * 40)

    def short(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", SHORT_INDEX_WRITE, *args], cwd=REPO, capture_output=True,
                              text=True, env={**os.environ, **MEMORY_ON}, timeout=120)

    found = short("memory", "search", "otters", "--json")
    assert found.returncode == 0, found.stderr
    assert isinstance(json.loads(found.stdout), list)
    assert found.stderr.strip().splitlines() == [
        "neotask: the memory index could not be brought up to date: EFBIG (File too large); "
        "these results come from what it holds (a file it could not update is left out)"]
    again = short("memory", "reindex")
    assert again.returncode == 1
    _one_error_line(again.stderr, "could not update the memory index: EFBIG", "memory files are unchanged")
    ok = cli("memory", "reindex", env=MEMORY_ON)
    assert ok.returncode == 0, ok.stderr
    found = cli("memory", "search", "otters pelicans", "--json", env=MEMORY_ON)
    assert "pelicans fish in groups" in found.stdout and "otters hold hands" in found.stdout
