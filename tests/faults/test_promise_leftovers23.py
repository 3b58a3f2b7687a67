"""Leftovers of red team 26 closed in session 23: a PIN read out as words was kept as typed; "The
password I use everywhere is …" made a session pick ("Selected: everywhere is [REDACTED:password]")."""

from __future__ import annotations

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.engine.language.rules import classify
from tests.faults.helpers import KEY, assert_redacted, run_turn

VALUE = "Kestrel-" + "Blue-77"  # built at runtime: no literal credential in the repository


@pytest.mark.parametrize(("text", "secret", "kept"), [
    ("My PIN is one three five seven.", "one three five seven", "My PIN is"),
    ("The PIN is one-three-five-seven", "one-three-five-seven", "The PIN is"),
    ("the door code is nine, eight, seven, six, five", "nine, eight", "the door code is"),
    ("my pin: oh four two one", "oh four two one", "my pin:"),
    ("ПИН-код: семь три один девять.", "семь три один девять", "ПИН-код:"),
    ("my pin is four two one nine and my name is Bob", "four two one nine", "and my name is Bob"),
])
def test_a_pin_spelled_out_is_redacted(text: str, secret: str, kept: str) -> None:
    assert_redacted(text, [secret], [kept], "pin", 1)


@pytest.mark.parametrize("text", [
    "The PIN is one of the things I forget.",
    "The pin is two or three digits long",
    "PIN one two three four",  # no "is" or ":": a row of pins, as with spaced digits
    "I have one two three four apples",
])
def test_words_after_a_pin_word_that_are_no_pin_stay(text: str) -> None:
    from neotask_tui.text.secrets import redact_secrets

    assert redact_secrets(text) == text


@pytest.mark.parametrize("text", [
    f"The password I use everywhere is {VALUE}.",
    "The tool we use is ripgrep.",
    "The branch I take every morning was broken.",
])
def test_i_use_in_a_relative_clause_picks_nothing(text: str) -> None:
    assert not [c for c in classify(text) if c.field == "selected_entity"], classify(text)


@pytest.mark.parametrize(("text", "value"), [
    ("Let's use Postgres for this.", "Postgres for this"),
    ("Today we'll use the staging cluster.", "the staging cluster"),
    ("We'll go with option B.", "option B"),
])
def test_a_pick_is_still_a_pick(text: str, value: str) -> None:
    assert [c.value for c in classify(text) if c.field == "selected_entity"] == [value]


async def test_the_password_sentence_leaves_no_pick_in_the_state(engine: Engine) -> None:
    await run_turn(engine, f"The password I use everywhere is {VALUE}", KEY)
    assert engine.state is not None
    view = repr(engine.state.get(KEY))
    assert VALUE not in view and "everywhere is" not in view, view
