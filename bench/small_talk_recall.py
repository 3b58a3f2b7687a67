#!/usr/bin/env python3
"""Recall spent on small talk: messages that only thank, acknowledge or greet.

Such a message is about nothing said before, so auto-recall should spend no tokens on it. Three
real-engine scenes (scripted provider, real fastembed model, real LanceDB, a fresh ``NEOTASK_HOME``
each), the red teams' own (``tests/faults``):

- ``en`` / ``ru``: an English and a Russian conversation of six facts, each answered "Noted.",
  compacted out of the window; the recall section the next call would carry is counted in tokens
  (``Engine.preview``, as ``neotask context`` shows it);
- ``history``: an earlier session of greetings and thanks, then ``/new``; the items ``Engine.recall``
  returns (memory and history) are counted. Once more with a fact in that session, for
  :data:`ASKED_AFTER_THANKS` (a question behind thanks): the small-talk items recalled beside it.

Every message of :data:`MESSAGES` is asked in each scene, and :data:`CONTROLS` (a real question
that starts with an acknowledgement) in the two conversations, which must still recall. The
messages are written by hand from the red teams' findings plus variants of the same kind; no
constant was fitted to them. Prints one JSON object.

Usage: ``python bench/small_talk_recall.py``. It runs on older code too (``PYTHONPATH=`` another
checkout) as long as the test helpers it imports exist there.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MESSAGES = ["Понятно.", "Interesting.", "Yep", "Sounds good!", "Cool, makes sense.", "Alright, got it, thanks!",
            "Hmm, I see.", "Good morning! How are you today?", "Okay, got it.", "Hey, I'm back.",
            "Ясно, спасибо.", "Ок, понял.", "Nice weather today."]
"""Small talk; the last one has a word of its own ("weather") and is a known limit (README)."""
CONTROLS = {"en": ("Interesting, what was the Lisbon talk about?", "Rust async"),
            "ru": ("Понятно. Куда я лечу на конференцию?", "Казань")}
"""A question behind an acknowledgement, and a word its recall must hold."""
ASKED_AFTER_THANKS = ["Got it. When is the billing cutover window?",
                      "Thanks a lot! When is the billing cutover window?",
                      "Спасибо большое! When is the billing cutover window?",
                      "Okay, thanks.\nWhen do we cut over billing?"]
"""A question behind a sentence of thanks, asked after the small-talk session and one fact: it should
recall the fact and none of the small talk (``history_small_talk_beside_a_question_mean``: turns of
that session's small talk recalled; the scenes above share the data dir, so their billing facts may
be recalled too, rightly)."""


async def _scenes() -> dict[str, Any]:
    from neotask_tui.text import tokens
    from tests.faults import test_promise_redteam16_recall_state as r16
    from tests.faults import test_promise_redteam18_logs as r18
    from tests.faults.state_recall_support import compact_away, say, section, state_engine

    out: dict[str, Any] = {}
    for name, turns in (("en", r18.TURNS), ("ru", r18.RU_TURNS)):
        engine = state_engine()
        try:
            for t in turns:
                await say(engine, t, reply="Noted.")
            await compact_away(engine)
            key = "agent:main:tui:default"
            out[name] = [tokens.count_text(section(await engine.preview(key, m))) for m in MESSAGES]
            question, word = CONTROLS[name]
            out[f"{name}_control_recalled"] = word in section(await engine.preview(key, question))
        finally:
            await engine.aclose()
    engine = r16._engine()
    try:
        for text in r16.SMALL_TALK:
            await r16._say(engine, text)
        await engine.new_session(r16.KEY)
        out["history"] = [len(await engine.recall(r16.KEY, m)) for m in MESSAGES]
    finally:
        await engine.aclose()
    engine = r16._engine()
    try:
        for text in r16.SMALL_TALK:
            await r16._say(engine, text)
        await r16._say(engine, "The billing cutover window is Sunday 02:00 UTC.")
        await engine.new_session(r16.KEY)
        got = [await engine.recall(r16.KEY, m) for m in ASKED_AFTER_THANKS]
        talk = set(r16.SMALL_TALK)
        out["beside"] = [sum(r.text.strip() in talk for r in items) for items in got]
        out["fact"] = [any("Sunday 02:00" in r.text for r in items) for items in got]
    finally:
        await engine.aclose()
    return out


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="neotask-smalltalk-") as tmp:
        os.environ["NEOTASK_HOME"] = tmp
        os.environ["NEOTASK_PROVIDER_PROBE_OLLAMA"] = "false"
        os.environ["NEOTASK_MEMORY_ENABLED"] = "true"
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        out = asyncio.run(_scenes())
    both = out["en"] + out["ru"]
    known = len(MESSAGES) - 1  # without the known limit
    report = {
        "messages": len(MESSAGES),
        "recall_tokens_this_conversation_mean": round(sum(both) / len(both), 1),
        "recall_tokens_this_conversation_mean_without_known_limit": round(
            (sum(out["en"][:known]) + sum(out["ru"][:known])) / (2 * known), 1),
        "history_items_mean": round(sum(out["history"]) / len(MESSAGES), 2),
        "controls_recalled": [out["en_control_recalled"], out["ru_control_recalled"]],
        "history_small_talk_beside_a_question_mean": round(sum(out["beside"]) / len(ASKED_AFTER_THANKS), 2),
        "history_fact_recalled_after_thanks": out["fact"],
        "history_small_talk_beside_each_question": dict(zip(ASKED_AFTER_THANKS, out["beside"], strict=True)),
        "per_message": {m: {"en": out["en"][i], "ru": out["ru"][i], "history_items": out["history"][i]}
                        for i, m in enumerate(MESSAGES)},
    }
    print(json.dumps(report, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
