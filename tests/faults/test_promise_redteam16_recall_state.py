"""Red team 16 (a helper briefed only with the README): recall against session state, `/new` vs `/reset`,
recall kinds and their labels, secrets through recall, and "a message about nothing recalls nothing".

Each ``test_finding_*`` asserts what the README promises and failed on the code it was written against
(all hold since, but the small-talk one: a strict expected failure, a README known limit); each
``test_holds_*`` is a promise that was attacked and held (a regression test).

Real engine, real embedding models and the memory store on a tmp NEOTASK_HOME, the scripted provider for
replies, a frozen clock the tests move.
"""

from __future__ import annotations

import pytest

from neotask_tui.commands import dispatch
from neotask_tui.engine.context.assembly import AssembledContext, RecallItem
from tests.doubles import Clock
from tests.faults.recall_support import _memory_on, neotask_home
from tests.faults.state_recall_support import KEY, START, section
from tests.faults.state_recall_support import compact_away as _compact
from tests.faults.state_recall_support import say as _say
from tests.faults.state_recall_support import show as _show
from tests.faults.state_recall_support import state_engine as _engine

__all__ = ["_memory_on", "neotask_home"]  # autouse fixtures, used by pytest through this module's namespace

pytestmark = pytest.mark.promise("recall_state")

PASSWORD = "Tr0ub4dor&3xyz"


def _recall_section(ctx: AssembledContext) -> str:
    return section(ctx)


async def _recalled_after_new(said: list[str], question: str) -> tuple[str, list[RecallItem]]:
    """Say ``said`` in one session, start a new one with ``/new`` (state carries over), and return the
    carried state block and what ``question`` recalls there."""
    engine = _engine()
    try:
        for text in said:
            await _say(engine, text)
        await engine.new_session(KEY)
        return engine.state.block(KEY), await engine.recall(KEY, question)
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# Findings (fail on the current code)
# ---------------------------------------------------------------------------------------------------

async def test_finding_please_rule_carried_by_new_is_recalled_again() -> None:
    # README, Three kinds of recall: "a turn that says only what the session state already says (a rule
    # you stated, carried over by /new) is not recalled again, the state holds it".
    # README, Session state: '"please stop using emojis", … are session rules'.
    # Input: "Please stop using emojis in the billing migration notes." then /new. The state holds the rule
    # ("stop using emojis in the billing migration notes"), yet the turn comes back as history (score 1.0).
    # Without the "Please" ("Do not use Redis …") the same case holds.
    turn = "Please stop using emojis in the billing migration notes."
    block, got = await _recalled_after_new([turn], "Should you use emojis in the billing migration notes?")
    assert "stop using emojis in the billing migration notes" in block
    assert not any("emojis" in r.text for r in got), _show(got)


async def test_finding_goal_carried_by_new_is_recalled_again() -> None:
    # README, Three kinds of recall: "a turn that says only what the session state already says … is not
    # recalled again, the state holds it". README, Session state: '"my goal is …", "goal: …", "моя цель
    # — …" set the current goal'; "/new … carry the entries still active into the new session".
    # Input: "My goal is to migrate the billing service to PostgreSQL 16." then /new: the carried state says
    # "Goal: migrate the billing service to PostgreSQL 16.", yet the turn is recalled (0.83). "Goal: …" holds.
    turn = "My goal is to migrate the billing service to PostgreSQL 16."
    block, got = await _recalled_after_new([turn], "What is my goal for the billing service?")
    assert "Goal: migrate the billing service to PostgreSQL 16" in block
    assert not any("PostgreSQL 16" in r.text for r in got), _show(got)


async def test_finding_temporary_preference_within_ttl_carried_by_new_is_recalled_again() -> None:
    # README, Session state: '"today answer briefly" … ends at local midnight'; "/new … carry the entries
    # still active into the new session … where they expire as they would have". README, Three kinds of
    # recall: "a turn that says only what the session state already says … is not recalled again".
    # Input: "Today answer briefly about the billing migration." then /new (same day): the state holds
    # "answer briefly about the billing migration (until … 00:00Z)", yet the turn is recalled (1.0).
    turn = "Today answer briefly about the billing migration."
    block, got = await _recalled_after_new([turn], "How should you answer about the billing migration?")
    assert "answer briefly about the billing migration" in block
    assert not any("answer briefly" in r.text for r in got), _show(got)


