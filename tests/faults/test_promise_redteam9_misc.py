"""Red team, round 9 (misc): README promises this code broke (each test failed on it).

Real components: engine, data dir, CLI subprocesses, scripted provider, tiktoken.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.faults.helpers import cli

SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}


# ------------------------------------------------------------------------------ periods across DST
@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Any:
    import time

    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()


@pytest.mark.parametrize(("said_at", "text", "ends_utc"), [
    # Berlin leaves summer time on Sunday 25 Oct 2026: the end of that Sunday is 23:00 UTC, not 22:00
    ("2026-10-22T10:00:00+00:00", "This week answer briefly.", "2026-10-25T23:00:00+00:00"),
    ("2026-10-22T10:00:00+00:00", "На этой неделе отвечай коротко.", "2026-10-25T23:00:00+00:00"),
    # and enters it on 29 March: the end of 31 March is 22:00 UTC, not 23:00
    ("2026-03-04T10:00:00+00:00", "Until the end of the month answer briefly.", "2026-03-31T22:00:00+00:00"),
    ("2026-03-26T10:00:00+00:00", "До конца недели отвечай коротко.", "2026-03-29T22:00:00+00:00"),
    ("2026-03-26T10:00:00+00:00", "Until Monday answer in English.", "2026-03-30T22:00:00+00:00"),
])
def test_a_period_ends_at_local_midnight_even_across_a_dst_change(
        berlin: None, said_at: str, text: str, ends_utc: str) -> None:
    """README *Session state*: "this week …" / "на этой неделе …" end "at the end of Sunday",
    "until the end of the month" "at the month's end" (local time; resets are DST-aware).
    ``period_end`` built local midnight with the UTC offset of *now*, so a period that crosses a
    DST change ended an hour early or late."""
    from neotask_tui.engine.language.periods import period_end
    from neotask_tui.engine.language.rules import classify

    [c] = classify(text)
    assert c.period is not None
    got = period_end(c.period, datetime.fromisoformat(said_at))
    assert got == datetime.fromisoformat(ends_utc), (got, got.astimezone())


# ------------------------------------------------------------------------------ chunk bound
@pytest.mark.parametrize("text", ["a\n" * 5000, "word\n" * 3000, "- item\n" * 3000, "x\u2028" * 5000])
def test_memory_chunks_are_at_most_chunk_tokens_for_many_short_lines(text: str) -> None:
    """README *Long-term memory*: "Chunks are at most `memory.chunk_tokens` tokens (400)".
    The chunker summed each line's own count and forgot the newline that joins them, so a memory
    file of many one-word lines was cut into chunks of 799 tokens by its own counter."""
    from neotask_tui.memory.index.chunking import chunk_markdown, token_counter

    count = token_counter()
    chunks = chunk_markdown(text, size=400, count=count)
    sizes = [count(c.text) for c in chunks]
    assert max(sizes) <= 400, sizes[:5]
    assert min(sizes[:-1]) >= 300, sizes[:5]  # still filled, not one line a chunk


# ------------------------------------------------------------------------------ encodings
@pytest.mark.parametrize("model", ["ft:gpt-4o-mini-2024-07-18:org::abc123", "ft:gpt-4.1-2025-04-14:acme:x:9z",
                                   "openai/ft:gpt-4o-2024-08-06:org::id1"])
def test_a_fine_tuned_gpt_4o_is_estimated_with_its_own_encoding(model: str) -> None:
    """README *Which model answers*: OpenAI's "gpt-4o, gpt-4.1, gpt-5, o1, o3 and o4 families" are
    estimated "with o200k (their own encoding)". A fine-tuned model of the gpt-4o family, named as
    OpenAI names it (`ft:gpt-4o-mini-2024-07-18:org::abc123`), was counted with cl100k."""
    from neotask_tui.text.tokens import ENCODING_NAME, O200K, encoding_for_model

    assert encoding_for_model("openai", model) == O200K
    assert encoding_for_model("openai", "ft:gpt-3.5-turbo-0125:org::abc") == ENCODING_NAME


# ------------------------------------------------------------------------------ dates: linear scan
@pytest.mark.parametrize("unit", ["весной 2023 ", "3 дня назад ", "в мае 2023 "])
def test_date_periods_in_a_100kb_message_are_read_in_linear_time(unit: str) -> None:
    """README *Hostile input*: "Scanning text is linear in its length ... so a 100 KB paste never
    stalls a turn"; memory search reads the date periods a query names. ``query_windows`` checked
    every match against every span taken so far (a list) and returned one window per mention, so
    100 KB of dated phrases took ~10 s (``bench/date_windows.py``). Now the taken characters are a
    mask checked over each match's own span, and each period is returned once: the windows are the
    distinct periods named, whatever the paste's length."""
    from neotask_tui.memory.search.dates import query_windows

    short = query_windows(unit)
    assert len(short) == 1
    assert query_windows(unit * (100_000 // len(unit))) == short
    # A match overlapping an earlier pattern's one is still skipped ("в мае 2023" is one period,
    # not May plus 2023), and distinct periods all count, in the order first named.
    assert query_windows("в мае 2023 и весной 2022, в мае 2023") == query_windows("в мае 2023 и весной 2022")
    assert len(query_windows("в мае 2023 и весной 2022")) == 2


# ------------------------------------------------------------------------------ quarantine/ a link
def test_a_symlinked_quarantine_is_not_followed_for_a_torn_transcript_line(data_dir: Path, tmp_path: Path) -> None:
    """README *Security*: "A symbolic link inside the data dir is never followed". With
    `quarantine/` a symlink to a folder outside, a torn transcript line (here holding a password)
    was copied through the link at the next start, and `neotask doctor` still said "clean". Now
    nothing goes through the link, the line stays in the transcript, and doctor reports the link."""
    assert cli("send", "kilo lima", env=SCRIPTED).returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (data_dir / "quarantine").symlink_to(outside)
    [t] = list((data_dir / "sessions").glob("*.jsonl"))
    with t.open("ab") as f:
        f.write(b'{"torn line, the password is hunter2')
    r = cli("send", "next", env=SCRIPTED)
    assert list(outside.iterdir()) == []
    assert r.returncode == 0, r.stderr
    raw = t.read_bytes()
    assert b'{"torn line, the password is hunter2\n' in raw  # kept in place, ended so appends stay clean
    assert raw.endswith(b"\n") and b"next" in raw.split(b"hunter2")[1]
    d = cli("doctor")
    assert d.returncode == 1 and "clean" not in d.stdout.splitlines()[-1], d.stdout
    assert "quarantine is a symbolic link" in d.stdout, d.stdout
    assert list(outside.iterdir()) == []


def test_a_symlinked_quarantine_is_not_followed_for_a_damaged_search_index(data_dir: Path, tmp_path: Path) -> None:
    """README *Where it lives* / *Security*: a damaged search index "goes to `quarantine/`", and a
    symbolic link inside the data dir is never followed. With `quarantine/` a symlink, the damaged
    index was moved through it, out of the data dir. Now it stays where it is and the search says
    why in one line."""
    assert cli("send", "kilo lima", env=SCRIPTED).returncode == 0
    assert cli("search", "kilo").returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (data_dir / "quarantine").symlink_to(outside)
    for p in (data_dir / "search").glob("index.sqlite3-*"):
        p.unlink()
    idx = data_dir / "search" / "index.sqlite3"
    idx.write_bytes(b"garbage " * 8)
    r = cli("search", "kilo")
    assert list(outside.iterdir()) == []
    assert idx.read_bytes() == b"garbage " * 8
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "symbolic link" in r.stderr and r.returncode == 2, (r.returncode, r.stderr)


def test_a_symlinked_quarantine_keeps_a_damaged_sessions_index_in_place(data_dir: Path, tmp_path: Path) -> None:
    """The same for `sessions.json`: its damaged copy is not written through the link, so the file
    is read from the transcripts but not overwritten (nothing of it is lost), and the notice says why."""
    assert cli("send", "kilo lima", env=SCRIPTED).returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (data_dir / "quarantine").symlink_to(outside)
    (data_dir / "sessions.json").write_text("{not json", encoding="utf-8")
    r = cli("send", "next", env=SCRIPTED)
    assert r.returncode == 0, r.stderr
    assert list(outside.iterdir()) == []
    assert (data_dir / "sessions.json").read_text(encoding="utf-8") == "{not json"
