"""Red team 40: "do not share the staging password", then "it is Robin2323Nest" as the next message,
was kept in the search index: a value given as "it" right after a message naming the password is
redacted, as "I reset it to V" is."""

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
BEFORE = "do not share the staging password"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "redacted"), [
    ("it is Robin2323Nest", f"it is {M}"),
    ("It is Robin2323Nest.", f"It is {M}."),
    ("it's now Robin2323Nest", f"it's now {M}"),
    ("это Сова5151Ночь", f"это {M}"),
])
def test_a_value_given_as_it_after_a_message_naming_the_password_is_redacted(said: str, redacted: str) -> None:
    assert redact_secrets(said, context=BEFORE) == redacted
    assert redact_secrets(said) == said  # alone, "it is X" is no password
    kept, _ = redacted_indexed_text(said, context=BEFORE)
    assert kept == redacted


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("before", "said"), [
    (BEFORE, "it is fine"), (BEFORE, "It is Monday"), (BEFORE, "it is 10am"), (BEFORE, "it is 12-chars"),
    ("Hello there.", "it is Robin2323Nest"),
])
def test_it_is_prose_or_with_no_password_before_is_kept(before: str, said: str) -> None:
    assert redact_secrets(said, context=before) == said


@pytest.mark.promise("secrets")
def test_the_value_stays_out_of_search_and_state(neotask_home: Path) -> None:
    env = {"OPENAI_API_KEY": API_KEY}
    with OpenAIServer() as srv:
        for _ in range(2):
            srv.queue(Reply(chunks=["Noted."], usage=ReplyUsage(input=10, output=1)))
        env["OPENAI_BASE_URL"] = srv.base_url
        for text in (BEFORE, "it is Robin2323Nest"):
            r = neotask("send", text, env=env)
            assert r.returncode == 0, r.stderr
    r = neotask("search", "Robin2323Nest", env=env)
    assert "no message matches" in r.stdout + r.stderr, r.stdout
    r = neotask("state", "--json", env=env)
    assert r.returncode == 0 and "Robin2323Nest" not in json.dumps(json.loads(r.stdout), ensure_ascii=False)
    data = neotask_home / "data"
    assert derived_files_containing(data / "search", [b"Robin2323Nest"]) == []
    assert "Robin2323Nest" not in sqlite_rows_text(data)
