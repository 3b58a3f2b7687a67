"""Red team 3: README "What it remembers" (recall kinds, the floor, duplicates, no tokens for nothing).

Real engine, real fastembed model and LanceDB on tmp dirs, the scripted provider for replies.
Run: cd /work/wt/red3 && PYTHONPATH=$PWD /work/main/.venv/bin/python -m pytest -c pyproject.toml \
     --rootdir /tmp/red3-tests /tmp/red3-tests/test_redteam3_recall.py
"""

from __future__ import annotations

import pytest

from neotask_tui.engine import events as ev
from neotask_tui.engine.facade import Engine
from tests.doubles import scripted
from tests.faults.recall_support import (
    KEY,
    _engine,
    _memory,
    _memory_on,
    _recall_section,
    _recalled_in_new_session,
    _say,
    neotask_home,
)

__all__ = ["_memory_on", "neotask_home"]  # autouse fixtures, used by pytest through this module's namespace


BACKUP = "The billing backup copies go to the cold-vault bucket in eu-west."
CHATTER = ["Lunch today was a bowl of ramen with extra egg.", "The train this morning was twenty minutes late.",
           "My sister is visiting next weekend with her dog.", "I finally finished that novel about the lighthouse.",
           "It rained all afternoon so we stayed in and played chess."]
LONG_TALK = [BACKUP, *CHATTER, *(f"{c} Again." for c in CHATTER)]
"""The backup turn among chatter, then the chatter again: enough turns for a compaction."""


async def _compacted(engine: Engine, turns: list[str]) -> None:
    for text in turns:
        await _say(engine, text)
    scripted(engine).queue("## Goal\n- keep notes [e:2]")
    await engine.compact(KEY)
    await engine.recall(KEY, "warm-up")  # loads the memory service and indexes the archive


# ---------------------------------------------------------------------------------------------------
# 1. The relevance floor: "a passage is recalled only when it holds most of your message's words or is
#    close to it in meaning ... — a compacted turn of this conversation also when it holds one distinctive
#    word of your message ..., or ... when it is much closer to your message than the conversation's other
#    turns are".  Chatter about lunch, trains and chess meets none of these for a question about backups.
# ---------------------------------------------------------------------------------------------------
async def test_compacted_chatter_that_clears_no_floor_is_not_recalled() -> None:
    from neotask_tui.engine.compaction.inputs import lineage_events
    from neotask_tui.engine.recall.archive import ArchiveRecall
    from neotask_tui.memory.index.embedder import Embedder
    from neotask_tui.storage.events import without_superseded

    engine = _engine()
    try:
        await _compacted(engine, LONG_TALK)
        q = "Where do the billing backup copies go?"
        events = without_superseded(engine.events(KEY))
        live = {e.id for e in events}
        primary, _ = lineage_events(events, engine.store.events)
        archived = [e for e in primary if e.type == "message" and e.id not in live]
        floor = ArchiveRecall(Embedder()).relevant(archived, q, own=True)
        below = [e.content for e in archived if e.id not in floor and e.role == "user"]
        assert any(c in below for c in CHATTER), "precondition: the chatter is below every floor the README names"
        text = _recall_section(await engine.build(KEY, q, recall=await engine.recall(KEY, q)))
        assert BACKUP in text
        leaked = [c for c in below if c in text]
        assert not leaked, f"turns below the relevance floor were recalled: {leaked}"
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# 2. "a message about nothing remembered recalls nothing, so the context spends no tokens on recall."
#    A plain "спасибо!" / "cheers!" is about nothing remembered; once the conversation said the word once
#    (in a compacted turn), it is treated as a "distinctive word" and then the whole reserve is filled.
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("said, thanks", [
    ("Спасибо, это помогло с бэкапом.", "спасибо!"),
    ("Cheers, that fixed the backup job.", "cheers!"),
])
async def test_a_bare_thank_you_after_compaction_spends_no_recall_tokens(said: str, thanks: str) -> None:
    engine = _engine()
    try:
        await _compacted(engine, [BACKUP, said, *CHATTER, *(f"{c} Again." for c in CHATTER)])
        out = await _say(engine, thanks)
        built = [e for e in out if isinstance(e, ev.ContextBuilt)]
        assert built
        ctx = await engine.build(KEY, thanks, recall=await engine.recall(KEY, thanks))
        assert built[-1].ledger.sections["recall"] == 0, (
            f"{thanks!r} spent {built[-1].ledger.sections['recall']} recall tokens:\n{_recall_section(ctx)[:600]}")
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# 4. The relevance floor in Russian: "a passage is recalled only when it holds most of your message's words
#    or is close to it in meaning (a floor on the embedding similarity...)" and "a message about nothing
#    remembered recalls nothing, so the context spends no tokens on recall."  (The README promises Russian
#    throughout: chat-derived state, dates, stemming.)  Any Cyrillic text clears the cosine floor.
# ---------------------------------------------------------------------------------------------------
FACT = "The staging database host is stage-db.internal on port 6432."
RU_MEMORY = ("Мы деплоим по четвергам.", "Хост базы стейджинга — stage-db.internal, порт 6432.")
RU_HISTORY = ("Моя сестра приезжает в следующие выходные с собакой.", "Вчера шёл дождь, и мы играли в шахматы.")


