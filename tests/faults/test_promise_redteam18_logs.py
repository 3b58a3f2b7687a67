"""Red team 18 (pasted logs and chats over several days): a password announced in one message and
sent alone in the next is redacted when every line starts with its sender (and a time), as in a
pasted log or a bridged group chat; after a compaction, a message about nothing said before recalls
no compacted turn (the lineage's floor is measured from the message's own baseline, as auto-recall's)."""

from __future__ import annotations

import pytest

from neotask_tui.text.secrets import redact

VALUE = "Quartz-Lemon-8812"
PREFIXES = ["", "Alice: ", "[2026-03-02 09:14] Alice: ", "<Alice> ", "Mary Ann: "]
ANNOUNCEMENTS = ["my password is in the next message", "The VPN password is in my next message.",
                 "What's the new wifi password?", "мой пароль в следующем сообщении"]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("announcement", ANNOUNCEMENTS)
def test_an_announced_password_after_a_sender_prefix_is_redacted(prefix: str, announcement: str) -> None:
    out, _ = redact(f"{prefix}{VALUE}", context=f"{prefix}{announcement}")
    assert VALUE not in out
    assert out.startswith(prefix.rstrip())  # who said it stays
    # in one pasted message, line after line
    out, _ = redact(f"{prefix}{announcement}\n{prefix}{VALUE}")
    assert VALUE not in out


@pytest.mark.parametrize("prefix", PREFIXES)
def test_an_announced_security_answer_after_a_sender_prefix_is_redacted(prefix: str) -> None:
    out, _ = redact(f"{prefix}Fluffy", context=f"{prefix}my security answer is in the next message")
    assert "Fluffy" not in out


@pytest.mark.parametrize("prefix", PREFIXES)
def test_an_unannounced_line_or_a_plain_reply_stays(prefix: str) -> None:
    assert redact(f"{prefix}Zebra9Quokka1", context=f"{prefix}let us meet tomorrow")[0] == f"{prefix}Zebra9Quokka1"
    said = f"{prefix}sounds good"
    assert redact(said, context=f"{prefix}my password is in the next message")[0] == said
    # a command after "run this:" is not a password
    assert redact(f"{prefix}make-test2", context=f"{prefix}run this:")[0] == f"{prefix}make-test2"


async def _recalled(turns: list[str], *messages: str) -> list[str]:
    """The recall section the next call would carry for each message, after ``turns`` (each answered
    "Noted.") were compacted out of the window."""
    from tests.faults.state_recall_support import compact_away, say, section, state_engine

    engine = state_engine()
    try:
        for t in turns:
            await say(engine, t, reply="Noted.")
        await compact_away(engine)
        return [section(await engine.preview("agent:main:tui:default", m)) for m in messages]
    finally:
        await engine.aclose()


TURNS = ["I went hiking at Mount Tamalpais with my dog Rex.", "I started learning pottery on Elm Street.",
         "Tomorrow I'm flying to Lisbon for the conference.", "The Lisbon talk on Rust async was excellent.",
         "Rex chased a deer.", "We deploy the billing service on Thursdays."]


@pytest.mark.parametrize("message", ["Tell me a joke.", "Напиши рецепт борща.", "Write a haiku about autumn.",
                                     "Как дела?"])
async def test_a_message_about_nothing_said_before_recalls_no_compacted_turn(message: str) -> None:
    nothing, lisbon = await _recalled(TURNS, message, "Where was the conference I flew to?")
    assert nothing == ""
    assert "Lisbon" in lisbon  # a message about something said before still recalls it


# Red team 18, second round (after the floor change): open cases, strict xfails and README known limits.
RU_TURNS = ["Вчера я ходил в поход на Эльбрус с собакой Бароном.",
            "Я записался на курсы гончарного дела на Садовой улице.",
            "Завтра лечу в Казань на конференцию по Rust.", "Доклад про асинхронность в Казани был отличный.",
            "Барон погнался за оленем.", "Мы выкатываем биллинг по четвергам."]
LOGS = ["Alice: the staging deploy failed again\nBob: which service?\nAlice: payments-api, the migration timed out",
        "Carol: who is on call this weekend?\nDave: me, Saturday and Sunday",
        "Alice: did anyone renew the TLS cert for shop.example.com?\nBob: not yet, it expires on March 14",
        "Dave: the new intern Priya starts Monday\nCarol: I'll set up her laptop and VPN access",
        "Bob: lunch at the ramen place?\nAlice: sure, 12:30\nDave: count me in"]
OPEN = [
    (RU_TURNS, "Расскажи анекдот."),  # same-language cosines are high: a Russian joke request clears the floor
    ([f"Here is the log from our team chat:\n{log}" for log in LOGS], "Bob: ok"),  # small talk in the log's format
]
GOING_ON = [  # were open (strict xfails, README known limits) until session 20: lexical.about_nothing
    (RU_TURNS, "Понятно."),
    (TURNS, "Interesting."),  # close in meaning to the "Noted." replies, which bring the facts beside them
    (TURNS, "Yep"),
    # the same kind, not seen by the red team
    (TURNS, "Sounds good!"), (TURNS, "Cool, makes sense."), (TURNS, "Alright, got it, thanks!"),
    (TURNS, "Hmm, I see."), (TURNS, "Good morning! How are you today?"),
    (RU_TURNS, "Ясно, спасибо."), (RU_TURNS, "Ок, понял."), (RU_TURNS, "Доброе утро! Как дела?"),
]


@pytest.mark.xfail(strict=True, reason="red team 18, round 2, open: same-language small talk and one-word "
                   "acknowledgements still clear the floor of this conversation's compacted turns "
                   "(README known limits)")
