"""Red team 5 (README "What it remembers"): what a message proposes to long-term memory is only what
the user asked to keep — the fact after "Remember: …", without a request to the assistant that
follows it, bounded in size; "always" makes a lasting preference only when it is an instruction,
not a description; and nothing inside quotes or code triggers a proposal. Each test failed on the
code it was written against (the counter-examples beside them keep what was right)."""

from __future__ import annotations

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.tuning import INBOX_PROPOSAL_MAX_CHARS
from tests.faults.helpers import KEY, run_turn

pytestmark = pytest.mark.promise("remember")


async def _inbox_texts(engine: Engine, text: str) -> list[str]:
    await run_turn(engine, text, KEY)
    return [e.text for e in await engine.state.inbox_list("main")]


def _plain(text: str) -> str:
    return text.casefold().strip(" .!…")


@pytest.mark.parametrize(("text", "fact"), [
    ("Запомни, что я живу в Берлине, и скажи, который час", "я живу в берлине"),
    ("Remember that I live in Berlin, and tell me what time it is", "i live in berlin"),
    ("Remember that I live in Berlin and tell me what time it is.", "i live in berlin"),
    ("Запомни, что я живу в Берлине и подскажи, который час?", "я живу в берлине"),
    ("Запомни: я не ем мясо, а теперь предложи рецепт ужина.", "я не ем мясо"),
    ("Remember: my dog is called Rex, and can you suggest a name for my cat?", "my dog is called rex"),
    ("Please remember that I'm allergic to nuts, then give me a recipe.", "i'm allergic to nuts"),
    ("Remember that I live in Berlin, and what time is it there now?", "i live in berlin"),
    ("Запомни, что мой сын учится в пятом классе, и напиши ему задачу по математике",
     "мой сын учится в пятом классе"),
    ("Запомни, что мой день рождения 5 мая, и поздравь меня", "мой день рождения 5 мая"),
    ("Remember: I use Arch, btw tell me how to update it", "i use arch"),
])
async def test_a_request_after_the_fact_is_not_proposed_with_it(engine: Engine, text: str, fact: str) -> None:
    """README: '"Remember: …" / "Запомни, что …" proposes what follows it'. A request to the
    assistant after the fact ("и скажи, который час", "and tell me what time it is") was proposed
    as part of it; when the message ended in "?" nothing was proposed at all."""
    texts = await _inbox_texts(engine, text)
    assert [_plain(t) for t in texts] == [fact], texts


@pytest.mark.parametrize(("text", "fact"), [
    ("Remember that I live in Berlin and work in Munich.", "i live in berlin and work in munich"),
    ("Запомни, что я люблю чай и кофе.", "я люблю чай и кофе"),
    ("Запомни, что у меня кот и две собаки.", "у меня кот и две собаки"),
    ("Запомни, что я люблю хлеб и соль.", "я люблю хлеб и соль"),
    ("Remember: I write Go, and my team writes Rust.", "i write go, and my team writes rust"),
])
async def test_a_fact_with_a_conjunction_is_proposed_whole(engine: Engine, text: str, fact: str) -> None:
    texts = await _inbox_texts(engine, text)
    assert [_plain(t) for t in texts] == [fact], texts


def _prose(n: int) -> str:
    # plain words: no temporariness marker ("for a while", "until") that would make it a session note
    words = [
        "the", "build", "runs", "on", "every", "commit", "and", "the", "logs", "go", "to", "the", "shared",
        "bucket", "where", "the", "cleanup", "job", "deletes", "old", "files", "after", "review",
    ]
    out: list[str] = []
    while sum(len(w) + 1 for w in out) < n:
        out.append(words[len(out) % len(words)])
    return " ".join(out)


async def test_a_remember_request_inside_a_long_message_proposes_only_its_sentence(engine: Engine) -> None:
    """README: '"Remember: …" proposes what follows it'. In a 6,000-character message the statement
    after "Remember:" is proposed, not the message (a guard: this shape already held)."""
    text = (_prose(2800) + ".\n\n" + _prose(400) + ". Remember: the staging database runs on port 5433. "
            + _prose(2800) + ".")
    assert len(text) > 6000
    texts = await _inbox_texts(engine, text)
    assert [_plain(t) for t in texts] == ["the staging database runs on port 5433"], [t[:80] for t in texts]


