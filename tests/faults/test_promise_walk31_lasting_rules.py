"""Session 31's newcomer walk: "Never delete the bucket s3://acme-ledger-archive." went only to the
inbox as a lasting preference. It was no rule of the session, so the state block did not carry it
and `/new` dropped it (unless the user accepted the proposal). A lasting "never" instruction now
holds in the session from the moment it is said, and is still proposed for long-term memory."""

from __future__ import annotations

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.engine.language.constraints import core
from neotask_tui.engine.language.rules import classify
from tests.faults.helpers import KEY, run_turn

pytestmark = pytest.mark.promise("session_state")


def _rules(engine: Engine) -> list[str]:
    return [str(e.value) for e in engine.state.get(KEY).active if e.field == "constraints"]


@pytest.mark.parametrize(("said", "rule"), [
    ("Never delete the bucket s3://acme-ledger-archive.", "Never delete the bucket s3://acme-ledger-archive"),
    ("From now on, never push to main.", "never push to main"),
    ("Никогда не удаляй бакет logs-prod.", "Никогда не удаляй бакет logs-prod"),
    ("Отныне никогда не пушь в ветку release-9.", "никогда не пушь в ветку release-9"),
])
async def test_a_lasting_never_is_a_rule_now_carried_by_new_and_proposed(engine: Engine, said: str,
                                                                         rule: str) -> None:
    await run_turn(engine, said, KEY)
    assert _rules(engine) == [rule]
    [proposed] = await engine.state.inbox_list(engine.state.scope_context(KEY).agent)
    assert proposed.text.rstrip(".") == said.rstrip(".")
    assert (await engine.new_session(KEY)).carried == 1
    assert _rules(engine) == [rule]
    await engine.reset_session(KEY)  # /reset clears it; the proposal stays in the inbox
    assert _rules(engine) == []
    assert len(await engine.state.inbox_list(engine.state.scope_context(KEY).agent)) == 1


@pytest.mark.parametrize("said", [
    "Always run the tests before committing.",  # a lasting positive preference: the inbox only
    "I never use tabs.",  # a habit, not an instruction
    "He never deletes buckets.",
    "Never mind.",
])
def test_what_is_no_lasting_negated_instruction_makes_no_rule(said: str) -> None:
    assert not [c for c in classify(said) if c.field == "constraints"]


@pytest.mark.parametrize(("sentence", "kept"), [
    ('Do not delete the bucket "x"', 'Do not delete the bucket "x"'),
    ('"Never push to main"', "Never push to main"),
    ('"x" is fine', '"x" is fine'),
])
def test_a_rule_keeps_the_quote_that_closes_a_quoted_name(sentence: str, kept: str) -> None:
    # The rule of 'Do not delete the bucket "x"' was 'Do not delete the bucket "x' (both ends stripped).
    assert core(sentence) == kept


# ------------------------------------------------------------------ red team 38: "nobody may …"


@pytest.mark.parametrize(("said", "rule"), [
    ("никто не должен пушить в ветку release-9", "никто не должен пушить в ветку release-9"),
    ("Никто не смеет трогать прод.", "Никто не смеет трогать прод"),
    ("Никому не разрешено пушить в main.", "Никому не разрешено пушить в main"),
    ("Nobody should push to release-9.", "Nobody should push to release-9"),
    ("No one may touch the prod database.", "No one may touch the prod database"),
])
def test_a_prohibition_on_anybody_is_a_rule_the_summary_keeps(said: str, rule: str) -> None:
    # Red team 38: "никто не должен пушить в ветку release-9" was dropped by compaction and made no
    # session rule ("должен" was not read as "должна/должны" were).
    from neotask_tui.engine.compaction.guard import extract_items, guard
    from neotask_tui.engine.compaction.summary import parse_summary
    from neotask_tui.storage.events import Event

    assert [(c.field, c.value) for c in classify(said)] == [("constraints", rule)]
    events = [Event("message", 1, None, "2025-01-01T00:00:00+00:00", {"role": "user", "content": said})]
    s = parse_summary("## Constraints and rules\n- None.", valid_ids={1})
    guard(s, extract_items(events), events)
    assert f"{said.rstrip('.')}" in s.render() and "[e:1]" in s.render()


@pytest.mark.parametrize("said", [
    "никто не знает, почему", "Никто не может понять, что случилось.", "Никто не должен был это увидеть",
    "nobody should have to deal with that", "nobody may know", "он должен прийти",
])
def test_a_story_or_a_feeling_about_nobody_is_no_rule(said: str) -> None:
    assert not [c for c in classify(said) if c.field == "constraints"]


# ------------------------------------------------------------------ red team 38: "while …" / "пока …"


@pytest.mark.parametrize("said", [
    "пока идёт миграция, держи реплику только на чтение",
    "держи реплику только на чтение, пока не закончится миграция",
    "keep the replica read-only until the migration finishes",
    "While the migration runs, keep the replica read-only",
    "keep the replica read-only while the migration runs",
])
async def test_an_instruction_that_holds_while_something_lasts_is_a_rule_with_its_condition(
        engine: Engine, said: str) -> None:
    # Red team 38: "пока идёт миграция, держи реплику только на чтение" became the preference "идёт
    # миграция, держи реплику только на чтение" ("пока" read as "for now", its "while" lost); the English
    # ones made no entry, so `/new` had nothing to carry.
    from neotask_tui.engine.language.constraints import constraint_kind

    await run_turn(engine, said, KEY)
    assert _rules(engine) == [said]
    assert constraint_kind(said) == "condition"  # and compaction restores it verbatim
    assert (await engine.new_session(KEY)).carried == 1 and _rules(engine) == [said]


@pytest.mark.parametrize("said", [
    "While you are at it, add tests", "Keep it up while you can!", "check out this pic I got a while back!",
    "BTW, I took a road trip for research for my next movie while you were winning.",
    "While I was cooking, the phone rang.", "пока, до встречи",
])
def test_while_in_chat_or_a_story_is_no_rule(said: str) -> None:
    from neotask_tui.engine.language.constraints import constraint_kind

    assert not [c for c in classify(said) if c.field == "constraints"] and constraint_kind(said) is None
