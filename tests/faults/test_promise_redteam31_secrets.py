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


ADMIN = "Adm1n!" + "Pass"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    (f"пароль админки: {ADMIN}", "пароль админки: [REDACTED:password]"),
    (f"пароль пользователя: {ADMIN}", "пароль пользователя: [REDACTED:password]"),
    (f"пароль администратора — {ADMIN}", "пароль администратора — [REDACTED:password]"),
    (f"пароль учётной записи: {ADMIN}", "пароль учётной записи: [REDACTED:password]"),
    (f"моя цель — выкатить релиз, пароль админки: {ADMIN}",
     "моя цель — выкатить релиз, пароль админки: [REDACTED:password]"),
    (f"пароль администратора:\n{ADMIN}", "пароль администратора:\n[REDACTED:password]"),
    ("ПИН-код карты: 4821", "ПИН-код карты: [REDACTED:pin]"),
    ("PIN-код карты 4821", "PIN-код карты [REDACTED:pin]"),
    ("ПИН-код карты:\n4821", "ПИН-код карты:\n[REDACTED:pin]"),
    # the English equivalents, redacted before
    (f"the admin password: {ADMIN}", "the admin password: [REDACTED:password]"),
    ("PIN code of the card 4821", "PIN code of the card [REDACTED:pin]"),
], ids=["admin", "user", "administrator-dash", "two-words", "after-goal", "next-line", "pin-colon", "pin-bare",
        "pin-next-line", "en-password", "en-pin"])
def test_a_russian_password_or_pin_with_a_genitive_qualifier_is_redacted(text: str, expected: str) -> None:
    # Red team 31, finding 5: "пароль админки: Adm1n!Pass" was stored verbatim (English has "of": "PIN
    # code of the card 4821"; Russian puts the qualifier in the genitive, with no preposition).
    out = redact_secrets(text)
    assert out == expected
    assert redact_secrets(out) == out


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "пароль пользователя нужно менять раз в год",
    "пароль пользователя был изменён администратором",
    "пароль администратора — это важно",
    "пароль учётной записи: не задан",
    "пароль или логин: admin",
    "пароль пользователей: у каждого свой",
])
def test_a_genitive_qualifier_without_a_value_redacts_nothing(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    ("пароль: корректная лошадь батарейка скрепка", "пароль: [REDACTED:password]"),
    ("пароль — корректная лошадь батарейка скрепка", "пароль — [REDACTED:password]"),
    ("пароль — это корректная лошадь батарейка скрепка", "пароль — это [REDACTED:password]"),
    ("пароль админки: корректная лошадь батарейка скрепка.", "пароль админки: [REDACTED:password]."),
    ("пароль: корректная лошадь батарейка скрепка, логин admin", "пароль: [REDACTED:password], логин admin"),
    ("пароль:\nкорректная лошадь батарейка скрепка", "пароль:\n[REDACTED:password]"),
    ("password: correct horse battery staple", "password: [REDACTED:password]"),
], ids=["colon", "dash", "dash-eto", "qualifier-period", "comma", "next-line", "en"])
def test_a_russian_passphrase_is_masked_to_the_end_of_its_clause(text: str, expected: str) -> None:
    # Red team 31, finding 6: "пароль: корректная лошадь батарейка скрепка" kept all but "корректная".
    out = redact_secrets(text)
    assert out == expected
    assert redact_secrets(out) == out


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "rest"), [
    ("пароль: хранится в сейфе у админа", "в сейфе у админа"),
    ("пароль — менять каждые три месяца", "каждые три месяца"),
    ("пароль был изменён вчера вечером", "вчера вечером"),
])
def test_a_russian_sentence_about_the_password_is_no_passphrase(text: str, rest: str) -> None:
    # (its first word is still taken for a value, as before: only the clause is not taken whole)
    assert redact_secrets(text).endswith(" " + rest)
