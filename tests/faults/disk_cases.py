"""Disk and OS fault cases, shared by ``test_disk_faults.py`` and ``bench/faults.py``.

Each case runs a real operation on a real engine whose data dir already holds a few turns, makes the
N-th write at the storage boundary (:data:`neotask_tui.storage.atomic.io_hooks`) fail with an
``OSError`` (ENOSPC, EIO, EDQUOT, EROFS), and checks:

- the operation fails visibly: :class:`~neotask_tui.errors.StorageError` naming the error, or a
  ``CommandResult(error=True)`` for slash commands — never a bare ``OSError`` or a silent success;
- nothing already on disk was damaged: every pre-existing file still starts with its old bytes
  (transcripts are append-only; ``sessions.json`` is either the old or a new complete version), every
  line of every file parses, no temp files are left behind, the index still points at live transcripts;
- after "space returns" (the hook is removed) a retry of the same turn works and is on disk.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neotask_tui import paths
from neotask_tui.storage import atomic

KEY = "agent:main:tui:default"
ERRNOS = {"ENOSPC": errno.ENOSPC, "EIO": errno.EIO, "EDQUOT": errno.EDQUOT, "EROFS": errno.EROFS}


@dataclass(frozen=True)
class DiskCase:
    """One fault: which operation, which write fails (1-based), with which errno."""

    op: str
    nth_write: int
    err: str

    @property
    def id(self) -> str:
        """Readable test id."""
        return f"{self.op}-w{self.nth_write}-{self.err}"


async def _op_send(engine: Any) -> Any:
    return [e async for e in engine.send("a turn while the disk is failing", KEY)]


async def _op_new(engine: Any) -> Any:
    from neotask_tui.commands import dispatch

    return await dispatch(engine, KEY, "/new")


async def _op_reset(engine: Any) -> Any:
    from neotask_tui.commands import dispatch

    return await dispatch(engine, KEY, "/reset")


async def _op_compact(engine: Any) -> Any:
    return await engine.compact(KEY)


async def _op_state(engine: Any) -> Any:
    if engine.state is None:
        return None
    return await engine.state.set_goal(KEY, "ship the fault suite")


async def _op_export(engine: Any) -> Any:
    from neotask_tui.commands import dispatch

    return await dispatch(engine, KEY, "/export jsonl")


async def _op_export_lineage(engine: Any) -> Any:
    from neotask_tui.commands import dispatch

    return await dispatch(engine, KEY, "/export md --lineage")


async def _op_send_attached(engine: Any) -> Any:
    from neotask_tui.engine.context.attachments import read_attachment

    notes = paths.data_dir().parent / "notes.txt"  # beside the data dir, not in it
    notes.write_text("the rollout is on Thursday\n")
    return [e async for e in engine.send("a turn with a file while the disk is failing", KEY,
                                         [read_attachment(str(notes))])]


OPS: dict[str, Callable[[Any], Awaitable[Any]]] = {
    "send": _op_send, "new": _op_new, "reset": _op_reset, "compact": _op_compact, "state": _op_state,
    "export": _op_export, "export_lineage": _op_export_lineage, "send_attached": _op_send_attached,
}
WRITES = {"send": 3, "new": 2, "reset": 3, "compact": 2, "state": 1, "export": 1, "export_lineage": 1,
          "send_attached": 3}


def all_cases() -> list[DiskCase]:
    """Every (operation, failing write, errno) combination."""
    return [DiskCase(op, n, err) for op, nw in WRITES.items() for n in range(1, nw + 1) for err in ERRNOS]


def _snapshot() -> dict[Path, bytes]:
    root = paths.data_dir()
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "neotask.lock"}


def check_disk(before: dict[Path, bytes]) -> list[str]:
    """Problems with the data dir compared with a snapshot taken before the fault."""
    from neotask_tui.storage.index import load_index
    from neotask_tui.storage.transcript import read_header

    bad: list[str] = []
    root = paths.data_dir()
    for p, old in before.items():
        if not p.exists():
            if p.suffix == ".jsonl" and p.parent.name == "sessions":
                arch = paths.archived_transcript_path(p.stem)
                if arch.exists() and arch.read_bytes().startswith(old):
                    continue
            if p.parent.name in ("sessions", "archive"):
                bad.append(f"{p.relative_to(root)} disappeared")
            continue
        now = p.read_bytes()
        if p.suffix == ".jsonl" and not now.startswith(old):
            bad.append(f"{p.relative_to(root)}: existing bytes changed")
    for p in root.rglob("*"):
        if p.is_file() and p.name.endswith(".tmp"):
            bad.append(f"temp file left behind: {p.relative_to(root)}")
        if p.is_file() and p.suffix in (".jsonl", ".json"):
            for n, line in enumerate(p.read_bytes().splitlines() if p.suffix == ".jsonl" else [p.read_bytes()], 1):
                try:
                    json.loads(line)
                except ValueError:
                    bad.append(f"{p.relative_to(root)} line {n} does not parse")
    for key, rec in load_index(repair=False).records.items():
        h = read_header(paths.transcript_path(rec.session_id))
        if h is None or h.data.get("key") != key:
            bad.append(f"index: {key} -> {rec.session_id} is not a live transcript")
    return bad


async def run_case(case: DiskCase) -> tuple[bool, str]:
    """Run one case on a fresh engine over the current NEOTASK_HOME; (passed, detail)."""
    from neotask_tui.commands import CommandResult
    from neotask_tui.config import load_settings
    from neotask_tui.engine.events import TurnDone
    from neotask_tui.engine.facade import Engine
    from neotask_tui.errors import StorageError
    from neotask_tui.providers.scripted import ScriptedProvider

    engine = Engine(load_settings(), provider=ScriptedProvider())
    try:
        for i in range(4):
            [e async for e in engine.send(f"warm-up turn {i} with some words to summarise later", KEY)]
        before = _snapshot()
        out_before = engine.current_record(KEY).counters.output
        seen = {"n": 0, "fired": False}

        def hook(path: Path) -> None:
            seen["n"] += 1
            if seen["n"] == case.nth_write:
                seen["fired"] = True
                raise OSError(ERRNOS[case.err], f"injected {case.err}", str(path))

        atomic.io_hooks.before_write = hook
        visible = ""
        try:
            res = await OPS[case.op](engine)
            if isinstance(res, CommandResult) and res.error:
                visible = res.text
        except StorageError as e:
            visible = str(e)
        except OSError as e:
            return False, f"bare OSError escaped: {e!r}"
        finally:
            atomic.io_hooks.before_write = None
        if not seen["fired"]:
            return True, f"only {seen['n']} write(s): the fault point was not reached (nothing to check)"
        if not visible:
            return False, f"write {case.nth_write} failed with {case.err} but the operation reported success"
        if visible and case.err not in visible and "could not" not in visible:
            return False, f"the error does not say what happened: {visible[:200]}"
        bad = check_disk(before)
        if bad:
            return False, "; ".join(bad[:5])
        # Space returns: the same kind of turn works and is on disk.
        engine.store.drop_cache()
        events = [e async for e in engine.send("retry after space returned", KEY)]
        done = [e for e in events if isinstance(e, TurnDone)]
        if not done:
            return False, "retry after the fault did not complete"
        contents = [e.content for e in engine.events(KEY) if e.type == "message"]
        if "retry after space returned" not in contents or "(scripted) retry after space returned" not in contents:
            return False, "retry not on disk"
        from neotask_tui.storage.index import load_index

        saved = load_index(repair=False).records[KEY].counters
        if saved.output < out_before:
            return False, f"token counters went backwards on disk ({out_before} -> {saved.output})"
        return True, visible[:120]
    finally:
        await engine.aclose()
