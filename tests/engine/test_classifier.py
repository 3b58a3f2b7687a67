"""The deterministic EN/RU classifier on every row of the lecture's "Session memory vs user profile"
table, plus the edge cases a user would hit."""

from __future__ import annotations

import pytest

from neotask_tui.engine.language.classifier import Classification, split_statements
from neotask_tui.engine.language.rules import classify

# (row, English, Russian — the lecture's own wording)
ROWS = [
    ("temporary", "Today answer briefly, I'm in a hurry.", "Сегодня отвечай коротко, я спешу."),
    ("always", "Always send me a short summary first.", "Всегда присылай мне сначала краткое резюме."),
    ("project", "For this project don't use external dependencies.",
     "Для этого проекта не используй внешние зависимости."),
    ("choice", "Now let's pick the Pro plan.", "Сейчас выберем тариф Pro."),
    ("language", "My working language is Russian.", "Мой рабочий язык - русский."),
]


def one(text: str) -> Classification:
    out = classify(text)
    assert len(out) == 1, out
    return out[0]


@pytest.mark.parametrize("lang", [1, 2], ids=["en", "ru"])
def test_row_today_answer_briefly_is_a_temporary_preference(lang: int) -> None:
    c = one(ROWS[0][lang])
    assert c.kind == "temporary_preference"
    assert c.field == "temporary_preferences" and c.scope == "session"
    assert not c.candidate  # "no, unless there is a sign of a lasting preference"
    assert c.value is not None and ("briefly" in c.value or "коротко" in c.value)
    assert "today" not in c.value.lower() and "сегодня" not in c.value.lower()


@pytest.mark.parametrize("lang", [1, 2], ids=["en", "ru"])
def test_row_always_is_a_promotion_candidate_not_a_session_fact(lang: int) -> None:
    c = one(ROWS[1][lang])
    assert c.kind == "promotion"
    assert not c.session_entry
    assert c.candidate and c.candidate_scope == "user"


@pytest.mark.parametrize("lang", [1, 2], ids=["en", "ru"])
def test_row_for_this_project_is_project_scoped(lang: int) -> None:
    c = one(ROWS[2][lang])
    assert c.kind == "project_rule"
    assert c.session_entry and c.scope == "project" and c.field == "constraints"
    # "rather project memory, not the general profile"
    assert c.candidate_scope == "project"


@pytest.mark.parametrize("lang", [1, 2], ids=["en", "ru"])
def test_row_pick_the_pro_plan_is_workflow_state_not_a_preference(lang: int) -> None:
    c = one(ROWS[3][lang])
    assert c.kind == "session_choice"
    assert c.field == "selected_entity" and c.value is not None and "Pro" in c.value
    assert not c.candidate  # an action, not a preference


@pytest.mark.parametrize("lang", [1, 2], ids=["en", "ru"])
def test_row_working_language_is_session_fact_and_profile_candidate(lang: int) -> None:
    c = one(ROWS[4][lang])
    assert c.kind == "user_fact"
    assert c.session_entry and c.field == "facts"  # "may be confirmed in the session"
    assert c.candidate and c.candidate_scope == "user"  # "yes, if needed between sessions"


def test_lecture_profile_example() -> None:
    c = one("Я всегда предпочитаю короткие ответы.")
    assert c.kind == "promotion" and c.candidate_scope == "user"
    c = one("I always prefer short answers.")
    assert c.kind == "promotion"


@pytest.mark.parametrize(("text", "value"), [
    ("Please do not use any paid tools.", "do not use any paid tools"),
    ("Do not use Redis anywhere in the migration.", "Do not use Redis anywhere in the migration"),
    ("Не используй платные сервисы.", "Не используй платные сервисы"),
    ("Пожалуйста, не трогай базу данных.", "не трогай базу данных"),
    ("Hands off the billing cron, seriously.", "Hands off the billing cron, seriously"),  # red team 34
    ("Please refrain from deleting the logs bucket.", "refrain from deleting the logs bucket"),
    ("Leave the cron alone.", "Leave the cron alone"),
])
def test_negated_directive_is_a_session_rule_not_a_candidate(text: str, value: str) -> None:
    c = one(text)
    assert c.kind == "session_rule" and c.field == "constraints" and c.scope == "session"
    assert c.value == value and not c.candidate  # said once: not a lasting preference


@pytest.mark.parametrize("text", [
    "Don't worry.", "I don't know.", "Can't wait!", "Never saw that coming, honestly!",
    "Не волнуйся.", "Я не знаю.", "Не переживай.",
])
def test_negated_chatter_is_not_a_rule(text: str) -> None:
    assert [c.kind for c in classify(text) if c.kind == "session_rule"] == []


@pytest.mark.parametrize("text", [
    "Today always answer in English.",
    "Сегодня всегда отвечай по-английски.",
    "For now, never use emojis.",
])
def test_temporariness_beats_permanence(text: str) -> None:
    c = one(text)
    assert c.kind == "temporary_preference" and not c.candidate


