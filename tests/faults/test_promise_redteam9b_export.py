"""Red-team round 9b (export): `/export` and `neotask transcript --output` against the README's
promises — never into the data dir except `exports/` (links and bind mounts included), never
replacing a file (the default name too, and a file that appears before the write), and lineage
never crossing into another agent's sessions.

Every test drives real components (the slash commands, the CLI, the storage boundary hook)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.commands import dispatch
from neotask_tui.engine.facade import Engine
from neotask_tui.storage import atomic
from tests.faults.helpers import KEY, cli, run_turn


async def test_export_through_an_exports_link_never_writes_into_memory(engine: Engine, data_dir: Path) -> None:
    """README, Export: "An export ... never goes into the data dir except `exports/`" and Security:
    "A symbolic link inside the data dir is never followed". With `exports/` a link to the agent's
    `memory/`, `/export md <data>/exports/x.md` writes the transcript into consented memory."""
    await run_turn(engine, "hello there", KEY)
    mem = data_dir / "agents" / "main" / "memory"
    mem.mkdir(parents=True, exist_ok=True)
    ex = paths.exports_dir()
    if ex.is_dir() and not ex.is_symlink():
        shutil.rmtree(ex)
    ex.symlink_to(mem, target_is_directory=True)
    await dispatch(engine, KEY, f"/export md {ex}/note.md")
    await dispatch(engine, KEY, f"/export md {ex}")
    assert list(mem.iterdir()) == [], "an export landed in memory/ through the exports/ link"

async def test_export_never_replaces_a_file_that_appears_before_the_write(engine: Engine, tmp_path: Path) -> None:
    """README, Export: "An export never replaces an existing file ... and is written atomically".
    A file created at the target between the existence check and the rename (the storage
    boundary hook stands in for another process) is silently replaced: the check is not the write."""
    await run_turn(engine, "hello there", KEY)
    target = tmp_path / "report.md"

    def appear(p: Path) -> None:
        if p == target and not target.exists():
            target.write_text("PRECIOUS USER FILE")

    atomic.io_hooks.before_write = appear
    await dispatch(engine, KEY, f"/export md {target}")
    atomic.io_hooks.before_write = None
    assert target.read_text() == "PRECIOUS USER FILE"

@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="bind mounts need root")
async def test_export_through_a_bind_mount_never_writes_into_sessions(engine: Engine, tmp_path: Path,
                                                                       data_dir: Path) -> None:
    """README, Export: an export "never goes into the data dir except `exports/`" (there it "would
    become something else": an orphaned transcript). The data dir mounted a second time is still the
    data dir; an export through that view lands in `sessions/`."""
    await run_turn(engine, "hello there", KEY)
    view = tmp_path / "view"
    view.mkdir()
    if subprocess.run(["mount", "--bind", str(data_dir), str(view)], capture_output=True).returncode != 0:
        pytest.skip("mount --bind not permitted here")
    try:
        await dispatch(engine, KEY, f"/export jsonl {view / 'sessions' / 'planted.jsonl'}")
    finally:
        subprocess.run(["umount", str(view)], capture_output=True)
    assert not (data_dir / "sessions" / "planted.jsonl").exists()

async def test_default_export_never_replaces_an_earlier_export(engine: Engine) -> None:
    """README, Export: "`/export` ... (default the data dir's `exports/`) ... An export never replaces
    an existing file or a dangling link". A second `/export` of the same session to the default
    folder silently overwrites the first one (the existence check is skipped for `exports/`)."""
    await run_turn(engine, "first version", KEY)
    await dispatch(engine, KEY, "/export md")
    files = list(paths.exports_dir().glob("*.md"))
    assert len(files) == 1
    files[0].write_text("MY EDITED NOTES")
    await run_turn(engine, "second version", KEY)
    await dispatch(engine, KEY, "/export md")
    assert files[0].read_text() == "MY EDITED NOTES"

async def test_default_export_never_replaces_a_dangling_link(engine: Engine, tmp_path: Path) -> None:
    """README, Export: "An export never replaces an existing file or a dangling link". A dangling link
    already sitting at `exports/<session>.md` is replaced by the default `/export`."""
    await run_turn(engine, "hello", KEY)
    sid = engine.current_record(KEY).session_id
    ex = paths.exports_dir()
    ex.mkdir(parents=True, exist_ok=True)
    link = ex / f"{sid}.md"
    link.symlink_to(tmp_path / "nowhere.md")
    await dispatch(engine, KEY, "/export md")
    assert link.is_symlink(), "the dangling link was replaced"

SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}


def _sessions() -> dict[str, str]:
    """Current session id per key."""
    return {s["key"]: s["session_id"] for s in json.loads(cli("sessions", "list", "--json", env=SCRIPTED).stdout)}


def assert_clean(env: dict[str, str]) -> None:
    assert json.loads(cli("doctor", "--json", env=env).stdout)["clean"]


def _bob_names_alice_as_parent(data_dir: Path, *, reason: str | None = None,
                               before: Callable[[dict[str, str]], None] | None = None) -> dict[str, str]:
    """One turn each for agents alice (a private plan) and bob, then bob's transcript header names
    alice's session as its parent (and ``reason``, if given): the damage the lineage must not follow.
    ``before`` runs on the undamaged data. Returns the current session id per key."""
    assert cli("send", "alice private ALPHA-PLAN", "-s", "agent:alice:tui:default", env=SCRIPTED).returncode == 0
    assert cli("send", "bob says hi", "-s", "agent:bob:tui:default", env=SCRIPTED).returncode == 0
    if before is not None:
        before(SCRIPTED)
    sid = _sessions()
    bob = data_dir / "sessions" / f"{sid['agent:bob:tui:default']}.jsonl"
    lines = bob.read_text().splitlines(keepends=True)
    head = json.loads(lines[0])
    head["parent_session_id"] = sid["agent:alice:tui:default"]
    if reason is not None:
        head["reason"] = reason
    bob.write_text(json.dumps(head) + "\n" + "".join(lines[1:]))
    return sid


def test_lineage_export_never_crosses_into_another_agents_sessions(tmp_path: Path, data_dir: Path) -> None:
    """README, Export: "`--lineage` adds the parent sessions (the ones compaction, and forks, started
    this one from)" and Agents: "One agent never sees another's state or memory". Forks refuse another
    agent's session, but lineage follows any `parent_session_id` a header names: a header pointing at
    another agent's session exports that agent's whole conversation (and `doctor` calls it clean)."""
    _bob_names_alice_as_parent(data_dir)
    env = SCRIPTED
    out = tmp_path / "bob.md"
    cli("transcript", "agent:bob:tui:default", "--format", "md", "--output", str(out), "--lineage", env=env)
    assert "ALPHA-PLAN" not in (out.read_text() if out.exists() else "")


def test_doctor_reports_a_parent_header_of_another_agent(tmp_path: Path, data_dir: Path) -> None:
    """Agents: "One agent never sees another's state or memory". A transcript header naming another
    agent's session as its parent is damage (lineage stops there): ``doctor`` reports it."""
    _bob_names_alice_as_parent(data_dir, before=assert_clean)
    env = SCRIPTED
    report = json.loads(cli("doctor", "--json", env=env).stdout)
    assert not report["clean"]
    assert any("belongs to agent alice" in p for p in report["problems"]), report["problems"]
    r = cli("transcript", "agent:bob:tui:default", "--format", "md", "--output", str(tmp_path / "b.md"),
            "--lineage", env=env)
    assert r.returncode == 0, r.stderr
    assert "another agent's session" in r.stdout + r.stderr