@pytest.mark.parametrize("message", ["Какая столица Австралии?",
                                     "Напиши стихотворение про осень.",
                                     "Сколько будет два плюс два?"])
async def test_a_russian_question_about_nothing_remembered_recalls_nothing(message: str) -> None:
    _memory(*RU_MEMORY)
    got = await _recalled_in_new_session(message, RU_HISTORY)
    assert got == [], [(r.kind, round(r.score, 3), r.text[:50]) for r in got]


async def test_a_russian_thank_you_spends_no_recall_tokens() -> None:
    _memory(*RU_MEMORY)
    engine = _engine()
    try:
        for text in RU_HISTORY:
            await _say(engine, text)
        await engine.new_session(KEY)
        out = await _say(engine, "Отлично!")
        assert not [e for e in out if isinstance(e, ev.Recalled)]
        built = [e for e in out if isinstance(e, ev.ContextBuilt)]
        assert built and built[-1].ledger.sections["recall"] == 0, built[-1].ledger.sections
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# 5. "Consented memory comes first, before transcripts" — the paragraph names `/recall` and
#    `neotask memory search` among the places the three kinds of recall are shown.  There, under the
#    default recall_history ("user"), an earlier assistant hallucination ranks above the consented fact.
# ---------------------------------------------------------------------------------------------------
HALLUCINATION = "The staging host and port is db-old.example.com:5432, last changed on 2019-03-28."


async def _memory_then_hallucination(engine: Engine) -> None:
    _memory("Staging: stage-db.internal, 6432.")
    await _say(engine, "What is the staging host and port?", HALLUCINATION)
    await engine.new_session(KEY)
    await engine.recall(KEY, "warm-up")  # indexes the archived session


async def test_recall_command_puts_consented_memory_before_transcripts() -> None:
    from neotask_tui.commands import dispatch

    engine = _engine()
    try:
        await _memory_then_hallucination(engine)
        r = await dispatch(engine, KEY, "/recall What is the staging host and port?")
        heads = [b.splitlines()[0] for b in ("\n" + r.text).split("\n**")[1:]]
        kinds = ["memory" if " memory `" in h else "history" for h in heads]
        assert "memory" in kinds and "history" in kinds, heads
        assert kinds.index("memory") < kinds.index("history"), heads
    finally:
        await engine.aclose()


