"""Auto-recall hygiene (issue #18): three kinds of recall, labelled; the assistant's own past words never
come back as facts; consented memory first; a relevance floor; one item per text; no tokens for nothing.

Real engine, real fastembed model and LanceDB on tmp dirs, the scripted provider for replies.
"""

from __future__ import annotations

import json
from zoneinfo import ZoneInfo

import pytest

from neotask_tui import paths
from neotask_tui.config import ConfigError, Settings, load_settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.context.assembly import AssembledContext, RecallItem
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import scripted

KEY = "agent:main:tui:default"
HALLUCINATION = "The staging host and port is db-old.example.com:5432, last changed on 2019-03-28."
FACT = "The staging database host is stage-db.internal on port 6432."


def _engine(s: Settings | None = None) -> Engine:
    s = s or Settings()
    s.session.daily_reset_hour = -1
    return Engine(s, provider=ScriptedProvider(), tz=ZoneInfo("UTC"))


async def _say(engine: Engine, text: str, reply: str = "ok") -> list[ev.EngineEvent]:
    scripted(engine).queue(reply)
    return [e async for e in engine.send(text, KEY)]


def _memory(*lines: str) -> None:
    ws = paths.workspace_dir("main")
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n" + "".join(f"- {ln}\n" for ln in lines), encoding="utf-8")


def _recall_section(ctx: AssembledContext) -> str:
    return "\n".join(m.content for m, sec in zip(ctx.messages, ctx.section_of, strict=True) if sec == "recall")


async def _history_with_hallucination(engine: Engine) -> None:
    await _say(engine, "What's the staging host and port again?", HALLUCINATION)
    await engine.new_session(KEY)


async def test_assistant_replies_of_other_sessions_are_not_recalled_by_default() -> None:
    engine = _engine()
    try:
        await _history_with_hallucination(engine)
        out = await _say(engine, "What is the staging host and port?")
        items = [it for e in out if isinstance(e, ev.Recalled) for it in e.items]
        assert items, "the user's own question from the earlier session is recalled"
        assert not any("db-old" in it.text for it in items)
        mine = next(it for it in items if "staging host" in it.text)
        assert (mine.kind, mine.speaker) == ("history", "user")
        assert mine.label.startswith("history · user, ")
        recall = await engine.recall(KEY, "What is the staging host and port?")
        ctx = await engine.build(KEY, "What is the staging host and port?", recall=recall)
        text = _recall_section(ctx)
        assert '<recalled-memory kind="history"' in text and "user said on " in text
        assert "db-old" not in text
    finally:
        await engine.aclose()


async def test_recall_history_all_quotes_the_assistant_as_an_earlier_reply_not_a_fact() -> None:
    s = Settings()
    s.memory.recall_history = "all"
    engine = _engine(s)
    try:
        await _history_with_hallucination(engine)
        recall = await engine.recall(KEY, "What is the staging host and port?")
        said = [r for r in recall if "db-old" in r.text]
        assert said and all((r.kind, r.speaker) == ("history", "assistant") for r in said)
        ctx = await engine.build(KEY, "What is the staging host and port?", recall=recall)
        line = next(ln for ln in _recall_section(ctx).splitlines() if "db-old" in ln)
        assert line.startswith("the assistant replied on ") and "not a verified fact" in line
    finally:
        await engine.aclose()


async def test_recall_history_off_recalls_memory_but_no_other_session() -> None:
    s = Settings()
    s.memory.recall_history = "off"
    _memory(FACT)
    engine = _engine(s)
    try:
        await _history_with_hallucination(engine)
        recall = await engine.recall(KEY, "What is the staging host and port?")
        assert recall and all(r.kind == "memory" for r in recall)
        assert any("stage-db.internal" in r.text for r in recall)
    finally:
        await engine.aclose()


async def test_consented_memory_comes_before_history_that_matches_better() -> None:
    _memory("Staging: stage-db.internal, 6432.")
    s = Settings()
    s.memory.recall_history = "all"
    engine = _engine(s)
    try:
        # The earlier session's words match the question almost word for word; the memory less so.
        await _say(engine, "What is the staging host and port?", HALLUCINATION)
        await engine.new_session(KEY)
        recall = await engine.recall(KEY, "What is the staging host and port?")
        kinds = [r.kind for r in recall]
        assert "memory" in kinds and "history" in kinds
        assert kinds.index("memory") < kinds.index("history")
        hist = [r for r in recall if r.kind == "history"]
        mem = [r for r in recall if r.kind == "memory"]
        assert max(r.score for r in hist) > min(r.score for r in mem)  # history ranked higher, memory wins
    finally:
        await engine.aclose()


