"""Session lifecycle rules: daily reset boundary, idle expiry, next automatic reset.

All times are aware datetimes. The daily boundary is computed in the *local time zone* with
``zoneinfo`` so DST transitions are honoured (04:00 local is 04:00 on both sides of a change; on a
spring-forward day where the hour does not exist, the boundary is the first instant after the gap).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def local_zone() -> tzinfo:
    """The local time zone: ``$TZ`` if set and valid, else /etc/localtime, else the fixed offset."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        try:
            return ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        with open("/etc/localtime", "rb") as f:
            return ZoneInfo.from_file(f, key="localtime")
    except (OSError, ValueError):
        pass
    return datetime.now().astimezone().tzinfo or UTC


def _at_local(d: date, hour: int, tz: tzinfo) -> datetime:
    """The instant of ``hour``:00 local on day ``d`` (first instant after a DST gap)."""
    naive = datetime.combine(d, time(hour))
    aware = naive.replace(tzinfo=tz)
    # Round-trip through UTC: a wall time inside a spring-forward gap doesn't exist; move past the gap.
    back = aware.astimezone(UTC).astimezone(tz)
    if back.replace(tzinfo=None) != naive:
        aware = back.replace(tzinfo=tz) if back.replace(tzinfo=None) > naive else aware
    return aware


def last_daily_boundary(now: datetime, hour: int, tz: tzinfo | None = None) -> datetime | None:
    """The most recent daily reset instant at or before ``now`` (None if disabled)."""
    if hour < 0:
        return None
    tz = tz or local_zone()
    local = now.astimezone(tz)
    b = _at_local(local.date(), hour, tz)
    if b > now:
        b = _at_local(local.date() - timedelta(days=1), hour, tz)
    return b


def next_daily_boundary(now: datetime, hour: int, tz: tzinfo | None = None) -> datetime | None:
    """The next daily reset instant strictly after ``now`` (None if disabled)."""
    if hour < 0:
        return None
    tz = tz or local_zone()
    local = now.astimezone(tz)
    b = _at_local(local.date(), hour, tz)
    if b <= now:
        b = _at_local(local.date() + timedelta(days=1), hour, tz)
    return b


@dataclass(frozen=True, slots=True)
class ResetDecision:
    """Whether a session is stale, and why."""

    stale: bool
    reason: str = ""
    detail: str = ""


def check_stale(
    last_activity: datetime, now: datetime, *, daily_hour: int, idle_minutes: int, tz: tzinfo | None = None
) -> ResetDecision:
    """Decide whether a session whose last activity was ``last_activity`` must start fresh now."""
    b = last_daily_boundary(now, daily_hour, tz)
    if b is not None and last_activity < b:
        return ResetDecision(True, "daily", f"daily reset at {b.astimezone(tz or local_zone()):%Y-%m-%d %H:%M %Z}")
    if idle_minutes > 0 and now - last_activity >= timedelta(minutes=idle_minutes):
        return ResetDecision(True, "idle", f"idle for more than {idle_minutes} minutes")
    return ResetDecision(False)


def next_reset_at(
    last_activity: datetime, now: datetime, *, daily_hour: int, idle_minutes: int, tz: tzinfo | None = None
) -> tuple[datetime, str] | None:
    """When the next automatic reset will happen for a session, and its kind."""
    cands: list[tuple[datetime, str]] = []
    nb = next_daily_boundary(now, daily_hour, tz)
    if nb is not None:
        cands.append((nb, "daily"))
    if idle_minutes > 0:
        cands.append((last_activity + timedelta(minutes=idle_minutes), "idle"))
    return min(cands) if cands else None
