"""kill -9 during real turns: nothing acknowledged is ever lost, every file stays readable.

The harness (:mod:`tests.faults.kill_harness`) runs :mod:`tests.faults.kill_driver` as a real child
process and SIGKILLs it at random moments — during startup, turns, compaction (a tiny context window
makes it frequent), state changes, ``/new``, ``/reset`` and ``sessions.json`` rewrites. The long
campaign (1,000 turns, 200+ kills) is ``bench/faults.py``; here the same harness runs with smaller
numbers.
"""

from __future__ import annotations

import pytest

from tests.faults.kill_harness import Figures, run_campaign


def _assert_clean(fig: Figures) -> None:
    assert fig.child_crashes == 0, fig.problems
    assert fig.lost == 0, fig.problems
    assert fig.unreadable == 0, fig.problems
    assert fig.index_mismatches == 0, fig.problems
    assert fig.doctor_unclean_after_fix == 0, fig.problems
    assert fig.torn_tails_left_after_fix == 0, fig.problems
    assert fig.state_changes_lost == 0, fig.problems
    assert fig.turns_failed == 0, fig.problems
    assert fig.branch_problems == 0, fig.problems


def test_kill9_short_campaign() -> None:
    fig = run_campaign(turns=25, kills=6, seed=11, cli_doctor_every=3)
    assert fig.kills >= 6 and fig.acknowledged >= 25
    assert fig.cli_doctor_runs >= 2
    assert fig.forks_seen > 0 and fig.retries_seen > 0  # forks and retries ran among the kills
    _assert_clean(fig)


def test_kill9_aimed_at_forks_and_retries() -> None:
    """Every kill lands right after a fork or a retry started (#21: they survive kill -9 like every
    other write): nothing acknowledged is lost, markers and fork links stay consistent."""
    fig = run_campaign(turns=20, kills=6, seed=2121, cli_doctor_every=6, phases=("fork", "retry"))
    assert fig.kills >= 6 and fig.kills_by_plan.get("phase", 0) > 0
    assert any(k in fig.kills_by_plan for k in ("phase:fork", "phase:retry"))
    _assert_clean(fig)


@pytest.mark.slow
def test_kill9_long_campaign() -> None:
    fig = run_campaign(turns=250, kills=60, seed=20261129, cli_doctor_every=10)
    assert fig.kills >= 60 and fig.acknowledged >= 250
    # The campaign must actually have hit the risky moments, not only quiet ones.
    assert fig.compactions_seen > 0 and fig.commands_acknowledged > 0
    assert fig.kills_by_plan.get("phase", 0) > 0 and fig.kills_by_plan.get("startup", 0) > 0
    _assert_clean(fig)
