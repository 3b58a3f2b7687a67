"""A reply (or message) that /retry or /edit superseded is never indexed for recall (#21 item 3)."""

from __future__ import annotations

from neotask_tui.memory.service import MemoryService
from neotask_tui.storage.events import SUPERSEDED, Event

TS = "2025-03-01T09:00:0{}+00:00"


def test_superseded_events_are_not_indexed(mem: MemoryService) -> None:
    events = [
        Event("session", 1, None, TS.format(0), {"session_id": "s1"}),
        Event("message", 2, 1, TS.format(1), {"role": "user", "content": "Where does the staging database live?"}),
        Event("message", 3, 2, TS.format(2), {"role": "assistant", "content": "On the host marmalade-7 in Oslo."}),
        Event("marker", 4, 3, TS.format(3), {"kind": SUPERSEDED, "by": "retry", "superseded": [3]}),
        Event("message", 5, 4, TS.format(4), {"role": "assistant", "content": "I do not know its host."}),
    ]
    assert mem.index_transcript("main", "s1", events, "agent:main") == 2
    rows = mem.store.rows_where("agent_id = 'main'", ["text", "event_ids"])
    assert "marmalade" not in repr(rows)
    hits = mem.search("marmalade-7 Oslo host", agent_id="main", k=5, sources=("transcript",))
    assert all(3 not in h.event_ids for h in hits)
