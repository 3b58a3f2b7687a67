"""Red team 41: "/pref use token Yak9090Tok for the api --for 2h" kept the token in session state (a value
right after "token" in an instruction was read as a weak cue); more words between a password and ", it's V"
than a short list allows ("the password for the router is what I use everywhere, it's V") and words after
"the db password. It's V" ("… for sure") kept the password. Prose about tokens and passwords stays as
typed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neotask_tui.commands import dispatch
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import KEY

W, C = "[REDACTED:password]", "[REDACTED:credential]"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("/pref use token Yak9090Tok for the api --for 2h", f"/pref use token {C} for the api --for 2h"),
    ("use token Yak9090Tok for the api", f"use token {C} for the api"),
    ("authenticate with the bot token Yak9090Tok", f"authenticate with the bot token {C}"),
    ("paste secret Yak9090Tok here", f"paste secret {C} here"),
    ("use token 'Yak9090Tok' for prod", f"use token {C} for prod"),
    ("use token hunter22x", f"use token {C}"),
])
def test_a_token_given_in_an_instruction_to_use_it_is_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "use token auth for the api", "the token expires in 2h", "token 2", "use token v2", "the token count is 4096",
    "use the refresh token flow", "use token base64 encoding", "use the token limit 128k", "with secret sauce",
    "use token oauth2 for the api", "pass the token to the next call", "use secret santa rules",
])
def test_prose_about_using_a_token_is_kept(said: str) -> None:
    assert redact_secrets(said) == said


@pytest.mark.promise("secrets")
async def test_the_token_of_a_pref_stays_out_of_state_and_every_file(engine: Any, data_dir: Path) -> None:
    r = await dispatch(engine, KEY, "/pref use token Yak9090Tok for the api --for 2h")
    assert not r.error, r.text
    assert "Yak9090Tok" not in r.text
    shown = await dispatch(engine, KEY, "/state")
    assert "use token [REDACTED:credential] for the api" in shown.text, shown.text
    assert [p for p in data_dir.rglob("*") if p.is_file() and b"Yak9090Tok" in p.read_bytes()] == []


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("the password for the router is what I use everywhere, it's Plover7711",
     f"the password for the router is what I use everywhere, it's {W}"),
    ("my password for the nas, the one I always forget, it is Tern4488Sky",
     f"my password for the nas, the one I always forget, it is {W}"),
    ("my password for the nas, the one I always forget, it is Tern4488Sky.",
     f"my password for the nas, the one I always forget, it is {W}."),
    ("the wifi password is on a sticker under the router, it's Plover7711 and the user is admin",
     f"the wifi password is on a sticker under the router, it's {W} and the user is admin"),
])
def test_a_password_given_as_it_after_more_words_and_a_comma_is_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "the password policy is strict, it is 12 characters minimum", "the password field is empty, it's fine",
    "password reset works, it's done", "my password manager is great, it's 1Password",
    "I typed the password for the vpn but the client failed, it's WireGuard2",
    "the password for the wifi is in the admin page, it's 192.168.1.1",
    "the password hashing we use is slow, it's Argon2id",
])
def test_prose_about_a_password_before_a_comma_and_it_is_kept(said: str) -> None:
    assert redact_secrets(said) == said


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("the db password. It's Heron5151Gate for sure", f"the db password. It's {W} for sure"),
    ("the wifi password. It is Moss7373Fern, I think", f"the wifi password. It is {W}, I think"),
    ("the db password. It's Heron5151Gate I think.", f"the db password. It's {W} I think."),
    ("the staging password; it's Heron5151Gate if I remember correctly",
     f"the staging password; it's {W} if I remember correctly"),
])
def test_a_password_after_a_full_stop_and_it_is_with_words_after_it_is_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "I need a new password too. It was iPhone12 that died", "the password again; it was WiFi6Ready for a week",
    "the password expired. It is Monday for sure", "the password policy changed. It's Argon2id now",
])
def test_prose_after_a_full_stop_and_it_is_is_kept(said: str) -> None:
    assert redact_secrets(said) == said
