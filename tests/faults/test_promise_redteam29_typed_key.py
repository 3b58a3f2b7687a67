"""Red team 29, finding 4: the configured API key, typed by the user in a message or a command, was
stored in full in the transcript and printed by ``neotask transcript`` and exports (and kept in the
input history); the same key read ``[REDACTED:api_key]`` in the reply but ``[REDACTED:openai_key]`` in
the state, the search index and the inbox. The configured key is a secret with certainty: it is masked
``[REDACTED:api_key]`` before anything is stored, whichever front end it was typed in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.faults.helpers import KEY
from tests.faults.helpers import cli as neotask
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

SHAPED = "sk-proj-TESTKEYabcdefghijklmnopqrstuvwxyz0123456789ABCD"
"""An OpenAI-format key: the general redactor knows it by its shape (as ``openai_key``)."""
PLAIN = "k-test-alphabravocharliedeltaechofoxtrot"
"""A configured key of no known shape: only the configured-key mask knows it."""


def _leaks(text: str, key: str) -> list[str]:
    """Every 16 characters in a row of ``key`` (the mask's window) found in ``text``, case ignored."""
    return [key[i:i + 16] for i in range(len(key) - 15) if key[i:i + 16].lower() in text.lower()]


def _stored(home: Path, key: str) -> list[str]:
    """Files under the data dir (transcripts, index, search, memory, inbox, history) holding part of ``key``."""
    out = []
    for p in sorted((home / "data").rglob("*")) if (home / "data").exists() else []:
        if p.is_file() and not p.is_symlink():
            found = _leaks(p.read_bytes().decode("utf-8", "replace"), key)
            out += [f"{p.relative_to(home)}: {found[0]}"] if found else []
    return out


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("key", [SHAPED, PLAIN], ids=["openai-shaped", "no-known-shape"])
def test_the_configured_key_typed_in_a_message_is_masked_before_it_is_stored(
        neotask_home: Path, tmp_path: Path, key: str) -> None:
    # The report's reproduction: `send "my key is sk-proj-… ok"` kept the key in the transcript,
    # `transcript` printed it and the Markdown export held it.
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["noted"], usage=ReplyUsage(input=1000, output=100)),
                  Reply(chunks=["noted again"], usage=ReplyUsage(input=1000, output=100)))
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": key, "NEOTASK_MEMORY_ENABLED": "true"}
        r = neotask("send", f"my key is {key} ok, remember that the deploy uses it", env=env)
        assert r.returncode == 0, r.stderr
        # changed as the mask reads it: without its prefix, another case
        r = neotask("send", f"or rather {key.rsplit('-', 1)[-1].upper()} in capitals", env=env)
        assert r.returncode == 0, r.stderr
        sent = json.dumps(srv.requests)
    assert not _leaks(sent, key), "what the model receives is masked too"
    assert not _stored(neotask_home, key), _stored(neotask_home, key)
    evs = json.loads(neotask("transcript", KEY, "--json").stdout)
    users = [e["content"] for e in evs if e["type"] == "message" and e["role"] == "user"]
    assert users == ["my key is [REDACTED:api_key] ok, remember that the deploy uses it",
                     "or rather [REDACTED:api_key] in capitals"], users
    shown = neotask("transcript", KEY)
    assert "my key is [REDACTED:api_key] ok" in shown.stdout and not _leaks(shown.stdout, key), shown.stdout
    out = tmp_path / "export.md"
    assert neotask("transcript", KEY, "--format", "md", "--output", str(out)).returncode == 0
    assert "[REDACTED:api_key]" in out.read_text(encoding="utf-8") and not _leaks(out.read_text("utf-8"), key)
    # one label for the one secret, wherever it is shown (the reply masks it as api_key too)
    found = neotask("search", "key", env=env)
    assert "[REDACTED:api_key]" in found.stdout and "openai_key" not in found.stdout, found.stdout
    state = neotask("state", KEY, "--json", env=env)
    assert "openai_key" not in state.stdout and not _leaks(state.stdout, key), state.stdout


