"""Red team 32, findings 1 and 9: a password right after an aside ("an aside such as "(don't tell
anyone)" between the word and the value") and after a "here it comes" lead-in ("пароль у меня такой:",
"my password is as follows:") was kept in the clear."""

from __future__ import annotations

import pytest

from neotask_tui.text.secrets import redact_secrets

PW = "Kx9f" + "T2pq0"  # built at runtime: no literal credential in the repository


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    (f"the password (don't tell anyone) {PW}", "the password (don't tell anyone) [REDACTED:password]"),
    (f"my password (don't tell anyone) {PW}", "my password (don't tell anyone) [REDACTED:password]"),
    (f"the wifi password (secret!) {PW}", "the wifi password (secret!) [REDACTED:password]"),
    (f"password (shh) {PW}", "password (shh) [REDACTED:password]"),
    (f"пароль (никому!) {PW}", "пароль (никому!) [REDACTED:password]"),
    (f"пароль (никому не говори) {PW}", "пароль (никому не говори) [REDACTED:password]"),
    (f"the password (don't tell anyone) is {PW}", "the password (don't tell anyone) is [REDACTED:password]"),
    (f"пароль (никому!): {PW}", "пароль (никому!): [REDACTED:password]"),
    (f"password (shh) {PW} and the user is bob", "password (shh) [REDACTED:password] and the user is bob"),
], ids=["en-the", "en-my", "en-bang", "en-shh", "ru-bang", "ru-words", "en-is", "ru-colon", "en-more"])
def test_a_password_right_after_an_aside_is_masked(text: str, expected: str) -> None:
    # Red team 32, finding 1: "the password (don't tell anyone) Kx9fT2pq0" masked "(don't" and kept the value.
    out = redact_secrets(text)
    assert out == expected
    assert redact_secrets(out) == out


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "the password (see below) is required",
    "my password (shh) hunter",
    "password (optional) for the admin",
    "пароль (никому!) не говори",
])
def test_an_aside_before_a_plain_word_is_no_password(text: str) -> None:
    out = redact_secrets(text)
    assert "(see below)" in out or "hunter" in out or "for the admin" in out or "не говори" in out


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    (f"пароль у меня такой: {PW}", "пароль у меня такой: [REDACTED:password]"),
    (f"пароль вот такой — {PW}", "пароль вот такой — [REDACTED:password]"),
    (f"пароль у меня вот такой: {PW}", "пароль у меня вот такой: [REDACTED:password]"),
    (f"my password is as follows: {PW}", "my password is as follows: [REDACTED:password]"),
    (f"the password is the following: {PW}", "the password is the following: [REDACTED:password]"),
    (f"password as follows: {PW}", "password as follows: [REDACTED:password]"),
], ids=["ru-u-menya", "ru-vot", "ru-u-menya-vot", "en-as-follows", "en-the-following", "en-bare-as-follows"])
def test_a_password_after_a_here_it_comes_lead_in_is_masked(text: str, expected: str) -> None:
    # Red team 32, finding 9: "пароль у меня такой: Kx9fT2pq1" stayed in clear.
    out = redact_secrets(text)
    assert out == expected
    assert redact_secrets(out) == out


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "пароль у меня такой же, как у тебя",
    "the password policy is as follows: at least 12 characters",
    "пароль вот такой длинный, что не запомнить",
    "the password requirements are the following ones",
])
def test_a_here_it_comes_lead_in_in_prose_is_no_password(text: str) -> None:
    assert redact_secrets(text) == text
