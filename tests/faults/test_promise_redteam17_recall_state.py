"""Red team 17 (a helper briefed only with the README): recall against session state after `/new`, `/compact`
and `/fork`, passwords in prose through every input path, and "a message about nothing recalls nothing".

Each ``test_finding_*`` asserts what the README promises and failed on the code it was written against (all
hold since, but "пожалуйста, без эмодзи в …": a strict expected failure, a README known limit); each
``test_holds_*`` is a promise that was attacked and held (a regression test).

Real engine, real embedding models and the memory store on a tmp NEOTASK_HOME, the scripted provider for
replies, a frozen clock.
"""

from __future__ import annotations

import pytest

from neotask_tui.commands import dispatch
from neotask_tui.engine.context.assembly import RecallItem
from neotask_tui.engine.facade import Engine
from tests.doubles import scripted
from tests.faults.recall_support import _memory, _memory_on, neotask_home
from tests.faults.state_recall_support import KEY, state_engine
from tests.faults.state_recall_support import compact_away as _compact
from tests.faults.state_recall_support import say as _say
from tests.faults.state_recall_support import section as _section
from tests.faults.state_recall_support import show as _show

__all__ = ["_memory_on", "neotask_home"]  # autouse fixtures, used by pytest through this module's namespace

pytestmark = pytest.mark.promise("recall_state")

PW = "Tr0ub4dor&3xyz"


def _engine(recall_history: str = "user") -> Engine:
    return state_engine(recall_history=recall_history)


async def _sent_recall(engine: Engine, q: str) -> tuple[list[RecallItem], str]:
    """What ``q`` recalls and the recall section of the context the call would send."""
    got = await engine.recall(KEY, q)
    return got, _section(await engine.build(KEY, q, recall=got), "recall")


async def _after_new(said: list[str], q: str, cmds: tuple[str, ...] = ()) -> tuple[str, list[RecallItem], str]:
    """Say ``said``, run ``cmds``, ``/new``; return the carried state block, the recall and the sent recall."""
    engine = _engine()
    try:
        for text in said:
            await _say(engine, text)
        for c in cmds:
            assert not (await dispatch(engine, KEY, c)).error, c
        await engine.new_session(KEY)
        got, sent = await _sent_recall(engine, q)
        return engine.state.block(KEY), got, sent
    finally:
        await engine.aclose()


async def _password_paths(shape: str, q: str) -> dict[str, bool]:
    """Send ``shape`` as a message and as "Remember: …", use it in /goal and /state set, compact (the scripted
    summarizer echoes it), /new; return where the password came back unredacted."""
    engine = _engine()
    try:
        await _say(engine, shape)
        await _say(engine, f"Remember: {shape}")
        goal = await dispatch(engine, KEY, f"/goal {shape}")
        st = await dispatch(engine, KEY, f"/state set notes {shape}")
        inbox = await dispatch(engine, KEY, "/inbox")
        for i in range(4):
            await _say(engine, f"Unrelated note number {i} about the weather and lunch plans.")
        scripted(engine).queue(f"## Goal\n- {shape} [e:2]")
        await engine.compact(KEY)
        summary, _ = engine.summary_of(KEY)
        block = engine.state.block(KEY)
        await engine.new_session(KEY)
        got, sent = await _sent_recall(engine, q)
        hits = (await engine.search(PW)).hits
        return {"/goal": PW in goal.text, "/state set": PW in st.text, "inbox": PW in inbox.text,
                "summary": PW in summary, "state block": PW in block,
                "carried state": PW in engine.state.block(KEY), "recall": any(PW in r.text for r in got),
                "sent recall": PW in sent, "search index": bool(hits)}
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# Findings (fail on the current code)
# ---------------------------------------------------------------------------------------------------

