"""Red team 35, finding 1: in a small window, recall's reserve pushed the messages a compaction had kept
raw out of the call (``dropped_event_ids`` 43, 44, 45, 49; none in the summary), and nothing said so.

README: "The newest messages stay raw (15% of the usable window …)"; "forgets nothing silently".
"""

from __future__ import annotations

from neotask_tui.engine.context.assembly import ContextInputs, RecallItem, build_context, recall_room
from neotask_tui.storage.events import Event
from neotask_tui.text.tokens import count_text

SUMMARY = "## Decisions\n" + "".join(f"- user: decision number {i} about the migration plan [e:{i}]\n"
                                     for i in range(1, 16))
RECALLED = [RecallItem(id=f"archive:{i}", text=f"user: an older turn {i} about replicas " + "lag " * 40,
                       source="archived transcripts of this session", scope="session", kind="conversation")
            for i in range(4)]


def _history(n: int) -> list[Event]:
    return [Event("message", 100 + i, None, "2026-12-06T10:00:00+00:00",
                  {"role": "user" if i % 2 == 0 else "assistant",
                   "content": f"message {i}: the index build on the primary takes a while, watch the lag."})
            for i in range(n)]


def _inputs(history: list[Event], recall: list[RecallItem], keep: int) -> ContextInputs:
    return ContextInputs(system="You are a helpful assistant.", history=history, new_message="and now?",
                         window=1000, reply_reserve=300, count_text=count_text, summary=SUMMARY, recall=recall,
                         recall_reserve=450, keep_recent=keep)


def test_recall_never_displaces_the_raw_window_a_compaction_keeps() -> None:
    history = _history(6)
    keep = sum(count_text(e.content) + 8 for e in history)  # the whole live history is the kept raw window
    ctx = build_context(_inputs(history, RECALLED, keep))
    led = ctx.ledger
    assert led.dropped_event_ids == [], led.dropped_event_ids
    assert led.included_event_ids == [e.id for e in history]
    # recall gave way (its least relevant items last), and the call says so
    unkept = build_context(_inputs(history, RECALLED, 0)).ledger  # no kept window: recall took its room
    assert unkept.dropped_event_ids  # (what the red team saw)
    assert 0 < led.sections["recall"] < unkept.sections["recall"]
    assert any("left out of this call so the newest messages fit" in n for n in led.notices), led.notices
    assert led.total <= led.budget


def test_the_recall_room_leaves_the_kept_raw_window() -> None:
    history = _history(6)
    keep = sum(count_text(e.content) + 8 for e in history)
    inp = _inputs(history, [], keep)
    room = recall_room(inp, 450)
    inp.recall = [RecallItem(id="x", text="y " * max(room - 60, 1), source="s", scope="session", kind="conversation")]
    assert build_context(inp).ledger.dropped_event_ids == []
    assert room < recall_room(_inputs(history, [], 0), 450)  # the reserve yields to the kept messages


def test_messages_outside_the_window_are_named_in_a_notice() -> None:
    history = _history(40)
    led = build_context(_inputs(history, [], 60)).ledger
    assert led.dropped_event_ids
    note = next(n for n in led.notices if "outside this call's window" in n)
    assert f"e:{led.dropped_event_ids[0]}" in note and "kept on disk" in note
