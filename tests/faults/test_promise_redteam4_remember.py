"""Red team 4 (README "What it remembers"): a request to remember proposes what follows it, and
nothing when nothing follows. Each test failed on the code it was written against."""

from __future__ import annotations

import pytest

from neotask_tui.engine.facade import Engine
from tests.faults.helpers import KEY, run_turn


async def _inbox_texts(engine: Engine, text: str) -> list[str]:
    await run_turn(engine, text, KEY)
    return [e.text for e in await engine.state.inbox_list("main")]


@pytest.mark.parametrize("text", [
    "Remember:",
    "Remember: ...",
    "Remember that.",
    "Запомни:",
    "Запомни, что",
    "Remember:\n```\nDB_PASSWORD=s3cretvalue99\n```",
    "Always.",
    "From now on.",
    "Всегда.",
])


async def test_a_bare_remember_request_proposes_nothing(engine: Engine, text: str) -> None:
    """README: '"Remember: …" / "Запомни, что …" proposes what follows it (the request itself is
    not saved)'. With nothing after the request, the request word itself ("Remember", "Запомни")
    was proposed for long-term memory; so was a bare "Always." / "Всегда." (no preference in it)."""
    assert await _inbox_texts(engine, text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("Запомни, пожалуйста, что я не ем мясо.", "я не ем мясо"),
    ("Запомни это: я не ем мясо.", "я не ем мясо"),
])


async def test_a_polite_russian_remember_request_is_not_saved_with_the_fact(
        engine: Engine, text: str, expected: str) -> None:
    """README: 'the request itself is not saved'. "Запомни, пожалуйста, что …" / "Запомни это: …"
    proposed the whole message, request included ("Запомни, пожалуйста, что я не ем мясо")."""
    texts = await _inbox_texts(engine, text)
    assert len(texts) == 1, texts
    assert "запомни" not in texts[0].casefold(), texts
    assert expected in texts[0].casefold(), texts


async def test_an_explicit_do_not_remember_proposes_nothing(engine: Engine) -> None:
    """README: 'long-term memory only by your consent'. "Do not remember: my salary is 5000." was
    proposed for long-term memory verbatim (the Russian "Не запоминай: …" is correctly ignored)."""
    assert await _inbox_texts(engine, "Do not remember: my salary is 5000.") == []


async def test_a_second_remember_in_one_message_is_not_saved_with_its_request(engine: Engine) -> None:
    """README: 'the request itself is not saved'. The second of two requests in one message was
    proposed as "And remember: my cat is called Tom"."""
    texts = await _inbox_texts(engine, "Remember: my dog is called Rex. And remember: my cat is called Tom.")
    assert not [t for t in texts if "remember" in t.casefold()], texts


async def test_remember_proposes_what_follows_not_a_word_fragment(engine: Engine) -> None:
    """README: '"Запомни, что …" proposes what follows it'. "Запомни что-нибудь интересное."
    (remember something interesting: no fact) split the word "что-нибудь" and proposed the
    fragment "-нибудь интересное"."""
    texts = await _inbox_texts(engine, "Запомни что-нибудь интересное.")
    assert not [t for t in texts if t.startswith("-") or ("нибудь" in t and "что-нибудь" not in t)], texts
