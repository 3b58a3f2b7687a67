"""Red team 33, finding 11 (third bullet): "my password is in the next message" was recorded as a stated
fact and proposed for long-term memory. An announcement of a secret (the same reading that redacts the
lone value sent after it) is no fact worth keeping: nothing is recorded or proposed."""

from __future__ import annotations

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.engine.language.classifier import classify
from neotask_tui.text.secrets import announces_secret
from tests.faults.helpers import KEY, run_turn

PW = "Zebra9" + "Quokka1"  # built at runtime: no literal credential in the repository


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "my password is in the next message",
    "My PIN is in the next message.",
    "I'll send you my security answer in a separate message",
    "I work at Acme, my password is in the next message",
    "мой пароль пришлю следующим сообщением",
])
def test_an_announcement_of_a_secret_is_no_fact(text: str) -> None:
    assert announces_secret(text)
    assert classify(text) == []


@pytest.mark.promise("secrets")
@pytest.mark.parametrize("text", [
    "my password manager is 1Password",
    "I live in Berlin",
    "I will send the report in the next message",
    "I always use a password manager",
])
def test_ordinary_statements_are_no_announcement(text: str) -> None:
    assert not announces_secret(text)


@pytest.mark.promise("secrets")
async def test_an_announced_password_leaves_no_fact_and_no_inbox_candidate(engine: Engine) -> None:
    assert engine.state is not None
    engine.provider.queue("ok", "ok", "ok")  # type: ignore[union-attr]
    await run_turn(engine, "my password is in the next message", KEY)
    await run_turn(engine, PW, KEY)
    assert await engine.state.inbox_list("main") == []
    block = engine.state.block(KEY)
    assert "next message" not in block and PW not in block
    await run_turn(engine, "my dog is called Rex", KEY)  # a real fact is still proposed
    assert len(await engine.state.inbox_list("main")) == 1