async def test_a_message_about_nothing_recalled_spends_no_tokens_on_recall() -> None:
    _memory(FACT, "We deploy on Thursdays.")
    engine = _engine()
    try:
        await _history_with_hallucination(engine)
        for text in ("thanks!", "Write a haiku about autumn leaves."):
            out = await _say(engine, text)
            assert not [e for e in out if isinstance(e, ev.Recalled)], text
            built = [e for e in out if isinstance(e, ev.ContextBuilt)]
            assert built and built[-1].ledger.sections["recall"] == 0, text
        # ...while a question about the fact still recalls it
        recall = await engine.recall(KEY, "Which host is staging on?")
        assert any("stage-db.internal" in r.text for r in recall)
    finally:
        await engine.aclose()


async def test_no_recalled_item_is_below_the_relevance_floor() -> None:
    _memory("Max is our new dog; he sleeps on the couch.")
    engine = _engine()
    try:
        await _say(engine, "I went hiking in the Alps last summer.")
        await engine.new_session(KEY)
        assert await engine.recall(KEY, "What is the capital of Australia?") == []
        got = await engine.recall(KEY, "tell me about my pets")
        assert [r.kind for r in got] == ["memory"] and "Max" in got[0].text
    finally:
        await engine.aclose()


async def test_the_same_text_in_memory_and_history_is_one_item() -> None:
    _memory(FACT)
    engine = _engine()
    try:
        await _say(engine, FACT)  # said in an earlier session, and saved to MEMORY.md
        await engine.new_session(KEY)
        recall = await engine.recall(KEY, "Which host and port is the staging database on?")
        holding = [r for r in recall if "stage-db.internal" in r.text]
        assert len(holding) == 1 and holding[0].kind == "memory"
    finally:
        await engine.aclose()


@pytest.mark.parametrize("request_", ["Remember: ", "Please remember that ", "Запомни, что "])
async def test_a_remember_request_and_the_memory_made_from_it_are_one_item(request_: str) -> None:
    # "Remember: X" proposes X (not the request); once accepted, the earlier message and the memory
    # say the same thing: one item, the memory.
    engine = _engine()
    try:
        await _say(engine, request_ + FACT)
        entry = await engine.state.inbox_accept("main", 1)
        assert entry.text == FACT.rstrip(".")
        await engine.new_session(KEY)
        recall = await engine.recall(KEY, "Which host and port is the staging database on?")
        holding = [r for r in recall if "stage-db.internal" in r.text]
        assert len(holding) == 1 and holding[0].kind == "memory", [(r.kind, r.text) for r in recall]
    finally:
        await engine.aclose()


async def test_a_turn_the_carried_state_already_says_is_not_recalled_again() -> None:
    # A rule stated in a message becomes session state; /new carries it. The message itself, now
    # history, said the same thing: the context holds it once, as state.
    rule = "Do not use Redis anywhere in the billing migration."
    engine = _engine()
    try:
        await _say(engine, rule)
        await _say(engine, "The billing cutover window is Sunday 02:00 UTC.")
        await engine.new_session(KEY)
        assert rule in engine.state.block(KEY)
        q = "Can we use Redis as a cache in the billing migration, and when is the cutover?"
        recall = await engine.recall(KEY, q)
        assert not any("Redis" in r.text for r in recall), [(r.kind, r.text) for r in recall]
        assert any("Sunday 02:00" in r.text for r in recall)  # what the state does not say still comes back
        ctx = await engine.build(KEY, q, recall=recall)
        blob = "\n".join(m.content for m in ctx.messages)
        assert blob.count("Do not use Redis anywhere") == 1
        # /reset clears the state: the turn is the only place that says it, so it is recalled again.
        await engine.reset_session(KEY)
        assert engine.state.block(KEY) == ""
        assert any("Redis" in r.text for r in await engine.recall(KEY, q))
    finally:
        await engine.aclose()


async def test_a_compacted_turn_the_state_already_says_is_not_recalled_again() -> None:
    rule = "Do not use Redis anywhere in the billing migration."
    engine = _engine()
    try:
        await _say(engine, rule)
        await _say(engine, "The billing cutover window is Sunday 02:00 UTC.")
        for i in range(3):
            await _say(engine, f"Unrelated note number {i} about the weather and lunch plans.")
        scripted(engine).queue("## Goal\n- keep notes [e:2]")
        await engine.compact(KEY)
        assert rule in engine.state.block(KEY)
        q = "Can we use Redis as a cache in the billing migration, and when is the cutover?"
        ctx = await engine.build(KEY, q, recall=await engine.recall(KEY, q))
        text = _recall_section(ctx)
        assert "Sunday 02:00" in text and "Redis" not in text
    finally:
        await engine.aclose()


