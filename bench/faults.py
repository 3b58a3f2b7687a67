"""Fault figures as JSON: kill -9 campaign, disk faults, hostile input.

Usage::

    .venv/bin/python bench/faults.py                  # 1,000 turns, >= 200 kills (several minutes)
    .venv/bin/python bench/faults.py --turns 100 --kills 20 --skip-hostile   # quick look
    .venv/bin/python bench/faults.py --promises-only  # README promises under attack, per family
    .venv/bin/python bench/faults.py --promises-only --skip-promises  # only the scan-time table

Every part runs on a fresh temporary ``NEOTASK_HOME``; nothing outside it is touched. The kill -9
campaign uses the same harness as ``tests/faults/test_kill9.py`` (see ``tests/faults/kill_harness.py``),
the disk and hostile parts run the same case tables as the tests. Never part of pass/fail: the tests
assert; this prints figures (and timings, which tests must not assert on).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _fresh_home(root: Path, name: str) -> Path:
    home = root / name
    home.mkdir(parents=True)
    os.environ["NEOTASK_HOME"] = str(home / "home")
    return home


def _base_env() -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OLLAMA_HOST", "NEOTASK_SCRIPT"):
        os.environ.pop(var, None)
    os.environ["NEOTASK_PROVIDER"] = "scripted"
    os.environ["NEOTASK_PROVIDER_PROBE_OLLAMA"] = "false"
    os.environ["NEOTASK_SESSION_DAILY_RESET_HOUR"] = "-1"
    os.environ["NEOTASK_MEMORY_ENABLED"] = "false"
    os.environ["HF_HUB_OFFLINE"] = "1"


def kill9(root: Path, turns: int, kills: int, seed: int) -> dict[str, Any]:
    """The kill -9 campaign."""
    from tests.faults.kill_harness import run_campaign

    _fresh_home(root, "kill9")
    fig = run_campaign(turns=turns, kills=kills, seed=seed, cli_doctor_every=20)
    return fig.to_dict()


def disk(root: Path) -> dict[str, Any]:
    """Every disk-fault case (ENOSPC/EIO/EDQUOT/EROFS at each write of each storage operation)."""
    from neotask_tui.storage import atomic
    from tests.faults.disk_cases import all_cases, run_case

    tried = passed = 0
    failures: list[str] = []
    for i, case in enumerate(all_cases()):
        _fresh_home(root, f"disk-{i}")
        try:
            ok, detail = asyncio.run(run_case(case))
        finally:
            atomic.io_hooks.before_write = None
        tried += 1
        passed += ok
        if not ok:
            failures.append(f"{case.id}: {detail}")
    return {"tried": tried, "passed": passed, "failures": failures}


def hostile(root: Path) -> dict[str, Any]:
    """Every hostile-input case, with per-group counts and the 10 MB paste's event-loop stall."""
    from tests.faults.hostile_cases import all_cases

    tried: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    failures: list[str] = []
    paste: dict[str, Any] = {}
    for i, case in enumerate(all_cases()):
        _fresh_home(root, f"hostile-{i}")
        t0 = time.perf_counter()
        if case.group == "paste":
            ok, detail, stall = asyncio.run(_with_loop_monitor(case.run))
            paste = {"seconds": round(time.perf_counter() - t0, 2), "max_event_loop_stall_s": round(stall, 3),
                     "detail": detail}
        else:
            ok, detail = asyncio.run(_call(case.run))
        tried[case.group] += 1
        passed[case.group] += ok
        if not ok:
            failures.append(f"{case.id}: {detail}")
    return {"tried": sum(tried.values()), "passed": sum(passed.values()), "by_group": {
        g: {"tried": tried[g], "passed": passed[g]} for g in sorted(tried)}, "paste_10mb": paste,
        "failures": failures}


class _PromiseTally:
    """A pytest plugin that counts outcomes per ``promise(family)`` marker (each parametrized case is one)."""

    def __init__(self) -> None:
        self.tried: Counter[str] = Counter()
        self.passed: Counter[str] = Counter()
        self.failures: list[str] = []

    def pytest_runtest_logreport(self, report: Any) -> None:
        fam = getattr(report, "promise_family", None)
        if fam is None:
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.tried[fam] += 1
            if report.passed:
                self.passed[fam] += 1
            elif not report.skipped:
                self.failures.append(report.nodeid)

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        items[:] = [i for i in items if i.get_closest_marker("promise")]


