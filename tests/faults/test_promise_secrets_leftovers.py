"""Leftovers of earlier red-team reports on the secret redactor: a mother's maiden name, a bank's code
word and a card's CVV were kept in the clear (in ``MEMORY.md`` through ``memory add``, and in
transcripts); a parenthesised remark ("password (optional)") and a Russian verb phrase ("пароль был
изменён") were masked as if they were passwords; a password after a change verb, on the line after
"as follows:" or after a dash aside ("пароль — вот он — V") is masked."""

from __future__ import annotations

from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import cli

PW = "Kx9f" + "T2pq4"  # built at runtime: no literal credential in the repository


def _masked(text: str, expected: str) -> None:
    out = redact_secrets(text)
    assert out == expected
    assert redact_secrets(out) == out  # idempotent


# -- 1. security answers, code words and card codes ------------------------------------------------

@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    ("mother's maiden name: Smith", "mother's maiden name: [REDACTED:password]"),
    ("my mother's maiden name is Smith", "my mother's maiden name is [REDACTED:password]"),
    ("My mother’s maiden name — Smith-Jones.", "My mother’s maiden name — [REDACTED:password]."),
    ("the maiden name is Smith, and the PIN is unset", "the maiden name is [REDACTED:password], and the PIN is unset"),
    ("девичья фамилия матери: Иванова", "девичья фамилия матери: [REDACTED:password]"),
    ("кодовое слово для банка: Барсик", "кодовое слово для банка: [REDACTED:password]"),
    ("кодовое слово — Барсик", "кодовое слово — [REDACTED:password]"),
    ("Кодовое слово: синий кот.", "Кодовое слово: [REDACTED:password]."),
    ("the code word for the bank: Bluebird", "the code word for the bank: [REDACTED:password]"),
], ids=["en-colon", "en-is", "en-dash", "en-bare", "ru-maiden", "ru-code-word-for", "ru-code-word-dash",
        "ru-code-word-words", "en-code-word"])
def test_a_maiden_name_and_a_code_word_are_masked(text: str, expected: str) -> None:
    _masked(text, expected)


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    ("код CVV 337", "код CVV [REDACTED:cvv]"),
    ("the CVV is 337", "the CVV is [REDACTED:cvv]"),
    ("CVC: 123", "CVC: [REDACTED:cvv]"),
    ("CVV2 337", "CVV2 [REDACTED:cvv]"),
    ("card 4111, CVV code 4821.", "card 4111, CVV code [REDACTED:cvv]."),
    ("CVV-код: 337", "CVV-код: [REDACTED:cvv]"),
], ids=["ru-kod", "en-is", "cvc-colon", "cvv2", "en-code", "ru-cvv-kod"])
def test_a_card_security_code_is_masked(text: str, expected: str) -> None:
    _masked(text, expected)


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "what is your mother's maiden name?",
    "the mother's maiden name is a common security question",
    "the maiden name is required",
    "кодовое слово не задано",
    "the CVV is 3 or 4 digits on the back of the card",
    "CVV validation failed twice",
    "CVV2 checks are optional",
])
def test_prose_about_these_secrets_is_left_alone(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.promise("secrets")
def test_memory_add_stores_them_masked(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    lines = ["my mother's maiden name is Smithson", "кодовое слово для банка: Барсик", "the CVV is 337"]
    out = cli("memory", "add", "-", stdin="\n".join(lines))
    assert out.returncode == 0, out.stderr
    md = (paths.workspace_dir("main") / "MEMORY.md").read_text(encoding="utf-8")
    for secret in ("Smithson", "Барсик", "337"):
        assert secret not in md
    assert "maiden name is [REDACTED:password]" in md and "CVV is [REDACTED:cvv]" in md


# -- 2. a remark or a verb phrase is no password -----------------------------------------------------

@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "the password (optional)",
    "password (optional) field",
    "the password (optional) field is blank",
    "password: (optional)",
    "password: (see below)",
    "the password [optional] for the admin",
    "пароль (необязательно)",
    "пароль был изменён вчера",
    "пароль был изменен вчера вечером",
    "пароль была сброшена",
    "пароль был слишком короткий",
    "пароль остаётся прежним",
    "токен был отозван вчера",
    "пароль остаётся\nпрежним",
])
def test_a_remark_or_a_verb_phrase_is_no_password(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    (f"пароль был {PW}", "пароль был [REDACTED:password]"),
    ("пароль был Барсик", "пароль был [REDACTED:password]"),
    (f"the password (optional) is {PW}", "the password (optional) is [REDACTED:password]"),
], ids=["ru-was-value", "ru-was-name", "en-remark-then-value"])
def test_a_value_after_the_same_words_is_still_masked(text: str, expected: str) -> None:
    _masked(text, expected)


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [f"password: ({PW})", f"the password ({PW})", f"PASSWORD=[{PW}]"])
def test_a_password_in_brackets_is_still_masked(text: str) -> None:
    assert PW not in redact_secrets(text)


# -- 3. a value after a change verb, on the next line, after a dash aside ------------------------------

@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    (f"сменил пароль админки на {PW}", "сменил пароль админки на [REDACTED:password]"),
    (f"changed the admin password to {PW}", "changed the admin password to [REDACTED:password]"),
    (f"my password is as follows:\n{PW}", "my password is as follows:\n[REDACTED:password]"),
    (f"пароль — вот он — {PW}", "пароль — вот он — [REDACTED:password]"),
    (f"the password — here it is — {PW}", "the password — here it is — [REDACTED:password]"),
    (f"пароль от NAS — вот он — {PW}, не теряй", "пароль от NAS — вот он — [REDACTED:password], не теряй"),
], ids=["ru-changed-to", "en-changed-to", "en-as-follows-next-line", "ru-dash-aside", "en-dash-aside",
        "ru-dash-aside-for"])
def test_a_password_after_a_change_verb_a_line_break_or_a_dash_aside_is_masked(text: str, expected: str) -> None:
    _masked(text, expected)


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "the password — which I changed — expired yesterday",
    "пароль — как обычно — не работает",
    "password - see the wiki - for details",
])
def test_a_dash_aside_before_plain_words_is_no_password(text: str) -> None:
    assert redact_secrets(text) == text
