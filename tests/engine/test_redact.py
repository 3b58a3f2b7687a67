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


# -- red-team shapes: each failed before (see CHANGELOG); the fragments must not survive ----------------------

SEED12 = "abandon ability able about above absent absorb abstract absurd abuse access accident"

RED_TEAM: list[tuple[str, str, str]] = [
    # (case id, text, expected redaction)
    ("greek-omicron", "my passw\u03bfrd is hunter2x", "my passw\u03bfrd is [REDACTED:password]"),
    ("greek-and-cyrillic", "my p\u0430ssw\u03bfrd is hunter2x", "my p\u0430ssw\u03bfrd is [REDACTED:password]"),
    ("greek-capitals", "\u03a1ASSWORD: Hunter2x", "\u03a1ASSWORD: [REDACTED:password]"),
    ("ru-greek-omicron", "мой пар\u03bfль: Hunter2x", "мой пар\u03bfль: [REDACTED:password]"),
    ("ru-greek-bare", "мой пар\u03bfль hunter2x", "мой пар\u03bfль [REDACTED:password]"),
    ("possessive", "the password's Tr0ub4dor&3", "the password's [REDACTED:password]"),
    # the trailing "!" is masked with the value (red team 31: it may be the password's)
    ("possessive-curly", "the wifi password\u2019s Tr0ub4dor&3!", "the wifi password\u2019s [REDACTED:password]"),
    ("passphrase-is-colon", "the passphrase is: hunter two", "the passphrase is: [REDACTED:password]"),
    ("passphrase-colon", "the passphrase: hunter two. Then log in",
     "the passphrase: [REDACTED:password]. Then log in"),
    ("passphrase-eq-line", "passphrase = hunter two\nhost: db", "passphrase = [REDACTED:password]\nhost: db"),
    ("passphrase-comma-and", "the passphrase is: hunter two, and the user is bob",
     "the passphrase is: [REDACTED:password], and the user is bob"),
    ("ru-passphrase", "кодовая фраза: синий кот ест рыбу.", "кодовая фраза: [REDACTED:password]."),
    ("ru-passphrase-dash", "парольная фраза — синий кот", "парольная фраза — [REDACTED:password]"),
    ("reset-it-to-random", "I reset it to Kx9#mPq2", "I reset it to [REDACTED:password]"),
    ("reset-it-after-password", "My gmail password leaked. I reset it to hunter22x",
     "My gmail password leaked. I reset it to [REDACTED:password]"),
    ("changed-pin-to", "my PIN was 4821, I changed it to 9921",
     "my PIN was [REDACTED:pin], I changed it to [REDACTED:pin]"),
    ("ru-changed-it-to-random", "поменял его на Kx9#mPq2", "поменял его на [REDACTED:password]"),
    ("ru-changed-after-password", "пароль от wifi утёк. Поменял его на hunter22x",
     "пароль от wifi утёк. Поменял его на [REDACTED:password]"),
    ("mysql-glued-p", "mysql -uroot -pS3cr3tPass db", "mysql -uroot -p[REDACTED:password] db"),
    ("mysqldump-quoted-p", "mysqldump -h db -uadmin -p'S3cr3t Pass' shop",
     "mysqldump -h db -uadmin -p[REDACTED:password] shop"),
    ("sshpass-p", "sshpass -p Hunter2pass ssh host", "sshpass -p [REDACTED:password] ssh host"),
    ("sshpass-glued", "sshpass -pHunter2pass ssh host", "sshpass -p[REDACTED:password] ssh host"),
    ("sshpass-env", "SSHPASS=Hunter2pass sshpass -e ssh host", "SSHPASS=[REDACTED:password] sshpass -e ssh host"),
    ("long-option-eq", "tool --password=Abc --verbose", "tool --password=[REDACTED:password] --verbose"),
    ("long-option-space", "tool --password Abc --verbose", "tool --password [REDACTED:password] --verbose"),
    ("long-option-prefixed", "app --db-password=hunter", "app --db-password=[REDACTED:password]"),
    ("seed-colon", f"seed: {SEED12}", "seed: [REDACTED:seed_phrase]"),
    ("wallet-seed-is-24", f"my wallet seed is {SEED12} {SEED12}.", "my wallet seed is [REDACTED:seed_phrase]."),
    ("ru-seed", f"сид: {SEED12}", "сид: [REDACTED:seed_phrase]"),
    ("ru-recovery-phrase", f"фраза восстановления: {SEED12}", "фраза восстановления: [REDACTED:seed_phrase]"),
]


