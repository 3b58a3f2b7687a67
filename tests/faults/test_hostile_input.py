"""Hostile input, table-driven (see :mod:`tests.faults.hostile_cases` for what each group checks)."""

from __future__ import annotations

import pytest

from tests.faults.hostile_cases import HostileCase, all_cases

CASES = all_cases()


def test_there_are_at_least_100_cases() -> None:
    assert len(CASES) >= 100
    assert {c.group for c in CASES} >= {"text", "paste", "command", "key", "reply", "tool"}


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.slow else []) for c in CASES]
)
async def test_hostile(case: HostileCase) -> None:
    ok, detail = await case.run()
    assert ok, detail
