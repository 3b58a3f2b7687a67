"""Red-team round 9b: a stated goal is the session's goal, also when it says "always" or "from now
on"; it never reaches the long-term inbox (README, Session state)."""

from __future__ import annotations

import pytest

from neotask_tui.commands import dispatch
from neotask_tui.engine.facade import Engine
from tests.faults.helpers import KEY, run_turn


@pytest.mark.parametrize("text", [
    "my goal is always to keep the build green",
    "From now on, my goal is to ship weekly",
    "My goal is to always reply to reviews within a day",
    "моя цель — всегда держать сборку зелёной",
    "goal: always pass CI before merging",
])
async def test_goal_statement_sets_the_goal_and_never_reaches_the_inbox(engine: Engine, text: str) -> None:
    """README, Session state: '"my goal is …", "goal: …", "моя цель — …" set the current goal (the
    latest stated wins)'. A goal that mentions "always" / "from now on" is still this session's goal:
    it set no goal at all and was proposed to the long-term inbox instead."""
    await run_turn(engine, text, KEY)
    state = await dispatch(engine, KEY, "/state")
    inbox = await dispatch(engine, KEY, "/inbox list")
    assert "current_goal" in state.text, state.text
    assert "inbox is empty" in inbox.text, inbox.text
