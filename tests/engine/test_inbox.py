"""The promotion inbox: consent before long-term memory, criteria, no-repeat, redaction."""

from __future__ import annotations

import json

import pytest

from neotask_tui import paths
from neotask_tui.engine.events import Notice
from neotask_tui.engine.facade import Engine
from neotask_tui.engine.state.inbox import CRITERIA, Candidate, Inbox, InboxError, normalize
from neotask_tui.providers.base import ToolCall
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import Clock
from tests.engine.state_support import KEY, make_settings, st

AWS = "AKIA" + "IOSFODNN7EXAMPLE"


async def say(eng: Engine, text: str) -> list[str]:
    prov = eng.provider
    assert isinstance(prov, ScriptedProvider)
    prov.queue("ok")
    return [e.text for e in [x async for x in eng.send(text, KEY)] if isinstance(e, Notice)]


def memory_md() -> str:
    p = paths.workspace_dir("main") / "MEMORY.md"
    return p.read_text(encoding="utf-8") if p.exists() else ""


async def test_always_statement_goes_to_inbox_not_session(engine: Engine) -> None:
    notices = await say(engine, "Always send me a short summary first.")
    assert st(engine).get(KEY).active == []
    [entry] = await st(engine).inbox_list("main")
    assert entry.n == 1 and entry.status == "pending" and entry.scope == "user"
    assert entry.text == "Always send me a short summary first"
    user_ids = [e.id for e in engine.events(KEY) if e.type == "message" and e.role == "user"]
    assert entry.origin == "classifier" and entry.source_ids == user_ids
    assert entry.failed == []  # every criterion is met
    assert set(entry.criteria) == set(CRITERIA)
    assert any("inbox #1" in n for n in notices)
    assert memory_md() == ""  # nothing is written without consent


async def test_accept_writes_memory_with_source_and_timestamp(engine: Engine) -> None:
    await say(engine, "Всегда присылай мне сначала краткое резюме.")
    e = await st(engine).inbox_accept("main", 1)
    assert e.status == "accepted" and e.decided_at and "directly" in (e.memory or "")
    md = memory_md()
    stamp = f"{engine.now().astimezone():%Y-%m-%d %H:%M}"
    entry = f"- {stamp} [inbox scope=user] Всегда присылай мне сначала краткое резюме\n"
    assert md == f"# Memory\n\n## Remembered\n\n{entry}"
    # Provenance stays with the inbox entry: source events, session, decision time.
    [kept] = await st(engine).inbox_list("main", status="accepted")
    assert kept.source_ids and kept.session_id == engine.current_record(KEY).session_id
    assert kept.decided_at == engine.now().isoformat()
    with pytest.raises(InboxError, match="already accepted"):
        await st(engine).inbox_accept("main", 1)
    # Saying it again proposes nothing: it is already in memory.
    await say(engine, "Всегда присылай мне сначала краткое резюме!")
    assert await st(engine).inbox_list("main") == []


async def test_edit_then_accept_with_scope(engine: Engine) -> None:
    await say(engine, "My working language is Russian.")
    e = await st(engine).inbox_edit("main", 1, "The user's working language is Russian.")
    assert e.edited and e.text == "The user's working language is Russian."
    with pytest.raises(InboxError, match="not long-term"):
        await st(engine).inbox_accept("main", 1, scope="session")
    e = await st(engine).inbox_accept("main", 1, scope="org")
    assert e.scope == "org"
    assert "[inbox scope=org] The user's working language is Russian." in memory_md()


async def test_reject_is_remembered_and_never_proposed_again(engine: Engine) -> None:
    await say(engine, "Always answer in French.")
    await st(engine).inbox_reject("main", 1)
    notices = await say(engine, "always answer in french!")
    assert not any("inbox" in n for n in notices)
    assert await st(engine).inbox_list("main") == []
    entries = await st(engine).inbox_list("main", status=None)
    assert [(e.n, e.status) for e in entries] == [(1, "rejected")]
    with pytest.raises(InboxError, match="already rejected"):
        await st(engine).inbox_accept("main", 1)
    # Also from the model and from compaction's flush.
    res = await st(engine).handle_tool(KEY, ToolCall("c", "propose_memory",
                                                     {"text": "Always answer in French", "scope": "user"}))
    assert res is not None and "previously rejected" in res.text
    data = json.loads((paths.workspace_dir("main") / "inbox.json").read_text())
    assert data["rejected"] == [normalize("Always answer in French")]