@pytest.mark.parametrize("text", [
    _prose(3000) + ", and remember that the staging database runs on port 5433, " + _prose(3000),
    "Remember: " + _prose(6000),
    _prose(2000) + ". My notes on the outage are " + _prose(4000),
    "Remember that " + _prose(3000) + ", and tell me what time it is",
])
async def test_a_huge_message_never_becomes_one_huge_memory(engine: Engine, text: str) -> None:
    """README: a memory is what you asked to keep; a pasted page after "Remember" (or a run-on
    sentence with "remember that" in it) was proposed whole, thousands of characters long."""
    assert len(text) > 3000
    texts = await _inbox_texts(engine, text)
    assert all(len(t) <= INBOX_PROPOSAL_MAX_CHARS for t in texts), [len(t) for t in texts]


async def test_a_run_on_message_with_remember_proposes_the_clause_after_it(engine: Engine) -> None:
    text = _prose(3000) + ", and remember that the staging database runs on port 5433; " + _prose(3000)
    texts = await _inbox_texts(engine, text)
    assert [_plain(t) for t in texts] == ["the staging database runs on port 5433"], [t[:80] for t in texts]


@pytest.mark.parametrize("text", [
    "My colleague always uses tabs",
    "Я всегда забываю ключи",
    "He always forgets to lock the door.",
    "Users always complain about the UI.",
    "Мой коллега всегда опаздывает.",
    "Мои дети всегда просыпаются рано.",
    "I always forget my keys.",
    "My colleague always uses tabs in this repo.",
    "Он никогда не отвечает на письма.",
    "My boss never reads the docs.",
    "By default the app uses dark mode.",
    "I can't remember that guy's name.",
])
async def test_a_description_with_always_proposes_nothing(engine: Engine, text: str) -> None:
    """README: 'Only "always", "from now on", "всегда"… propose a lasting preference … descriptions
    ("he stopped using emojis") make nothing'. A description of someone else or of a habit
    ("My colleague always uses tabs", "Я всегда забываю ключи") was proposed as a preference."""
    assert await _inbox_texts(engine, text) == []


@pytest.mark.parametrize("text", [
    "Always use tabs in this repo.",
    "Всегда отвечай по-русски.",
    "Never use tabs.",
    "Please always reply in English.",
    "From now on, answer in English.",
    "You should always use tabs.",
    "I always prefer short answers.",
    "Отвечай всегда по-русски.",
    "Никогда не используй табы.",
    "Always refactor in small steps.",
    "Answer always in English.",
])
async def test_a_standing_instruction_with_always_is_still_proposed(engine: Engine, text: str) -> None:
    texts = await _inbox_texts(engine, text)
    assert len(texts) == 1, texts


@pytest.mark.parametrize("text", [
    'He said "remember: the server is down" and left.',
    'He said "always use tabs", but I disagree.',
    "The docs say 'always use tabs'.",
    "Use `remember: foo` syntax in the config.",
    "Put `always_on: true` in the file.",
    "```\nRemember: the server is down\n```",
    "```python\n# always use tabs\nx = 1\n```",
    "«Всегда отвечай по-русски», — сказал он.",
    'Она написала: "Запомни, что я живу в Берлине".',
    "> Remember: the server is down\n\nThat is what the bot told me.",
])
async def test_remember_or_always_inside_quotes_or_code_proposes_nothing(engine: Engine, text: str) -> None:
    """README: 'long-term memory only by your consent'. A "Remember:" or "always" quoted from someone
    else or inside code was proposed as the user's own request."""
    assert await _inbox_texts(engine, text) == []


@pytest.mark.parametrize(("text", "needle"), [
    ('Remember: my motto is "always be shipping".', "always be shipping"),
    ('Always use "snake_case" for file names.', "snake_case"),
])
async def test_a_quote_inside_a_request_is_kept_in_the_proposal(engine: Engine, text: str, needle: str) -> None:
    texts = await _inbox_texts(engine, text)
    assert len(texts) == 1 and needle in texts[0], texts


async def test_a_statement_too_long_for_a_memory_is_not_proposed_and_the_turn_says_so(engine: Engine) -> None:
    events = await run_turn(engine, "Remember: " + _prose(3000), KEY)
    assert await engine.state.inbox_list("main") == []
    notes = [e.text for e in events if type(e).__name__ == "Notice"]
    assert any("not proposed for long-term memory" in n.casefold() for n in notes), notes
