"""Red team 41 (second report, F1–F7): a hedge or an intensifier between the password's cue and its value
was masked instead of the value ("I think my password is probably Tr0ub4dor3x" became "… is
[REDACTED:password] Tr0ub4dor3x", so the real password went to the session state, the inbox, both indexes,
MEMORY.md via /remember and `memory add` — which reported "1 secret redacted" — and the compaction summary's
"Exact identifiers"); an aside after "is" ("my password is, I think, V"), a PIN with a hedge ("my PIN is
probably 8264"), a token with "basically" and a Russian password after a hedge with no separator ("пароль
точно V", "пароль от сервера скорее всего V") kept the value in clear. The hedge is now skipped and stays as
typed; the value after it is masked when it has a password's shape. Prose about the password ("the password
is probably wrong", "the token is basically useless now", "пароль точно неправильный") stays as typed, and so
does "my password is definitely not 1234" (it says what the password is not: "not" is no value)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from neotask_tui import paths
from neotask_tui.commands import dispatch
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import KEY, derived_files_containing, run_turn, sqlite_rows_text
from tests.faults.helpers import cli as neotask
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

API_KEY = "sk-test-" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zXc"  # built at runtime: no literal credential
W, P, C = "[REDACTED:password]", "[REDACTED:pin]", "[REDACTED:credential]"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    # F1: the hedge stays, the value goes
    ("I think my password is probably Tr0ub4dor3x", f"I think my password is probably {W}"),
    ("my password is literally L1tPw77z", f"my password is literally {W}"),
    ("the root password is really Re4llyPw9", f"the root password is really {W}"),
    ("the password is definitely Qu4rtz!91", f"the password is definitely {W}"),
    ("the db password is for sure F0rSure9", f"the db password is for sure {W}"),
    ("the wifi password is probably W1fiPr0b8.", f"the wifi password is probably {W}."),
    ("my password is maybe Kv4rtz91x", f"my password is maybe {W}"),
    ("the password is honestly Kv4rtz91x", f"the password is honestly {W}"),
    ("the password is apparently Kv4rtz91x", f"the password is apparently {W}"),
    ("my password is I think Kv4rtz91x", f"my password is I think {W}"),
    ("the password is probably still Kv4rtz91x", f"the password is probably still {W}"),
    ("my password is probably correct horse battery staple", f"my password is probably {W}"),
    ("the password's probably Kv4rtz91x", f"the password's probably {W}"),
    ("password: probably Kv4rtz91x", f"password: probably {W}"),
    ("пароль — точно Kv4rtz91x", f"пароль — точно {W}"),
    ("пароль: вроде Kv4rtz91x", f"пароль: вроде {W}"),
    # F2: an aside after "is"
    ("my password is, I think, Pl4ntain7q", f"my password is, I think, {W}"),
    ("my password is — I believe — Pl4ntain7q", f"my password is — I believe — {W}"),
    ("my password is (I think) Pl4ntain7q", f"my password is (I think) {W}"),
    # F3: a PIN with a hedge
    ("my PIN is probably 8264", f"my PIN is probably {P}"),
    ("the PIN is, I think, 8264", f"the PIN is, I think, {P}"),
    ("мой пин-код точно 7391", f"мой пин-код точно {P}"),
    # F6: a token with "basically"
    ("the api token is basically ghx9Bq7Lm2Zt5Kw8", f"the api token is basically {C}"),
    ("Remember: the vault token is basically hvs9Xk2Lq7Pz4Wm1", f"Remember: the vault token is basically {C}"),
    # F7: Russian, a hedge instead of a separator
    ("пароль точно Kv4rtz91x", f"пароль точно {W}"),
    ("пароль вроде Kv4rtz91x", f"пароль вроде {W}"),
    ("пароль от сервера скорее всего Kv4rtz91x", f"пароль от сервера скорее всего {W}"),
    ("пароль теперь уже RuUzh3!4", f"пароль теперь уже {W}"),
    ("пароль наверное Kv4rtz91x", f"пароль наверное {W}"),
    ("пароль кажется Kv4rtz91x", f"пароль кажется {W}"),
])
def test_a_value_after_a_hedge_is_redacted_and_the_hedge_kept(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("the staging password, it is probably Kv4rtz91x", f"the staging password, it is probably {W}"),
    ("I changed the password, now it is probably Kv4rtz91x", f"I changed the password, now it is probably {W}"),
    ("the password for the router is what I use everywhere, it is probably Kv4rtz91x",
     f"the password for the router is what I use everywhere, it is probably {W}"),
    ("Kv4rtz91x is probably my password", f"{W} is probably my password"),
])
def test_a_value_given_as_it_or_before_the_word_after_a_hedge_is_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
def test_it_is_probably_v_after_a_message_naming_the_password_is_redacted() -> None:
    before = "do not share the staging password"
    assert redact_secrets("it is probably Kv4rtz91x", context=before) == f"it is probably {W}"
    assert redact_secrets("it is probably fine", context=before) == "it is probably fine"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "the password is probably wrong", "the password is really long", "my password is definitely not 1234",
    "the PIN is probably in the drawer", "the token is basically useless now", "пароль точно неправильный",
    "пароль вроде бы сменили", "fix the password reset page", "my password manager is 1Password",
    "the password is in the vault", "the password is probably in the vault", "the password is probably expired",
    "the password is really hard to remember", "the password is, I think, wrong", "the pin is probably 4 digits",
    "the token is probably expired", "пароль скорее всего устарел", "пароль точно не 1234",
    "the password is, as always, stored in the vault", "password: probably",
    "the staging password, it is probably fine", "the password, it is probably stored in the vault",
    "I changed the password, now it is probably working", "that is probably my password",
    "Bob is probably my password manager",
])
def test_prose_with_a_hedge_is_kept(said: str) -> None:
    assert redact_secrets(said) == said


@pytest.mark.promise("secrets")
def test_a_hedged_password_stays_out_of_search_state_and_every_derived_file(neotask_home: Path) -> None:
    env = {"OPENAI_API_KEY": API_KEY}
    said = ["I think my password is probably Tr0ub4dor3x", "my PIN is probably 8264",
            "the api token is basically ghx9Bq7Lm2Zt5Kw8", "пароль от сервера скорее всего RuSk0ree6"]
    values = ["Tr0ub4dor3x", "8264", "ghx9Bq7Lm2Zt5Kw8", "RuSk0ree6"]
    with OpenAIServer() as srv:
        for _ in said:
            srv.queue(Reply(chunks=["OK noted."], usage=ReplyUsage(input=10, output=2)))
        env["OPENAI_BASE_URL"] = srv.base_url
        for text in said:
            r = neotask("send", text, env=env)
            assert r.returncode == 0, r.stderr
    for v in values:
        r = neotask("search", v, env=env)
        assert "no message matches" in r.stdout + r.stderr, r.stdout
    r = neotask("state", "--json", env=env)
    assert r.returncode == 0
    blob = json.dumps(json.loads(r.stdout), ensure_ascii=False)
    assert all(v not in blob for v in values), blob
    data = neotask_home / "data"
    assert derived_files_containing(data, [v.encode() for v in values]) == []
    rows = sqlite_rows_text(data)
    assert all(v not in rows for v in values)


@pytest.fixture
def memory_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")


@pytest.mark.promise("secrets")
@pytest.mark.usefixtures("memory_on")
def test_memory_add_of_a_hedged_password_writes_the_mask_it_reports(data_dir: Path) -> None:
    """F4: `memory add` said "1 secret(s) redacted" and wrote the password after the masked hedge."""
    out = neotask("memory", "add", "my password is literally L1tPw77z")
    assert out.returncode == 0, out.stderr
    assert "secret(s) redacted" in out.stdout
    md = (paths.workspace_dir("main") / "MEMORY.md").read_text(encoding="utf-8")
    assert f"my password is literally {W}" in md, md
    assert "L1tPw77z" not in md
    assert derived_files_containing(data_dir, [b"L1tPw77z"]) == []


@pytest.mark.promise("secrets")
@pytest.mark.usefixtures("memory_on")
async def test_remember_of_a_hedged_password_keeps_it_out_of_memory_md(engine: Any, data_dir: Path) -> None:
    """F4: /remember wrote "the wifi password is [REDACTED:password] W1fiPr0b8"."""
    r = await dispatch(engine, KEY, "/remember the wifi password is probably W1fiPr0b8")
    assert not r.error, r.text
    assert "W1fiPr0b8" not in r.text
    md = (paths.workspace_dir("main") / "MEMORY.md").read_text(encoding="utf-8")
    assert f"the wifi password is probably {W}" in md, md
    assert derived_files_containing(data_dir, [b"W1fiPr0b8"]) == []


@pytest.mark.promise("secrets")
async def test_the_compaction_summary_lists_no_hedged_password_as_an_identifier(engine: Any) -> None:
    """F5: the summary's "Exact identifiers" listed the value after the masked hedge."""
    for text in ("my goal is to migrate the Falconridge database", "I think my password is probably Tr0ub4dor3x",
                 "my password is literally L1tPw77z", "do not touch the replica db-west-2",
                 "ok next step: write the migration checklist"):
        await run_turn(engine, text, KEY)
    for i in range(4):
        await run_turn(engine, f"step {i}: " + "filler text " * 200, KEY)
    r = await engine.compact(KEY, preview=True)
    blob = r.summary + json.dumps(r.sections) + json.dumps(r.repaired)
    assert "Tr0ub4dor3x" not in blob and "L1tPw77z" not in blob, blob
    assert "db-west-2" in blob
