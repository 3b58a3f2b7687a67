"""Export where the user wants: ``/export [md|jsonl] [PATH] [--lineage]`` and ``neotask transcript KEY
--format md --output PATH [--lineage]``: a session with its parent sessions, the same refusals everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from neotask_tui.commands import dispatch
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import plain_settings

KEY = "agent:main:tui:default"


async def _compacted_engine() -> tuple[Engine, str, str]:
    """An engine whose session was compacted once: (engine, parent id, current id)."""
    e = Engine(plain_settings(), provider=ScriptedProvider())
    for i in range(3):
        [x async for x in e.send(f"turn number {i} about the alpha deploy", KEY)]
    parent = e.current_record(KEY).session_id
    await e.compact(KEY)
    [x async for x in e.send("after the compaction: the beta deploy", KEY)]
    return e, parent, e.current_record(KEY).session_id


async def test_export_lineage_holds_the_parent_then_the_child(tmp_path: Path) -> None:
    e, parent, child = await _compacted_engine()
    try:
        assert parent != child and e.store.lineage(child) == ([parent, child], None)
        out = tmp_path / "all.md"
        res = await dispatch(e, KEY, f"/export {out} --lineage")
        assert not res.error, res.text
        body = out.read_text()
        assert body.index(f"# Session {parent}") < body.index(f"# Session {child}")
        assert "alpha deploy" in body and "beta deploy" in body
        assert res.data["sessions"] == [parent, child]
        # without --lineage, only the current session
        one = tmp_path / "one.jsonl"
        res = await dispatch(e, KEY, f"/export {one}")
        lines = [json.loads(x) for x in one.read_text().splitlines()]
        assert lines[0]["type"] == "session" and lines[0]["session_id"] == child
        assert [x["type"] for x in lines].count("session") == 1
        # jsonl lineage: each transcript's lines as stored, each headed by its session record
        both = tmp_path / "both.jsonl"
        await dispatch(e, KEY, f"/export jsonl {both} --lineage")
        heads = [json.loads(x)["session_id"] for x in both.read_text().splitlines()
                 if json.loads(x)["type"] == "session"]
        assert heads == [parent, child]
    finally:
        await e.aclose()


async def test_export_lineage_with_a_missing_parent_says_where_it_stops(tmp_path: Path, neotask_home: Path) -> None:
    e, parent, child = await _compacted_engine()
    try:
        for p in neotask_home.rglob(f"{parent}.jsonl"):
            p.unlink()
        e.store.drop_cache()
        res = await dispatch(e, KEY, f"/export {tmp_path} --lineage")
        assert not res.error and f"parent {parent} has no transcript" in res.text
        assert res.data["sessions"] == [child]
    finally:
        await e.aclose()


async def test_export_refusals_stay_for_lineage(tmp_path: Path, neotask_home: Path) -> None:
    e, _parent, _child = await _compacted_engine()
    try:
        for bad, why in ((tmp_path / "nope" / "x.md", "no folder"), (tmp_path / "x.pdf", "format must be")):
            res = await dispatch(e, KEY, f"/export {bad} --lineage")
            assert res.error and why in res.text
        dangling = tmp_path / "link.md"
        dangling.symlink_to(tmp_path / "missing-target.md")
        res = await dispatch(e, KEY, f"/export {dangling} --lineage")
        assert res.error and "exists" in res.text and not (tmp_path / "missing-target.md").exists()
        sessions = next(p for p in neotask_home.rglob("sessions") if p.is_dir())
        res = await dispatch(e, KEY, f"/export {sessions} --lineage")
        assert res.error and "inside Neotask's data dir" in res.text
    finally:
        await e.aclose()


def _neotask(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NEOTASK_PROVIDER="scripted")
    return subprocess.run([sys.executable, "-m", "neotask_tui", *args], capture_output=True, text=True, env=env,
                          timeout=120)


async def test_cli_transcript_format_output_and_lineage(tmp_path: Path) -> None:
    e, parent, child = await _compacted_engine()
    await e.aclose()
    out = tmp_path / "t.md"
    r = _neotask("transcript", KEY, "--format", "md", "--output", str(out), "--lineage", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["sessions"] == [parent, child] and Path(data["path"]) == out.resolve()
    assert out.read_text().index(parent) < out.read_text().index(child)
    r = _neotask("transcript", KEY, "--format", "md", "--output", str(out))  # never over an existing file
    assert r.returncode == 2 and "exists" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = _neotask("transcript", child, "--format", "jsonl", "--output", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / f"{child}.jsonl").read_text().splitlines()[0])["type"] == "session"
    r = _neotask("transcript", KEY, "--lineage", "--json")  # printed, not written
    assert r.returncode == 0 and list(json.loads(r.stdout)) == [parent, child]