async def test_finding_russian_password_kotoryj_leaks_everywhere() -> None:
    # README, Secrets: "Before anything derived from your conversation is stored outside the transcript,
    # secrets are replaced with [REDACTED:<kind>]: … passwords written in English or Russian prose (… "the
    # password, which is …" …)"; "This applies to … the promotion inbox, session state (values, reasons …),
    # compaction summaries, the memory search index …, the full-text search index".
    # Input: "Мой пароль, который Tr0ub4dor&3xyz, нужно сменить до миграции биллинга." (the Russian "the
    # password, which is …"). The English shape is redacted on every path (see the holds below); the Russian
    # one is kept in /goal, /state set, the inbox ("all criteria met"), the summary, the carried state, the
    # search index and history recall ("Какой у меня пароль?" quotes it to the model).
    leaks = await _password_paths(f"Мой пароль, который {PW}, нужно сменить до миграции биллинга.",
                                  "Какой у меня пароль?")
    assert not any(leaks.values()), leaks


async def test_finding_russian_password_ostaetsya_leaks_everywhere() -> None:
    # README, Secrets: passwords "written in English or Russian prose (… "the password stays …" …)" are
    # replaced with [REDACTED:<kind>] in the inbox, session state, compaction summaries, the memory search
    # index and the full-text search index.
    # Input: "Пароль остаётся Tr0ub4dor&3xyz до миграции биллинга." (Russian "the password stays …"): kept
    # on every path; "The staging database password stays/remains …" is redacted everywhere.
    leaks = await _password_paths(f"Пароль остаётся {PW} до миграции биллинга.", "Какой пароль до миграции биллинга?")
    assert not any(leaks.values()), leaks


@pytest.mark.xfail(strict=True, reason="known (red team 17): a bare 'без …' names at most two words (so "
                                       "descriptions are not rules); README, Session state")
async def test_finding_pozhalujsta_bez_emoji_with_an_object_is_no_session_rule() -> None:
    # README, Session state: '"please stop using emojis", "перестань использовать эмодзи", "пожалуйста, без
    # эмодзи" are session rules'; README, Three kinds of recall: "a turn that says only what the session state
    # already says (a rule you stated, carried over by /new) is not recalled again, the state holds it".
    # Input: "Пожалуйста, без эмодзи в заметках по биллингу." then /new: the state holds no rule at all (the
    # English "Please, no emojis in the billing notes." and "Перестань использовать эмодзи в заметках по
    # биллингу." both make one), and the turn comes back as history (0.99).
    block, got, _ = await _after_new(["Пожалуйста, без эмодзи в заметках по биллингу."],
                                     "Можно ли эмодзи в заметках по биллингу?")
    assert "без эмодзи" in block, block
    assert not any("эмодзи" in r.text for r in got), _show(got)


async def test_finding_rule_of_an_edited_away_message_stays_in_the_state_and_is_carried() -> None:
    # README, Retry and edit: "/edit … replaces your last message and answers it; … A superseded marker …
    # lists the events it replaces. They stay in the transcript … and are left out of the context, the
    # compaction input and summary, and the recall index." README, What it remembers: "every call is assembled
    # from the system prompt, the session-state block, …".
    # Input: "Do not use Redis in the billing service." then /edit "Do not use Kafka in the billing service.":
    # the replaced message's rule stays in the session-state block (so in every call's context) beside the new
    # one, and /new carries it on; the replaced turn itself is (rightly) gone from recall.
    engine = _engine()
    try:
        await _say(engine, "Do not use Redis in the billing service.")
        scripted(engine).queue("ok")
        async for _ in engine.edit_last("Do not use Kafka in the billing service.", KEY):
            pass
        assert "Do not use Kafka" in engine.state.block(KEY)
        ctx = await engine.build(KEY, "Which cache should the billing service use?", recall=[])
        assert "Redis" not in _section(ctx, "state") and "Redis" not in engine.state.block(KEY), \
            engine.state.block(KEY)
    finally:
        await engine.aclose()


async def _quick_paths(shape: str, secret: str = PW) -> dict[str, str]:
    """``shape`` as a message, in /goal and /state set: what the state and the search index keep."""
    engine = _engine()
    try:
        await _say(engine, shape)
        goal = await dispatch(engine, KEY, f"/goal {shape}")
        st = await dispatch(engine, KEY, f"/state set notes {shape}")
        hits = (await engine.search(secret)).hits
        return {k: v for k, v in {"/goal": goal.text, "/state set": st.text,
                                  "search index": "; ".join(h.line for h in hits)}.items() if secret in v}
    finally:
        await engine.aclose()