async def test_memory_search_puts_consented_memory_before_transcripts(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse
    import json

    from neotask_tui.cli.memory_cmd import cmd_search

    engine = _engine()
    try:
        await _memory_then_hallucination(engine)
    finally:
        await engine.aclose()
    capsys.readouterr()
    cmd_search(argparse.Namespace(query="What is the staging host and port?", k=8, source=None, scope=None,
                                  agent="main", json=True, session=None))
    kinds = [h["kind"] for h in json.loads(capsys.readouterr().out)]
    assert "memory" in kinds and "history" in kinds, kinds
    assert kinds.index("memory") < kinds.index("history"), kinds


@pytest.mark.parametrize("history, message", [
    (("我妹妹下周末带着她的狗来看我。", "昨天下雨了，我们下了一下午的棋。"), "澳大利亚的首都是哪里？"),
    (("Η αδερφή μου έρχεται το επόμενο Σαββατοκύριακο με τον σκύλο της.", "Χθες έβρεχε και παίξαμε σκάκι."),
     "Ποια είναι η πρωτεύουσα της Αυστραλίας;"),
    (("来週末、妹が犬を連れて遊びに来ます。", "昨日は雨だったので、午後はずっとチェスをしていました。"),
     "オーストラリアの首都はどこですか？"),
    (("다음 주말에 여동생이 강아지를 데리고 온다.", "어제는 비가 와서 오후 내내 체스를 뒀다."),
     "호주의 수도는 어디인가요?"),
    (("أختي ستزورني نهاية الأسبوع القادم مع كلبها.", "أمطرت أمس ولعبنا الشطرنج طوال فترة الظهيرة."),
     "ما هي عاصمة أستراليا؟"),
    (("אחותי מגיעה בסוף השבוע הבא עם הכלב שלה.", "אתמול ירד גשם ושיחקנו שחמט כל אחר הצהריים."),
     "מהי בירת אוסטרליה?"),
    (("मेरी बहन अगले सप्ताहांत अपने कुत्ते के साथ आ रही है।", "कल बारिश हुई और हमने पूरी दोपहर शतरंज खेला।"),
     "ऑस्ट्रेलिया की राजधानी क्या है?"),
])
async def test_a_question_about_nothing_remembered_recalls_nothing_in_other_scripts(
        history: tuple[str, ...], message: str) -> None:
    engine = _engine()
    try:
        for text in history:
            await _say(engine, text)
        await engine.new_session(KEY)
        got = await engine.recall(KEY, message)
        assert got == [], [(r.kind, round(r.score, 3), r.text[:50]) for r in got]
    finally:
        await engine.aclose()


@pytest.mark.parametrize("fact, message", [
    ("我对花生过敏。", "我对什么过敏？"),
    ("私はピーナッツアレルギーです。", "私は何かにアレルギーがありますか？"),
    ("나는 땅콩 알레르기가 있다.", "나는 무엇에 알레르기가 있나요?"),
    ("Είμαι αλλεργικός στα φιστίκια.", "Σε τι είμαι αλλεργικός;"),
    ("أعاني من حساسية من الفول السوداني.", "هل لدي حساسية من شيء؟"),
])
async def test_a_question_in_another_script_still_recalls_the_fact_it_asks_about(fact: str, message: str) -> None:
    """The other side of the floor measured against same-script references: it must not shut out a
    remembered fact in that script (the question shares no word with it in most of these)."""
    _memory(fact, "Мы деплоим по четвергам.")
    engine = _engine()
    try:
        await engine.new_session(KEY)
        got = await engine.recall(KEY, message)
        assert [r.text for r in got if fact in r.text], [(r.kind, round(r.score, 3), r.text[:50]) for r in got]
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# 6. Labels: "this conversation: turns of the current conversation that compaction moved out of the
#    window (its own archived transcripts); history: other sessions' transcripts", "each labelled as such
#    in the context fence (kind=...), the recall sidebar, /recall ...".  A fork continues its parent's
#    conversation (the compaction lineage follows it), but the turn's receipt (the Recalled event that feeds
#    the recall sidebar) calls the fork's own compacted turn "history" while the fence calls it "this
#    conversation".
# ---------------------------------------------------------------------------------------------------
async def test_a_forks_own_compacted_turn_is_labelled_this_conversation_everywhere() -> None:
    engine = _engine()
    try:
        await _compacted(engine, LONG_TALK)
        await _say(engine, "One more note after the compaction.")
        await engine.fork_session(KEY)  # at the last message: the same conversation, branched
        await engine.recall(KEY, "warm-up")  # (without the fork the receipt says "conversation")
        q = "Where do the billing backup copies go?"
        out = await _say(engine, q)
        ctx = await engine.build(KEY, q, recall=await engine.recall(KEY, q))
        fence = _recall_section(ctx)
        assert 'kind="this conversation"' in fence and "cold-vault" in fence
        receipts = [(i.kind, i.speaker) for e in out if isinstance(e, ev.Recalled) for i in e.items
                    if "cold-vault" in i.text]
        assert all(k == "conversation" for k, _ in receipts), receipts
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# 7. (arguable) Secrets: "Before anything derived from your conversation is stored outside the transcript,
#    secrets are replaced with [REDACTED:<kind>] ... the memory search index (archived transcripts ...) ...
#    and what the memory tools return to the model."  The memory service's recall of a compacted turn is
#    redacted (its receipt says [REDACTED:password]), but the "this conversation" fence sent to the model
#    (and shown by /context) swaps it for the raw archived transcript line, password included.
# ---------------------------------------------------------------------------------------------------
SECRET = "The billing backup bucket password is Tr0ub4dor-zebra-99, keep it safe."


async def test_a_recalled_compacted_turn_reaches_the_model_redacted_like_its_receipt() -> None:
    engine = _engine()
    try:
        await _compacted(engine, [BACKUP, SECRET, *CHATTER, *(f"{c} Again." for c in CHATTER)])
        q = "What is the billing backup bucket password?"
        recall = await engine.recall(KEY, q)
        receipt = next(r for r in recall if "bucket password" in r.text)
        assert "[REDACTED:password]" in receipt.text and "Tr0ub4dor" not in receipt.text
        fence = _recall_section(await engine.build(KEY, q, recall=recall))
        assert "bucket password" in fence
        assert "Tr0ub4dor" not in fence, next(ln for ln in fence.splitlines() if "Tr0ub4dor" in ln)
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# 8. Forgetting: "forgetting an archived message also re-indexes the messages next to it ... The
#    transcripts themselves ... are not edited, so `neotask search` still finds a forgotten message there;
#    it is never recalled again."  A forgotten compacted turn of this conversation comes back in the
#    "this conversation" fence (read from the raw archived transcript).
# ---------------------------------------------------------------------------------------------------
async def test_a_forgotten_compacted_turn_is_never_recalled_again() -> None:
    engine = _engine()
    try:
        await _compacted(engine, LONG_TALK)
        q = "Where do the billing backup copies go?"
        before = _recall_section(await engine.build(KEY, q, recall=await engine.recall(KEY, q)))
        assert "cold-vault" in before
        assert engine.memory is not None
        receipt = engine.memory.forget("main", "cold-vault bucket")
        assert receipt is not None
        recall = await engine.recall(KEY, q)
        assert not any("cold-vault" in r.text for r in recall)  # the memory service forgot it
        after = _recall_section(await engine.build(KEY, q, recall=recall))
        assert "cold-vault" not in after, after
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# 9. Silencing: "recalled with receipts you can open, forget or silence" (recall sidebar `n`: never recall
#    here; the app says "won't be recalled again in this session").  Silencing the receipt of a compacted
#    turn (what the sidebar does: its id into the session's never_recall) does not keep the turn out of the
#    "this conversation" fence.
# ---------------------------------------------------------------------------------------------------
async def test_a_silenced_compacted_turn_is_not_recalled_in_this_session() -> None:
    engine = _engine()
    try:
        await _compacted(engine, LONG_TALK)
        q = "Where do the billing backup copies go?"
        out = await _say(engine, q)
        receipts = [i for e in out if isinstance(e, ev.Recalled) for i in e.items if "cold-vault" in i.text]
        assert receipts, "the sidebar shows a receipt for the backup turn"
        rec = engine.current_record(KEY)
        await engine.set_session_config(KEY, never_recall=[*rec.config.get("never_recall", []),
                                                           *(i.id for i in receipts)])  # as the sidebar's `n`
        recall = await engine.recall(KEY, q)
        assert not any("cold-vault" in r.text for r in recall)  # the memory service honours it
        fence = _recall_section(await engine.build(KEY, q, recall=recall))
        assert "cold-vault" not in fence, fence[:700]
    finally:
        await engine.aclose()


# ---------------------------------------------------------------------------------------------------
# 10. (minor) The preview: "The preview is read-only: it indexes nothing and writes nothing; when the next
#     call would first index something (changed memory files, archived sessions not indexed yet) it says
#     so."  Right after /new (no message to recall for yet) the view names the archived session waiting
#     to be indexed but not the memory file changed since it was indexed.
# ---------------------------------------------------------------------------------------------------
async def test_preview_after_new_says_a_changed_memory_file_will_be_indexed() -> None:
    _memory("We deploy on Thursdays.")
    engine = _engine()
    try:
        await _say(engine, "When do we deploy?")  # indexes MEMORY.md
        await engine.new_session(KEY)
    finally:
        await engine.aclose()
    _memory("We deploy on Thursdays.", "The staging database host is stage-db.internal on port 6432.")
    engine = _engine()
    try:
        with_draft = await engine.preview(KEY, "Which host is staging on?")
        assert "MEMORY.md" in with_draft.recall_note  # control: with a draft it is named
    finally:
        await engine.aclose()
    engine = _engine()
    try:
        ctx = await engine.preview(KEY)
        assert ctx.recall_basis == "none"
        assert "archived session" in ctx.recall_note  # the other pending index is named...
        assert "MEMORY.md" in ctx.recall_note, ctx.recall_note  # ...the changed memory file is not
    finally:
        await engine.aclose()
