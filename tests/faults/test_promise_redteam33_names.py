"""Red team 33, findings 2 and 7: the configured API key (or a token the redactor knows) inside a
session key's chat id, or inside an attached file's name, was stored raw: the transcript's header and
attachment ``path``, ``sessions.json``, the search index, ``transcript --json`` and both export
formats, though every printed line masked it. A session key holding a secret is refused (one line,
exit 2, nothing stored); an attachment's path is stored redacted, as the model and the Markdown export
already saw it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.helpers import KEY
from tests.faults.helpers import cli as neotask
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

API_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"  # built at runtime: no literal credential
TOKEN = "ghp_" + "aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2"


def _leaks(home: Path, part: str) -> list[str]:
    """Files under the data dir and the exports holding ``part`` (any case)."""
    return [str(p.relative_to(home)) for p in sorted(home.rglob("*"))
            if p.is_file() and not p.is_symlink() and part.lower().encode() in p.read_bytes().lower()]


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("chat", [API_KEY[8:32], TOKEN], ids=["configured-key", "github-token"])
def test_a_session_key_holding_a_secret_is_refused_and_nothing_is_stored(neotask_home: Path, chat: str) -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["ok"], usage=ReplyUsage(input=10, output=1)))
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": API_KEY}
        r = neotask("send", "-s", f"agent:main:tui:{chat}", "hi", env=env)
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert "holds an API key or another secret" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert chat[:16] not in r.stderr + r.stdout
        assert srv.requests == []
        assert _leaks(neotask_home, chat[:16]) == []
        # an ordinary chat id works as before
        r = neotask("send", "-s", "agent:main:tui:project-2026", "hi", env=env)
        assert r.returncode == 0, r.stderr


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("name", "kind"), [(f"notes-{API_KEY[8:28]}.txt", "api_key"),
                                            (f"{TOKEN}.txt", "github_token")],
                         ids=["configured-key", "github-token"])
def test_an_attached_files_name_is_stored_and_exported_redacted(neotask_home: Path, tmp_path: Path,
                                                                name: str, kind: str) -> None:
    f = tmp_path / "files" / name
    f.parent.mkdir()
    f.write_text("hello\n")
    secret = name.removesuffix(".txt").removeprefix("notes-")
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["ok"], usage=ReplyUsage(input=10, output=1)))
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": API_KEY}
        r = neotask("send", "--file", str(f), "review this", env=env)
        assert r.returncode == 0, r.stderr
        sent = json.dumps(srv.requests)
    assert secret[:16] not in sent
    out = tmp_path / "out"
    out.mkdir()
    assert neotask("transcript", KEY, "--format", "jsonl", "--output", str(out / "t.jsonl")).returncode == 0
    assert neotask("transcript", KEY, "--format", "md", "--output", str(out / "t.md")).returncode == 0
    shown = neotask("transcript", KEY, "--json").stdout
    atts = [a for e in json.loads(shown) if e["type"] == "message" for a in e.get("attachments") or []]
    names = [Path(a["path"]).name for a in atts]
    assert len(names) == 1 and names[0].endswith("].txt") and "[REDACTED:" in names[0], names
    assert f"[REDACTED:{kind}]" in names[0] or kind == "api_key"  # the key may be read as a random run
    assert _leaks(neotask_home, secret[:16]) == [] and _leaks(out, secret[:16]) == []
    assert secret[:16] not in shown
