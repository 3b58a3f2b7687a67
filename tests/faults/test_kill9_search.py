"""kill -9 while the search index is written: never corrupt, never a lost or doubled message.

:mod:`tests.faults.search_kill_driver` appends messages through the real store (which keeps the
SQLite FTS5 index) in a real child process; the parent SIGKILLs it at random moments — during the
startup catch-up (some cycles delete the index first, so the kill lands in a long rebuild), between
appends, mid-append — and after every kill checks, before anything of ours opens the database,
that SQLite's own ``integrity_check`` passes (the file was never damaged, so nothing was rebuilt
from quarantine), then that every acknowledged message is found by its unique word exactly once
and the index holds exactly the messages the transcripts hold.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from neotask_tui import paths
from neotask_tui.storage.events import Event
from neotask_tui.storage.lock import DataLock
from neotask_tui.storage.search import SearchIndex
from neotask_tui.storage.transcript import read_transcript

REPO = Path(__file__).resolve().parents[2]


def _seed_unindexed(n_sessions: int, per: int) -> None:
    """Transcripts the index has never seen (as after an upgrade): the first start rebuilds."""
    paths.ensure_dir(paths.archive_dir())
    for s in range(n_sessions):
        sid = f"20260101-0000{s:02d}-seed{s:04d}"
        lines = [Event("session", 1, None, "2026-01-01T00:00:00+00:00",
                       {"session_id": sid, "key": "agent:main:tui:old", "created_at": "2026-01-01T00:00:00+00:00",
                        "reason": "new"}).to_line()]
        lines += [Event("message", i + 2, i + 1, "2026-01-01T00:00:01+00:00",
                        {"role": "user" if i % 2 else "assistant",
                         "content": f"seeded {s} {i} the staging deploy of build {i} on worker-{s}"}).to_line()
                  for i in range(per)]
        (paths.archive_dir() / f"{sid}.jsonl").write_text("".join(lines), encoding="utf-8")


def _run_child(run: int, start: int, rng: random.Random) -> list[tuple[int, str]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "tests.faults.search_kill_driver", "--run", str(run),
                             "--start", str(start)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            if raw.endswith(b"\n"):
                lines.put(raw.decode().rstrip("\n"))
        lines.put(None)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    acks: list[tuple[int, str]] = []
    plan = rng.choice(["sync", "acks", "acks"])
    want = rng.randint(1, 25)
    delay = rng.uniform(0, 0.03)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is None:
            break
        if line.startswith("ack "):
            _, step, word = line.split()
            acks.append((int(step), word))
        if (plan == "sync" and line.startswith("phase sync")) or (plan == "acks" and len(acks) >= want):
            time.sleep(delay if plan == "acks" else rng.uniform(0, 0.4))
            break
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    while True:  # acks printed before the kill landed
        try:
            line = lines.get(timeout=2)
        except queue.Empty:
            break
        if line is None:
            break
        if line.startswith("ack "):
            _, step, word = line.split()
            acks.append((int(step), word))
    t.join(timeout=5)
    return acks


def _messages_on_disk() -> int:
    n = 0
    for d in (paths.sessions_dir(), paths.archive_dir()):
        for p in d.glob("*.jsonl"):
            n += sum(1 for e in read_transcript(p, repair=False).events if e.type == "message")
    return n


def test_kill9_during_index_writes_never_corrupts_or_loses() -> None:
    rng = random.Random(21)
    _seed_unindexed(12, 150)
    acked: list[tuple[int, str]] = []
    start, kills = 1, 0
    for run in range(8):
        if run in (0, 3, 6) and paths.search_dir().exists():  # the next start rebuilds everything
            for p in paths.search_dir().iterdir():
                p.unlink()
        got = _run_child(run, start, rng)
        kills += 1
        acked += got
        start = max([s for s, _ in got], default=start) + 1
        db = paths.search_index()
        if db.exists():
            con = sqlite3.connect(db.as_uri() + "?mode=ro", uri=True)
            assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",), f"run {run}"
            con.close()
        lock = DataLock()
        lock.acquire()
        try:
            idx = SearchIndex(writable=True)
            idx.sync()
            for _, word in acked:
                assert len(idx.search(word).hits) == 1, (run, word)
            assert idx.stats()["messages"] == _messages_on_disk(), run
            idx.close()
        finally:
            lock.release()
    assert kills == 8 and len(acked) >= 20
    qdir = paths.quarantine_dir()
    assert not (qdir.exists() and any(p.name.startswith("search-index.corrupt") for p in qdir.iterdir()))
