"""README promises red team 27 broke (the findings fixed outside the engine's classifier, compaction
and context preview)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neotask_tui.providers.base import Usage
from neotask_tui.providers.models import cost_usd, lookup_model
from tests.faults.helpers import KEY
from tests.faults.helpers import cli as neotask
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage


@pytest.mark.parametrize(("model", "per_mtok"), [
    ("ft:gpt-4o-mini-2024-07-18:org::id", (0.30, 1.20)),
    ("ft:gpt-4o-2024-08-06:org::id", (3.75, 15.00)),
])
def test_a_fine_tuned_gpt_4o_is_priced_not_a_crash(model: str, per_mtok: tuple[float, float]) -> None:
    # F1: genai-prices matched the name, then was asked again by its id (`ft:gpt-4o-mini`), which it does
    # not match: LookupError after the paid reply, which was lost.
    info = lookup_model("openai", model)
    cost = cost_usd(Usage(input_tokens=1_000_000, output_tokens=1_000_000), info)
    assert cost == pytest.approx(sum(per_mtok))


def test_a_fine_tuned_model_turn_is_stored_and_counted(neotask_home: Path) -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["fine-tuned ", "hello"], usage=ReplyUsage(input=1000, output=100)))
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "k-test",
               "NEOTASK_PROVIDER_MODEL": "ft:gpt-4o-mini-2024-07-18:org::id"}
        r = neotask("send", "hello fine-tune", "--json", env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["reply"] == "fine-tuned hello" and out["cost_usd"] == pytest.approx(0.00042)
    evs = json.loads(neotask("transcript", KEY, "--json").stdout)
    assert [e["content"] for e in evs if e["type"] == "message"] == ["hello fine-tune", "fine-tuned hello"]


def test_state_says_an_expiry_on_the_local_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # F3: local midnight in Tokyo (15:00 UTC) was printed "until 2026-12-07 00:00Z", nine hours off.
    import time
    from datetime import UTC, datetime

    from neotask_tui.commands.state import describe_entry
    from neotask_tui.engine.state.model import StateEntry

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        midnight_utc = datetime(2026, 12, 6, 15, 0, tzinfo=UTC)
        for stored in (midnight_utc, midnight_utc.astimezone()):  # as stored: either offset
            e = StateEntry(id=5, field="temporary_preferences", value="use tabs in examples", source="e:5",
                           set_at=datetime(2026, 12, 6, 2, 45, tzinfo=UTC), expires_at=stored)
            line = describe_entry(e)
            assert "until 2026-12-07 00:00 JST" in line and "Z" not in line.split("until", 1)[1], line
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_doctor_says_clean_with_the_warnings_it_listed_and_lists_a_fifo(neotask_home: Path) -> None:
    # F10: a loose mode listed, then a last line "clean"; a FIFO under memory/ kept 0644, never listed.
    import os

    from neotask_tui import paths

    assert neotask("sessions", "new").returncode == 0
    memory = paths.data_dir() / "agents" / "main" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    fifo = memory / "pipe.md"
    os.mkfifo(fifo, 0o644)
    os.chmod(fifo, 0o644)
    r = neotask("doctor")
    assert "pipe.md is 0o644, want 0o600" in r.stdout, r.stdout
    assert r.stdout.strip().splitlines()[-1].startswith("clean (transcripts and index; ")
    assert r.returncode == 0
    r = neotask("doctor", "--fix")
    assert oct(os.stat(fifo).st_mode & 0o777) == "0o600", r.stdout
    r = neotask("doctor")
    assert "want 0o600" not in r.stdout and "pipe.md is not indexed" in r.stdout  # the memory line stays
    assert r.stdout.strip().splitlines()[-1] == (  # a memory file not indexed is yours to change (red team 31)
        "clean (transcripts and index; 1 warning above, 1 needs manual action)"), r.stdout
    fifo.unlink()
    assert neotask("doctor").stdout.strip().splitlines()[-1] == "clean"


@pytest.mark.parametrize(("model", "base"), [
    ("ft:gpt-4o-mini-2024-07-18:org::id", "gpt-4o-mini"),
    ("openai/ft:gpt-4o-2024-08-06:org::id", "gpt-4o"),
])
def test_a_fine_tune_has_its_base_models_window(model: str, base: str) -> None:
    # Red team 28 F6: a fine-tune got the unknown model's 8,192 tokens, so compaction began 16x too early.
    assert lookup_model("openai", model).context_window == lookup_model("openai", base).context_window > 8192
