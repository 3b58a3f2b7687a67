"""Daily reset boundary (incl. DST), idle expiry, next reset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from neotask_tui.engine.session.lifecycle import check_stale, last_daily_boundary, next_daily_boundary, next_reset_at

NY = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")


def local(tz: ZoneInfo, *a: int) -> datetime:
    return datetime(*a, tzinfo=tz)  # type: ignore[misc]


def test_boundary_reset_hour_in_past_today() -> None:
    now = local(NY, 2026, 6, 10, 9, 0)
    assert last_daily_boundary(now, 4, NY) == local(NY, 2026, 6, 10, 4, 0)
    assert next_daily_boundary(now, 4, NY) == local(NY, 2026, 6, 11, 4, 0)


def test_boundary_reset_hour_in_future_today() -> None:
    now = local(NY, 2026, 6, 10, 2, 30)
    assert last_daily_boundary(now, 4, NY) == local(NY, 2026, 6, 9, 4, 0)
    assert next_daily_boundary(now, 4, NY) == local(NY, 2026, 6, 10, 4, 0)


def test_boundary_exactly_at_hour() -> None:
    now = local(NY, 2026, 6, 10, 4, 0)
    assert last_daily_boundary(now, 4, NY) == now
    assert next_daily_boundary(now, 4, NY) == local(NY, 2026, 6, 11, 4, 0)


def test_stale_across_boundary_and_fresh_within_day() -> None:
    now = local(NY, 2026, 6, 10, 9, 0)
    assert check_stale(local(NY, 2026, 6, 10, 3, 59), now, daily_hour=4, idle_minutes=0, tz=NY).reason == "daily"
    assert not check_stale(local(NY, 2026, 6, 10, 4, 1), now, daily_hour=4, idle_minutes=0, tz=NY).stale
    assert not check_stale(local(NY, 2026, 6, 9, 12, 0), now, daily_hour=-1, idle_minutes=0, tz=NY).stale


def test_dst_spring_forward_boundary_is_still_local_four_am() -> None:
    # US DST starts 2026-03-08 at 02:00 -> 03:00. 04:00 local exists and is UTC-4 that day.
    now = local(NY, 2026, 3, 8, 12, 0)
    b = last_daily_boundary(now, 4, NY)
    assert b is not None and b.astimezone(UTC) == datetime(2026, 3, 8, 8, 0, tzinfo=UTC)
    prev = last_daily_boundary(local(NY, 2026, 3, 8, 3, 30), 4, NY)
    assert prev is not None and prev.astimezone(UTC) == datetime(2026, 3, 7, 9, 0, tzinfo=UTC)
    # 23 hours between the two boundaries on the short day
    assert b.astimezone(UTC) - prev.astimezone(UTC) == timedelta(hours=23)


def test_dst_reset_hour_inside_the_gap() -> None:
    # 02:30 does not exist on 2026-03-08 in New York; the boundary moves past the gap, never skipped.
    now = local(NY, 2026, 3, 8, 12, 0)
    b = last_daily_boundary(now, 2, NY)
    assert b is not None and b.astimezone(UTC).date() == datetime(2026, 3, 8).date()
    assert b <= now
    assert check_stale(local(NY, 2026, 3, 8, 1, 59), now, daily_hour=2, idle_minutes=0, tz=NY).stale


def test_dst_fall_back_day_has_one_boundary() -> None:
    # Europe/Berlin falls back 2026-10-25 03:00 -> 02:00; a 02:00 reset happens once.
    now = local(BERLIN, 2026, 10, 25, 12, 0)
    b = last_daily_boundary(now, 2, BERLIN)
    nb = next_daily_boundary(now, 2, BERLIN)
    assert b is not None and nb is not None
    assert nb.astimezone(UTC) - b.astimezone(UTC) == timedelta(hours=25)
    assert b.astimezone(UTC) == datetime(2026, 10, 25, 0, 0, tzinfo=UTC)  # the first 02:00 (CEST)


def test_idle_expiry() -> None:
    now = local(NY, 2026, 6, 10, 9, 0)
    d = check_stale(now - timedelta(minutes=31), now, daily_hour=-1, idle_minutes=30, tz=NY)
    assert d.stale and d.reason == "idle"
    assert not check_stale(now - timedelta(minutes=29), now, daily_hour=-1, idle_minutes=30, tz=NY).stale


@pytest.mark.parametrize(("idle", "kind"), [(0, "daily"), (15, "idle")])
def test_next_reset_picks_earliest(idle: int, kind: str) -> None:
    now = local(NY, 2026, 6, 10, 9, 0)
    nr = next_reset_at(now, now, daily_hour=4, idle_minutes=idle, tz=NY)
    assert nr is not None and nr[1] == kind
