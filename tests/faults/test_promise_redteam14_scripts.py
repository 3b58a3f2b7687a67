"""Red team 14 (session 14, a helper briefed only with the README): the auto-recall floor across scripts.

(a) unrelated everyday history + a question about something else must recall nothing;
(b) a fact in MEMORY.md + a question about it (same or other language) must recall it.
Harness: recall_support.py (shared with red team 3). 22 findings of (b) hold since a line of a file passage
in another script than the message is judged by itself (``MemoryService._judge_by_statement``); their
comments say what they were. Cases marked ``_OPEN`` are findings not fixed yet
(strict expected failures: a fix turns them into passes and this file must then be updated); the
README's known limit in "What it remembers" says what they mean for a user.
"""

from __future__ import annotations

import pytest

# The harness (and its autouse fixtures: a fresh NEOTASK_HOME, memory on) is shared with red team 3.
from tests.faults.recall_support import _memory, _memory_on, _recalled_in_new_session, neotask_home

__all__ = ["_memory_on", "neotask_home"]  # fixtures used by pytest through this module's namespace

_OPEN = pytest.mark.xfail(strict=True, reason=(
    "known, not fixed (red team 14): a Thai thank-you has content terms and is close to Thai chatter"))


def _id(case: object) -> str:
    return str(case.values[0] if hasattr(case, "values") else case[0])  # type: ignore[index]


def _show(got: list) -> list:
    return [(r.kind, round(r.score, 3), r.text[:60]) for r in got]


# ---------------------------------------------------------------------------------------------------
# (a) history about unrelated everyday things, then a message about something else: recall nothing.
# ---------------------------------------------------------------------------------------------------
ZH = ("我妹妹下周末带着她的狗来看我。", "今天午饭吃了一碗拉面，加了一个鸡蛋。", "早上的地铁晚点了二十分钟。")
JA = ("来週末、妹が犬を連れて遊びに来ます。", "今日のお昼はラーメンに卵を追加しました。",
      "今朝の電車は二十分遅れました。")
KO = ("다음 주말에 여동생이 강아지를 데리고 온다.", "오늘 점심은 계란을 추가한 라면이었다.",
      "오늘 아침 지하철이 이십 분 늦었다.")
TH = ("น้องสาวของฉันจะพาสุนัขมาเยี่ยมสุดสัปดาห์หน้า", "วันนี้กินราเมนใส่ไข่เป็นมื้อกลางวัน", "รถไฟเช้านี้มาช้ายี่สิบนาที")
HI = ("मेरी बहन अगले सप्ताहांत अपने कुत्ते के साथ आ रही है।", "आज दोपहर के खाने में अंडे वाला रामेन खाया।",
      "आज सुबह ट्रेन बीस मिनट देर से आई।")
AR = ("أختي ستزورني نهاية الأسبوع القادم مع كلبها.", "تناولت اليوم على الغداء طبق رامن مع بيضة.",
      "تأخر القطار هذا الصباح عشرين دقيقة.")
HE = ("אחותי מגיעה בסוף השבוע הבא עם הכלב שלה.", "היום אכלתי לצהריים ראמן עם ביצה.", "הרכבת הבוקר איחרה בעשרים דקות.")
EL = ("Η αδερφή μου έρχεται το επόμενο Σαββατοκύριακο με τον σκύλο της.", "Σήμερα έφαγα ράμεν με αυγό για μεσημεριανό.",
      "Το τρένο σήμερα το πρωί άργησε είκοσι λεπτά.")
RU = ("Сестра приедет в следующие выходные со своей собакой.", "Сегодня на обед был рамен с яйцом.",
      "Утром электричка опоздала на двадцать минут.")
UK = ("Сестра приїде наступних вихідних зі своїм собакою.", "Сьогодні на обід був рамен з яйцем.",
      "Зранку електричка запізнилася на двадцять хвилин.")
EN = ("My sister is visiting next weekend with her dog.", "Lunch today was a bowl of ramen with extra egg.",
      "The train this morning was twenty minutes late.")

NOTHING = [  # controls pass; FINDING lines fail
    ("zh-greeting", ZH, "你好"),
    ("ko-hello", KO, "안녕하세요"),
    ("th-capital", TH, "เมืองหลวงของออสเตรเลียคืออะไร"),
    # FINDING: recalls history "น้องสาวของฉัน…" score 0.196
    pytest.param("th-thanks", TH, "ขอบคุณครับ", marks=_OPEN),
    ("uk-capital", UK, "Яка столиця Австралії?"),
    ("en-ok", EN, "ok?"),
    ("emoji-laugh", ZH, "😂😂😂"),
    ("code-py", EN, "def add(a, b):\n    return a - b\n\nwhy does add(2, 3) return -1?"),
    ("mixed-zh-en", EN, "我想学习 Python 的 async/await，有什么好教程？"),
    ("cross-zh-hist-en-msg", ZH, "How do I reset my router?"),
]


