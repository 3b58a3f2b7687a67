"""The kill -9 harness shared by ``tests/faults/test_kill9.py`` and ``bench/faults.py``.

The parent starts :mod:`tests.faults.kill_driver` as a real subprocess on the data dir named by
``NEOTASK_HOME``, reads its ack lines, and SIGKILLs it at a random moment chosen per cycle:

- ``startup``: a random instant after spawn (lands in imports, index load, orphan repair);
- ``acks``: after a random number of acknowledged turns plus a few milliseconds;
- ``phase:<name>``: right after the child announces an operation — compaction, a state change,
  ``/new``, ``/reset``, a ``sessions.json`` rewrite or a transcript append.

After every kill, before the restart, :func:`verify` checks the data dir with the real storage code
and the real ``doctor``: every acknowledged turn (user message and reply) is in a transcript, live or
archived; every file parses (a torn last line — an append cut by the kill — is counted and must be
repaired by ``doctor --fix``; a corrupt line anywhere else counts as unreadable); ``sessions.json``
agrees with the transcript headers; ``doctor`` is clean after ``--fix``.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.faults.kill_driver import sha, turn_text

REPO = Path(__file__).resolve().parents[2]
PHASES = (
    "compact", "compacted", "state", "new", "reset", "remember", "write-index", "write-transcript", "send",
    "fork", "retry",
)


@dataclass
class Ack:
    """An acknowledged turn."""

    turn: int
    run: int
    key: str
    session_id: str
    event_id: int
    user_sha: str
    reply_sha: str


@dataclass
class Figures:
    """What a campaign measured (printed as JSON by the bench)."""

    kills: int = 0
    acknowledged: int = 0
    lost: int = 0
    unreadable: int = 0
    torn_tails: int = 0
    torn_tails_left_after_fix: int = 0
    index_mismatches: int = 0
    counter_drift_sessions: int = 0
    doctor_runs: int = 0
    doctor_unclean_after_fix: int = 0
    cli_doctor_runs: int = 0
    state_changes_acknowledged: int = 0
    state_changes_lost: int = 0
    commands_acknowledged: int = 0
    compactions_seen: int = 0
    child_crashes: int = 0
    turns_failed: int = 0
    transcripts: int = 0
    forks_seen: int = 0
    retries_seen: int = 0
    branch_problems: int = 0
    """Superseded markers naming events their transcript lacks, forks whose parent or fork point is gone."""
    kills_by_plan: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (problem list capped)."""
        d = asdict(self)
        d["problems"] = self.problems[:20]
        return d


def _child_env(window_tokens: int, memory: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["NEOTASK_CONTEXT_WINDOW_TOKENS"] = str(window_tokens)
    env["NEOTASK_MEMORY_ENABLED"] = "true" if memory else "false"
    env["NEOTASK_SESSION_DAILY_RESET_HOUR"] = "-1"
    env["NEOTASK_PROVIDER"] = "scripted"
    env.pop("NEOTASK_SCRIPT", None)
    return env


class _Child:
    """A running driver process and a thread collecting its complete stdout lines."""

    def __init__(self, start: int, run: int, env: dict[str, str], stderr_path: Path) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._err = open(stderr_path, "ab")  # noqa: SIM115 - closed in finish()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.faults.kill_driver", "--start", str(start), "--run", str(run),
             "--trace"],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=self._err, stdin=subprocess.DEVNULL,
        )
        self.started = time.monotonic()
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            if raw.endswith(b"\n"):  # a line cut by the kill is not a fact
                self.lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
        self.lines.put(None)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)

    def finish(self) -> int:
        rc = self.proc.wait()
        self._t.join()
        self._err.close()
        return rc


def _choose_plan(rng: random.Random, mean_acks: float,
                 phases: tuple[str, ...] | None = None) -> tuple[str, int, float]:
    """(plan, acks to wait for, extra delay in seconds); with ``phases``, always one of them."""
    if phases:
        return f"phase:{rng.choice(phases)}", rng.randint(0, max(1, int(mean_acks))), rng.uniform(0.0, 0.004)
    r = rng.random()
    if r < 0.12:
        return "startup", 0, rng.uniform(0.0, 1.2)
    if r < 0.45:
        return "acks", rng.randint(0, max(1, int(2 * mean_acks))), rng.uniform(0.0, 0.02)
    phase = rng.choice(PHASES)
    return f"phase:{phase}", rng.randint(0, max(1, int(mean_acks))), rng.uniform(0.0, 0.004)


