"""Keys, transcripts (torn/corrupt lines), the index (atomic, rebuilt) and the store."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.errors import StorageError, UserError
from neotask_tui.storage.events import Event
from neotask_tui.storage.index import SessionRecord, SessionRecords, load_index
from neotask_tui.storage.keys import parse_key, validate_agent_id, validate_key
from neotask_tui.storage.store import SessionStore
from neotask_tui.storage.transcript import append_events, read_transcript

KEY = "agent:main:tui:default"


@pytest.mark.parametrize("key", [
    "agent:main:tui:default", "agent:a-1:slack:C0123", "agent:bot.v2:cli:user@example.com", "agent:x:y:z+1",
])
def test_valid_keys(key: str) -> None:
    k = parse_key(key)
    assert str(k) == key


@pytest.mark.parametrize("key", [
    "", "agent", "agent:main:tui", "agent:main:tui:default:extra", "bot:main:tui:default", "agent::tui:x",
    "agent:../etc:tui:x", "agent:main:tui:..", "agent:main:tui:a/b", "agent:main:tui:-x", "agent:main:tui:" + "x" * 65,
    "agent:ma in:tui:x", "agent:main:tui:\x00", "agent:алиса:cli:one", "agent:al ice:cli:one",
])
def test_bad_keys_get_clear_error(key: str) -> None:
    with pytest.raises(UserError, match="bad session key"):
        validate_key(key)


@pytest.mark.parametrize(("check", "value", "what"), [
    (validate_key, "agent:main:cli:a..b", "chat_id"), (validate_key, "agent:a..b:cli:x", "agent_id"),
    (validate_agent_id, "a..b", "agent id"),
])
def test_an_id_with_two_dots_is_refused_by_a_rule_that_says_so(check: Callable[[str], str], value: str,
                                                              what: str) -> None:
    """Red team 37, finding 7: ``a..b`` was refused by an error quoting a rule it fits."""
    with pytest.raises(UserError) as e:
        check(value)
    assert what in str(e.value) and str(e.value).endswith(
        "must be 1-64 chars of letters, digits, . _ @ + -, start with a letter or digit and hold no '..'")
    assert validate_agent_id("a.b") == "a.b"


def _ev(i: int, text: str = "hi") -> Event:
    return Event(type="message", id=i, parent=i - 1 or None, ts="2026-01-01T00:00:00+00:00",
                 data={"role": "user", "content": text})


def test_torn_tail_quarantined_and_cut(tmp_path: Path) -> None:
    p = paths.transcript_path("s1")
    append_events(p, [_ev(1), _ev(2)])
    with open(p, "ab") as f:
        f.write(b'{"id":3,"parent":2,"ts":"x","type":"mess')
    lt = read_transcript(p)
    assert [e.id for e in lt.events] == [1, 2]
    assert len(lt.issues) == 1 and lt.issues[0].tail
    q = Path(lt.issues[0].quarantined_to)
    rec = json.loads(q.read_text().splitlines()[0])
    assert rec["raw"].startswith('{"id":3')
    # the torn bytes are gone from the transcript, the next append starts on a clean line
    assert p.read_bytes().endswith(b"\n")
    append_events(p, [_ev(3)])
    assert [e.id for e in read_transcript(p).events] == [1, 2, 3]


def test_corrupt_middle_line_reported_good_lines_survive() -> None:
    p = paths.transcript_path("s2")
    append_events(p, [_ev(1)])
    with open(p, "ab") as f:
        f.write(b"\x00\xffgarbage\n")
    append_events(p, [_ev(2), _ev(3)])
    lt = read_transcript(p)
    assert [e.id for e in lt.events] == [1, 2, 3]
    assert len(lt.issues) == 1 and not lt.issues[0].tail and lt.issues[0].line_no == 2
    # loading again does not quarantine the same line twice
    read_transcript(p)
    q = paths.quarantine_dir() / "s2.quarantine.jsonl"
    assert len(q.read_text().splitlines()) == 1


def test_complete_json_without_newline_is_kept() -> None:
    p = paths.transcript_path("s3")
    append_events(p, [_ev(1)])
    with open(p, "ab") as f:
        f.write(_ev(2).to_line().rstrip("\n").encode())
    lt = read_transcript(p)
    assert [e.id for e in lt.events] == [1, 2] and not lt.issues
    append_events(p, [_ev(3)])
    assert [e.id for e in read_transcript(p).events] == [1, 2, 3]


def test_store_new_session_writes_header_and_index_atomically() -> None:
    st = SessionStore()
    rec = st.create_session(KEY, reason="new")
    lines = paths.transcript_path(rec.session_id).read_text().splitlines()
    header = json.loads(lines[0])
    assert header["type"] == "session" and header["key"] == KEY and header["session_id"] == rec.session_id
    idx = json.loads(paths.sessions_index().read_text())
    assert idx["sessions"][KEY]["session_id"] == rec.session_id
    # no temp files left behind
    assert not [p for p in paths.sessions_dir().iterdir() if p.name.startswith(".")]


def test_new_session_archives_old_transcript() -> None:
    st = SessionStore()
    a = st.create_session(KEY, reason="new")
    st.append(a.session_id, "message", {"role": "user", "content": "keep me"})
    b = st.create_session(KEY, reason="new")
    assert a.session_id != b.session_id
    assert paths.archived_transcript_path(a.session_id).exists()
    assert not paths.transcript_path(a.session_id).exists()
    assert [e.content for e in SessionStore(readonly=True).events(a.session_id)][-1] == "keep me"
    assert [x.session_id for x in st.list_archived()] == [a.session_id]


@pytest.mark.parametrize("damage", ["truncate", "garbage", "delete", "empty", "wrong-shape"])
def test_corrupt_index_rebuilt_from_transcripts(damage: str) -> None:
    st = SessionStore()
    recs = {k: st.create_session(k, reason="new") for k in (KEY, "agent:other:cli:x")}
    st.append(recs[KEY].session_id, "message", {"role": "assistant", "content": "ok",
                                                "usage": {"input": 10, "output": 2, "cache_read": 1, "cache_write": 0}})
    idx = paths.sessions_index()
    body = idx.read_bytes()
    if damage == "truncate":
        idx.write_bytes(body[: len(body) // 2])
    elif damage == "garbage":
        idx.write_bytes(os.urandom(300))
    elif damage == "delete":
        idx.unlink()
    elif damage == "empty":
        idx.write_bytes(b"")
    else:
        idx.write_text('{"version": 1, "sessions": []}')
    loaded = load_index()
    assert loaded.rebuilt and "rebuilt 2 sessions" in loaded.problem
    assert {k: r.session_id for k, r in loaded.records.items()} == {k: r.session_id for k, r in recs.items()}
    assert loaded.records[KEY].counters.input == 10 and loaded.records[KEY].counters.cache_read == 1
    # the repaired index is on disk and valid
    assert json.loads(idx.read_text())["sessions"][KEY]["session_id"] == recs[KEY].session_id
    if damage in ("truncate", "garbage", "empty", "wrong-shape"):
        assert any(p.name.startswith("sessions.json.corrupt") for p in paths.quarantine_dir().iterdir())


def test_cleanup_archives_and_restore_brings_back() -> None:
    st = SessionStore()
    old = st.create_session("agent:main:tui:old", reason="new", now=datetime.now(UTC) - timedelta(days=40))
    st.records["agent:main:tui:old"].last_activity_at = (datetime.now(UTC) - timedelta(days=40)).isoformat()
    fresh = st.create_session(KEY, reason="new")
    done = st.cleanup(30)
    assert [r.session_id for r in done] == [old.session_id]
    assert "agent:main:tui:old" not in st.records and KEY in st.records
    assert paths.archived_transcript_path(old.session_id).exists()
    rec = st.make_current(old.session_id)
    assert rec.key == "agent:main:tui:old" and st.get("agent:main:tui:old").session_id == old.session_id
    assert paths.transcript_path(old.session_id).exists()
    assert st.get(KEY).session_id == fresh.session_id


def test_index_stays_small_with_many_sessions() -> None:
    st = SessionStore()
    for _ in range(60):
        st.create_session(KEY, reason="new")
    idx = json.loads(paths.sessions_index().read_text())
    assert len(idx["sessions"]) == 1
    assert len(st.list_archived()) == 59


def test_orphan_from_interrupted_switch_is_archived() -> None:
    st = SessionStore()
    a = st.create_session(KEY, reason="new")
    b = st.create_session(KEY, reason="new", archive_previous=False)  # simulate a crash before archiving
    assert paths.transcript_path(a.session_id).exists()
    st2 = SessionStore()
    assert [p.stem for p in st2.orphans()] == [a.session_id]
    assert st2.repair_orphans() == [a.session_id]
    assert paths.archived_transcript_path(a.session_id).exists() and st2.get(KEY).session_id == b.session_id


def test_permissions_dir_0700_files_0600() -> None:
    st = SessionStore()
    rec = st.create_session(KEY, reason="new")
    st.append(rec.session_id, "message", {"role": "user", "content": "x"})
    for p in [paths.data_dir(), paths.sessions_dir()]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o700
    for p in [paths.sessions_index(), paths.transcript_path(rec.session_id)]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600


def test_readonly_store_never_writes() -> None:
    st = SessionStore()
    rec = st.create_session(KEY, reason="new")
    ro = SessionStore(readonly=True)
    with pytest.raises(UserError):
        ro.append(rec.session_id, "message", {"role": "user", "content": "x"})


def test_each_append_counts_into_the_record_of_its_session_as_records_come_and_go(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The store finds an appended session's record by its id: right after new sessions, a switch
    that keeps the old transcript live, a failed switch, a restore, cleanup and a removed key."""
    st = SessionStore()
    other = "agent:main:cli:other"

    def reply(sid: str, n: int) -> None:
        st.append(sid, "message", {"role": "assistant", "content": "ok", "usage": {"input": n, "output": 1}})

    def inputs() -> dict[str, int]:
        return {k: r.counters.input for k, r in st.records.items()}

    a = st.create_session(KEY, reason="new")
    o = st.create_session(other, reason="new")
    reply(a.session_id, 3)
    reply(o.session_id, 5)
    assert inputs() == {KEY: 3, other: 5}
    b = st.create_session(KEY, reason="new", archive_previous=False)  # a's transcript stays live
    reply(a.session_id, 100)  # no key's current session: no record counts it
    reply(b.session_id, 7)
    assert inputs() == {KEY: 7, other: 5} and a.counters.input == 3

    def refused(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as mp:  # a switch whose index save fails leaves b current
        mp.setattr("neotask_tui.storage.store.save_index", refused)
        with pytest.raises(StorageError):
            st.create_session(KEY, reason="new")
    reply(b.session_id, 1)
    assert inputs() == {KEY: 8, other: 5}
    restored = st.make_current(a.session_id)  # b is archived; a is recounted from its transcript
    reply(a.session_id, 2)
    assert st.get(KEY) is restored and inputs() == {KEY: 105, other: 5}
    assert st.remove_key(other) is not None
    st.records[KEY].last_activity_at = (datetime.now(UTC) - timedelta(days=40)).isoformat()
    assert [r.session_id for r in st.cleanup(30)] == [a.session_id]
    assert not st.records and st.records.by_session(a.session_id) is None
    c = st.create_session(KEY, reason="new")
    reply(c.session_id, 4)
    assert inputs() == {KEY: 4} and restored.counters.input == 105
    st.save()  # the caller saves the index after an append
    assert SessionStore().get(KEY).counters.input == 4  # type: ignore[union-attr]


def test_session_records_find_a_record_by_its_session_however_it_changes() -> None:
    def rec(key: str, sid: str) -> SessionRecord:
        return SessionRecord(key=key, session_id=sid, created_at="2026-01-01T00:00:00+00:00",
                             last_activity_at="2026-01-01T00:00:00+00:00")

    a, b, c = rec(KEY, "s-a"), rec("agent:main:cli:x", "s-b"), rec(KEY, "s-c")
    records = SessionRecords({KEY: a, b.key: b})
    assert records.by_session("s-a") is a and records.by_session("s-b") is b
    records[KEY] = c  # a switch: the old session is no key's any more
    assert records.by_session("s-a") is None and records.by_session("s-c") is c
    assert records.pop(b.key) is b and records.by_session("s-b") is None
    twin = rec("agent:main:cli:y", "s-c")  # two keys naming one session: only a hand-edited index
    records[twin.key] = twin
    del records[twin.key]
    assert records.by_session("s-c") is c and dict(records) == {KEY: c}


def test_counters_catch_up_after_crash_between_append_and_index_save() -> None:
    st = SessionStore()
    rec = st.create_session(KEY, reason="new")
    # the reply is on disk, but the process died before sessions.json was rewritten
    st.append(rec.session_id, "message", {"role": "assistant", "content": "ok",
                                          "usage": {"input": 9, "output": 4, "cache_read": 2, "cache_write": 1}},
              ts="2099-01-01T00:00:00+00:00")
    st2 = SessionStore()
    assert st2.get(KEY).counters.input == 0  # type: ignore[union-attr]
    assert st2.reconcile_counters() == [KEY]
    got = SessionStore().get(KEY)
    assert got is not None and got.counted_through == 2  # the transcript's last event
    c = got.counters
    assert (c.input, c.output, c.cache_read, c.cache_write) == (9, 4, 2, 1)
    assert SessionStore().reconcile_counters() == []  # idempotent


def test_counters_catch_up_by_the_last_counted_event_not_by_time() -> None:
    """A line the index already counted is never added again, whatever its time (a compaction
    preview's ``call`` is saved with the index but is not activity, so it is newer than it)."""
    st = SessionStore()
    rec = st.create_session(KEY, reason="new")
    st.append(rec.session_id, "call", {"purpose": "compaction_preview", "usage": {"input": 5, "output": 1}},
              ts="2099-01-01T00:00:00+00:00")
    assert (rec.counters.input, rec.counted_through) == (5, 2)  # counted by the store as it appends
    st.save()
    st2 = SessionStore()
    assert st2.reconcile_counters() == []
    got = st2.get(KEY)
    assert got is not None and got.counters.input == 5 and got.last_activity_at < "2099"
    # Appended after the last save (a crash before it): counted once at the next start.
    st2.append(rec.session_id, "message", {"role": "assistant", "content": "ok", "usage": {"input": 9, "output": 4}})
    st3 = SessionStore()
    assert st3.reconcile_counters() == [KEY]
    assert SessionStore().get(KEY).counters.input == 14  # type: ignore[union-attr]


def _line(type_: str, id_: int, **data: object) -> Event:
    return Event(type_, id_, id_ - 1 if id_ > 1 else None, f"2026-01-01T00:00:{id_:02d}+00:00", dict(data))


def test_a_rebuild_counts_an_older_compactions_lineage_once() -> None:
    """A compaction's transcript written before ``carried_totals`` and ``copied_from`` on kept
    messages: the rebuild follows its parents and counts each event id once."""
    reply = {"role": "assistant", "content": "ok", "usage": {"input": 10, "output": 1}}
    parent = [
        _line("session", 1, session_id="20260101-000000-aaaaaaaa", key=KEY, created_at="2026-01-01T00:00:01+00:00",
              reason="new"),
        _line("message", 2, role="user", content="hi"), _line("message", 3, **reply),
        _line("message", 4, role="user", content="more"), _line("message", 5, **reply),
    ]
    child = [
        _line("session", 6, session_id="20260101-000010-bbbbbbbb", key=KEY, created_at="2026-01-01T00:00:06+00:00",
              reason="compaction", parent_session_id="20260101-000000-aaaaaaaa", compaction_count=1),
        _line("compaction", 7, summary="s", source_session_id="20260101-000000-aaaaaaaa",
              usage={"input": 100, "output": 7}),
        _line("message", 4, role="user", content="more"), _line("message", 5, **reply),  # kept, unmarked
        _line("message", 8, role="user", content="next"), _line("message", 9, **reply),
    ]
    paths.ensure_dir(paths.archive_dir())
    append_events(paths.archived_transcript_path("20260101-000000-aaaaaaaa"), parent)
    append_events(paths.transcript_path("20260101-000010-bbbbbbbb"), child)
    rec = load_index().records[KEY]
    assert (rec.counters.input, rec.counters.output) == (10 + 10 + 100 + 10, 1 + 1 + 7 + 1)
    assert rec.counted_through == 9
