"""Red team 39: the README promises that compaction never loses a "do not" and that the review names what
it leaves out. With an extractive compaction,

1. "ничего не удаляй без моего разрешения", "без моего разрешения ничего не удаляй", "not a single deploy on
   sunday", "hold off on upgrading postgres" and "I'd prefer you didn't rename the tables" were dropped from
   the summary with nothing in the review, and none was a rule of the session;
2. after "не стоит менять схему" (e:6), "лучше не трогай миграции" (e:9) was filed under Decisions and the
   schema rule marked "(superseded by e:9)": the two shared no word but "не", and "лучше" is a take-back cue;
3. "Don’t touch the cache layer" (a typographic apostrophe) and "it is forbidden to merge without review"
   were constraints the guard kept, but no session rules.
"""

from __future__ import annotations

import pytest

from neotask_tui.engine.compaction.guard import CriticalItem, extract_items, guard
from neotask_tui.engine.compaction.summary import Summary, parse_summary
from neotask_tui.engine.language.constraints import constraint_kind
from neotask_tui.engine.language.rules import classify
from neotask_tui.storage.events import Event

pytestmark = pytest.mark.promise("compaction")


def _events(said: dict[int, str], last: int) -> list[Event]:
    """Events 1..``last``: the user says ``said[i]`` at ``i``; other turns are filler from both sides."""
    out = []
    for i in range(1, last + 1):
        user = i in said or i % 2 == 0
        text = said.get(i, "Продолжаем работу над отчётом." if user else "Хорошо.")
        out.append(Event("message", i, i - 1, "2025-01-01T00:00:00+00:00",
                         {"role": "user" if user else "assistant", "content": text}))
    return out


def _compact(said: dict[int, str], last: int) -> tuple[Summary, list[CriticalItem]]:
    events = _events(said, last)
    items = extract_items(events)
    s = parse_summary("## Constraints and rules\n- None.", valid_ids=set(range(1, last + 1)))
    guard(s, items, events)
    return s, items


def _rules(said: str) -> list[str | None]:
    return [c.value for c in classify(said) if c.field == "constraints"]


# ------------------------------------------------------------------ 1. rules in shapes the guard did not know


@pytest.mark.parametrize("said", [
    "ничего не удаляй без моего разрешения",
    "без моего разрешения ничего не удаляй",
    "not a single deploy on sunday",
    "hold off on upgrading postgres",
    "I'd prefer you didn't rename the tables",
])
def test_a_do_not_in_a_new_shape_is_restored_verbatim_and_is_a_session_rule(said: str) -> None:
    assert constraint_kind(said) == "negation"
    s, _ = _compact({2: said}, 3)
    assert f"user: {said} [e:2]" in s.render()
    assert _rules(said) == [said]


@pytest.mark.parametrize("said", [
    "Ничего не удаляй.", "Никому не говори пароль от стенда.", "без ревью не мержи в main",
    "better not touch the migrations", "You'd better not push to main.", "лучше не трогать миграции",
    "Not one more deploy this week.", "I'd rather you didn't touch prod.",
])
def test_more_of_those_shapes_are_rules(said: str) -> None:
    assert constraint_kind(said) == "negation"
    assert _rules(said) == [said.rstrip(".")]


@pytest.mark.parametrize("said", [
    "not a single person came", "Not one of them showed up.", "Not a single thing I tried worked.",
    "I'd prefer you didn't worry", "I'd rather you didn't.", "ничего не знаю", "Ничего не случилось.",
    "ничего не нашли", "Ничего не понимаешь?", "лучше не бывает", "мне лучше не стало", "лучше не знать",
    "I'd better not eat more cake.", "Ничего не бойся.",
])
def test_chat_and_stories_in_those_shapes_stay_no_rules(said: str) -> None:
    assert constraint_kind(said) != "negation"
    assert _rules(said) == []


def test_hold_off_until_an_event_is_still_a_rule_with_its_condition() -> None:
    assert _rules("hold off until I call you") == ["hold off until I call you"]


# ------------------------------------------------------------------ 2. "лучше не …" is a rule, no take-back


