"""Red team 4 (README "Secrets"): a Wi-Fi key after "ключ от wifi", and a password announced in the
message before and sent after "Remember:", never reach the promotion inbox. Each failed before."""

from __future__ import annotations

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import KEY, run_turn


@pytest.mark.parametrize("text", ["Запомни: ключ от wifi — blue-horse-77", "ключ от вайфая: blue-horse-77",
                                  "Ключ от роутера это blue-horse-77"])
async def test_a_russian_wifi_key_is_redacted_in_the_inbox(engine: Engine, text: str) -> None:
    await run_turn(engine, text, KEY)
    entries = await engine.state.inbox_list("main")
    assert all("blue-horse-77" not in e.text for e in entries), [e.text for e in entries]
    assert "blue-horse-77" not in redact_secrets(text)


def test_a_key_to_a_thing_that_is_not_a_secret_is_kept() -> None:
    assert redact_secrets("ключ от сети лежит в шкафу") == "ключ от сети лежит в шкафу"


async def test_a_password_announced_then_sent_after_remember_is_redacted_in_the_inbox(engine: Engine) -> None:
    await run_turn(engine, "I'll send my password next.", KEY)
    await run_turn(engine, "Remember: Tr0ub4dor&3x", KEY)
    entries = await engine.state.inbox_list("main")
    assert not [e for e in entries if "Tr0ub4dor&3x" in e.text], [(e.text, e.redacted) for e in entries]


def test_an_announced_password_after_remember_is_redacted_wherever_messages_are_redacted() -> None:
    # the transcript indexes (memory, search) and compaction read a message in the light of the one
    # before through the same function
    said = redact_secrets("Remember: Tr0ub4dor&3x", context="I'll send my password next.")
    assert "Tr0ub4dor&3x" not in said and said.startswith("Remember: [REDACTED:")
