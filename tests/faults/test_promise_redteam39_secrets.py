"""Red team 39: a password named and then given after a comma ("do not share the staging password, it is
V", "I forgot the router password again, it was V") was kept; Stripe webhook signing secrets (``whsec_…``)
were not redacted at all; "the encryption key: V", "секрет от вебхука — V" (a key word or a qualifier the
prose rule did not know) and a value right after "secret key" / "with pass" with no separator ("deploy
with secret key V", "ship v9 with pass V") were kept."""

from __future__ import annotations

import pytest

from neotask_tui.text.secrets import redact_secrets

W, S = "[REDACTED:password]", "[REDACTED:stripe_key]"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("do not share the staging password, it is zebra-hunter-99", f"do not share the staging password, it is {W}"),
    ("do not share the staging password, it is Zebra9Hunter", f"do not share the staging password, it is {W}"),
    ("I forgot the router password again, it was Plover7711", f"I forgot the router password again, it was {W}"),
    ("the staging password, it's Zebra9Hunter.", f"the staging password, it's {W}."),
    ("the wifi password for the office, it is Kestrel-42", f"the wifi password for the office, it is {W}"),
    ("не свети пароль от стейджинга, он — zebra-hunter-99", f"не свети пароль от стейджинга, он — {W}"),
    ("пароль от роутера опять забыл, это Plover7711", f"пароль от роутера опять забыл, это {W}"),
])
def test_a_password_given_after_a_comma_and_it_is_is_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("whsec_Abc123Def456Ghi789JklMno", S),
    ("the secret for the webhook is whsec_Abc123Def456Ghi789", f"the secret for the webhook is {S}"),
    ("STRIPE_WEBHOOK_SECRET=whsec_Abc123Def456Ghi789JklMno", f"STRIPE_WEBHOOK_SECRET={S}"),
    ("sk_live_Abc123Def456Ghi789 and rk_live_Abc123Def456Ghi789", f"{S} and {S}"),
    ("sk_test_Abc123Def456Ghi789", S),
])
def test_stripe_webhook_secrets_are_redacted_as_the_other_stripe_keys(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "the password, it is stored in the vault", "I forgot the password again, it was annoying",
    "the password expired, it was old", "the password, it is case-sensitive",
    "the password manager, it is 1Password", "the password policy, it is 12-chars",
    "the password hashing, it is Argon2id", "I reset the password again, it was 10am",
])
def test_prose_about_a_password_a_key_or_passing_is_kept(said: str) -> None:
    assert redact_secrets(said) == said
