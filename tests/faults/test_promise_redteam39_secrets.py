"""Red team 39: a password named and then given after a comma ("do not share the staging password, it is
V", "I forgot the router password again, it was V") was kept; Stripe webhook signing secrets (``whsec_…``)
were not redacted at all; "the encryption key: V", "секрет от вебхука — V" (a key word or a qualifier the
prose rule did not know) and a value right after "secret key" / "with pass" with no separator ("deploy
with secret key V", "ship v9 with pass V") were kept."""

from __future__ import annotations

import pytest

from neotask_tui.text.secrets import redact_secrets

W, C, S = "[REDACTED:password]", "[REDACTED:credential]", "[REDACTED:stripe_key]"


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
@pytest.mark.parametrize(("said", "redacted"), [
    ("the encryption key: Puffin3333Enc", f"the encryption key: {C}"),
    ("the signing key is Puffin3333Enc", f"the signing key is {C}"),
    ("master key — Puffin3333Enc", f"master key — {C}"),
    ("секрет от вебхука — Сова4444Тайна", f"секрет от вебхука — {C}"),
    ("токен от бота: Сова4444Тайна", f"токен от бота: {C}"),
    ("the api key for staging: Puffin3333Enc", f"the api key for staging: {C}"),
    ("deploy with secret key Shark8888Key", f"deploy with secret key {C}"),
    ("use the api key Shark8888Key for prod", f"use the api key {C} for prod"),
    ("подписали секретным ключом Сова4444Тайна", f"подписали секретным ключом {C}"),
    ("ship v9 with pass Moose9911Go", f"ship v9 with pass {W}"),
    ("ship v9 with pass MooseGoGo", f"ship v9 with pass {W}"),
    ("pass: Moose9911Go", f"pass: {W}"),
])
def test_more_key_words_and_a_value_right_after_secret_key_or_pass_are_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "the password, it is stored in the vault", "I forgot the password again, it was annoying",
    "the password expired, it was old", "the password, it is case-sensitive",
    "the password manager, it is 1Password", "the password policy, it is 12-chars",
    "the password hashing, it is Argon2id", "I reset the password again, it was 10am",
    "ship v9 with pass rate 99%", "tests pass 100%", "pass the build", "ship it with pass rate above 95",
    "with pass 100%", "merge with pass-through", "with pass PASSING",
    "the secret key rotation is monthly", "set the api key OPENAI_API_KEY first", "the ssh key id_ed25519 is old",
    "the encryption key is rotated", "the encryption key: see the vault", "the signing key RS256",
    "the secret to good coffee is fresh beans", "the secret of the universe is 42",
    "токен от бота лежит в сейфе", "the api key for staging is missing", "the secret to success: Practice",
    "the deploy key is read-only", "the signing key ES256K", "secret key AES256", "the master key rotation",
    "ключ от квартиры — под ковриком",
])
def test_prose_about_a_password_a_key_or_passing_is_kept(said: str) -> None:
    assert redact_secrets(said) == said


# red team 40: the same shape with a full stop or a semicolon for the comma, a word between the password
# word and the comma, a Russian "он" / "это был" for "it"
@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("do not share the db password. It is Lynx8080Moon", f"do not share the db password. It is {W}"),
    ("do not share the staging password; it's Heron5522Gray", f"do not share the staging password; it's {W}"),
    ("keep the staging password secret, it's Kite9090Sky", f"keep the staging password secret, it's {W}"),
    ("не говори никому пароль от стейджинга, он Сова5151Ночь", f"не говори никому пароль от стейджинга, он {W}"),
    ("пароль от роутера опять забыл, это был Plover8822", f"пароль от роутера опять забыл, это был {W}"),
    ("the wifi password again too, it was Plover8822", f"the wifi password again too, it was {W}"),
    ("пароль от вайфая, она Сова5151Ночь", f"пароль от вайфая, она {W}"),
    ("пароль от вайфая снова забыла, это была Plover8822", f"пароль от вайфая снова забыла, это была {W}"),
    ("the db password. It is Lynx8080Moon. Thanks", f"the db password. It is {W}. Thanks"),
    ("the db password; it's \"Lynx8080Moon\"!", f"the db password; it's {W}!"),
])
def test_red_team_40_variants_of_a_password_given_as_it_are_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "the password expired. It is annoying", "the password manager; it's 1Password",
    "keep the password secret, it's important", "пароль от роутера забыл, это было глупо",
    "не говори никому пароль, он секретный", "the password, it is 12-chars",
    "the password expired. It is Monday", "the password policy changed; it's Argon2id now",
    "keep the password secret. It is 10am", "пароль от роутера забыл, это был понедельник",
    "пароль сложный, он длинный", "the password reset. It was SSO",
    "I need a new password too. It was iPhone12 that died", "the password again; it was WiFi6Ready for a week",
])
def test_red_team_40_prose_after_a_password_and_it_is_kept(said: str) -> None:
    assert redact_secrets(said) == said