@pytest.mark.parametrize(("text", "expected"), [pytest.param(t, e, id=i) for i, t, e in RED_TEAM])
def test_red_team_shapes_are_redacted(text: str, expected: str) -> None:
    out = redact_secrets(text)
    assert out == expected
    assert redact_secrets(out) == out  # idempotent


def test_command_line_shapes_that_already_worked_stay_redacted() -> None:
    assert redact_secrets("PGPASSWORD=Xyz psql -h db") == "PGPASSWORD=[REDACTED:password] psql -h db"
    assert redact_secrets("MYSQL_PWD=hunter mysql -uroot") == "MYSQL_PWD=[REDACTED:password] mysql -uroot"
    out = redact_secrets("openssl rsa -in k.pem -passin pass:Hunter2pass")
    assert out == "openssl rsa -in k.pem -passin pass:[REDACTED:password]"
    assert redact_secrets("changed my password to Xy7!kq") == "changed my password to [REDACTED:password]"
    assert redact_secrets("new password Xy7!kq") == "new password [REDACTED:password]"
    assert redact_secrets("сменил пароль на Hunter2x") == "сменил пароль на [REDACTED:password]"


# the same rules must leave these alone (English and Russian)
RED_TEAM_NEGATIVES: list[tuple[str, str]] = [
    # Greek look-alikes: Greek text and Greek symbols in prose are not folded into key words
    ("greek-text", "Η Αθήνα είναι όμορφη πόλη, κωδικός πρόσβασης"),
    ("greek-symbols", "the ratio \u03b1 = 0.5 and \u03b2=2"),
    ("ru-greek-symbol", "пароль — это не ответ, \u03b1 = 2"),
    # possessive: something about the password, not the password
    ("possessive-length", "the password's length is 12"),
    ("possessive-measure", "the password's 12-char minimum"),
    ("possessive-hash", "the password's SHA256 hash"),
    ("possessive-meter", "the password's strength meter shows red"),
    ("possessive-expired", "the password's expired"),
    ("possessive-fault", "It's the password's fault"),
    # passphrase after a symbol: an empty or missing value, or no passphrase word
    ("passphrase-not-set", "passphrase: not set"),
    ("passphrase-none", "Passphrase: none"),
    ("passphrase-is-sentence", "the passphrase is stored in the vault"),
    ("phrase-bare", "the phrase is: hello world"),
    ("catch-phrase", "the catch phrase: just do it"),
    ("ru-passphrase-unset", "кодовая фраза: не задана."),
    ("ru-phrase-bare", "Фраза дня: учиться никогда не поздно."),
    # set/reset/change … to: ordinary settings
    ("set-timeout", "set the timeout to 30s"),
    ("reset-head", "reset HEAD to origin/main"),
    ("changed-theme", "changed the theme to Dark"),
    ("switched-hook", "I switched the hook to useState2"),
    ("update-version", "update the version to v1.2.3-rc1"),
    ("set-region", "set the region to eu-west-1"),
    ("changed-model", "I changed the model to gpt-4o-mini"),
    ("changed-env", "changed the env to PROD_EU1"),
    ("set-project", "set it to MyProject2024"),
    ("set-host", "set the host to db01.internal"),
    ("password-then-setting", "the password policy: changed the min length to 12chars"),
    ("pw-near-sender", "Password reset emails: I changed the sender to noreply@example.com"),
    ("pw-near-branch", "After the password change I switched the branch to feature/login-fix."),
    ("pw-near-label", "the password form: I updated the label to Password2 hmm"),
    ("pw-near-field-type", "I changed the password field to type=password"),
    ("username-to", "changed my username to Bob_2024"),
    ("ru-pw-near-timeout", "Я поменял пароль вчера и поставил таймаут на 30s"),
    ("ru-pw-near-theme", "После смены пароля поменял тему на Dark2x"),
    ("ru-pw-near-version", "пароль не менял, поставил версию на 3.12"),
    ("ru-theme", "поменял тему на Dark"),
    ("ru-version", "сменил версию на v2.3.1"),
    ("ru-model", "поменял модель на Llama3"),
    ("ru-reset", "сбросил настройки на заводские"),
    # command lines that carry no password
    ("mkdir-p", "mkdir -p /tmp/x"),
    ("docker-port", "docker run -p8080:80 nginx"),
    ("ssh-port", "ssh -p2222 host"),
    ("sshpass-env-ssh-port", "sshpass -e ssh -p 2222 host"),
    ("mysql-prompt", "mysql -u root -p mydb"),
    ("mysql-password-prompt", "mysql --password mydb"),
    ("no-password", "pg_dump --no-password mydb"),
    ("password-flag-prose", "use the --password flag"),
    ("password-variable", "run tool --password $DB_PASS"),
    ("password-file", "tool --password-file /etc/pw"),
    ("password-stdin", "docker login --password-stdin"),
    ("password-placeholder", "--password PASSWORD  the password to use"),
    ("ru-password-flag", "флаг --password нужен для входа"),
    ("ru-mysql-prompt", "запусти mysql -u root -p и введи пароль"),
    # a bare "seed" that is not a seed phrase
    ("random-seed", "seed: 42"),
    ("seed-prose", "the random seed is set to the same value for every run"),
    ("seed-ten-words", "seed: apple banana cherry grape lemon mango olive peach pear plum"),
    ("seed-the-database", "we seed the database with fixture rows before each test run so that every case sees it"),
    ("ru-seed-number", "сид: 42"),
]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in RED_TEAM_NEGATIVES])
def test_red_team_rules_leave_ordinary_text_alone(text: str) -> None:
    assert find_secrets(text) == []
    assert redact_secrets(text) == text


