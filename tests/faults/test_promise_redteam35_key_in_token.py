"""Red team 35: a reply held ``ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab``, whose letters A–P are 16
characters of the configured key read without case. The configured-key mask replaced only those 16,
so the reply, the transcript and the search index read ``ghp_[REDACTED:api_key]QRSTUVWXYZ0123456789ab``
and ``neotask search QRSTUVWXYZ0123456789ab`` found it: 22 characters of a GitHub token kept in the
clear. A run of the key inside a longer token masks the whole token."""

from __future__ import annotations

from pathlib import Path

import pytest

from neotask_tui.providers._sdk import without_keys
from neotask_tui.text.secrets import API_KEY_MARK
from tests.faults.helpers import KEY
from tests.faults.helpers import cli as neotask
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

API_KEY = "sk-proj-" + "TESTKEYabcdefghijklmnop" + "7Hq2Lw9Vz4Rx"  # built at runtime: no literal credential
"""The configured key: only its run ``abcdefghijklmnop`` is in :data:`TOKEN`."""
TOKEN = "ghp_" + "ABCDEFGHIJKLMNOP" + "QRSTUVWXYZ0123456789ab"
REST = TOKEN[20:]
"""The token's characters after the key's run: another secret's, never stored or found."""


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("token", [
    TOKEN,  # the run in the middle
    "ABCDEFGHIJKLMNOP" + "QRSTUVWXYZ0123456789ab",  # at the start
    "ghp_" + "QRSTUVWXYZ0123456789ab" + "ABCDEFGHIJKLMNOP",  # at the end
    "glpat-" + "Zx9" + "abcdef-ghijklmnop" + "_Qw7Er",  # hyphens and underscores inside the token
    "ghp_" + "ABCDEFGHIJ\u200bKLMNOP" + "QRS\u0332TUVWXYZ",  # an invisible character and a combining mark
], ids=["middle", "start", "end", "hyphens", "invisible-and-mark"])
def test_a_run_of_the_key_inside_a_longer_token_masks_the_whole_token(token: str) -> None:
    assert without_keys(f"the token {token} works", [API_KEY]) == f"the token {API_KEY_MARK} works"


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("text", "masked"), [
    (f"OPENAI_API_KEY={API_KEY} set", f"OPENAI_API_KEY={API_KEY_MARK} set"),
    (f"my key is {API_KEY}. Thanks", f"my key is {API_KEY_MARK}. Thanks"),
    (f'use ("{API_KEY}") here', f'use ("{API_KEY_MARK}") here'),
    (f"see https://x.test/v1?key={API_KEY}&n=2 now", f"see https://x.test/v1?key={API_KEY_MARK}&n=2 now"),
    (f"a {TOKEN}{TOKEN} and {TOKEN} b", f"a {API_KEY_MARK} and {API_KEY_MARK} b"),
    ("the alphabet abcdefghijklmno ends with p", "the alphabet abcdefghijklmno ends with p"),
    (f"env NEOTASK_X_{API_KEY[8:]}: unknown", f"env NEOTASK_X_{API_KEY_MARK}: unknown"),
    (f"the my-key-{API_KEY[8:]} file", f"the my-key-{API_KEY_MARK} file"),
], ids=["assignment", "sentence", "quoted", "url-query", "two-tokens", "no-run", "name-joined", "words-joined"])
def test_the_words_beside_the_token_are_kept(text: str, masked: str) -> None:
    assert without_keys(text, [API_KEY]) == masked


@pytest.mark.promise("secrets")
def test_a_token_holding_part_of_the_key_in_a_reply_is_stored_and_indexed_masked_whole(neotask_home: Path) -> None:
    # The report's reproduction, the token streamed in pieces as a model sends it: the reply printed,
    # the transcript, the search index and (once the session is archived) the memory index.
    pieces = ["Your token is gh", "p_ABCD", "EFGHIJKLMNOPQR", "STUVWXYZ01234", "56789ab", " (rotate it)."]
    assert "".join(pieces) == f"Your token is {TOKEN} (rotate it)."
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=pieces, usage=ReplyUsage(input=10, output=5)),
                  Reply(chunks=["ok"], usage=ReplyUsage(input=10, output=1)))
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": API_KEY, "NEOTASK_MEMORY_ENABLED": "true"}
        r = neotask("send", "what is my token?", env=env)
        assert r.returncode == 0, r.stderr
        assert f"Your token is {API_KEY_MARK} (rotate it)." in r.stdout and REST not in r.stdout, r.stdout
        shown = neotask("transcript", KEY, env=env)
        assert f"Your token is {API_KEY_MARK} (rotate it)." in shown.stdout and REST not in shown.stdout
        found = neotask("search", REST, env=env)
        assert "no message matches" in found.stdout + found.stderr, found.stdout
        assert "rotate it" in neotask("search", "rotate", env=env).stdout
        # the archived session is indexed for memory by the next turn
        assert neotask("sessions", "reset", KEY, env=env).returncode == 0
        assert neotask("send", "anything else?", env=env).returncode == 0
    recalled = neotask("memory", "search", "token rotate", env=env)
    assert recalled.returncode == 0 and REST not in recalled.stdout, recalled.stdout
    assert "rotate it" in recalled.stdout and API_KEY_MARK in recalled.stdout, recalled.stdout
    held = [str(p.relative_to(neotask_home)) for p in sorted(neotask_home.rglob("*"))
            if p.is_file() and not p.is_symlink() and REST.encode() in p.read_bytes()]
    assert held == []