async def test_compacted_turns_are_this_conversation_and_other_sessions_history() -> None:
    engine = _engine()
    try:
        await _say(engine, "The nightly backup of the billing database runs on the ops-bastion host.")
        await engine.new_session(KEY)  # that session is history now
        await _say(engine, "The billing backup copies go to the cold-vault bucket in eu-west.")
        for i in range(3):
            await _say(engine, f"Unrelated note number {i} about the weather and lunch plans.")
        scripted(engine).queue("## Goal\n- keep notes [e:2]")
        await engine.compact(KEY)
        await engine.recall(KEY, "warm-up")  # loads the memory service and indexes the archives
        q = "Where do the billing backup copies go, and which host runs the billing backup?"
        recall = await engine.recall(KEY, q)
        ctx = await engine.build(KEY, q, recall=recall)
        text = _recall_section(ctx)
        conv = text[text.index('<recalled-memory kind="this conversation"'):]
        assert "cold-vault" in conv[:conv.index("</recalled-memory>")]
        hist = text[text.index('<recalled-memory kind="history"'):]
        assert "ops-bastion" in hist[:hist.index("</recalled-memory>")]
        # After the compaction, a message about nothing said before recalls no old turns either.
        ctx = await engine.build(KEY, "thanks!", recall=await engine.recall(KEY, "thanks!"))
        assert ctx.ledger.sections["recall"] == 0
    finally:
        await engine.aclose()


async def test_recall_command_labels_each_hit_with_its_kind(capsys: pytest.CaptureFixture[str]) -> None:
    from neotask_tui.commands import dispatch

    _memory(FACT)
    engine = _engine()
    try:
        await _history_with_hallucination(engine)
        await engine.recall(KEY, "warm-up")  # indexes the archived session
        r = await dispatch(engine, KEY, "/recall staging host port")
        assert not r.error, r.text
        # one block per hit: a header line "**score** label `location` · scope", then the passage
        blocks = ["**" + b for b in ("\n" + r.text).split("\n**") if b.strip()]
        heads = [b.splitlines()[0] for b in blocks]
        assert any("memory `MEMORY.md" in h for h in heads)
        assert any("history · assistant, " in b.splitlines()[0] and "db-old" in b for b in blocks)
        assert any("history · user, " in h for h in heads)
        # the model's own memory_search tool labels them too
        from neotask_tui.memory.tools import handle_tool

        assert engine.memory is not None
        def tool(name: str, args: dict[str, object], history: str) -> str:
            assert engine.memory is not None
            return handle_tool(engine.memory, "main", name, args, history=history) or ""

        # As auto-recall: consented memory first; the assistant's old replies only with "all" (labelled);
        # nothing from other sessions with "off" (the red team got the hallucination first, at 0.88).
        found = json.loads(tool("memory_search", {"query": "staging host port"}, "user"))
        assert found[0]["kind"] == "memory" and "speaker" not in found[0]
        assert not any("db-old" in h["text"] for h in found)
        assert any((h["kind"], h.get("speaker")) == ("history", "user") for h in found)
        found = json.loads(tool("memory_search", {"query": "staging host port"}, "all"))
        said = next(h for h in found if "db-old" in h["text"])
        assert (said["kind"], said["speaker"]) == ("history", "assistant") and said["said_on"]
        assert found[0]["kind"] == "memory"
        found = json.loads(tool("memory_search", {"query": "staging host port"}, "off"))
        assert found and {h["kind"] for h in found} == {"memory"}
        sid = next(a.session_id for a in engine.store.list_archived())
        got = tool("memory_get", {"path": f"transcripts/{sid}"}, "user")
        assert got.startswith("(a transcript of an earlier session") and "db-old" not in got and "staging" in got
        assert "db-old" in tool("memory_get", {"path": f"transcripts/{sid}"}, "all")
        with pytest.raises(ValueError, match="recall_history is off"):
            tool("memory_get", {"path": f"transcripts/{sid}"}, "off")
    finally:
        await engine.aclose()
    # and `neotask memory search`
    import argparse

    from neotask_tui.cli.memory_cmd import cmd_search

    for as_json in (False, True):
        cmd_search(argparse.Namespace(query="staging host port", k=8, source=None, scope=None, agent="main",
                                      json=as_json, session=None))
        out = capsys.readouterr().out
        if as_json:
            hits = json.loads(out)
            assert {(h["kind"], h["speaker"]) for h in hits} >= {("memory", ""), ("history", "assistant")}
        else:
            assert ". memory · MEMORY.md" in out and ". history · assistant, " in out


def test_fence_names_each_kind_and_says_history_is_a_record() -> None:
    from neotask_tui.engine.context.assembly import fence_recall

    text = fence_recall([
        RecallItem(id="m1", text=FACT, source="MEMORY.md:3-3", scope="agent:main"),
        RecallItem(id="h1", text=HALLUCINATION, source="transcripts/s1#e:3", scope="agent:main", kind="history",
                   speaker="assistant", said_on="2026-01-05 09:01"),
    ])
    assert '<recalled-memory kind="memory"' in text and '<recalled-memory kind="history"' in text
    assert text.index('kind="memory"') < text.index('<recalled-memory')  # the header says what each kind is
    assert "the assistant replied on 2026-01-05 09:01 (an earlier reply, not a verified fact): " in text
    assert 'kind="this conversation"' not in text  # only the kinds present are explained