@pytest.mark.parametrize("text", [
    "Do you always answer briefly?",
    "Ты всегда отвечаешь коротко?",
    "Hello, how are you?",
    "The import dropped half of the rows yesterday.",
    "Спасибо, всё понятно.",
])
def test_questions_and_small_talk_yield_nothing(text: str) -> None:
    assert classify(text) == []


@pytest.mark.parametrize(("text", "ttl"), [
    ("For the next 2 hours reply in English.", "2h"),
    ("For 30 minutes answer in bullet points.", "30m"),
    ("На ближайшие 2 часа отвечай по-английски.", "2h"),
    ("На полчаса пиши короче.", "30m"),
    # a duration after "в течение" / "during the next" was a temporary marker without a lifetime
    ("В течение 2 часов отвечай коротко.", "2h"),
    ("В течение двух часов пиши по-английски.", "2h"),
    ("В течение часа без эмодзи.", "1h"),
    ("В течение получаса пиши короче.", "30m"),
    ("В течение 15 минут отвечай кратко.", "15m"),
    ("During the next 2 hours answer briefly.", "2h"),
    ("Over the coming three hours reply in English.", "3h"),
])
def test_durations_become_ttls(text: str, ttl: str) -> None:
    c = one(text)
    assert c.kind == "temporary_preference" and c.ttl == ttl


def test_until_event_binds_the_preference() -> None:
    c = one("Show prices in EUR until checkout_paid.")
    assert c.kind == "temporary_preference" and c.until_event == "checkout_paid"


def test_project_rule_with_always_is_project_candidate_not_user_profile() -> None:
    c = one("In this repo always use poetry.")
    assert c.kind == "project_rule" and c.candidate_scope == "project"


def test_temporary_project_rule_is_not_proposed() -> None:
    c = one("For this project, today skip the tests.")
    assert c.kind == "project_rule" and c.candidate_scope is None


def test_secrets_are_redacted_from_everything_returned() -> None:
    c = one("Remember that my API key is sk-proj-" + "Ab1" * 10)
    assert c.contains_secret
    assert "sk-proj" not in c.text and "[REDACTED" in c.text


def test_do_not_store_request_is_never_a_candidate() -> None:
    c = one("Always answer briefly, but don't remember this.")
    assert c.no_store and not c.candidate


def test_several_statements_in_one_message() -> None:
    out = classify("Сегодня отвечай коротко. Всегда пиши код на Python 3.11! Как дела?")
    assert [c.kind for c in out] == ["temporary_preference", "promotion"]
    assert split_statements("a. b\nc; d") == ["a.", "b", "c", "d"]


@pytest.mark.parametrize(("text", "value", "today"), [
    ("Keep the cache disabled till end of day.", "Keep the cache disabled", True),
    ("Until Friday, keep the feature flag off.", "Until Friday, keep the feature flag off", False),
    ("До пятницы держи фичу выключенной.", "До пятницы держи фичу выключенной", False),
])
def test_a_period_longer_than_today_stays_in_its_text(text: str, value: str, today: bool) -> None:
    [c] = classify(text)  # when each expires: tests/engine/test_periods.py
    assert (c.kind, c.value, c.today) == ("temporary_preference", value, today)


@pytest.mark.parametrize("text", [
    "I'd rather you answer in Russian.", "I'd rather get short answers.", "I would prefer bullet points.",
    "We'd rather keep the old schema.", "Я бы предпочёл короткие ответы.", "Я бы предпочла ответы списком.",
    "Мне бы хотелось ответов покороче.", "Я бы лучше получил код без комментариев.",
])
def test_a_conditional_preference_is_for_this_session(text: str) -> None:
    c = one(text)
    assert c.kind == "temporary_preference" and c.field == "temporary_preferences"
    assert c.value == text.rstrip(".") and not c.candidate and c.period is None


@pytest.mark.parametrize("text", [
    "I always prefer short answers.", "I'd always rather get short answers.", "Я всегда предпочитаю короткие ответы.",
])
def test_a_lasting_preference_still_goes_to_the_inbox(text: str) -> None:
    assert one(text).kind == "promotion"


@pytest.mark.parametrize("text", [
    "She'd rather stay home.", "He said he'd rather wait.", "I would rather have stayed home.",
    "Would you rather work on the API?", "Она бы предпочла чай.",
    "I'd rather not say.", "I'd rather you didn't.", "Я бы лучше не стал.", "I'd rather not.",
])
def test_someone_elses_or_a_past_preference_is_not_one(text: str) -> None:
    assert classify(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Please stop using emojis.", "stop using emojis"),
    ("Stop using emojis.", "Stop using emojis"),
    ("No more emojis.", "No more emojis"),
    ("Without emojis, please.", "Without emojis"),
    ("Перестань использовать эмодзи.", "Перестань использовать эмодзи"),
    ("Пожалуйста, перестань ставить эмодзи.", "перестань ставить эмодзи"),
    ("Прекрати извиняться в каждом ответе.", "Прекрати извиняться в каждом ответе"),
    ("Хватит использовать эмодзи.", "Хватит использовать эмодзи"),
    ("Больше не используй эмодзи.", "Больше не используй эмодзи"),
    ("Пожалуйста, без эмодзи.", "без эмодзи"),
    ("Без эмодзи, пожалуйста.", "Без эмодзи"),
    ("Без эмодзи и таблиц.", "Без эмодзи и таблиц"),
])
def test_stop_and_without_requests_are_session_rules(text: str, value: str) -> None:
    c = one(text)
    assert (c.kind, c.field, c.value, c.candidate) == ("session_rule", "constraints", value, False)


