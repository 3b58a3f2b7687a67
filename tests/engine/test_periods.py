"""The periods a user limits a preference to ("this week", "until Friday", "tomorrow", "до пятницы",
"на этой неделе") and the local time each ends (engine.language.periods), through the classifier and
the engine: the session entry expires at that time."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from neotask_tui.engine.events import Notice
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.language.periods import describe, period_end, period_of
from neotask_tui.engine.language.rules import classify
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import Clock
from tests.engine.state_support import KEY, st

# Wednesday 4 March 2026, 11:00 in Berlin (UTC+1: no summer time until 29 March).
NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()


def local_midnight(day: int, month: int = 3) -> datetime:
    """Midnight at the start of ``day`` in Berlin, in UTC (UTC+1, UTC+2 from 29 March's summer time)."""
    return datetime(2026, month, day, tzinfo=UTC) - timedelta(hours=2 if (month, day) > (3, 29) else 1)


@pytest.mark.parametrize(("text", "period", "ends"), [
    ("Today answer briefly.", "day:0", local_midnight(5)),
    ("Сегодня отвечай коротко.", "day:0", local_midnight(5)),
    ("Until the end of the day answer in English.", "day:0", local_midnight(5)),
    ("Answer briefly until tomorrow.", "day:0", local_midnight(5)),
    ("До конца дня пиши по-английски.", "day:0", local_midnight(5)),
    ("Answer in English tomorrow.", "day:1", local_midnight(6)),
    ("Tomorrow answer briefly, I'll be on my phone.", "day:1", local_midnight(6)),
    ("Завтра отвечай по-английски.", "day:1", local_midnight(6)),
    ("На завтра: отвечай коротко.", "day:1", local_midnight(6)),
    ("Послезавтра отвечай по-английски.", "day:2", local_midnight(7)),
    ("Until Friday use the staging database.", "wd:4", local_midnight(7)),
    ("Through Friday keep the feature flag off.", "wd:4", local_midnight(7)),
    ("до пятницы держи фичу выключенной", "wd:4", local_midnight(7)),
    ("Until Monday answer in English.", "wd:0", local_midnight(10)),
    ("До понедельника отвечай по-английски.", "wd:0", local_midnight(10)),
    ("Until Wednesday answer briefly.", "wd:2", local_midnight(5)),  # today is Wednesday: until tonight
    ("Until next Friday keep the flag off.", "wd:4:next", local_midnight(14)),
    ("До следующей пятницы держи флаг выключенным.", "wd:4:next", local_midnight(14)),
    ("Until the weekend answer briefly.", "wd:4", local_midnight(7)),
    ("До выходных отвечай коротко.", "wd:4", local_midnight(7)),
    ("This week answer briefly.", "week", local_midnight(9)),
    ("this week answer briefly", "week", local_midnight(9)),
    ("For the rest of the week answer briefly.", "week", local_midnight(9)),
    ("Until the end of the week write in Russian.", "week", local_midnight(9)),
    ("На этой неделе отвечай коротко.", "week", local_midnight(9)),
    ("Всю эту неделю пиши по-русски.", "week", local_midnight(9)),
    ("This month write the changelog in Russian.", "month", local_midnight(1, 4)),
    ("До конца месяца пиши по-русски.", "month", local_midnight(1, 4)),
])
def test_a_limited_preference_expires_at_the_local_end_of_its_period(
    text: str, period: str, ends: datetime, berlin: None,
) -> None:
    [c] = classify(text)
    assert c.kind == "temporary_preference" and c.field == "temporary_preferences", c
    assert c.period == period and c.ttl is None and not c.candidate
    assert period_end(period, NOW) == ends


def test_the_longest_period_named_counts_and_a_duration_wins() -> None:
    assert period_of("Today and tomorrow answer briefly.") == "day:1"
    assert period_of("This week, and until Friday, answer briefly.") == "week"
    [c] = classify("For the next 2 hours reply in English, until Friday.")
    assert (c.ttl, c.period) == ("2h", None)


def test_a_period_longer_than_today_stays_in_the_entry_text() -> None:
    assert [c.value for c in classify("Answer in English tomorrow.")] == ["Answer in English tomorrow"]
    assert [c.value for c in classify("Answer briefly until tomorrow.")] == ["Answer briefly"]
    assert [c.value for c in classify("Until the end of the day answer in English.")] == ["answer in English"]


def test_period_end_on_the_last_day_of_a_period(berlin: None) -> None:
    friday = datetime(2026, 3, 6, 22, 30, tzinfo=UTC)  # 23:30 Friday in Berlin
    assert period_end("wd:4", friday) == local_midnight(7)  # until Friday, said on Friday: tonight
    assert period_end("wd:4:next", friday) == local_midnight(14)
    sunday = datetime(2026, 3, 8, 12, 0, tzinfo=UTC)
    assert period_end("week", sunday) == local_midnight(9)
    december = datetime(2026, 12, 31, 12, 0, tzinfo=UTC)
    assert period_end("month", december) == datetime(2026, 12, 31, 23, 0, tzinfo=UTC)  # 1 Jan 2027, Berlin
    with pytest.raises(ValueError, match="not a period"):
        period_end("fortnight", NOW)


def test_describe() -> None:
    assert [describe(p) for p in ("day:0", "day:1", "wd:4", "wd:4:next", "week", "month")] == [
        "the end of the day", "the end of tomorrow", "the end of Friday", "the end of next Friday",
        "the end of the week", "the end of the month"]


@pytest.mark.parametrize("text", [
    "Tomorrow is Friday.", "Завтра будет дождь.", "This week was hard.", "Эта неделя была тяжёлой.",
    "I was busy until Friday.", "We shipped it this month.", "He said he'd answer tomorrow?",
    "Напомни завтра", "Remind me tomorrow.",  # a request for an action, not a preference
])
def test_a_sentence_about_a_period_is_not_a_preference(text: str) -> None:
    assert classify(text) == []


async def test_until_friday_this_week_and_tomorrow_expire_in_the_engine(
    engine: Engine, clock: Clock, berlin: None,
) -> None:
    clock.set(NOW)
    prov = engine.provider
    assert isinstance(prov, ScriptedProvider)
    notices: list[str] = []
    for text in ("Until Friday use the staging database.", "На этой неделе отвечай коротко.",
                 "Tomorrow answer in English."):
        prov.queue("ok")
        notices += [e.text for e in [x async for x in engine.send(text, KEY)] if isinstance(e, Notice)]
    ends = {e.value: e.expires_at for e in st(engine).get(KEY).active if e.field == "temporary_preferences"}
    assert ends == {
        "Until Friday use the staging database": local_midnight(7),
        "На этой неделе отвечай коротко": local_midnight(9),
        "Tomorrow answer in English": local_midnight(6),
    }
    # the value names its period already: the notice gives the end in brackets, not a second "until"
    # (red team 31: "until Friday keep answers short until the end of Friday")
    assert any(n.endswith("Until Friday use the staging database (to the end of Friday)") for n in notices), notices
    assert any(n.endswith("(to the end of the week)") for n in notices)
    assert any(n.endswith("Tomorrow answer in English (to the end of tomorrow)") for n in notices)
    assert not any("until the end" in n for n in notices), notices
    # the context's "Current session:" block gives each end in UTC (Friday midnight in Berlin: 23:00Z)
    assert "Until Friday use the staging database (until 2026-03-06 23:00Z)" in st(engine).block(KEY)

    def active() -> set[object]:
        return {e.value for e in st(engine).get(KEY).active if e.field == "temporary_preferences"}

    clock.set(local_midnight(6) - timedelta(minutes=1))
    assert len(active()) == 3  # 23:59 tomorrow: all three hold
    clock.set(local_midnight(6) + timedelta(minutes=1))
    assert active() == {"Until Friday use the staging database", "На этой неделе отвечай коротко"}
    clock.set(local_midnight(7) + timedelta(minutes=1))
    assert active() == {"На этой неделе отвечай коротко"}
    clock.set(local_midnight(9) + timedelta(minutes=1))
    assert active() == set()


@pytest.mark.parametrize(("text", "value"), [
    ("до пятницы без смайликов", "до пятницы без смайликов"),
    ("until Friday no emojis", "until Friday no emojis"),
    ("Until Friday, no emojis please.", "Until Friday, no emojis please"),
    ("До пятницы, пожалуйста, без смайликов и таблиц.", "До пятницы, пожалуйста, без смайликов и таблиц"),
    ("No emojis until Friday.", "No emojis until Friday"),
    ("Без смайликов до пятницы.", "Без смайликов до пятницы"),
])
def test_a_bare_without_or_no_until_friday_is_a_preference_until_the_end_of_friday(
    text: str, value: str, berlin: None,
) -> None:
    # Red team 27, F7: "до пятницы без смайликов" and "until Friday no emojis" recorded nothing ("до пятницы
    # пиши без смайликов" did), and "No emojis until Friday" was a session rule that never expired.
    [c] = classify(text)
    assert (c.kind, c.field, c.value, c.period, c.ttl) == (
        "temporary_preference", "temporary_preferences", value, "wd:4", None)
    assert not c.candidate
    assert period_end(c.period, NOW) == local_midnight(7)


@pytest.mark.parametrize(("text", "value", "period", "ttl"), [
    ("Today no emojis.", "no emojis", "day:0", None),
    ("Сегодня без эмодзи.", "без эмодзи", "day:0", None),
    ("For 2 hours no emojis.", "no emojis", None, "2h"),
    ("На 2 часа без эмодзи.", "без эмодзи", None, "2h"),
])
def test_a_bare_refusal_for_today_or_a_duration_ends_with_it(
        text: str, value: str, period: str | None, ttl: str | None) -> None:
    [c] = classify(text)
    assert (c.kind, c.value, c.period, c.ttl) == ("temporary_preference", value, period, ttl)


@pytest.mark.parametrize("text", [
    "Until Friday no one is in the office.",  # "no one": a description
    "До пятницы без изменений.",  # a status: nothing changes until then (a freeze says "никаких изменений")
    "Пока без изменений.", "Без изменений.", "No change.",  # the same status, with no period
    "Пока без ответа.", "For now no errors.",  # "so far": a status, it asks nothing
    "До пятницы без эмодзи в заметках по биллингу.",  # more than two words: say "не используй …"
    "Until Friday no worries.", "Сегодня без проблем.",  # formulae of chat
    "Until Friday I was without a laptop.",
])
def test_a_status_or_a_description_with_a_period_and_without_is_no_preference(text: str) -> None:
    assert classify(text) == []


async def test_until_friday_no_emojis_expires_at_the_end_of_friday_in_the_engine(
    engine: Engine, clock: Clock, berlin: None,
) -> None:
    clock.set(NOW)
    prov = engine.provider
    assert isinstance(prov, ScriptedProvider)
    for text in ("до пятницы без смайликов", "until Friday no emojis"):
        prov.queue("ok")
        [x async for x in engine.send(text, KEY)]
    ends = {e.value: e.expires_at for e in st(engine).get(KEY).active if e.field == "temporary_preferences"}
    assert ends == {"до пятницы без смайликов": local_midnight(7), "until Friday no emojis": local_midnight(7)}
    clock.set(local_midnight(7) + timedelta(minutes=1))
    assert not [e for e in st(engine).get(KEY).active if e.field == "temporary_preferences"]


@pytest.mark.parametrize(("text", "period"), [
    ("finish today's report", None), ("prepare tomorrow's demo", None), ("tonight’s build", None),
    ("finish the report today", "day:0"), ("prepare the demo tomorrow", "day:1"),
])
def test_a_day_word_as_a_possessive_is_no_period(text: str, period: str | None) -> None:
    assert period_of(text) == period


@pytest.mark.parametrize(("text", "value", "period", "ttl"), [
    ("До пятницы не трогай прод.", "До пятницы не трогай прод", "wd:4", None),
    ("До конца недели не трогай конфиг.", "До конца недели не трогай конфиг", "week", None),
    ("for 2 hours do not touch staging", "do not touch staging", None, "2h"),
    ("do not touch staging for 2 hours", "do not touch staging", None, "2h"),
    ("today don't deploy anything", "don't deploy anything", "day:0", None),
    ("Today, please do not use emojis.", "do not use emojis", "day:0", None),
    ("For today, do not touch prod.", "do not touch prod", "day:0", None),
    ("until Friday do not merge to main", "until Friday do not merge to main", "wd:4", None),
    ("сегодня не деплой ничего", "не деплой ничего", "day:0", None),
    ("в течение 3 часов не трогай прод", "не трогай прод", None, "3h"),
])
def test_a_timed_do_not_is_a_rule_ending_with_its_period(text: str, value: str, period: str | None,
                                                         ttl: str | None) -> None:
    # Red team 31, F7: "for 2 hours do not touch staging" was a temporary preference (the first thing a
    # full state block leaves out), while "for 2 hours answer briefly, do not touch prod" made a rule.
    [c] = classify(text)
    assert (c.kind, c.field, c.value, c.period, c.ttl) == ("session_rule", "constraints", value, period, ttl)
    assert not c.candidate


@pytest.mark.parametrize("text", ["today answer briefly", "until Friday no emojis", "Сегодня без эмодзи.",
                                  "don't worry today"])
def test_a_timed_instruction_or_bare_refusal_stays_a_preference(text: str) -> None:
    [c] = classify(text)
    assert c.kind == "temporary_preference", c
