"""README promises red team 29 broke in session state: a state tool's error result was stored as a
success."""

from __future__ import annotations

from pathlib import Path

import pytest

from neotask_tui.engine import events as ev
from neotask_tui.engine.facade import Engine
from tests.faults.helpers import KEY, all_transcript_events, run_turn

pytestmark = pytest.mark.promise("session_state")


# ------------------------------------------------------------------ 8. tool errors are errors


async def test_a_state_tool_error_is_stored_as_an_error(engine: Engine, data_dir: Path) -> None:
    # F8: `"content": "error: duration too long …", "is_error": false` — the model was told it succeeded.
    prov = engine.provider
    prov.queue(  # type: ignore[union-attr]
        {"text": "", "tool_calls": [
            {"id": "c1", "name": "update_session_state",
             "arguments": {"field": "current_step", "value": "x", "ttl": "99999999d"}},
            {"id": "c2", "name": "update_session_state", "arguments": {"field": "current_step", "value": "y"}}]},
        {"text": "ok"})
    told = await run_turn(engine, "hello", KEY)
    finished = {e.call_id: e for e in told if isinstance(e, ev.ToolCallFinished)}
    assert finished["c1"].is_error and finished["c1"].result.startswith("error: duration too long")
    assert not finished["c2"].is_error
    stored = {e["call_id"]: e for e in all_transcript_events(data_dir) if e["type"] == "tool_result"}
    assert stored["c1"]["is_error"] is True and stored["c2"]["is_error"] is False
