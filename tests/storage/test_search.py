"""The full-text index over every transcript (storage/search.py), on real files and real SQLite."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.errors import UserError
from neotask_tui.storage.events import Event
from neotask_tui.storage.lock import DataLock
from neotask_tui.storage.search import SearchIndex, fts_query, parse_since
from neotask_tui.storage.store import SessionStore
from neotask_tui.storage.transcript import append_events

KEY = "agent:main:tui:default"


def _chat(store: SessionStore, sid: str, *texts: str) -> None:
    for i, t in enumerate(texts):
        store.append(sid, "message", {"role": "user" if i % 2 == 0 else "assistant", "content": t})


def _index_bytes() -> bytes:
    d = paths.search_dir()
    return b"".join(p.read_bytes() for p in sorted(d.iterdir()) if p.is_file())


def test_appends_are_found_at_once_words_phrases_prefixes_and_russian() -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    _chat(store, sid, "How do I configure the nginx reverse proxy?", "Check the upstream block.\nThen reload nginx.",
          "Встреча по релизу перенесена на пятницу")
    idx = SearchIndex(writable=False)  # a reader: what the store wrote is already in the index
    hit = idx.search("nginx").hits
    assert {(h.role, h.ref) for h in hit} == {("user", "e:2"), ("assistant", "e:3")}
    reply = next(h for h in hit if h.role == "assistant")
    assert reply.plain_line() == "Then reload nginx."  # the matching line, not the first one
    assert reply.spans() == [(12, 17)] and reply.plain_line()[12:17] == "nginx"
    assert [h.ref for h in idx.search('"reverse proxy"').hits] == ["e:2"]
    assert idx.search('"proxy reverse"').hits == []  # a phrase keeps its order
    assert [h.ref for h in idx.search("встреча").hits] == ["e:4"]
    assert [h.ref for h in idx.search("релиз*").hits] == ["e:4"]  # релизу
    assert idx.search("релиз").hits == []  # exact words: no stemming
    assert [h.ref for h in idx.search("NGINX upstream").hits] == ["e:3"]  # every word, any case
    assert idx.search("nginx").hits[0].key == KEY
    idx.close()


def test_the_index_never_holds_a_secret_the_transcript_has() -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    _chat(store, sid, "my password is Zebra9!horse, and the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789AB",
          "noted",
          "I will send my NAS admin password in the next message.", "ok",
          "Qw7rT2pLx9")
    assert b"Zebra9" in paths.transcript_path(sid).read_bytes()  # the transcript is the user's own record
    idx = SearchIndex(writable=True)
    assert idx.search("Zebra9").hits == [] and idx.search("Qw7rT2pLx9").hits == []
    assert idx.search("abcdefghijklmnopqrstuvwxyz0123456789AB").hits == []
    line = idx.search("password").hits
    assert any("[REDACTED:" in h.plain_line() for h in line)
    idx.close()
    raw = _index_bytes()
    for secret in (b"Zebra9", b"Qw7rT2pLx9", b"abcdefghijklmnopqrstuvwxyz0123456789AB"):
        assert secret not in raw


def test_archived_reset_and_compacted_sessions_are_searched_and_kept_copies_shown_once() -> None:
    store = SessionStore()
    first = store.create_session(KEY, reason="new").session_id
    _chat(store, first, "the billing webhook: how many attempts?", "ok, five retries")
    kept = store.events(first)[-1]
    # a compaction: the new session starts with copies of the kept messages (original ids and times)
    second = store.create_session(KEY, reason="compaction", parent_session_id=first, first_id=kept.id + 1,
                                  extra_events=[Event(kept.type, kept.id, None, kept.ts, dict(kept.data))]).session_id
    assert store.is_archived(first)
    _chat(store, second, "what about the billing dashboard?")
    other = store.create_session("agent:ops:cli:night", reason="new").session_id
    _chat(store, other, "billing is down on worker-14")
    idx = SearchIndex(writable=True)
    hits = idx.search("billing").hits
    assert sorted((h.session_id, h.ref) for h in hits) == sorted(
        [(first, "e:2"), (second, "e:5"), (other, "e:2")])
    assert next(h for h in hits if h.session_id == first).archived
    retries = idx.search("retries").hits
    assert [(h.session_id, h.ref) for h in retries] == [(second, "e:3")]  # in both transcripts: shown once, live
    assert [h.session_id for h in idx.search("billing", agent="ops").hits] == [other]
    idx.close()


def test_since_filters_by_message_time() -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    store.append(sid, "message", {"role": "user", "content": "old invoice"}, ts="2026-01-05T10:00:00+03:00")
    store.append(sid, "message", {"role": "user", "content": "new invoice"}, ts="2026-03-05T10:00:00+00:00")
    idx = SearchIndex(writable=True)
    assert len(idx.search("invoice").hits) == 2
    got = idx.search("invoice", since=parse_since("2026-02-01T00:00:00+00:00")).hits
    assert [h.plain_line() for h in got] == ["new invoice"]
    assert got[0].ts.startswith("2026-03-05T10:00:00")
    assert parse_since("7d", datetime(2026, 3, 8, tzinfo=UTC)).startswith("2026-03-01T00:00:00")
    with pytest.raises(UserError):
        parse_since("last tuesday")
    idx.close()


# Red team 30, finding 10: --since 0001-01-01 east of UTC and a late 9999-12-31 west of it were "out of
# range"; --since "" was no filter and "７d" (full-width) was 7 days.
def test_since_in_year_1_or_9999_is_taken_where_utc_leaves_those_years() -> None:
    from zoneinfo import ZoneInfo

    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    store.append(sid, "message", {"role": "user", "content": "early invoice"}, ts="0001-01-01T00:00:00+00:00")
    store.append(sid, "message", {"role": "user", "content": "late invoice"}, ts="9999-12-31T23:59:59.999999+00:00")
    idx = SearchIndex(writable=True)
    tokyo, new_york = ZoneInfo("Asia/Tokyo"), ZoneInfo("America/New_York")
    for since in (parse_since("0001-01-01", tz=tokyo), parse_since("0001-01-01T00:00+14:00")):
        assert since == "0001-01-01T00:00:00.000000"
        assert sorted(h.plain_line() for h in idx.search("invoice", since=since).hits) == ["early invoice",
                                                                                            "late invoice"]
    for since in (parse_since("9999-12-31T23:59", tz=new_york), parse_since("9999-12-31T20:00-05:00")):
        assert idx.search("invoice", since=since).hits == []  # later than the last stored time
    late = parse_since("9999-12-31T18:59", tz=new_york)  # still in 9999 in UTC: an ordinary bound
    assert late == "9999-12-31T23:59:00.000000"
    assert [h.plain_line() for h in idx.search("invoice", since=late).hits] == ["late invoice"]
    idx.close()


@pytest.mark.parametrize("since", ["", "  ", "７d", "٧d", "7ｄ", "２０２６-01-01", "2026-01-01T１２:00", "7\u00a0d"])
def test_since_is_ascii_and_never_empty(since: str) -> None:
    with pytest.raises(UserError, match=r"^--since takes a date \(2026-11-30\), a date-time or a span"):
        parse_since(since)


def test_query_syntax_is_only_words_phrases_and_prefixes() -> None:
    assert fts_query('nginx "reverse proxy" kube*') == '"nginx" "reverse proxy" "kube"*'
    assert fts_query('a OR b NOT c') == '"a" "or" "b" "not" "c"'  # operators are words (folded)
    assert fts_query('col:value "unclosed') == '"col:value" "unclosed"'
    assert fts_query("caf\udce9 ok") == '"caf\ufffd" "ok"'  # a non-UTF-8 argv byte
    for bad in ("!!!", '""', "*", "   "):
        with pytest.raises(UserError):
            fts_query(bad)


def test_a_corrupt_index_is_quarantined_and_rebuilt_with_a_notice() -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    _chat(store, sid, "the lighthouse keeper", "ok")
    store.search.close()
    paths.search_index().write_bytes(b"this is not a database" * 200)
    for side in ("-wal", "-shm"):
        Path(str(paths.search_index()) + side).unlink(missing_ok=True)
    idx = SearchIndex(writable=True)
    res = idx.search("lighthouse")
    assert [h.ref for h in res.hits] == ["e:2"]
    assert any("damaged" in n and "rebuilt" in n for n in res.notices)
    assert any(p.name.startswith("search-index.corrupt-") for p in paths.quarantine_dir().iterdir())
    idx.close()


def test_a_missing_index_is_rebuilt_and_a_reader_without_one_scans_the_transcripts() -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    _chat(store, sid, "the lighthouse keeper", "ok")
    store.search.close()
    for p in paths.search_dir().iterdir():
        p.unlink()
    reader = SearchIndex(writable=False)
    res = reader.search("lighthouse")
    assert [h.ref for h in res.hits] == ["e:2"] and not res.indexed and res.notices
    assert list(paths.search_dir().iterdir()) == []  # a reader writes nothing
    writer = SearchIndex(writable=True)
    res = writer.search("lighthouse")
    assert [h.ref for h in res.hits] == ["e:2"] and res.indexed
    assert any("built the search index" in n for n in res.notices)
    writer.close()


def test_a_reader_beside_the_lock_holder_finds_what_is_not_indexed_yet() -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    _chat(store, sid, "first message about zeppelins")
    # lines the index has not seen (written by an older version, or by the holder's next append)
    append_events(paths.transcript_path(sid), [Event("message", 3, 2, "2026-01-01T00:00:00+00:00",
                                                     {"role": "assistant", "content": "zeppelins again"})])
    lock = DataLock()
    lock.acquire()
    try:
        reader = SearchIndex(writable=False)
        assert sorted(h.ref for h in reader.search("zeppelins").hits) == ["e:2", "e:3"]
        reader.close()
    finally:
        lock.release()
    writer = SearchIndex(writable=True)
    assert sorted(h.ref for h in writer.search("zeppelins").hits) == ["e:2", "e:3"]
    assert writer.stats()["messages"] == 2
    writer.close()


def test_a_transcript_changed_under_the_index_is_indexed_again() -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    _chat(store, sid, "alpha centauri", "beta")
    store.search.close()
    path = paths.transcript_path(sid)
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:1]) + b"\n" + Event(
        "message", 2, 1, "2026-01-01T00:00:00+00:00", {"role": "user", "content": "gamma ray burst"}).to_line().encode()
        + Event("message", 3, 2, "2026-01-01T00:00:01+00:00", {"role": "assistant", "content": "delta"}
                ).to_line().encode())
    idx = SearchIndex(writable=True)
    assert idx.search("alpha").hits == [] and [h.ref for h in idx.search("gamma").hits] == ["e:2"]
    assert idx.stats()["messages"] == 2
    idx.close()


def test_index_files_are_private_and_a_linked_search_dir_is_refused(tmp_path: Path) -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    _chat(store, sid, "hello there")
    for p in paths.search_dir().iterdir():
        assert (p.stat().st_mode & 0o777) == 0o600, p
    assert (paths.search_dir().stat().st_mode & 0o777) == 0o700
    store.search.close()
    elsewhere = tmp_path / "elsewhere"
    os.rename(paths.search_dir(), elsewhere)
    os.symlink(elsewhere, paths.search_dir())
    with pytest.raises(UserError, match="symbolic link"):
        SearchIndex(writable=True).search("hello")


def test_a_failed_index_update_never_fails_the_append() -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    store.search.close()
    paths.search_index().unlink()
    paths.search_index().mkdir()  # the database cannot be opened at all
    ev = store.append(sid, "message", {"role": "user", "content": "still stored"})
    assert ev.id == 2 and "still stored" in paths.transcript_path(sid).read_text()
    assert any("could not be updated" in n for n in store.search.notices)
    with pytest.raises(sqlite3.Error):
        sqlite3.connect(str(paths.search_index())).execute("SELECT 1 FROM msgs")


def test_damage_inside_the_database_is_found_by_the_query_and_repaired() -> None:
    store = SessionStore()
    sid = store.create_session(KEY, reason="new").session_id
    _chat(store, sid, *[f"message {i} about the lighthouse keeper and the harbour" for i in range(400)])
    store.search.close()
    db = paths.search_index()
    data = bytearray(db.read_bytes())
    assert len(data) > 5 * 4096
    data[4096:len(data) - 4096] = b"\xff" * (len(data) - 8192)  # the header page stays valid
    db.write_bytes(bytes(data))
    reader = SearchIndex(writable=False)
    res = reader.search("lighthouse", limit=500)
    assert len(res.hits) == 400 and not res.indexed  # read from the transcripts instead
    reader.close()
    writer = SearchIndex(writable=True)
    res = writer.search("lighthouse", limit=500)
    assert len(res.hits) == 400 and res.indexed
    assert any("damaged" in n for n in res.notices)
    writer.close()