def run_campaign(
    *,
    turns: int,
    kills: int,
    seed: int = 1,
    window_tokens: int = 1500,
    memory: bool = False,
    cli_doctor_every: int = 10,
    time_budget: float | None = None,
    phases: tuple[str, ...] | None = None,
) -> Figures:
    """Run until at least ``turns`` turns are acknowledged and ``kills`` SIGKILLs were delivered.

    The data dir is the one ``NEOTASK_HOME`` names (the caller sets it). ``phases`` aims every kill
    at one of these operations (e.g. ``("fork", "retry")``) instead of the random mix.
    """
    home = Path(os.environ["NEOTASK_HOME"])
    rng = random.Random(seed)
    env = _child_env(window_tokens, memory)
    stderr_path = home.parent / f"{home.name}-child-stderr.log"
    fig = Figures()
    acked: dict[int, Ack] = {}
    state_acks: list[tuple[int, int]] = []
    plan_counts: Counter[str] = Counter()
    t0 = time.monotonic()
    run = 0
    next_turn = 1
    mean = max(turns / max(kills, 1), 1.0)
    while fig.kills < kills or len(acked) < turns:
        if time_budget is not None and time.monotonic() - t0 > time_budget and fig.kills > 0:
            fig.problems.append("time budget reached before the targets")
            break
        run += 1
        plan, wait_acks, delay = _choose_plan(rng, mean, phases)
        child = _Child(next_turn, run, env, stderr_path)
        seen_acks = 0
        fired = False
        deadline_fallback = time.monotonic() + 60.0
        while not fired:
            if plan == "startup":
                left = child.started + delay - time.monotonic()
                if left <= 0:
                    break
                try:
                    line = child.lines.get(timeout=left)
                except queue.Empty:
                    break
            else:
                try:
                    line = child.lines.get(timeout=max(deadline_fallback - time.monotonic(), 0.01))
                except queue.Empty:
                    fig.problems.append(f"run {run}: no progress for 60 s (plan {plan})")
                    break
            if line is None:
                break
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "ack":
                seen_acks += 1
                a = Ack(turn=int(parts[1]), run=run, key=parts[2], session_id=parts[3],
                        event_id=int(parts[4]), user_sha=parts[5], reply_sha=parts[6])
                acked[a.turn] = a
                next_turn = a.turn + 1
                if plan == "acks" and seen_acks >= wait_acks:
                    fired = True
            elif parts[0] == "ackstate":
                state_acks.append((int(parts[1]), run))
            elif parts[0] == "ackcmd":
                fig.commands_acknowledged += 1
            elif parts[0] == "failed":
                fig.turns_failed += 1
                fig.problems.append(f"turn {parts[1]} failed: {' '.join(parts[2:])}")
            elif parts[0] == "phase":
                if parts[1] == "compacted":
                    fig.compactions_seen += 1
                elif parts[1] == "fork":
                    fig.forks_seen += 1
                elif parts[1] == "retry":
                    fig.retries_seen += 1
                if plan == f"phase:{parts[1]}" and seen_acks >= wait_acks:
                    fired = True
            # A phase target that never shows up still ends the cycle after a while.
            if plan.startswith("phase:") and seen_acks > wait_acks + 3 * mean + 10:
                plan = "phase-fallback"
                fired = True
        if fired and plan != "startup":
            time.sleep(delay)
        child.kill()
        rc = child.finish()
        if rc != -signal.SIGKILL:
            fig.child_crashes += 1
            tail = stderr_path.read_text(errors="replace")[-600:] if stderr_path.exists() else ""
            fig.problems.append(f"run {run}: child exited with {rc} before the kill: {tail}")
            if fig.child_crashes > 3:
                break
        else:
            fig.kills += 1
            plan_counts[plan.split(":")[0] if plan != "phase-fallback" else "acks"] += 1
            if plan.startswith("phase:"):
                plan_counts[plan] += 1
        verify(fig, acked, state_acks, cli_doctor=(fig.kills % cli_doctor_every == 0))
    fig.acknowledged = len(acked)
    fig.state_changes_acknowledged = len(state_acks)
    fig.kills_by_plan = dict(sorted(plan_counts.items()))
    fig.seconds = round(time.monotonic() - t0, 1)
    return fig


