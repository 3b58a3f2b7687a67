"""Promise: secrets never reach long-term memory, the inbox, session state or the index.

The transcript keeps what the user typed (it is the user's own record); everything derived from it
is redacted by the one redactor, :mod:`neotask_tui.text.secrets`. The corpus borrows its shapes from
the rule lists of gitleaks and detect-secrets, plus passwords in English and Russian prose; the
end-to-end cases write secrets through every path into the data dir (``neotask memory add``,
``/remember``, the inbox, the model's ``propose_memory``, archived transcripts, user-written
``memory/`` files) and grep the raw bytes of every file under it except the transcripts.

Every credential below is fake and assembled at runtime, so no literal key sits in the repository.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.commands import dispatch
from neotask_tui.config import load_settings
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.inbox import InboxError
from neotask_tui.providers.base import ToolCall
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.text.secrets import find_secrets, has_secrets, redact, redact_secrets
from tests.faults.helpers import KEY, cli, run_turn

pytestmark = pytest.mark.promise("secrets")

A36 = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # 36 mixed alphanumerics
HEX32 = "9f86d081884c7d659a2feaa0c55ad015"
HEX64 = HEX32 + "a3bf4f1b2b0b822cd15d6c15b0f00a08"
B64_40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEX" + "AMPLEKEY"
PEM_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Ry5\nQm1xYzN2cGhZbm9rZXlib2R5bGluZXR3bw==\n"


def _pem(label: str) -> str:
    return f"-----BEGIN {label}-----\n{PEM_BODY}-----END {label}-----"


# (case id, text, the secret that must not survive)
SHAPES: list[tuple[str, str, str]] = [
    ("aws-access-key-id-assign", "aws_access_key_id = {s}", "AKIA" + "Q7XK2M4N8P3R5T6V"),
    ("aws-access-key-id-prose", "the deploy user's key id is {s} btw", "ASIA" + "Z9Y8X7W6V5U4T3S2"),
    ("aws-secret-assign", "aws_secret_access_key = {s}", B64_40),
    ("aws-secret-prose", "my aws secret key is {s}", B64_40),
    ("aws-secret-bare", "credentials file line: {s}", "Xb4+Ry8/Kd2mQ7pL9vN3sT6wZ1cF5hJ0gA8eU4yI"),
    ("github-ghp", "push with {s} please", "ghp_" + A36),
    ("github-gho", "oauth {s}", "gho_" + A36),
    ("github-ghs", "app token {s}", "ghs_" + A36),
    ("github-ghu", "user-to-server {s}", "ghu_" + A36),
    ("github-ghr", "refresh {s}", "ghr_" + A36),
    ("github-fine-grained", "fine-grained {s}", "github_pat_" + "11ABCDEFG0" * 3 + "_" + A36[:30]),
    ("gitlab-glpat", "ci uses {s}", "glpat-" + "Ab12Cd34Ef56Gh78Ij90"),
    ("slack-bot", "bot {s}", "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("slack-user", "user {s}", "xoxp-" + "123456789012-123456789012-123456789012-" + HEX32),
    ("slack-webhook", "post to {s} on deploy", "https://hooks.slack.com/services/" + "T0AB12CD3/B0CD34EF5/" + A36[:24]),
    ("stripe-sk-live", "billing {s}", "sk_" + "live_" + A36[:24]),
    ("stripe-rk-live", "restricted {s}", "rk_" + "live_" + A36[:24]),
    ("twilio-api-key", "twilio {s}", "SK" + HEX32),
    ("twilio-auth-token", "TWILIO_AUTH_TOKEN={s}", HEX32),
    ("sendgrid", "mail via {s}",
     "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"),
    ("mailgun", "mailgun {s}", "key-" + "3ax6xnjp29jd6fds4gc373sgvjxteol0"),
    ("mailchimp", "mailchimp {s}", HEX32 + "-us6"),
    ("npm-token", "//registry.npmjs.org/:_authToken={s}", "npm_" + A36),
    ("pypi-token", "upload with {s}", "pypi-" + "AgEIcHlwaS5vcmcCJGE4ZGQ4ZjQ2LTk5NzUtNDQ4Ny1hNjkxLTk5Y2M5YjU5MjM2ZQ"),
    ("google-api-key", "maps {s}", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("gcp-service-account", '{{"type": "service_account", "private_key": "{s}", "client_email": "x@y.iam"}}',
     "-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASC\\nBKgwggSkAgEAAoIBAQC7\\n"
     "-----END PRIVATE KEY-----\\n"),
    ("azure-account-key",
     "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net",
     "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="),
    ("openai-legacy", "OPENAI key {s}", "sk-" + "A1b2C3d4E5f6G7h8I9j0T3BlbkFJ" + "Z9y8X7w6V5u4T3s2R1q0"),
    ("openai-project", "my openai key is {s}", "sk-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh"),
    ("anthropic", "claude {s}", "sk-" + "ant-api03-" + "Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2cBa1-ZYXWVU"),
    ("huggingface", "hub {s}", "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz12345678"),
    ("jwt", "session cookie {s}",
     "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("pem-rsa", "key:\n{s}\nthanks", _pem("RSA PRIVATE KEY")),
    ("pem-ec", "key:\n{s}", _pem("EC PRIVATE KEY")),
    ("pem-openssh", "id_ed25519:\n{s}", _pem("OPENSSH PRIVATE KEY")),
    ("pem-pkcs8-encrypted", "{s}", _pem("ENCRYPTED PRIVATE KEY")),
    ("pgp-private", "gpg export:\n{s}", _pem("PGP PRIVATE KEY BLOCK")),
    ("basic-auth-url", "clone https://deploy:{s}@git.example.com/repo.git", "s3cr3t-Pa55"),
    ("bearer", "curl -H 'Authorization: Bearer {s}'", "Zm9vYmFyYmF6cXV4" + "1234567890abcdef"),
    ("authorization-basic", "Authorization: Basic {s}", "ZGVwbG95OnMzY3IzdC1QYTU1"),
    ("authorization-token", "Authorization: token {s}", HEX32 + "0a1b2c3d"),
    ("x-api-key-header", "X-API-Key: {s}", "live_" + HEX32),
    ("postgres-url", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", "Pg-pass-2024"),
    ("mongodb-srv", "mongodb+srv://admin:{s}@cluster0.example.net/test", "M0ng0Secret"),
    ("redis-url", "redis://:{s}@cache:6379/0", "r3disPW"),
    ("dotenv-db-password", "DB_PASSWORD={s}", "correct-horse-battery"),
    ("dotenv-secret-key", "export DJANGO_SECRET_KEY='{s}'", "django-insecure-7x#k2!q9z"),
    ("dotenv-api-key", "MY_SERVICE_API_KEY={s}", "Zx81Qw72Er63"),
    ("yaml-password", "database:\n  password: {s}\n  host: db", "hunter2x"),
    ("json-client-secret", '{{"client_id": "abc", "client_secret": "{s}"}}', "GOCSPX-" + "Qw3Er4Ty5Ui6Op7As8Df9Gh0"),
    ("sqlserver-conn", "Server=db;User Id=sa;Password={s};Encrypt=true", "Pa55w0rd!"),
    ("discord-bot", "bot token {s}",
     "MTA0NjE4NzQ1MjM2NTg0NjU2Mg" + ".GhT3xQ." + "abCDefGHijKLmnOPqrSTuvWXyz0123456789ab"),
    ("discord-webhook", "alerts at {s}", "https://discord.com/api/webhooks/" + "1046187452365846562/" + A36 + A36),
    ("telegram-bot", "bot {s}", "5432109876:" + "AAF" + "x9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDc"),
    ("shopify", "shop {s}", "shpat_" + HEX32),
    ("digitalocean", "doctl {s}", "dop_" + "v1_" + HEX64),
    ("heroku-uuid", "HEROKU_API_KEY={s}", "01234567-89ab-cdef-0123-456789abcdef"),
    ("heroku-new", "heroku {s}", "HRKU-" + "AAbCdEfGhIjKlMnOpQrStUvWxYz0123456789_AbCdEfGhIjKlMnOpQrSt"),
    ("datadog", "DD_API_KEY={s}", HEX32),
    ("datadog-app", "DD_APP_KEY={s}", HEX32 + "12345678"),
    ("square-access", "square {s}", "sq0atp-" + "AbCdEfGhIjKlMnOpQrStUv"),
    ("square-secret", "square {s}", "sq0csp-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfG"),
    ("databricks", "databricks {s}", "dapi" + HEX32),
    ("vault", "VAULT_TOKEN is {s}", "hvs." + "CAESIJ1Bz2Qw3Er4Ty5Ui6Op7As8"),
    ("grafana", "grafana {s}", "glsa_" + A36[:32] + "_" + HEX32[:8]),
    ("newrelic", "newrelic {s}", "NRAK-" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ0"),
    ("age", "age {s}", "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58]),
    ("high-entropy", "use {s} for the deploy", "Zx8Qp2Lm9Vt4Rk7Wn3Yb6Hc1Jd5Gf0SeTa"),
    # passwords in prose, English
    ("pw-for-x-is", "my password for the staging box is {s}", "Tr0ub4dor&3-horse"),
    ("pw-the-is", "the password is {s}", "correcthorse42"),
    ("pw-plain-word", "the wifi password is {s}", "sunshine"),
    ("pw-still", "my password is still {s}.", "GreenApple77"),
    ("pw-log-in-with-as", "I log in to the NAS with {s} as my password", "hunter2hunter2"),
    ("pw-use-as", "use {s} as the password", "Zq!8vLm#2"),
    ("pw-colon", "password: {s}", "p@ss-W0rd"),
    ("pw-quoted-phrase", "My passphrase is '{s}'", "blue cat eats fish"),
    ("pw-with-the-password", "log in with the password {s}", "Kx7$mQ2p"),
    ("pw-is-colon", "my password is: {s}", "Xk9#mP2q"),
    ("pw-changed-to", "I changed my password to {s} yesterday", "Xk9#mP2q"),
    ("pin", "my pin is {s}", "4821"),
    ("creds-pair", "creds are {s}", "admin:Xk9#mP2q"),
    # passwords in prose, Russian
    ("ru-pw-ot-dash", "пароль от сервера — {s}", "Zx9!kLm2pQ"),
    ("ru-pw-moy-colon", "мой пароль: {s}", "Qw3rty!23"),
    ("ru-pw-dlya", "пароль для NAS {s}", "Hx7#pL0q"),
    ("ru-pw-s-parolem", "войти с паролем {s}", "Vb6*nM1z"),
    ("ru-pw-eto", "пароль от почты это {s}", "ЛесПоле2024"),
    ("ru-pw-kak", "используй {s} как пароль", "Gt5%rE2w"),
    ("ru-pw-word", "мой пароль от вайфая: {s}", "солнышко"),
    ("ru-pw-na", "сменил пароль на {s}", "Xk9#mP2q"),
    ("ru-pw-teper", "мой пароль от почты теперь {s}", "Xk9#mP2q"),
]

NEGATIVES = [
    ("git-sha", "fixed in a056db1f3c5e7a9b2d4f6e8a0c2e4f6a8b0c2d4e, see the log"),
    ("short-sha", "cherry-pick a056db1 onto main"),
    ("uuid", "request id 123e4567-e89b-12d3-a456-426614174000 failed"),
    ("build", "build-4471 is green"),
    ("branch", "merge feat/tz-fix after review"),
    ("path", "the bug is in src/app/time_utils.py line 40"),
    ("long-path", "/usr/lib/python3.11/site-packages/neotask_tui/engine/state.py"),
    ("iso-dates", "from 2025-03-01T09:00:00+00:00 to 2025-03-02"),
    ("version", "upgrade to v1.2.3 then v10.20.30-rc.1"),
    ("forgot-password", "I forgot my password"),
    ("password-field", "The password field must be at least 12 characters."),
    ("password-reset", "Click password reset and check your mail."),
    ("password-manager", "I use Bitwarden as my password manager"),
    ("password-required", "the password is required for sudo"),
    ("token-expired", "the token is expired"),
    ("password-sent-to", "I sent the password to Bob"),
    ("passwords-hashed", "Passwords are hashed with bcrypt"),
    ("tokens-rotated", "tokens are rotated daily"),
    ("pin-hardware", "the pin is loose"),
    ("russian", "Всегда присылай мне сначала краткое резюме, пожалуйста."),
    ("russian-password-word", "Пароль должен быть длиннее восьми символов."),
    ("url", "docs at https://example.com/docs/page?id=42&lang=en"),
    ("listen-notify", "Postgres LISTEN/NOTIFY carries the events"),
    ("word-like-identifier", "TestCaseForRedactionHandling passes"),
    ("long-word-identifier", "class TestCaseForRedactionHandlingOfManyWords:"),
    ("max-tokens", "set max_tokens = 4096 and temperature: 0.2"),
    ("author", "author: Tolkien"),
    ("sha256-digest", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("time", "meet at 10:30, room key: B12"),
]


@pytest.mark.parametrize(("text", "secret"), [pytest.param(t.format(s=s), s, id=i) for i, t, s in SHAPES])
def test_each_secret_shape_is_redacted(text: str, secret: str) -> None:
    out, n = redact(text)
    assert n >= 1 and has_secrets(text)
    assert secret not in out, out
    assert "[REDACTED:" in out
    for piece in re.split(r"\s|\\n", secret):  # no line of a key block survives either
        assert len(piece) < 16 or piece not in out, f"{piece!r} left in {out!r}"
    assert redact_secrets(out) == out  # idempotent


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in NEGATIVES])
def test_ordinary_text_survives_unchanged(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text) == (text, 0)


def test_shapes_cover_at_least_forty_formats_and_both_languages() -> None:
    assert len({i for i, _t, _s in SHAPES if not i.startswith(("pw-", "ru-"))}) >= 40
    assert sum(i.startswith("ru-") for i, _t, _s in SHAPES) >= 4


# -- end to end: every path into the data dir -------------------------------------------------------

HEADLINE = {
    "openai": "sk-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh",
    "aws_secret": B64_40,
    "github": "ghp_" + A36,
    "pem_body": "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Ry5",
    "staging_pw": "Tr0ub4dor&3-horse",
    "nas_pw": "hunter2hunter2",
    "ru_pw": "Zx9!kLm2pQ",
}
LINES = [
    f"my openai key is {HEADLINE['openai']}",
    f"aws_secret_access_key = {HEADLINE['aws_secret']}",
    f"my aws secret key is {HEADLINE['aws_secret']}",
    f"the deploy token is {HEADLINE['github']}",
    f"the deploy key:\n-----BEGIN RSA PRIVATE KEY-----\n{HEADLINE['pem_body']}\n-----END RSA PRIVATE KEY-----",
    f"my password for the staging box is {HEADLINE['staging_pw']}",
    f"I log in to the NAS with {HEADLINE['nas_pw']} as my password",
    f"пароль от сервера — {HEADLINE['ru_pw']}",
]


def _leaks(data_dir: Path) -> list[str]:
    """Every (secret, file) pair where a headline secret's raw bytes sit in a non-transcript file."""
    transcripts = {p for d in ("sessions", "archive") for p in (data_dir / d).glob("*.jsonl")}
    out = []
    for p in data_dir.rglob("*"):
        if not p.is_file() or p in transcripts:
            continue
        raw = p.read_bytes()
        for name, secret in HEADLINE.items():
            for form in {secret, secret.lower(), json.dumps(secret)[1:-1]}:
                if form.encode() in raw:
                    out.append(f"{name} in {p.relative_to(data_dir)}")
    return out