@pytest.mark.parametrize("text", [
    "It avoids the crash.", "He stopped using emojis.", "She stopped using emojis last year.",
    "Он перестал использовать эмодзи.", "Она прекратила ставить эмодзи.", "Без эмодзи текст выглядит лучше.",
    "Без проблем!", "Без понятия.", "Without a doubt.", "Coffee without sugar, please.", "Хватит!",
    "Больше не болит.",
])
def test_descriptions_and_chatter_are_not_rules(text: str) -> None:
    assert classify(text) == []


@pytest.mark.parametrize(
    ("text", "memory"),
    [
        ("Remember: the staging keys are in Vault, Oleg grants access.",
         "The staging keys are in Vault, Oleg grants access"),
        ("Please remember that I use vim.", "I use vim"),
        ("Запомни: ключи от staging лежат в Vault.", "Ключи от staging лежат в Vault"),
        ("Запомни, что я пишу на Go.", "Я пишу на Go"),
        ("Запомните — релиз по четвергам.", "Релиз по четвергам"),
        ("Remember to always run the tests.", "Remember to always run the tests"),  # the request is the content
    ],
)
def test_a_remember_request_proposes_what_is_to_be_remembered(text: str, memory: str) -> None:
    # "Запомни:" asks the app to remember; the memory is what follows, not the request (it was stored
    # as "Запомни: ключи …", and English "Remember: …" proposed nothing at all).
    c = one(text)
    assert c.kind == "promotion" and c.candidate_scope == "user"
    assert c.text == memory


def test_remember_inside_a_story_is_not_a_request() -> None:
    assert classify("I remember when we used SVN.") == []
    assert classify("Do you remember: we used SVN back then?") == []


@pytest.mark.parametrize(("text", "memory"), [
    ("Запомни, что я живу в Берлине, и скажи, который час", "Я живу в Берлине"),
    ("Remember that I live in Berlin, and tell me what time it is", "I live in Berlin"),
    ("So, remember: the staging database runs on port 5433.", "The staging database runs on port 5433"),
    ("Кстати, запомни: релиз по четвергам, а потом напомни мне про ретро.", "Релиз по четвергам"),
])
def test_the_memory_is_the_clause_after_the_request_without_a_request_that_follows(text: str, memory: str) -> None:
    c = one(text)
    assert c.kind == "promotion" and c.candidate and c.text == memory


@pytest.mark.parametrize(("text", "lasting"), [
    ("My colleague always uses tabs.", False), ("Я всегда забываю ключи.", False),
    ("Люди всегда опаздывают.", False), ("She never answers email.", False),
    ("Always use tabs.", True), ("Всегда отвечай по-русски.", True), ("Let's always squash merges.", True),
    ("Ты должен всегда отвечать кратко.", True), ("Я всегда хочу короткие ответы.", True),
])
def test_always_is_lasting_only_in_an_instruction(text: str, lasting: bool) -> None:
    assert any(c.kind == "promotion" and c.candidate for c in classify(text)) is lasting


def test_a_statement_too_long_for_one_memory_is_refused_with_a_reason() -> None:
    from neotask_tui.tuning import INBOX_PROPOSAL_MAX_CHARS

    c = one("Remember: " + "the build uploads its logs to the shared bucket " * 20)
    assert not c.candidate and len(c.text) > INBOX_PROPOSAL_MAX_CHARS
    assert "not proposed" in c.refused


def test_a_secret_announced_before_the_request_is_redacted_in_the_memory() -> None:
    # the memory is a part of the statement, redacted as it reads in the whole statement
    c = one("The wifi password, remember: Tr0ub4dor&3x")
    assert "Tr0ub4dor&3x" not in c.text and c.contains_secret


def test_quotes_and_code_are_masked_to_the_same_length() -> None:
    from neotask_tui.text.quoted import mask_quoted

    text = "He said \"remember: X\", I don't mind; use `always` and 'always' here.\n```\nAlways.\n```"
    masked = mask_quoted(text)
    assert len(masked) == len(text)
    assert "remember" not in masked and "always" not in masked.casefold()
    assert "I don't mind" in masked and masked.endswith("here.\nxxx\nxxxxxxx\nxxx")


@pytest.mark.parametrize("text", [
    "Now please write the migration checklist for BILL-4521.",  # red team 22: was a session preference
    "Now write a migration note for the rename.", "Please write the release notes today.",
    "Today, please review PR 42.", "Сейчас напиши чеклист миграции для BILL-4521.", "Сегодня исправь тест.",
])
def test_a_request_for_one_piece_of_work_is_no_preference(text: str) -> None:
    assert [c for c in classify(text) if c.kind == "temporary_preference"] == []


