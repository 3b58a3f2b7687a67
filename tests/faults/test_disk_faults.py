"""Disk and OS faults: ENOSPC / EIO / EDQUOT / EROFS at the storage boundary, and a real short write.

The table in :mod:`tests.faults.disk_cases` fails the N-th write of every storage-touching operation
(send, a send with an attached file, /new, /reset, /compact, a state change, /export, /export --lineage).
A real partial write is produced by the OS:
a child process with ``RLIMIT_FSIZE`` just above the transcript size gets ``EFBIG`` part-way through
an append.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.faults.disk_cases import DiskCase, all_cases, run_case
from tests.faults.helpers import KEY, REPO, cli

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_disk_fault(case: DiskCase) -> None:
    ok, detail = await run_case(case)
    assert ok, detail


FAILING_CLI = textwrap.dedent("""
    import errno, sys
    from neotask_tui.storage import atomic
    def hook(path):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))
    atomic.io_hooks.before_write = hook
    from neotask_tui.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_cli_send_on_a_full_disk_fails_visibly_and_changes_nothing(data_dir: Path) -> None:
    assert cli("send", "before", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    before = {p: p.read_bytes() for p in data_dir.rglob("*") if p.is_file() and p.name != "neotask.lock"}
    out = subprocess.run([sys.executable, "-c", FAILING_CLI, "send", "while full", "--json"], cwd=REPO,
                         capture_output=True, text=True, env={**os.environ, "NEOTASK_PROVIDER": "scripted"})
    assert out.returncode == 1
    assert "ENOSPC" in out.stderr and "Traceback" not in out.stderr
    after = {p: p.read_bytes() for p in data_dir.rglob("*") if p.is_file() and p.name != "neotask.lock"}
    assert after == before
    ok = cli("send", "after", "--json", env={"NEOTASK_PROVIDER": "scripted"})
    assert ok.returncode == 0 and json.loads(ok.stdout)["reply"] == "(scripted) after"


SHORT_WRITE = textwrap.dedent("""
    import asyncio, resource, signal, sys
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.errors import StorageError
    from neotask_tui.providers.scripted import ScriptedProvider
    from neotask_tui import paths

    async def main():
        e = Engine(load_settings(), provider=ScriptedProvider())
        [x async for x in e.send("small first turn", "KEY")]
        sid = e.store.get("KEY").session_id
        size = paths.transcript_path(sid).stat().st_size
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        # The next append can write ~100 bytes and then gets EFBIG: a genuine short write.
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, resource.RLIM_INFINITY))
        try:
            [x async for x in e.send("x" * 5000, "KEY")]
            print("no-error")
        except StorageError as err:
            print("storage-error", err)
        print("size", size, paths.transcript_path(sid).stat().st_size)
        await e.aclose()

    asyncio.run(main())
""").replace("KEY", KEY)


def test_real_short_write_is_rolled_back(data_dir: Path) -> None:
    out = subprocess.run([sys.executable, "-c", SHORT_WRITE], cwd=REPO, capture_output=True, text=True,
                         env=dict(os.environ), timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("storage-error") and "EFBIG" in lines[0]
    _, before, after = lines[1].split()
    assert before == after  # the torn part of the append was truncated away by the writer itself
    for p in (data_dir / "sessions").glob("*.jsonl"):
        for line in p.read_bytes().splitlines():
            json.loads(line)
    again = cli("send", "after the quota", "--json", env={"NEOTASK_PROVIDER": "scripted"})
    assert again.returncode == 0, again.stderr


async def test_a_failed_index_write_after_an_append_does_not_say_nothing_changed() -> None:
    """The turn's messages are appended before sessions.json is rewritten: when only the index write
    fails, the error must not tell the user that nothing changed (a retry would store the turn twice)."""
    import errno as errno_

    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.errors import StorageError
    from neotask_tui.providers.scripted import ScriptedProvider
    from neotask_tui.storage import atomic

    engine = Engine(load_settings(), provider=ScriptedProvider())
    try:
        [e async for e in engine.send("first turn", KEY)]

        def hook(path: Path) -> None:
            if path.name == "sessions.json":
                raise OSError(errno_.ENOSPC, "No space left on device", str(path))

        atomic.io_hooks.before_write = hook
        try:
            with pytest.raises(StorageError) as err:
                [e async for e in engine.send("the turn whose index write fails", KEY)]
        finally:
            atomic.io_hooks.before_write = None
        msg = str(err.value)
        assert "sessions.json" in msg and "ENOSPC" in msg and "nothing already on disk was changed" not in msg
        assert "neotask transcript" in msg and "\n" not in msg
        engine.store.drop_cache()
        contents = [e.content for e in engine.events(KEY) if e.type == "message"]
        assert "the turn whose index write fails" in contents  # what the message says is kept, is
    finally:
        await engine.aclose()