def _index_rows_text(data_dir: Path) -> str:
    from neotask_tui.memory.service import MemoryService

    svc = MemoryService(load_settings().memory)
    try:
        rows = svc.store.rows_where("agent_id = 'main'", ["text", "etext", "lex", "ctx", "heading"])
    finally:
        svc.close()
    assert rows, "nothing was indexed: the test would prove nothing"
    return repr(rows)


def _assert_index_clean(data_dir: Path) -> None:
    blob = _index_rows_text(data_dir)
    for name, secret in HEADLINE.items():
        assert secret not in blob and secret.lower() not in blob, f"{name} in the LanceDB rows"


@pytest.fixture
def memory_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")


@pytest.mark.usefixtures("memory_on")
def test_memory_add_from_the_cli_redacts_before_memory_md_and_the_index(data_dir: Path) -> None:
    out = cli("memory", "add", "-", stdin="\n".join(LINES))
    assert out.returncode == 0, out.stderr
    assert "secret(s) redacted" in out.stdout  # the user is told
    for secret in HEADLINE.values():
        assert secret not in out.stdout and secret not in out.stderr
    md = (paths.workspace_dir("main") / "MEMORY.md").read_text(encoding="utf-8")
    assert "[REDACTED:" in md and "my openai key is" in md
    assert _leaks(data_dir) == []
    _assert_index_clean(data_dir)
    found = cli("memory", "search", "openai key staging password", "--json")
    assert found.returncode == 0 and "[REDACTED:" in found.stdout
    assert all(s not in found.stdout for s in HEADLINE.values())