async def test_finding_russian_po_prezhnemu_redacts_the_wrong_word() -> None:
    # README, Secrets: passwords "written in English or Russian prose" are replaced with [REDACTED:<kind>] in
    # session state and the full-text search index.
    # Input: "Пароль по-прежнему Tr0ub4dor&3xyz." ("the password is still …"): /goal stores "Пароль
    # [REDACTED:password] Tr0ub4dor&3xyz." — the adverb is taken for the value, the password is kept.
    assert await _quick_paths(f"Пароль по-прежнему {PW}.") == {}


@pytest.mark.parametrize(("shape", "secret"), [
    (f"The admin password will stay {PW} for now.", PW),
    (f"The password remains unchanged at {PW}.", PW),
    (f"Password stays the same: {PW}.", PW),
    (f"My password, which has always been {PW}, works.", PW),
    ("The door PIN, which is 4821, opens the server room.", "4821"),
    ("The lab PIN, which I forgot twice, is 4821 since Monday.", "4821"),  # an aside before a PIN (session 17)
])
async def test_finding_english_stays_which_is_variants_leak(shape: str, secret: str) -> None:
    # README, Secrets: passwords in English prose ("the password, which is …", "the password stays …", "an
    # aside … between the word and the value") and "PINs, door codes … after a cue word" are replaced with
    # [REDACTED:<kind>] in session state and the full-text search index.
    # Input: these shapes ("will stay", "remains unchanged at", "stays the same:", "which has always been",
    # "the PIN, which is"): kept verbatim by /goal, /state set and the search index ("stays", "remains",
    # "which is", "which was" are redacted).
    assert await _quick_paths(shape, secret) == {}


@pytest.mark.parametrize(("shape", "secret"), [
    (f"Пароль остался {PW}.", PW),
    (f"Пароль был {PW}, теперь другой.", PW),
    (f"Пароль не меняется: {PW}.", PW),
    (f"Пароль сохраняется: {PW}.", PW),
    (f"Пароль, который был {PW}, сменили.", PW),
    ("Код от двери остаётся 4821.", "4821"),
])
async def test_finding_russian_stays_was_variants_leak(shape: str, secret: str) -> None:
    # README, Secrets: passwords "written in English or Russian prose" ("the password stays …", "the password,
    # which is …") and door codes after a cue word are replaced with [REDACTED:<kind>] in session state and the
    # full-text search index. Input: Russian "остался", "был", "не меняется:", "сохраняется:", "который был",
    # "код от двери остаётся": kept verbatim ("Мой пароль, который я везде использую, — …" is redacted).
    assert await _quick_paths(shape, secret) == {}


# ---------------------------------------------------------------------------------------------------
# Promises attacked that held (regression tests)
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("said", "q", "held"), [
    ("Пожалуйста, не используй Redis в сервисе биллинга.", "Можно ли использовать Redis в сервисе биллинга?",
     "не используй Redis в сервисе биллинга"),
    ("Моя цель — перенести сервис биллинга на PostgreSQL 16.", "Какая у меня цель для сервиса биллинга?",
     "Goal: перенести сервис биллинга на PostgreSQL 16"),
    ("Пожалуйста, без эмодзи.", "Можно ли эмодзи?", "без эмодзи"),
    ("Do not use Redis in the billing service. Do not use Kafka in the billing service.",
     "Can we use Kafka in the billing service?", "Do not use Kafka in the billing service"),
])
async def test_holds_rules_and_goals_carried_by_new_are_not_recalled(said: str, q: str, held: str) -> None:
    # README: '"моя цель — …" set the current goal', '"пожалуйста, без эмодзи" are session rules'; "a turn that
    # says only what the session state already says … is not recalled again"; checked in the sent context too.
    block, got, sent = await _after_new([said], q)
    assert held in block, block
    assert got == [] and sent == "", _show(got)


