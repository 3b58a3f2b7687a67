"""Red team 27, F4: ``/context`` with a draft that sets session state recalls what the call recalls.

Sending a draft records the state it states before the call's recall runs, and recall leaves out a
turn that says only what the state holds; the preview recalled for the state before the draft, so a
draft restating an earlier session's rule previewed that turn as recalled, and the call did not
recall it. Real engine, real embedding model and memory store on a tmp NEOTASK_HOME, the scripted
provider.
"""

from __future__ import annotations

import pytest

from tests.doubles import scripted
from tests.faults.recall_support import _memory_on, neotask_home
from tests.faults.state_recall_support import KEY, say, section, state_engine

__all__ = ["_memory_on", "neotask_home"]  # autouse fixtures, used by pytest through this module's namespace

pytestmark = pytest.mark.promise("recall_state")


async def test_a_draft_restating_an_earlier_rule_previews_the_recall_the_call_makes() -> None:
    rule = "Please stop using emojis in the billing migration notes."
    engine = state_engine()
    try:
        await say(engine, rule)
        await engine.reset_session(KEY)  # nothing carried: the rule is only in the archived session
        await say(engine, "Let's look at the billing migration notes.")  # indexes the archived session
        ctx = await engine.preview(KEY, rule)
        await say(engine, rule)
        sent = [(m.role, m.content) for m in scripted(engine).calls[-1]]
        assert "stop using emojis" in section(ctx, "state")
        assert [(m.role, m.content) for m in ctx.messages] == sent, section(ctx)
    finally:
        await engine.aclose()
