"""Dates named in a query ("in November 2022", "on 13 October, 2023", "May 3, 2023", "in 2023",
"in June") as time windows, so a search can favour what was written then.

Only absolute expressions are read (relative ones like "last week" depend on when the question is
asked and are left to the text match). A month without a year matches that month in any year.
Windows are widened by a slack after their end: a message usually reports something that happened
a little earlier ("we went camping last week"), so a note dated shortly after the named period is
still about it.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from neotask_tui.tuning import MEMORY_DATE_SLACK_DAYS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTHS["sept"] = 9
_MON = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_PATTERNS = [
    re.compile(rf"\b{_DAY}\s+{_MON},?\s+{_YEAR}\b", re.I),  # 13 October, 2023
    re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}\b", re.I),  # October 13, 2023
    re.compile(rf"\b{_MON},?\s+{_YEAR}\b", re.I),  # November 2022
    re.compile(rf"\b(?:in|during|of|since)\s+{_MON}\b(?!\s+\d)", re.I),  # in June
    re.compile(rf"\b(?:in|during|of|since)\s+{_YEAR}\b", re.I),  # in 2023
]


def query_windows(query: str) -> list[tuple[int | None, float, float]]:
    """Time windows named in ``query``: ``(year or None, start, end)``.

    With a year, ``start``/``end`` are POSIX timestamps (local time) of the period; without one
    (a bare month), they are the day-of-year bounds of that month and apply to every year.
    """
    out: list[tuple[int | None, float, float]] = []
    taken: list[tuple[int, int]] = []
    for pat in _PATTERNS:
        for m in pat.finditer(query):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            g = m.groupdict()
            year = int(g["year"]) if g.get("year") else None
            mon = _MONTHS.get((g.get("mon") or "").lower().rstrip("."))
            day = int(g["day"]) if g.get("day") else None
            try:
                if year and mon and day:
                    start = datetime(year, mon, day)
                    end = start + timedelta(days=1)
                elif year and mon:
                    start = datetime(year, mon, 1)
                    end = datetime(year + (mon == 12), mon % 12 + 1, 1)
                elif year:
                    start, end = datetime(year, 1, 1), datetime(year + 1, 1, 1)
                elif mon:
                    start = datetime(2001, mon, 1)  # day-of-year bounds (2001: not a leap year)
                    end = datetime(2001 + (mon == 12), mon % 12 + 1, 1)
                    doy0 = start.timetuple().tm_yday
                    doy1 = doy0 + (end - start).days
                    out.append((None, float(doy0), float(doy1)))
                    taken.append((m.start(), m.end()))
                    continue
                else:
                    continue
            except ValueError:  # 31 February
                continue
            out.append((year, start.timestamp(), end.timestamp()))
            taken.append((m.start(), m.end()))
    return out


def window_match(
    ts: npt.ArrayLike, windows: list[tuple[int | None, float, float]], slack_days: float = MEMORY_DATE_SLACK_DAYS
) -> npt.NDArray[np.float64]:
    """1.0 for timestamps inside a window (or up to ``slack_days`` after it), else 0.0 (numpy)."""
    import numpy as np

    t = np.asarray(ts, dtype=np.float64)
    hit = np.zeros(len(t), dtype=bool)
    dated = t > 0
    slack = slack_days * 86400.0
    for year, a, b in windows:
        if year is not None:
            hit |= dated & (t >= a) & (t < b + slack)
            continue
        # a month in any year: compare day of year (slack in days, wrapping at the year's end)
        doy = _day_of_year(t[dated])
        span = (doy - a) % 365.0
        sel = span < (b - a) + slack_days
        idx = np.flatnonzero(dated)
        hit[idx[sel]] = True
    return hit.astype(np.float64)


def _day_of_year(t: npt.ArrayLike) -> npt.NDArray[np.float64]:
    import numpy as np

    offset = datetime.now().astimezone().utcoffset()  # timestamps are of local wall-clock dates
    shift = offset.total_seconds() if offset else 0.0
    days = np.asarray(np.asarray(t, dtype=np.float64) + shift, dtype="datetime64[s]").astype("datetime64[D]")
    years = days.astype("datetime64[Y]")
    out: npt.NDArray[np.float64] = (days - years).astype(np.float64) + 1.0
    return out