@pytest.mark.parametrize("text", [
    "Now write shorter answers.", "Today, write in Russian.", "Now use tabs.",
    "Now explain things simply.", "Сейчас отвечай по-русски.", "Сегодня пиши кратко.",
    "Show prices in EUR until checkout_paid.",
])
def test_how_to_answer_with_a_time_word_is_still_a_preference(text: str) -> None:
    assert [c.kind for c in classify(text)] == ["temporary_preference"]


WRAPPED = ("I always use token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB\n"
           "for the acme/api repo, and from now on answer in English.")


def test_a_sentence_wrapped_after_a_secret_is_one_statement() -> None:
    # Red team 22, F3: the summary kept "for the acme/api repo, and from now on answer in English." as a
    # fragment, and the inbox got two candidates from one sentence.
    from neotask_tui.engine.compaction.guard import sentences

    (c,) = classify(WRAPPED)
    assert c.kind == "promotion" and "for the acme/api repo" in c.text and "ghp_" not in c.text
    assert len(sentences(WRAPPED)) == 1
    fact = [c for c in classify("My password is qwerty-Orange-55,\nand the bastion is bastion-2.corp.")]
    assert [c.text for c in fact] == ["My password is [REDACTED:password], and the bastion is bastion-2.corp"]


@pytest.mark.parametrize("text", ["todo:\nfix tests\nupdate docs", "Use tabs.\nuse uv too",
                                  "update the docs\nbump the version", "- use tabs\n- answer briefly",
                                  "Deploy on Friday\nDo not touch prod", "Rotate the key\nUpdate docs",
                                  "password:\nhello"])
def test_lines_that_are_not_a_wrapped_sentence_stay_apart(text: str) -> None:
    from neotask_tui.text.wraps import join_wraps

    assert join_wraps(text) == text


def test_joining_wraps_keeps_every_position() -> None:
    from neotask_tui.text.wraps import join_wraps

    joined = join_wraps(WRAPPED)
    assert len(joined) == len(WRAPPED) and "\n" not in joined
    assert joined.replace(" ", "") == WRAPPED.replace("\n", "").replace(" ", "")


@pytest.mark.parametrize(("text", "kind", "kept"), [
    ("My goal is to migrate the billing\nservice to Kubernetes by March.", "session_goal", "Kubernetes by March"),
    ("Please stop using emojis in\ncommit messages.", "session_rule", "commit messages"),
    ("Меня зовут Боб, и я\nживу в Берлине.", "user_fact", "живу в Берлине"),
])
def test_a_short_line_ending_inside_a_sentence_goes_on_below(text: str, kind: str, kept: str) -> None:
    # Red team 23, M2: the goal was stored as "migrate the billing", the rule as "stop using emojis in".
    (c,) = classify(text)
    assert c.kind == kind and kept in c.text


@pytest.mark.parametrize("text", [
    "Now please write a short migration checklist", "today write me a short poem about cats",
    "today translate this README into Russian", "сегодня напиши короткое письмо начальнику",
])
def test_a_manner_word_describing_the_thing_asked_for_keeps_it_a_request(text: str) -> None:
    # Red team 23, M1: "short" made these session preferences.
    assert [c for c in classify(text) if c.kind == "temporary_preference"] == []


@pytest.mark.parametrize("text", ["Never mind.", "Never again.", "Never mind, I always forget this stuff.",
                                  "Всегда так: опять упал деплой.", "No worries!"])
def test_an_idiom_with_never_or_always_is_no_preference_or_rule(text: str) -> None:
    # Red team 23, M4: these went to the inbox as lasting preferences.
    assert classify(text) == []


@pytest.mark.parametrize("text", ["Remember that I'm vegan and suggest a recipe for dinner.",
                                  "Remember that I'm vegan and explain what tempeh is."])
def test_remember_then_a_request_after_and_saves_only_the_fact(text: str) -> None:
    # Red team 23, M5: the candidate was "I'm vegan and suggest a recipe for dinner".
    (c,) = classify(text)
    assert c.kind == "promotion" and c.text == "I'm vegan"


def test_a_task_with_a_language_for_a_period_stays_a_preference() -> None:
    (c,) = classify("This month write the changelog in Russian.")
    assert c.kind == "temporary_preference"


@pytest.mark.parametrize("text", ["Today, fix the build first and answer briefly.",
                                  "Сегодня исправь сборку и отвечай коротко."])
def test_a_request_with_a_preference_after_it_keeps_the_preference(text: str) -> None:
    # Red team 24: the request-vs-preference rule of this session dropped "answer briefly" with the request.
    (c,) = classify(text)
    assert c.kind == "temporary_preference"


@pytest.mark.parametrize("text", [
    "Now I want to help people go through it too.",
    "Sounds like you're really loving life right now! It's great when you find something that suits you.",
    "Thanks, Maria! It can be challenging, so I try to organize my time and make sure I'm there for it.",
    "Yeah, that's why I love them. They let us take a break from reality and have an awesome adventure.",
    "Let's take a break.",
    "Сейчас я хочу помочь людям.",
])
def test_talk_about_ones_own_life_makes_no_session_state(text: str) -> None:
    # Casual talk (LoCoMo dev streams) filled the state block with "Preferences (this session): Now I want to
    # help people go through it too." and "Selected: a break from reality …": no ask of the assistant, no pick.
    assert classify(text) == []


