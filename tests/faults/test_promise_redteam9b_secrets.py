"""Red-team round 9b (secrets): a secret in an attached file or a copied reply is redacted in every
shape the README promises — XML elements, PHP constants, backslash-continued assignments, strings
split over two lines, Markdown tables, comment-wrapped values, every secret-named ``.env`` key, and
tokens wrapped onto the next line."""

from __future__ import annotations

from pathlib import Path

import pytest

from neotask_tui.commands import dispatch
from neotask_tui.commands.intents import CopyText
from neotask_tui.engine.context.attachments import read_attachment
from neotask_tui.engine.facade import Engine
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import KEY, run_turn

PW = "Zebra9" + "Quokka1"  # built at runtime: no literal credential in the repository


@pytest.mark.parametrize("content", [
    pytest.param(f"<config>\n  <password>{PW}</password>\n</config>\n", id="xml-element"),
    pytest.param(f"define('DB_PASSWORD', '{PW}');\n", id="php-define"),
    pytest.param(f"export DB_PASSWORD=\\\n  {PW}\n", id="env-line-continuation"),
    pytest.param(f'api_key = ("{PW[:6]}"\n           "{PW[6:]}XyZ42abc")\n', id="python-split-string"),
    pytest.param(f"| service | user | password |\n|---|---|---|\n| staging db | admin | {PW} |\n", id="markdown-table"),
    pytest.param(f"# the staging password is\n# {PW}\n", id="comment-wrapped"),
    pytest.param(f"// password:\n// {PW}\n", id="slash-comment-wrapped"),
])
def test_attached_file_secrets_are_redacted_in_every_shape(tmp_path: Path, content: str) -> None:
    """README, Attach / Secrets: "A file you attach (`/file`, `@path`) is not something you typed: it
    is stored, sent and exported redacted" — `KEY=value` lines with secret names, passwords, "a value
    wrapped onto the next line". Config files write a password as an XML element, a PHP constant, a
    shell assignment continued with a backslash, or a string split over two lines."""
    f = tmp_path / "settings.conf"
    f.write_text(content)
    a = read_attachment(str(f))
    tail = PW[6:]
    assert tail not in a.text, a.text
    assert "[REDACTED:" in a.text, a.text


def test_attached_token_wrapped_with_backslash_is_fully_redacted(tmp_path: Path) -> None:
    """README, Secrets: secrets are "matched also through ... line wraps". An API key in a .env file
    continued over two lines keeps its second half in the attached (stored and sent) text."""
    f = tmp_path / ".env"
    f.write_text("OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv\\\n1wXy4zAb7cDe0fGh\n")
    a = read_attachment(str(f))
    assert "1wXy4zAb7cDe0fGh" not in a.text, a.text


def test_attached_aws_secret_wrapped_is_fully_redacted(tmp_path: Path) -> None:
    """README, Secrets: "matched also through ... line wraps". The rest of a wrapped AWS secret key
    in an attached credentials file must not reach the transcript or the model."""
    f = tmp_path / "credentials"
    f.write_text("[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG\n  /bPxRfiCYEXAMPLEKEY\n")
    a = read_attachment(str(f))
    assert "bPxRfiCYEXAMPLEKEY" not in a.text, a.text


@pytest.mark.parametrize("reply", [
    pytest.param(f"Your database password is:\n```\n{PW}\n```\n", id="value-in-next-block"),
    pytest.param(f"Set it:\n```bash\nexport DB_PASSWORD=\\\n  {PW}\n```\n", id="continued-assignment"),
])
async def test_copy_of_a_reply_and_its_block_is_redacted(engine: Engine, reply: str) -> None:
    """README, Copy: "The copy is what the transcript shows: secrets redacted" and Secrets: "what
    `/copy` puts on the clipboard is redacted too" (a password "wrapped onto the next line"). A reply
    that gives a password on the line after its cue, in a code block, is copied in clear."""
    engine.provider.queue(reply)  # type: ignore[union-attr]
    await run_turn(engine, "what is the db password?", KEY)
    for cmd in ("/copy", "/copy 1"):
        res = await dispatch(engine, KEY, cmd)
        assert isinstance(res.intent, CopyText), res.text
        assert PW not in res.intent.text, (cmd, res.intent.text)


@pytest.mark.parametrize("name", ["GITHUB_PAT", "ENCRYPTION_KEY", "HMAC_KEY", "APP_KEY", "BASIC_AUTH", "ADMIN_PIN"])
def test_attached_env_file_redacts_every_secret_name(tmp_path: Path, name: str) -> None:
    """README, Secrets: "`KEY=value` lines with secret names" are redacted, and Attach: an attached
    file is "stored, sent and exported redacted". A `.env` file's `ENCRYPTION_KEY=`, `HMAC_KEY=`,
    `GITHUB_PAT=`, `APP_KEY=` (Laravel), `BASIC_AUTH=` or `ADMIN_PIN=` line keeps its value."""
    f = tmp_path / ".env"
    f.write_text(f"APP_ENV=production\n{name}={PW}\nLOG_LEVEL=info\n")
    a = read_attachment(str(f))
    assert PW not in a.text, a.text


@pytest.mark.parametrize("text", [
    pytest.param("AWS_ACCESS_KEY_ID=example\nKEY_PATH=/etc/app/key.pem\nAUTH_URL=https://id.example.com\n",
                 id="not-key-ends"),
    pytest.param("STRIPE_PUBLISHABLE_KEY=pk_demo_42\nSORT_KEY=created_at\n", id="public-and-table-keys"),
    pytest.param("FEATURE_AUTH=enabled\nREQUIRE_AUTH=true\nADMIN_PIN=\n", id="switches"),
    pytest.param("| test | pass |\n|---|---|\n| login | Yes2day |\n", id="pass-fail-column"),
    pytest.param("| token | count |\n|---|---|\n| hello | 12 |\n", id="token-column-of-words"),
    pytest.param('field("password", "Password")\n', id="label-pair"),
    pytest.param("password:\n# Zebra9Quokka1\n", id="comment-only-on-value-line"),
    pytest.param("docker run \\\n  --name web \\\n  nginx:1.25\n", id="shell-continuation"),
    pytest.param("Run this:\n```\nmake-test2\n```\n", id="block-after-a-colon"),
])
def test_ordinary_config_and_prose_are_left_readable(text: str) -> None:
    """The new shapes do not over-redact: names that end in another part, public and table keys,
    switches, a pass/fail or token column of words, a label, a comment that the cue line has not."""
    assert redact_secrets(text) == text
