"""Context assembly: ledger truthfulness, strategies, recall of compacted-away turns."""

from __future__ import annotations

from neotask_tui.engine.recall.archive import format_turns, select_turns, turn_cost
from neotask_tui.storage.events import Event
from neotask_tui.text.tokens import count_messages, count_text
from tests.doubles import scripted
from tests.engine.compaction_support import CONVERSATION, KEY, chat, make_settings, open_engine


async def test_ledger_sums_equal_the_real_token_count_before_and_after_compaction() -> None:
    eng = open_engine()
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
    eng = open_engine()
    try:
        await chat(eng)
        scripted(eng).queue("## Goal\n- importer [e:2]")
        await eng.compact(KEY)
        ctx = await eng.context(KEY, "Which workspace and ticket was it?")
        recall = [m.content for m, s in zip(ctx.messages, ctx.section_of, strict=True) if s == "recall"]
        assert len(recall) == 1 and ctx.ledger.sections["recall"] > 0
        assert "<recalled-memory" in recall[0] and "quoted DATA" in recall[0]
        # The second user message is e:5: e:3 is the state record of the first one's "Do not use Redis.".
        assert "[e:5 · 2025-03-01" in recall[0] and "acme-prod and the ticket is ABC-123" in recall[0]
        # Recall takes exactly the room it is given: the live window loses nothing to it.
        assert ctx.ledger.dropped_event_ids == [] and ctx.ledger.total <= ctx.ledger.budget
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
    eng = open_engine(s)
    try:
        await chat(eng, [(f"{u} {'detail ' * 40}", r) for u, r in CONVERSATION[:5]])
        assert eng.current_record(KEY).compaction_count >= 1
        assert eng.events(KEY)[1].type == "compaction"
    finally:
        await eng.aclose()


def _turn(i: int, day: int, text: str) -> Event:
    return Event("message", i, i - 1, f"2025-03-{day:02d}T10:{i % 60:02d}:00+00:00",
                 {"role": "user" if i % 2 else "assistant", "content": text})


def test_a_recalled_turn_hours_after_the_time_shown_carries_its_own_time() -> None:
    """Red team 18: lines after a day's first were read at its time even when written hours later."""
    def at(i: int, hhmm: str) -> Event:
        return Event("message", i, i - 1, f"2025-03-01T{hhmm}:00+00:00",
                     {"role": "user" if i % 2 else "assistant", "content": f"turn {i}"})

    lines = format_turns([at(1, "09:00"), at(2, "09:05"), at(3, "09:59"), at(4, "17:30"), at(5, "17:31"),
                          at(9, "18:29"), at(10, "18:30")])
    assert lines == ["[e:1 · 2025-03-01 Sat 09:00] user: turn 1",
                     "assistant: turn 2",  # within the hour: read at 09:00, close enough
                     "user: turn 3",
                     "[e:4 · 17:30] assistant: turn 4",  # hours later, consecutive or not: its own time
                     "user: turn 5",
                     "[e:9] user: turn 9",
                     "[e:10 · 18:30] assistant: turn 10"]  # an hour after the last time shown


def test_recalled_consecutive_turns_carry_no_id_and_the_saving_is_refilled() -> None:
    turns = [_turn(i, 1 if i < 20 else 2, f"turn number {i} talks about topic {i} in some detail")
             for i in range(1, 40)]
    lines = format_turns([turns[0], turns[1], turns[2], turns[5], turns[18], turns[19]])
    assert lines[0].startswith("[e:1 · 2025-03-01 Sat 10:01] user: turn number 1")
    assert lines[1] == "assistant: turn number 2 talks about topic 2 in some detail"  # e:2 follows e:1
    assert lines[2].startswith("user: turn number 3")
    assert lines[3].startswith("[e:6] assistant:")  # a gap: the id is back
    assert lines[4].startswith("[e:19] user:")
    assert lines[5].startswith("[e:20 · 2025-03-02")  # a new day is dated even when consecutive
    # Ranked in order, consecutive turns are cheaper than budgeted: the refill takes more of them,
    # and the formatted lines still fit the budget.
    budget = sum(turn_cost(t, count_text) for t in turns[:10]) + 10
    chosen = select_turns(turns, turns, budget, count_text)
    assert len(chosen) > 10
    assert count_text("\n".join(format_turns(chosen))) <= budget
    assert [t.id for t in chosen] == list(range(1, len(chosen) + 1))