# ---------------------------------------------------------------------------------------- verification
def _all_transcripts() -> list[Path]:
    from neotask_tui import paths

    out: list[Path] = []
    for d in (paths.sessions_dir(), paths.archive_dir()):
        if d.exists():
            out.extend(sorted(d.glob("*.jsonl")))
    return out


def scan_files(fig: Figures) -> tuple[int, list[str]]:
    """Parse every data file without repairing; returns (torn tails, unreadable descriptions)."""
    from neotask_tui import paths
    from neotask_tui.storage.transcript import read_header, read_transcript

    torn = 0
    bad: list[str] = []
    for p in _all_transcripts():
        lt = read_transcript(p, repair=False)
        for iss in lt.issues:
            if iss.tail:
                torn += 1
            else:
                bad.append(f"{p.parent.name}/{p.name} line {iss.line_no}: {iss.reason}")
        only_torn = len(lt.events) == 0 and all(i.tail for i in lt.issues)
        if lt.events and read_header(p) is None:
            bad.append(f"{p.parent.name}/{p.name}: no readable session header")
        if not lt.events and not only_torn:
            bad.append(f"{p.parent.name}/{p.name}: nothing readable")
    idx = paths.sessions_index()
    if idx.exists():
        try:
            raw = json.loads(idx.read_text(encoding="utf-8"))
            if not isinstance(raw.get("sessions"), dict):
                bad.append("sessions.json: unexpected structure")
        except (ValueError, UnicodeDecodeError) as e:
            bad.append(f"sessions.json: {e}")
    q = paths.quarantine_dir()
    if q.exists():
        for p in q.glob("*.jsonl"):
            for n, line in enumerate(p.read_bytes().split(b"\n")[:-1], 1):
                try:
                    json.loads(line)
                except ValueError:
                    bad.append(f"quarantine/{p.name} line {n} does not parse")
    return torn, bad


def check_index(fig: Figures) -> None:
    """sessions.json points every key at a live transcript whose header names that key and id."""
    from neotask_tui import paths
    from neotask_tui.storage.index import load_index
    from neotask_tui.storage.transcript import read_header

    loaded = load_index(repair=False)
    drift = 0
    if loaded.rebuilt:
        fig.index_mismatches += 1
        fig.problems.append(f"sessions.json needed a rebuild: {loaded.problem}")
    for key, rec in loaded.records.items():
        tp = paths.transcript_path(rec.session_id)
        h = read_header(tp)
        if h is None or h.data.get("key") != key or h.data.get("session_id") != rec.session_id:
            fig.index_mismatches += 1
            fig.problems.append(f"index: {key} -> {rec.session_id} has no matching live transcript")
            continue
        inp, out = lineage_usage(rec.session_id)
        if (inp, out) != (rec.counters.input, rec.counters.output):
            drift += 1
    fig.counter_drift_sessions = max(fig.counter_drift_sessions, drift)


_PAID = ("message", "tool_call", "call", "compaction")


def lineage_usage(session_id: str) -> tuple[int, int]:
    """Input/output tokens over a session and its compaction ancestors (each event id counted once;
    a summarizer's calls are a ``call`` event in the compacted session, or, in a transcript written
    before those, the compaction record's ``usage``)."""
    from neotask_tui import paths
    from neotask_tui.storage.transcript import read_transcript

    seen: set[int] = set()
    inp = out = 0
    sid: str | None = session_id
    while sid:
        p = paths.transcript_path(sid)
        if not p.exists():
            p = paths.archived_transcript_path(sid)
        evs = read_transcript(p, repair=False).events
        for ev in evs:
            if ev.id in seen or ev.type not in _PAID or ev.data.get("copied_from"):
                continue  # a copy (a fork's history, kept messages) was paid for in the session it names
            seen.add(ev.id)
            u = ev.data.get("usage")
            if isinstance(u, dict):
                inp += int(u.get("input", 0))
                out += int(u.get("output", 0))
        head = evs[0] if evs and evs[0].type == "session" else None
        compacted = head is not None and head.data.get("reason") == "compaction"
        sid = str(head.data.get("parent_session_id") or "") if head is not None and compacted else None
    return inp, out