def test_the_conversation_fence_says_an_assistant_line_may_have_been_wrong() -> None:
    """Red team 18 (side observation): history said an assistant line is an earlier reply, not a
    verified fact; the "this conversation" fence quoted the assistant's compacted replies without it."""
    from neotask_tui.engine.context.assembly import fence_recall

    text = fence_recall([RecallItem(id="archive:3-4", text=f"[e:3 · 2026-01-05 Mon 09:01] assistant: {HALLUCINATION}",
                                    source="archived transcripts of this session", scope="session",
                                    kind="conversation")])
    head = text[:text.index("<recalled-memory")]
    assert 'kind="this conversation"' in head
    assert "(an assistant line may have been wrong)" in head


def test_recall_history_setting_is_validated() -> None:
    assert load_settings(env={"NEOTASK_MEMORY_RECALL_HISTORY": "all"}).memory.recall_history == "all"
    assert load_settings(env={}).memory.recall_history == "user"
    with pytest.raises(ConfigError, match="recall_history"):
        load_settings(env={"NEOTASK_MEMORY_RECALL_HISTORY": "sometimes"})


GROUP_CHAT = [
    ("Jon: Lost my job at the bank this month, so I'm starting my own dance studio.",
     "Gina: Sorry about the job! I lost mine at Door Dash too, so I'm opening an online clothing store."),
    ("Jon: Hey Gina! Thanks for asking. I'm on the hunt for the ideal spot for my dance studio and it's been "
     "quite a journey! I've been looking at different places and picturing how the studio would look. "
     "Finding the right location matters so much.", "Gina: Sounds exhausting but worth it."),
    ("Gina: My store's ad campaign went live yesterday, fingers crossed.",
     "Jon: Fingers crossed! Marketing is half the battle."),
    ("Jon: Rehearsals are brutal this week, my knees hurt.", "Gina: Take it easy, ice them tonight."),
    ("Gina: I found a supplier for organic cotton hoodies.", "Jon: Nice, those sell well in winter."),
    ("Jon: My nephew asked me to teach him salsa.", "Gina: Cute! Teach him the basic step first."),
    ("Gina: The fashion fair in Milan was amazing, so many designers.", "Jon: Milan sounds wonderful."),
    ("Jon: I just got back from Paris, the dance scene there is incredible.", "Gina: Paris! Jealous."),
    *[(f"Jon: Rehearsal {i} went fine, the new choreography for number {i} is coming along.",
       f"Gina: Good luck with piece {i}!") for i in range(14)],
]


async def test_a_turn_the_search_sets_apart_by_what_it_says_is_recalled_not_every_line_of_its_sender() -> None:
    """A long turn that answers in other words ("looking at different places" for "which cities")
    clears no floor alone: its cosine is diluted and it shares no word with the message. Once the
    message is about something said earlier (the Paris line clears the floor), the turn whose content
    score in the memory search stands out is recalled too. The sender the message names lifts all of
    his lines in that search alike: that is no reason to quote his rehearsal notes."""
    engine = _engine()
    try:
        for user, reply in GROUP_CHAT:
            await _say(engine, user, reply)
        for i in range(3):
            await _say(engine, f"Unrelated note number {i} about the weather and lunch plans.")
        scripted(engine).queue("## Goal\n- keep notes [e:2]")
        await engine.compact(KEY)
        await engine.recall(KEY, "warm-up")  # loads the memory service and indexes the archives
        q = "Which cities has Jon visited?"
        ctx = await engine.build(KEY, q, recall=await engine.recall(KEY, q))
        text = _recall_section(ctx)
        assert "got back from Paris" in text
        assert "the ideal spot for my dance studio" in text
        assert "Rehearsal 3 went fine" not in text
    finally:
        await engine.aclose()


async def test_recall_command_right_after_new_finds_the_session_just_archived() -> None:
    """A newcomer's walk: "Never drop the prod-ledger table.", Ctrl+N, then `/recall prod-ledger table`
    answered "nothing found": the archived session was indexed only by the next turn's recall. `/recall`
    now indexes the archived sessions first, as auto-recall and `neotask memory search` do."""
    from neotask_tui.commands import dispatch

    engine = _engine()
    try:
        await _say(engine, "Never drop the prod-ledger table.")
        await engine.new_session(KEY)
        r = await dispatch(engine, KEY, "/recall prod-ledger table")
        assert not r.error, r.text
        assert "prod-ledger" in r.text and "history · user, " in r.text
    finally:
        await engine.aclose()
