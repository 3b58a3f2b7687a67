"""Promise: scanning user text is linear in its length, so a long paste never hangs a session.

The identifier scan of the quality guard used to be quadratic (40k hex characters: 17 s), and a
few 100 KB pastes made auto-compaction and every later turn hang. Times live in
``bench/faults.py`` (``linear_scans``: seconds vs input size per scanner); these tests assert
structure: a run of non-space characters longer than
:data:`~neotask_tui.engine.compaction.guard.MAX_IDENTIFIER_CHARS` is data, never an identifier forced
verbatim into a summary, and a real engine turn + compaction over three 100 KB pastes completes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from neotask_tui.engine.compaction.guard import MAX_IDENTIFIER_CHARS, MAX_SENTENCE_CHARS, extract_items, identifiers_in
from neotask_tui.storage.events import Event
from tests.faults.helpers import KEY, run_turn

pytestmark = pytest.mark.promise("linear_scans")

RUNS = {
    "url": "https://example.com/" + "a/" * 20_000,
    "abs-path": "/usr" * 10_000,
    "rel-path": "a/" * 20_000 + "x.py",
    "slashes": "a/" * 20_000,
    "alnum-dash": "a1-" * 13_000 + "z9",
    "tilde-path": "~/" + "a/" * 20_000,
    "dashed-words": "build-4471-" * 4_000 + "x1",
    "email-ish": "a.b" * 13_000 + "@c.com",
}


@pytest.mark.parametrize("shape", list(RUNS))
def test_a_long_run_is_not_an_identifier(shape: str) -> None:
    text = f"keep `src/app.py` and v1.2.3 then {RUNS[shape]} and build-4471"
    ids = identifiers_in(text)
    assert all(len(i) <= MAX_IDENTIFIER_CHARS for i in ids), [len(i) for i in ids]
    assert {"src/app.py", "v1.2.3", "build-4471"} <= set(ids)


PASTES = ["3f9a1c0b7e" * 10_000, "a." * 50_000, "/" * 100_000]


async def test_three_100kb_pastes_then_compaction_and_a_later_turn_complete(engine: Any) -> None:
    """Structural: every turn finishes, the compaction runs its guard over the pastes and a turn
    after it works. The bound only turns a hang into a failure (the old scan took hours here)."""
    engine.provider.queue(*[{"text": f"noted paste {i}"} for i in range(len(PASTES))])

    async def session() -> tuple[list[list[str]], Any, list[str]]:
        turns = []
        for paste in PASTES:
            evs = await run_turn(engine, f"please keep this:\n{paste}\nthanks", KEY)
            turns.append([type(e).__name__ for e in evs])
        engine.provider.queue({"text": "## Decisions\n- keep the pastes [e:1]"})
        res = await engine.compact(KEY)
        engine.provider.queue({"text": "still here"})
        after = [type(e).__name__ for e in await run_turn(engine, "and now?", KEY)]
        return turns, res, after

    turns, res, after = await asyncio.wait_for(session(), timeout=600)
    assert all("TurnDone" in t for t in turns), turns
    assert res is not None
    assert "TurnDone" in after
    summary = str(getattr(res, "summary", "") or res.to_dict().get("summary", ""))
    assert "3f9a1c0b7e" * 30 not in summary  # the blob was not forced verbatim into the summary


def test_a_paste_without_sentence_ends_is_not_classified_but_a_rule_beside_it_is() -> None:
    """A run-on paste is data: classifying it was most of a 1 MB paste's compaction preview, and
    it would have become a 100 KB "constraint" in the summary. A rule said in a sentence is kept."""
    blob = "do not " + "x " * (MAX_SENTENCE_CHARS // 2 + 10)
    ev = Event(type="message", id=2, parent=1, ts="2026-12-01T10:00:00+00:00",
               data={"role": "user", "content": f"Do not use Redis.\n{blob}"})
    items = extract_items([ev])
    texts = [i.text for i in items if i.kind == "constraint"]
    assert texts == ["Do not use Redis."]