@pytest.mark.parametrize(("said", "q"), [
    ('Do not use Redis in the billing service. My colleague wrote "use Kafka for billing events".',
     "What did my colleague say about billing events?"),
    ("Do not use Redis in the billing service. Can you list alternatives for caching?",
     "What caching alternatives are there for the billing service?"),
    ("Do not use Redis in the billing service; ask Priya before changing the cache.",
     "Who should I ask before changing the billing cache?"),
    ("```\nDo not use Redis in the billing service.\n```", "Can we use Redis in the billing service?"),
])
async def test_holds_turn_saying_more_than_the_state_is_recalled(said: str, q: str) -> None:
    # README: only "a turn that says only what the session state already says" is left out; a rule plus a
    # quote, a question or another instruction says more, and a rule in a code block is data (no rule at all).
    block, got, sent = await _after_new([said], q)
    assert "use Kafka" not in block
    assert any(r.text == said for r in got) and said.splitlines()[0] in sent, (block, _show(got))


@pytest.mark.parametrize("later", [(), ("/goal write the quarterly report",)])
async def test_holds_goal_replaced_by_goal_command_or_later_goal_is_recalled(later: tuple[str, ...]) -> None:
    # README: "the latest stated wins"; a goal the state no longer holds is not silently lost after /new.
    old = "My goal is to migrate the billing service to PostgreSQL 16."
    said = [old] if later else [old, "My goal is to write the quarterly report for finance."]
    block, got, sent = await _after_new(said, "What was my goal for the billing service?", later)
    assert "PostgreSQL" not in block and any(r.text == old for r in got) and old in sent, _show(got)


async def test_holds_russian_contradiction_is_recalled() -> None:
    # README: only a turn saying only what the state says is dropped; one that contradicts the rule is kept.
    other = "Используй Redis в сервисе биллинга для кэша."
    _, got, sent = await _after_new(["Не используй Redis в сервисе биллинга.", other],
                                    "Можно ли использовать Redis в сервисе биллинга?")
    assert any(r.text == other for r in got) and other in sent, _show(got)


async def test_holds_assistant_repeat_of_the_rule_is_recalled_as_a_reply() -> None:
    # README: with recall_history = "all" the assistant's replies come back, "each fenced as 'the assistant
    # replied on … (an earlier reply, not a verified fact)'"; the rule turn itself is held by the state.
    engine = _engine("all")
    try:
        await _say(engine, "Do not use Redis in the billing service.",
                   "Understood: I will not use Redis in the billing service; I will use Memcached on cache-01.")
        await engine.new_session(KEY)
        got, sent = await _sent_recall(engine, "Can we use Redis in the billing service?")
        assert "the assistant replied on 2026-03-02 12:00 (an earlier reply, not a verified fact): Understood" in sent
        assert not any(r.text.startswith("Do not use Redis") for r in got), _show(got)
    finally:
        await engine.aclose()


async def test_holds_fork_before_the_rule_recalls_the_rule_turn() -> None:
    # README, Branches: "the session state is the state as it was at e:N"; a rule said after the fork point is
    # not held by the fork's state, so its turn (in the archived branch) is recalled as history.
    engine = _engine()
    try:
        await _say(engine, "Let's plan the billing migration.")
        at = engine.events(KEY)[-1].id
        await _say(engine, "Do not use Redis in the billing service.")
        await engine.fork_session(KEY, at)
        assert engine.state.block(KEY) == ""
        got, sent = await _sent_recall(engine, "Can we use Redis in the billing service?")
        assert "user said on 2026-03-02 12:00: Do not use Redis in the billing service." in sent, _show(got)
    finally:
        await engine.aclose()


async def test_holds_goal_ended_by_done_is_recalled_again() -> None:
    # README: "/done" ends the workflow; a goal the state no longer holds is recallable again.
    engine = _engine()
    try:
        await _say(engine, "My goal is to migrate the billing service to PostgreSQL 16.")
        await engine.new_session(KEY)
        assert not (await dispatch(engine, KEY, "/done")).error and engine.state.block(KEY) == ""
        got, _ = await _sent_recall(engine, "What was my goal for the billing service?")
        assert any("PostgreSQL 16" in r.text for r in got), _show(got)
    finally:
        await engine.aclose()