@pytest.mark.usefixtures("memory_on")
@pytest.mark.parametrize("line", LINES, ids=["openai", "aws-assign", "aws-prose", "github", "pem", "staging-pw",
                                             "nas-pw", "ru-pw"])
async def test_remember_command_redacts_each_shape(data_dir: Path, line: str) -> None:
    e = Engine(load_settings(), provider=ScriptedProvider())
    try:
        r = await dispatch(e, KEY, f"/remember {line}")
        assert not r.error, r.text
        assert "redacted" in r.text
        mem = await e.get_memory()
        hits = mem.search(line.split("\n")[0][:40], agent_id="main", k=5)
        assert hits and all("[REDACTED:" in h.text or line[:20] not in h.text for h in hits)
    finally:
        await e.aclose()
    md = (paths.workspace_dir("main") / "MEMORY.md").read_text(encoding="utf-8")
    assert "[REDACTED:" in md
    assert _leaks(data_dir) == []
    _assert_index_clean(data_dir)


@pytest.mark.usefixtures("memory_on")
async def test_inbox_never_passes_a_candidate_that_held_a_secret(data_dir: Path) -> None:
    e = Engine(load_settings(), provider=ScriptedProvider())
    assert e.state is not None
    try:
        for line in LINES:
            await run_turn(e, f"remember that {line}", KEY)
        # the model proposes one too, and the user edits a clean entry into one holding a secret
        e.provider.queue(  # type: ignore[union-attr]
            {"text": "", "tool_calls": [{"id": "t1", "name": "propose_memory", "arguments": {
                "text": f"The staging login: I log in to the NAS with {HEADLINE['nas_pw']} as my password",
                "scope": "user"}}]},
            {"text": "noted"},
        )
        await run_turn(e, "please keep that in mind", KEY)
        await run_turn(e, "From now on always answer in English.", KEY)
        entries = await e.state.inbox_list("main", status=None)
        assert len(entries) >= len(LINES)
        clean = [x for x in entries if not x.redacted]
        assert clean, "the clean preference should be a candidate"
        edited = await e.state.inbox_edit("main", clean[0].n, f"Always use {HEADLINE['staging_pw']} as the password")
        assert edited.redacted
        for x in await e.state.inbox_list("main", status=None):
            if x.redacted:
                assert not x.criteria["allowed_to_store"]["ok"], x.text
                assert x.failed, f"#{x.n} passed every criterion: {x.text}"
                with pytest.raises(InboxError):
                    await e.state.inbox_accept("main", x.n)
        assert sum(x.redacted for x in await e.state.inbox_list("main", status=None)) >= len(LINES)
    finally:
        await e.aclose()
    assert _leaks(data_dir) == []


