"""Red team 36, finding 1: a password given as a question's answer ("My password? It's …") was
redacted only when it had a password's shape — a letters-only value ("correcthorse") and a passphrase
("correct horse battery staple") stayed in the search index, in `memory search` results and in
compaction summaries, where "my password is …" redacts both."""

from __future__ import annotations

from pathlib import Path

import pytest

from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import cli as neotask
from tests.faults.helpers import derived_files_containing, sqlite_rows_text
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

API_KEY = "sk-test-" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zXc"  # built at runtime: no literal credential
M = "[REDACTED:password]"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("My password? It's correcthorse", f"My password? It's {M}"),
    ("My password? It's correct horse battery staple", f"My password? It's {M}"),
    ("the ssh passphrase? It's lucky clover meadow.", f"the ssh passphrase? It's {M}."),
    ("My password? It is correct horse battery staple, and the user is bob",
     f"My password? It is {M}, and the user is bob"),
    ("Password? That's hunterhunter", f"Password? That's {M}"),
    ("My password? It's zebra7Kx", f"My password? It's {M}"),
    ("Пароль? Это корректная лошадь батарейка скрепка.", f"Пароль? Это {M}."),
    ("Пароль? Это корректнаялошадь", f"Пароль? Это {M}"),
    ("Мой пароль? Это синий кот луна", f"Мой пароль? Это {M}"),
], ids=["en-letters", "en-passphrase", "en-passphrase-ssh", "en-it-is-clause", "en-thats", "en-shaped",
        "ru-passphrase", "ru-letters", "ru-short-phrase"])
def test_a_password_as_a_questions_answer_is_redacted_as_after_is(said: str, redacted: str) -> None:
    assert redact_secrets(said) == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("said", [
    "My password? It's in the vault.",
    "My password? It's the one on the sticky note.",
    "It's the one on the sticky note",
    "My password? It's expired.",
    "My password? It's changed every month.",
    "The passphrase? It is written on the card.",
    "Forgot password? Click here",
    "Forgot your password? It's easy to reset.",
    "Need a new password? It's quick.",
    "My password? That's a secret.",
    "Пароль? Это как обычно.",
    "Пароль? Это не важно.",
    "Пароль? Это тот же, что и раньше.",
], ids=["vault", "sticky-note", "no-cue", "expired", "changed", "written", "forgot-click", "forgot-easy",
        "need-new", "thats-a-secret", "ru-usual", "ru-not-important", "ru-same"])
def test_prose_about_a_password_after_its_question_is_kept(said: str) -> None:
    assert redact_secrets(said) == said


@pytest.mark.promise("secrets")
def test_answered_passwords_stay_out_of_search_memory_and_the_indexes(neotask_home: Path) -> None:
    said = ["My password? It's correct horse battery staple", "My password? It's correcthorse",
            "the ssh passphrase? It's lucky clover meadow", "Пароль? Это синий кот луна"]
    values = ["battery", "correcthorse", "clover", "синий"]
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
    r = neotask("search", "REDACTED", env=env)
    assert r.stdout.count("[REDACTED:password]") >= len(said), r.stdout
    r = neotask("sessions", "new", "agent:main:tui:default", env=env)
    assert r.returncode == 0, r.stderr
    r = neotask("memory", "search", "what is my password", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert "[REDACTED:password]" in r.stdout, r.stdout  # the history passages are there, masked
    data = neotask_home / "data"
    assert all(v not in r.stdout for v in values)
    for index in ("search", "lancedb"):  # (the embedder's vocabulary under models/ has these words)
        assert (data / index).is_dir(), index
        assert derived_files_containing(data / index, [v.encode() for v in values]) == []
    assert all(v not in sqlite_rows_text(data) for v in values)
    lance = _lance_rows_text()
    assert "[REDACTED:password]" in lance and all(v not in lance for v in values)


def _lance_rows_text() -> str:
    """Every text column of the memory index's rows (LanceDB may store them compressed)."""
    from neotask_tui.config import load_settings
    from neotask_tui.memory.service import MemoryService

    svc = MemoryService(load_settings().memory)
    try:
        rows = svc.store.rows_where("agent_id = 'main'", ["text", "etext", "lex", "ctx", "heading"])
    finally:
        svc.close()
    return repr(rows)