def check_branches(fig: Figures) -> None:
    """Every ``superseded`` marker names events of its own transcript written before it; every
    fork's parent transcript exists (live or archived) and holds the fork point."""
    from neotask_tui.storage.events import SUPERSEDED
    from neotask_tui.storage.transcript import read_transcript

    files = _all_transcripts()
    ids_of: dict[str, set[int]] = {}
    loaded = {p.stem: read_transcript(p, repair=False).events for p in files}
    for sid, evs in loaded.items():
        ids_of[sid] = {e.id for e in evs}
    bad = 0
    for sid, evs in loaded.items():
        for e in evs:
            if e.type == "marker" and e.data.get("kind") == SUPERSEDED:
                gone = e.data.get("superseded") or []
                if not all(isinstance(i, int) and i in ids_of[sid] and i < e.id for i in gone):
                    bad += 1
                    fig.problems.append(f"{sid}: marker e:{e.id} names events not before it: {gone}")
        head = evs[0] if evs and evs[0].type == "session" else None
        if head is not None and head.data.get("reason") == "fork":
            parent, at = str(head.data.get("parent_session_id")), head.data.get("fork_at")
            if parent not in ids_of or at not in ids_of[parent] or at not in ids_of[sid]:
                bad += 1
                fig.problems.append(f"{sid}: fork of {parent} at e:{at} has no such parent event")
    fig.branch_problems = max(fig.branch_problems, bad)


def check_acked(fig: Figures, acked: dict[int, Ack], state_acks: list[tuple[int, int]]) -> None:
    """Every acknowledged turn and state change is on disk (live or archived transcripts)."""
    from neotask_tui.storage.transcript import read_transcript

    present: set[tuple[str, str]] = set()
    by_id: dict[tuple[str, int], tuple[str, str]] = {}
    state_values: set[str] = set()
    files = _all_transcripts()
    fig.transcripts = len(files)
    for p in files:
        for ev in read_transcript(p, repair=False).events:
            if ev.type == "message" and ev.role in ("user", "assistant"):
                h = sha(ev.content)
                present.add((ev.role, h))
                by_id[(p.stem, ev.id)] = (ev.role, h)
            elif ev.type == "state":
                state_values.add(json.dumps(ev.data, ensure_ascii=False))
    lost = 0
    for a in acked.values():
        if a.user_sha != sha(turn_text(a.turn, a.run)):
            fig.problems.append(f"turn {a.turn}: ack names a different user text")
        reply = by_id.get((a.session_id, a.event_id))
        ok = ("user", a.user_sha) in present and reply == ("assistant", a.reply_sha)
        if not ok:
            lost += 1
            if len(fig.problems) < 50:
                fig.problems.append(f"acknowledged turn {a.turn} (run {a.run}) is missing")
    fig.lost = max(fig.lost, lost)
    blob = "\n".join(state_values)
    fig.state_changes_lost = max(
        fig.state_changes_lost, sum(1 for t, r in state_acks if f"goal of turn {t} run {r}" not in blob)
    )


def verify(
    fig: Figures, acked: dict[int, Ack], state_acks: list[tuple[int, int]], *, cli_doctor: bool
) -> None:
    """All checks after one kill (the child is dead; nothing else holds the lock)."""
    from neotask_tui.cli.doctor import run_doctor

    torn, bad = scan_files(fig)
    fig.torn_tails += torn
    fig.unreadable = max(fig.unreadable, len(bad))
    fig.problems.extend(bad[:5])
    check_index(fig)
    check_acked(fig, acked, state_acks)
    check_branches(fig)
    run_doctor(fix=True)
    fig.doctor_runs += 1
    rep = run_doctor(fix=False)
    if not rep["clean"]:
        fig.doctor_unclean_after_fix += 1
        fig.problems.extend(f"doctor after --fix: {p}" for p in rep["problems"][:3])
    torn_left, _ = scan_files(fig)
    fig.torn_tails_left_after_fix += torn_left
    if cli_doctor:
        fig.cli_doctor_runs += 1
        out = subprocess.run([sys.executable, "-m", "neotask_tui", "doctor", "--json"], cwd=REPO,
                             capture_output=True, text=True, env=dict(os.environ), timeout=120)
        try:
            clean = bool(json.loads(out.stdout)["clean"])
        except (ValueError, KeyError):
            clean = False
        if not clean:
            fig.doctor_unclean_after_fix += 1
            fig.problems.append(f"`neotask doctor --json` not clean: {out.stdout[-300:]} {out.stderr[-300:]}")
