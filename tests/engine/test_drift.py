"""Summarization drift: each case of ``drift_cases`` compacted by the extractive summarizer and by a
lossy model through the local OpenAI-protocol server; the summary must say what the case requires
and nothing it forbids (the guard repairs the model's drift). The four faults of issue #19 have their
own tests below."""

from __future__ import annotations

import pytest

from neotask_tui.engine.compaction.extractive import extractive_summary
from neotask_tui.engine.compaction.guard import extract_items, guard, identifiers_in
from neotask_tui.engine.compaction.summary import parse_summary
from neotask_tui.storage.events import Event
from tests.engine.drift_cases import CASES, DriftCase, identifier_figures, listed_identifiers, run, section_text


def msg(i: int, role: str, content: str) -> Event:
    return Event("message", i, i - 1, "2025-01-01T00:00:00+00:00", {"role": role, "content": content})


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_extractive_summary_does_not_drift(case: DriftCase) -> None:
    out = await run(case, "extractive")
    assert out.passed, "\n".join([*out.failures, out.summary])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_guard_repairs_a_lossy_model_summary(case: DriftCase) -> None:
    out = await run(case, "model")
    assert out.passed, "\n".join([*out.failures, out.summary])


def test_the_suite_has_forty_cases_in_both_languages() -> None:
    assert len(CASES) >= 40
    assert {c.lang for c in CASES} == {"en", "ru"}
    assert len({c.name for c in CASES}) == len(CASES)


async def test_identifier_precision_and_recall_on_the_suite() -> None:
    outcomes = [await run(c, "extractive") for c in CASES if c.ids]
    figures = identifier_figures(outcomes)
    assert figures["recall"] == 1.0, figures
    assert figures["precision"] >= 0.9, figures


# --- issue #19, fault by fault (each fails on the summary shape before it)

QUEUE = [
    msg(1, "user", "Let's go with option B for the queue: RabbitMQ."),
    msg(2, "assistant", "Great, RabbitMQ with a topic exchange."),
    msg(3, "user", "Actually, scrap that. We go with option C: Postgres LISTEN/NOTIFY, no separate broker."),
    msg(4, "assistant", "OK."),
]


def test_a_reversed_decision_is_superseded_never_the_goal() -> None:
    s = extractive_summary(QUEUE)
    text = s.render()
    assert "option B" not in section_text(text, "Current goal")
    decisions = section_text(text, "Decisions")
    assert "- user: (superseded by e:3) Let's go with option B for the queue: RabbitMQ. [e:1]" in decisions
    assert "- user: We go with option C: Postgres LISTEN/NOTIFY, no separate broker. [e:3]" in decisions


def test_a_model_summary_keeping_the_reversed_decision_as_goal_is_marked_superseded() -> None:
    s = parse_summary("## Goal\n- Let's go with option B for the queue: RabbitMQ. [e:1]\n## Constraints and rules\n"
                      "- We go with option C: Postgres LISTEN/NOTIFY, no separate broker. [e:3]")
    report = guard(s, extract_items(QUEUE), QUEUE)
    text = s.render()
    assert "option B" not in section_text(text, "Current goal")
    assert "(superseded by e:3) Let's go with option B" in section_text(text, "Decisions")
    assert any(r.kind == "superseded" for r in report.repaired)


BUILD = [
    msg(1, "user", "CI build build-4471 on feat/tz-fix fails in src/app/time_utils.py at line 212, "
        "e.g. since 2024."),
    msg(2, "assistant", "Try os.path.getaccess( with F_LARGHCADSCREDISABLE on "
        "/Users/user/Desktop/test-data/myfile.txt, "
        "i.e. as with LISTEN/NOTIFY."),
]


def test_identifiers_are_whole_and_only_the_users() -> None:
    assert identifiers_in("Use Postgres LISTEN/NOTIFY on feat/tz-fix, mail ops@acme.example, pay $1,250.") == [
        "LISTEN/NOTIFY", "feat/tz-fix", "ops@acme.example", "$1,250"]
    assert identifiers_in("e.g. with i.e. as and/or in 2024, the 3rd time") == []
    text = extractive_summary(BUILD).render()
    assert listed_identifiers(text) == ["build-4471", "feat/tz-fix", "src/app/time_utils.py", "212"]


