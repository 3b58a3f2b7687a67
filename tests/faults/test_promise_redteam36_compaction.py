"""Red team 36, finding 5: the compaction review printed a password the guard knew for a secret, and
the compaction record stored it — a draft listing the root password as an identifier got the line
``unsourced: Sup3r$ecret!99 — left out of the identifiers …`` (the summary itself was clean)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neotask_tui.commands.compaction import describe
from tests.faults.helpers import COMPACTION_TURNS, KEY, cli, run_turn, scripted_engine
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage

pytestmark = pytest.mark.promise("secrets")

SECRET = "Sup3r" + "$ecret!99"  # built at runtime: no literal credential
SAID = "the password for root\nis " + SECRET
DRAFT = ("## Current goal\n- user: fix the CSV importer [e:2]\n"
         "## Constraints and rules\n- user: Do not use Redis [e:4]\n"
         "## Exact identifiers\n- user: `" + SECRET + "` [e:2]\n- user: `" + SECRET[:9] + "` [e:2]\n"
         "- user: `acme-prod` [e:6]\n- `" + SECRET + "`, uncited\n")


def _leaks(text: str) -> list[str]:
    """The parts of the secret ``text`` holds (the whole, and the cut-out identifier)."""
    return [p for p in (SECRET, SECRET[:9], "ecret!99") if p in text]


async def test_the_guard_report_and_the_record_hold_no_secret(neotask_home: Path) -> None:
    async with scripted_engine(NEOTASK_COMPACTION_KEEP_RECENT_TOKENS="40") as engine:
        for text in (SAID, *COMPACTION_TURNS):
            engine.provider.queue("Noted.")
            await run_turn(engine, text, KEY)
        res = await engine.compact(KEY, preview=True, summary_text=DRAFT)
        shown = json.dumps(res.to_dict(), ensure_ascii=False)
        assert any(r["kind"] == "unsourced" for r in res.repaired), res.repaired  # the guard still says so
        assert "[REDACTED:password]" in json.dumps(res.repaired)
        assert _leaks(shown) == [] and _leaks(describe(res)) == []
        done = await engine.compact(KEY, summary_text=DRAFT)
        assert done.new_session_id and _leaks(json.dumps(done.to_dict(), ensure_ascii=False)) == []
        record = next(e for e in engine.events(KEY) if e.type == "compaction")
        assert _leaks(json.dumps(record.data, ensure_ascii=False)) == []


def test_compact_preview_and_the_applied_record_hold_no_secret(neotask_home: Path) -> None:
    call = ReplyUsage(input=50, output=5)
    with OpenAIServer() as srv:
        env = {"NEOTASK_PROVIDER": "openai", "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-test-rt36",
               "NEOTASK_MODEL": "gpt-4o", "NEOTASK_COMPACTION_KEEP_RECENT_TOKENS": "40"}
        for text in (SAID, *COMPACTION_TURNS):
            srv.queue(Reply(chunks=["Noted."], usage=call))
            assert cli("send", text, env=env).returncode == 0
        srv.queue(Reply(chunks=[DRAFT], usage=call))
        prev = cli("compact", KEY, "--preview", "--json", env=env)
        assert prev.returncode == 0, prev.stderr
        draft = json.loads(prev.stdout)
        assert not draft["fallback"] and any(r["kind"] == "unsourced" for r in draft["repaired"]), draft
        assert _leaks(prev.stdout + prev.stderr) == []
        srv.queue(Reply(chunks=[DRAFT], usage=call))
        done = cli("compact", KEY, env=env)
        assert done.returncode == 0, done.stderr
        assert "unsourced: [REDACTED:password]" in done.stdout, done.stdout
        assert _leaks(done.stdout + done.stderr) == []
    events = json.loads(cli("transcript", KEY, "--json", env=env).stdout)
    record = next(e for e in events if e["type"] == "compaction")
    assert record["repaired"] and _leaks(json.dumps(record, ensure_ascii=False)) == []
    files = [p for p in (neotask_home / "data" / "sessions").glob("*.jsonl")
             if '"type":"compaction"' in p.read_text(encoding="utf-8").replace(" ", "")]
    assert len(files) == 1 and _leaks(files[0].read_text(encoding="utf-8")) == []  # the new session's file