@pytest.mark.parametrize(("text", "kind"), [
    ("Today I want short answers.", "temporary_preference"),
    ("Now I want you to answer in Russian.", "temporary_preference"),
    ("Now I want to see shorter answers.", "temporary_preference"),
    ("Today I would like to get answers in Russian.", "temporary_preference"),
    ("Сегодня хочу короткие ответы.", "temporary_preference"),
    ("Сегодня хочу, чтобы ты отвечал кратко.", "temporary_preference"),
    ("Let us take the second option.", "session_choice"),
    ("So let us pick Redis.", "session_choice"),
    ("I'll try Redis today.", "session_choice"),
])
def test_a_preference_or_a_pick_stays_one(text: str, kind: str) -> None:
    assert [c.kind for c in classify(text)] == [kind]


def test_a_remembered_fact_with_a_password_wrapped_after_stays_is_read_as_one_line() -> None:
    # Newcomer walk: "Remember: my staging host is kestrel-7 and the password stays\nMarble-Otter-52 until Monday"
    # proposed "My staging host is kestrel-7 and the password stays" for the inbox, cut at the break.
    value = "Marble-" + "Otter-52"
    one = classify(f"Remember: my staging host is kestrel-7 and the password stays {value} until Monday")
    two = classify(f"Remember: my staging host is kestrel-7 and the password stays\n{value} until Monday")
    assert [(c.kind, c.text) for c in two] == [(c.kind, c.text) for c in one]
    assert all(value not in c.text and c.contains_secret for c in two)


@pytest.mark.parametrize(("text", "pref", "ttl", "period", "goal"), [
    ("for 2 hours answer briefly, my goal is ship v9", "answer briefly", "2h", None, "ship v9"),
    ("сегодня отвечай коротко, моя цель — выпустить v9", "отвечай коротко", None, "day:0", "выпустить v9"),
    ("Today answer briefly and my goal is to ship v9.", "answer briefly", None, "day:0", "ship v9"),
    ("Сегодня отвечай коротко, и наша главная цель: выпустить v9.", "отвечай коротко", None, "day:0",
     "выпустить v9"),
])
def test_a_goal_stated_after_a_comma_is_a_statement_of_its_own(
        text: str, pref: str, ttl: str | None, period: str | None, goal: str) -> None:
    # Red team 27, F6: "for 2 hours answer briefly, my goal is ship v9" made the preference "answer
    # briefly, my goal is ship v9" and no goal; with a full stop instead of the comma both were right.
    out = classify(text)
    assert [(c.kind, c.value) for c in out] == [("temporary_preference", pref), ("session_goal", goal)]
    assert (out[0].ttl, out[0].period) == (ttl, period)
    assert out[1].ttl is None and out[1].period is None  # the goal does not expire with the preference


@pytest.mark.parametrize(("text", "split"), [
    ("I told him my goal is to ship v9.", ["I told him my goal is to ship v9."]),
    ("He knows what my goal is, and so do I.", ["He knows what my goal is, and so do I."]),
    ("Answer briefly, my goal isn't clear yet.", ["Answer briefly, my goal isn't clear yet."]),
    ("Сегодня отвечай коротко, моя цель понятна.", ["Сегодня отвечай коротко, моя цель понятна."]),
    ("Today answer briefly, my goals are many.", ["Today answer briefly, my goals are many."]),
    ("Today answer briefly, the goal is clear.", ["Today answer briefly, the goal is clear."]),
])
def test_a_goal_word_inside_a_sentence_splits_nothing(text: str, split: list[str]) -> None:
    assert split_statements(text) == split
    assert all(c.kind != "session_goal" for c in classify(text))


@pytest.mark.parametrize(("text", "goal", "pref", "ttl", "period"), [
    ("my goal is ship v9, today answer briefly", "ship v9", "answer briefly", None, "day:0"),
    ("my goal is to ship v9, for 2 hours answer briefly", "ship v9", "answer briefly", "2h", None),
    ("моя цель — выпустить v9, сегодня отвечай кратко", "выпустить v9", "отвечай кратко", None, "day:0"),
    ("цель: выпустить v9, в течение 2 часов отвечай коротко", "выпустить v9", "отвечай коротко", "2h", None),
    ("My goal is to ship v9, and for now, answer briefly.", "ship v9", "answer briefly", None, None),
    ("Моя цель — выпустить v9, и до пятницы без смайликов.", "выпустить v9", "до пятницы без смайликов", None,
     "wd:4"),
])
def test_a_preference_with_its_own_period_after_a_goal_is_a_statement_of_its_own(
        text: str, goal: str, pref: str, ttl: str | None, period: str | None) -> None:
    # Red team: "my goal is ship v9, today answer briefly" was one goal, "ship v9, today answer briefly",
    # that expired at midnight, and no preference; the other order was already two statements.
    out = classify(text)
    assert [(c.kind, c.value) for c in out] == [("session_goal", goal), ("temporary_preference", pref)]
    assert out[0].ttl is None and out[0].period is None  # the goal does not take the preference's period
    assert (out[1].ttl, out[1].period) == (ttl, period)


