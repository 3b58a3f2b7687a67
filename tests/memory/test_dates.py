"""Date periods named in a search query, in English, Russian and Ukrainian (memory.search.dates).

Relative periods are counted from a fixed reference time: Wednesday 2 December 2026, 15:00 local.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest

from neotask_tui.memory.search.dates import query_windows, window_match

NOW = datetime(2026, 12, 2, 15, 0).timestamp()  # a Wednesday


def span(query: str) -> list[tuple[date, date] | tuple[float, float]]:
    """The windows of ``query`` as local dates ``[start, end)``, or day-of-year bounds for any year."""
    out: list[tuple[date, date] | tuple[float, float]] = []
    for year, a, b in query_windows(query, NOW):
        if year is None:
            out.append((a, b))
        else:
            out.append((datetime.fromtimestamp(a).date(), datetime.fromtimestamp(b).date()))
    return out


D = date
MAY_2023 = (D(2023, 5, 1), D(2023, 6, 1))


@pytest.mark.parametrize("query", [
    "What broke in May 2023?", "Что сломалось в мае 2023?", "Что сломалось в мае 2023 года?",
    "итоги мая 2023 года", "план на май 2023", "к маю 2023 г.", "перед маем 2023", "Що зламалося у травні 2023?",
])
def test_a_month_of_a_year_in_every_case_form(query: str) -> None:
    assert span(query) == [MAY_2023]


@pytest.mark.parametrize(("query", "month"), [
    ("в январе 2024", 1), ("февраля 2024", 2), ("в марте 2024", 3), ("апреля 2024", 4), ("в июне 2024", 6),
    ("июля 2024", 7), ("в августе 2024", 8), ("сентябрь 2024", 9), ("в октябре 2024", 10),
    ("ноября 2024 года", 11), ("в декабре 2024", 12), ("окт. 2024", 10), ("у лютому 2024", 2),
    ("листопада 2024", 11), ("у грудні 2024", 12),
])
def test_every_month_name(query: str, month: int) -> None:
    assert span(query) == [(D(2024, month, 1), D(2024 + (month == 12), month % 12 + 1, 1))]


@pytest.mark.parametrize(("query", "day"), [
    ("What did Mel paint on October 13, 2023?", D(2023, 10, 13)),
    ("Что Мел нарисовала 13 октября 2023 года?", D(2023, 10, 13)),
    ("Что было 1-го февраля 2023?", D(2023, 2, 1)),
    ("Що було 5 травня 2023 р.?", D(2023, 5, 5)),
    ("лог от 2023-05-03", D(2023, 5, 3)),
    ("отчёт от 03.05.2023", D(2023, 5, 3)),
])
def test_a_day(query: str, day: date) -> None:
    assert span(query) == [(day, D.fromordinal(day.toordinal() + 1))]


@pytest.mark.parametrize(("query", "expected"), [
    ("что было с 1 по 5 марта 2023", (D(2023, 3, 1), D(2023, 3, 6))),
    ("что было 1–5 марта 2023", (D(2023, 3, 1), D(2023, 3, 6))),
    ("что было с 28 февраля по 3 марта 2023 года", (D(2023, 2, 28), D(2023, 3, 4))),
    ("what happened from March 1 to 5, 2023", (D(2023, 3, 1), D(2023, 3, 6))),
    ("what happened 1-5 March 2023", (D(2023, 3, 1), D(2023, 3, 6))),
    ("що було з 1 по 5 березня 2023", (D(2023, 3, 1), D(2023, 3, 6))),
    ("с 28 декабря по 3 января 2024", (D(2023, 12, 28), D(2024, 1, 4))),
])
def test_a_range_of_days(query: str, expected: tuple[date, date]) -> None:
    assert span(query) == [expected]


def test_a_range_without_a_year_is_in_any_year() -> None:
    assert span("что было с 1 по 5 марта") == [(60.0, 65.0)]  # 1 March is day 60 of a common year
    assert span("from 1 to 5 March") == [(60.0, 65.0)]


@pytest.mark.parametrize("query", [
    "в 2022 году", "в 2022 г.", "за 2022 год", "итоги 2022 года", "in 2022", "у 2022 році",
])
def test_a_year(query: str) -> None:
    assert span(query) == [(D(2022, 1, 1), D(2023, 1, 1))]


@pytest.mark.parametrize(("query", "expected"), [
    ("весной 2023", (D(2023, 3, 1), D(2023, 6, 1))),
    ("весной 2023 года", (D(2023, 3, 1), D(2023, 6, 1))),
    ("in the spring of 2023", (D(2023, 3, 1), D(2023, 6, 1))),
    ("летом 2023", (D(2023, 6, 1), D(2023, 9, 1))),
    ("summer 2023", (D(2023, 6, 1), D(2023, 9, 1))),
    ("осенью 2023", (D(2023, 9, 1), D(2023, 12, 1))),
    ("in fall 2023", (D(2023, 9, 1), D(2023, 12, 1))),
    ("зимой 2023", (D(2022, 12, 1), D(2023, 3, 1))),  # winter 2023: December 2022 to February
    ("навесні 2023", (D(2023, 3, 1), D(2023, 6, 1))),
])
def test_a_season_of_a_year(query: str, expected: tuple[date, date]) -> None:
    assert span(query) == [expected]


@pytest.mark.parametrize(("query", "expected"), [
    ("what did we decide yesterday", (D(2026, 12, 1), D(2026, 12, 2))),
    ("что мы решили вчера", (D(2026, 12, 1), D(2026, 12, 2))),
    ("що ми вирішили вчора", (D(2026, 12, 1), D(2026, 12, 2))),
    ("what did we decide the day before yesterday", (D(2026, 11, 30), D(2026, 12, 1))),
    ("что мы решили позавчера", (D(2026, 11, 30), D(2026, 12, 1))),
    ("что мы решили сегодня", (D(2026, 12, 2), D(2026, 12, 3))),
    ("what did we decide 3 days ago", (D(2026, 11, 29), D(2026, 11, 30))),
    ("что мы решили 3 дня назад", (D(2026, 11, 29), D(2026, 11, 30))),
    ("что мы решили пару дней назад", (D(2026, 11, 30), D(2026, 12, 1))),
    ("що ми вирішили 3 дні тому", (D(2026, 11, 29), D(2026, 11, 30))),
    ("what did we decide last Friday", (D(2026, 11, 27), D(2026, 11, 28))),
    ("что мы решили в прошлую пятницу", (D(2026, 11, 27), D(2026, 11, 28))),
    ("что мы решили в прошлый понедельник", (D(2026, 11, 30), D(2026, 12, 1))),
])
def test_relative_days(query: str, expected: tuple[date, date]) -> None:
    assert span(query) == [expected]


LAST_WEEK = (D(2026, 11, 23), D(2026, 11, 30))  # weeks start on Monday


@pytest.mark.parametrize(("query", "expected"), [
    ("what did we decide last week", LAST_WEEK),
    ("что мы решили на прошлой неделе", LAST_WEEK),
    ("что мы решили за прошлую неделю", LAST_WEEK),
    ("що ми вирішили минулого тижня", LAST_WEEK),
    ("що ми вирішили на минулому тижні", LAST_WEEK),
    ("what did we decide a week ago", LAST_WEEK),
    ("что мы решили неделю назад", LAST_WEEK),
    ("what did we decide the week before last", (D(2026, 11, 16), D(2026, 11, 23))),
    ("что мы решили на позапрошлой неделе", (D(2026, 11, 16), D(2026, 11, 23))),
    ("what did we decide this week", (D(2026, 11, 30), D(2026, 12, 7))),
    ("что мы решили на этой неделе", (D(2026, 11, 30), D(2026, 12, 7))),
    ("what did we decide last month", (D(2026, 11, 1), D(2026, 12, 1))),
    ("что мы решили в прошлом месяце", (D(2026, 11, 1), D(2026, 12, 1))),
    ("что мы решили 2 месяца назад", (D(2026, 10, 1), D(2026, 11, 1))),
    ("что мы решили в этом месяце", (D(2026, 12, 1), D(2027, 1, 1))),
    ("what did we decide last year", (D(2025, 1, 1), D(2026, 1, 1))),
    ("что мы решили в прошлом году", (D(2025, 1, 1), D(2026, 1, 1))),
    ("итоги прошлого года", (D(2025, 1, 1), D(2026, 1, 1))),
    ("що ми вирішили торік", (D(2025, 1, 1), D(2026, 1, 1))),
    ("що ми вирішили минулого року", (D(2025, 1, 1), D(2026, 1, 1))),
    ("что мы решили в позапрошлом году", (D(2024, 1, 1), D(2025, 1, 1))),
    ("что мы решили в этом году", (D(2026, 1, 1), D(2027, 1, 1))),
    ("что мы решили год назад", (D(2025, 1, 1), D(2026, 1, 1))),
    ("Where did Caroline move from 4 years ago?", (D(2022, 1, 1), D(2023, 1, 1))),
    ("what did we ship in May of last year", (D(2025, 5, 1), D(2025, 6, 1))),
    ("что мы выпустили в мае прошлого года", (D(2025, 5, 1), D(2025, 6, 1))),
    ("что мы выпустили в мае этого года", (D(2026, 5, 1), D(2026, 6, 1))),
])
def test_relative_weeks_months_years(query: str, expected: tuple[date, date]) -> None:
    assert span(query) == [expected]


@pytest.mark.parametrize(("query", "expected"), [
    ("what did we do last weekend", (D(2026, 11, 28), D(2026, 11, 30))),
    ("что мы делали в прошлые выходные", (D(2026, 11, 28), D(2026, 11, 30))),
    ("что мы делали на прошлых выходных", (D(2026, 11, 28), D(2026, 11, 30))),
    ("що ми робили на минулих вихідних", (D(2026, 11, 28), D(2026, 11, 30))),
    ("что мы планируем на эти выходные", (D(2026, 12, 5), D(2026, 12, 7))),
    ("what changed from 2020 to 2022", (D(2020, 1, 1), D(2023, 1, 1))),
    ("что менялось с 2020 по 2022 год", (D(2020, 1, 1), D(2023, 1, 1))),
])
def test_weekends_and_ranges_of_years(query: str, expected: tuple[date, date]) -> None:
    assert span(query) == [expected]


@pytest.mark.parametrize(("query", "expected"), [
    ("what did we do last summer", (D(2026, 6, 1), D(2026, 9, 1))),  # the summer that has passed
    ("что мы делали прошлым летом", (D(2026, 6, 1), D(2026, 9, 1))),
    ("что мы делали этим летом", (D(2026, 6, 1), D(2026, 9, 1))),
    ("что мы делали прошлой зимой", (D(2025, 12, 1), D(2026, 3, 1))),  # in December: the winter before
    ("что мы делали этой зимой", (D(2026, 12, 1), D(2027, 3, 1))),
])
def test_relative_seasons(query: str, expected: tuple[date, date]) -> None:
    assert span(query) == [expected]


@pytest.mark.parametrize(("query", "expected"), [
    ("what changed in the past 3 days", (D(2026, 11, 29), D(2026, 12, 3))),  # the 3 days before today, and today
    ("что поменялось за последние 3 дня", (D(2026, 11, 29), D(2026, 12, 3))),
    ("что поменялось за последнюю неделю", (D(2026, 11, 25), D(2026, 12, 3))),
    ("що змінилося за останній тиждень", (D(2026, 11, 25), D(2026, 12, 3))),
])
def test_the_last_n_units(query: str, expected: tuple[date, date]) -> None:
    assert span(query) == [expected]


@pytest.mark.parametrize(("query", "expected"), [
    ("When did Melanie go camping in June?", (152.0, 182.0)),
    ("Когда Мелани ходила в поход в июне?", (152.0, 182.0)),
    ("Коли Мелані ходила в похід у червні?", (152.0, 182.0)),
    ("Что было 3 мая?", (123.0, 124.0)),
    ("What happened on May 3?", (123.0, 124.0)),
    ("What happened on the 3rd of May?", (123.0, 124.0)),
    ("Что мы делали летом?", (152.0, 244.0)),
    ("What did we do in the summer?", (152.0, 244.0)),
])
def test_a_period_without_a_year_is_in_any_year(query: str, expected: tuple[float, float]) -> None:
    assert span(query) == [expected]


@pytest.mark.parametrize("query", [
    "May I ask what we decided?",  # the verb, not the month
    "options 1 to 5 may work",
    "Может, май — лучший месяц?",  # a month named without a period marker
    "версия 2.5 марта не вышла",
    "what did we decide",
    "что мы решили",
    "мы ждём уже 3 часа",
    "Сколько лет тебе?",
])
def test_no_period_named(query: str) -> None:
    assert span(query) == []


def test_yo_and_e_are_the_same_letter() -> None:
    assert span("что мы решили в позапрошлом году") == span("что мы решили в позапрошлом году".replace("е", "ё", 1))


def test_relative_windows_follow_the_reference_time() -> None:
    later = datetime(2027, 3, 10, 9, 0).timestamp()
    (w,) = query_windows("что мы решили вчера", later)
    assert (datetime.fromtimestamp(w[1]).date(), datetime.fromtimestamp(w[2]).date()) == (D(2027, 3, 9), D(2027, 3, 10))


def test_window_match_of_a_russian_range_in_any_year_and_a_relative_week() -> None:
    ts = [datetime(2021, 3, 3, 12).timestamp(), datetime(2021, 4, 30, 12).timestamp(),
          datetime(2026, 11, 25, 12).timestamp(), datetime(2026, 10, 1, 12).timestamp(), 0.0]
    assert window_match(ts, query_windows("с 1 по 5 марта", NOW), slack_days=14).tolist() == [1, 0, 0, 0, 0]
    assert window_match(ts, query_windows("на прошлой неделе", NOW), slack_days=14).tolist() == [0, 0, 1, 0, 0]
