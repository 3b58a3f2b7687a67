"""The Unicode lexical tokenizer: every script, stemming per token, CJK bigrams; memory search on
real LanceDB + the bundled embedder finds words of several languages; stores made by an older
tokenizer get their terms rebuilt when opened."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from neotask_tui.config import MemorySettings
from neotask_tui.memory.index.store import TERMS_VERSION
from neotask_tui.memory.service import MemoryService
from neotask_tui.storage.events import Event
from neotask_tui.text import lexical


def test_letters_of_every_script_stay_in_one_token() -> None:
    assert lexical.words("Straße, Привіт! Zażółć gęślą jaźń; kızlar ağaç") == [
        "strasse", "привіт", "zażółć", "gęślą", "jaźń", "kızlar", "ağaç"]
    assert lexical.words("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]  # combining vowel signs stay inside
    assert lexical.words("ＡＢＣ１２３ ﬁle İstanbul ΣΟΦΊΑ") == ["abc123", "file", "istanbul", "σοφία"]
    assert lexical.words("don’t м’ясо мʼясо") == ["don't", "м'ясо", "м'ясо"]


def test_unsegmented_scripts_become_character_bigrams() -> None:
    assert lexical.terms("我喜欢机器学习") == ["我喜", "喜欢", "欢机", "机器", "器学", "学习"]
    assert lexical.terms("猫") == ["猫"]
    assert lexical.terms("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert lexical.terms("안녕하세요") == ["안녕", "녕하", "하세", "세요"]
    # a phrase's bigrams are a subset of the bigrams of any text holding it
    assert set(lexical.terms("机器学习")) <= set(lexical.terms("他说我喜欢机器学习和音乐"))


def test_stemmer_language_is_chosen_per_token() -> None:
    assert lexical.language("running") == "english"
    assert lexical.language("straße") == "german"
    assert lexical.language("größe") == "german"
    assert lexical.language("niño") == "spanish"
    assert lexical.language("kızlar") == "turkish"
    assert lexical.language("γάτες") == "greek"
    assert lexical.language("пользователи") == "russian"
    assert lexical.language("привіт") is None  # Ukrainian: no Snowball stemmer, left as it is
    assert lexical.language("zażółć") is None  # Polish: none either
    assert lexical.language("café") == "french"  # é: French, Spanish, Italian …: the first of _LATIN_PRIORITY
    assert lexical.terms("Οι γάτες") == ["οι", "γατ"]
    assert lexical.terms("kızlar") == ["kız"]
    assert lexical.terms("Straße") == lexical.terms("STRASSE") == lexical.terms("strasse")
    # the term of a word does not depend on the text around it (index and query agree)
    for word in ("Häuser", "Привіт", "γάτες", "niños", "kitaplar", "running"):
        alone = lexical.terms(word)
        assert alone and alone[0] in lexical.terms(f"Gestern sagte sie {word} und ging, потом ушла")


def test_every_bundled_stemmer_is_reachable() -> None:
    samples = {"arabic": "المكتبات", "greek": "γάτες", "tamil": "படங்கள்", "russian": "кошки",
               "english": "cats", "german": "häuser", "spanish": "niños", "turkish": "kızlar",
               "portuguese": "irmãos", "hungarian": "kőművesek", "romanian": "țările", "norwegian": "bøker"}
    for lang, word in samples.items():
        assert lexical.language(lexical.fold(word)) == lang, word
    assert set(samples) <= set(lexical.LANGUAGES)
    assert lexical.language("swedish".replace("e", "å")) == "swedish"
    assert lexical.language("città") == "french" and lexical.language("però") == "italian"


NOTES = {
    "memory/berlin.md": "# Berlin\n\nDas Büro liegt in der Friedrichstraße 12, dritter Stock.\n",
    "memory/street.md": "# Baustelle\n\nDie Straße vor dem Lager ist bis Mai gesperrt.\n",
    "memory/kyiv.md": "# Київ\n\nПривіт від команди з Києва: реліз у четвер.\n",
    "memory/athens.md": "# Αθήνα\n\nΗ συνάντηση με τους προμηθευτές είναι την Τρίτη στη θάλασσα.\n",
    "memory/beijing.md": "# 北京\n\n我们下周在北京讨论机器学习项目的预算。\n",
    "memory/tokyo.md": "# Cats\n\nThe cats were sleeping on the keyboard all afternoon.\n",
}


def _seed(mem: MemoryService) -> None:
    ws = mem.workspace("main")
    for rel, text in NOTES.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("query", "path"), [
    ("straße", "memory/street.md"),
    ("Friedrichstraße", "memory/berlin.md"),
    ("FRIEDRICHSTRASSE", "memory/berlin.md"),
    ("Привіт", "memory/kyiv.md"),
    ("προμηθευτές", "memory/athens.md"),
    ("机器学习", "memory/beijing.md"),
])
def test_memory_search_finds_words_of_every_script(mem: MemoryService, query: str, path: str) -> None:
    _seed(mem)
    hits = mem.search(query, agent_id="main", k=3)
    assert hits and hits[0].path == path
    assert hits[0].components.get("lexical", 0.0) > 0


def _legacy_terms(rows: list[dict[str, object]]) -> tuple[list[str], list[str]]:
    """What the tokenizer before this version made of a text: a–z, à–ÿ and Russian letters only."""
    def old(text: object) -> str:
        return " ".join(re.findall(r"[0-9a-zà-ÿа-яё]+", str(text or "").lower()))

    return [old(r["text"]) for r in rows], [old(r["heading"]) for r in rows]


def test_terms_of_an_older_tokenizer_are_rebuilt_on_open(neotask_home: Path) -> None:
    settings = MemorySettings(chunk_tokens=60, chunk_overlap=12)
    svc = MemoryService(settings)
    _seed(svc)
    svc.reindex("main")
    svc.index_transcript("main", "s1", [
        Event("message", 1, None, "2025-01-01T10:00:00+00:00", {"role": "user", "content": "Привіт! Де офіс?"}),
        Event("message", 2, None, "2025-01-01T10:01:00+00:00",
              {"role": "assistant", "content": "In der Friedrichstraße."}),
        Event("message", 3, None, "2025-01-01T10:02:00+00:00", {"role": "user", "content": "Danke, 谢谢"}),
    ], "agent:main")
    cols = ["id", "lex", "ctx"]
    fresh = {r["id"]: (r["lex"], r["ctx"]) for r in svc.store.rows_where("true", cols)}
    assert svc.store.terms_stamp() == TERMS_VERSION
    # the store as an older release left it: its own terms, no stamp
    svc.store.rewrite_terms(_legacy_terms, "")
    assert svc.store.terms_stamp() == ""
    assert all("привіт" not in lex for lex, _ in (
        (r["lex"], r["ctx"]) for r in svc.store.rows_where("true", cols)))
    svc.close()

    seen: list[tuple[str, int, int]] = []
    svc = MemoryService(settings, progress=lambda phase, done, total: seen.append((phase, done, total)))
    try:
        assert svc.store.terms_stamp() == TERMS_VERSION
        rebuilt = {r["id"]: (r["lex"], r["ctx"]) for r in svc.store.rows_where("true", cols)}
        assert rebuilt == fresh  # file rows and transcript rows (neighbour context) alike
        assert ("rebuilding search terms", len(fresh), len(fresh)) in seen
        hits = svc.search("Привіт", agent_id="main", k=3, sources=("memory",))
        assert hits[0].path == "memory/kyiv.md"
        assert svc.store.count() == len(fresh)  # no row lost or doubled
    finally:
        svc.close()


def test_a_reader_leaves_an_old_store_as_it_is(neotask_home: Path) -> None:
    settings = MemorySettings()
    svc = MemoryService(settings)
    svc.add("main", "Der Schlüssel liegt unter der Fußmatte.")
    svc.store.rewrite_terms(_legacy_terms, "")
    svc.close()
    reader = MemoryService(settings, writer=False)
    try:
        assert reader.store.terms_stamp() == ""
    finally:
        reader.close()


def test_heading_words_left_in_a_file_rows_own_terms_by_the_previous_release_are_rebuilt(neotask_home: Path) -> None:
    settings = MemorySettings()
    svc = MemoryService(settings)
    ws = svc.workspace("main")
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n## Food\n\n- Likes pasta.\n", encoding="utf-8")
    svc.reindex("main")

    def with_headings(rows: list[dict[str, Any]]) -> tuple[list[str], list[str]]:  # as unicode-3 made them
        return [lexical.normalize(str(r["text"])) for r in rows], [lexical.normalize(str(r["heading"])) for r in rows]

    svc.store.rewrite_terms(with_headings, lexical.VERSION)
    assert any("food" in r["lex"].split() for r in svc.store.rows_where("true", ["lex"]))
    svc.close()
    svc = MemoryService(settings)
    try:
        rows = svc.store.rows_where("true", ["lex", "ctx"])
        assert svc.store.terms_stamp() == TERMS_VERSION
        assert rows and not any("food" in r["lex"].split() for r in rows)
        assert any("food" in r["ctx"].split() for r in rows)  # the heading path still counts, once
    finally:
        svc.close()


@pytest.mark.parametrize("message", [
    "thanks!", "Okay, got it.", "Hey, I'm back.", "Interesting.", "Yep", "Sounds good!", "Cool, makes sense.",
    "Good morning! How are you today?", "Понятно.", "Ок, понял.", "Ясно, спасибо.", "Доброе утро! Как дела?",
    # red team 22: intensifiers and addressees
    "Thank you so much", "Thank u so much 🙏", "Many thanks!", "Thank you very much.", "Спасибо большое!",
    "Большое спасибо!", "Спасибо огромное!", "Понял, спасибо большое!", "Всем привет!", "Hi everyone!",
])
def test_a_message_that_only_says_the_conversation_goes_on_is_about_nothing(message: str) -> None:
    assert lexical.about_nothing(message)


@pytest.mark.parametrize("message", [
    "What about my back?",  # "back" alone is about something; only "I'm back" is a greeting
    "I see the logs are empty", "Help me with the migration", "Interesting, what was the Lisbon talk about?",
    "What happened today?", "Tell me a joke.", "Bob: ok", "Куда я лечу?", "我们明天部署吗",
    "How many tests failed?", "How much does it cost?", "Спасибо большое за помощь с миграцией",
])
def test_a_message_with_one_word_about_something_is_not_about_nothing(message: str) -> None:
    assert not lexical.about_nothing(message)
    # and acknowledgements are no stopwords: a passage's "an interesting bug" keeps its words
    assert "interest" in lexical.terms("an interesting bug")


@pytest.mark.parametrize(("message", "searched"), [
    ("Got it. And the backup schedule?", "And the backup schedule?"),
    ("Thanks a lot!\nWhat is the staging port?", "What is the staging port?"),
    ("Понятно, спасибо. Куда я лечу на конференцию?", "Куда я лечу на конференцию?"),
    ("Where is the backup? Thanks!", "Where is the backup?"),
])
def test_what_a_message_asks_leaves_its_acknowledgements_out(message: str, searched: str) -> None:
    assert lexical.asked(message) == searched


@pytest.mark.parametrize("message", [
    "Thanks!",  # nothing but small talk: the message as it is (recall takes nothing for it anyway)
    "Okay, so what is the port?",  # one sentence
    "Would Tim enjoy reading books by C. S. Lewis or John Greene?",  # initials are no sentences
    "How many tests failed?",
])
def test_a_message_without_a_sentence_of_small_talk_is_searched_as_it_is(message: str) -> None:
    assert lexical.asked(message) == message
