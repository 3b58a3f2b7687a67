"""Red team, round 9: promises of the README that this code breaks (each test fails on it).

Every test uses real components (engine, data dir, CLI subprocesses, scripted provider).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from neotask_tui import tuning
from neotask_tui.commands import dispatch
from neotask_tui.commands.search import parse_search_args
from tests.faults.helpers import KEY, cli, run_turn

SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}


def _straddling(secret_sentence: str, k: int) -> str:
    """A message over the search index's per-message cap whose indexed tail starts ``k`` characters
    into ``secret_sentence`` (so the cut falls inside the cue word, before the value)."""
    cap = tuning.SEARCH_MESSAGE_MAX_CHARS
    tail = cap - cap * 3 // 4
    rlen = tail + k - len(secret_sentence)
    return "f " * 30000 + secret_sentence + ("e " * rlen)[:rlen]


# ------------------------------------------------------------------------------ secrets in search/
@pytest.mark.parametrize("k", [4, 15])
async def test_a_password_in_a_long_message_is_not_findable_in_the_search_index(
        engine: Any, data_dir: Path, k: int) -> None:
    """README *Secrets* / *Where it lives*: the search index "holds each message's text *redacted*
    ... a secret the transcript keeps is not in the index and is not found by searching for it",
    and "a message longer than 64 KiB is indexed by its first 48 KiB and last 16 KiB".
    The index cuts the message first and redacts the cut text afterwards, so when the cut falls
    inside (or just after) the cue word "my password is", the value is stored in
    search/index.sqlite3 in clear and `neotask search Tr0ub4dorZebra99` finds it."""
    msg = _straddling("my password is Tr0ub4dorZebra99 ok ", k)
    await run_turn(engine, msg)
    res = await engine.search("Tr0ub4dorZebra99")
    assert res.hits == [], [h.plain_line()[:80] for h in res.hits]
    raw = b"".join(p.read_bytes() for p in (data_dir / "search").glob("index.sqlite3*"))
    assert b"Tr0ub4dorZebra99" not in raw


async def test_an_api_key_cut_by_the_index_leaves_no_fragment_to_find(engine: Any) -> None:
    """README *Secrets*: GitHub tokens are replaced with [REDACTED:...] before anything derived is
    stored, the full-text index included. A ghp_ token that straddles the 48 KiB/16 KiB cut loses its
    prefix in the tail, is no longer recognised, and its remaining 24 characters are indexed and
    findable."""
    key = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    await run_turn(engine, _straddling(f"token {key} end ", 20))
    res = await engine.search("klmnopqrstuvwxyz0123456789")
    assert res.hits == [], [h.plain_line()[:80] for h in res.hits]


# ------------------------------------------------------------------------------ --since garbage
@pytest.mark.parametrize("since", ["999999d", "999999w"])
def test_search_since_out_of_range_is_a_one_line_user_error(since: str) -> None:
    """README: "Exit codes: ... 2 user error (one line on stderr)"; *Settings*: a bad value is a
    one-line error. `neotask search foo --since 999999d` (a span the --since grammar accepts, up
    to 6 digits) dies with an OverflowError traceback and exit 1."""
    assert cli("send", "hello there", env=SCRIPTED).returncode == 0
    r = cli("search", "hello", "--since", since)
    assert r.returncode == 2 and "Traceback" not in r.stderr, (r.returncode, r.stderr[-300:])
    assert len(r.stderr.strip().splitlines()) == 1


# Red team 30, finding 10: a year-1 date east of UTC (a year-9999 time west of it) was "out of range
# (before year 1 or after 9999)"; an empty --since was no filter at all and "７d" was 7 days.
@pytest.mark.parametrize(("tz", "since", "found"), [("Asia/Tokyo", "0001-01-01", True),
                                                    ("UTC", "0001-01-01T00:00:00+14:00", True),
                                                    ("America/New_York", "9999-12-31T23:59", False)])
def test_search_since_year_1_or_9999_is_accepted_in_every_zone(tz: str, since: str, found: bool) -> None:
    assert cli("send", "hello there", env=SCRIPTED).returncode == 0
    r = cli("search", "hello", "--since", since, "--json", env={"TZ": tz})
    assert r.returncode == 0, r.stderr
    assert bool(json.loads(r.stdout)["hits"]) is found


@pytest.mark.parametrize("argv", [("--since", ""), ("--since", "７d"), ("--since=",), ("--agent", "")],
                         ids=["since-empty", "since-fullwidth", "since-equals-empty", "agent-empty"])
def test_search_an_empty_or_non_ascii_flag_is_a_one_line_error(argv: tuple[str, ...]) -> None:
    assert cli("send", "hello there", env=SCRIPTED).returncode == 0
    r = cli("search", "hello", *argv)
    assert r.returncode == 2 and "Traceback" not in r.stderr, (r.returncode, r.stderr[-300:])
    said = "agent id" if argv[0] == "--agent" else "--since"
    assert len(r.stderr.strip().splitlines()) == 1 and said in r.stderr, r.stderr


@pytest.mark.parametrize("args", ["hello --since=", "hello --since", "hello --since  ", "hello --since ７d",
                                  "hello --agent=", "hello --limit="])
async def test_slash_search_an_empty_or_non_ascii_flag_is_an_inline_error(engine: Any, args: str) -> None:
    await run_turn(engine, "hello there")
    res = await dispatch(engine, KEY, f"/search {args}")
    assert res.error and "\n" not in res.text.strip(), res.text
    flag = args.split("--")[1].split("=")[0].split()[0]
    assert ("agent id" if flag == "agent" else f"--{flag}") in res.text, res.text


async def test_slash_search_flag_words_are_still_parsed(engine: Any) -> None:
    assert parse_search_args("hello --since 7d --limit=3") == ("hello", {"since": "7d", "limit": "3"})
    assert parse_search_args("hello --sincere") == ("hello --sincere", {})
    assert parse_search_args("hello --since") == ("hello", {"since": ""})
    await run_turn(engine, "hello there")
    res = await dispatch(engine, KEY, "/search hello --since 7d")
    assert not res.error and "**hello** there" in res.text


# ------------------------------------------------------------------------------ symlinked index
def test_a_reader_beside_the_lock_holder_does_not_follow_a_symlinked_search_index(
        data_dir: Path, tmp_path: Path) -> None:
    """README *Security*: "A symbolic link inside the data dir is never followed". With the data
    dir locked by another process, `neotask search` opens search/index.sqlite3 read-only through
    ``path.resolve()``: a symlink planted there is followed and the foreign database's messages are
    shown as hits (here a session that never existed in this data dir)."""
    from neotask_tui.storage.lock import DataLock

    other = tmp_path / "other-home"
    env = {**SCRIPTED, "NEOTASK_HOME": str(other)}
    assert cli("send", "planted zanzibarplant", env=env).returncode == 0
    assert cli("search", "zanzibarplant", env=env).returncode == 0  # builds the foreign index
    assert cli("send", "a real message", env=SCRIPTED).returncode == 0
    idx = data_dir / "search" / "index.sqlite3"
    for p in idx.parent.glob("index.sqlite3*"):
        p.unlink()
    idx.symlink_to(other / "data" / "search" / "index.sqlite3")
    lock = DataLock()
    lock.acquire()
    try:
        r = cli("search", "zanzibarplant", "--json")
    finally:
        lock.release()
    hits = json.loads(r.stdout)["hits"] if r.returncode == 0 else []
    assert hits == [], hits


def test_a_reader_beside_the_lock_holder_writes_nothing_in_the_data_dir(data_dir: Path) -> None:
    """README *Security* / the one-writer lock: only the lock holder writes the data dir. A
    read-only `neotask search` beside it opened the WAL index plainly read-only, which creates
    ``index.sqlite3-wal`` and ``-shm``."""
    from neotask_tui.storage.lock import DataLock

    assert cli("send", "a real message", env=SCRIPTED).returncode == 0
    assert cli("search", "real").returncode == 0  # builds the index, closes it (no -wal left)
    before = sorted(p.name for p in (data_dir / "search").iterdir())
    lock = DataLock()
    lock.acquire()
    try:
        r = cli("search", "real", "--json")
    finally:
        lock.release()
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hits"], r.stdout
    assert sorted(p.name for p in (data_dir / "search").iterdir()) == before


def test_a_writer_refuses_a_symlinked_search_index_with_one_line(data_dir: Path, tmp_path: Path) -> None:
    """README *Security*: a link inside the data dir is "refused with a one-line error" / never
    followed; exit codes are 0/2/3/1 with one line on stderr. `neotask search` with
    search/index.sqlite3 a symlink dies with an ``OSError: [Errno 40]`` Python traceback."""
    assert cli("send", "a real message", env=SCRIPTED).returncode == 0
    idx = data_dir / "search" / "index.sqlite3"
    for p in idx.parent.glob("index.sqlite3*"):
        p.unlink()
    target = tmp_path / "elsewhere.sqlite3"
    target.write_bytes(b"")
    idx.symlink_to(target)
    r = cli("search", "message")
    assert "Traceback" not in r.stderr, r.stderr[-400:]
    assert len(r.stderr.strip().splitlines()) <= 1, r.stderr


# ------------------------------------------------------------------------------ order after a rebuild
def test_hits_are_newest_first_after_the_index_is_rebuilt(data_dir: Path) -> None:
    """README *What you see*: hits are shown "newest first", and the index "is rebuilt from the
    transcripts ... when it is missing or damaged". A rebuild inserts transcripts in session-id
    (creation) order, so an older session's newer message is ranked below a newer session's older
    one: after a rebuild `--limit 1` returns the old message and hides the newest."""
    import time

    assert cli("send", "first words", "--session", "agent:main:cli:a", env=SCRIPTED).returncode == 0
    time.sleep(1.1)  # session ids carry the second they were made in
    assert cli("send", "zulu old", "--session", "agent:main:cli:b", env=SCRIPTED).returncode == 0
    assert cli("send", "zulu new", "--session", "agent:main:cli:a", env=SCRIPTED).returncode == 0
    before = json.loads(cli("search", "zulu", "--limit", "1", "--json").stdout)["hits"]
    assert before[0]["line"].endswith("zulu new")
    for p in (data_dir / "search").glob("index.sqlite3*"):
        p.unlink()
    hits = json.loads(cli("search", "zulu", "--json").stdout)["hits"]
    ts = [h["ts"] for h in hits]
    assert ts == sorted(ts, reverse=True), [(h["key"], h["line"]) for h in hits]


# ------------------------------------------------------------------------------ case in any script
@pytest.mark.parametrize(("stored", "query"), [("ΚΟΣΜΟΣ ΟΔΟΣ", "κόσμος"), ("ο κόσμος μας", "ΚΟΣΜΟΣ")])
async def test_search_matches_any_case_in_greek_too(engine: Any, stored: str, query: str) -> None:
    """README *Searching every session*: every word matches "exactly (any case, accents folded,
    any script: `встреча` finds "Встреча")". Greek case does not fold: lower-case σ has a final form
    ς, and unicode61 maps Σ to σ only, so `neotask search κόσμος` does not find "ΚΟΣΜΟΣ" (and
    `ΚΟΣΜΟΣ` does not find "κόσμος")."""
    await run_turn(engine, stored)
    res = await engine.search(query)
    assert any(h.role == "user" for h in res.hits), [h.plain_line() for h in res.hits]


# ------------------------------------------------------------------------------ the live copy
def test_a_message_in_two_transcripts_is_shown_as_the_live_copy_after_a_branch_switch(data_dir: Path) -> None:
    """README *What you see*: "A message found in two transcripts ... is shown once, the live copy";
    *Branches*: restoring the archived parent "switches branches". After `/fork` at e:2 and
    `sessions restore PARENT`, the parent is live and the fork archived, but `neotask search` shows
    the user's message from the archived fork (its rows are newer) and hides the live copy."""
    assert cli("send", "quebec romeo", env=SCRIPTED).returncode == 0
    assert cli("send", "sierra tango", env=SCRIPTED).returncode == 0
    [parent] = [p.stem for p in (data_dir / "sessions").glob("*.jsonl")]
    r = cli("sessions", "fork", KEY, "--at", "e:2", env=SCRIPTED)
    assert r.returncode == 0, r.stderr
    r = cli("sessions", "restore", parent, env=SCRIPTED)
    assert r.returncode == 0, r.stderr
    hits = json.loads(cli("search", "quebec", "--json").stdout)["hits"]
    users = [h for h in hits if h["role"] == "user"]
    assert [(h["session_id"], h["archived"]) for h in users] == [(parent, False)], users


