"""Red team 31, findings 5, 6 and 10: passwords in prose ("passwords written in English or Russian
prose …, PINs … after a cue word", "a passphrase to the end of its clause") that kept part of the
secret in the clear."""

from __future__ import annotations

import pytest

from neotask_tui.text.secrets import redact_secrets

PW = "Qwerty" + "12345"  # built at runtime: no literal credential in the repository


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    (f"Пароль: {PW}!", "Пароль: [REDACTED:password]"),
    (f"password: {PW}!", "password: [REDACTED:password]"),
    (f"пароль {PW}!!", "пароль [REDACTED:password]"),
    (f"мой пароль — {PW}!, запомни это", "мой пароль — [REDACTED:password], запомни это"),
    (f"DB_PASSWORD={PW}?!", "DB_PASSWORD=[REDACTED:password]"),
    (f"the password is {PW}!)", "the password is [REDACTED:password])"),
    ("the passphrase is: hunter two!", "the passphrase is: [REDACTED:password]"),
    ("password: correct horse battery staple!", "password: [REDACTED:password]"),
    # a final period or comma is the sentence's: kept
    (f"password: {PW}.", "password: [REDACTED:password]."),
    (f"password: {PW}. Then log in", "password: [REDACTED:password]. Then log in"),
    (f"password: {PW}, then log in", "password: [REDACTED:password], then log in"),
    # no "!" in a PIN
    ("my PIN was 4821, I changed it to 9921!", "my PIN was [REDACTED:pin], I changed it to [REDACTED:pin]!"),
], ids=["ru-colon-bang", "en-colon-bang", "ru-bare-bangs", "ru-bang-comma", "env-bangs", "bang-paren",
        "passphrase-lead-bang", "passphrase-bang", "period", "period-sentence", "comma", "pin-bang"])
def test_a_password_s_trailing_bang_is_masked_with_it(text: str, expected: str) -> None:
    # Red team 31, finding 10: "Пароль: Qwerty12345!" was stored "Пароль: [REDACTED:password]!".
    out = redact_secrets(text)
    assert out == expected
    assert redact_secrets(out) == out  # idempotent


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "the password I use is great!", "Forgot password? Click here!", "the password policy is strict!",
    "пароль пользователя нужно менять раз в год!",
])
def test_a_bang_after_prose_about_a_password_makes_it_no_password(text: str) -> None:
    assert redact_secrets(text) == text
