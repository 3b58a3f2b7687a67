# ruff: noqa: E501  (the cases are sentences in many scripts, kept one per line as the red team wrote them)
"""Red team 15 (session 15, a helper briefed only with the README): the auto-recall floor once a line
of a memory file in another script than the message is judged by itself.

What it found in the first version of that change and is fixed (these cases hold): a line of digits,
code, a URL or an escape sequence, judged by itself against the mixed references, made a greeting
in another script recall the whole file (A); a file of headings, "ok" or zero-width lines counted
its heading's word as content (F). Open findings are strict expected failures, each with its reason;
the README's known limits in "What it remembers" say what they mean for a user.
"""

from __future__ import annotations

import pytest

from neotask_tui import paths
from neotask_tui.engine.context.assembly import RecallItem
from tests.faults.recall_support import _memory, _memory_on, _recalled_in_new_session, neotask_home

__all__ = ["_memory_on", "neotask_home"]  # autouse fixtures, used by pytest through this module's namespace

def _known(finding: str, why: str) -> pytest.MarkDecorator:
    """A finding not fixed: a strict expected failure (a fix makes it pass, and this file must follow)."""
    return pytest.mark.xfail(strict=True, reason=f"known (red team 15, {finding}): {why}")


_JUDGED_ALONE = _known("B", "a line in another script than the message, judged by itself, is one more chance of "
                       "a false match; a cross-language match of small talk reaches 0.31-0.34, as true matches do")
_SHARED_WORD = _known("C", "one shared function word (です, 我们, jest, ես) lets the model-average calibration "
                      "vouch for a passage")
_NO_REFERENCES = _known("D", "chatter in Latin-script languages other than English, or in scripts without "
                        "references (Amharic), is measured against the mixed references and clears the floor")
_PARAGRAPH = _known("E", "a line is judged by itself, not its sentences: a note inside a paragraph in another "
                    "script is diluted by the paragraph")
_CROSS_MISS = _known("E", "a line of mostly Latin letters is not judged by itself (a Russian line with English "
                     "words; an English note asked in Arabic), and a cross-language match can stay under the floor")

EN3 = ("The garage code is 7731.", "My dentist appointment is on June 12.", "We use PostgreSQL 16 in production.")


def _id(case: object) -> str:
    return str(case.values[0] if hasattr(case, "values") else case[0])  # type: ignore[index]


def _show(got: list[RecallItem]) -> list[tuple[str, float, str]]:
    return [(r.kind, round(r.score, 3), r.text[:80]) for r in got]


def _write(name: str, text: str) -> None:
    path = paths.workspace_dir("main") / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------------------------------------
# (A) one line of symbols, digits, code, a URL or an escape sequence in an English MEMORY.md (fixed)
# ---------------------------------------------------------------------------------------------------
SYMBOL_LINES = [
    # control: without the odd line nothing is recalled
    ("control-ru", (), "Привет, как дела?"),
    ("control-th", (), "สวัสดีครับ สบายดีไหม"),
    ("control-ja", (), "ありがとうございます"),
    ("digits-ru", ("1234567890",), "Привет, как дела?"),
    ("digits-ja", ("1234567890",), "ありがとうございます"),
    ("digits-ko", ("1234567890",), "안녕하세요, 잘 지내세요?"),
    ("digits-th", ("1234567890",), "สวัสดีครับ สบายดีไหม"),
    ("digits-he", ("1234567890",), "שלום, מה שלומך?"),
    ("digits-hi", ("1234567890",), "नमस्ते, आप कैसे हैं?"),
    ("digits-ar", ("1234567890",), "مرحبا كيف حالك؟"),
    ("code-th", ("def foo(x): return x*2",), "สวัสดีครับ สบายดีไหม"),
    ("code-el", ("def foo(x): return x*2",), "Γεια σου, τι κάνεις;"),
    ("code-hi", ("def foo(x): return x*2",), "नमस्ते, आप कैसे हैं?"),
    ("url-ar", ("https://example.com/docs/install?x=1",), "مرحبا كيف حالك؟"),
    ("url-ru", ("https://example.com/docs/install?x=1",), "Привет, как дела?"),
    ("todo-ja", ("TODO",), "ありがとうございます"),
    ("todo-th", ("TODO",), "สวัสดีครับ สบายดีไหม"),
    ("esc-ru", ("\x1b]0;pwned\x07",), "Привет, как дела?"),
    ("esc-th", ("\x1b[2J\x1b[H",), "สวัสดีครับ"),
    ("gitcmd-el", ("git push --force-with-lease origin main",), "Γεια σου, τι κάνεις;"),
]