@pytest.mark.usefixtures("memory_on")
async def test_archived_transcripts_are_indexed_redacted_and_kept_verbatim(data_dir: Path) -> None:
    e = Engine(load_settings(), provider=ScriptedProvider())
    try:
        for line in LINES:
            await run_turn(e, line, KEY)
        await e.new_session(KEY)
        await run_turn(e, "what is the password of the staging box and the NAS?", KEY)  # recall indexes the archive
        assert (data_dir / "memory-transcripts.json").exists()
    finally:
        await e.aclose()
    archived = b"".join(p.read_bytes() for p in (data_dir / "archive").glob("*.jsonl"))
    assert HEADLINE["nas_pw"].encode() in archived  # the transcript is the user's own record
    assert _leaks(data_dir) == []
    _assert_index_clean(data_dir)


@pytest.mark.usefixtures("memory_on")
def test_user_written_memory_files_are_indexed_redacted_and_tools_return_redacted(data_dir: Path) -> None:
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.memory.tools import handle_tool

    ws = paths.workspace_dir("main")
    (ws / "memory").mkdir(parents=True)
    notes = ws / "memory" / "ops.md"
    body = "# Ops notes\n\n" + "\n\n".join(LINES) + "\n\nThe backup runs at 02:00 on the bastion.\n"
    notes.write_text(body, encoding="utf-8")
    svc = MemoryService(load_settings().memory)
    try:
        svc.reindex("main")
        got = handle_tool(svc, "main", "memory_get", {"path": "memory/ops.md"})
        found = handle_tool(svc, "main", "memory_search", {"query": "staging password NAS openai key", "k": 10})
        lines = handle_tool(svc, "main", "memory_get", {"path": "memory/ops.md", "start": 1, "end": 40})
    finally:
        svc.close()
    assert notes.read_text(encoding="utf-8") == body  # the file is the user's: left as written
    for out in (got, found, lines):
        assert out and "[REDACTED:" in out
        assert all(s not in out for s in HEADLINE.values()), out
    assert "backup runs at 02:00" in str(got)
    leaks = [x for x in _leaks(data_dir) if not x.endswith("memory/ops.md")]
    assert leaks == []
    _assert_index_clean(data_dir)


