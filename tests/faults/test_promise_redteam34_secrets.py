"""Red team 34, secrets findings: the configured API key written in compatibility look-alikes
(mathematical bold, circled letters, small capitals) was stored, indexed and sent to the provider in
the clear (finding 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.helpers import cli as neotask
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


def _leaks(home: Path, part: str) -> list[str]:
    """Files under ``home`` holding ``part``."""
    return [str(p.relative_to(home)) for p in sorted(home.rglob("*"))
            if p.is_file() and not p.is_symlink() and part.encode() in p.read_bytes()]


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