def test_the_guard_drops_identifiers_only_the_assistant_gave() -> None:
    s = parse_summary("## Exact identifiers\n- `os.path.getaccess(`, `F_LARGHCADSCREDISABLE`, `/tz-fix`, `212` [e:2]")
    report = guard(s, extract_items(BUILD), BUILD)
    listed = listed_identifiers(s.render())
    assert sorted(listed) == sorted(["212", "build-4471", "feat/tz-fix", "src/app/time_utils.py"])
    assert {r.text for r in report.repaired if r.kind == "unsourced"} == {
        "os.path.getaccess(", "F_LARGHCADSCREDISABLE", "/tz-fix"}


WORK = [
    msg(1, "user", "Hello! I read about queues, e.g. on a blog."),
    msg(2, "user", "I want to add rate limiting to the public API."),
    msg(3, "user", "The Redis client upgrade is done."),
    msg(4, "user", "We still need to write the load test."),
    msg(5, "user", "Can you draft the limiter middleware for api/limits.py?"),
]


def test_the_goal_is_the_latest_and_done_todo_and_latest_request_are_sections() -> None:
    text = extractive_summary(WORK).render()
    assert section_text(text, "Current goal") == "- user: I want to add rate limiting to the public API. [e:2]"
    assert "The Redis client upgrade is done." in section_text(text, "Done")
    assert "We still need to write the load test." in section_text(text, "Still to do")
    assert section_text(text, "Latest user request") == (
        "- user: Can you draft the limiter middleware for api/limits.py? [e:5]")


def test_the_guard_adds_the_latest_request_and_goal_to_a_model_summary() -> None:
    s = parse_summary("## Goal\n- Hello! I read about queues [e:1]")
    guard(s, extract_items(WORK), WORK)
    text = s.render()
    assert "Can you draft the limiter middleware for api/limits.py?" in section_text(text, "Latest user request")
    assert "I want to add rate limiting to the public API." in section_text(text, "Current goal")


def test_a_model_summary_recording_the_assistants_proposal_as_the_users_is_reattributed() -> None:
    events = [msg(1, "user", "How should we schedule retries?"),
              msg(2, "assistant", "We'll use Celery beat every 5 minutes.")]
    s = parse_summary("## Decisions\n- user: Use Celery beat every 5 minutes [e:2]")
    report = guard(s, extract_items(events), events)
    assert s.render().splitlines()[1] == "- assistant (proposal): Use Celery beat every 5 minutes [e:2]"
    assert [r.kind for r in report.repaired if r.kind == "role"] == ["role"]


def test_the_guard_never_re_adds_identifiers_only_the_assistant_gave() -> None:
    s = parse_summary("## Current goal\n- user: Fix the CI build [e:1]\n## Exact identifiers\n"
                      "- user: `build-4471`, `feat/tz-fix`, `src/app/time_utils.py`, `212` [e:1]")
    guard(s, extract_items(BUILD))
    text = s.render()
    for noise in ("getaccess", "F_LARGHCADSCREDISABLE", "/Users/user", "2024", "e.g", "i.e"):
        assert noise not in section_text(text, "Exact identifiers"), text


# --- red team #2: identifier shapes, take-backs that spare the goal, time limits

def test_more_identifier_shapes_are_kept_whole_and_chat_is_not() -> None:
    text = ("Pin sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, run C:\\Users\\bob\\app.exe "
            "on 2001:db8::ff00:42:8329, ship v1.2.3-rc.4+build.5 as arn:aws:iam::123456789012:role/deploy, "
            "tell @nate.smith in #ops-alerts, install to $HOME/bin on узел-сборки-7 for ticket #4512.")
    assert identifiers_in(text) == [
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "C:\\Users\\bob\\app.exe",
        "2001:db8::ff00:42:8329", "v1.2.3-rc.4+build.5", "arn:aws:iam::123456789012:role/deploy", "@nate.smith",
        "#ops-alerts", "$HOME/bin", "узел-сборки-7", "#4512"]
    assert identifiers_in("в 2-х случаях, на 3-м шаге, 5-го числа; a::b, #general, at 10:30") == ["10:30"]