async def test_finding_turn_the_state_contradicts_is_lost_from_recall() -> None:
    # README, Three kinds of recall: only "a turn that says only what the session state already says" is
    # left out ("the state holds it"); what the state does not say is still recalled.
    # Input: "Do not use PostgreSQL 16 for the billing service." and "Use PostgreSQL 16 for the billing
    # service." then /new. The state says the rule; the other turn says the opposite, which the state does
    # not say, yet it is never recalled (it is recalled when the rule is about something else).
    rule = "Do not use PostgreSQL 16 for the billing service."
    other = "Use PostgreSQL 16 for the billing service."
    q = "Which database should the billing service use?"
    _, control = await _recalled_after_new(["Do not use Redis anywhere in the reporting service.", other], q)
    assert any(r.text == other for r in control), _show(control)  # recalled beside an unrelated rule
    block, got = await _recalled_after_new([rule, other], q)
    assert rule.rstrip(".") in block
    assert any(r.text == other for r in got), _show(got)


async def test_finding_compacted_answer_dropped_because_state_mentions_its_word() -> None:
    # README, Three kinds of recall: "this conversation: turns of the current conversation that compaction
    # moved out of the window"; a compacted turn is judged "together with the turn just before it as one
    # passage (a reply … holds the answer, the question it answers holds your words)"; only a turn that says
    # "only what the session state already says" is left out.
    # Input: a rule "Do not schedule any meetings on Friday.", the assistant asks "Which day should the
    # billing cutover happen?", the user answers "Friday.", then /compact. Recall for "Which day is the
    # billing cutover?" brings the question back but not the answer; with the rule about Monday, both.
    for rule in ("Do not schedule any meetings on Monday.", "Do not schedule any meetings on Friday."):
        engine = _engine()
        try:
            await _say(engine, rule)
            await _say(engine, "Let's plan the billing cutover.", "Which day should the billing cutover happen?")
            await _say(engine, "Friday.")
            await _compact(engine)
            got = await engine.recall(KEY, "Which day is the billing cutover?")
            assert any("billing cutover happen" in r.text for r in got), (rule, _show(got))
            assert any(r.text == "Friday." and r.kind == "conversation" for r in got), (rule, _show(got))
        finally:
            await engine.aclose()


async def test_finding_fork_recalls_an_assistant_reply_without_its_speaker() -> None:
    # README, Three kinds of recall: "The assistant's own past replies are never recalled as facts: by
    # default history recall brings back only your own messages, and every recalled turn of this
    # conversation says who spoke."
    # Input: "What's the staging host and port again?" answered "The staging host and port is
    # db-old.example.com:5432.", two more turns, /fork at the last reply. Recall for "What is the staging
    # host and port?" puts the assistant's reply in a kind="this conversation" fence as bare text, no
    # speaker (after /compact the same fence says "assistant: …").
    engine = _engine()
    try:
        await _say(engine, "What's the staging host and port again?",
                   "The staging host and port is db-old.example.com:5432.")
        await _say(engine, "Let's plan the billing migration.")
        await _say(engine, "The billing cutover window is Sunday 02:00 UTC.")
        await engine.fork_session(KEY)
        q = "What is the staging host and port?"
        recall = await engine.recall(KEY, q)
        text = _recall_section(await engine.build(KEY, q, recall=recall))
        for line in (ln for ln in text.splitlines() if "db-old" in ln):
            assert "assistant" in line, text
    finally:
        await engine.aclose()


async def test_finding_fork_recalls_turns_still_in_the_window_as_compacted() -> None:
    # README, Three kinds of recall: "this conversation: turns of the current conversation that compaction
    # moved out of the window"; "the same text found in two places is one item"; the fence itself says
    # 'kind="this conversation": earlier turns of this conversation, compacted out of the window'.
    # Input: three turns, /fork at the second reply (nothing compacted). Recall for "Which host runs the
    # nightly backup of the billing database?" quotes the first turn as "this conversation" although the
    # fork's recent messages hold it: the context carries it twice.
    engine = _engine()
    try:
        fact = "The nightly backup of the billing database runs on the ops-bastion host."
        await _say(engine, fact)
        await _say(engine, "Let's plan the billing migration.")
        at = engine.events(KEY)[-1].id
        await _say(engine, "The billing cutover window is Sunday 02:00 UTC.")
        await engine.fork_session(KEY, at)
        q = "Which host runs the nightly backup of the billing database?"
        recall = await engine.recall(KEY, q)
        ctx = await engine.build(KEY, q, recall=recall)
        recent = [m.content for m, sec in zip(ctx.messages, ctx.section_of, strict=True) if sec == "recent"]
        assert fact in recent
        assert "ops-bastion" not in _recall_section(ctx), _show(recall)
    finally:
        await engine.aclose()


SMALL_TALK = ["Good morning!", "Thanks a lot, that helps.", "Can you help me?", "Let's continue.",
              "Sorry, I was away.", "Great, thank you so much!", "How are you today?"]