@pytest.mark.parametrize("case, extra, message", SYMBOL_LINES, ids=[c[0] for c in SYMBOL_LINES])
async def test_a_symbol_line_does_not_make_a_greeting_recall_the_file(case: str, extra: tuple[str, ...],
                                                                      message: str) -> None:
    _memory(*EN3, *extra)
    got = await _recalled_in_new_session(message)
    assert got == [], _show(got)


# ---------------------------------------------------------------------------------------------------
# (B, C, D) messages about nothing remembered
# ---------------------------------------------------------------------------------------------------
JA = ("私の猫の名前はタマです。", "会社は渋谷にあります。", "毎朝コーヒーを飲みます。")
ZH = ("我们公司在上海。", "我的猫叫咪咪。", "我每天早上喝咖啡。")
PL = ("Mam na imię Ola i to jest mój pies.", "Pracuję w Krakowie.", "Mój dentysta to pan Nowak.")
TR = ("Kedimin adı Pamuk.", "İstanbul'da çalışıyorum.", "Ev wifi şifrem lale2024.")
DA = ("Jeg har en hund der hedder Bella.", "Jeg arbejder i København.", "Min tandlæge hedder Jens.")
HY = ("Իմ կատվի անունը Մուրկա է։", "Ես աշխատում եմ Երևանում։", "Իմ բժշկի անունը Անի է։")
AM = ("የድመቴ ስም ሚሚ ነው።", "በአዲስ አበባ እሰራለሁ።", "የሐኪሜ ስም ዳዊት ነው።")

CHATTER = [
    # B: one line in another script than the message
    pytest.param("B-en-weather-ru-line", (*EN3, "Уровень кофеина: умеренно"), "What's the weather like?", marks=_JUDGED_ALONE),
    pytest.param("B-en-interesting-zh-line", (*EN3, "我喜欢在周末去爬山。"), "Tell me something interesting.", marks=_JUDGED_ALONE),
    pytest.param("B-bg-joke-ja-line", (*EN3, "私の猫の名前はタマです。"), "Разкажи ми виц.", marks=_JUDGED_ALONE),
    pytest.param("B-ru-git-mixed-file", ("Мой брат живёт в Казани.", "我喜欢在周末去爬山。", "私の猫の名前はタマです。",
                            "내 생일은 5월 7일이다.", "The garage code is 7731.", "Пароль от роутера: admin123."),
     "Как сделать git rebase на main?", marks=_JUDGED_ALONE),
    ("B-control-en-movie", (*EN3, "Уровень кофеина: умеренно"), "Can you recommend a good movie?"),
    # C: a shared function word
    pytest.param("C-ja-thanks", JA, "ありがとうございます", marks=_SHARED_WORD),
    pytest.param("C-ja-thanks+en", (*JA[:2], *EN3[:2]), "ありがとうございます", marks=_SHARED_WORD),
    pytest.param("C-zh-what-eat", ZH, "我们今天吃什么？", marks=_SHARED_WORD),
    pytest.param("C-zh-movie", ZH, "我们去看电影吧。", marks=_SHARED_WORD),
    pytest.param("C-pl-dinner", PL, "Co jest na obiad?", marks=_SHARED_WORD),
    pytest.param("C-hy-hello", HY, "Բարև, ինչպե՞ս ես։", marks=_SHARED_WORD),
    ("C-control-ja-haiku", JA, "秋の俳句を書いてください。"),
    ("C-control-zh-joke", ZH, "给我讲个笑话吧。"),
    # D: Latin-script languages other than English, scripts without references
    pytest.param("D-tr-hello", TR, "Merhaba, nasılsın?", marks=_NO_REFERENCES),
    pytest.param("D-pl-hello", PL, "Cześć, jak się masz?", marks=_NO_REFERENCES),
    pytest.param("D-da-hello", DA, "Hvordan har du det?", marks=_NO_REFERENCES),
    pytest.param("D-da-thanks", DA, "Tak for hjælpen!", marks=_NO_REFERENCES),
    pytest.param("D-am-thanks", AM, "በጣም አመሰግናለሁ!", marks=_NO_REFERENCES),
    ("D-control-pl-poem", PL, "Napisz wiersz o jesieni."),
    ("D-control-tr-poem", TR, "Sonbahar hakkında bir şiir yaz."),
]

