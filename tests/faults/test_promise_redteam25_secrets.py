"""README promise (red team 25): a password or PIN in prose is redacted whatever the sentence's shape —
a relative clause or a long qualifier before "is", "the same as before:", "hasn't changed, it's still",
"used to be … and now it's …", several values in one sentence, a PIN answered after its question or
spaced out, a value of symbol-bearing pieces — while ordinary sentences about passwords stay as typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import KEY, assert_redacted, run_turn, sqlite_rows_text

# built at runtime: no literal credential in the repository
EVERYWHERE = "Everywhere" + "Yy7"
VPN = "VpnPw" + "Zz8"
SAME = "SameBefore" + "Xx6"
MANGO = "Mango" + "Tree404"
OLD, NEW = "OldPw" + "Aa1", "NewPw" + "Bb2"
GH, GL = "GhPass" + "One1", "GlPass" + "Two2"
ALPHA, BETA = "AlphaPw" + "11", "BetaPw" + "22"
RU_ALPHA, RU_BETA = "АльфаПар" + "1", "БетаПар" + "2"
PIN = "13" + "57"
SPACED_PIN = "7 3 " + "1 9"
PIECES = "P@ss w0rd" + "!! 55"
SPACED_CUE = "Spaced" + "Cue11"


@pytest.mark.parametrize(("text", "secrets", "kept", "kind"), [
    (f"The password I use everywhere is {EVERYWHERE}", [EVERYWHERE], ["The password I use everywhere is "],
     "password"),
    (f"Password for the VPN account that Alice set up last Tuesday is {VPN}", [VPN],
     ["Password for the VPN account that Alice set up last Tuesday is "], "password"),
    (f"my password is the same as before: {SAME}", [SAME], ["my password is the same as before: "], "password"),
    (f"the admin password hasn't changed, it's still {MANGO}", [MANGO],
     ["the admin password hasn't changed, it's still "], "password"),
    (f"my password used to be {OLD} and now it's {NEW}", [OLD, NEW],
     ["my password used to be ", " and now it's "], "password"),
    (f"Password for github: {GH}, for gitlab: {GL}", [GH, GL], ["Password for github: ", ", for gitlab: "],
     "password"),
    (f"The passwords are {ALPHA} and {BETA}", [ALPHA, BETA], ["The passwords are ", " and "], "password"),
    (f"Пароли: {RU_ALPHA} и {RU_BETA}", [RU_ALPHA, RU_BETA], ["Пароли: ", " и "], "password"),
    (f"My PIN? {PIN}.", [PIN], ["My PIN? "], "pin"),
    (f"The PIN is {SPACED_PIN}.", [SPACED_PIN, "7 3"], ["The PIN is "], "pin"),
    (f"my password is {PIECES}", [PIECES, "w0rd", "55"], ["my password is "], "password"),
    (f"pass word is {SPACED_CUE}", [SPACED_CUE], ["pass word is "], "password"),
])
def test_a_password_in_an_unusual_sentence_is_redacted(text: str, secrets: list[str], kept: list[str],
                                                       kind: str) -> None:
    assert_redacted(text, secrets, kept, kind, markers=len(kept))  # one marker per value


@pytest.mark.parametrize("text", [
    "The password I use everywhere is weak, I know.",
    "The password policy that IT set up last Tuesday is strict.",
    "my password is the same as before.",
    "the admin password hasn't changed.",
    "my password used to be shorter.",
    "The passwords are stored in the vault and rotated monthly.",
    "My PIN? I forgot it.",
    "The PIN is 4 digits long.",
    "Пароли хранятся в менеджере.",
    # near misses of the new shapes
    "The password I use everywhere is simple.",
    "the password hasn't changed, it's still working",
    "the password doesn't work",
    "The passwords are long, and complex",
    "Password for github: see the wiki, for gitlab: ask Bob",
    "Connect pin 3 4 5 6 to the header",
    "the pass word is what matters",
])
def test_ordinary_sentences_about_passwords_stay_as_typed(text: str) -> None:
    assert redact_secrets(text) == text


async def test_red_team_25_passwords_stay_out_of_the_search_index(engine: Engine, data_dir: Path) -> None:
    for text in (f"The password I use everywhere is {EVERYWHERE}",
                 f"the admin password hasn't changed, it's still {MANGO}",
                 f"Password for github: {GH}, for gitlab: {GL}"):
        await run_turn(engine, text, KEY)
    blob = sqlite_rows_text(data_dir)
    assert "use everywhere" in blob and "hasn't changed" in blob and "for gitlab" in blob  # indexed
    for secret in (EVERYWHERE, MANGO, GH, GL):
        assert secret not in blob