def test_a_security_answer_ends_at_the_first_function_word() -> None:
    # the run of words after "is" stops at "and": the answer goes, the rest of the sentence stays
    assert redact_secrets("my security answer is Fluffy and my pin is 1234") == (
        "my security answer is [REDACTED:password] and my pin is [REDACTED:pin]")
    assert redact_secrets("the answer to my security question is Red Fox.") == (
        "the answer to my security question is [REDACTED:password].")


def test_a_bare_key_counts_only_near_a_network_word() -> None:
    near = "wifi is CafeNet, key: V3ryS3cret"
    assert "V3ryS3cret" not in redact_secrets(near)
    far = "wifi is CafeNet.\n\nUnrelated: the cache key: V3ryS3cret"  # another paragraph
    assert redact_secrets(far) == far
    distant = "wifi is CafeNet. " + "We talked about many other things afterwards. " * 5 + "key: V3ryS3cret"
    assert redact_secrets(distant) == distant


@pytest.mark.parametrize("text", [
    "the deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789.\nDo not touch the ledger-v2 table.",
    "the deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789\nis mine, do not share it.",
])
def test_a_token_at_the_end_of_a_line_does_not_take_the_next_sentences_first_word(text: str) -> None:
    """Red team 21 (side finding): a known-prefix token at a line's end was joined with the next
    line's first word as a wrapped token, so derived data read "[REDACTED:credential] not touch the
    ledger-v2 table": the "Do" of a "do not" was gone."""
    red = redact_secrets(text)
    assert "ghp_" not in red and "0123456789" not in red
    assert red.split("]", 1)[1].lstrip(".\n").split()[0] in ("Do", "is")


def test_a_token_wrapped_onto_the_next_line_is_still_redacted_whole() -> None:
    text = "key ghp_abcdefghijklmnopq\nrstuvwxyz0123456789 here"
    assert redact_secrets(text) == "key [REDACTED:github_token] here"