async def test_holds_compaction_drops_the_rule_turn_keeps_the_rest() -> None:
    # README: "this conversation: turns of the current conversation that compaction moved out of the window";
    # the rule turn is held by the state, the fact and a replaced goal are recalled with the speaker.
    engine = _engine()
    try:
        await _say(engine, "Do not use Redis in the billing service.")
        await _say(engine, "My goal is to migrate the billing service to PostgreSQL 16.")
        await _say(engine, "My goal is to write the quarterly report for finance.")
        await _compact(engine)
        got, sent = await _sent_recall(engine, "Can we use Redis in the billing service?")
        assert not any(r.text.startswith("Do not use Redis") for r in got), _show(got)
        got, sent = await _sent_recall(engine, "What was my goal for the billing service?")
        assert "user: My goal is to migrate the billing service to PostgreSQL 16." in sent, _show(got)
    finally:
        await engine.aclose()


async def test_holds_fork_early_then_compact() -> None:
    # README: "this conversation: turns … that compaction moved out of the window"; "the same text found in two
    # places is one item"; "every recalled turn of this conversation says who spoke".
    engine = _engine()
    try:
        fact = "The nightly backup of the billing database runs on the ops-bastion host."
        await _say(engine, fact, "Noted: the backup host is ops-bastion.")
        at = engine.events(KEY)[-1].id
        await _say(engine, "Let's plan the billing migration.")
        await engine.fork_session(KEY, at)
        q = "Which host runs the nightly backup of the billing database?"
        got, sent = await _sent_recall(engine, q)
        assert "ops-bastion" not in sent, _show(got)
        await _compact(engine)
        got, sent = await _sent_recall(engine, q)
        assert f"user: {fact}" in sent and "assistant: Noted: the backup host is ops-bastion." in sent
        assert sent.count("ops-bastion host") == 1, sent
    finally:
        await engine.aclose()


async def test_holds_fork_of_an_archived_session_does_not_requote_its_window() -> None:
    # README: "An e:N that compaction moved out of the session is found in the archived session that holds it";
    # the fork's own window is not quoted again from the archived copy.
    engine = _engine("all")
    try:
        await _say(engine, "The nightly backup of the billing database runs on the ops-bastion host.",
                   "The backup host is ops-bastion, on port 2222.")
        at = engine.events(KEY)[-1].id
        sid = engine.store.get(KEY).session_id
        await _say(engine, "Let's plan the billing migration.")
        await engine.new_session(KEY)
        await _say(engine, "Something else entirely about gardening.")
        rec = await engine.fork_session(KEY, at, from_session=sid)
        assert rec.parent_session_id == sid
        got, sent = await _sent_recall(engine, "Which host runs the nightly backup of the billing database?")
        assert "ops-bastion" not in sent, _show(got)
    finally:
        await engine.aclose()


@pytest.mark.parametrize("shape", [
    f"The staging database password stays {PW} until the billing cutover.",
    f"The staging database password remains {PW} until the billing cutover.",
    f"My staging pwd, which was {PW}, must be rotated before the billing cutover.",
    f"My database password, which is {PW}, must be rotated before the billing cutover.",
])
async def test_holds_english_password_shapes_are_redacted_on_every_path(shape: str) -> None:
    # README, Secrets: "the password, which is …", "the password stays …" are redacted in the inbox, state,
    # summaries, the memory search index and the full-text index.
    leaks = await _password_paths(shape, "What is the staging database password?")
    assert not any(leaks.values()), leaks


async def test_holds_message_about_nothing_recalls_nothing() -> None:
    # README: "a message about nothing remembered recalls nothing, so the context spends no tokens on recall".
    engine = _engine("all")
    try:
        _memory("I am allergic to peanuts.", "We deploy on Thursdays.")
        await _say(engine, "The billing cutover window is Sunday 02:00 UTC.", "Noted.")
        await _say(engine, "Do not use Redis in the billing service.")
        await engine.new_session(KEY)
        for m in ("Write a haiku about the ocean.", "Напиши рецепт борща.", "What's 17 times 23?",
                  "Translate 'good night' into Spanish.", "Tell me a joke.", "Explain quicksort."):
            got, sent = await _sent_recall(engine, m)
            assert got == [] and sent == "", (m, _show(got))
    finally:
        await engine.aclose()