# ------------------------------------------------------------------------------ a huge query
async def test_a_pasted_huge_search_query_does_not_stall(engine: Any) -> None:
    """README *Hostile input*: a paste never stalls the app; `/search QUERY` takes whatever is
    pasted. Every word became one more AND term of one FTS5 expression with no cap (quadratic: a
    200 KB query took over 5 s). Now a repeated word counts once, at most
    ``tuning.SEARCH_QUERY_MAX_TERMS`` distinct terms are matched and at most
    ``tuning.SEARCH_QUERY_MAX_WORDS`` words are read, with a notice (timing: bench/search_query_terms.py)."""
    from neotask_tui.storage.search import fts_query

    await run_turn(engine, "evil twin")
    assert fts_query("x " * 100_000 + "evil") == '"x"'  # 100k repeats: one term, the rest not read
    res = await engine.search("x " * 100_000 + "evil")
    assert any("left out" in n for n in res.notices), res.notices
    many = " ".join(f"w{i}" for i in range(5000))
    assert fts_query(many).count('"') == 2 * tuning.SEARCH_QUERY_MAX_TERMS
    assert fts_query('"' + "y " * 100_000 + '"').count(" ") == tuning.SEARCH_QUERY_MAX_WORDS - 1
    res = await engine.search("evil twin " + "evil " * 50)  # short and repetitive: all of it read
    assert not any("left out" in n for n in res.notices), res.notices
    assert any(h.role == "user" for h in res.hits)
    res = await engine.search("evil\x00twin")  # a NUL is a separator, not a broken string
    assert any(h.role == "user" for h in res.hits), res.notices