@pytest.mark.parametrize("case, lines, message", CHATTER, ids=[_id(c) for c in CHATTER])
async def test_a_message_about_nothing_remembered_recalls_nothing(case: str, lines: tuple[str, ...],
                                                                  message: str) -> None:
    _memory(*lines)
    got = await _recalled_in_new_session(message)
    assert got == [], _show(got)


# ---------------------------------------------------------------------------------------------------
# (E) a note in another script than the question, among other facts or in a memory/ note
# ---------------------------------------------------------------------------------------------------
Q = "Am I allergic to anything?"
OTHERS = ("The garage code is 7731.", "My dentist appointment is on June 12.", "We use PostgreSQL 16 in production.",
          "My sister lives in Lisbon.", "The team standup is at 9:30.", "I drive a grey Volvo V60.", "Our cat is called Pixel.",
          "I run 5 km every Saturday.", "The office is on the 4th floor.", "My favourite band is Radiohead.",
          "Мы деплоим по четвергам.", "Мой брат живёт в Казани.")
Q = "Am I allergic to anything?"

NOTES = [
    # findings: a note written as a paragraph (sentences on one line)
    pytest.param("para-el", (*EN3, "Ζω στην Αθήνα με τη γυναίκα μου και τα δύο παιδιά μας. Δουλεύω ως αρχιτέκτονας. "
                       "Είμαι αλλεργικός στα φιστίκια. Μου αρέσει το κολύμπι."), Q, "φιστίκια", marks=_PARAGRAPH),
    pytest.param("para-he", (*EN3, "אני גר בחיפה עם אשתי ושני ילדינו. אני עובד כאדריכל. אני אלרגי לבוטנים. אני אוהב לשחות."), Q, "לבוטנים", marks=_PARAGRAPH),
    pytest.param("para-ar", (*EN3, "أعيش في عمّان مع زوجتي وطفلينا. أعمل مهندسا معماريا. لدي حساسية من الفول السوداني. أحب السباحة."), Q, "السوداني", marks=_PARAGRAPH),
    pytest.param("para-ko", (*EN3, "나는 아내와 두 아이와 함께 부산에 산다. 건축가로 일한다. 땅콩 알레르기가 있다. 수영을 좋아한다."), Q, "땅콩", marks=_PARAGRAPH),
    pytest.param("para-hi", (*EN3, "मैं अपनी पत्नी और दो बच्चों के साथ पुणे में रहता हूँ। मैं वास्तुकार हूँ। मुझे मूंगफली से एलर्जी है। मुझे तैरना पसंद है।"), Q, "मूंगफली", marks=_PARAGRAPH),
    pytest.param("para-th", (*EN3, "ฉันอาศัยอยู่ที่เชียงใหม่กับภรรยาและลูกสองคน ฉันทำงานเป็นสถาปนิก ฉันแพ้ถั่วลิสง ฉันชอบว่ายน้ำ"), Q, "ถั่วลิสง", marks=_PARAGRAPH),
    # findings: a Russian line with English words (half its letters Latin: not judged by itself)
    pytest.param("mixed-ru-en", (*EN3, "Аллергия на peanuts и cashews"), Q, "peanuts", marks=_CROSS_MISS),
    pytest.param("mixed-ru-en2", (*EN3, "У меня allergy на peanuts"), Q, "peanuts", marks=_CROSS_MISS),
    # finding (marginal): Hebrew note among 12 other lines, another wording of the question
    pytest.param("he-12-lines", (*OTHERS[:6], "אני אלרגי לבוטנים.", *OTHERS[6:]), "Do I have any food allergies?", "לבוטנים", marks=_CROSS_MISS),
    # holds
    ("para-ru", (*EN3, "Я живу в Казани с женой и двумя детьми. Работаю архитектором. У меня аллергия на арахис. Люблю плавать."), Q, "арахис"),
    ("para-ja", (*EN3, "私は妻と二人の子供と大阪に住んでいます。建築家として働いています。ピーナッツアレルギーがあります。水泳が好きです。"), Q, "ピーナッツ"),
    ("para-zh", (*EN3, "我叫李明，住在杭州，是一名软件工程师。我对花生过敏，所以吃东西要小心。周末我喜欢去西湖散步，有时候也会去爬山。"), Q, "花生"),
    ("mixed-ru-en-ok", (*EN3, "Аллергия: peanuts"), Q, "peanuts"),
    ("ru-12-wife", (*OTHERS[:6], "Мою жену зовут Ольга, её день рождения 3 марта.", *OTHERS[6:]), "When is my wife's birthday?", "Ольга"),
    ("zh-12-daughter", (*OTHERS[:6], "我女儿在北京大学读书。", *OTHERS[6:]), "Where does my daughter study?", "北京"),
    ("ja-12-boss", (*OTHERS[:6], "私の上司は田中さんです。", *OTHERS[6:]), "Who is my boss?", "田中"),
    ("el-12-dog", (*OTHERS[:6], "Ο σκύλος μου λέγεται Άρης.", *OTHERS[6:]), "What's my dog's name?", "Άρης"),
    ("ar-12-meat", (*OTHERS[:6], "أنا نباتي ولا آكل اللحم.", *OTHERS[6:]), "Do I eat meat?", "نباتي"),
    ("zh-ru-allergy", (*OTHERS[:6], "我对花生过敏。", *OTHERS[6:]), "На что у меня аллергия?", "花生"),
    ("ja-zh-allergy", (*OTHERS[:6], "私はピーナッツアレルギーです。", *OTHERS[6:]), "我对什么过敏？", "ピーナッツ"),
    ("ru-ko-allergy", (*OTHERS[:6], "У меня аллергия на арахис.", *OTHERS[6:]), "나는 무엇에 알레르기가 있나요?", "арахис"),
    pytest.param("en-ar-allergy", (*OTHERS[:6], "I am allergic to peanuts.", *OTHERS[6:]), "هل لدي أي حساسية؟", "peanuts", marks=_CROSS_MISS),
    ("table-ru", None, Q, "арахис"),
]
RAW = {"table-ru": "# Memory\n\n| Thing | Value |\n|---|---|\n| Garage code | 7731 |\n| Аллергия | арахис |\n| Dentist | June 12 |\n"}