@pytest.mark.parametrize("case, history, message", NOTHING, ids=[_id(c) for c in NOTHING])
async def test_nothing_remembered_recalls_nothing(case: str, history: tuple[str, ...], message: str) -> None:
    got = await _recalled_in_new_session(message, history)
    assert got == [], _show(got)


# ---------------------------------------------------------------------------------------------------
# (b) a fact in MEMORY.md and a question about it: recall it (same language or another).
# ---------------------------------------------------------------------------------------------------
DISTRACTOR = ("Мы деплоим по четвергам.", "The office plants are watered on Fridays.")

FACTS = [  # all hold since a line in another script than the message is judged by itself
    ("zh-zh-plate", "我的车牌号是京A12345。", "我的车牌是多少？"),
    # was a finding: recalls nothing
    ("zh-en-allergy", "我对花生过敏。", "Am I allergic to anything?"),
    # was a finding: recalls nothing (in a 3-line MEMORY.md)
    ("ja-en-allergy", "私はピーナッツアレルギーです。", "Am I allergic to anything?"),
    # was a finding: recalls nothing
    ("ko-en-allergy", "나는 땅콩 알레르기가 있다.", "Am I allergic to anything?"),
    # was a finding: recalls nothing
    ("th-en-allergy", "ฉันแพ้ถั่วลิสง", "Am I allergic to anything?"),
    # was a finding: recalls nothing
    ("hi-en-allergy", "मुझे मूंगफली से एलर्जी है।", "Am I allergic to anything?"),
    # was a finding: recalls nothing
    ("he-en-allergy", "אני אלרגי לבוטנים.", "Am I allergic to anything?"),
    # was a finding: recalls nothing
    ("el-en-allergy", "Είμαι αλλεργικός στα φιστίκια.", "Am I allergic to anything?"),
    # was a finding: recalls nothing
    ("ar-en-allergy", "أعاني من حساسية من الفول السوداني.", "Am I allergic to anything?"),
    # was a finding: recalls nothing (in a 3-line MEMORY.md; also with the ru line only)
    ("uk-en-allergy", "У мене алергія на арахіс.", "Am I allergic to anything?"),
    ("en-zh-birthday", "My wife's birthday is on March 3.", "我妻子的生日是哪天？"),
    ("ja-ja-wifi", "会社のWi-Fiのパスワードはsakura2024です。", "Wi-Fiのパスワードは何？"),
    ("en-zh-vpn", "Our VPN server is vpn.example.org.", "VPN 服务器地址是什么？"),
    # was a finding: recalls nothing (also alone)
    ("hi-en-car", "मेरी कार नीली होंडा सिटी है।", "What car do I drive?"),
    # was a finding: README's own example; recalls nothing with 2 more lines in MEMORY.md (passes alone: 0.065)
    ("ru-en-allergy", "У меня аллергия на арахис.", "Am I allergic to anything?"),
    # was a finding: recalls nothing
    ("zh-en-allergy2", "我对花生过敏。", "Do I have any food allergies?"),
    # was a finding: recalls nothing
    ("ja-en-allergy2", "私はピーナッツアレルギーです。", "What am I allergic to?"),
    ("uk-en-allergy2", "У мене алергія на арахіс.", "What am I allergic to?"),
    # was a finding: recalls nothing (also alone)
    ("zh-en-plate", "我的车牌号是京A12345。", "What is my licence plate number?"),
    ("ja-en-wifi", "会社のWi-Fiのパスワードはsakura2024です。", "What is the office Wi-Fi password?"),
    ("th-en-cat", "แมวของฉันชื่อมะลิ", "What is my cat's name?"),
]


@pytest.mark.parametrize("case, fact, message", FACTS, ids=[_id(c) for c in FACTS])
async def test_a_remembered_fact_is_recalled_by_a_question_about_it(case: str, fact: str, message: str) -> None:
    await _recalls(fact, message, DISTRACTOR)


async def _recalls(fact: str, message: str, others: tuple[str, ...]) -> None:
    """``message``, in a fresh session, recalls ``fact`` from a MEMORY.md of ``fact`` and ``others``."""
    _memory(fact, *others)
    got = await _recalled_in_new_session(message)
    assert [r.text for r in got if fact in r.text], _show(got)