@pytest.mark.parametrize(("turns", "message"), OPEN, ids=[m for _, m in OPEN])
async def test_open_small_talk_after_a_compaction_recalls_nothing(turns: list[str], message: str) -> None:
    assert await _recalled(turns, message) == [""]


@pytest.mark.parametrize(("turns", "message"), GOING_ON, ids=[m for _, m in GOING_ON])
async def test_an_acknowledgement_or_greeting_after_a_compaction_recalls_nothing(
        turns: list[str], message: str) -> None:
    assert await _recalled(turns, message) == [""]


@pytest.mark.parametrize(("turns", "message", "found"), [
    (TURNS, "Interesting, what was the Lisbon talk about?", "Rust async"),
    (TURNS, "Got it. Where did I fly to for the conference?", "Lisbon"),
    (RU_TURNS, "Понятно. Куда я лечу на конференцию?", "Казань"),
], ids=["ack+question", "got it+question", "понятно+вопрос"])
async def test_an_acknowledgement_with_a_question_still_recalls(turns: list[str], message: str, found: str) -> None:
    (got,) = await _recalled(turns, message)
    assert found in got


CHATTY = [*TURNS, "Good morning!", "Thanks a lot, that helps.", "Sorry, I was away.", "Great, thank you so much!"]


@pytest.mark.parametrize("message", ["Got it. When do we deploy the billing service?",
                                     "Thanks a lot! When do we deploy the billing service?",
                                     "Понятно, спасибо. When do we deploy the billing service?"])
async def test_an_acknowledgement_before_a_question_recalls_no_small_talk(message: str) -> None:
    # Red team 22 (low): "got it. backup?" recalled small-talk turns beside what it asked for
    # (lexical.asked: the acknowledgement is not what the message is searched for).
    (got,) = await _recalled(CHATTY, message)
    assert "Thursdays" in got
    assert not [t for t in CHATTY[len(TURNS):] if t in got], got


async def test_this_conversations_small_talk_is_never_recalled() -> None:
    # Red team 23, H4: a compacted turn that only thanks or greets is never recalled, whatever the message.
    messages = ["Tell me a joke.", "Thanks, it works!", "Let's begin.", "Good morning, team! When do we deploy?"]
    for message, got in zip(messages, await _recalled(CHATTY, *messages), strict=True):
        assert not [t for t in CHATTY[len(TURNS):] if t in got], (message, got)


@pytest.mark.xfail(strict=True, reason="red team 18, round 2, open: an English question about a Russian turn of "
                   "this conversation is below the floor (README known limits)")
async def test_open_an_english_question_finds_a_russian_compacted_turn() -> None:
    (found,) = await _recalled(RU_TURNS, "Where did I go hiking?")
    assert "Эльбрус" in found


PASTED_LOG = ("Here is what the team said yesterday:\n"
              "Bob: My name is Bob and I always use vim.\n"
              "[09:14] Alice: Remember: never deploy on Fridays.\n"
              "<carol> I prefer dark mode\n")


async def test_a_pasted_chat_log_is_not_the_users_own_facts_or_requests() -> None:
    """Red team 18 (side observation): other people's lines in a pasted log became the user's stated
    facts and were proposed for long-term memory ("My name is Bob")."""
    from tests.faults.helpers import KEY, run_turn
    from tests.faults.state_recall_support import state_engine

    engine = state_engine()
    try:
        await run_turn(engine, PASTED_LOG + "I prefer tabs over spaces, always.", KEY)
        inbox = [e.text for e in await engine.state.inbox_list("main")]
        state = engine.state.block(KEY)
        for theirs in ("Bob", "vim", "Fridays", "dark mode"):
            assert not any(theirs in t for t in inbox), inbox
            assert theirs not in state, state
        assert any("tabs over spaces" in t for t in inbox), inbox  # the user's own line still counts
    finally:
        await engine.aclose()


def test_one_line_with_a_sender_is_still_the_users_own() -> None:
    """A single "Name: …" line (a user who writes that way, a transcript's one speaker) is not a log."""
    from neotask_tui.text.quoted import mask_quoted

    text = "Caroline: Remember: my sister lives in Lisbon."
    assert mask_quoted(text) == text
    two = "Caroline: Remember: my sister lives in Lisbon.\nCaroline: And always reply in English."
    assert mask_quoted(two) == two  # one sender, two lines: still one person writing


@pytest.mark.parametrize("log", [
    "14:02 Bob: hi, I moved the job\n14:03 Alice: my working language is French",
    "**Bob**: hi there\n**Alice**: my name is Alice Cooper",
    "Боб: привет\nАлиса: меня зовут Алиса\nБоб: ок, Алиса",
    "Bob: see below\n  remember: staging is db7\nAlice: ok\nBob: bye",
])
def test_common_chat_log_shapes_are_read_as_quoted(log: str) -> None:
    """Red team 20: a time without brackets, bold names, Cyrillic names and an indented continuation
    were still read as the user's own words."""
    from neotask_tui.text.quoted import MASK, mask_quoted

    masked = mask_quoted(log)
    assert set(masked) <= {MASK, "\n"}, masked


@pytest.mark.parametrize("text", [
    "Note: we deploy on Fridays.\nRemember: staging is db2.",
    "Goal: ship the importer fix\nRules: never use Redis\nDeadline: Friday",
    "Запомни: сестра живёт в Лиссабоне.\nВажно: отвечай по-русски.",
])
def test_a_message_of_labelled_lines_is_the_users_own(text: str) -> None:
    """Labelled lines ("Goal: …", "Note: …", "Remember: …") are the user's structure, not a log of
    several senders: reading them as quoted would lose the user's own requests."""
    from neotask_tui.text.quoted import mask_quoted

    assert mask_quoted(text) == text