def promises(tests: str) -> dict[str, Any]:
    """Run every test marked ``promise(family)`` under ``tests`` and count cases tried/passed per family.

    The same tests ``make test`` runs: the bench adds no cases of its own, it only tallies them.
    """
    import pytest

    tally = _PromiseTally()

    class _Family:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item: Any, call: Any) -> Any:
            outcome = yield
            m = item.get_closest_marker("promise")
            if m is not None:
                outcome.get_result().promise_family = m.args[0] if m.args else "unnamed"

    import contextlib

    with contextlib.redirect_stdout(sys.stderr):  # pytest's progress must not mix into the JSON
        pytest.main(["-q", "-p", "no:cacheprovider", "-o", "addopts=", tests], plugins=[tally, _Family()])
    fams = sorted(tally.tried)
    return {"tried": sum(tally.tried.values()), "passed": sum(tally.passed.values()),
            "by_family": {f: {"tried": tally.tried[f], "passed": tally.passed[f]} for f in fams},
            "failures": tally.failures}


LINEAR_SIZES = (10_000, 20_000, 40_000, 80_000, 160_000)
_SHAPES = {  # one repeating unit per hostile paste shape
    "hex": "3f9a1c0b7e", "dots": "a.", "slashes": "/", "dashes": "-", "snake": "a_", "spaces": "a   ",
    "secret_keywords": "my_key=", "password_prose": "the pass is a ",
}


def _scanners() -> dict[str, Any]:
    """Every function that runs a regex over user text, by name (a summary parse included)."""
    from neotask_tui.engine.compaction import guard, summary
    from neotask_tui.engine.language import classifier, constraints
    from neotask_tui.memory.index import chunking
    from neotask_tui.text import lexical, secrets

    return {
        "guard.identifiers_in": guard.identifiers_in, "guard.sentences": guard.sentences,
        "guard.is_ask": guard.is_ask, "guard.is_decision": guard.is_decision,
        "constraints.constraint_kind": constraints.constraint_kind, "classifier.classify": classifier.classify,
        "summary.parse_summary": summary.parse_summary, "chunking.chunk_markdown": chunking.chunk_markdown,
        "lexical.terms": lexical.terms, "secrets.redact": secrets.redact,
    }


