"""Corruption: a damaged sessions.json, garbage inside transcripts, a bad config.toml.

Every case damages real files on disk, then opens the real engine / runs the real CLI, and checks:
the good data is all still there, the damage is reported (never silently dropped), the damaged bytes
are kept in quarantine for inspection, and the next turn works.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from neotask_tui.cli.doctor import run_doctor
from neotask_tui.config import ConfigError, load_settings
from neotask_tui.engine.events import Notice, TurnDone
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from tests.faults.helpers import KEY, cli, run_turn

KEY_B = "agent:ops:cli:night"


def _engine() -> Engine:
    return Engine(load_settings(), provider=ScriptedProvider())


async def _seed(turns: int = 3) -> dict[str, str]:
    """Two keys with a few turns each; returns key -> session id."""
    e = _engine()
    try:
        for i in range(turns):
            await run_turn(e, f"alpha {i}", KEY)
            await run_turn(e, f"beta {i}", KEY_B)
        return {k: r.session_id for k, r in e.store.records.items()}
    finally:
        await e.aclose()


def _messages(e: Engine, key: str) -> list[str]:
    return [ev.content for ev in e.events(key) if ev.type == "message"]


# --------------------------------------------------------------------------------- sessions.json
def _truncate(p: Path) -> None:
    b = p.read_bytes()
    p.write_bytes(b[: len(b) // 2])


def _garbage(p: Path) -> None:
    p.write_bytes(bytes(range(256)) * 8)


def _empty(p: Path) -> None:
    p.write_bytes(b"")


def _delete(p: Path) -> None:
    p.unlink()


def _wrong_shape(p: Path) -> None:
    p.write_text('["not", "an", "index"]')


def _wrong_types(p: Path) -> None:
    p.write_text('{"version": 1, "sessions": {"agent:main:tui:default": 42}}')


def _missing_fields(p: Path) -> None:
    p.write_text('{"version": 1, "sessions": {"agent:main:tui:default": {"key": "agent:main:tui:default"}}}')


def _nul_bytes(p: Path) -> None:
    p.write_bytes(b"\x00" * 4096)


INDEX_DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate, "garbage": _garbage, "empty": _empty, "deleted": _delete,
    "wrong-shape": _wrong_shape, "wrong-types": _wrong_types, "missing-fields": _missing_fields,
    "nul-filled": _nul_bytes,
}


@pytest.mark.parametrize("damage", sorted(INDEX_DAMAGE))
async def test_damaged_index_is_rebuilt_from_transcripts(damage: str, data_dir: Path) -> None:
    before = await _seed()
    idx = data_dir / "sessions" / "sessions.json"
    INDEX_DAMAGE[damage](idx)

    e = _engine()
    try:
        # Same keys → same sessions; every message still there.
        assert {k: r.session_id for k, r in e.store.records.items()} == before
        assert _messages(e, KEY) == [m for i in range(3) for m in (f"alpha {i}", f"(scripted) alpha {i}")]
        assert any("rebuilt" in n for n in e.notices), e.notices
        # The damaged file was kept for inspection (unless there was nothing to keep).
        kept = list((data_dir / "quarantine").glob("sessions.json.corrupt-*"))
        assert (len(kept) == 1) == (damage != "deleted")
        # The rebuild recounted the token counters from the transcripts.
        assert e.store.records[KEY].counters.output > 0
        evs = await run_turn(e, "after the damage", KEY)
        done = [x for x in evs if isinstance(x, TurnDone)]
        assert done and done[0].session_id == before[KEY]
        assert any(isinstance(x, Notice) and "rebuilt" in x.text for x in evs)
    finally:
        await e.aclose()
    assert json.loads(idx.read_text())["sessions"][KEY]["session_id"] == before[KEY]
    assert run_doctor()["clean"]


async def test_damaged_index_reported_by_doctor_and_fixed(data_dir: Path) -> None:
    await _seed(1)
    _garbage(data_dir / "sessions" / "sessions.json")
    rep = run_doctor()
    assert not rep["clean"] and any("corrupt" in p for p in rep["problems"])
    # doctor without --fix touches nothing
    assert (data_dir / "sessions" / "sessions.json").read_bytes() == bytes(range(256)) * 8
    fixed = run_doctor(fix=True)
    assert fixed["clean"] and fixed["fixed"]
    assert run_doctor()["clean"]


async def test_index_pointing_at_missing_transcript_is_repaired(data_dir: Path) -> None:
    before = await _seed(1)
    idx = data_dir / "sessions" / "sessions.json"
    raw = json.loads(idx.read_text())
    raw["sessions"][KEY]["session_id"] = "20000101-000000-deadbeef"
    idx.write_text(json.dumps(raw))
    rep = run_doctor()
    assert not rep["clean"] and any("no live transcript" in p for p in rep["problems"])
    assert run_doctor(fix=True)["clean"]
    assert json.loads(idx.read_text())["sessions"][KEY]["session_id"] == before[KEY]
    assert run_doctor()["clean"]


# ----------------------------------------------------------------------------- transcript garbage
GARBAGE_LINES: dict[str, bytes] = {
    "binary": bytes(range(1, 10)) + b"\xff\xfe",
    "invalid-utf8": b'{"id": 99, "type": "message", "content": "\xc3\x28"}',
    "truncated-json": b'{"id": 99, "parent": 2, "ts": "2026-01-01T00:00:00+00:00", "type": "mess',
    "not-an-event": b'{"hello": "world"}',
    "unknown-type": b'{"id": 99, "parent": 2, "ts": "2026-01-01T00:00:00+00:00", "type": "rm -rf"}',
    "id-not-int": b'{"id": "1; DROP", "parent": 2, "ts": "2026-01-01T00:00:00+00:00", "type": "message"}',
    "json-array": b"[1, 2, 3]",
    "nul-bytes": b"\x00" * 64,
    "huge-number": b'{"id": 1e999, "parent": 2, "ts": "x", "type": "message"}',
    "deep-nesting": b"[" * 5000 + b"]" * 5000,
}


@pytest.mark.parametrize("name", sorted(GARBAGE_LINES))
async def test_garbage_in_the_middle_of_a_transcript(name: str, data_dir: Path) -> None:
    sids = await _seed(3)
    tp = data_dir / "sessions" / f"{sids[KEY]}.jsonl"
    lines = tp.read_bytes().split(b"\n")
    good = [ln for ln in lines if ln]
    lines.insert(3, GARBAGE_LINES[name])
    lines.insert(6, GARBAGE_LINES[name])
    tp.write_bytes(b"\n".join(lines))

    e = _engine()
    try:
        evs = e.events(KEY)
        assert len(evs) == len(good)  # every good line survives
        assert _messages(e, KEY)[-1] == "(scripted) alpha 2"
        issues = e.store.load_issues[sids[KEY]]
        assert [i.line_no for i in issues] == [4, 7] and not any(i.tail for i in issues)
        q = data_dir / "quarantine" / f"{sids[KEY]}.quarantine.jsonl"
        recs = [json.loads(x) for x in q.read_text().splitlines()]
        assert [r["line_no"] for r in recs] == [4, 7]
        last = max(ev.id for ev in evs)
        turn = await run_turn(e, "still works", KEY)
        assert any(isinstance(x, Notice) and "line 4" in x.text for x in turn)
        done = next(x for x in turn if isinstance(x, TurnDone))
        assert done.event_id == last + 2
    finally:
        await e.aclose()
    # Reopening does not quarantine the same lines twice.
    e2 = _engine()
    try:
        e2.events(KEY)
    finally:
        await e2.aclose()
    q = data_dir / "quarantine" / f"{sids[KEY]}.quarantine.jsonl"
    assert len(q.read_text().splitlines()) == 2


async def test_doctor_is_clean_after_fix_with_quarantined_middle_lines(data_dir: Path) -> None:
    """Mid-file garbage stays in the append-only file (quarantined copy kept); once it has been
    quarantined, ``doctor`` must not keep reporting the data dir as broken forever."""
    sids = await _seed(2)
    tp = data_dir / "sessions" / f"{sids[KEY]}.jsonl"
    lines = tp.read_bytes().split(b"\n")
    lines.insert(2, b"garbage garbage")
    tp.write_bytes(b"\n".join(lines))
    assert not run_doctor()["clean"]
    assert run_doctor(fix=True)["clean"]
    rep = run_doctor()
    assert rep["clean"], rep["problems"]


async def test_torn_tail_is_cut_quarantined_and_next_append_is_clean(data_dir: Path) -> None:
    sids = await _seed(2)
    tp = data_dir / "sessions" / f"{sids[KEY]}.jsonl"
    whole = tp.read_bytes()
    tp.write_bytes(whole + b'{"id": 77, "parent": 6, "ts": "2026-01-0')
    rep = run_doctor()
    assert not rep["clean"] and any("torn" in p for p in rep["problems"])
    e = _engine()
    try:
        assert len(e.events(KEY)) == len(whole.splitlines())
        await run_turn(e, "next", KEY)
    finally:
        await e.aclose()
    assert tp.read_bytes().startswith(whole)
    for line in tp.read_bytes().splitlines():
        json.loads(line)
    assert run_doctor()["clean"]


async def test_valid_last_line_without_newline_is_kept_and_finished(data_dir: Path) -> None:
    sids = await _seed(1)
    tp = data_dir / "sessions" / f"{sids[KEY]}.jsonl"
    tp.write_bytes(tp.read_bytes().rstrip(b"\n"))
    e = _engine()
    try:
        assert _messages(e, KEY) == ["alpha 0", "(scripted) alpha 0"]
        await run_turn(e, "next", KEY)
        assert _messages(e, KEY)[-1] == "(scripted) next"
    finally:
        await e.aclose()
    assert all(json.loads(x) for x in tp.read_bytes().splitlines())


async def test_garbage_header_keeps_the_rest_and_the_key_still_routes(data_dir: Path) -> None:
    sids = await _seed(2)
    tp = data_dir / "sessions" / f"{sids[KEY]}.jsonl"
    lines = tp.read_bytes().split(b"\n")
    lines[0] = b"\xde\xad\xbe\xef"
    tp.write_bytes(b"\n".join(lines))
    e = _engine()
    try:
        assert _messages(e, KEY)[:2] == ["alpha 0", "(scripted) alpha 0"]
        done = [x for x in await run_turn(e, "next", KEY) if isinstance(x, TurnDone)]
        assert done
    finally:
        await e.aclose()


async def test_deleted_live_transcript_is_reported_not_invented(data_dir: Path) -> None:
    sids = await _seed(1)
    (data_dir / "sessions" / f"{sids[KEY]}.jsonl").unlink()
    rep = run_doctor()
    assert not rep["clean"] and any("no live transcript" in p for p in rep["problems"])
    assert run_doctor(fix=True)["clean"]
    e = _engine()
    try:
        assert e.store.get(KEY_B) is not None and e.store.get(KEY_B).session_id == sids[KEY_B]  # type: ignore[union-attr]
        done = [x for x in await run_turn(e, "fresh start", KEY) if isinstance(x, TurnDone)]
        assert done and done[0].session_id != sids[KEY]
    finally:
        await e.aclose()


# --------------------------------------------------------------------------------------- config
BAD_CONFIGS: list[tuple[str, str, int | None, str]] = [
    # (name, config text, line the message must name, key or phrase the message must name)
    ("syntax", '[session]\ndaily_reset_hour = 4\nidle_reset_minutes = = 3\n', 3, "line 3"),
    ("wrong-type-int", '[session]\n\ndaily_reset_hour = "four"\n', 3, "session.daily_reset_hour"),
    ("wrong-type-bool", '[compaction]\nthreshold = 0.8\nenabled = "perhaps"\n', 3, "compaction.enabled"),
    ("wrong-type-float", '[compaction]\nthreshold = "high"\n', 2, "compaction.threshold"),
    ("wrong-type-str", '[general]\nagent = 7\n', 2, "general.agent"),
    ("unknown-key", '[provider]\nname = "scripted"\napi_kee = "x"\n', 3, "provider.api_kee"),
    ("unknown-section", '[providers]\nname = "x"\n', None, "[providers]"),
    ("section-not-table", 'session = 3\n', None, "[session]"),
    ("out-of-range", '[session]\n\nidle_reset_minutes = -5\n', 3, "idle_reset_minutes"),
    ("bad-threshold", '[compaction]\nthreshold = 7.5\n', 2, "compaction.threshold"),
    ("bad-strategy", '[context]\nstrategy = "everything"\n', 2, "context.strategy"),
    ("duplicate-key", '[session]\ncleanup_days = 3\ncleanup_days = 4\n', 3, "line 3"),
]


@pytest.mark.parametrize(("name", "text", "line", "needle"), BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_names_file_and_line(name: str, text: str, line: int | None, needle: str,
                                        neotask_home: Path) -> None:
    cfg = neotask_home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_settings()
    msg = str(exc.value)
    assert "\n" not in msg and needle in msg
    if line is not None:
        assert f"{cfg}:{line}" in msg or f"line {line}" in msg, msg
    else:
        assert str(cfg) in msg or "." in needle


def test_bad_config_is_a_clear_cli_error_not_silent_defaults(neotask_home: Path) -> None:
    cfg = neotask_home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[provider]\nname = "scripted"\n\n[session]\ndaily_reset_hour = "noon"\n')
    out = cli("send", "hello", "--json", env={"NEOTASK_PROVIDER": ""})
    assert out.returncode == 2
    assert f"{cfg}:5" in out.stderr and "session.daily_reset_hour" in out.stderr
    assert out.stdout == ""  # nothing ran with defaults
    assert not (neotask_home / "data" / "sessions").exists()


def test_config_invalid_utf8(neotask_home: Path) -> None:
    cfg = neotask_home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_bytes(b'[general]\nagent = "\xff\xfe"\n')
    with pytest.raises(ConfigError, match="UTF-8"):
        load_settings()


def test_bad_env_override_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOTASK_CONTEXT_WINDOW_TOKENS", "lots")
    with pytest.raises(ConfigError, match="NEOTASK_CONTEXT_WINDOW_TOKENS"):
        load_settings()