def test_a_second_rule_led_by_better_does_not_take_back_an_unrelated_rule() -> None:
    s, items = _compact({6: "не стоит менять схему", 9: "лучше не трогай миграции"}, 10)
    shown = s.render()
    assert "superseded" not in shown
    assert [(i.kind, i.text, i.superseded_by) for i in items if i.kind == "constraint"] == [
        ("constraint", "не стоит менять схему", None), ("constraint", "лучше не трогай миграции", None)]
    rules = shown.split("## Constraints and rules", 1)[1]
    assert "user: не стоит менять схему [e:6]" in rules and "user: лучше не трогай миграции [e:9]" in rules
    assert "## Decisions" not in shown


def test_an_english_better_not_rule_does_not_take_back_an_unrelated_rule() -> None:
    s, items = _compact({6: "Don't change the schema.", 9: "Actually, better not touch the migrations either."}, 10)
    assert "superseded" not in s.render()
    assert all(i.superseded_by is None for i in items)


@pytest.mark.parametrize(("first", "then"), [
    ("не стоит менять схему", "передумал, меняй схему"),
    ("Давай поменяем схему.", "Лучше не трогай схему."),
    ("Don't change the schema.", "Actually, change the schema after all."),
])
def test_a_real_take_back_of_the_same_thing_still_supersedes(first: str, then: str) -> None:
    s, items = _compact({6: first, 9: then}, 10)
    assert [i.superseded_by for i in items if i.text == first] == [9]
    assert f"- user: {first}" not in s.render()  # restored as superseded (a rule) or left out (a decision)


# ------------------------------------------------------------------ 3. constraints that were no session rules


@pytest.mark.parametrize("said", [
    "Don’t touch the cache layer",
    "it is forbidden to merge without review",
    "It's not allowed to push on Fridays",
])
def test_a_constraint_with_a_typographic_apostrophe_or_an_impersonal_ban_is_a_session_rule(said: str) -> None:
    assert constraint_kind(said) == "negation"
    assert _rules(said) == [said]


# ------------------------------------------------------------------ red team 40: variants of the three findings


@pytest.mark.parametrize(("first", "then"), [
    ("без разрешения ничего не трогай в проде", "лучше не трогай миграции"),
    ("не стоит менять схему", "лучше не лезь в схему биллинга"),
    ("do not touch prod without permission", "actually, better not touch the migrations either"),
])
def test_a_weak_cue_before_a_second_prohibition_takes_no_rule_back(first: str, then: str) -> None:
    # Red team 40: they shared a verb ("трогай") or a topic ("схему"), and "лучше" marked the first rule
    # "(superseded by e:11)": a prohibition after a weak cue adds a rule, it revokes no other prohibition.
    s, items = _compact({6: first, 9: then}, 12)
    assert "superseded" not in s.render()
    assert all(i.superseded_by is None for i in items if i.kind == "constraint")


@pytest.mark.parametrize("said", [
    "ни одного деплоя в воскресенье",
    "nothing gets deleted without my permission",
    "nothing should be deleted without my permission",
    "hold off upgrading postgres",
])
def test_more_shapes_are_restored_verbatim_and_are_session_rules(said: str) -> None:
    s, _ = _compact({6: said}, 12)
    assert f"{said} [e:6]" in s.render()
    assert _rules(said) == [said]


@pytest.mark.parametrize("said", [
    "пожалуй, не стоит трогать кэш", "merging without review is forbidden",
    "Merging without a review is strictly forbidden.", "merges without review are not allowed",
    "deleting anything without my permission is not allowed", "you are not allowed to merge without review",
    "мержить без ревью запрещено", "удалять что-либо без моего разрешения нельзя",
])
def test_a_ban_stated_after_what_it_bans_is_a_session_rule(said: str) -> None:
    assert len(_rules(said)) == 1


@pytest.mark.parametrize("said", [
    "ни одного звонка не было", "ни одного не нашли", "nothing gets done around here", "nothing was there",
    "Swimming is not allowed in that lake, sadly.", "It is not allowed", "Это нельзя", "Nothing beats a good book",
])
def test_stories_in_those_shapes_make_no_rule(said: str) -> None:
    assert _rules(said) == []