def test_a_take_back_revokes_the_decision_not_the_goal_on_its_topic() -> None:
    events = [msg(1, "user", "The goal is to migrate the billing database to PostgreSQL 15."),
              msg(2, "user", "We decided to use PostgreSQL 15 with the pgbouncer pooler."),
              msg(3, "user", "Actually, scrap that — use SQLite instead of PostgreSQL.")]
    s = extractive_summary(events)
    assert [ln.text for ln in s.section("Current goal")] == [events[0].content]
    assert [(ln.cites, ln.superseded_by) for ln in s.section("Decisions")] == [([2], 3), ([3], None)]


@pytest.mark.parametrize("rule", [
    "Until Friday, keep the feature flag off.", "Keep the cache disabled till end of day.",
    "В течение двух часов не перезапускай сервер.", "До конца недели не трогай конфиг."])
def test_time_limited_rules_are_constraints(rule: str) -> None:
    s = extractive_summary([msg(1, "user", rule)])
    assert [ln.text for ln in s.section("Constraints and rules")] == [rule]


def test_only_the_user_takes_a_decision_back() -> None:
    events = [msg(1, "user", "We decided to use PostgreSQL 15 with the pgbouncer pooler."),
              msg(2, "assistant", "Actually, scrap that — SQLite would be simpler than PostgreSQL."),
              msg(3, "user", "Actually, scrap that — use SQLite instead of PostgreSQL."),
              msg(4, "assistant", "Actually, scrap that — use SQLite instead of PostgreSQL.")]
    decisions = extractive_summary(events).section("Decisions")
    assert [(ln.cites, ln.superseded_by) for ln in decisions if ln.who == "user"] == [([1], 3), ([3], None)]


ORDERS = [
    msg(2, "user", "We will use MySQL 8 for the orders service. Ticket ORD-1234."),
    msg(3, "assistant", "Noted."),
    msg(4, "user", "What do you think about the database?"),
    msg(6, "assistant", "I suggest we use PostgreSQL 16 with the table orders_v2; tracking id ASST-999. "
        "We decided to go with PostgreSQL."),
    msg(7, "user", "Actually, scrap that, we use SQLite for the orders service."),
    msg(8, "assistant", "OK, SQLite."),
    msg(13, "user", "Передумал: мы используем DuckDB вместо SQLite."),
]


def test_scrap_that_takes_back_the_assistants_proposal_just_before_it() -> None:
    # Red team 27, F8: the proposal e:6 that "scrap that" (e:7) answers stayed current; the user's MySQL
    # decision on the same topic was the only one marked.
    decisions = extractive_summary(ORDERS).section("Decisions")
    assert [(ln.who, ln.cites, ln.superseded_by) for ln in decisions] == [
        ("user", [2], 7), ("assistant", [6], 7), ("user", [7], 13), ("user", [13], None)]
    # a model summary that lists the proposal as current has it marked by the guard
    s = parse_summary("## Decisions\n- We decided to go with PostgreSQL. [e:6]\n"
                      "- Передумал: мы используем DuckDB вместо SQLite. [e:13]")
    report = guard(s, extract_items(ORDERS), ORDERS)
    assert [ln.superseded_by for ln in s.section("Decisions") if 6 in ln.cites] == [7]
    assert any(r.kind == "superseded" and r.cites == [6] for r in report.repaired)


@pytest.mark.parametrize("take_back", [
    "Actually, we use SQLite for the billing service.",  # a weak cue: only the same topic
    "Let's also add a cache. Scrap that.",  # the user's own statement is nearer
])
def test_a_take_back_leaves_an_earlier_proposal_it_does_not_answer(take_back: str) -> None:
    events = [msg(1, "user", "Can you suggest a queue for the notifier?"),
              msg(2, "assistant", "We decided to go with RabbitMQ."),
              msg(3, "user", take_back)]
    proposal = [ln for ln in extractive_summary(events).section("Decisions") if ln.who == "assistant"]
    assert [(ln.cites, ln.superseded_by) for ln in proposal] == [([2], None)]
