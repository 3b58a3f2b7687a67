"""Red team 37, findings 1, 2 and 5: passwords in prose that stayed in the search index, the memory
index, the session state and the promotion inbox.

F1: a passphrase whose clause ends at "and"/"but"/"и" rather than at a comma or the sentence's end
("My passphrase is correct horse battery stapleq and that is all") was kept whole, and one with a
digit in a word ("purple monkey dishwasher8", "юговосток2") lost only its first word. F2: "The
password for the VPN? It's V" (the question qualified by "for X") and "the wifi password is on the
fridge: V". F5: "I reset the password; it's now V", "пароль поменял, теперь он V", and "I reset it
to V" sent right after a message about a password."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neotask_tui.storage.search import redacted_indexed_text
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import cli as neotask
from tests.faults.helpers import derived_files_containing, sqlite_rows_text
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

API_KEY = "sk-test-" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zXc"  # built at runtime: no literal credential
M = "[REDACTED:password]"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("My passphrase is correct horse battery stapleq and that is all",
     f"My passphrase is {M} and that is all"),
    ("My passphrase is correct horse battery staplee but keep it quiet",
     f"My passphrase is {M} but keep it quiet"),
    ("My passphrase is correct horse battery staplew and I never change it",
     f"My passphrase is {M} and I never change it"),
    ("the passphrase is purple monkey dishwasher8, and I never change it",
     f"the passphrase is {M}, and I never change it"),
    ("the passphrase is purple monkey dishwasher8.", f"the passphrase is {M}."),
    ("мой пароль — синий кит летит юговосток2 и больше ничего", f"мой пароль — {M} и больше ничего"),
    ("мой пароль — синий кит летит юговосток2, но это секрет", f"мой пароль — {M}, но это секрет"),
], ids=["and-that-is-all", "but-keep-quiet", "and-i-never", "digit-word-comma-and", "digit-word",
        "ru-and", "ru-comma-but"])
def test_a_passphrase_is_masked_to_the_end_of_its_clause(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("The password for the VPN? It's vpnPw12x.", f"The password for the VPN? It's {M}."),
    ("The password for prod? It's hunter66yy.", f"The password for prod? It's {M}."),
    ("Пароль от почты? Это Kotik2031", f"Пароль от почты? Это {M}"),
    ("the wifi password is on the fridge: fridgePw77x", f"the wifi password is on the fridge: {M}"),
    ("the password's on the fridge: Fr1dge!x", f"the password's on the fridge: {M}"),
    ("The password is written on the sticky note: Stick7note!", f"The password is written on the sticky note: {M}"),
], ids=["for-the-vpn", "for-prod", "ru-ot-pochty", "on-the-fridge", "possessive-on-the-fridge", "sticky-note"])
def test_a_qualified_question_and_a_located_password_are_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("I reset the password; it's now resetPwX1", f"I reset the password; it's now {M}"),
    ("I changed the password, now it is resetPwX2", f"I changed the password, now it is {M}"),
    ("the password changed, it's resetPwX3 now", f"the password changed, it's {M} now"),
    ("I changed my VPN password. Now it's resetPwX4!", f"I changed my VPN password. Now it's {M}"),
    ("the admin password was reset — the new one is resetPwX6", f"the admin password was reset — the new one is {M}"),
    ("пароль поменял, теперь он Kotik2032", f"пароль поменял, теперь он {M}"),
    ("пароль обновил, он теперь Kotik2036", f"пароль обновил, он теперь {M}"),
    ("пароль сбросил, теперь там Kotik2037", f"пароль сбросил, теперь там {M}"),
    ("сменил пароль от почты, теперь это Kotik2038.", f"сменил пароль от почты, теперь это {M}."),
], ids=["en-reset-its-now", "en-changed-now-it-is", "en-changed-its-now-after", "en-sentence-break",
        "en-the-new-one", "ru-teper-on", "ru-on-teper", "ru-teper-tam", "ru-verb-first"])
def test_a_changed_password_given_after_now_its_is_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
def test_i_reset_it_to_after_a_message_about_the_password_is_redacted() -> None:
    said, before = "I reset it to resetPwX7", "The staging password expired yesterday."
    assert redact_secrets(said, context=before) == f"I reset it to {M}"
    assert redact_secrets(said) == said  # alone, "reset it to X" is no password (see the next test)
    kept, values = redacted_indexed_text(said, context=before)
    assert kept == f"I reset it to {M}" and values == ["resetPwX7"]


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "the password is stored in the vault and rotated weekly",
    "the password is at least 8 characters and must have a digit",
    "the password was reset yesterday and I forgot it",
    "the password is required for login and signup",
    "my password is the same everywhere and that is bad",
    "My passphrase is long but memorable",
    "пароль был изменён вчера вечером и я его забыл",
    "The password for the VPN? It's in the vault.",
    "The password for the VPN? It's expired.",
    "The password for prod? It's the one on the sticky note.",
    "Forgot your password for the VPN? It's easy to reset.",
    "the wifi password is on the fridge",
    "the wifi password is on the fridge: ask Bob",
    "The password is explained here: docs.example.com",
    "The password is explained here: https://example.com/Pw2",
    "I reset the password; it's now working",
    "I changed the password, now it is 16 characters long",
    "I changed the password, it's now in the vault",
    "the password changed, it's fine now",
    "I changed the password. Now it's Okay.",
    "пароль поменял, теперь он длиннее",
    "пароль обновил, теперь там всё нормально",
    "I reset the theme, now it's Dark2",
    "I changed the config; it's now useState2",
], ids=["vault-and-rotated", "at-least-and", "reset-and-forgot", "required-and", "same-and-bad",
        "long-but-memorable", "ru-changed-and-forgot", "q-vault", "q-expired", "q-sticky-note", "q-forgot",
        "fridge-no-value", "fridge-ask-bob", "explained-here-host", "explained-here-url", "now-working",
        "now-16-chars", "now-in-vault", "fine-now", "now-okay", "ru-longer", "ru-all-fine",
        "theme-not-password", "config-not-password"])
def test_prose_about_a_password_is_kept(said: str) -> None:
    assert redact_secrets(said) == said


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("before", "said"), [
    ("The staging password expired yesterday.", "I reset HEAD to origin/main"),
    ("The staging password expired yesterday.", "I set the timeout to 30s"),
    ("Hello there.", "I reset it to resetPwX7"),
], ids=["git-reset", "timeout", "no-password-before"])
def test_reset_it_to_without_a_password_before_is_kept(before: str, said: str) -> None:
    assert redact_secrets(said, context=before) == said


@pytest.mark.promise("secrets")
def test_prose_passwords_stay_out_of_search_memory_state_and_inbox(neotask_home: Path) -> None:
    said = ["My passphrase is correct horse battery stapleq and that is all",
            "мой пароль — синий кит летит юговосток2 и больше ничего",
            "The password for the VPN? It's vpnPw12x.",
            "I reset the password; it's now resetPwX1",
            "The staging password expired yesterday.",
            "I reset it to resetPwX7"]
    values = ["stapleq", "юговосток2", "vpnPw12x", "resetPwX1", "resetPwX7"]
    env = {"OPENAI_API_KEY": API_KEY, "NEOTASK_MEMORY_ENABLED": "true"}
    with OpenAIServer() as srv:
        for _ in said:
            srv.queue(Reply(chunks=["Noted."], usage=ReplyUsage(input=10, output=1)))
        env["OPENAI_BASE_URL"] = srv.base_url
        for text in said:
            r = neotask("send", text, env=env)
            assert r.returncode == 0, r.stderr
    for value in values:
        r = neotask("search", value, env=env)
        assert "no message matches" in r.stdout + r.stderr, r.stdout
    for shown in (("inbox", "list", "--all", "--json"), ("state", "--json")):
        r = neotask(*shown, env=env)
        assert r.returncode == 0, r.stderr
        out = json.dumps(json.loads(r.stdout), ensure_ascii=False)
        assert all(v not in out for v in values), out
    r = neotask("sessions", "new", "agent:main:tui:default", env=env)
    assert r.returncode == 0, r.stderr
    r = neotask("memory", "search", "what is my password", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert all(v not in r.stdout for v in values), r.stdout
    data = neotask_home / "data"
    for index in ("search", "lancedb"):
        assert (data / index).is_dir(), index
        assert derived_files_containing(data / index, [v.encode() for v in values]) == []
    assert all(v not in sqlite_rows_text(data) for v in values)