def linear_scans(budget_s: float = 0.5) -> dict[str, Any]:
    """Seconds per scanner vs input size (the worst paste shape at each size) and ``ratio``, the
    time of the largest size run over the time of 10k (``sizes_ratio`` says which: 16 for 160k/10k,
    where ~16 is linear and ~256 quadratic). A scanner whose run passes ``budget_s`` is not run on
    the larger sizes (``null``), so the bench stays quick on a quadratic build too."""
    out: dict[str, Any] = {}
    for name, fn in _scanners().items():
        times: dict[int, float | None] = dict.fromkeys(LINEAR_SIZES)
        worst_shape: dict[int, str] = {}
        over = False
        for n in LINEAR_SIZES:
            if over:
                break
            for shape, unit in _SHAPES.items():
                text = (unit * (n // len(unit) + 1))[:n]
                t0 = time.perf_counter()
                fn(text)
                dt = time.perf_counter() - t0
                if times[n] is None or dt > (times[n] or 0):
                    times[n], worst_shape[n] = dt, shape
                if dt > budget_s:
                    over = True
                    break
        done = [n for n in LINEAR_SIZES if times[n] is not None]
        first, last = times[done[0]], times[done[-1]]
        out[name] = {"seconds": {str(n): None if t is None else round(t, 4) for n, t in times.items()},
                     "worst_shape": {str(n): s for n, s in worst_shape.items()},
                     "ratio": round(last / first, 1) if first and last else None,
                     "sizes_ratio": done[-1] // done[0]}
    return out


def big_paste(pastes: tuple[int, ...] = (1, 2, 3)) -> dict[str, Any]:
    """The turn after a compaction of N 100 KB pastes, memory on: seconds and peak RSS of that
    ``neotask send`` (a fresh process each, as the red team ran it; RSS is that process's peak,
    from ``wait4``'s rusage)."""
    import shutil
    import subprocess

    paste = "x " * 50_000 + "\n"
    out: dict[str, Any] = {}
    env = {**os.environ, "NEOTASK_MEMORY_ENABLED": "true"}
    cmd = [sys.executable, "-m", "neotask_tui"]
    with tempfile.TemporaryDirectory(prefix="neotask-bench-paste-") as tmp:
        for n in pastes:
            home = Path(tmp) / f"p{n}"
            env["NEOTASK_HOME"] = str(home)
            for _ in range(n):
                subprocess.run([*cmd, "send", "-"], input=paste, text=True, env=env, cwd=REPO,
                               capture_output=True, check=True)
            subprocess.run([*cmd, "compact", "agent:main:tui:default"], env=env, cwd=REPO,
                           capture_output=True, check=True)
            t0 = time.perf_counter()
            proc = subprocess.Popen([*cmd, "send", "small question"], env=env, cwd=REPO,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS (KB on Linux)
            proc.returncode = os.waitstatus_to_exitcode(status)
            out[str(n)] = {"seconds": round(time.perf_counter() - t0, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024),
                           "rc": proc.returncode}
            shutil.rmtree(home, ignore_errors=True)
    return out


async def _call(run: Any) -> tuple[bool, str]:
    ok, detail = await run()
    return bool(ok), str(detail)


async def _with_loop_monitor(run: Any) -> tuple[bool, str, float]:
    """Run a case while measuring the longest time the event loop was blocked (UI responsiveness)."""
    worst = 0.0
    stop = asyncio.Event()

    async def tick() -> None:
        nonlocal worst
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            worst = max(worst, now - last - 0.01)
            last = now

    t = asyncio.create_task(tick())
    try:
        ok, detail = await run()
    finally:
        stop.set()
        await t
    return ok, detail, worst


def main(argv: list[str] | None = None) -> int:
    """Run the selected parts and print one JSON object."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--turns", type=int, default=1000, help="acknowledged turns for the kill -9 campaign")
    p.add_argument("--kills", type=int, default=200, help="SIGKILLs for the kill -9 campaign")
    p.add_argument("--seed", type=int, default=20261129)
    p.add_argument("--skip-kill", action="store_true")
    p.add_argument("--skip-disk", action="store_true")
    p.add_argument("--skip-hostile", action="store_true")
    p.add_argument("--skip-promises", action="store_true")
    p.add_argument("--skip-linear", action="store_true", help="skip the scan-time vs input-size table")
    p.add_argument("--skip-big-paste", action="store_true",
                   help="skip the send-after-compaction of 1/2/3 100 KB pastes (memory on)")
    p.add_argument("--promises-only", action="store_true", help="only the README-promise families")
    a = p.parse_args(argv)
    if a.promises_only:
        a.skip_kill = a.skip_disk = a.skip_hostile = True
    _base_env()
    out: dict[str, Any] = {"python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory(prefix="neotask-bench-faults-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        if not a.skip_kill:
            k = kill9(root, a.turns, a.kills, a.seed)
            out["kill9"] = k
            out.update(kills=k["kills"], acknowledged=k["acknowledged"], lost=k["lost"], unreadable=k["unreadable"])
        if not a.skip_disk:
            d = disk(root)
            out["disk_faults"] = d
            out.update(disk_fault_cases=d["tried"], disk_fault_cases_passed=d["passed"])
        if not a.skip_hostile:
            h = hostile(root)
            out["hostile"] = h
            out.update(hostile_cases_tried=h["tried"], hostile_cases_passed=h["passed"])
        if not a.skip_linear:
            out["linear_scans"] = linear_scans()
        if not a.skip_big_paste:
            out["big_paste"] = big_paste()
        if not a.skip_promises:
            pr = promises(str(REPO / "tests" / "faults"))
            out["promises"] = pr
            out.update(promise_cases_tried=pr["tried"], promise_cases_passed=pr["passed"])
        out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
