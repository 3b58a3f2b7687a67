"""README, "What it remembers": turns compacted out of the window are recalled ("this conversation").

The turn whose call compacts the history recalled with the index as it stood before the compaction:
the turns just compacted away (in the context a moment before) were not indexed yet and ranked behind
every older hit, so the one call that needed them most could not quote them. The turn now recalls
again once it has compacted. Real engine, fastembed and LanceDB on a tmp dir; scripted replies.
"""

from __future__ import annotations

from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.compaction.inputs import split_recent
from neotask_tui.engine.context.budget import keep_recent
from tests.doubles import scripted
from tests.faults.recall_support import KEY, _engine, _memory_on, _say, neotask_home

__all__ = ["_memory_on", "neotask_home"]  # autouse fixtures, used by pytest through this module's namespace

FACT = "The staging database listens on port 6543 behind pgbouncer on the bastion host."
QUESTION = "Which port does the staging database listen on?"
CHATTER = [f"Note {i}: the weekly sync moved, the coffee machine is fixed again, and lunch was ramen number {i}."
           for i in range(12)] + [f"Lunch {i} was ramen." for i in range(60)]
"""Notes for a first compaction, then lines shorter than the question (a line that compacts the fact
away before the question does would end the test)."""


async def test_the_turn_that_compacts_recalls_what_it_just_compacted() -> None:
    s = Settings()
    s.context.window_tokens = 1700
    engine = _engine(s)
    engine.settings.context.window_tokens += engine.tool_tokens()
    try:
        # A first compaction, indexed: its chatter fills the memory service's ranking.
        for text in CHATTER[:12]:
            await _say(engine, text)
        scripted(engine).queue("## Goal\n- keep notes [e:2]")
        await engine.compact(KEY)
        await engine.recall(KEY, "warm-up")  # indexes the archived transcript
        await _say(engine, FACT)
        fact_id = engine.events(KEY)[-2].id
        asked = False
        for text in CHATTER[12:]:
            ctx = await engine.build(KEY, QUESTION, recall=await engine.recall(KEY, QUESTION))
            events = engine.events(KEY)
            split = split_recent(events, engine.count_event, keep_recent(engine.settings, engine.message_window()))
            if engine.compactor.should_auto(KEY, ctx.ledger) and fact_id in {e.id for e in split.head}:
                asked = True  # the question's own turn compacts the fact out of the window
                break
            await _say(engine, text)
        assert asked, "the history never compacted the fact in the question's turn"
        before = engine.current_record(KEY).compaction_count
        told = await _say(engine, QUESTION, reply="6543")
        kinds = [type(e).__name__ for e in told]
        assert engine.current_record(KEY).compaction_count == before + 1, kinds
        after = told[[isinstance(e, ev.Compacted) for e in told].index(True) + 1:]
        receipts = [r for e in after if isinstance(e, ev.Recalled) for r in e.items]
        assert any("6543" in r.text for r in receipts), kinds  # the receipts say what the call quoted
        sent = scripted(engine).calls[-1]
        assert any("6543" in m.content for m in sent if m.role == "system"), "the call did not quote the fact"
    finally:
        await engine.aclose()


async def test_a_retry_after_a_reported_overflow_recalls_what_it_compacted() -> None:
    # README: "A context overflow the provider reports is compacted and retried once": the retried call
    # recalls again too.
    s = Settings()
    s.compaction.enabled = False  # only the provider's overflow compacts here
    engine = _engine(s)
    try:
        await _say(engine, FACT)
        for text in CHATTER[12:40]:
            await _say(engine, text)
        scripted(engine).queue({"error": {"kind": "context_overflow", "message": "too long", "retryable": False}})
        told = await _say(engine, QUESTION, reply="6543")
        kinds = [type(e).__name__ for e in told]
        assert any(isinstance(e, ev.Compacted) for e in told), kinds
        after = told[[isinstance(e, ev.Compacted) for e in told].index(True) + 1:]
        receipts = [r for e in after if isinstance(e, ev.Recalled) for r in e.items]
        assert any("6543" in r.text for r in receipts), kinds
        sent = scripted(engine).calls[-1]
        assert any("6543" in m.content for m in sent if m.role == "system"), "the retry did not quote the fact"
        assert not any("6543" in m.content for m in sent if m.role == "user")  # compacted out of the window
    finally:
        await engine.aclose()