@pytest.mark.parametrize("case, lines, message, needle", NOTES, ids=[_id(c) for c in NOTES])
async def test_a_note_in_another_script_is_recalled(case: str, lines: tuple[str, ...] | None, message: str,
                                                    needle: str) -> None:
    if lines is None:
        _write("MEMORY.md", RAW[case])
    else:
        _memory(*lines)
    got = await _recalled_in_new_session(message)
    assert [r for r in got if needle in r.text], _show(got)


MEMFILES = [
    ("memfile-headings-ru", {"memory/health.md": "# Health\n\n## Doctors\n\nMy GP is Dr. Hale.\nShe works at the Elm Street clinic.\n\n"
                                                 "## Allergies\n\nУ меня аллергия на арахис.\n\n## Sport\n\nI swim on Mondays.\n"}, "арахис"),
    ("memfile-para-zh", {"memory/me.md": "# About me\n\n我叫李明，住在杭州，是一名软件工程师。我对花生过敏，所以吃东西要小心。周末我喜欢去西湖散步，有时候也会去爬山。\n"}, "花生"),
    ("memfile-wrapped-ru", {"memory/me.md": "# Обо мне\n\nЯ живу в Новосибирске и работаю в банке. У меня сильная\nаллергия на арахис и кешью, поэтому я всегда\nношу с собой эпипен.\n"}, "арахис"),
    pytest.param("memfile-para-el", {"memory/me.md": "# About me\n\nΖω στην Αθήνα με τη γυναίκα μου. Δουλεύω ως αρχιτέκτονας. Είμαι αλλεργικός στα φιστίκια. Μου αρέσει το κολύμπι.\n"}, "φιστίκια", marks=_PARAGRAPH),
]

