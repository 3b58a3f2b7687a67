"""Fork, retry and edit (issue #21 items 2 and 3) on the real store with the scripted provider."""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from neotask_tui import paths
from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.session.branch import tree_rows
from neotask_tui.errors import UserError
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.storage.events import superseded_ids
from neotask_tui.storage.index import load_index
from neotask_tui.storage.transcript import read_transcript

KEY = "agent:main:tui:default"
USAGE = {"input": 10, "output": 2, "cache_read": 0, "cache_write": 0}


def make(**kw: Any) -> tuple[Engine, ScriptedProvider]:
    s = Settings()
    s.memory.enabled = False
    s.context.window_tokens = 8192
    prov = ScriptedProvider()
    return Engine(s, provider=prov, tz=ZoneInfo("UTC"), **kw), prov


async def turn(engine: Engine, text: str) -> list[ev.EngineEvent]:
    return [e async for e in engine.send(text, KEY)]


def sent_text(prov: ScriptedProvider, call: int = -1) -> str:
    return "\n".join(m.content for m in prov.calls[call])


async def test_retry_supersedes_the_reply_and_sends_without_it() -> None:
    engine, prov = make()
    prov.queue({"text": "The capital is Lyon", "usage": USAGE})
    await turn(engine, "capital of France?")
    prov.queue({"text": "The capital is Paris", "usage": USAGE})
    out = [e async for e in engine.retry(KEY)]
    sup = next(e for e in out if isinstance(e, ev.Superseded))
    done = next(e for e in out if isinstance(e, ev.TurnDone))
    assert done.text == "The capital is Paris"
    evs = engine.events(KEY)
    old = next(e for e in evs if e.content == "The capital is Lyon")
    assert sup.superseded_ids == [old.id] and old.id in superseded_ids(evs)  # kept on disk, marked
    assert "Lyon" not in sent_text(prov) and "capital of France?" in sent_text(prov)
    assert [e.content for e in engine.history(KEY) if e.type == "message"] == [
        "capital of France?", "The capital is Paris"]
    # both calls were really sent: both are counted, in memory and on disk
    rec = engine.store.get(KEY)
    assert rec is not None and (rec.counters.input, rec.counters.output) == (20, 4)
    assert load_index().records[KEY].counters.input == 20
    await engine.aclose()


async def test_retry_without_a_reply_answers_the_last_message() -> None:
    engine, prov = make()
    await engine.append(KEY, "message", {"role": "user", "content": "hello?"})  # a turn cut by a crash
    prov.queue("hi!")
    out = [e async for e in engine.retry(KEY)]
    assert not any(isinstance(e, ev.Superseded) for e in out)
    assert next(e for e in out if isinstance(e, ev.TurnDone)).text == "hi!"
    await engine.aclose()


async def test_retry_and_edit_refuse_without_a_message() -> None:
    engine, _ = make()
    engine.current_record(KEY)
    with pytest.raises(UserError, match="no message of yours"):
        [e async for e in engine.retry(KEY)]
    with pytest.raises(UserError, match="empty message"):
        [e async for e in engine.edit_last("   ", KEY)]
    await engine.aclose()


async def test_edit_supersedes_message_and_reply_and_answers_the_new_text() -> None:
    engine, prov = make()
    await turn(engine, "first question")
    prov.queue("answer about cats")
    await turn(engine, "tell me about cats")
    prov.queue("answer about dogs")
    out = [e async for e in engine.edit_last("tell me about dogs", KEY)]
    sup = next(e for e in out if isinstance(e, ev.Superseded))
    evs = engine.events(KEY)
    cats = [e.id for e in evs if "cats" in e.content and e.type == "message"]
    assert sorted(sup.superseded_ids) == sorted(cats) and sup.by == "edit"
    new_user = next(e for e in evs if e.content == "tell me about dogs")
    assert new_user.data["edited_from"] == cats[0]
    assert "cats" not in sent_text(prov) and "tell me about dogs" in sent_text(prov)
    assert "first question" in sent_text(prov)
    assert engine.last_user_message(KEY) is not None and engine.last_user_message(KEY).id == new_user.id  # type: ignore[union-attr]
    # the transcript on disk still holds every line: append-only
    on_disk = read_transcript(paths.transcript_path(engine.current_record(KEY).session_id)).events
    assert sum(1 for e in on_disk if "cats" in e.content) == 2
    await engine.aclose()


async def test_superseded_replies_stay_out_of_compaction() -> None:
    engine, prov = make()
    for i in range(4):
        await turn(engine, f"message {i} about topic{i}")
    prov.queue("WRONGREPLY zebra")
    await turn(engine, "message 4 about topic4")
    prov.queue("right reply")
    [e async for e in engine.retry(KEY)]
    await turn(engine, "message 5")
    res = await engine.compact(KEY)
    assert "WRONGREPLY" not in res.summary
    new_events = engine.events(KEY)
    assert not any("WRONGREPLY" in e.content for e in new_events)
    assert not any("WRONGREPLY" in e.content for e in engine.history(KEY))
    await engine.aclose()