async def test_a_password_announced_at_the_start_of_a_long_message_is_not_findable(
        engine: Any, data_dir: Path) -> None:
    """README *Secrets*: "A password sent on its own right after a message announcing it ... is
    redacted too", in the full-text search index as everywhere. The index passes the redactor only
    the last 64 KiB of the announcing message, so when the announcement opens a long message (a
    paste follows it), the password sent next is stored in search/index.sqlite3 in clear and
    `neotask search Tr0ub4dorZz93` finds it (the redactor, given the whole message, redacts it)."""
    from neotask_tui.text.secrets import redact

    announce = "my password is in the next message. " + "f " * 40_000
    assert redact("Tr0ub4dorZz93", context=announce)[0] == "[REDACTED:password]"
    await run_turn(engine, announce)
    await run_turn(engine, "Tr0ub4dorZz93")
    res = await engine.search("Tr0ub4dorZz93")
    users = [h.plain_line()[:60] for h in res.hits if h.role == "user"]
    assert users == [], users


async def test_a_reply_quoting_an_announced_password_does_not_make_it_findable(engine: Any, data_dir: Path) -> None:
    """README *Secrets*: a password sent on its own after a message announcing it is redacted, and
    "a secret the transcript keeps is not in the index and is not found by searching for it". The
    user's copy is redacted, but the assistant's reply that repeats it (the scripted echo here; real
    models routinely confirm "your password Tr0ub4dorZz93 is noted") is indexed with no context, so
    `neotask search Tr0ub4dorZz93` finds the password and it is stored in search/index.sqlite3."""
    await run_turn(engine, "my password is in the next message")
    await run_turn(engine, "Tr0ub4dorZz93")
    res = await engine.search("Tr0ub4dorZz93")
    assert res.hits == [], [(h.role, h.plain_line()[:60]) for h in res.hits]
    raw = b"".join(p.read_bytes() for p in (data_dir / "search").glob("index.sqlite3*"))
    assert b"Tr0ub4dorZz93" not in raw