@pytest.mark.parametrize("case, files, needle", MEMFILES, ids=[_id(c) for c in MEMFILES])
async def test_a_note_in_a_memory_file_is_recalled(case: str, files: dict[str, str], needle: str) -> None:
    _memory(*EN3)
    for name, text in files.items():
        _write(name, text)
    got = await _recalled_in_new_session(Q)
    assert [r for r in got if needle in r.text], _show(got)


# ---------------------------------------------------------------------------------------------------
# (F) a file without a content word besides its heading (fixed), and hostile lines
# ---------------------------------------------------------------------------------------------------
EMPTY = [
    ("heading-only-ja", "# Memory\n\n", "ありがとうございます"),
    ("heading-only-th", "# Memory\n\n", "สวัสดีครับ"),
    ("ok-emoji-th", "# Memory\n\n- ok\n- 🎉\n", "สวัสดีครับ"),
    ("control-heading-only-ru", "# Memory\n\n", "Привет, как дела?"),
]


@pytest.mark.parametrize("case, raw, message", EMPTY, ids=[c[0] for c in EMPTY])
async def test_a_memory_file_without_content_recalls_nothing(case: str, raw: str, message: str) -> None:
    _write("MEMORY.md", raw)
    got = await _recalled_in_new_session(message)
    assert got == [], _show(got)


EN2 = EN3[:2]
THAI_LONG = ("ฉันชอบกินส้มตำและไก่ย่างที่ตลาดนัดใกล้บ้าน" * 200)[:5000]
ZW = ("\u200b\u200c\u200d\ufeff", "У\u200bменя\u200b аллергия\u200b на\u200b арахис.", "\u202eأنا\u202c نباتي \u200f")

HOSTILE = [
    ("thai5000-capital", (*EN2, THAI_LONG), "What is the capital of Australia?", False),
    ("thai5000-thai-hello", (*EN2, THAI_LONG), "สวัสดีครับ", False),
    ("zw-allergy", (*EN2, *ZW), "Am I allergic to anything?", True),
    ("zw-capital", (*EN2, *ZW), "What is the capital of Australia?", False),
    ("only-zw-lines", ("\u200b", "\u200f\u200e", "\ufeff\ufeff"), "Привет, как дела?", False),
]


@pytest.mark.parametrize("case, lines, message, expect", HOSTILE, ids=[c[0] for c in HOSTILE])
async def test_hostile_memory_lines(case: str, lines: tuple[str, ...], message: str, expect: bool) -> None:
    _memory(*lines)
    got = await _recalled_in_new_session(message)
    assert bool(got) == expect, _show(got)
