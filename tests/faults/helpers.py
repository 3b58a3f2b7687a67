"""Small helpers shared by the fault tests (no mocks: real files, real engine, real CLI)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
KEY = "agent:main:tui:default"

COMPACTION_TURNS = [
    "I want to fix the CSV importer in src/importer/csv_reader.py. Do not use Redis.",
    "The workspace is acme-prod and the ticket is ABC-123.",
    "We decided to split files into batches of 5000 rows.",
    "OK, go on with tests next.",
]
"""Four user turns of a coding session that a small window compacts (the compaction-usage tests)."""
COMPACTION_SUMMARY = "## Goal\n- Fix the CSV importer [e:2]\n## Constraints and rules\n- Do not use Redis [e:2]"
"""A model's summary of :data:`COMPACTION_TURNS`, citing their events."""


async def run_turn(engine: Any, text: str, key: str | None = None) -> list[Any]:
    """All events of one turn."""
    return [e async for e in engine.send(text, key)]


@contextlib.asynccontextmanager
async def scripted_engine(**env: str) -> AsyncIterator[Any]:
    """An engine on the real data dir with the scripted provider, its settings read with ``env``
    (``NEOTASK_…`` variables) set for the block; closed after."""
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        engine = Engine(load_settings(), provider=ScriptedProvider())
        try:
            yield engine
        finally:
            await engine.aclose()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def kinds(events: list[Any]) -> list[str]:
    """Event class names, in order."""
    return [type(e).__name__ for e in events]


def all_transcript_events(data_dir: Path) -> list[dict[str, Any]]:
    """Every parseable line of every transcript, live and archived."""
    out: list[dict[str, Any]] = []
    for d in ("sessions", "archive"):
        for p in sorted((data_dir / d).glob("*.jsonl")) if (data_dir / d).exists() else []:
            for line in p.read_bytes().splitlines():
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line))
    return out


def cli(*args: str, env: dict[str, str] | None = None, stdin: str | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python -m neotask_tui ARGS`` as a real subprocess with the current environment."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-m", "neotask_tui", *args], cwd=REPO, env=e, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


_HOLD = (
    "import sys\n"
    "from neotask_tui.storage.lock import DataLock\n"
    "lock = DataLock()\n"
    "lock.acquire()\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
)
"""A process that takes the data-dir lock, says ``held`` and keeps it until its stdin closes."""


@contextlib.contextmanager
def lock_holder() -> Iterator[subprocess.Popen[str]]:
    """Another process (as the app would be) holding the data-dir lock while the block runs."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLD], cwd=REPO, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    try:
        yield proc
    finally:
        proc.communicate(timeout=30)


def derived_files_containing(root: Path, needles: list[bytes], *, lower: bool = False) -> list[str]:
    """``"<file>: <needle>"`` for every needle whose raw bytes sit in a file under ``root`` other
    than a session transcript (``sessions/*.jsonl``, ``archive/*.jsonl``: the user's own record).

    Links are not followed. ``lower`` compares against the file's bytes lower-cased.
    """
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_symlink() or not p.is_file():
            continue
        rel = p.relative_to(root)
        if rel.parts[0] in ("sessions", "archive") and p.suffix == ".jsonl":
            continue
        blob = p.read_bytes()
        if lower:
            blob = blob.lower()
        out.extend(f"{rel}: {n.decode(errors='replace')}" for n in needles if n in blob)
    return out


def sqlite_rows_text(data_dir: Path) -> str:
    """Every row of every table of every SQLite file under ``data_dir`` (the search index), as text."""
    import sqlite3

    rows: list[str] = []
    for db in data_dir.rglob("*.sqlite3"):
        con = sqlite3.connect(db)
        try:
            for (name,) in con.execute("select name from sqlite_master where type='table'"):
                rows += [repr(r) for r in con.execute(f'select * from "{name}"')]
        finally:
            con.close()
    return "\n".join(rows)


def assert_redacted(text: str, secrets: list[str], kept: list[str], kind: str, markers: int) -> None:
    """``text`` redacted: each of ``secrets`` gone, ``[REDACTED:<kind>]`` there, each of ``kept``
    still as typed, and ``markers`` markers (one per value)."""
    from neotask_tui.text.secrets import redact_secrets

    out = redact_secrets(text)
    assert f"[REDACTED:{kind}]" in out, out
    for s in secrets:
        assert s not in out, out
    for words in kept:
        assert words in out, out  # the rest of the sentence stays as typed
    assert out.count("[REDACTED:") == markers, out


# The CLI in a child process whose data dir cannot be written (argv[1]: "erofs" for a read-only mount,
# anything else for a permission error): write opens fail as the kernel fails them, os.access and
# statvfs say what a user (not root) would see.
READ_ONLY_CLI = textwrap.dedent("""
    import errno, os, sys
    how = sys.argv.pop(1)
    data = os.path.join(os.environ["NEOTASK_HOME"], "data")
    code = errno.EROFS if how == "erofs" else errno.EACCES
    real_open, real_access, real_statvfs = os.open, os.access, os.statvfs
    def fake_open(path, flags, *a, **kw):  # what a read-only data dir does to a write open
        if os.fspath(path).startswith(data) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(code, os.strerror(code), os.fspath(path))
        return real_open(path, flags, *a, **kw)
    def fake_access(path, mode, *a, **kw):  # root's access check passes everywhere: say what a user sees
        if os.fspath(path).startswith(data) and mode & os.W_OK:
            return False
        return real_access(path, mode, *a, **kw)
    class Vfs:
        def __init__(self, st):
            self.st = st
        def __getattr__(self, name):
            if name == "f_flag":
                return self.st.f_flag | (os.ST_RDONLY if how == "erofs" else 0)
            return getattr(self.st, name)
    os.open, os.access = fake_open, fake_access
    os.statvfs = lambda path: Vfs(real_statvfs(path))
    from neotask_tui.cli import main
    sys.exit(main(sys.argv[1:]))
""")