async def test_session_state_values_are_redacted(engine: Engine) -> None:
    assert engine.state is not None
    await run_turn(engine, "hello", KEY)
    for line in LINES:
        await engine.state.set(KEY, "facts", line, source="user command")
    await engine.state.set(KEY, "notes", {"login": f"my password for the staging box is {HEADLINE['staging_pw']}"})
    await engine.state.handle_tool(KEY, ToolCall("c1", "update_session_state", {
        "field": "current_goal", "value": f"rotate {HEADLINE['aws_secret']}"}))
    view = repr(engine.state.get(KEY))
    assert "[REDACTED:" in view
    assert all(s not in view for s in HEADLINE.values()), view


# -- red-team findings: shapes the redactor missed, split/obfuscated secrets, over-redaction --------

PW = "Qx9hunter" + "Z"
GH36 = "ghp_" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
SEED12 = "abandon ability able about above absent absorb abstract absurd abuse access accident"

# (case id, text, fragments none of which may survive)
MISSED: list[tuple[str, str, tuple[str, ...]]] = [
    ("pass-is", "the pass is Zebra77cake", ("Zebra77cake",)),
    ("pass-for-is", f"the pass for wifi is {PW}", (PW,)),
    ("user-pass", f"user admin pass {PW}", (PW,)),
    ("pw-bare", f"pw {PW}", (PW,)),
    ("passcode", "passcode 4471", ("4471",)),
    ("pin-bare", "PIN 4471", ("4471",)),
    ("pin-kod", "PIN-код 1234", ("1234",)),
    ("kod-ot-dveri", "код от двери 4471", ("4471",)),
    ("value-is-my-password", f"{PW} is my password", (PW,)),
    ("arrow-ascii", f"password -> {PW}", (PW,)),
    ("arrow-unicode", f"password → {PW}", (PW,)),
    ("many-spaces", "password" + " " * 20 + PW, (PW,)),
    ("fullwidth-colon", f"password\uff1a{PW}", (PW,)),
    ("cyrillic-a", f"p\u0430ssword: {PW}", (PW,)),
    ("zero-width-keyword", f"pass\u200bword: {PW}", (PW,)),
    ("fullwidth-keyword", f"\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44: {PW}", (PW,)),
    ("passphrase-words", "my password is correct horse battery staple", ("horse", "battery", "staple")),
    ("passphrase-clause", "my password is purple monkey dishwasher, and the user is bob",
     ("purple", "monkey", "dishwasher")),
    ("curl-u", f"curl -u admin:{PW} https://api.example.com/v1/items", (PW,)),
    ("creds-pair-bare", f"creds admin:{PW}", (PW,)),
    ("login-slash", f"login: admin / {PW}", (PW,)),
    ("token-hex", f"token {HEX32}", (HEX32,)),
    ("yaml-next-line", f"password:\n  {PW}\nhost: db", (PW,)),
    ("pem-lowercase", "-----begin rsa private key-----\n" + PEM_BODY + "-----end rsa private key-----",
     tuple(PEM_BODY.split())),
    ("mot-de-passe", f"mot de passe: {PW}", (PW,)),
    ("ru-pass", f"пасс: {PW}", (PW,)),
    ("backup-codes", "backup codes: 1234-5678 2345-6789 3456-7890 4567-8901",
     ("1234-5678", "2345-6789", "3456-7890", "4567-8901")),
    ("recovery-codes-lines", "2FA recovery codes:\n8f3k-2m9q\n7x2p-4n6r\n", ("8f3k-2m9q", "7x2p-4n6r")),
    ("seed-phrase", f"seed phrase: {SEED12}", tuple(SEED12.split()[1:])),
    ("mnemonic-24", f"my wallet mnemonic is {SEED12} {SEED12}", tuple(SEED12.split()[1:])),
    # split, obfuscated and over-long secrets
    ("zw-in-github", "use ghp_ABCDEFGHIJ\u200bKLMNOPQRSTUVWXYZ0123456789 now",
     ("ghp_ABCDEFGHIJ", "KLMNOPQRSTUVWXYZ0123456789")),
    ("zw-in-aws", "key AKIA\u200bIOSFODNN7EXAMPLE", ("IOSFODNN7EXAMPLE", "AKIA\u200b")),
    ("fullwidth-aws", "key \uff21\uff2b\uff29\uff21\uff29\uff2f\uff33\uff26\uff2f\uff24\uff2e\uff2e\uff17"
     "\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25", ("\uff29\uff2f\uff33\uff26\uff2f\uff24",)),
    ("unicode-hyphen-openai", "key sk\u2010proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", ("sk\u2010proj", "Ab3dEf6h")),
    ("wrapped-aws", "key AKIAIOSFODNN7EXAMP\nLE", ("AKIAIOSFODNN7EXAMP", "\nLE")),
    ("wrapped-github", "api token:\n ghp_ABCDEFGHIJKLMN\n OPQRSTUVWXYZ0123456789",
     ("ghp_ABCDEFGHIJKLMN", "OPQRSTUVWXYZ0123456789")),
    ("wrapped-openai", "the api key is sk-proj-abcdef\nghijklmnop1234567890", ("abcdef", "ghijklmnop1234567890")),
    ("over-long-value", "token=" + "A1b2" * 200, ("A1b2A1b2",)),
    ("over-long-github", "ghp_" + "Ab1" * 150, ("Ab1Ab1Ab1",)),
]