async def test_finding_small_talk_recalls_earlier_small_talk() -> None:
    # Fixed (session 20): acknowledgements and greetings ("got it", "I'm back") are no content of a
    # message (lexical.about_nothing); this was a strict xfail and a README known limit.
    # README, Three kinds of recall: "a passage is recalled only when it holds most of your message's words
    # or is close to it in meaning …; and a message about nothing remembered recalls nothing, so the
    # context spends no tokens on recall."
    # Input: earlier session with a few greetings/thanks and one fact; /new; "Okay, got it." recalls five
    # small-talk turns (0.15-0.26) sharing no word with it; "Hey, I'm back." recalls four.
    messages = ("Okay, got it.", "Hey, I'm back.", "Thank you so much", "Спасибо большое!", "Всем привет!")
    for message, got in zip(messages, await _recalled_after_small_talk(*messages), strict=True):  # + red team 22
        assert got == [], (message, _show(got))


async def _recalled_after_small_talk(*messages: str) -> list[list[RecallItem]]:
    """What each message recalls after /new, when the session before held :data:`SMALL_TALK` and one fact
    (the billing cutover window)."""
    engine = _engine()
    try:
        for text in SMALL_TALK:
            await _say(engine, text)
        await _say(engine, "The billing cutover window is Sunday 02:00 UTC.")
        await engine.new_session(KEY)
        return [await engine.recall(KEY, m) for m in messages]
    finally:
        await engine.aclose()


@pytest.mark.parametrize("message", ["Got it. When is the billing cutover window?",
                                     "Thanks a lot! When is the billing cutover window?",
                                     "Спасибо большое! When is the billing cutover window?"])
async def test_an_acknowledgement_before_a_question_recalls_only_what_it_asks(message: str) -> None:
    # Red team 22 (low): "got it. backup?" recalled three small-talk turns beside the note it asked for: the
    # acknowledgement counted in what the message was searched for (lexical.asked leaves it out).
    (got,) = await _recalled_after_small_talk(message)
    assert [r for r in got if "Sunday 02:00" in r.text], _show(got)
    assert [r.text for r in got if "Sunday 02:00" not in r.text] == [], _show(got)


RT23_MESSAGES = ("Thanks, it works!", "Спасибо, всё понятно.", "Доброе утро, коллеги!", "Tell me a joke.",
                 "Let's begin.", "Ready when you are.", "Good morning, team! When is the standup?")


async def test_earlier_small_talk_is_never_recalled() -> None:
    # Red team 23, H4 (high): after a session of greetings and thanks, "Thanks, it works!", "Tell me a joke.",
    # "Let's begin.", "Good morning, team! When is the standup?"… each recalled "Good morning!", "Okay, got
    # it." or "Thanks a lot, that helps.". A turn that only thanks, acknowledges or greets is never recalled
    # now (and these messages' thanks and greetings are no content of theirs either).
    for message, got in zip(RT23_MESSAGES, await _recalled_after_small_talk(*RT23_MESSAGES), strict=True):
        assert [r.text for r in got if r.text in SMALL_TALK] == [], (message, _show(got))


async def test_small_talk_with_a_word_of_its_own_recalls_no_earlier_small_talk() -> None:
    # Was a strict xfail and a README known limit until red team 23 (H4): earlier small talk is never recalled.
    engine = _engine()
    try:
        for text in SMALL_TALK:
            await _say(engine, text)
        await engine.new_session(KEY)
        got = await engine.recall(KEY, "Nice weather today.")
        assert got == [], _show(got)
    finally:
        await engine.aclose()


async def test_finding_password_after_which_is_comes_back_unredacted() -> None:
    # README, Secrets: "Before anything derived from your conversation is stored outside the transcript,
    # secrets are replaced with [REDACTED:<kind>]: … passwords written in English or Russian prose ("the
    # password's …", …, an aside such as "(don't tell anyone)" between the word and the value …)"; this
    # applies to "the memory search index (archived transcripts … included), the full-text search index".
    # Input: "My database password, which is Tr0ub4dor&3xyz, must be rotated before the billing cutover."
    # then /new: history recall quotes the password to the model, and `search` finds it.
    engine = _engine()
    try:
        await _say(engine, f"My database password, which is {PASSWORD}, must be rotated before the billing cutover.")
        await engine.new_session(KEY)
        got = await engine.recall(KEY, "What is my database password?")
        assert not any(PASSWORD in r.text for r in got), _show(got)
        found = await engine.search(PASSWORD)
        assert found.hits == [], [h.line for h in found.hits]
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# Promises attacked that held (regression tests)
# ---------------------------------------------------------------------------------------------------

async def test_holds_a_rule_and_a_fact_in_one_message_keeps_the_fact_recallable() -> None:
    # README: "a turn that says only what the session state already says … is not recalled again"; a turn
    # that says more (a rule and a fact in one message) is still recalled.
    said = "Do not use Redis anywhere in the billing migration. The billing cutover window is Sunday 02:00 UTC."
    block, got = await _recalled_after_new([said], "When is the billing cutover window?")
    assert "Do not use Redis anywhere" in block
    assert any("Sunday 02:00" in r.text for r in got), _show(got)


