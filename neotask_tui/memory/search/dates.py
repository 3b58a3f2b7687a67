"""Dates named in a query as time windows, so a search can favour what was written then — in
English, Russian and Ukrainian.

Absolute periods: a day ("on 13 October, 2023", "May 3, 2023", "13 октября 2023 года", "5 травня
2023"), a range of days ("1–5 March", "from March 1 to 5, 2023", "с 1 по 5 марта", "с 28 февраля по
3 марта 2023"), a month ("in November 2022", "в мае 2023", "мая 2023 года", "у травні 2023"), a
season ("in the summer of 2023", "весной 2023", "навесні 2023"), a year ("in 2023", "в 2022 году",
"у 2022 році"). Russian and Ukrainian month names are read in every case form ("май", "мая",
"мае", "маю", "маем"). A month, day, range or season without a year matches it in any year
("in June", "в мае", "3 мая", "летом").

Relative periods are counted from ``now`` (the time of the search, local calendar): "today",
"yesterday", "the day before yesterday", "last/this week|month|year", "the week before last",
"3 days ago", "a week ago", "last Friday", "last/this summer", "the past 3 days", "the last
month" and their Russian ("вчера", "позавчера", "на прошлой неделе", "в прошлом году", "в мае
прошлого года", "3 дня назад", "в прошлую пятницу", "прошлым летом", "за последние 3 дня") and
Ukrainian ("вчора", "минулого тижня", "торік", "3 дні тому") forms. Weeks start on Monday.
"N days ago" is that day; "N weeks/months/years ago" the calendar week, month or year it falls in;
"the past N days" the last N days up to today.

Windows are widened by a slack after their end: a message usually reports something that happened
a little earlier ("we went camping last week"), so a note dated shortly after the named period is
still about it.
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from neotask_tui.tuning import MEMORY_DATE_SLACK_DAYS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Window = tuple[int | None, float, float]
"""``(year or None, start, end)``: POSIX timestamps (local time) of the period when ``year`` is set;
day-of-year bounds of a period in any year when it is ``None``."""

# -- words --------------------------------------------------------------------------------------

_EN_MONTHS: dict[str, int] = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_EN_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_EN_MONTHS["sept"] = 9


def _ru_forms(word: str) -> tuple[str, ...]:
    """Every case form of a Russian month name (nominative → gen., dat., instr., prep.)."""
    if word == "май":
        return ("май", "мая", "маю", "маем", "мае")
    if word.endswith("ь"):
        s = word[:-1]
        return (word, s + "я", s + "ю", s + "ем", s + "е")  # январь: января, январю, январем, январе
    return (word, word + "а", word + "у", word + "ом", word + "е")  # март: марта, марту, мартом, марте


_RU_NAMES = ("январь", "февраль", "март", "апрель", "май", "июнь", "июль", "август", "сентябрь", "октябрь",
             "ноябрь", "декабрь")
_RU_ABBR = (("янв",), ("фев", "февр"), ("мар",), ("апр",), (), ("июн",), ("июл",), ("авг",), ("сен", "сент"),
            ("окт",), ("ноя", "нояб"), ("дек",))
_UK_FORMS = (
    ("січень", "січня", "січню", "січнем", "січні"), ("лютий", "лютого", "лютому", "лютим"),
    ("березень", "березня", "березню", "березнем", "березні"), ("квітень", "квітня", "квітню", "квітнем", "квітні"),
    ("травень", "травня", "травню", "травнем", "травні"), ("червень", "червня", "червню", "червнем", "червні"),
    ("липень", "липня", "липню", "липнем", "липні"), ("серпень", "серпня", "серпню", "серпнем", "серпні"),
    ("вересень", "вересня", "вересню", "вереснем", "вересні"), ("жовтень", "жовтня", "жовтню", "жовтнем", "жовтні"),
    ("листопад", "листопада", "листопаду", "листопадом", "листопаді"),
    ("грудень", "грудня", "грудню", "груднем", "грудні"),
)
_SLAVIC_MONTHS: dict[str, int] = {
    **{form: i for i, name in enumerate(_RU_NAMES, 1) for form in (*_ru_forms(name), *_RU_ABBR[i - 1])},
    **{form: i for i, forms in enumerate(_UK_FORMS, 1) for form in forms},
}
_MONTHS = {**_EN_MONTHS, **_SLAVIC_MONTHS}
_ABBR = {a for a in _EN_MONTHS if a not in {m.lower() for m in calendar.month_name}} | {
    a for abbr in _RU_ABBR for a in abbr}

_SEASONS: dict[str, str] = {
    word: name
    for name, words in (
        ("spring", "spring весна весны весне весну весной весною навесні весни"),
        ("summer", "summer лето лета лету летом лете влітку улітку літо літа літом"),
        ("autumn", "autumn fall осень осени осенью восени осінь осені осінню"),
        ("winter", "winter зима зимы зиме зиму зимой зимою взимку узимку зими"),
    )
    for word in words.split()
}
_SEASON_MONTH = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}
_BARE_SEASON_WORDS = "весной|весною|навесні|летом|влітку|улітку|осенью|восени|зимой|зимою|взимку|узимку"

_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "couple of": 2, "a couple of": 2,
    "один": 1, "одна": 1, "одну": 1, "два": 2, "две": 2, "три": 3, "четыре": 4, "пять": 5, "шесть": 6,
    "семь": 7, "восемь": 8, "девять": 9, "десять": 10, "пару": 2, "пара": 2,
    "дві": 2, "чотири": 4, "шість": 6, "сім": 7, "вісім": 8,
}
_WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
    "понедельник": 0, "вторник": 1, "среду": 2, "среда": 2, "четверг": 3, "пятницу": 4, "пятница": 4,
    "субботу": 5, "суббота": 5, "воскресенье": 6,
    "понеділок": 0, "вівторок": 1, "середу": 2, "четвер": 3, "п'ятницю": 4, "суботу": 5, "неділю": 6,
}


def _alt(words: object) -> str:
    return "|".join(sorted(map(re.escape, words), key=len, reverse=True))  # type: ignore[call-overload]


def _unit(word: str) -> str:
    """``day``, ``week``, ``month`` or ``year`` for a unit word in any of the three languages."""
    w = word.lower()
    if w.startswith(("day", "дн", "ден", "сут")):
        return "day"
    if w.startswith(("week", "недел", "тижд", "тижн")):
        return "week"
    if w.startswith(("month", "месяц", "місяц")):
        return "month"
    return "year"


# -- pattern pieces -----------------------------------------------------------------------------

_MON = rf"(?P<mon>{_alt(_MONTHS)})\b\.?"
_MON2 = _MON.replace("?P<mon>", "?P<mon2>")
_SMON = rf"(?P<mon>{_alt(_SLAVIC_MONTHS)})\b\.?"
_FULL_MON = rf"(?P<mon>{_alt(set(_MONTHS) - _ABBR)})\b"
_YEAR = r"(?<!\d)(?P<year>(?:19|20)\d\d)(?!\d)(?:\s*(?:года|году|год|г\.?|року|році|рік|р\.|-?го|-?м)(?!\w))?"
_DAY = r"(?<![\d:.,])(?P<day>[0-3]?\d)(?:st|nd|rd|th|-?(?:го|е|ое|ого))?"
_DAY2 = _DAY.replace("?P<day>", "?P<day2>")
_TO = r"\s*(?:-|–|—|to|through|thru|till|until|по|до)\s*"
_FROM = r"(?:\b(?:from|between)\s+|(?<!\w)(?:с|со|з|із|від)\s+)?"
_SEASON = rf"(?P<season>{_alt(_SEASONS)})"
_N = rf"(?P<n>\d{{1,3}}|{_alt(_NUMBERS)})"
_THIS = (r"(?<!\w)(?P<rel>this|last|previous|прошл\w*|позапрошл\w*|эт(?:ого|ому|ом|им|ой|их|и|а|о)|текущ\w*"
         r"|минул\w*|ц(?:ього|ьому|ієї|ій|ей|их|і|е|я))")


def _ts(d: date) -> float:
    return datetime(d.year, d.month, d.day).timestamp()


def _abs(start: date, end: date) -> Window:
    return (start.year, _ts(start), _ts(end))


def _any_year(start: date, end: date) -> Window:
    """Day-of-year bounds of ``[start, end)`` (given in 2001, a common year; wraps at the year's end)."""
    doy0 = float(start.timetuple().tm_yday)
    return (None, doy0, doy0 + (end - start).days)


def _month(year: int, mon: int) -> tuple[date, date]:
    return date(year, mon, 1), date(year + (mon == 12), mon % 12 + 1, 1)


def _add_months(d: date, k: int) -> date:
    n = d.year * 12 + d.month - 1 + k
    return date(n // 12, n % 12 + 1, 1)


def _season(name: str, year: int) -> tuple[date, date]:
    """Winter ``year`` runs from December of the year before to the end of February."""
    m = _SEASON_MONTH[name]
    start = date(year - (m == 12), m, 1)
    return start, _add_months(start, 3)


def _season_of(name: str, today: date, last: bool) -> tuple[date, date]:
    """The latest ``name`` season that has started; with ``last``, the one before it if today is in it."""
    for year in range(today.year + 1, today.year - 3, -1):
        start, end = _season(name, year)
        if start <= today:
            return _season(name, year - 1) if last and today < end else (start, end)
    raise AssertionError("unreachable")


def _week(d: date) -> tuple[date, date]:
    start = d - timedelta(days=d.weekday())
    return start, start + timedelta(days=7)


def _number(word: str) -> int:
    w = word.lower()
    return int(w) if w.isdigit() else _NUMBERS[w]


def _back(today: date, n: int, unit: str) -> tuple[date, date]:
    """The period ``n`` ``unit``s before ``today``: that day, or the calendar week/month/year."""
    if unit == "day":
        d = today - timedelta(days=n)
        return d, d + timedelta(days=1)
    if unit == "week":
        return _week(today - timedelta(days=7 * n))
    if unit == "month":
        start = _add_months(today, -n)
        return start, _add_months(start, 1)
    return date(today.year - n, 1, 1), date(today.year - n + 1, 1, 1)


def _steps_back(rel: str) -> int:
    """0 for "this"/"этот"/"цей", 2 for "позапрошлый", else 1 ("last", "прошлый", "минулий")."""
    r = rel.lower()
    return 2 if r.startswith("позапрошл") else 0 if r.startswith(("this", "эт", "текущ", "ц")) else 1


def _last_n(today: date, n: int, unit: str) -> tuple[date, date]:
    """The last ``n`` units up to and including today."""
    if unit == "day":
        days = n
    elif unit == "week":
        days = 7 * n
    elif unit == "month":
        days = 30 * n
    else:
        days = 365 * n
    return today - timedelta(days=days), today + timedelta(days=1)


# -- the patterns, in order of precedence (a span a pattern took is not read again) -----------------

Handler = Callable[[dict[str, str | None], date], Window | None]


def _days(g: dict[str, str | None], _today: date) -> Window | None:
    """A day or a range of days (maybe across two months), with or without a year."""
    if not g.get("year") and "may" in (g.get("mon"), g.get("mon2")):
        return None  # "options 1 to 5 may work": the verb (a capital "May" is the month)
    m0 = _MONTHS[(g["mon"] or "").lower().rstrip(".")]
    m1 = _MONTHS[(g.get("mon2") or "").lower().rstrip(".")] if g.get("mon2") else m0
    d0 = int(g["day"] or 0)
    d1 = int(g.get("day2") or d0)
    year = int(g.get("year") or 0) or None
    y1 = year or 2002  # any year: counted in common years (2001, 2002)
    y0 = y1 - (m0 > m1)  # "28 December to 3 January 2024" starts in 2023
    start, last = date(y0, m0, d0), date(y1, m1, d1)
    if last < start:
        return None
    end = last + timedelta(days=1)
    return _abs(start, end) if year else _any_year(start, end)


def _numeric(g: dict[str, str | None], _today: date) -> Window | None:
    """"2023-05-03", "03.05.2023"."""
    start = date(int(g["year"] or 0), int(g["mm"] or 0), int(g["day"] or 0))
    return _abs(start, start + timedelta(days=1))


def _month_year(g: dict[str, str | None], _today: date) -> Window | None:
    return _abs(*_month(int(g["year"] or 0), _MONTHS[(g["mon"] or "").lower().rstrip(".")]))


def _bare_month(g: dict[str, str | None], _today: date) -> Window | None:
    start, end = _month(2001, _MONTHS[(g["mon"] or "").lower().rstrip(".")])
    return _any_year(start, end)


def _year(g: dict[str, str | None], _today: date) -> Window | None:
    y = int(g["year"] or 0)
    return _abs(date(y, 1, 1), date(y + 1, 1, 1))


def _season_year(g: dict[str, str | None], _today: date) -> Window | None:
    return _abs(*_season(_SEASONS[(g["season"] or "").lower()], int(g["year"] or 0)))


def _bare_season(g: dict[str, str | None], _today: date) -> Window | None:
    name = _SEASONS[(g["season"] or "").lower()]
    return _any_year(*_season(name, 2002))


def _rel_season(g: dict[str, str | None], today: date) -> Window | None:
    last = _steps_back(g["rel"] or "") > 0
    return _abs(*_season_of(_SEASONS[(g["season"] or "").lower()], today, last))


def _rel_month_of_year(g: dict[str, str | None], today: date) -> Window | None:
    """"May of last year", "в мае прошлого года", "у травні минулого року"."""
    back = _steps_back(g["rel"] or "")
    return _abs(*_month(today.year - back, _MONTHS[(g["mon"] or "").lower().rstrip(".")]))


def _rel_unit(g: dict[str, str | None], today: date) -> Window | None:
    """"last week", "в этом месяце", "минулого року", "the week before last"."""
    back = 2 if g.get("before") is not None else _steps_back(g["rel"] or "")
    return _abs(*_back(today, back, _unit(g["unit"] or "")))


def _ago(g: dict[str, str | None], today: date) -> Window | None:
    n = _number(g.get("n") or "1")
    return _abs(*_back(today, n, _unit(g["unit"] or "")))


def _past(g: dict[str, str | None], today: date) -> Window | None:
    n = _number(g.get("n") or "1")
    return _abs(*_last_n(today, n, _unit(g["unit"] or "")))


def _day_word(back: int) -> Handler:
    def handler(_g: dict[str, str | None], today: date) -> Window | None:
        return _abs(*_back(today, back, "day"))
    return handler


def _years(g: dict[str, str | None], _today: date) -> Window | None:
    """"from 2020 to 2022", "с 2020 по 2022 год": both years included."""
    y0, y1 = int(g["year"] or 0), int(g["year2"] or 0)
    return _abs(date(y0, 1, 1), date(y1 + 1, 1, 1)) if y0 <= y1 else None


def _weekend(g: dict[str, str | None], today: date) -> Window | None:
    """Saturday and Sunday of this week, or of the week before ("last weekend", "в прошлые выходные")."""
    saturday = _week(today)[0] + timedelta(days=5 - 7 * _steps_back(g["rel"] or ""))
    return _abs(saturday, saturday + timedelta(days=2))


def _last_weekday(g: dict[str, str | None], today: date) -> Window | None:
    wd = _WEEKDAYS[(g["wd"] or "").lower()]
    d = today - timedelta(days=(today.weekday() - wd - 1) % 7 + 1)
    return _abs(d, d + timedelta(days=1))


_UNIT_EN = r"(?P<unit>days?|weeks?|months?|years?)"
_UNIT_SL = (r"(?P<unit>дн(?:я|ей|і|ів)|день|сутки|суток|недел[юиь]|неделя|тиждень|тижні|тижнів|месяц(?:а|ев)?"
            r"|місяць|місяці|місяців|год(?:а)?|лет|рік|роки|років)")
_WD_EN = _alt(w for w in _WEEKDAYS if w.isascii())
_WD_SL = _alt(w for w in _WEEKDAYS if not w.isascii())
_PATTERNS: list[tuple[str, re.Pattern[str], Handler]] = [(need, re.compile(p, re.I), h) for need, p, h in (
    # numeric dates: "2023-05-03", "03.05.2023"
    ("year", r"(?<![\d-])(?P<year>(?:19|20)\d\d)-(?P<mm>[01]\d)-(?P<day>[0-3]\d)(?![\d-])", _numeric),
    ("year", r"(?<![\d.])(?P<day>[0-3]?\d)\.(?P<mm>[01]?\d)\.(?P<year>(?:19|20)\d\d)(?![\d.])", _numeric),
    # ranges of days: "с 28 февраля по 3 марта 2023", "1–5 March 2023", "from March 1 to 5, 2023"
    ("mon", rf"{_FROM}{_DAY}\s+{_MON}{_TO}{_DAY2}\s+{_MON2}(?:,?\s+{_YEAR})?", _days),
    ("mon", rf"{_FROM}{_DAY}{_TO}{_DAY2}\s+{_MON}(?:,?\s+{_YEAR})?", _days),
    ("mon", rf"{_FROM}\b{_MON}\s+{_DAY}{_TO}(?:{_MON2}\s+)?{_DAY2}\b(?:,?\s+{_YEAR})?", _days),
    # a day: "13 October, 2023", "October 13, 2023", "13 октября 2023 года"
    ("mon", rf"{_DAY}(?:\s+of)?\s+{_MON},?\s+{_YEAR}", _days),
    ("mon", rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}", _days),
    # relative compounds: "May of last year", "в мае прошлого года", "last summer", "прошлым летом"
    ("mon", rf"\b{_MON}\s+(?:of\s+)?{_THIS}\s+(?:year|года|году|року)(?!\w)", _rel_month_of_year),
    ("season", rf"{_THIS}\s+{_SEASON}(?!\w)", _rel_season),
    # a season of a year: "summer 2023", "in the summer of 2023", "весной 2023 года"
    ("season", rf"(?<!\w){_SEASON}(?:\s+of)?,?\s+{_YEAR}", _season_year),
    # a month of a year: "November 2022", "в мае 2023", "мая 2023 года", "у травні 2023"
    ("mon", rf"\b{_MON},?\s+{_YEAR}", _month_year),
    # years: "from 2020 to 2022", "с 2020 по 2022 год", "2020–2022"
    ("year", rf"{_FROM}{_YEAR}{_TO}{_YEAR.replace('?P<year>', '?P<year2>')}", _years),
    # a year: "in 2023", "в 2022 году", "у 2022 році", "2022 года"
    ("year", rf"\b(?:in|during|of|since|for)\s+{_YEAR}", _year),
    ("year", rf"(?<!\w)(?:в|во|за|с|со|у|з|від)\s+{_YEAR}", _year),
    ("year", r"(?<!\d)(?P<year>(?:19|20)\d\d)\s*(?:году|года|г\.|році|року)(?!\w)", _year),
    # relative days
    ("rel", r"\bthe day before yesterday\b|(?<!\w)(?:позавчера|позавчора)(?!\w)", _day_word(2)),
    ("rel", r"\byesterday\b|(?<!\w)(?:вчера|вчора|учора)(?!\w)", _day_word(1)),
    ("rel", r"\btoday\b|(?<!\w)(?:сегодня|сьогодні)(?!\w)", _day_word(0)),
    ("rel", rf"\b(?:last|this past)\s+(?P<wd>{_WD_EN})\b", _last_weekday),
    ("rel", rf"(?<!\w)(?:в|во|у)\s+(?:прошл\w+|минул\w+)\s+(?P<wd>{_WD_SL})(?!\w)", _last_weekday),
    ("rel", rf"\b{_THIS}\s+weekend\b", _weekend),
    ("rel", rf"(?<!\w)(?:в|на|у)\s+{_THIS}\s+(?:выходны[ех]|вихідних|вихідні)(?!\w)", _weekend),
    # "3 days ago", "a week ago", "3 дня назад", "неделю назад", "3 дні тому"
    ("rel", rf"\b{_N}\s+{_UNIT_EN}\s+ago\b", _ago),
    ("rel", rf"(?<!\w)(?:{_N}\s+)?{_UNIT_SL}\s+(?:назад|тому)(?!\w)", _ago),
    # "the past 3 days", "over the last month", "за последние 3 дня", "за останній тиждень"
    ("rel", rf"\bthe\s+(?:last|past)\s+(?:{_N}\s+)?{_UNIT_EN}\b", _past),
    ("rel", rf"(?<!\w)за\s+(?:последн\w+|останн\w+)\s+(?:{_N}\s+)?{_UNIT_SL}(?!\w)", _past),
    # "last week", "the week before last", "на прошлой неделе", "в этом году", "минулого тижня", "торік"
    ("rel", r"\bthe\s+(?P<unit>week|month|year)\s+before\s+last(?P<before>)\b", _rel_unit),
    ("rel", rf"\b{_THIS}\s+(?P<unit>week|month|year)\b", _rel_unit),
    ("rel", rf"{_THIS}\s+(?P<unit>недел[еиюя]|месяц[еау]?|год[ау]?|тижн[яі]|тиждень|місяц[іяь]|місяць|рок[уі]|рік)"
     r"(?!\w)", _rel_unit),
    ("rel", r"(?<!\w)торік(?!\w)", lambda _g, t: _abs(*_back(t, 1, "year"))),
    # a day or a month in any year: "on May 3", "3 мая", "in June", "в мае", "у травні"
    ("mon", rf"\bon\s+(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MON}(?!,?\s*\d)", _days),
    ("mon", rf"\bon\s+{_MON}\s+{_DAY}\b(?!,?\s*\d)", _days),
    ("mon", rf"{_DAY}\s+{_SMON}(?!,?\s*\d)", _days),
    ("mon", rf"\b(?:in|during|of|since)\s+{_MON}(?!\s*\d)", _bare_month),
    ("mon", rf"(?<!\w)(?:в|во|за|с|со|у|з|від)\s+{_FULL_MON}(?!\s*\d)", _bare_month),
    # a season in any year: "in the summer", "летом", "восени"
    ("season", r"\b(?:in|during)\s+(?:the\s+)?(?P<season>spring|summer|autumn|fall|winter)\b(?!\s*\d)", _bare_season),
    ("season", rf"(?<!\w)(?P<season>{_BARE_SEASON_WORDS})(?!\w)(?!\s*\d)", _bare_season),
)]


_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_YEAR_DIGITS = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_REL_STEMS = (
    "today", "yesterday", "ago", "last", "this", "past", "previous", "week", "month", "year",
    "сегодня", "вчера", "позавчера", "назад", "прошл", "позапрошл", "эт", "текущ", "последн", "торік",
    "сьогодні", "вчора", "учора", "позавчора", "тому", "минул", "ц", "останн",
)
"""A word of every relative pattern starts with one of these (a cheap test before the patterns run)."""


def query_windows(query: str, now: float | None = None) -> list[Window]:
    """Time windows named in ``query``: ``(year or None, start, end)``.

    With a year, ``start``/``end`` are POSIX timestamps (local time) of the period; without one
    (a bare month, day or season), they are the day-of-year bounds of that period and apply to
    every year. Relative periods ("last week", "вчера") are counted from ``now`` (default: the
    current time).
    """
    text = query.replace("ё", "е").replace("Ё", "Е").replace("’", "'")
    today = datetime.fromtimestamp(time.time() if now is None else now).date()
    words = set(_WORD.findall(text.lower()))
    present = {  # which kinds of pattern can match at all: most queries name no period
        "mon": not words.isdisjoint(_MONTHS),
        "season": not words.isdisjoint(_SEASONS),
        "year": _YEAR_DIGITS.search(text) is not None,
        "rel": any(w.startswith(_REL_STEMS) for w in words),
    }
    out: dict[Window, None] = {}  # each period once, in the order first named
    # The characters an earlier (longer-first) pattern's match took: a later match overlapping
    # one is skipped. Checked and marked over the match's own characters only, so the scan stays
    # linear in the text however many periods a pasted log names.
    taken = bytearray(len(text))
    for need, pat, handler in _PATTERNS:
        if not present[need]:
            continue
        for m in pat.finditer(text):
            a, b = m.span()
            if taken.find(1, a, b) != -1:
                continue
            try:
                window = handler(m.groupdict(), today)
            except (ValueError, KeyError):  # 31 February; a day-and-month without a valid day
                window = _month_of(m, today)
            if window is None:
                continue
            out.setdefault(window, None)
            taken[a:b] = b"\x01" * (b - a)
    return list(out)


def _month_of(m: re.Match[str], today: date) -> Window | None:
    """The month a match with an impossible day still names ("31 February, 2023" → February 2023)."""
    g = m.groupdict()
    mon = _MONTHS.get((g.get("mon") or "").lower().rstrip("."))
    if mon is None:
        return None
    if g.get("year"):
        return _abs(*_month(int(g["year"]), mon))
    return _any_year(*_month(2001, mon))


def window_match(
    ts: npt.ArrayLike, windows: list[Window], slack_days: float = MEMORY_DATE_SLACK_DAYS
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
        # a period in any year: compare day of year (slack in days, wrapping at the year's end)
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
