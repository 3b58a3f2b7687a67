"""Red team 34, secrets findings: the configured API key written in compatibility look-alikes
(mathematical bold, circled letters, small capitals) was stored, indexed and sent to the provider in
the clear (finding 2); a password asked about in a question (7), a PIN or Wi-Fi key announced and sent
alone next (8) and a login pair for a named thing (9) stayed in the search index and session state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.providers.base import ToolCall
from tests.faults.helpers import cli as neotask
from tests.faults.helpers import run_turn
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

API_KEY = "sk-test-" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"  # built at runtime: no literal credential
BODY = API_KEY[8:]


def _styled(text: str, upper: int, lower: int, digit: int | None) -> str:
    """``text`` with its ASCII letters (and digits, when ``digit``) moved to another block."""
    return "".join(chr(upper + ord(c) - 65) if c.isupper() else chr(lower + ord(c) - 97) if c.islower()
                   else chr(digit + ord(c) - 48) if digit is not None and c.isdigit() else c for c in text)


_SMALL = str.maketrans("abcdefghijklmnopqrstuvwxyz",
                       "\u1d00\u0299\u1d04\u1d05\u1d07\ua730\u0262\u029c\u026a\u1d0a\u1d0b\u029f\u1d0d\u0274\u1d0f"
                       "\u1d18\ua7af\u0280\ua731\u1d1b\u1d1c\u1d20\u1d21x\u028f\u1d22")
LOOKS = {
    "math-bold": _styled(BODY, 0x1D400, 0x1D41A, 0x1D7CE),
    "circled": _styled(BODY, 0x24B6, 0x24D0, None),
    "small-capitals": BODY.lower().translate(_SMALL),
}


def _leaks(home: Path, part: str, *, transcripts: bool = True) -> list[str]:
    """Files under ``home`` holding ``part`` (not counting the transcripts unless ``transcripts``: they
    keep what you typed, all but the configured key)."""
    return [str(p.relative_to(home)) for p in sorted(home.rglob("*"))
            if p.is_file() and not p.is_symlink() and part.encode() in p.read_bytes()
            and (transcripts or not (p.suffix == ".jsonl" and p.parent.name == "sessions"))]


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("shown", LOOKS.values(), ids=LOOKS.keys())
def test_the_configured_key_in_compatibility_look_alikes_is_masked_everywhere(neotask_home: Path,
                                                                              shown: str) -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["ok"], usage=ReplyUsage(input=10, output=1)))
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": API_KEY}
        r = neotask("send", f"my key {shown} here", env=env)
        assert r.returncode == 0, r.stderr
        sent = json.dumps(srv.requests, ensure_ascii=False)
    assert shown[:8] not in sent and "my key [REDACTED:api_key] here" in sent
    r = neotask("memory", "add", f"deploy key {shown[:20]}", env={**env, "NEOTASK_MEMORY_ENABLED": "true"})
    assert r.returncode == 0, r.stderr
    r = neotask("search", shown[:20], env=env)
    assert shown[:8] not in r.stdout + r.stderr
    assert _leaks(neotask_home, shown[:8]) == []
    shown_transcript = neotask("transcript", "agent:main:tui:default", env=env).stdout
    assert "[REDACTED:api_key]" in shown_transcript and shown[:8] not in shown_transcript


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("said", "secret"), [
    (["is the root password still Toor!2023x?"], "Toor!2023x"),  # finding 7
    (["my PIN is in the next message", "5531"], "5531"),  # finding 8
    (["I'll send you the wifi key next", "Cedar-Lake-0042"], "Cedar-Lake-0042"),
    (["The login for the router is admin / Winter2024!x"], "Winter2024!x"),  # finding 9
], ids=["password-question", "announced-pin", "announced-wifi-key", "login-pair"])
def test_these_secrets_stay_out_of_the_search_index(neotask_home: Path, said: list[str], secret: str) -> None:
    with OpenAIServer() as srv:
        for _ in said:
            srv.queue(Reply(chunks=["ok"], usage=ReplyUsage(input=10, output=1)))
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": API_KEY}
        for text in said:
            r = neotask("send", text, env=env)
            assert r.returncode == 0, r.stderr
    r = neotask("search", secret.split("!")[0], env=env)
    assert "no message matches" in r.stdout + r.stderr, r.stdout
    assert _leaks(neotask_home, secret, transcripts=False) == []


@pytest.mark.promise("secrets")
async def test_a_password_in_an_open_question_is_stored_redacted(engine: Engine, data_dir: Path) -> None:
    # Red team 34, finding 7: add_open_question kept "is the root password still Toor!2023x?" in the clear.
    assert engine.state is not None
    await run_turn(engine, "hello", "agent:main:tui:default")
    result = await engine.state.handle_tool("agent:main:tui:default", ToolCall(
        "c1", "add_open_question", {"question": "is the root password still Toor!2023x?"}))
    assert result is not None and not result.is_error, result
    assert "[REDACTED:password]" in engine.state.block("agent:main:tui:default")
    assert _leaks(data_dir, "Toor!2023x", transcripts=False) == []


@pytest.mark.promise("secrets")
async def test_copy_gives_the_stored_text_unchanged_but_redacted(engine: Engine) -> None:
    # Red team 34, finding 14 (not reproduced here): the copy read "My github token…" for "my github token…".
    from neotask_tui.commands import dispatch
    from neotask_tui.commands.intents import CopyText

    key = "agent:main:tui:default"
    token = "ghp_" + "aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2"
    engine.provider.queue("ok")  # type: ignore[attr-defined]
    await run_turn(engine, f"my github token, keep it: {token} and the password is still Toor!2023x", key)
    mine = next(e for e in engine.events(key) if e.type == "message" and e.role == "user")
    res = await dispatch(engine, key, f"/copy e:{mine.id}")
    assert isinstance(res.intent, CopyText), res.text
    assert res.intent.text == ("my github token, keep it: [REDACTED:github_token] and the password is still "
                               "[REDACTED:password]")