@pytest.mark.parametrize("text", [
    "my goal is to ship v9, v10 and v11",
    "my goal is to ship, test and document v9",
    "my goal is to ship v9, today we test it",  # no preference after the comma
    "my goal is ship v9, today fix the test",  # a request, no preference
    "моя цель — выпустить v9, пока не закончится спринт",
    "I'm in a hurry, today answer briefly",  # nothing stated before the comma: one preference
])
def test_a_clause_that_is_no_preference_of_its_own_splits_nothing(text: str) -> None:
    assert split_statements(text) == [text]


def test_two_preferences_with_their_own_periods_keep_their_own_ends() -> None:
    out = classify("today answer briefly, for 2 hours no emojis")
    assert [(c.value, c.ttl, c.period) for c in out] == [("answer briefly", None, "day:0"),
                                                         ("no emojis", "2h", None)]


@pytest.mark.parametrize(("text", "pref", "rule", "ttl", "period"), [
    ("for 2 hours answer briefly, do not mention the client name", "answer briefly",
     "do not mention the client name", "2h", None),
    ("today answer briefly, and do not use emojis", "answer briefly", "do not use emojis", None, "day:0"),
    ("until Friday keep answers short, don't use tables", "until Friday keep answers short", "don't use tables",
     None, "wd:4"),
    ("на 2 часа отвечай кратко, не упоминай имя клиента", "отвечай кратко", "не упоминай имя клиента", "2h", None),
    ("сегодня отвечай коротко и не используй эмодзи", "отвечай коротко", "не используй эмодзи", None, "day:0"),
    # "never" after the period is no lasting preference: the period leads the sentence
    ("today answer briefly, do not use emojis and never mention the client", "answer briefly",
     "do not use emojis and never mention the client", None, "day:0"),
])
def test_a_do_not_clause_after_a_period_led_preference_is_a_rule_with_the_same_end(
        text: str, pref: str, rule: str, ttl: str | None, period: str | None) -> None:
    # Red team 30, F4: the "do not" clause was part of the preference ("answer briefly, do not mention the
    # client name" for 2h): no rule, and the first entry left out of a full state block.
    out = classify(text)
    assert [(c.kind, c.field, c.value) for c in out] == [
        ("temporary_preference", "temporary_preferences", pref), ("session_rule", "constraints", rule)]
    assert [(c.ttl, c.period) for c in out] == [(ttl, period), (ttl, period)]


def test_a_do_not_clause_keeps_its_own_period_and_without_a_period_stays_a_plain_rule() -> None:
    out = classify("today answer briefly, and do not use emojis until Friday")
    assert [(c.kind, c.value, c.period) for c in out] == [
        ("temporary_preference", "answer briefly", "day:0"),
        ("session_rule", "do not use emojis until Friday", "wd:4")]  # a timed "do not" is a rule (red team 31)
    [c] = classify("do not use emojis")
    assert (c.kind, c.value, c.ttl, c.period) == ("session_rule", "do not use emojis", None, None)
    [g, p, r] = classify("my goal is ship v9, today answer briefly, and do not use emojis")
    assert [(c.kind, c.value, c.period) for c in (g, p, r)] == [
        ("session_goal", "ship v9", None), ("temporary_preference", "answer briefly", "day:0"),
        ("session_rule", "do not use emojis", "day:0")]


@pytest.mark.parametrize(("text", "rule"), [
    ("answer briefly, do not use emojis", "do not use emojis"),
    ("Answer briefly, do not use emojis.", "do not use emojis"),
    ("Please answer briefly, and do not use emojis.", "do not use emojis"),
    ("answer briefly and do not use emojis", "do not use emojis"),
    ("Answer in Russian, don't use tables", "don't use tables"),
    ("Write the migration, do not touch the schema", "do not touch the schema"),
    ("отвечай коротко, не используй эмодзи", "не используй эмодзи"),
    ("пожалуйста, пиши по-русски и не используй таблицы", "не используй таблицы"),
])
def test_a_do_not_clause_after_an_instruction_without_a_period_is_a_rule(text: str, rule: str) -> None:
    # Red team 30 (left over): "answer briefly, do not use emojis" recorded nothing, the "do not" lost.
    [c] = classify(text)
    assert (c.kind, c.field, c.value, c.ttl, c.period) == ("session_rule", "constraints", rule, None, None)