@pytest.mark.parametrize(("text", "fragments"), [pytest.param(t, f, id=i) for i, t, f in MISSED])
def test_missed_shapes_and_obfuscated_secrets_are_redacted(text: str, fragments: tuple[str, ...]) -> None:
    out, n = redact(text)
    assert n >= 1 and has_secrets(text), out
    assert "[REDACTED:" in out
    for piece in fragments:
        assert piece not in out, f"{piece!r} left in {out!r}"
    assert redact_secrets(out) == out  # idempotent


# a password/PIN key word whose separator and/or value continue on the next line (red team: prose wraps)
WRAPPED_PW: list[tuple[str, str, str]] = [
    ("colon-then-value", "password:\nhunter2xyz", "hunter2xyz"),
    ("value-line-separator", "Password\n: hunter2", "hunter2"),
    ("is-then-value", "My password is\nhunter2xyz\n", "hunter2xyz"),
    ("for-the-box-indented", "the password for the NAS is\n  Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("passphrase-next-line", "my password is\ncorrect horse battery staple.", "battery staple"),
    ("bare-value-looks-like-pw", "I log in with password\nXy7!kq9Lm", "Xy7!kq9Lm"),
    ("short-pw", "pw:\nhunter2x", "hunter2x"),
    ("ru-colon", "пароль:\nKotik2024", "Kotik2024"),
    ("ru-dash-next-line", "мой пароль\n— Kotik2024", "Kotik2024"),
    ("ru-colon-next-line", "пароль от сервера\n: Kotik#2024", "Kotik#2024"),
    ("ru-instrumental", "войти с паролем\nKotik2024", "Kotik2024"),
    ("de-kennwort", "Kennwort:\nGeheim123", "Geheim123"),
    ("pin-colon", "PIN:\n4821", "4821"),
    ("pin-is", "my PIN is\n4821", "4821"),
    ("locker-combination", "locker combination is 7731", "7731"),
    ("combination-is", "the combination is 7731", "7731"),
    ("combination-next-line", "locker combination\n7731", "7731"),
    ("ru-lock-code", "код замка 7731", "7731"),
    ("ru-lock-code-next-line", "код замка\n7731", "7731"),
]
WRAPPED_NEGATIVES: list[tuple[str, str]] = [
    ("next-sentence", "I forgot my password\nSee you tomorrow"),
    ("next-word", "Reset your password\nThanks"),
    ("is-then-sentence", "My password is\nstored in the vault."),
    ("was-then-participle", "The password was\nchanged yesterday"),
    ("is-then-stopword", "My password is\nwrong."),
    ("next-key", "Password:\nUsername: bob"),
    ("next-name", "I forgot my password\nBob"),
    ("question-then-link", "Forgot password?\nClick here"),
    ("pin-then-sentence", "Enter your PIN\n2 attempts left"),
    ("ru-next-sentence", "пароль от почты\nНапомни завтра"),
    ("combination-of", "a combination of features 2024"),
    ("combination-then-roadmap", "a combination\n2024 roadmap"),
]


@pytest.mark.parametrize(("text", "secret"), [pytest.param(t, s, id=i) for i, t, s in WRAPPED_PW])
def test_a_password_continued_on_the_next_line_is_redacted(text: str, secret: str) -> None:
    out = redact_secrets(text)
    assert secret not in out and "[REDACTED:" in out, out
    assert redact_secrets(out) == out


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in WRAPPED_NEGATIVES])
def test_a_next_sentence_after_a_password_word_is_not_a_password(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.usefixtures("memory_on")
def test_a_memory_file_with_the_password_on_the_next_line_is_indexed_redacted(data_dir: Path) -> None:
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.memory.tools import handle_tool

    ws = paths.workspace_dir("main")
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "box.md").write_text("My password is\nhunter2xyz\n", encoding="utf-8")
    svc = MemoryService(load_settings().memory)
    try:
        svc.reindex("main")
        got = handle_tool(svc, "main", "memory_get", {"path": "memory/box.md"})
        found = handle_tool(svc, "main", "memory_search", {"query": "my password", "k": 5})
    finally:
        svc.close()
    for out in (got, found):
        assert "hunter2xyz" not in str(out), out
    assert "[REDACTED:" in str(got)
    assert [x for x in _leaks(data_dir) if not x.endswith("memory/box.md")] == []