# ---------------------------------------------------------------------------------------------------
# (b2) the same cross-language questions with the fact alone in MEMORY.md, or with only the Russian
#      line the redteam3 harness uses: does one more (English) line in the same file shut them out?
# ---------------------------------------------------------------------------------------------------
_RU_LINE = ("Мы деплоим по четвергам.",)
ALONE = [  # (case, fact, message, other lines in MEMORY.md)
    ("ru-en-allergy", "У меня аллергия на арахис.", "Am I allergic to anything?", ()),
    ("ru-en-allergy+ru", "У меня аллергия на арахис.", "Am I allergic to anything?", _RU_LINE),
    ("uk-en-allergy", "У мене алергія на арахіс.", "Am I allergic to anything?", ()),
    # held since a chunk's dense baseline is the other chunks' mean (a pool of two)
    ("uk-en-allergy+ru", "У мене алергія на арахіс.", "Am I allergic to anything?", _RU_LINE),
    ("ja-en-allergy", "私はピーナッツアレルギーです。", "Am I allergic to anything?", ()),
    ("ja-en-allergy+ru", "私はピーナッツアレルギーです。", "Am I allergic to anything?", _RU_LINE),
    ("zh-en-allergy", "我对花生过敏。", "Am I allergic to anything?", ()),
    ("zh-en-allergy+ru", "我对花生过敏。", "Am I allergic to anything?", _RU_LINE),
    ("el-en-allergy", "Είμαι αλλεργικός στα φιστίκια.", "Am I allergic to anything?", ()),
    ("el-en-allergy+ru", "Είμαι αλλεργικός στα φιστίκια.", "Am I allergic to anything?", _RU_LINE),
    ("zh-en-plate", "我的车牌号是京A12345。", "What is my licence plate number?", ()),
    ("zh-en-plate+ru", "我的车牌号是京A12345。", "What is my licence plate number?", _RU_LINE),
    ("hi-en-car", "मेरी कार नीली होंडा सिटी है।", "What car do I drive?", ()),
    ("hi-en-car+ru", "मेरी कार नीली होंडा सिटी है।", "What car do I drive?", _RU_LINE),
]


@pytest.mark.parametrize("case, fact, message, others", ALONE, ids=[_id(c) for c in ALONE])
async def test_a_remembered_fact_alone_is_recalled(case: str, fact: str, message: str,
                                                    others: tuple[str, ...]) -> None:
    """The same cross-language questions with the fact alone in MEMORY.md, or with one Russian line."""
    await _recalls(fact, message, others)


# ---------------------------------------------------------------------------------------------------
# (c) the line-by-line judgement's own risk (not the red team's cases): a MEMORY.md of notes in many
#     scripts is judged line by line for every message in another script, so each of its lines is one
#     more chance of a false match. Messages about nothing in it recall nothing; the cross-language
#     questions it answers are found.
# ---------------------------------------------------------------------------------------------------
BABEL = ("我对花生过敏。", "私はピーナッツアレルギーです。", "У меня аллергия на арахис.", "Мы деплоим по четвергам.",
         "The office plants are watered on Fridays.", "我的车牌号是京A12345。", "मेरी कार नीली होंडा सिटी है।")
_ZH_POEM = pytest.mark.xfail(strict=True, reason=(
    "known, not fixed (found with the line-by-line judgement, not caused by it: the passage alone scores "
    "0.32): a Chinese message is measured against the mixed references for a passage of mostly Latin and "
    "Cyrillic letters, which it is far from, so the passage clears the floor"))


@pytest.mark.parametrize("message", [
    "Write a poem about autumn.", "What is the capital of Australia?", "How do I reset my router?",
    "Tell me a joke about cats.", "How much is two plus two?", "Explain Python decorators.",
    "Напиши стихотворение про осень.", "Какая столица Австралии?", "Как перезагрузить роутер?",
    pytest.param("写一首关于秋天的诗。", marks=_ZH_POEM)])
async def test_a_many_script_memory_recalls_nothing_for_a_message_about_something_else(message: str) -> None:
    _memory(*BABEL)
    got = await _recalled_in_new_session(message)
    assert got == [], _show(got)


@pytest.mark.parametrize("message", ["Am I allergic to anything?", "What car do I drive?", "When do we deploy?"])
async def test_a_many_script_memory_answers_questions_in_another_language(message: str) -> None:
    _memory(*BABEL)
    assert await _recalled_in_new_session(message), message


FOUR_FACTS = ("The office plants are watered on Fridays.", "We deploy on Thursdays.",
              "The staging database host is stage-db.internal on port 6432.", "I prefer tea over coffee.")
_SAME_SCRIPT = pytest.mark.xfail(strict=True, reason=(
    "known, not fixed (README's known limits): a line in the message's own script is judged only as part of "
    "its passage, and a Russian question about an English note is far from it on e5"))


@pytest.mark.parametrize("message, fact", [
    ("Which day do we deploy?", "We deploy on Thursdays."),  # holds: a shared word
    pytest.param("What do I like to drink?", "I prefer tea over coffee.", marks=_SAME_SCRIPT),
    pytest.param("В какой день мы деплоим?", "We deploy on Thursdays.", marks=_SAME_SCRIPT)])
async def test_a_fact_among_others_in_the_messages_own_script(message: str, fact: str) -> None:
    """The README's known limits, as cases: dilution in the message's own script stays."""
    await _recalls(fact, message, tuple(x for x in FOUR_FACTS if x != fact))

