"""Red team 38's leftovers: "the key for the padlock is 4-4-1-9" and "the combination for the safe is
12-34-56" were kept (a code in dashed groups; "key for the padlock" was no cue), "I reset the password,
now it is chg7x" was kept (five characters were too short after "now it is"), and "the password is
hard to remember" lost "hard" (an adjective taken for the password)."""

from __future__ import annotations

import pytest

from neotask_tui.text.secrets import redact_secrets

P, W = "[REDACTED:pin]", "[REDACTED:password]"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("the key for the padlock is 4-4-1-9", f"the key for the padlock is {P}"),
    ("the key for the padlock is 4419", f"the key for the padlock is {P}"),
    ("the combination for the safe is 12-34-56", f"the combination for the safe is {P}"),
    ("the code for the door is 12.34.56", f"the code for the door is {P}"),
    ("My PIN? 4-4-1-9.", f"My PIN? {P}."),
    ("I reset the password, now it is chg7x", f"I reset the password, now it is {W}"),
    ("пароль поменял, теперь он q7wz9", f"пароль поменял, теперь он {W}"),
])
def test_grouped_codes_and_a_short_new_password_are_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "the password is hard to remember", "the password is easy to guess", "the key to the safe is in the drawer",
    "the door code was set on 2024-01-05", "the release is 1.2.3", "the code for the door is 1-2",
    "I reset the password; now it is 10am", "I reset the password, now it is fine",
    "I reset the password; now it is 512MB",
])
def test_prose_about_a_password_or_a_lock_is_kept(said: str) -> None:
    assert redact_secrets(said) == said
