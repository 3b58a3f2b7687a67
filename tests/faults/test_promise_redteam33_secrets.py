"""Red team 33, findings 8 and 9: a combining mark (U+0332, U+0301) inside a token and decimal digits
of another script (Arabic-Indic, Devanagari) in a token or in the configured key got past the
redactor; a Wi-Fi key after "wifi: <network> /" and a TOTP seed after "otp secret" were kept in the
clear."""

from __future__ import annotations

import pytest

from neotask_tui.providers._sdk import without_keys
from neotask_tui.text.secrets import API_KEY_MARK, redact_secrets

TOKEN = "ghp_" + "aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2"  # built at runtime: no literal credential
KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"


def _digits(text: str, zero: int) -> str:
    return "".join(chr(zero + int(c)) if c.isdigit() else c for c in text)


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("token", [
    TOKEN[:20] + "\u0332" + TOKEN[20:],
    TOKEN[:20] + "\u0301" + TOKEN[20:],
    TOKEN[:8] + "\u0332\u0301" + TOKEN[8:30] + "\u0301" + TOKEN[30:],
    _digits(TOKEN, 0x660),
    _digits(TOKEN, 0x966),
    _digits(TOKEN[:20], 0x6F0) + "\u0332" + TOKEN[20:],
], ids=["low-line", "acute", "several", "arabic-indic", "devanagari", "persian-and-mark"])
def test_combining_marks_and_other_digits_in_a_token_are_seen_through(token: str) -> None:
    out = redact_secrets(f"note {token} end")
    assert out == "note [REDACTED:github_token] end"  # the mask covers the marks and digits too
    assert redact_secrets(out) == out


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "café résumé naïve",  # composed
    "cafe\u0301 re\u0301sume\u0301",  # decomposed accents on ordinary words
    "the year ٢٠٢٤ was fine, room ४२",
    "x\u0332y underlined",
])
def test_ordinary_text_with_marks_and_digits_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("shown", [
    _digits(KEY[8:], 0x660),
    _digits(KEY[8:], 0x966),
    KEY[8:18] + "\u0332" + KEY[18:28] + "\u0301" + KEY[28:],
], ids=["arabic-indic", "devanagari", "marks"])
def test_the_configured_key_with_other_digits_or_marks_is_masked(shown: str) -> None:
    assert without_keys(f"my key {shown} ok", [KEY]) == f"my key {API_KEY_MARK} ok"
    assert without_keys("ok ٢٠٢٤ café", [KEY]) == "ok ٢٠٢٤ café"
