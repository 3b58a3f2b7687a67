"""Secret redaction: common key formats, assignments, PEM keys, high-entropy strings, no false alarms."""

from __future__ import annotations

import pytest

from neotask_tui.text.secrets import find_secrets, has_secrets, redact_secrets

# Built at runtime so no literal credential-looking string sits in the repository.
OPENAI = "sk-" + "A1b2C3d4E5f6G7h8I9j0" * 2
OPENAI_PROJ = "sk-proj-" + "Xy7_Zq3-" * 5
ANTHROPIC = "sk-ant-api03-" + "Qw9Er8Ty7Ui6" * 3
GITHUB = "ghp_" + "a1B2c3D4e5" * 4
GITHUB_OAUTH = "gho_" + "Z9y8X7w6V5" * 4
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" * 3 + "_" + "x" * 20
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
SLACK = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOp"
GOOGLE = "AIza" + "SyA-1234567890abcdefghijklmnopqrs"
JWT = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV"
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQUJDREVG\n"
       "-----END OPENSSH PRIVATE KEY-----")
HIGH_ENTROPY = "Zx8Qp2Lm9Vt4Rk7Wn3Yb6Hc1Jd5Gf0SeTa"


@pytest.mark.parametrize(("secret", "kind"), [
    (OPENAI, "openai_key"), (OPENAI_PROJ, "openai_key"), (ANTHROPIC, "anthropic_key"),
    (GITHUB, "github_token"), (GITHUB_OAUTH, "github_token"), (GITHUB_PAT, "github_token"),
    (AWS, "aws_access_key"), (SLACK, "slack_token"), (GOOGLE, "google_api_key"), (JWT, "jwt"),
    (PEM, "private_key"), (HIGH_ENTROPY, "high_entropy"),
])
def test_known_formats_are_found_and_redacted(secret: str, kind: str) -> None:
    text = f"please use {secret} for the deploy"
    found = find_secrets(text)
    assert [s.kind for s in found] == [kind]
    out = redact_secrets(text)
    assert secret not in out
    assert out == f"please use [REDACTED:{kind}] for the deploy"


@pytest.mark.parametrize(("text", "expected"), [
    ("password=hunter22, then log in", "password=[REDACTED:password], then log in"),
    ("db_password: 's3cr3t pass'", "db_password: [REDACTED:password]"),
    ("my password is hunter22", "my password is [REDACTED:password]"),
    ("token: abcd1234efgh", "token: [REDACTED:credential]"),
    ("API_KEY=xyz12345", "API_KEY=[REDACTED:credential]"),
    ("export client_secret=\"q1w2e3r4\"", "export client_secret=[REDACTED:credential]"),
    ("пароль: qwerty12", "пароль: [REDACTED:password]"),
    ("токен = abc123def456", "токен = [REDACTED:credential]"),
    ("Authorization: Bearer abcdefghijklmnop0123", "Authorization: Bearer [REDACTED:bearer_token]"),
    ("clone https://bob:s3cretpw@git.example.com/x.git", "clone https://bob:[REDACTED:url_password]@git.example.com/x.git"),
    ("ci token glpat-" + "Ab12Cd34Ef56Gh78Ij90", "ci token [REDACTED:gitlab_token]"),
])
def test_assignments_keep_their_key(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


@pytest.mark.parametrize("text", [
    "the token is expired",
    "commit a056db1f3c5e7a9b2d4f6e8a0c2e4f6a8b0c2d4e fixed it",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "/usr/lib/python3.11/site-packages/neotask_tui/engine/state.py",
    "Use the skip-the-line option for tokenizer_config_file_name_long",
    "Всегда присылай мне сначала краткое резюме.",
    "ask-ant colony and the sk- prefix",
])
def test_ordinary_developer_text_is_left_alone(text: str) -> None:
    assert not has_secrets(text)
    assert redact_secrets(text) == text


def test_redaction_is_idempotent_and_handles_several_secrets() -> None:
    text = f"keys: {GITHUB} and {AWS}; password=abcd1234"
    once = redact_secrets(text)
    assert redact_secrets(once) == once
    assert once == "keys: [REDACTED:github_token] and [REDACTED:aws_access_key]; password=[REDACTED:password]"
    assert [s.kind for s in find_secrets(text)] == ["github_token", "aws_access_key", "password"]


def test_matches_do_not_carry_the_secret() -> None:
    m = find_secrets(f"x {OPENAI}")[0]
    assert OPENAI not in repr(m)
    assert (m.start, m.end) == (2, 2 + len(OPENAI))


def test_unterminated_pem_is_redacted_to_the_end() -> None:
    text = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA"
    assert redact_secrets(text) == "key:\n[REDACTED:private_key]"
