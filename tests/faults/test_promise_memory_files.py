"""Promise: memory reads only the agent's own regular text files, one bad file never takes memory
down or holds a turn, a forgotten text is gone from disk, and a remote store is never destroyed.

Real LanceDB and the real bundled embedder on tmp dirs; real symlinks, FIFOs and deep folders.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from neotask_tui.config import ConfigError, load_settings

pytest.importorskip("neotask_tui.memory.service")

from neotask_tui.memory.service import TURN_INLINE_BYTES, MemoryService
from tests.faults.helpers import REPO, derived_files_containing

pytestmark = pytest.mark.promise("memory_files")

A, B = "alice", "bob"
REAL = "The espresso machine in the kitchen needs descaling every second Friday."


@pytest.fixture
def ws(svc: MemoryService) -> Path:
    w = svc.workspace(A)
    (w / "memory").mkdir(parents=True)
    (w / "memory" / "real.md").write_text(f"# Kitchen\n\n{REAL}\n")
    return w


def _texts(hits: list[Any]) -> str:
    return "\n".join(h.text for h in hits)


def _bytes_on_disk(root: Path, needle: bytes) -> list[str]:
    """Files under ``root`` whose raw bytes contain ``needle`` (session transcripts excepted)."""
    return derived_files_containing(root, [needle])


def _skipped(stats: Any) -> str:
    return "\n".join(stats.notices)


def _assert_real_note_recalled(svc: MemoryService) -> None:
    hits = svc.search("when does the espresso machine need descaling", agent_id=A, k=3)
    assert hits and "descaling" in hits[0].text, _texts(hits)


# -- 4. symlinks ---------------------------------------------------------------------------------


def _link_targets(tmp_path: Path, svc: MemoryService, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    outside = tmp_path / "outside-secret.md"
    outside.write_text("# Secret\n\nqzxoutside7731 the launch code is in the blue binder.\n")
    other = svc.workspace(B)
    other.mkdir(parents=True, exist_ok=True)
    (other / "MEMORY.md").write_text("# Memory\n\nqzxbobonly7731 bob's private note about his salary.\n")
    monkeypatch.setenv("NEOTASK_TEST_CANARY", "qzxenviron7731")
    return {"outside": outside, "other-agent": other / "MEMORY.md", "environ": Path("/proc/self/environ")}


@pytest.mark.parametrize("target", ["outside", "other-agent", "environ"])
def test_a_symlinked_memory_file_is_not_read(target: str, svc: MemoryService, ws: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    dest = _link_targets(tmp_path, svc, monkeypatch)[target]
    if not dest.exists():
        pytest.skip(f"{dest} does not exist here")
    (ws / "memory" / "link.md").symlink_to(dest)
    stats = svc.reindex(A)
    assert "memory/link.md" in _skipped(stats)
    assert "symbolic link" in _skipped(stats)
    for q in ("launch code blue binder", "bob salary private note", "qzxenviron7731 environment"):
        assert "qzx" not in _texts(svc.search(q, agent_id=A, k=5))
    _assert_real_note_recalled(svc)
    assert _bytes_on_disk(data_dir / "lancedb", b"qzx") == []
    with pytest.raises(ValueError, match="symbolic link"):
        svc.get(A, "memory/link.md")


def test_a_symlinked_memory_folder_and_memory_md_are_not_read(svc: MemoryService, ws: Path,
                                                              tmp_path: Path, data_dir: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.md").write_text("qzxfolder7731 the vault combination is 12-34-56.\n")
    (ws / "memory" / "linked").symlink_to(elsewhere, target_is_directory=True)
    (ws / "MEMORY.md").symlink_to(elsewhere / "notes.md")
    stats = svc.reindex(A)
    assert "memory/linked" in _skipped(stats) and "MEMORY.md" in _skipped(stats)
    assert "qzx" not in _texts(svc.search("vault combination", agent_id=A, k=5))
    _assert_real_note_recalled(svc)
    assert _bytes_on_disk(data_dir / "lancedb", b"qzx") == []


def test_a_skipped_entry_is_reported_once_not_on_every_scan(svc: MemoryService, ws: Path, tmp_path: Path) -> None:
    (tmp_path / "t.md").write_text("elsewhere\n")
    (ws / "memory" / "link.md").symlink_to(tmp_path / "t.md")
    first = svc.reindex(A)
    assert "memory/link.md" in _skipped(first)
    svc.search("espresso", agent_id=A, k=1)
    again = svc.reindex(A)
    assert "memory/link.md" not in _skipped(again)
    assert svc.take_notices() == []


def test_adding_to_a_symlinked_memory_md_is_refused_and_the_target_kept(svc: MemoryService, ws: Path,
                                                                       tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("do not touch\n")
    (ws / "MEMORY.md").symlink_to(target)
    with pytest.raises(ValueError, match="symbolic link"):
        svc.add(A, "a new note")
    assert target.read_text() == "do not touch\n"
    assert (ws / "MEMORY.md").is_symlink()


def test_doctor_lists_skipped_memory_files(svc: MemoryService, ws: Path, tmp_path: Path) -> None:
    from neotask_tui.cli.doctor import run_doctor

    (tmp_path / "t.md").write_text("elsewhere\n")
    (ws / "memory" / "link.md").symlink_to(tmp_path / "t.md")
    report = run_doctor()
    assert any("memory/link.md" in line and "symbolic link" in line for line in report["memory_skipped"])


# -- 9. one bad file --------------------------------------------------------------------------------


def test_fifo_and_directory_named_md_are_skipped_and_reported(svc: MemoryService, ws: Path) -> None:
    os.mkfifo(ws / "memory" / "pipe.md")
    (ws / "memory" / "folder.md").mkdir()
    stats = svc.reindex(A)
    assert "memory/pipe.md" in _skipped(stats)
    _assert_real_note_recalled(svc)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_memory_md_that_is_not_a_regular_file(kind: str, svc: MemoryService, ws: Path) -> None:
    top = ws / "MEMORY.md"
    if kind == "fifo":
        os.mkfifo(top)
        # a writer that lets a blocked reader see EOF, so today's code fails instead of hanging
        threading.Thread(target=lambda: os.close(os.open(top, os.O_WRONLY)), daemon=True).start()
    else:
        top.mkdir()
    stats = svc.reindex(A)
    assert "MEMORY.md" in _skipped(stats) and "not a regular file" in _skipped(stats)
    _assert_real_note_recalled(svc)
    with pytest.raises(ValueError, match="not a regular file"):
        svc.add(A, "a new note")
    assert stat.S_ISFIFO(top.lstat().st_mode) if kind == "fifo" else top.is_dir()
    assert svc.add(A, "the printer is on floor three", file="memory/office.md").chunk_ids


def test_latin1_memory_md_is_read_as_latin1_and_can_be_added_to(svc: MemoryService, ws: Path) -> None:
    (ws / "MEMORY.md").write_bytes("# Memory\n\nThe café in Zürich closes at 18:00 on Saturdays.\n".encode("latin-1"))
    hits = svc.search("when does the café in Zürich close", agent_id=A, k=3)
    assert "café in Zürich" in _texts(hits)
    svc.add(A, "The bakery next door opens at six.")
    text = (ws / "MEMORY.md").read_text(encoding="utf-8")
    assert "café in Zürich" in text and "bakery next door" in text


def test_a_very_deep_folder_is_skipped_and_the_rest_works(svc: MemoryService, ws: Path) -> None:
    d = ws / "memory"
    fd = os.open(d, os.O_RDONLY)
    try:  # 1,100 levels: built relative to a dir fd, the full path is longer than some tools accept
        for _ in range(1100):
            os.mkdir("d", dir_fd=fd)
            nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        wfd = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
        os.write(wfd, b"qzxdeep7731 a note at the bottom\n")
        os.close(wfd)
    finally:
        os.close(fd)
    try:
        stats = svc.reindex(A)
        assert "too deep" in _skipped(stats)
        _assert_real_note_recalled(svc)
    finally:
        _remove_chain(d, "d", 1100, "deep.md")


def _remove_chain(top: Path, name: str, depth: int, leaf: str) -> None:
    """Remove ``top/name/name/.../leaf`` bottom-up through dir fds: ``shutil.rmtree`` (and so
    pytest's clean-up of old tmp dirs) recurses once per level and fails past ~1,000 levels."""
    fds = [os.open(top, os.O_RDONLY)]
    try:
        for _ in range(depth):
            fds.append(os.open(name, os.O_RDONLY, dir_fd=fds[-1]))
        os.unlink(leaf, dir_fd=fds[-1])
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir(name, dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


def test_a_file_over_the_size_cap_is_skipped_with_a_notice(svc: MemoryService, ws: Path, data_dir: Path) -> None:
    assert load_settings().memory.max_file_bytes == 1024 * 1024
    line = "qzxhuge7731 filler line about nothing in particular\n"
    (ws / "memory" / "huge.md").write_text(line * (2 * 1024 * 1024 // len(line) + 1))
    stats = svc.reindex(A)
    assert "memory/huge.md" in _skipped(stats) and "memory.max_file_bytes" in _skipped(stats)
    _assert_real_note_recalled(svc)
    assert _bytes_on_disk(data_dir / "lancedb", b"qzxhuge7731") == []


def test_the_size_cap_is_a_setting(monkeypatch: pytest.MonkeyPatch, neotask_home: Path) -> None:
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    monkeypatch.setenv("NEOTASK_MEMORY_MAX_FILE_BYTES", "4096")
    s = MemoryService(load_settings().memory)
    try:
        w = s.workspace(A)
        (w / "memory").mkdir(parents=True)
        (w / "memory" / "real.md").write_text(f"{REAL}\n")
        (w / "memory" / "mid.md").write_text("qzxmid7731 words\n" * 600)
        stats = s.reindex(A)
        assert "memory/mid.md" in _skipped(stats)
        assert "qzx" not in _texts(s.search("qzxmid7731 words", agent_id=A, k=3))
    finally:
        s.close()
    for bad in ("0", "-1", "100", str(2**40)):
        with pytest.raises(ConfigError, match="max_file_bytes"):
            load_settings(env={"NEOTASK_MEMORY_MAX_FILE_BYTES": bad})


@pytest.mark.parametrize("blob", ["nul", "noise"])
def test_a_binary_md_is_skipped_and_does_not_outrank_notes(blob: str, svc: MemoryService, ws: Path) -> None:
    import random

    rnd = random.Random(7)
    if blob == "nul":
        data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(rnd.randrange(256) for _ in range(20000))
    else:  # no NUL byte at all, still not text
        data = bytes(rnd.randrange(1, 256) for _ in range(20000))
    (ws / "memory" / "image.md").write_bytes(data)
    stats = svc.reindex(A)
    assert "memory/image.md" in _skipped(stats) and "binary" in _skipped(stats)
    assert all(h.path != "memory/image.md" for h in svc.search("espresso descaling", agent_id=A, k=10))
    _assert_real_note_recalled(svc)


@pytest.mark.timeout(180)
def test_a_big_reindex_does_not_hold_a_recall(monkeypatch: pytest.MonkeyPatch, neotask_home: Path) -> None:
    """While a reindex of a big file is embedding (held at its progress callback), a recall answers
    from the index as it was; today it waits for the writer's lock until the reindex is done."""
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    paused, release = threading.Event(), threading.Event()
    waited: list[bool] = []

    def progress(phase: str, done: int, total: int) -> None:
        if phase.startswith("embedding memory/big.md") and not paused.is_set():
            paused.set()
            waited.append(release.wait(60))

    s = MemoryService(load_settings().memory, progress=progress)
    try:
        w = s.workspace(A)
        (w / "memory").mkdir(parents=True)
        (w / "memory" / "real.md").write_text(f"{REAL}\n")
        s.reindex(A)
        para = "qzxbig7731 paragraph {i} about the warehouse inventory and its shelving.\n\n"
        (w / "memory" / "big.md").write_text("".join(para.format(i=i) for i in range(400)))
        t = threading.Thread(target=s.reindex, args=(A,), daemon=True)
        t.start()
        assert paused.wait(120)
        hits = s.recall("espresso machine descaling", agent_id=A, budget_tokens=800, k=3)
        release.set()
        t.join(120)
        assert waited == [True], "the recall waited for the reindex to finish"
        assert "descaling" in _texts(hits)
        assert "qzxbig7731" in _texts(s.search("warehouse inventory shelving", agent_id=A, k=3))
    finally:
        release.set()
        s.close()


def test_a_recall_while_a_writer_holds_the_store_reads_what_was_indexed_before(svc: MemoryService,
                                                                              ws: Path) -> None:
    """A turn never waits for a writer at work (a big file indexed in the background): it reads the
    index as it was. "As it was" includes the rows the last sync wrote: the first recall after adding
    a big file once found nothing at all when the background job took the lock first."""
    svc.sync(A)
    held, done = threading.Event(), threading.Event()

    def writer() -> None:
        with svc.store.lock:
            held.set()
            done.wait(30)

    t = threading.Thread(target=writer)
    t.start()
    try:
        assert held.wait(30)
        hits = svc.search("espresso machine descaling", agent_id=A, k=3, sync=False)
    finally:
        done.set()
        t.join(30)
    assert "descaling" in _texts(hits)


@pytest.mark.timeout(180)
def test_the_first_recall_indexes_a_big_new_file_in_the_background(monkeypatch: pytest.MonkeyPatch,
                                                                  neotask_home: Path) -> None:
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    paused, release = threading.Event(), threading.Event()

    def progress(phase: str, done: int, total: int) -> None:
        if phase.startswith("embedding memory/big.md"):
            paused.set()
            release.wait(60)

    s = MemoryService(load_settings().memory, progress=progress)
    try:
        w = s.workspace(A)
        (w / "memory").mkdir(parents=True)
        (w / "memory" / "real.md").write_text(f"{REAL}\n")
        para = "qzxbig7731 paragraph {i} about the warehouse inventory and its shelving.\n\n"
        (w / "memory" / "big.md").write_text("".join(para.format(i=i) for i in range(1200)))
        assert (w / "memory" / "big.md").stat().st_size > TURN_INLINE_BYTES
        hits = s.recall("espresso machine descaling", agent_id=A, budget_tokens=800, k=3)
        assert "descaling" in _texts(hits)
        assert any("memory/big.md" in n and "background" in n for n in s.take_notices())
        release.set()
        s.wait_for_index()
        assert "qzxbig7731" in _texts(s.search("warehouse inventory shelving", agent_id=A, k=3))
    finally:
        release.set()
        s.close()


# -- 10. forget removes the text from disk; the store stays proportional -------------------------------


def test_forget_removes_the_text_from_every_file_under_the_data_dir(svc: MemoryService, ws: Path,
                                                                    data_dir: Path) -> None:
    for i in range(5):
        svc.add(A, f"Ordinary note number {i} about the team offsite agenda.")
    svc.add(A, "The door code of the server room is qzxforget7731.")
    svc.search("door code server room", agent_id=A, k=3)
    assert _bytes_on_disk(data_dir, b"qzxforget7731")
    rec = svc.forget(A, "door code of the server room")
    assert rec.verified
    assert _bytes_on_disk(data_dir, b"qzxforget7731") == []
    svc.reindex(A, full=True)
    assert _bytes_on_disk(data_dir, b"qzxforget7731") == []
    _assert_real_note_recalled(svc)


def _du(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def test_full_reindexes_do_not_grow_the_store(svc: MemoryService, ws: Path, data_dir: Path) -> None:
    notes = "".join(f"- Note {i}: the build server {i} runs job {i * 7} nightly.\n\n" for i in range(300))
    (ws / "memory" / "notes.md").write_text(f"# Notes\n\n{notes}")
    svc.reindex(A, full=True)
    one = _du(data_dir / "lancedb")
    for _ in range(4):
        svc.reindex(A, full=True)
    assert _du(data_dir / "lancedb") <= 2 * one, (one, _du(data_dir / "lancedb"))


# -- 11. a remote store is never dropped ------------------------------------------------------------------


def test_a_remote_store_that_fails_to_open_is_never_dropped(monkeypatch: pytest.MonkeyPatch, neotask_home: Path,
                                                           tmp_path: Path) -> None:
    from neotask_tui.errors import NeotaskError

    root = tmp_path / "remote-db"
    uri = f"file://{root}"
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    monkeypatch.setenv("NEOTASK_MEMORY_DB_URI", uri)
    s = MemoryService(load_settings().memory)
    s.add(A, "A note kept in the shared remote store.")
    s.close()
    files = sorted(p for p in root.rglob("*") if p.is_file())
    assert files
    for p in files:
        if p.suffix == ".manifest":
            p.write_bytes(b"\x00garbage\xff" * 64)
    before = {p: p.read_bytes() for p in files}
    s2 = MemoryService(load_settings().memory)
    try:
        with pytest.raises(NeotaskError) as err:
            _ = s2.store
        msg = str(err.value)
        assert uri in msg and "\n" not in msg
    finally:
        s2.close()
    assert {p: p.read_bytes() for p in files if p.exists()} == before


# -- minor: modes of everything under the data dir ------------------------------------------------------


def _modes(root: Path) -> list[str]:
    """Entries not 0700 (folders) / 0600 (files); a link's own mode means nothing (the bundled
    model's ``model.onnx`` links to the installed package)."""
    bad = []
    for p in [root, *root.rglob("*")]:
        if p.is_symlink():
            continue
        m = stat.S_IMODE(p.lstat().st_mode)
        want = 0o700 if p.is_dir() else 0o600
        if m != want:
            bad.append(f"{p.relative_to(root.parent)} is {oct(m)}, want {oct(want)}")
    return bad


def test_lancedb_files_are_private_under_a_permissive_umask(neotask_home: Path, data_dir: Path) -> None:
    code = ("import os; os.umask(0)\n"
            "from neotask_tui.config import load_settings\n"
            "from neotask_tui.memory.service import MemoryService\n"
            "s = MemoryService(load_settings().memory)\n"
            "s.add('main', 'the wifi password is on the fridge')\n"
            "s.reindex('main', full=True)\n"
            "assert s.forget('main', 'wifi password fridge').verified\n"
            "s.close()\n")
    env = {**os.environ, "NEOTASK_MEMORY_ENABLED": "true", "NEOTASK_PROVIDER": "scripted"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert (data_dir / "lancedb").is_dir()
    assert _modes(data_dir) == []


# -- F9: a hard link is not read -----------------------------------------------------------------------


def test_a_hard_linked_memory_file_is_skipped_like_a_symlink(svc: MemoryService, ws: Path, tmp_path: Path,
                                                            data_dir: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("qzxhard7731 OUTSIDEHARD the payroll export lives in the finance share.\n")
    try:
        os.link(outside, ws / "memory" / "hard.md")
        os.link(outside, ws / "MEMORY.md")
    except OSError as e:  # pragma: no cover - a filesystem without hard links
        pytest.skip(f"no hard links here: {e}")
    stats = svc.reindex(A)
    notes = _skipped(stats)
    assert "memory/hard.md" in notes and "MEMORY.md" in notes and "hard link" in notes
    assert "qzx" not in _texts(svc.search("OUTSIDEHARD payroll export finance share", agent_id=A, k=5))
    _assert_real_note_recalled(svc)
    assert _bytes_on_disk(data_dir / "lancedb", b"qzx") == []
    with pytest.raises(ValueError, match="hard link"):
        svc.get(A, "memory/hard.md")
    with pytest.raises(ValueError, match="hard link"):
        svc.add(A, "appending through a hard link would write outside")
    assert outside.read_text().startswith("qzxhard7731")
    from neotask_tui.cli.doctor import run_doctor

    assert any("memory/hard.md" in line and "hard link" in line for line in run_doctor()["memory_skipped"])


# -- F10: an existing data dir is made private by the next writer; doctor reports loose modes ----------


def _loosen(data: Path, tmp_path: Path) -> Path:
    """A data dir made by hand / an older version under umask 000; returns an outside hard-link target."""
    old = os.umask(0)
    try:
        mem = data / "agents" / "main" / "memory"
        mem.mkdir(parents=True, mode=0o777)
        (data / "sessions").mkdir(mode=0o755)
        (mem / "notes.md").write_text("# Notes\n\nThe boiler is serviced in May.\n")
        os.chmod(mem / "notes.md", 0o666)
        (data / "history").write_text("hi\n")
        os.chmod(data / "history", 0o644)
        os.chmod(data, 0o755)
        os.chmod(data / "agents", 0o755)
        outside = tmp_path / "elsewhere.txt"
        outside.write_text("not ours\n")
        os.chmod(outside, 0o644)
        os.symlink(outside, data / "link-to-outside")
    finally:
        os.umask(old)
    return outside


def test_a_writer_tightens_an_existing_loose_data_dir(neotask_home: Path, data_dir: Path, tmp_path: Path) -> None:
    outside = _loosen(data_dir, tmp_path)
    assert _modes(data_dir)
    code = ("import os; os.umask(0)\n"
            "from neotask_tui.cli import main\n"
            "raise SystemExit(main(['send', 'hi']))\n")
    env = {**os.environ, "NEOTASK_PROVIDER": "scripted"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert _modes(data_dir) == []
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # a link's target is never touched


def test_doctor_reports_loose_modes_and_fix_makes_them_private(neotask_home: Path, data_dir: Path,
                                                               tmp_path: Path) -> None:
    from neotask_tui.cli.doctor import run_doctor

    outside = _loosen(data_dir, tmp_path)
    os.link(outside, data_dir / "agents" / "main" / "memory" / "hard.md")
    report = run_doctor()
    loose = "\n".join(report["permissions"])
    for where in ("data is 0o755", "agents/main/memory is 0o777", "notes.md is 0o666", "history is 0o644",
                  "hard.md is 0o644"):
        assert where in loose, loose
    assert _modes(data_dir)  # reporting changes nothing
    fixed = run_doctor(fix=True)
    assert [line for line in fixed["permissions"]] == [
        line for line in report["permissions"] if "hard.md" in line]  # a hard link is only reported
    assert any("notes.md" in line for line in fixed["fixed"])
    os.unlink(data_dir / "agents" / "main" / "memory" / "hard.md")
    assert _modes(data_dir) == []
    assert run_doctor()["permissions"] == []
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644


@pytest.mark.parametrize("target", [
    "memory/" + "d/" * 33 + "x.md", "memory/" + "d/" * 200 + "x.md", "memory/x.txt", "memory/.x.md",
    "memory/.git/x.md", "memory/a\x07b.md", "memory/a\nb.md", "memory/a\x85b.md",
])
def test_adding_to_a_file_that_would_never_be_read_is_refused(target: str, svc: MemoryService, ws: Path) -> None:
    """``add`` never writes where the indexer does not read (MAX_DEPTH, ``.md``, hidden), nor a name
    with a control character; the refusal is one line and nothing lands on disk."""
    before = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*"))
    with pytest.raises(ValueError) as exc:
        svc.add(A, "qzxnever7731 a note", file=target)
    assert "\n" not in str(exc.value)
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*")) == before
    if target.isprintable():  # a path never indexed is refused by memory_get too
        with pytest.raises(ValueError):
            svc.get(A, target)


@pytest.mark.parametrize("name", ["evil\x1b]0;TITLE\x07name.md", "a\nb.md", "c\x85d.md", "dir\x1b[31m/x.md"])
def test_a_memory_file_with_a_control_character_in_its_name_is_never_read(
        name: str, svc: MemoryService, ws: Path) -> None:
    """Red team 21: ``memory add --file`` refused such a name as one "that would never be read", but a
    file written there by hand was read, indexed and recalled. It is skipped and listed now."""
    target = ws / "memory" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("# Evil\n\nThe qzxbanana7731 plantation note.\n")
    stats = svc.reindex(A)
    assert "a control character in its name" in _skipped(stats)
    assert all("\n" not in note for note in stats.notices)  # a name's line break forges no line (red team 22)
    assert "qzxbanana7731" not in _texts(svc.search("qzxbanana7731 plantation", agent_id=A, k=3))
    _assert_real_note_recalled(svc)


def test_adding_at_the_deepest_read_level_is_indexed(svc: MemoryService, ws: Path) -> None:
    from neotask_tui.memory.files import MAX_DEPTH

    target = "memory/" + "d/" * MAX_DEPTH + "x.md"
    rec = svc.add(A, "qzxdeepest7731 the deepest note", file=target)
    assert rec.path == target and rec.stats.chunks_embedded >= 1
    assert any(h.location.startswith(target) for h in svc.search("qzxdeepest7731", agent_id=A, k=3))