async def test_secrets_are_redacted_and_never_accepted(engine: Engine) -> None:
    await say(engine, f"Always deploy with the key {AWS}.")
    [e] = await st(engine).inbox_list("main")
    assert AWS not in e.text and "[REDACTED:aws_access_key]" in e.text
    assert e.redacted and e.failed == ["allowed_to_store"]
    raw = (paths.workspace_dir("main") / "inbox.json").read_text()
    assert AWS not in raw
    with pytest.raises(InboxError, match="credential"):
        await st(engine).inbox_accept("main", 1)
    assert memory_md() == ""
    with pytest.raises(InboxError):
        await st(engine).inbox_edit("main", 1, "   ")
    await st(engine).inbox_edit("main", 1, "Always deploy with the key from the vault.")
    await st(engine).inbox_accept("main", 1)
    assert "from the vault" in memory_md() and AWS not in memory_md()


async def test_project_rule_becomes_project_candidate(engine: Engine) -> None:
    await engine.set_session_config(KEY, project="acme")
    await say(engine, "For this project don't use external dependencies.")
    [c] = [e for e in st(engine).get(KEY).active if e.field == "constraints"]
    assert c.scope == "project" and c.scope_ref == "acme"
    [e] = await st(engine).inbox_list("main")
    assert e.scope == "project" and e.scope_ref == "acme"
    await st(engine).inbox_accept("main", e.n)
    assert "[inbox scope=project:acme] For this project don't use external dependencies" in memory_md()


async def test_pending_duplicates_merge_sources(engine: Engine) -> None:
    inbox = Inbox("main")
    base = {"scope": "user", "reason": "r", "created_at": "2026-01-01T00:00:00+00:00", "explicit": True}
    assert inbox.add(Candidate(text="Always use tabs.", source_ids=[3], **base)) is not None  # type: ignore[arg-type]
    assert inbox.add(Candidate(text="always use tabs", source_ids=[9], **base)) is None  # type: ignore[arg-type]
    [e] = inbox.entries()
    assert e.source_ids == [3, 9]
    with pytest.raises(InboxError, match="no inbox entry #7"):
        inbox.get(7)


async def test_a_lone_surrogate_is_stored_as_a_replacement_character() -> None:
    # Red team 31, finding 9: an edit (or a model's proposal, whose JSON may escape one) holding a
    # lone surrogate failed to save with a UnicodeEncodeError; it is U+FFFD, as in a message.
    inbox = Inbox("main")
    e = inbox.add(Candidate(text="User lives in Ber\udcfflin", created_at="2026-01-01T00:00:00+00:00",
                            explicit=True))
    assert e is not None and e.text == "User lives in Ber\ufffdlin"
    assert inbox.edit(e.n, "User lives in \udced\udca0\udc80 Paris").text == "User lives in \ufffd\ufffd\ufffd Paris"
    assert [x.text for x in Inbox("main").entries()] == ["User lives in \ufffd\ufffd\ufffd Paris"]


async def test_criteria_are_checked_one_by_one() -> None:
    inbox = Inbox("main")
    e = inbox.add(Candidate(text="Let's pick the blue one today", scope="session", origin="model",
                            created_at=""))
    assert e is not None
    assert set(e.failed) == {"explicit_permanence", "future_useful", "clear_scope", "no_temporary_marker",
                             "has_source"}
    assert e.criteria["no_temporary_marker"]["why"] == "temporary marker: today"


async def test_model_can_propose_but_not_save(engine: Engine) -> None:
    await say(engine, "I like concise code reviews.")
    res = await st(engine).handle_tool(KEY, ToolCall("c", "propose_memory", {
        "text": "User likes concise code reviews", "scope": "user", "reason": "stated preference"}))
    assert res is not None and "inbox #1" in res.text and not res.is_error
    [e] = await st(engine).inbox_list("main")
    assert e.origin == "model" and e.source_ids  # the user message it came from
    assert memory_md() == ""
    call = ToolCall("c", "propose_memory", {"text": "x y", "scope": "session"})
    bad = await st(engine).handle_tool(KEY, call)
    assert bad is not None and bad.text.startswith("error:") and bad.is_error


async def test_compaction_flush_proposes_durable_facts(engine: Engine) -> None:
    # Messages written without the classifier hook (e.g. imported history) are caught by the flush.
    prov = engine.provider
    assert isinstance(prov, ScriptedProvider)
    await engine.append(KEY, "message", {"role": "user", "content": "From now on use type hints everywhere."})
    await engine.append(KEY, "message", {"role": "assistant", "content": "Sure."})
    for i in range(6):
        prov.queue(f"reply {i}")
        [x async for x in engine.send(f"question {i} about the parser", KEY)]
    prov.queue("Summary.")
    await engine.compact(KEY)
    entries = await st(engine).inbox_list("main")
    assert [(e.text, e.origin) for e in entries] == [("From now on use type hints everywhere", "compaction")]
    assert entries[0].reason.startswith("memory flush:")


