"""``/context`` with a draft (red team 27, F4): the preview carries the session state that sending the
draft sets — a goal, a temporary preference it states — as the call does, and writes nothing.

Real storage and the real classifier; the scripted provider records the messages each call sends."""

from __future__ import annotations

from typing import Any

import pytest

from neotask_tui import paths
from neotask_tui.engine.context.assembly import AssembledContext
from neotask_tui.engine.events import ContextBuilt
from neotask_tui.engine.facade import Engine
from tests.doubles import scripted
from tests.engine.state_support import KEY

PREF_AND_GOAL = "For the next 2 hours answer briefly. My goal is to ship v9. Remember that the staging host is st-04."
"""A temporary preference for 2 h, a goal and a statement proposed for long-term memory (the inbox)."""
PREF_TODAY = "сегодня отвечай коротко, и скажи привет"
"""A temporary preference for today (to the end of the local day)."""


def _sent(ctx: AssembledContext) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in ctx.messages]


async def _written(engine: Engine) -> tuple[Any, ...]:
    """Everything a preview must leave alone: the state, the transcript on disk, the inbox."""
    sid = engine.current_record(KEY).session_id
    state = [e.to_dict() for e in engine.state.get(KEY).active]
    inbox = [(e.n, e.text, e.status) for e in await engine.state.inbox_list("main", status=None)]
    return state, paths.transcript_path(sid).read_bytes(), inbox


@pytest.mark.parametrize("draft", [PREF_AND_GOAL, PREF_TODAY], ids=["preference-and-goal", "preference-for-today"])
async def test_a_draft_that_sets_state_is_previewed_with_that_state(engine: Engine, draft: str) -> None:
    """README, Context: "`/context` (F4, `neotask context`) shows exactly what the next call would
    send ... With a draft (`/context TEXT`, ...) recall is computed for that draft". A draft that
    sets a preference (and a goal) was previewed without the "Current session:" block that sending
    it puts in the call: state 0 in the preview, the block in the call."""
    [e async for e in engine.send("hello there", KEY)]
    before = await _written(engine)
    ctx = await engine.preview(KEY, draft)
    assert await _written(engine) == before  # nothing recorded: not the state, the message or the inbox
    got = [e async for e in engine.send(draft, KEY)]
    sent = next(e.ledger for e in got if isinstance(e, ContextBuilt))
    assert ctx.ledger.sections["state"] > 0 and "Current session:" in ctx.messages[1].content
    assert _sent(ctx) == [(m.role, m.content) for m in scripted(engine).calls[-1]]
    assert ctx.section_of[:2] == ["system", "state"]
    assert (ctx.ledger.sections, ctx.ledger.total) == (sent.sections, sent.total)
    if draft == PREF_AND_GOAL:  # the send proposes the statement to remember; the preview did not
        assert len(await engine.state.inbox_list("main")) == 1


async def test_a_draft_previews_the_state_it_replaces_or_repeats(engine: Engine) -> None:
    """A new goal replaces the goal in the preview as sending does; a rule stated again adds nothing."""
    [e async for e in engine.send(PREF_AND_GOAL, KEY)]
    [e async for e in engine.send("Please stop using emojis.", KEY)]
    for draft in ("My goal is to ship v10.", "Please stop using emojis."):
        before = await _written(engine)
        ctx = await engine.preview(KEY, draft)
        assert await _written(engine) == before
        [e async for e in engine.send(draft, KEY)]
        assert _sent(ctx) == [(m.role, m.content) for m in scripted(engine).calls[-1]]
    block = ctx.messages[1].content
    assert "ship v10" in block and "ship v9" not in block and block.count("stop using emojis") == 1


async def test_the_gauge_count_of_a_draft_carries_its_state_too(engine: Engine) -> None:
    """``Engine.context`` (the cheap count, no recall) assembles a draft the same way."""
    [e async for e in engine.send("hello there", KEY)]
    ctx = await engine.context(KEY, PREF_TODAY)
    assert ctx.ledger.sections["state"] > 0 and not engine.state.get(KEY).active