async def test_holds_rule_cleared_or_reset_is_recalled_again_edited_rule_is_not_lost() -> None:
    # README: "/reset and idle expiry end them"; "after /reset the turn may be recalled again"; a rule
    # cleared with /state clear is no longer held by the state, so its turn comes back.
    rule = "Do not use Redis anywhere in the billing migration."
    q = "Can we use Redis in the billing migration?"
    engine = _engine()
    try:
        await _say(engine, rule)
        await engine.new_session(KEY)
        assert await engine.recall(KEY, q) == []
        r = await dispatch(engine, KEY, "/state set constraints Do not use Kafka")
        assert not r.error and "Redis" in engine.state.block(KEY)
        assert await engine.recall(KEY, q) == []  # the state still holds it
        await engine.new_session(KEY)  # a second /new carries it again
        assert "Redis" in engine.state.block(KEY) and await engine.recall(KEY, q) == []
        r = await dispatch(engine, KEY, "/state clear constraints")
        assert not r.error and "Redis" not in engine.state.block(KEY)
        assert any(r.text == rule for r in await engine.recall(KEY, q))
    finally:
        await engine.aclose()


async def test_holds_expired_preference_turn_is_recalled_again() -> None:
    # README: entries carried by /new "expire as they would have"; once expired the state no longer holds
    # it, so the turn is not lost everywhere.
    clock = Clock(START)
    engine = _engine(clock)
    try:
        await _say(engine, "For 2 hours, answer in French about the billing migration.")
        await engine.new_session(KEY)
        assert "answer in French" in engine.state.block(KEY)
        clock.advance(hours=3)
        assert engine.state.block(KEY) == ""
        got = await engine.recall(KEY, "Which language should you answer in about the billing migration?")
        assert any("answer in French" in r.text for r in got), _show(got)
    finally:
        await engine.aclose()


async def test_holds_compaction_then_new_relabels_this_conversation_as_history() -> None:
    # README: "this conversation: turns of the current conversation that compaction moved out of the
    # window"; "history: other sessions' transcripts, quoted with speaker and date".
    engine = _engine()
    try:
        await _say(engine, "The billing backup copies go to the cold-vault bucket in eu-west.")
        await _compact(engine)
        q = "Where do the billing backup copies go?"
        got = await engine.recall(KEY, q)
        assert [r.kind for r in got if "cold-vault" in r.text] == ["conversation"], _show(got)
        await engine.new_session(KEY)
        got = await engine.recall(KEY, q)
        assert [(r.kind, r.speaker) for r in got if "cold-vault" in r.text] == [("history", "user")], _show(got)
        text = _recall_section(await engine.build(KEY, q, recall=got))
        assert '<recalled-memory kind="history"' in text and "user said on 2026-03-02 12:00: The billing" in text
        r = await dispatch(engine, KEY, "/recall billing backup copies")
        assert "history · user, 2026-03-02 12:00" in r.text and "this conversation" not in r.text
    finally:
        await engine.aclose()


async def test_holds_announced_password_is_redacted_in_recall_state_and_search() -> None:
    # README, Secrets: "A password or security answer sent on its own right after a message announcing it
    # … is redacted too"; compaction summaries, the memory search index and the full-text index included.
    engine = _engine()
    try:
        await _say(engine, "My staging database password is in the next message.")
        await _say(engine, PASSWORD)
        await _compact(engine)
        summary, _ = engine.summary_of(KEY)
        assert PASSWORD not in summary and PASSWORD not in engine.state.block(KEY)
        got = await engine.recall(KEY, "What is the staging database password?")
        assert got and not any(PASSWORD in r.text for r in got), _show(got)
        await engine.new_session(KEY)
        got = await engine.recall(KEY, "What is the staging database password?")
        assert not any(PASSWORD in r.text for r in got), _show(got)
        assert (await engine.search(PASSWORD)).hits == []
        assert PASSWORD not in (await dispatch(engine, KEY, f"/recall {PASSWORD}")).text
    finally:
        await engine.aclose()


async def test_holds_plain_thanks_and_ok_recall_nothing() -> None:
    # README: "a message about nothing remembered recalls nothing, so the context spends no tokens on
    # recall" (also with the assistant's replies in history recall).
    engine = _engine(recall_history="all")
    try:
        await _say(engine, "hi", "Hello! How can I help?")
        await _say(engine, "The billing cutover window is Sunday 02:00 UTC.")
        await _say(engine, "thanks!", "Glad to help.")
        await engine.new_session(KEY)
        for message in ("hi", "thanks!", "ok", "ok thanks", "yes", "sounds good", "Спасибо!"):
            assert await engine.recall(KEY, message) == [], message
    finally:
        await engine.aclose()