async def test_accept_goes_through_the_memory_service_and_is_searchable(clock: Clock) -> None:
    from neotask_tui.memory.service import MemoryService

    settings = make_settings()
    settings.memory.enabled = True
    mem = MemoryService(settings.memory)
    eng = Engine(settings, provider=ScriptedProvider(), clock=clock, memory=mem)
    try:
        await say(eng, "Always use PostgreSQL for new services.")
        e = await st(eng).inbox_accept("main", 1)
        assert e.memory is not None and e.memory.startswith("memory service: MEMORY.md:")
        assert "[inbox scope=user] Always use PostgreSQL for new services" in memory_md()
        hits = mem.search("which database for new services?", agent_id="main", k=3)
        assert any("PostgreSQL" in h.text for h in hits)
        assert mem.search("PostgreSQL", agent_id="other", k=3) == []
    finally:
        await eng.aclose()


async def test_accept_after_an_interrupted_accept_writes_no_duplicate(engine: Engine) -> None:
    """A crash between the memory write and the inbox update left the text in MEMORY.md and the
    entry pending: accepting again finishes the accept without a second copy."""
    await say(engine, "Always run the linter before committing.")
    md = paths.workspace_dir("main") / "MEMORY.md"
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text("# Memory\n\n## Remembered\n\n- 2026-01-01 10:00 [inbox scope=user] Always run the linter "
                  "before committing\n", encoding="utf-8")
    e = await st(engine).inbox_accept("main", 1)
    assert e.status == "accepted"
    assert memory_md().count("Always run the linter before committing") == 1
    assert await st(engine).inbox_list("main") == []


async def test_a_cancelled_accept_still_records_the_decision(clock: Clock) -> None:
    """Closing the inbox screen cancels its worker mid-accept: the memory write and the entry's
    status change still happen together, and accepting again neither succeeds nor writes twice."""
    import asyncio

    from neotask_tui.memory.service import MemoryService

    settings = make_settings()
    settings.memory.enabled = True
    mem = MemoryService(settings.memory)
    eng = Engine(settings, provider=ScriptedProvider(), clock=clock, memory=mem)
    try:
        await say(eng, "Always use PostgreSQL for new services.")
        task = asyncio.ensure_future(st(eng).inbox_accept("main", 1))
        while "PostgreSQL" not in memory_md() and not task.done():
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(InboxError, match="already accepted"):
            await st(eng).inbox_accept("main", 1)
        assert memory_md().count("Always use PostgreSQL for new services") == 1
        assert [x.status for x in await st(eng).inbox_list("main", status=None)] == ["accepted"]
    finally:
        await eng.aclose()


async def test_closing_the_engine_mid_accept_lets_the_decision_finish_first(clock: Clock) -> None:
    """Red team 19: Ctrl+Q a second after accepting left MEMORY.md written and the entry pending:
    the app closed the engine (and its data-dir lock) under the accept's worker thread."""
    import asyncio

    from neotask_tui.memory.service import MemoryService

    settings = make_settings()
    settings.memory.enabled = True
    eng = Engine(settings, provider=ScriptedProvider(), clock=clock, memory=MemoryService(settings.memory))
    await say(eng, "Always use PostgreSQL for new services.")
    task = asyncio.ensure_future(st(eng).inbox_accept("main", 1))
    while "PostgreSQL" not in memory_md() and not task.done():
        await asyncio.sleep(0.005)
    task.cancel()  # the screen closed with the app; the thread goes on
    await eng.aclose()
    eng = Engine(settings, provider=ScriptedProvider(), clock=clock)
    try:
        assert memory_md().count("Always use PostgreSQL for new services") == 1
        assert [x.status for x in await st(eng).inbox_list("main", status=None)] == ["accepted"]
    finally:
        await eng.aclose()


@pytest.mark.parametrize("text, goal", [
    ("My goal is to ship the tz fix.", "ship the tz fix"),
    ("Моя цель — выпустить исправление часовых поясов.", "выпустить исправление часовых поясов"),
    ("Our main goal: fix the CSV importer. Do not touch the billing module.", "fix the CSV importer"),
])
async def test_a_stated_goal_is_the_sessions_goal_not_a_fact_for_the_inbox(engine: Engine, text: str,
                                                                            goal: str) -> None:
    """"My goal is …" sets the session's current goal; it was read as "my <thing> is …", a lasting
    fact about the user, and proposed for long-term memory."""
    notices = await say(engine, text)
    active = {e.field: e.value for e in st(engine).get(KEY).active}
    assert active.get("current_goal") == goal
    assert await st(engine).inbox_list("main") == []
    assert any(n.startswith("Goal: ") for n in notices), notices
    await say(engine, "The goal is to migrate billing to Postgres 15.")  # the latest stated goal wins
    assert {e.field: e.value for e in st(engine).get(KEY).active}["current_goal"] == "migrate billing to Postgres 15"


@pytest.mark.parametrize("text", ["The goal of this function is to parse dates.", "My goalkeeper is Bob.",
                                  "Цели у нас нет.", "What is the goal?"])
async def test_sentences_about_goals_set_no_goal(engine: Engine, text: str) -> None:
    await say(engine, text)
    assert "current_goal" not in {e.field for e in st(engine).get(KEY).active}
