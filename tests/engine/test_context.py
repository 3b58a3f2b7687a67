"""Context assembly: ledger truthfulness, strategies, recall of compacted-away turns."""

from __future__ import annotations

from neotask_tui.engine.api import Engine
from neotask_tui.engine.context import count_messages
from neotask_tui.engine.tokens import count_text
from neotask_tui.providers.scripted import ScriptedProvider
from tests.engine.test_compaction import CONVERSATION, KEY, Clock, chat, make_settings, scripted


async def test_ledger_sums_equal_the_real_token_count_before_and_after_compaction() -> None:
    eng = Engine(make_settings(), provider=ScriptedProvider(), clock=Clock())
    try:
        await chat(eng)
        for phase in ("before", "after"):
            ctx = await eng.context(KEY, "What is the row limit?")
            led = ctx.ledger
            assert led.total == sum(led.sections.values()), phase
            assert led.total == count_messages(ctx.messages, count_text), phase
            assert led.total <= led.budget and led.fill == round(led.total / led.window, 4)
            assert led.sections["new_message"] > 0 and led.sections["recent"] > 0
            if phase == "before":
                scripted(eng).queue("## Goal\n- Fix the CSV importer [e:2]")
                await eng.compact(KEY)
        assert led.sections["summary"] > 0
        # The gauge is right immediately after the compaction: the summary is counted, old raw turns are not.
        assert not any("I want to fix the CSV importer" in m.content for m in ctx.messages if m.role == "user")
    finally:
        await eng.aclose()


async def test_compacted_turns_are_recalled_as_quoted_data_with_ids() -> None:
    eng = Engine(make_settings(), provider=ScriptedProvider(), clock=Clock())
    try:
        await chat(eng)
        scripted(eng).queue("## Goal\n- importer [e:2]")
        await eng.compact(KEY)
        ctx = await eng.context(KEY, "Which workspace and ticket was it?")
        recall = [m.content for m, s in zip(ctx.messages, ctx.section_of, strict=True) if s == "recall"]
        assert len(recall) == 1 and ctx.ledger.sections["recall"] > 0
        assert "<recalled-memory" in recall[0] and "quoted DATA" in recall[0]
        assert "[e:4 · 2025-03-01" in recall[0] and "acme-prod and the ticket is ABC-123" in recall[0]
        # The window strategy never adds summary or recall.
        eng.settings.context.strategy = "window"
        win = await eng.context(KEY, "Which workspace and ticket was it?")
        assert win.ledger.sections["summary"] == 0 and win.ledger.sections["recall"] == 0
        assert win.ledger.total == count_messages(win.messages, count_text)
    finally:
        await eng.aclose()


async def test_auto_compaction_instead_of_silently_dropping_history() -> None:
    s = make_settings(window=700)
    s.compaction.threshold = 1.0  # only the "would drop raw history" trigger can fire
    s.compaction.min_messages = 2
    eng = Engine(s, provider=ScriptedProvider(), clock=Clock())
    try:
        await chat(eng, [(f"{u} {'detail ' * 40}", r) for u, r in CONVERSATION[:5]])
        assert eng.current_record(KEY).compaction_count >= 1
        assert eng.events(KEY)[1].type == "compaction"
    finally:
        await eng.aclose()