@pytest.mark.parametrize(("text", "kept"), [
    ("API_TOKEN=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", "API_TOKEN="),
    ("export GITHUB_TOKEN=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5 then run deploy", "export GITHUB_TOKEN="),
    ("STRIPE_KEY=sk_live_51HxYzAbCdEfGhIjKlMnOp then charge", "STRIPE_KEY="),
])
def test_an_assignment_of_a_token_keeps_its_name(text: str, kept: str) -> None:
    """Red team 22 (low): the whole ``NAME=token`` became one ``[REDACTED:high_entropy]``, so the
    name was gone from derived data and ``search API_TOKEN`` found nothing."""
    red = redact_secrets(text)
    assert red.startswith(kept + "[REDACTED:") and "ghp_aB3" not in red and "51HxYz" not in red


_SMALL_CAPS = str.maketrans("abcdefghijklmnopqrstuvwxyz",
                            "\u1d00\u0299\u1d04\u1d05\u1d07\ua730\u0262\u029c\u026a\u1d0a\u1d0b\u029f\u1d0d\u0274"
                            "\u1d0f\u1d18\ua7af\u0280\ua731\u1d1b\u1d1c\u1d20\u1d21x\u028f\u1d22")


def test_small_capitals_are_read_as_the_letters_they_show() -> None:
    # Red team 34, F2: NFKC keeps small capitals ("ᴘᴀꜱꜱᴡᴏʀᴅ"), so the rules did not see the word or token.
    token = ("ghp_" + "ab1cd2ef3gh4ij5kl6mn7op8qr9st0uv1wx2").translate(_SMALL_CAPS)
    assert redact_secrets(f"note {token} end") == "note [REDACTED:github_token] end"
    assert redact_secrets("password".translate(_SMALL_CAPS) + ": Toor!2023x ok").endswith(
        ": [REDACTED:password] ok")
    fancy = "this is fancy text about the plan".translate(_SMALL_CAPS)
    assert redact_secrets(fancy) == fancy


@pytest.mark.parametrize(("text", "shown"), [
    ("is the root password still Toor!2023x?", "is the root password still [REDACTED:password]"),
    ("Is my wifi password Cedar-Lake-0042?", "Is my wifi password [REDACTED:password]"),
    ("was the password for the staging box still Kappa!9911, or not?",
     "was the password for the staging box still [REDACTED:password], or not?"),
])
def test_a_password_asked_about_in_a_question_is_redacted(text: str, shown: str) -> None:
    # Red team 34, F7: the value in a question stayed in the search index and the session state.
    assert redact_secrets(text) == shown


@pytest.mark.parametrize("text", [
    "is the password still valid?", "Is the password field required?", "is the password manager 1Password good?",
    "Is the password hashed with SHA256?", "Is the password policy still 12 chars?",
])
def test_a_question_about_a_password_without_one_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(("context", "text", "kind"), [
    ("my PIN is in the next message", "5531", "pin"),
    ("I'll send you the wifi key next", "Cedar-Lake-0042", "password"),
])
def test_a_pin_or_wifi_key_announced_and_sent_alone_is_redacted(context: str, text: str, kind: str) -> None:
    # Red team 34, F8: passwords announced this way were redacted, a PIN or a Wi-Fi key was not.
    assert redact_secrets(text, context=context) == f"[REDACTED:{kind}]"
    assert redact_secrets("2024", context="my password is in the next message") == "2024"
    assert redact_secrets("5531", context="What year was it:") == "5531"


@pytest.mark.parametrize("text", ["The login for the router is admin / Winter2024!x",
                                  "логин от роутера: admin / Winter2024!x"])
def test_a_login_pair_for_a_named_thing_is_redacted(text: str) -> None:
    # Red team 34, F9: a qualifier between "login" and the pair hid it.
    assert redact_secrets(text).endswith("admin / [REDACTED:password]")
    assert redact_secrets("the login for the site is slow / broken") == "the login for the site is slow / broken"