def test_a_passphrase_is_redacted_to_the_end_of_its_clause_only() -> None:
    assert redact_secrets("my password is correct horse battery staple") == "my password is [REDACTED:password]"
    out = redact_secrets("my password is purple monkey dishwasher, and the user is bob")
    assert out == "my password is [REDACTED:password], and the user is bob"


def test_an_over_long_secret_is_redacted_whole() -> None:
    assert redact_secrets("token=" + "A1b2" * 200 + " ok") == "token=[REDACTED:credential] ok"


def test_obfuscation_is_replaced_in_the_original_span() -> None:
    out = redact_secrets("use ghp_ABCDEFGHIJ\u200bKLMNOPQRSTUVWXYZ0123456789 now")
    assert out == "use [REDACTED:github_token] now"
    out = redact_secrets("key AKIAIOSFODNN7EXAMP\nLE done")
    assert out == "key [REDACTED:aws_access_key] done"


def test_large_obfuscated_input_is_scanned() -> None:
    """1 MB of mixed text with zero-width characters still finds the secret at its end (linear)."""
    text = ("Всё в порядке, pass\u200bword hint ok. " * 30000)[:1_000_000] + f" password: {PW}"
    out = redact_secrets(text)
    assert PW not in out and out.endswith("[REDACTED:password]")


OVER_REDACTED = [
    ("primary-key", "primary_key = order_id2"),
    ("sort-key", "sort_key: created_at2"),
    ("cache-key", "cache_key=user:42:profile"),
    ("foreign-key", "foreign_key: orders_id1"),
    ("partition-key", "partition_key = tenant_id7"),
    ("camel-identifier", "AbstractSingletonProxyFactoryBean2Impl"),
    ("camel-identifier-sentence", "see SimpleBeanFactoryAwareAspectInstanceFactory3 in the trace"),
    ("s3-part-file", "s3://bkt/part-00000-4f3c2b1a-7d6e-4a5b-9c8d-1e2f3a4b5c6d.parquet"),
    ("pwd-path", "run pwd = /srv/app"),
    ("pwd-getcwd", "pwd = os.getcwd()"),
    ("pass-lambda", "pass = lambda x: x2"),
    ("token-ttl", "token: 3600s TTL"),
    ("pin-version", "PIN is 2024-05 release"),
    ("url-random-segment", "https://example.com/download/Zx8Qp2Lm9Vt4Rk7Wn3Yb6Hc1Jd5Gf0SeTa/file.zip"),
    ("sha512-integrity",
     "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="),
    ("password-from-env", "password = os.environ['DB_PASSWORD']"),
    ("the-pass-word", "the tests pass now, see build 4471"),
    ("boarding-pass", "the boarding pass is ready"),
    ("password-is-sentence", "the password is stored in the vault"),
    ("backup-codes-prose", "backup codes are printed on the sheet"),
    ("seed-phrase-prose", "the seed phrase is written on paper in the safe"),
]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in OVER_REDACTED])
def test_identifiers_code_and_paths_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text) == (text, 0)


# -- red-team findings: what the model's tools and compaction store --------------------------------

TOOL_SECRET = f"they said my password is Crane42neck and {GH36}"


@pytest.mark.parametrize("field", ["reason", "scope_ref", "origin", "key", "session_id", "created_at"])
def test_every_string_field_of_an_inbox_entry_is_redacted(data_dir: Path, field: str) -> None:
    from neotask_tui.engine.state.inbox import Candidate, Inbox

    inbox = Inbox("main")
    cand = Candidate(text="User prefers tabs", scope="user", origin="model")
    setattr(cand, field, TOOL_SECRET)
    inbox.add(cand)
    raw = inbox.path.read_text(encoding="utf-8")
    assert "Crane42neck" not in raw and GH36 not in raw, raw
    assert "[REDACTED:" in raw


