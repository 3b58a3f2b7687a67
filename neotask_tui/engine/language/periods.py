"""When a period a user names for a preference ends ("today", "tomorrow", "until Friday", "this
week", "до пятницы", "на этой неделе", "до конца месяца"), in local time.

:func:`period_of` reads the period (English and Russian) as a small symbolic value, so the classifier
stays free of clocks; :func:`period_end` turns it into the moment the entry expires:

==========================================================  ==========  ==============================
Said                                                        Period      Expires
==========================================================  ==========  ==============================
"today", "tonight", "until tomorrow", "до конца дня"        ``day:0``   the next local midnight
"tomorrow", "на завтра", "завтра"                           ``day:1``   the end of tomorrow
"the day after tomorrow", "послезавтра"                     ``day:2``   the end of that day
"until/through Friday", "до пятницы"                        ``wd:4``    the end of the next Friday
                                                                        (today when it is Friday)
"until next Friday", "до следующей пятницы"                 ``wd:4:next`` the end of next week's Friday
"until the weekend", "до выходных"                          ``wd:4``    the end of Friday
"this week", "for the rest of the week", "this weekend",    ``week``    the end of Sunday (weeks
"на этой неделе", "до конца недели", "на выходные"                      start on Monday)
"this month", "until the end of the month", "до конца       ``month``   the end of the month's last day
месяца"
==========================================================  ==========  ==============================

"Tomorrow" is a preference stated now for tomorrow ("answer briefly tomorrow, I'll be on my phone"):
the entry is active from now (its text keeps the word, so the model reads it as meant for tomorrow)
and expires at the end of tomorrow; the state has no "not before" time to hold it back until then.
When several periods are named, the longest one counts ("today and tomorrow" → ``day:1``).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

__all__ = ["describe", "period_end", "period_of"]

_WD_EN = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
_WD_RU = {"понедельника": 0, "вторника": 1, "среды": 2, "четверга": 3, "пятницы": 4, "субботы": 5, "воскресенья": 6}
_WD_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_UNTIL = r"(?:until|till|til|through|thru)"

# Longest first: the first that matches is the period.
_MONTH = re.compile(
    rf"\b(?:this month|for the rest of (?:the |this )?month|{_UNTIL} (?:the )?end of (?:the |this )?month|eom)\b"
    r"|(?<!\w)(?:в этом месяце|до конца (?:этого |текущего )?месяца|на этот месяц|весь этот месяц)(?!\w)",
    re.I,
)
_WEEK = re.compile(
    rf"\b(?:this (?:whole )?week(?:end)?|for the (?:rest of the |rest of this )?week|all week"
    rf"|{_UNTIL} (?:the )?end of (?:the |this )?week|{_UNTIL} eow|for the weekend)\b"
    r"|(?<!\w)(?:на этой неделе|на текущей неделе|до конца (?:этой |текущей )?недели|всю (?:эту )?неделю"
    r"|на этих выходных|на выходные|в эти выходные|на эту неделю)(?!\w)",
    re.I,
)
_WEEKDAY = re.compile(
    rf"\b{_UNTIL} (?:the )?(?P<next>next )?(?P<en>{'|'.join(_WD_EN)})\b"
    rf"|(?<!\w)до (?P<next_ru>следующ(?:ей|его) )?(?P<ru>{'|'.join(_WD_RU)})(?!\w)",
    re.I,
)
_WEEKEND = re.compile(rf"\b{_UNTIL} (?:the )?weekend\b|(?<!\w)до выходных(?!\w)", re.I)
_DAY_AFTER_TOMORROW = re.compile(r"\bthe day after tomorrow\b|(?<!\w)послезавтра(?!\w)", re.I)
_TOMORROW = re.compile(r"\btomorrow\b(?!['’]s\b)|(?<!\w)(?:на )?завтра(?!\w)", re.I)
_UNTIL_TOMORROW = re.compile(rf"\b{_UNTIL} tomorrow\b|(?<!\w)до завтра(?!\w)", re.I)
_TODAY = re.compile(
    rf"\b(?:today|tonight)\b(?!['’]s\b)"
    rf"|\b(?:{_UNTIL} (?:the )?(?:end of (?:the |this )?day|eod|tonight)|for the rest of the day)\b"
    r"|(?<!\w)(?:сегодня|до конца дня|на сегодня|до вечера)(?!\w)",
    re.I,
)


def period_of(text: str) -> str | None:
    """The period ``text`` limits itself to (see the module table), or ``None``."""
    if _MONTH.search(text):
        return "month"
    if _WEEK.search(text):
        return "week"
    m = _WEEKDAY.search(text)
    if m:
        wd = _WD_EN[m.group("en").lower()] if m.group("en") else _WD_RU[m.group("ru").lower()]
        return f"wd:{wd}:next" if m.group("next") or m.group("next_ru") else f"wd:{wd}"
    if _WEEKEND.search(text):
        return "wd:4"
    if _DAY_AFTER_TOMORROW.search(text):
        return "day:2"
    until_tomorrow = {m.span() for m in _UNTIL_TOMORROW.finditer(text)}
    if any(not any(a <= m.start() < b for a, b in until_tomorrow) for m in _TOMORROW.finditer(text)):
        return "day:1"
    if until_tomorrow or _TODAY.search(text):
        return "day:0"
    return None


def _midnight(d: date) -> datetime:
    """Local midnight starting ``d``, with the UTC offset local time has *on that date* (not
    today's: a period crossing a DST change would end an hour early or late)."""
    return datetime.combine(d, time(0)).astimezone()


def period_end(period: str, now: datetime) -> datetime:
    """The local time ``period`` (a :func:`period_of` value) ends, seen from ``now``.

    Raises:
        ValueError: ``period`` is not one :func:`period_of` returns.
    """
    local = now.astimezone()
    today = local.date()
    kind, _, rest = period.partition(":")
    if kind == "day" and rest.isdigit():
        return _midnight(today + timedelta(days=int(rest) + 1))
    if kind == "week":
        return _midnight(today + timedelta(days=7 - today.weekday()))
    if kind == "month":
        return _midnight(date(today.year + (today.month == 12), today.month % 12 + 1, 1))
    if kind == "wd":
        wd, _, nxt = rest.partition(":")
        if wd.isdigit() and int(wd) < 7 and nxt in ("", "next"):
            if nxt:
                day = today + timedelta(days=7 - today.weekday() + int(wd))  # in next week
            else:
                day = today + timedelta(days=(int(wd) - today.weekday()) % 7)
            return _midnight(day + timedelta(days=1))
    raise ValueError(f"not a period: {period!r}")


def describe(period: str) -> str:
    """``period`` for a notice: "the end of the day", "the end of Friday", "the end of the week"."""
    kind, _, rest = period.partition(":")
    if kind == "day":
        return {"0": "the end of the day", "1": "the end of tomorrow"}.get(rest, "the end of the day after tomorrow")
    if kind == "wd":
        wd, _, nxt = rest.partition(":")
        return f"the end of {'next ' if nxt else ''}{_WD_NAMES[int(wd)]}"
    return f"the end of the {kind}"