async def test_default_export_takes_the_next_free_name(engine: Engine) -> None:
    """README, Export: the default `/export` never replaces: a second one gets `<session>-2.md`."""
    await run_turn(engine, "hello", KEY)
    sid = engine.current_record(KEY).session_id
    first = await dispatch(engine, KEY, "/export md")
    second = await dispatch(engine, KEY, "/export md")
    assert not first.error and not second.error, (first.text, second.text)
    assert {p.name for p in paths.exports_dir().glob("*.md")} == {f"{sid}.md", f"{sid}-2.md"}
    assert second.data["path"].endswith(f"{sid}-2.md")


async def test_export_file_that_appears_before_the_write_is_a_one_line_error(engine: Engine,
                                                                              tmp_path: Path) -> None:
    """README, Export: "An export never replaces an existing file": the race is a clear error,
    and no temp file is left beside the target."""
    await run_turn(engine, "hello there", KEY)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "report.md"
    atomic.io_hooks.before_write = lambda p: target.write_text("X") if p == target else None
    res = await dispatch(engine, KEY, f"/export md {target}")
    atomic.io_hooks.before_write = None
    assert res.error and "exists" in res.text, res.text
    assert [p.name for p in out_dir.iterdir()] == ["report.md"]
    assert target.read_text() == "X"


def test_context_lineage_never_crosses_into_another_agents_sessions(data_dir: Path) -> None:
    """Agents: "One agent never sees another's state or memory". A header that says bob's session
    was compacted from alice's must not bring alice's turns into bob's lineage (what compaction,
    lineage recall and the archive read as this conversation)."""
    sid = _bob_names_alice_as_parent(data_dir, reason="compaction")
    from neotask_tui.engine.compaction.inputs import lineage_events
    from neotask_tui.storage.store import SessionStore

    store = SessionStore()
    events, sessions = lineage_events(store.events(sid["agent:bob:tui:default"]), store.events)
    assert sid["agent:alice:tui:default"] not in sessions, sessions
    assert not any("ALPHA-PLAN" in (e.content or "") for e in events)