@pytest.mark.parametrize("text", [
    "Here is the log, do not worry", "We shipped v2 and never looked back", "I tried, don't know why",
    "Thanks, don't worry", "answer briefly, don't worry", "Say hi, do not use emojis?",
    "answer briefly, \"do not use emojis\"",
])
def test_a_do_not_clause_after_chatter_or_in_quotes_is_no_rule(text: str) -> None:
    assert classify(text) == []


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("(do not use emojis)", "session_rule", "do not use emojis"),
    ("(do not use emojis).", "session_rule", "do not use emojis"),
    ("**do not use emojis**", "session_rule", "do not use emojis"),
    ("[не используй эмодзи]", "session_rule", "не используй эмодзи"),
    ("(my goal is ship v9)", "session_goal", "ship v9"),
    ("*(моя цель — выпустить v9)*", "session_goal", "выпустить v9"),
    ("(today answer briefly)", "temporary_preference", "answer briefly"),
    ("[today answer briefly]", "temporary_preference", "answer briefly"),
    ("*today answer briefly*", "temporary_preference", "answer briefly"),
    ("(сегодня отвечай коротко)", "temporary_preference", "отвечай коротко"),
])
def test_a_wrapped_statement_is_read_as_its_content(text: str, kind: str, value: str) -> None:
    # Red team 30, F3/F5: "(do not use emojis)" made no rule; "(my goal is ship v9)" was a fact proposed
    # for long-term memory, parentheses and all; "(today answer briefly)" was stored as "( answer briefly)".
    c = one(text)
    assert (c.kind, c.value) == (kind, value)
    assert c.candidate_scope is None


def test_wrapped_statements_are_one_with_the_same_statement_unwrapped() -> None:
    out = classify("today answer briefly. Today answer briefly! TODAY  answer   briefly... (today answer briefly)")
    assert {c.value for c in out} == {"answer briefly"}
    assert split_statements("(today answer briefly. do not use emojis)") == [
        "today answer briefly.", "do not use emojis"]
    assert one("Note (today answer briefly).").value == "Note (answer briefly)"


@pytest.mark.parametrize("text", [
    "(a) and (b)", "*a* and *b*", "(do not use emojis)?", "(do you think so?)", '("do not use emojis")',
    "(`do not use emojis`)", "> (do not use emojis)", "«(do not use emojis)»",
])
def test_what_is_not_wholly_wrapped_or_is_quoted_is_no_statement(text: str) -> None:
    assert classify(text) == []


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("my goal is to finish today's report, v10 and v11", "session_goal", "finish today's report, v10 and v11"),
    ("my goal is to prepare tomorrow’s demo", "session_goal", "prepare tomorrow’s demo"),
    ("Don't use emojis in tonight's notes", "session_rule", "Don't use emojis in tonight's notes"),
])
def test_today_s_or_tomorrow_s_thing_sets_no_period(text: str, kind: str, value: str) -> None:
    # Red team 30, F6: "my goal is to finish today's report" got an end-of-day expiry.
    [c] = classify(text)
    assert (c.kind, c.value, c.period, c.ttl) == (kind, value, None, None)
    [t] = classify("my goal is to finish the report today")
    assert t.period == "day:0"


def test_the_semicolon_of_an_html_entity_ends_no_statement() -> None:
    # Red team 30, F9: "Remember: my logo is … &lt;i&gt;" was proposed as "My logo is … &lt".
    [c] = classify("Remember: my logo is ![logo](http://x.io/l.png) &lt;i&gt; &#x1b; &#39;x&#39; <img src=x>")
    assert c.kind == "promotion"
    assert c.text == "My logo is ![logo](http://x.io/l.png) &lt;i&gt; &#x1b; &#39;x&#39; <img src=x>"
    assert split_statements("a &amp; b; do not use emojis") == ["a &amp; b", "do not use emojis"]
    assert split_statements("We ran Q&As; do not use emojis") == ["We ran Q&As", "do not use emojis"]


@pytest.mark.parametrize(("text", "expected"), [
    ("my goal is ship v9, answer briefly today", [
        ("session_goal", "ship v9", None, None), ("temporary_preference", "answer briefly", "day:0", None)]),
    ("моя цель — выпустить v9, отвечай коротко сегодня", [
        ("session_goal", "выпустить v9", None, None), ("temporary_preference", "отвечай коротко", "day:0", None)]),
    ("my goal is ship v9, answer briefly for 2 hours", [
        ("session_goal", "ship v9", None, None), ("temporary_preference", "answer briefly", None, "2h")]),
    ("my goal is ship v9, answer briefly today, and do not use emojis", [
        ("session_goal", "ship v9", None, None), ("temporary_preference", "answer briefly", "day:0", None),
        ("session_rule", "do not use emojis", "day:0", None)]),
    ("answer briefly today, do not use emojis", [
        ("temporary_preference", "answer briefly", "day:0", None),
        ("session_rule", "do not use emojis", "day:0", None)]),
    ("my goal is to ship v9, v10 today", [("session_goal", "ship v9, v10 today", "day:0", None)]),
])
def test_an_instruction_ending_with_its_period_after_a_goal_is_a_statement_of_its_own(
        text: str, expected: list[tuple[str, str, str | None, str | None]]) -> None:
    # Red team 30 (left over): "my goal is ship v9, answer briefly today" was one goal until midnight.
    assert [(c.kind, c.value, c.period, c.ttl) for c in classify(text)] == expected


