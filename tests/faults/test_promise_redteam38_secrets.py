"""Red team 38 (a re-run of red team 37's findings with variants): a passphrase whose clause ends at a
subordinating conjunction ("… low9 because I like birds", "… slow4 yet nobody guesses it") was kept
whole or lost only its first word, and "the password was changed and now it's V" (no comma before
"and") was kept."""

from __future__ import annotations

import pytest

from neotask_tui.text.secrets import redact_secrets

M = "[REDACTED:password]"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("my passphrase is red kite flies low9 because I like birds", f"my passphrase is {M} because I like birds"),
    ("my passphrase is tall tree grows slow4 yet nobody guesses it", f"my passphrase is {M} yet nobody guesses it"),
    ("my passphrase is silver moon rises moon3x since I like astronomy",
     f"my passphrase is {M} since I like astronomy"),
    ("my passphrase is quiet lake waits lake4x unless you forgot it", f"my passphrase is {M} unless you forgot it"),
    ("мой пароль — синий кит летит юговосток2 потому что так проще", f"мой пароль — {M} потому что так проще"),
    ("the password was changed and now it's chgQ16", f"the password was changed and now it's {M}"),
])
def test_a_passphrase_ends_at_any_conjunction_and_a_change_linked_by_and_is_redacted(said: str,
                                                                                        redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "the password is stored in the vault because that is policy",
    "the password was changed and now it is working again",
    "the password expired yesterday and now it's locked",
    "the passphrase is long because the policy wants four words",
])
def test_prose_about_a_password_with_a_conjunction_is_kept(said: str) -> None:
    assert redact_secrets(said) == said
