"""Red team 33, findings 8 and 9: a combining mark (U+0332, U+0301) inside a token and decimal digits
of another script (Arabic-Indic, Devanagari) in a token or in the configured key got past the
redactor; a Wi-Fi key after "wifi: <network> /" and a TOTP seed after "otp secret" were kept in the
clear."""

from __future__ import annotations

from pathlib import Path

import pytest

from neotask_tui.commands import dispatch
from neotask_tui.engine.facade import Engine
from neotask_tui.providers._sdk import without_keys
from neotask_tui.text.secrets import API_KEY_MARK, redact_secrets
from tests.faults.helpers import KEY

TOKEN = "ghp_" + "aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2"  # built at runtime: no literal credential
API_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"


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
    _digits(API_KEY[8:], 0x660),
    _digits(API_KEY[8:], 0x966),
    API_KEY[8:18] + "\u0332" + API_KEY[18:28] + "\u0301" + API_KEY[28:],
], ids=["arabic-indic", "devanagari", "marks"])
def test_the_configured_key_with_other_digits_or_marks_is_masked(shown: str) -> None:
    assert without_keys(f"my key {shown} ok", [API_KEY]) == f"my key {API_KEY_MARK} ok"
    assert without_keys("ok ٢٠٢٤ café", [API_KEY]) == "ok ٢٠٢٤ café"


ANSWER = "Flu" + "ffy"
SEED = "JBSWY3DP" + "EHPK3PXP"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("field", ["security_answer", "secret_answer", "mothers_maiden_name", "otp_secret",
                                   "totp_seed"])
async def test_a_state_value_whose_name_is_the_only_cue_is_redacted(engine: Engine, data_dir: Path,
                                                                      field: str) -> None:
    # Red team 33, finding 9: update_session_state(field="security_answer", value="Fluffy") kept it in clear.
    value = SEED if "otp" in field else ANSWER
    res = await dispatch(engine, KEY, f"/state set {field} {value}")
    assert not res.error, res.text
    assert value not in engine.state.block(KEY) and "[REDACTED:" in engine.state.block(KEY)
    assert [p for p in data_dir.rglob("*") if p.is_file() and value.encode() in p.read_bytes()] == []


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "expected"), [
    ("wifi: CafeNet / Tr0ub4dor99", "wifi: CafeNet / [REDACTED:credential]"),
    ("SSID HomeNet / Tr0ub4dor99, ask me for the guest one",
     "SSID HomeNet / [REDACTED:credential], ask me for the guest one"),
    (f"otp secret {SEED}", "otp secret [REDACTED:otp_seed]"),
    (f"my totp seed is {SEED}", "my totp seed is [REDACTED:otp_seed]"),
    ("2fa key: jbsw y3dp ehpk 3pxp", "2fa key: [REDACTED:otp_seed]"),
    (f"security_answer: {ANSWER}", "security_answer: [REDACTED:credential]"),
    (f"mothers_maiden_name={ANSWER}", "mothers_maiden_name=[REDACTED:credential]"),
], ids=["wifi-slash", "ssid-slash", "otp-secret", "totp-seed-is", "2fa-groups", "answer-field", "maiden-field"])
def test_a_wifi_key_after_a_slash_and_an_otp_seed_are_masked(text: str, expected: str) -> None:
    out = redact_secrets(text)
    assert out == expected
    assert redact_secrets(out) == out


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "wifi: 5GHz / 2.4GHz",
    "SSID: Home / WPA2-PSK",
    "wifi: on / off",
    "wifi at home/work is slow",
    "the otp secret management strategy is simple",
    "the totp seed is stored in the vault",
    "our 2FA key fob arrived",
    "set random_seed = 42 and final_answer = compute(x)",
    "the maiden voyage of the ship",
])
def test_ordinary_sentences_near_those_cues_stay(text: str) -> None:
    assert redact_secrets(text) == text