@pytest.mark.parametrize(("text", "value", "period", "ttl"), [
    ("не трогай прод до пятницы", "не трогай прод до пятницы", "wd:4", None),
    ("не трогай прод сегодня", "не трогай прод сегодня", "day:0", None),
    ("не трогай прод до конца недели", "не трогай прод до конца недели", "week", None),
    ("не трогай прод в течение 2 часов", "не трогай прод в течение 2 часов", None, "2h"),
    ("не трогай прод", "не трогай прод", None, None),
])
def test_a_russian_do_not_with_its_period_at_the_end_ends_then(text: str, value: str, period: str | None,
                                                               ttl: str | None) -> None:
    # Red team 32, F3: "не трогай прод до пятницы" (and сегодня, на этой неделе…) was a rule for good.
    [c] = classify(text)
    assert (c.kind, c.value, c.period, c.ttl) == ("session_rule", value, period, ttl)


def test_don_t_mention_something_is_a_rule_and_don_t_mention_it_is_chat() -> None:
    # Red team 32, F4: "don't mention Acme in the replies" recorded nothing.
    [c] = classify("don't mention Acme in the replies")
    assert (c.kind, c.value) == ("session_rule", "don't mention Acme in the replies")
    assert classify("Don't mention it!") == [] and classify("don't mention that") == []
    out = classify("for 2 hours answer briefly, don't mention the client")
    assert [(c.kind, c.value, c.ttl) for c in out] == [
        ("temporary_preference", "answer briefly", "2h"), ("session_rule", "don't mention the client", "2h")]


@pytest.mark.parametrize("text", ["my goal is ship v9 and answer briefly today",
                                  "моя цель — выпустить v9 и отвечай коротко сегодня"])
def test_a_preference_after_and_ending_with_its_period_is_not_part_of_the_goal(text: str) -> None:
    # Red team 32, F6: one goal ending at midnight, no preference.
    g, p = classify(text)
    assert (g.kind, g.period, p.kind, p.period) == ("session_goal", None, "temporary_preference", "day:0")
    assert g.value in ("ship v9", "выпустить v9")


@pytest.mark.parametrize("text, fact", [
    ("My hard work is paying off, it's such an awesome feeling.", False),  # how it goes
    ("Right now my writing is consuming me.", False),
    ("My build is failing.", False),
    ("Which is why my meetings are so exciting.", False),  # a verdict
    ("Being able to show my vision is awesome.", False),
    ("My laptop is like half of my lifeline.", False),
    ("My cork board is full of inspiring quotes.", False),
    ("My dance studio is bringing its best moves tonight.", False),  # what it is doing
    ("I learnt that my own happiness is the most important thing.", False),
    ("My job is teaching kids.", True),  # an activity named as one
    ("My favorite activity is hiking in the Alps.", True),
    ("My favorite dairy-free treat is this chocolate raspberry tart.", True),
    ("My hobby is painting.", True),
    ("My editor is neovim.", True),
    ("My favourite band is Cool Kids.", True),  # a name, whatever its words
    ("My timezone is CET.", True),
])
def test_how_something_of_mine_is_going_is_no_fact_to_keep(text: str, fact: bool) -> None:
    found = classify(text)
    assert any(c.kind == "user_fact" and c.field == "facts" and c.candidate for c in found) is fact


@pytest.mark.parametrize("text, fact", [
    ("I live in Berlin", True),  # red team 34, F4: facts not only in the "my X is Y" shape
    ("I'm allergic to peanuts", True),
    ("I work at Acme as a backend developer", True),
    ("я живу в Берлине", True),
    ("я работаю в Яндексе", True),
    ("I live in fear of deadlines lol", False),
    ("My colleague lives in Berlin.", False),
    ("My name is not important", False),  # red team 34, F5: no fact, no proposal
    ("мой пароль от почты — Кот2024ёж!", False),  # all it would keep is the redaction marker
])
def test_facts_about_yourself_in_other_shapes(text: str, fact: bool) -> None:
    assert any(c.kind == "user_fact" and c.candidate for c in classify(text)) is fact


@pytest.mark.parametrize("text", [
    "Let's never talk about the outage again, haha",  # a wish about the chat
    "from now on I'm going to drink less coffee",  # a plan of one's own, no instruction
])
def test_a_wish_or_a_plan_of_ones_own_is_no_lasting_preference(text: str) -> None:
    assert not any(c.kind == "promotion" or c.candidate for c in classify(text))


@pytest.mark.parametrize("text, picked", [
    ("I use vim", False),  # how one works, not a pick in this workflow
    ("We use Postgres.", False),
    ("I'll use vim for this.", True),
    ("Let's use Postgres.", True),
])
def test_i_use_is_a_habit_not_a_pick(text: str, picked: bool) -> None:
    assert any(c.field == "selected_entity" for c in classify(text)) is picked


def test_terminal_escape_sequences_are_no_part_of_a_statement() -> None:
    # red team 34, F15: the ";" of an OSC sequence cut the goal down to "\x1b]0"
    (c,) = classify("my goal is \x1b]0;pwned\x07 ship \x1b[31mv9")
    assert c.field == "current_goal" and c.value == "ship v9"