async def test_fork_copies_history_up_to_n_with_original_ids_and_links_the_parent() -> None:
    engine, prov = make()
    await turn(engine, "alpha")
    await turn(engine, "beta")
    await turn(engine, "gamma")
    old = engine.current_record(KEY)
    old_events = list(engine.events(KEY))
    beta_reply = next(e for e in old_events if e.content == "(scripted) beta")
    rec = await engine.fork_session(KEY, beta_reply.id)
    assert rec.session_id != old.session_id and rec.parent_session_id == old.session_id
    assert rec.fork_at == beta_reply.id and rec.reason == "fork"
    assert engine.current_record(KEY).session_id == rec.session_id
    assert engine.store.is_archived(old.session_id)  # like /new: the other branch is archived, kept
    forked = engine.events(KEY)
    header = forked[0]
    assert header.data["fork_at"] == beta_reply.id and header.id > max(e.id for e in old_events)
    copied = [(e.id, e.content) for e in forked[1:]]
    assert copied == [(e.id, e.content) for e in old_events[1:] if e.id <= beta_reply.id]
    assert rec.counters.input == 0  # nothing was sent in the fork yet
    # the next turn sends the branch's history, not gamma, and gets a fresh id
    await turn(engine, "delta")
    assert "gamma" not in sent_text(prov) and "beta" in sent_text(prov)
    delta = next(e for e in engine.events(KEY) if e.content == "delta")
    assert delta.id > header.id
    # the index survives a rebuild with the link and without billing copied replies twice
    paths.sessions_index().unlink()
    rebuilt = load_index().records[KEY]
    assert rebuilt.parent_session_id == old.session_id and rebuilt.fork_at == beta_reply.id
    assert rebuilt.counters.output == engine.current_record(KEY).counters.output
    tree = tree_rows(engine.list_sessions(include_archived=True))
    assert [(d, r["session_id"]) for d, r in tree] == [(0, old.session_id), (1, rec.session_id)]
    await engine.aclose()


async def test_fork_default_point_errors_and_archived_source() -> None:
    engine, _ = make()
    engine.current_record(KEY)
    with pytest.raises(UserError, match="no message"):
        await engine.fork_session(KEY)
    await turn(engine, "one")
    first = engine.current_record(KEY).session_id
    header_id = engine.events(KEY)[0].id
    with pytest.raises(UserError, match=r"is a session|no event"):
        await engine.fork_session(KEY, header_id)
    with pytest.raises(UserError, match="no event e:999"):
        await engine.fork_session(KEY, 999)
    rec = await engine.fork_session(KEY)  # the last message
    assert rec.fork_at == engine.events(KEY)[-1].id
    # fork the archived first session ("resume here" from an archived transcript)
    again = await engine.fork_session(KEY, 2, from_session=first)
    assert again.parent_session_id == first and [e.content for e in engine.events(KEY)[1:]] == ["one"]
    # never into another agent's key
    with pytest.raises(UserError, match="belongs to"):
        await engine.fork_session("agent:eve:tui:default", 2, from_session=first)
    assert engine.store.get("agent:eve:tui:default") is None
    await engine.aclose()


async def test_fork_at_a_superseded_reply_brings_it_back() -> None:
    engine, prov = make()
    prov.queue("first answer")
    await turn(engine, "question")
    prov.queue("second answer")
    [e async for e in engine.retry(KEY)]
    first = next(e for e in engine.events(KEY) if e.content == "first answer")
    await engine.fork_session(KEY, first.id)
    assert [e.content for e in engine.history(KEY)] == ["question", "first answer"]
    await engine.aclose()


async def test_fork_keeps_the_state_as_of_the_fork_point() -> None:
    engine, _ = make()
    await engine.state.set_goal(KEY, "ship the parser")
    await turn(engine, "one")
    point = engine.events(KEY)[-1].id
    await engine.state.set_goal(KEY, "write the docs")
    await turn(engine, "two")
    await engine.fork_session(KEY, point)
    goals = [e.value for e in engine.state.get(KEY).active if e.field == "current_goal"]
    assert goals == ["ship the parser"]
    await engine.aclose()


async def test_a_fork_at_your_message_keeps_what_that_message_set() -> None:
    """"My goal is …" at e:2 sets the goal in a state record right after it (e:3, sourced e:2): a fork
    at e:2 keeps the message, so it keeps the goal it stated (found on the newcomer walk: search,
    `r` on the hit, and the branch had no goal); the reply's own records stay behind."""
    engine, _ = make()
    await turn(engine, "My goal is to fix the nginx 502 on api-7.")
    first = next(e.id for e in engine.events(KEY) if e.type == "message" and e.role == "user")
    await turn(engine, "The goal is to write the docs.")
    rec = await engine.fork_session(KEY, first)
    goals = [e.value for e in engine.state.get(KEY).active if e.field == "current_goal"]
    assert goals == ["fix the nginx 502 on api-7"]
    copied = [e for e in engine.store.events(rec.session_id) if e.type != "session"]
    assert [e.type for e in copied] == ["message", "state"] and copied[1].data["source"] == f"e:{first}"
    await engine.aclose()


async def test_fork_of_a_compacted_session_reaches_into_its_parent() -> None:
    engine, _ = make()
    for i in range(6):
        await turn(engine, f"turn {i}")
    first = engine.current_record(KEY).session_id
    early = next(e for e in engine.events(KEY) if e.content == "turn 0")
    await engine.compact(KEY)
    assert early.id not in {e.id for e in engine.events(KEY)}
    rec = await engine.fork_session(KEY, early.id)
    assert rec.parent_session_id == first
    assert [e.content for e in engine.history(KEY)] == ["turn 0"]
    await engine.aclose()


async def test_sessions_json_of_an_earlier_version_still_loads() -> None:
    engine, _ = make()
    await turn(engine, "x")
    await engine.aclose()
    raw = json.loads(paths.sessions_index().read_text())
    for rec in raw["sessions"].values():
        rec.pop("fork_at", None)
    paths.sessions_index().write_text(json.dumps(raw))
    assert load_index().records[KEY].fork_at is None