@pytest.mark.promise("secrets")
def test_the_configured_key_in_remember_and_memory_add_is_masked_and_counted(neotask_home: Path) -> None:
    env = {"NEOTASK_PROVIDER": "scripted", "OPENAI_API_KEY": PLAIN, "NEOTASK_MEMORY_ENABLED": "true"}
    r = neotask("memory", "add", f"the deploy key is {PLAIN}", env=env)
    assert r.returncode == 0, r.stderr
    assert "1 secret(s) redacted" in r.stdout, r.stdout
    r = neotask("send", f"/remember the staging key is {PLAIN.upper()}", env=env)
    assert r.returncode == 0, r.stderr
    assert "1 secret(s) redacted" in r.stdout, r.stdout
    memory = (neotask_home / "data").rglob("MEMORY.md")
    text = "".join(p.read_text(encoding="utf-8") for p in memory)
    assert text.count("[REDACTED:api_key]") == 2, text
    assert not _stored(neotask_home, PLAIN), _stored(neotask_home, PLAIN)


@pytest.mark.promise("secrets")
def test_the_configured_key_in_state_commands_and_the_inbox_is_masked_and_refused(neotask_home: Path) -> None:
    # The inbox entry proposed from a message that held the key is refused until edited, as one that
    # held any other secret: the key was masked where it was typed, the mask says a secret was there.
    env = {"NEOTASK_PROVIDER": "scripted", "OPENAI_API_KEY": PLAIN, "NEOTASK_MEMORY_ENABLED": "false"}
    for line in (f"/goal rotate {PLAIN} today", f"/pref never print {PLAIN}",
                 f"remember: I always deploy with {PLAIN}"):
        r = neotask("send", line, env=env)
        assert r.returncode == 0, r.stderr
        assert not _leaks(r.stdout + r.stderr, PLAIN), r.stdout
    state = neotask("state", KEY, env=env)
    assert state.stdout.count("[REDACTED:api_key]") == 2, state.stdout

    def entry() -> Any:
        (e,) = json.loads(neotask("inbox", "list", "--json", env=env).stdout)
        return e

    assert entry()["text"] == "I always deploy with [REDACTED:api_key]"
    assert not entry()["criteria"]["allowed_to_store"]["ok"]
    refused = neotask("inbox", "accept", "1", env=env)
    assert refused.returncode == 2 and "contained a credential" in refused.stderr, refused.stderr
    r = neotask("inbox", "edit", "1", f"I deploy with {PLAIN.upper()}", env=env)  # the key again: refused again
    assert r.returncode == 0 and not _leaks(r.stdout + r.stderr, PLAIN), r.stdout
    assert entry()["text"] == "I deploy with [REDACTED:api_key]" and not entry()["criteria"]["allowed_to_store"]["ok"]
    assert neotask("inbox", "edit", "1", "I always deploy on Fridays", env=env).returncode == 0
    assert entry()["criteria"]["allowed_to_store"]["ok"]
    assert not _stored(neotask_home, PLAIN), _stored(neotask_home, PLAIN)


@pytest.mark.promise("secrets")
async def test_the_repl_keeps_the_configured_key_out_of_the_input_history(
        neotask_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neotask_tui import paths
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider
    from tests.doubles import drive_repl, plain_settings

    settings = plain_settings()
    settings.provider.api_key = PLAIN  # from config.toml this time
    engine = Engine(settings, provider=ScriptedProvider())
    try:
        await drive_repl(engine, f"my key is {PLAIN} ok\r/goal rotate {PLAIN}\r/quit\r", 120)
        (message,) = [e for e in engine.events(engine.default_key()) if e.type == "message" and e.role == "user"]
    finally:
        await engine.aclose()
    assert message.content == "my key is [REDACTED:api_key] ok"
    history = paths.history_file().read_text(encoding="utf-8")
    assert "+my key is [REDACTED:api_key] ok" in history and "+/goal rotate [REDACTED:api_key]" in history, history
    assert not _stored(neotask_home, PLAIN), _stored(neotask_home, PLAIN)


@pytest.mark.promise("secrets")
def test_the_context_preview_of_a_draft_shows_the_key_masked_as_sending_it_would(neotask_home: Path) -> None:
    env = {"NEOTASK_PROVIDER": "scripted", "OPENAI_API_KEY": PLAIN}
    assert neotask("send", "hello", env=env).returncode == 0  # a preview needs a session; it makes none
    r = neotask("context", KEY, "--message", f"deploy with {PLAIN} now", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert "deploy with [REDACTED:api_key] now" in r.stdout and not _leaks(r.stdout + r.stderr, PLAIN), r.stdout