@pytest.mark.parametrize("args", [
    pytest.param({"text": "User prefers tabs", "scope": "user", "reason": TOOL_SECRET}, id="reason"),
    pytest.param({"text": "User prefers tabs", "scope": "user", "reason": "ok", "why": TOOL_SECRET,
                  "evidence": TOOL_SECRET}, id="extra-fields"),
    pytest.param({"text": f"User prefers tabs; {TOOL_SECRET}", "scope": "user"}, id="text"),
])
async def test_propose_memory_stores_no_secret_in_any_field(engine: Engine, data_dir: Path,
                                                            args: dict[str, str]) -> None:
    engine.provider.queue(  # type: ignore[union-attr]
        {"text": "", "tool_calls": [{"id": "d1", "name": "propose_memory", "arguments": args}]},
        {"text": "ok"},
    )
    await run_turn(engine, "more", KEY)
    raw = (paths.workspace_dir("main") / "inbox.json").read_text(encoding="utf-8")
    assert "Crane42neck" not in raw and GH36 not in raw, raw


def _state_blob(engine: Engine) -> str:
    assert engine.state is not None
    states = [e.data for e in engine.events(KEY) if e.type == "state"]
    return repr(engine.state.get(KEY)) + repr(engine.state.audit(KEY)) + json.dumps(states)


@pytest.mark.parametrize(("name", "args"), [
    pytest.param("fire_event", {"name": GH36}, id="event-name-token"),
    pytest.param("fire_event", {"name": "deploy done; " + GH36}, id="event-name-pattern"),
    pytest.param("update_session_state", {"field": GH36, "value": "x"}, id="field-name-token"),
    pytest.param("update_session_state", {"field": "current_step", "value": "x", "until_event": GH36},
                 id="until-event-token"),
    pytest.param("update_session_state", {"field": "expires_at", "value": GH36 + " + 7d"}, id="after-event-token"),
    pytest.param("resolve_open_question", {"question": "1", "answer": TOOL_SECRET}, id="resolve-answer"),
])
async def test_state_tools_store_no_secret(engine: Engine, name: str, args: dict[str, str]) -> None:
    assert engine.state is not None
    await run_turn(engine, "hello", KEY)
    await engine.state.add_open_question(KEY, "which db?")
    result = await engine.state.handle_tool(KEY, ToolCall("c1", name, args))
    assert result is not None
    blob = _state_blob(engine)
    assert "Crane42neck" not in blob and GH36 not in blob, blob
    if name != "resolve_open_question":
        assert result.text.startswith("error:") and result.is_error, result
        assert GH36 not in result.text


@pytest.mark.parametrize("bad", ["has space", "1starts_with_digit", "semi;colon", "x" * 65])
async def test_fire_event_enforces_the_declared_pattern(engine: Engine, bad: str) -> None:
    assert engine.state is not None
    await run_turn(engine, "hello", KEY)
    result = await engine.state.handle_tool(KEY, ToolCall("c1", "fire_event", {"name": bad}))
    assert result is not None and result.text.startswith("error:") and result.is_error, result
    assert bad not in engine.state.get(KEY).fired


async def test_scripted_repro_of_the_tool_call_leak(engine: Engine, data_dir: Path) -> None:
    engine.provider.queue(  # type: ignore[union-attr]
        {"text": "", "tool_calls": [
            {"id": "d1", "name": "propose_memory", "arguments": {
                "text": "User prefers tabs", "scope": "user", "reason": TOOL_SECRET}},
            {"id": "d3", "name": "fire_event", "arguments": {"name": GH36}}]},
        {"text": "ok"},
    )
    await run_turn(engine, "more", KEY)
    raw = (paths.workspace_dir("main") / "inbox.json").read_text(encoding="utf-8")
    assert "Crane42neck" not in raw and GH36 not in raw
    assert GH36 not in _state_blob(engine)


@pytest.mark.parametrize("use_model", [False, True], ids=["extractive", "model"])
async def test_the_compaction_summary_holds_no_secret(engine: Engine, use_model: bool) -> None:
    engine.compactor.use_model = use_model  # type: ignore[attr-defined]
    if use_model:
        engine.provider.queue(  # type: ignore[union-attr]
            *[{"text": "fine"}] * 6,
            {"text": f"## Goal\n- Deploy with `{GH36}` [e:2]\n## Exact identifiers\n- `{GH36}` [e:2]"},
        )
    await run_turn(engine, f"Deploy the app with the token {GH36} to acme-prod, do not use Redis.", KEY)
    for i in range(5):
        await run_turn(engine, f"step {i}: " + "filler text " * 200, KEY)
    r = await engine.compact(KEY)  # type: ignore[attr-defined]
    assert (r.model == "extractive") != use_model, (r.model, r.fallback_reason)
    stored = [e.data for e in engine.events(KEY) if e.type == "compaction"]
    assert stored, "nothing was compacted"
    blob = json.dumps(stored) + r.summary + json.dumps(r.sections) + json.dumps(r.repaired)
    assert GH36 not in blob, blob
    assert "[REDACTED:" in stored[0]["summary"]
    assert "acme-prod" in stored[0]["summary"]
