"""Negated directives in a user message ("do not use any paid tools", "не используй Redis") become
session rules (``constraints``, scope session) with the message as their source — on the first message
of a session as on later ones — while chatter ("don't worry", "I don't know") makes nothing (#17)."""

from __future__ import annotations

import pytest

from neotask_tui.engine.events import Notice
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.language.classifier import classify
from neotask_tui.engine.state.model import StateEntry
from neotask_tui.providers.scripted import ScriptedProvider
from tests.engine.state_support import KEY, st


async def say(eng: Engine, text: str) -> list[str]:
    """One turn; the notices it showed."""
    prov = eng.provider
    assert isinstance(prov, ScriptedProvider)
    prov.queue("ok")
    return [e.text for e in [x async for x in eng.send(text, KEY)] if isinstance(e, Notice)]


def rules(eng: Engine) -> list[StateEntry]:
    return [e for e in st(eng).get(KEY).active if e.field == "constraints"]


def user_event_id(eng: Engine, text: str) -> int:
    [ev] = [e for e in eng.events(KEY) if e.type == "message" and e.role == "user" and e.content == text]
    return ev.id


async def test_first_message_of_a_session_is_captured(engine: Engine) -> None:
    notices = await say(engine, "Please do not use any paid tools.")
    [rule] = rules(engine)
    assert rule.value == "do not use any paid tools"
    assert rule.scope == "session" and rule.scope_ref == engine.current_record(KEY).session_id
    assert rule.source == f"e:{user_event_id(engine, 'Please do not use any paid tools.')}"
    assert "Rules: do not use any paid tools" in notices
    # It is in the state block of the context the model gets.
    assert "- Rules: do not use any paid tools." in st(engine).block(KEY)
    ctx = await engine.context(KEY, "Which tools can you use?")
    assert any("Rules: do not use any paid tools" in m.content for m in ctx.messages)
    # Nothing is proposed for long-term memory: a rule said once is not a lasting preference.
    assert await st(engine).inbox_list("main") == []


async def test_later_message_is_captured(engine: Engine) -> None:
    await say(engine, "I want to migrate the billing service.")
    await say(engine, "Do not use Redis anywhere in the migration.")
    [rule] = rules(engine)
    assert rule.value == "Do not use Redis anywhere in the migration"
    assert rule.source == f"e:{user_event_id(engine, 'Do not use Redis anywhere in the migration.')}"


@pytest.mark.parametrize("text", [
    "Don't worry about it.",
    "I don't know.",
    "Can't wait to see it!",
    "I can't wait to try it.",
    "Don't be afraid to ask.",
    "No worries, thanks!",
    "We don't know yet.",
    "Не волнуйся.",
    "Я не знаю.",
    "Не переживай, всё получится.",
    "Мы не знаем, что делать.",
    "Don't you think so?",
    "It avoids the crash.",
    "The tests do not pass on CI.",
    "This change doesn't touch the schema.",
    "Он не знает, где лежит ключ.",
])
async def test_chatter_is_not_captured(engine: Engine, text: str) -> None:
    await say(engine, text)
    assert st(engine).get(KEY).active == []


@pytest.mark.parametrize(("text", "value"), [
    ("Не используй платные сервисы.", "Не используй платные сервисы"),
    ("Пожалуйста, не трогай базу данных.", "не трогай базу данных"),
    ("Не надо ничего удалять.", "Не надо ничего удалять"),
])
async def test_russian_negated_directive_is_captured(engine: Engine, text: str, value: str) -> None:
    await say(engine, text)
    assert [(e.value, e.scope, e.source) for e in rules(engine)] == [
        (value, "session", f"e:{user_event_id(engine, text)}")]


async def test_one_rule_among_chatter_in_one_message(engine: Engine) -> None:
    await say(engine, "Don't worry, I don't know yet. Don't push to main.")
    assert [e.value for e in rules(engine)] == ["Don't push to main"]


@pytest.mark.parametrize(("text", "kind"), [
    ("For this project don't use external dependencies.", "project_rule"),
    ("Today don't answer in English.", "temporary_preference"),
    ("From now on don't use emojis.", "promotion"),
    ("Always avoid global state.", "promotion"),
    ("Never commit to main.", "promotion"),
    ("Никогда не коммить в main.", "promotion"),
    ("Don't remember this.", None),
])
def test_statements_already_classified_stay_as_they_are(text: str, kind: str | None) -> None:
    assert [c.kind for c in classify(text)] == ([kind] if kind else [])


async def test_project_rule_is_not_also_a_session_rule(engine: Engine) -> None:
    await engine.set_session_config(KEY, project="alpha")
    await say(engine, "For this project don't use external dependencies.")
    assert [(e.value, e.scope) for e in rules(engine)] == [
        ("For this project don't use external dependencies", "project")]


async def test_new_carries_the_rule_and_reset_clears_it(engine: Engine) -> None:
    await say(engine, "Please do not use any paid tools.")
    old = engine.current_record(KEY).session_id
    r = await engine.new_session(KEY)
    assert r.carried == 1
    [rule] = rules(engine)
    assert rule.value == "do not use any paid tools" and rule.carried_from == old
    assert "do not use any paid tools" in st(engine).block(KEY)
    await engine.reset_session(KEY)
    assert rules(engine) == [] and st(engine).block(KEY) == ""


@pytest.mark.parametrize(("text", "value"), [
    # Red team 37, finding 3: a "do not" led by "under no circumstances" (Russian) and a prohibition with no
    # "not" never became session rules.
    ("под никаким предлогом не удаляй бакет logs-prod", "под никаким предлогом не удаляй бакет logs-prod"),
    ("Ни при каких условиях не перезапускай db-7.", "Ни при каких условиях не перезапускай db-7"),
    ("Under no circumstances delete the bucket logs-prod.", "Under no circumstances delete the bucket logs-prod"),
    ("make sure nobody force-pushes to main", "make sure nobody force-pushes to main"),
])
async def test_a_do_not_led_by_under_no_circumstances_or_by_nobody_is_captured(
        engine: Engine, text: str, value: str) -> None:
    await say(engine, text)
    assert [(e.value, e.source) for e in rules(engine)] == [(value, f"e:{user_event_id(engine, text)}")]
