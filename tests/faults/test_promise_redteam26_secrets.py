"""README promise (red team 26): a password or PIN in prose is redacted whatever the sentence's shape —
"still the same as before:", "всё тот же:", "were V and V2", "has not changed; still V", "не менялся,
всё ещё V", "I'll use from now on is V", "Same password as always, V", a value before the cue word
("used to be V and now the password is V2"), "is going to be V", "will be\\nV starting Monday", symbol-
bearing pieces before a plain word, "ПИН-код 7 3 1 9" — while ordinary sentences stay as typed."""

from __future__ import annotations

import pytest

from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import assert_redacted

# built at runtime: no literal credential in the repository
KESTREL = "Kestrel-" + "Blue-77"
HUNTER = "Hunter-" + "Old-11"
MARBLE = "Marble-" + "Otter-52"
PIECES = "P@ss w0rd" + "!! 55"
SPACED_PIN = "7 3 " + "1 9"
WHOLE = (KESTREL, HUNTER, MARBLE, PIECES, SPACED_PIN)  # the values; other secrets are parts


@pytest.mark.parametrize(("text", "secrets", "kept", "kind"), [
    (f"my password is still the same as before: {KESTREL}", [KESTREL],
     ["my password is still the same as before: "], "password"),
    (f"Мой пароль всё тот же: {KESTREL}", [KESTREL], ["Мой пароль всё тот же: "], "password"),
    (f"The passwords were {KESTREL} and {HUNTER}", [KESTREL, HUNTER], ["The passwords were ", " and "],
     "password"),
    (f"Пароли были {KESTREL} и {HUNTER}", [KESTREL, HUNTER], ["Пароли были ", " и "], "password"),
    (f"the admin password has not changed; still {KESTREL}", [KESTREL],
     ["the admin password has not changed; still "], "password"),
    (f"Пароль от админки не менялся, всё ещё {KESTREL}", [KESTREL],
     ["Пароль от админки не менялся, всё ещё "], "password"),
    (f"The password I'll use from now on is {KESTREL}", [KESTREL], ["The password I'll use from now on is "],
     "password"),
    (f"Same password as always, {KESTREL}", [KESTREL], ["Same password as always, "], "password"),
    (f"it used to be {HUNTER} and now the password is {KESTREL}", [HUNTER, KESTREL],
     ["it used to be ", " and now the password is "], "password"),
    (f"Our wifi password is going to be {KESTREL}", [KESTREL], ["Our wifi password is going to be "],
     "password"),
    (f"the password will be\n{MARBLE} starting Monday", [MARBLE], ["the password will be\n", " starting Monday"],
     "password"),
    (f"my password is {PIECES} okay", [PIECES, "w0rd", "55"], ["my password is ", " okay"], "password"),
    (f"ПИН-код {SPACED_PIN}", [SPACED_PIN, "7 3"], ["ПИН-код "], "pin"),
])
def test_a_password_in_an_unusual_sentence_is_redacted(text: str, secrets: list[str], kept: list[str],
                                                       kind: str) -> None:
    assert_redacted(text, secrets, kept, kind, markers=len([s for s in secrets if s in WHOLE]))  # one per value


@pytest.mark.parametrize("text", [
    "The password will be sent by email tomorrow.",
    "my password is still the same as before.",
    "The passwords were stored in plain text.",
    "Пароли были в менеджере.",
    "the admin password has not changed; still no word from IT.",
    "The password I'll use from now on is stronger.",
    "Same password as always, I guess.",
    "it used to be fine and now the password is broken.",
    "The password is going to change soon.",
    "ПИН-код из четырёх цифр.",
    # near misses of the new shapes
    "The password is going to be changed.",
    "Connect pin 3 4 5 6 to the header",
    "пин 3 4 5 6 на плате",
])
def test_ordinary_sentences_about_passwords_stay_as_typed(text: str) -> None:
    assert redact_secrets(text) == text
