"""Summary shape, parser, quality guard and extractive summarizer (pure functions)."""

from __future__ import annotations

import pytest

from neotask_tui.engine.compaction.extractive import extractive_summary
from neotask_tui.engine.compaction.guard import (
    CriticalItem,
    GuardReport,
    attributor,
    extract_items,
    guard,
    identifiers_in,
    is_required,
)
from neotask_tui.engine.compaction.inputs import previous_items
from neotask_tui.engine.compaction.summary import SECTIONS, build_summary_prompt, parse_summary
from neotask_tui.engine.language.constraints import constraint_kind, is_rule
from neotask_tui.storage.events import Event


def msg(i: int, role: str, content: str) -> Event:
    return Event("message", i, i - 1, "2025-01-01T00:00:00+00:00", {"role": role, "content": content})


def fixes(report: GuardReport) -> list[CriticalItem]:
    """What the guard repaired besides the latest request (always copied verbatim, tested apart)."""
    return [r for r in report.repaired if r.kind != "request"]


def notable(events: list[Event]) -> list[CriticalItem]:
    """Items besides identifiers and the latest request."""
    return [i for i in extract_items(events) if i.kind not in ("identifier", "request")]


EVENTS = [
    msg(1, "user", "I want to fix the CSV importer in src/importer/csv_reader.py. Do not use Redis."),
    msg(2, "assistant", "Let's go with pandas 2.1.4 and call read_csv(). Docs: https://pandas.pydata.org/docs/"),
    msg(3, "user", "Никогда не используй глобальные переменные. Maybe the problem is the timezone."),
    msg(4, "user", "Only for the demo, listen on port 8080. Can you add a test for ord_7712?"),
]


def test_identifiers_are_exact() -> None:
    text = "See `make_app()` in src/app.py, https://x.io/a?b=1, port 8080, v1.2.3, ABC-123 and 2024-03-01."
    ids = identifiers_in(text)
    for want in ("make_app()", "src/app.py", "https://x.io/a?b=1", "8080", "v1.2.3", "ABC-123", "2024-03-01"):
        assert want in ids


def test_parse_is_lenient_and_validates_citations() -> None:
    text = (
        "Summary follows\n**Goal**\n- Fix the importer [e:1]\nConstraints:\n* Do not use Redis [e:1, e:99]\n"
        "## Misc\n- something else\n## Assumptions\n- (assumption) timezone [e3]"
    )
    s = parse_summary(text, valid_ids=[1, 2, 3, 4], attribute=attributor(EVENTS))
    sections = [ln.section for ln in s.lines]
    # "Summary follows" and "something else" say nothing of the range (no word of it): left out
    assert sections == ["Current goal", "Constraints and rules", "Assumptions"]
    assert s.section("Constraints and rules")[0].cites == [1]  # e:99 is not in the range
    assert s.section("Assumptions")[0].cites == [3]
    assert any("unknown section" in i for i in s.issues)
    assert any("99" in i for i in s.issues)
    rendered = s.render()
    assert "- (assumption) timezone [e:3]" in rendered
    assert all(ln.cites for ln in s.lines)
    assert sum("left out" in i for i in s.issues) == 2


def test_guard_repairs_dropped_negation_and_identifier() -> None:
    model = (
        "## Goal\n- Fix the CSV importer in src/importer/csv_reader.py [e:1]\n"
        "## Constraints and rules\n- Use Redis [e:1]\n- Never use global variables [e:3]\n"
        "## Exact identifiers\n- `read_csv()`, https://pandas.pydata.org/docs/, pandas 2.1.4 [e:2]\n"
    )
    s = parse_summary(model, valid_ids=[1, 2, 3, 4])
    report = guard(s, extract_items(EVENTS))
    text = s.render()
    kinds = {(r.kind, r.text) for r in report.repaired}
    assert ("inverted", "Use Redis") in kinds  # "do not use Redis" must never become "use Redis"
    assert ("constraint", "Do not use Redis.") in kinds
    assert ("identifier", "8080") in kinds and ("identifier", "ord_7712") in kinds
    assert "- Use Redis" not in text
    assert "- user: Do not use Redis. [e:1]" in text
    assert "- user: Никогда не используй глобальные переменные. [e:3]" in text
    assert "- user: `8080`, `ord_7712` [e:4]" in text
    assert "Only for the demo, listen on port 8080." in text  # conditions are kept too
    assert all(r.cites for r in report.repaired)
    # the ask is the latest request the guard put back, so it is not "not in the summary" (red team 36, finding 7)
    assert "## Latest user request\n- user: Can you add a test for ord_7712? [e:4]" in text
    assert not any("ord_7712" in d.text for d in report.dropped)
    assert any(d.kind == "decision" and "pandas" in d.text for d in report.dropped)


def test_guard_accepts_a_negation_without_its_please_or_speaker() -> None:
    events = [msg(1, "user", "Caroline: Please never commit directly to the main branch.")]
    s = parse_summary("## Constraints and rules\n- Never commit directly to the main branch [e:1]")
    assert fixes(guard(s, extract_items(events))) == []


@pytest.mark.parametrize("line", [
    "You should avoid using Redis",  # a negated paraphrase: kept only as the model's words
    "Do not use Redis",  # shortened: "for the cache" is part of the rule
])
def test_guard_keeps_a_negation_verbatim_not_a_paraphrase(line: str) -> None:
    events = [msg(1, "user", "Do not use Redis for the cache.")]
    s = parse_summary(f"## Constraints and rules\n- {line} [e:1]")
    report = guard(s, extract_items(events))
    assert [(i.kind, i.text) for i in fixes(report)] == [("constraint", "Do not use Redis for the cache.")]
    assert [ln.text for ln in s.section("Constraints and rules")] == [line, "Do not use Redis for the cache."]


def test_a_condition_may_be_restated() -> None:
    events = [msg(1, "user", "Only for the demo, listen on port 8080.")]
    s = parse_summary("## Constraints and rules\n- Listen on port 8080 only for the demo [e:1]\n"
                      "## Exact identifiers\n- `8080` [e:1]")
    assert fixes(guard(s, extract_items(events))) == []


def test_extractive_summary_keeps_everything_required_and_cites() -> None:
    s = extractive_summary(EVENTS, budget_tokens=40)
    text = s.render()
    report = guard(s, extract_items(EVENTS))
    assert fixes(report) == []
    assert "Do not use Redis." in text and "`src/importer/csv_reader.py`" in text
    assert all(ln.cites for ln in s.lines)
    assert next(name for name in SECTIONS if s.section(name)) == "Current goal"
    # Deterministic: same input, same output.
    assert extractive_summary(EVENTS, budget_tokens=40).render() == text


def test_extractive_assumptions_are_marked_and_roles_kept() -> None:
    text = extractive_summary(EVENTS).render()
    assert "(assumption) Maybe the problem is the timezone." in text
    assert "assistant (proposal): Let's go with pandas" in text  # the assistant's choice is not the user's


def test_prompt_carries_ids_shape_and_instructions() -> None:
    msgs = build_summary_prompt(EVENTS, instructions="focus on the port")
    system, user = msgs[0][1], msgs[1][1]
    for name in SECTIONS:
        assert f"## {name}" in system
    assert "[e:4] user: Only for the demo" in user
    assert "focus on the port" in user


CONSTRAINTS = [
    "Do not use Redis.",
    "Honestly, abort the copy if it takes more than 2 hours.",
    "Don't you dare drop the audit log.",  # red team 34, F1: a "do not" without a plain "not"
    "Don't you ever push to main again.",
    "Hands off the billing cron, seriously.",
    "Keep your hands off the prod DB.",
    "Please refrain from deleting the logs bucket.",
    "Stay away from the legacy module.",
    "Leave the billing cron alone.",
    "if the copy takes longer than 2 hours, abort it",  # red team 31, F3: conditional limits
    "when the replica lag exceeds 30 seconds, pause the job",
    "Abort the copy if it takes more than 2 hours.",
    "если копирование займёт больше 3 часов, останови его",
    "abort the import after 45 minutes",  # red team 32, F2: time limits, deadlines, "при …" conditions
    "через 2 часа останови копирование",
    "finish the cutover by Friday",
    "при задержке больше 5 секунд останови репликацию",
    "the deadline is Friday 17:00",
    "we have until 18:00 to finish the cutover",
    "сдать отчёт нужно до 18:00 пятницы",
    "don't mention Acme in the replies",
    "Please never commit directly to the main branch.",
    "You must not touch the migrations folder.",
    "We shouldn't add new dependencies.",
    "Avoid global state in the handlers.",
    "No emojis in commit messages.",
    "We won't support Python 3.8.",
    "Let's not rename the module.",
    "Stop adding comments to every line.",
    "For this project don't use external deps.",
    "Today don't answer in English.",
    "I don't want any new dependencies.",
    "If the build fails, do not deploy.",
    "Only for the demo, listen on port 8080.",
    "Write the parser without regex.",
    "Не используй Redis.",
    "Пожалуйста, не трогай миграции.",
    "Нельзя коммитить в main.",
    "Мы не используем ORM.",
    "Никаких глобальных переменных.",
    "Только для демо: порт 8080.",
]
CHATTY = [
    "I went home after 3 hours.",
    "Sometimes it's hard when things don't go my way, but I'm sure if I keep pushing, I'll reach my dreams!",
    "Leave me alone, haha.",
    "I try to stay away from sugar.",
    "Can't wait to see you in 2 days!",
    "Melanie: Got back after 2 days of camping",
    "Я вернулся через 2 часа.",
    "Don't mention it!",
    "If you ever need anything, let me know!",
    "When I was 10, we moved to Sweden.",
    "If I get 40 points, I'll be happy.",
    "Thanks, I'll do it when I have two hours.",
    "Когда мне было 10 лет, мы переехали.",
    "Can't wait!",
    "I can't wait to see it.",
    "I don't know.",
    "I didn't expect that.",
    "Not sure about that.",
    "No way!",
    "Don't worry, I won't let anything get me down.",
    "You never know.",
    "Never saw this coming.",
    "I've never been there.",
    "It only took us two hours.",
    "Don't give up on your dreams.",
    "It's my favorite and never gets old.",
    "Не знаю.",
    "Не волнуйся, всё будет хорошо.",
    "Я только что вернулся.",
    "Если хочешь, можем созвониться.",
]


@pytest.mark.parametrize("text", CONSTRAINTS)
def test_negated_rules_and_conditions_are_constraints(text: str) -> None:
    assert constraint_kind(text) is not None
    assert is_required(CriticalItem("constraint", text, [1]))


@pytest.mark.parametrize("text", CHATTY)
def test_chatty_negations_are_not_constraints(text: str) -> None:
    assert constraint_kind(text) is None
    assert not any(i.kind == "constraint" for i in extract_items([msg(1, "user", text)]))


def test_guard_repairs_constraint_negations_but_does_not_force_chatty_ones() -> None:
    events = [
        msg(1, "user", "Can't wait to see the new dashboard! I don't know what to expect."),
        msg(2, "user", "We won't support Python 3.8. Don't worry about the docs."),
        msg(3, "user", "Stop adding comments to every line. Никогда не коммить в main."),
    ]
    s = parse_summary("## Goal\n- Build the dashboard [e:1]")
    report = guard(s, extract_items(events))
    text = s.render()
    repaired = {r.text for r in report.repaired if r.kind == "constraint"}
    assert repaired == {"We won't support Python 3.8.", "Stop adding comments to every line.",
                        "Никогда не коммить в main."}
    assert "- user: We won't support Python 3.8. [e:2]" in text
    assert "Can't wait" not in text and "don't know" not in text and "Don't worry" not in text


def test_extractive_summary_spends_no_budget_on_chatty_negations() -> None:
    chat = [msg(i, "user", f"Can't wait to see the photos of trip number {i}! I don't know when I'll be back.")
            for i in range(1, 30)]
    events = [*chat, msg(30, "user", "Never push to the release branch on Fridays.")]
    s = extractive_summary(events, budget_tokens=80)
    text = s.render()
    assert [ln.text for ln in s.section("Constraints and rules")] == ["Never push to the release branch on Fridays."]
    assert "Can't wait" not in text.split("## Exact identifiers")[0].split("## Goal")[-1].split("\n", 2)[-1]
    assert fixes(guard(s, extract_items(events))) == []


def test_rolling_extractive_summary_stays_bounded_and_keeps_old_constraints() -> None:
    def count(s: str) -> int:
        return max(1, len(s) // 4)

    names = [f"{a} {b}" for a in ("red", "blue", "green", "amber", "grey") for b in ("fox", "owl", "cat", "elk")]
    summary = extractive_summary(EVENTS, budget_tokens=120, count=count)
    for start in range(10, 200, 10):
        name = names[start // 10]
        rng = [msg(start + j, "user", f"We decided to call the {j}th batch step the {name} after review.")
               for j in range(10)]
        summary = extractive_summary(rng, budget_tokens=120, count=count,
                                     previous=parse_summary(summary.render()))
    text = summary.render()
    required = sum(count(ln.render()) for ln in summary.lines if ln.section in ("Current goal", "Exact identifiers")
                   or constraint_kind(ln.text))
    optional = sum(count(ln.render()) for ln in summary.lines) - required
    assert optional <= 120  # older optional lines left to make room for new ones...
    assert "grey elk" in text and "blue fox" not in text  # ...newest first
    assert "Do not use Redis." in text and "Никогда не используй глобальные переменные." in text
    assert "`src/importer/csv_reader.py`" in text


def test_previous_summary_lines_are_required_only_when_they_are_constraints() -> None:
    prev = parse_summary("## Constraints and rules\n- Can't wait to see it! [e:4]\n- Do not use Redis. [e:1]\n"
                         "## Exact identifiers\n- `ABC-123` [e:2]")
    items = previous_items(prev)
    assert {(i.kind, i.text) for i in items} == {("constraint", "Do not use Redis."), ("identifier", "ABC-123")}


@pytest.mark.parametrize("text", [
    "I missed it but it was a powerful reminder that we are not alone in this fight.",
    "We aren't sure yet.",
])
def test_descriptions_with_we_are_not_are_not_constraints(text: str) -> None:
    assert constraint_kind(text) is None


def test_we_are_not_doing_is_still_a_constraint() -> None:
    assert constraint_kind("We are not using an ORM here.") == "negation"


@pytest.mark.parametrize("text, rule", [
    ("The connection to nature must be incredible.", False),
    ("Gaining confidence on the court must feel great.", False),
    ("Your wedding day must've been so special.", False),
    ("Always here to help!", False),
    ("Challenging but fun, always admired musicians.", False),
    ("It must be UTF-8.", True),
    ("Tests must pass before merge.", True),
    ("Always run the tests before pushing.", True),
    ("Don't forget to run the migrations.", True),
])
def test_rules_are_obligations_not_guesses(text: str, rule: bool) -> None:
    assert is_rule(text) is rule


def test_dont_forget_is_a_reminder_and_its_positive_restatement_is_not_an_inversion() -> None:
    events = [msg(1, "user", "Don't forget to run the migrations before the deploy.")]
    assert constraint_kind(events[0].content) is None
    s = parse_summary("## Constraints and rules\n- Run the migrations before the deploy [e:1]")
    report = guard(s, extract_items(events))
    assert not any(r.kind == "inverted" for r in report.repaired)
    assert "Run the migrations before the deploy" in s.render()


def test_decisions_and_asks_need_their_form_not_just_a_word() -> None:
    events = [
        msg(1, "user", "Well, I'm off to go do some research."),
        msg(2, "user", "I love that you chose pottery for your art."),
        msg(3, "user", "Those supportive friends definitely make everything worth it!"),
        msg(4, "user", "I can't decide between the two."),
        msg(5, "user", "We chose SQLite for the cache. And then fix the import in app.py, please."),
        msg(6, "user", "Add a test for the parser."),
    ]
    kinds = {(i.kind, i.text) for i in notable(events)}
    assert kinds == {
        ("decision", "We chose SQLite for the cache."),
        ("ask", "And then fix the import in app.py, please."),
        ("ask", "Add a test for the parser."),
    }


def test_goal_skips_greetings_and_speaker_labels_do_not_count_as_words() -> None:
    events = [
        msg(1, "user", "Caroline: Hey Mel! How have you been?"),
        msg(2, "assistant", "Melanie: Good, thanks!"),
        msg(3, "user", "Caroline: I need to move the importer to Postgres this week."),
        msg(4, "user", "Caroline: Agreed, Mel!"),
    ]
    s = extractive_summary(events)
    want = ["Caroline: I need to move the importer to Postgres this week."]
    assert [ln.text for ln in s.section("Current goal")] == want
    assert not s.section("Decisions")  # "Agreed, Mel!" says nothing but its label and a name


def test_goal_lines_are_not_repeated_in_other_sections() -> None:
    events = [msg(1, "user", "hey there! how are you?"), msg(2, "user", "Tell me a short joke."),
              msg(3, "user", "My goal is to ship the importer by Friday.")]
    s = extractive_summary(events)
    # The current goal is the latest one stated, not the first thing said.
    assert [ln.text for ln in s.section("Current goal")] == ["My goal is to ship the importer by Friday."]
    goal = "My goal is to ship the importer by Friday."
    assert [ln.section for ln in s.lines if ln.text == goal] == ["Current goal"]  # not said twice


def test_a_question_the_reply_answered_is_not_open() -> None:
    events = [
        msg(1, "user", "Which port does the API listen on?"),
        msg(2, "assistant", "Port 8080, set in config.toml."),
        msg(3, "user", "Why does the importer skip empty rows?"),
        msg(4, "assistant", "I'm not sure; the reader may drop them."),
        msg(5, "user", "Should the cache expire?"),
        msg(6, "assistant", "Which cache do you mean?"),
        msg(7, "user", "Can you tell me what read_csv() returns?"),
        msg(8, "assistant", "A DataFrame."),
        msg(9, "user", "Can you add a test for the parser?"),
        msg(10, "assistant", "Added tests/test_parser.py."),
        msg(11, "user", "Is the schema final?"),
    ]
    kinds = {(i.kind, i.text) for i in notable(events)}
    assert kinds == {
        ("question", "Why does the importer skip empty rows?"),  # the reply was not sure
        ("question", "Should the cache expire?"),  # the reply only asked back
        ("ask", "Can you add a test for the parser?"),  # a task stays listed; only an answer settles a question
        ("question", "Is the schema final?"),  # no reply yet
    }


def test_an_interrupted_reply_does_not_answer_a_question() -> None:
    events = [msg(1, "user", "Which port does the API listen on?"),
              Event("message", 2, 1, "2025-01-01T00:00:00+00:00",
                    {"role": "assistant", "content": "Port", "status": "interrupted"})]
    assert [i.kind for i in notable(events)] == ["question"]


@pytest.mark.parametrize("text, decision", [
    ("Let's keep going and making great things happen!", False),
    ("Let's do it!", False),
    ("We'll make some awesome memories!", False),
    ("If we need help, we'll let you know.", False),
    ("I haven't decided yet.", False),
    ("Agreed, those little things sure do make life better!", False),
    ("Keep going with your dreams!", False),
    ("Let's use SQLite for the cache.", True),
    ("Let's keep the old schema.", True),
    ("Let's do it with Postgres then.", True),
    ("We agreed on Postgres.", True),
    ("We'll go with option B.", True),
])
def test_exhortations_and_undecided_are_not_decisions(text: str, decision: bool) -> None:
    assert bool(notable([msg(1, "user", text)])) is decision


@pytest.mark.parametrize("text, ask", [
    ("Gonna continue my studies and check out career options!", False),
    ("It's a great way to add to your family and show your love.", False),
    ("I'm lucky to have people like you to remind me.", False),
    ("Add a test and fix the import.", True),
    ("Remind me to push the tag.", True),
    ("The build is red, so fix the import.", True),
])
def test_a_clause_joined_by_and_is_not_a_new_imperative(text: str, ask: bool) -> None:
    assert [i.kind for i in notable([msg(1, "user", text)])] == (["ask"] if ask else [])


def test_a_name_equals_value_line_gives_both_as_identifiers() -> None:
    # Red team 23, M6: "export LEDGER_DB_HOST=ledger-db-01.acme.internal" lost the host in the summary, and the
    # review said nothing (an identifier the guard never saw is none it can miss).
    from neotask_tui.engine.compaction.guard import identifiers_in

    assert identifiers_in("export LEDGER_DB_HOST=ledger-db-01.acme.internal\nexport LEDGER_DB_PORT=6432") == [
        "LEDGER_DB_HOST", "ledger-db-01.acme.internal", "LEDGER_DB_PORT", "6432"]
    assert identifiers_in("see https://x.io/?a=b1&c=d") == ["https://x.io/?a=b1&c=d"]
    assert identifiers_in("API_TOKEN=[REDACTED:github_token]") == ["API_TOKEN"]


def test_a_rule_word_for_word_or_an_identifier_is_never_inverted() -> None:
    # Red team 23, M7: "Please write the rollback runbook for ticket LED-3307 and keep it under 20 lines." and
    # the bucket's identifier were removed as saying "the opposite of a rule": the rule's own words (its
    # "under 20 lines" no marker the check knew) and a part of another rule's words.
    from neotask_tui.engine.compaction.guard import CriticalItem, _inverts
    from neotask_tui.engine.compaction.summary import SummaryLine

    ask = "Please write the rollback runbook for ticket LED-3307 and keep it under 20 lines."
    rule = "Please do not rename the bucket s3://acme-prod-ledger-backups without asking Dana first."
    assert not _inverts(SummaryLine("Constraints and rules", ask, [5]), CriticalItem("constraint", ask, [5]))
    assert not _inverts(SummaryLine("Exact identifiers", "`s3://acme-prod-ledger-backups`", [2]),
                        CriticalItem("constraint", rule, [2]))
    assert _inverts(SummaryLine("Decisions", "We rename the bucket s3://acme-prod-ledger-backups.", [2]),
                    CriticalItem("constraint", rule, [2]))


@pytest.mark.parametrize(("text", "latest"), [
    ("Please write the rollback runbook for ticket LED-3307 and keep it under 20 lines.", True),
    ("Write the migration and do not touch the users table.", True),
    ("Напиши миграцию и не трогай таблицу users.", True),
    ("Please do not rename the bucket without asking Dana first.", False),
    ("Пожалуйста, не трогай таблицу users.", False),
])
def test_a_request_that_also_sets_a_rule_is_the_latest_request(text: str, latest: bool) -> None:
    # Red team 23, M7's remainder: "…and keep it under 20 lines" made the request a rule only, and the summary's
    # "Latest user request" was empty. A rule that only forbids asks for no work.
    events = [msg(1, "user", "Please do not rename the bucket s3://acme-prod-ledger-backups without asking Dana."),
              msg(2, "assistant", "Understood."), msg(3, "user", text), msg(4, "assistant", "On it.")]
    s = extractive_summary(events)
    asked = [ln.text for ln in s.lines if ln.section == "Latest user request"]
    ruled = [ln.text for ln in s.lines if ln.section == "Constraints and rules"]
    assert text in ruled
    assert asked == ([text] if latest else []), s.render()


@pytest.mark.parametrize(("text", "asked"), [
    ("It would be great if you could draft the release notes. I also need the changelog. Thanks!",
     "It would be great if you could draft the release notes. I also need the changelog."),
    ("I would like a short summary of the incident for the postmortem.",
     "I would like a short summary of the incident for the postmortem."),
    ("Keep it under 20 lines, and also add a rollback section.",
     "Keep it under 20 lines, and also add a rollback section."),
    ("Было бы здорово, если бы ты написал заметки к релизу.", "Было бы здорово, если бы ты написал заметки к релизу."),
    ("Мне нужен список изменений.", "Мне нужен список изменений."),
])
def test_a_polite_request_is_the_latest_request(text: str, asked: str) -> None:
    # Red team 25, F3: these showed the message before them as the latest request.
    events = [msg(1, "user", "Please write the migration checklist."), msg(2, "assistant", "Done."),
              msg(3, "user", text), msg(4, "assistant", "On it.")]
    s = extractive_summary(events)
    assert [ln.text for ln in s.lines if ln.section == "Latest user request"] == [asked], s.render()


@pytest.mark.parametrize("text", ["I need a break.", "I would like to visit Paris someday.",
                                  "It would be great to see you.", "We went out and also saw a movie."])
def test_talk_that_asks_nothing_is_no_request(text: str) -> None:
    assert not [i for i in extract_items([msg(1, "user", text)]) if i.kind in ("ask", "request")]


def test_a_wrapped_password_does_not_cut_the_request_it_is_in() -> None:
    # Red team 25, F4: "…and password\n[REDACTED:password] tonight, and do not restart the cache." became the
    # request "Deploy with user deploy-bot and password"; "tonight" and the "do not" went to another line.
    from neotask_tui.text.secrets import redact_secrets

    typed = "Deploy with user deploy-bot and password\n" + "SumWrap" + "Dd44 tonight, and do not restart the cache."
    stored = redact_secrets(typed)
    assert "[REDACTED:password]" in stored
    s = extractive_summary([msg(1, "user", stored), msg(2, "assistant", "On it.")])
    asked = [ln.text for ln in s.lines if ln.section == "Latest user request"]
    assert asked == [" ".join(stored.split())], s.render()


@pytest.mark.parametrize(("text", "latest"), [
    ("Never use global state, and make sure to add docstrings.", True),
    ("Don't use pandas, and please add a --verbose flag.", True),
    ("Я бы хотел, чтобы ты переписал модуль оплаты.", True),
    ("Хочу, чтобы ты добавил тесты для импорта.", True),
    ("Could you not use pandas?", False),
    ("Never use eval and never use exec.", False),
])
def test_a_request_after_a_prohibition_or_in_russian_is_the_latest_request(text: str, latest: bool) -> None:
    # Red team 26, F5: these left "Latest user request" empty, or ("Could you not use pandas?") replaced the
    # real request with a rule.
    events = [msg(1, "user", "Write a parser for the CSV export."), msg(2, "assistant", "Sure."),
              msg(3, "user", text), msg(4, "assistant", "On it.")]
    s = extractive_summary(events)
    asked = [ln.text for ln in s.lines if ln.section == "Latest user request"]
    assert asked == [text if latest else "Write a parser for the CSV export."], s.render()


@pytest.mark.parametrize(("text", "kind"), [
    ("до пятницы без смайликов", "negation"),  # red team 27, F7: the guard kept no Russian bare refusal
    ("Без смайликов до пятницы.", "negation"),
    ("until Friday no emojis", "negation"),
    ("До пятницы без изменений.", None),  # a status
    ("Без изменений.", None),
    ("No change.", None),
    ("Пока без ответа.", None),
])
def test_a_bare_refusal_limited_to_a_period_is_a_constraint(text: str, kind: str | None) -> None:
    assert constraint_kind(text) == kind


def test_guard_restores_conditional_limits_a_summary_dropped() -> None:
    # Red team 31, F3: "if the copy takes longer than 2 hours, abort it" (and the Russian one, and "when
    # the replica lag exceeds 30 seconds, pause the job") were in no summary, state or guard list after
    # a compaction whose draft kept only the goal.
    events = [msg(1, "user", "my goal is migrate billing to Postgres 16"),
              msg(2, "user", "if the copy takes longer than 2 hours, abort it"),
              msg(3, "user", "если копирование займёт больше 3 часов, останови его"),
              msg(4, "user", "when the replica lag exceeds 30 seconds, pause the job"),
              msg(5, "user", "When I was 10, we moved to Sweden.")]
    s = parse_summary("## Current goal\n- Migrate billing [e:1]")
    report = guard(s, extract_items(events))
    restored = {r.text for r in report.repaired if r.kind == "constraint"}
    assert restored == {"if the copy takes longer than 2 hours, abort it",
                        "если копирование займёт больше 3 часов, останови его",
                        "when the replica lag exceeds 30 seconds, pause the job"}, report.repaired
    text = s.render()
    assert "2 hours" in text and "3 часов" in text and "30 seconds" in text and "Sweden" not in text


# Summary precision (session 26): chit-chat filled the summary with lines that were no decision, rule or
# task ("Still to do: Check out the crowd.", "Decisions: Caroline: Wow, Mel!"), and the room they took
# was recall's.
@pytest.mark.parametrize("text, kinds", [
    ("Let me know if you need any more suggestions.", []),  # an offer: "more" after "any" is no limit
    ("Let me know if you need anything.", []),
    ("Let me know if there's anything else I can do to help!", []),
    ("Definitely a must-see!", []),  # a compound noun, not an obligation
    ("It's a must-have in my life.", []),
    ("Let me know when the build finishes.", ["ask"]),
    ("Abort the copy if it takes more than 2 hours.", ["constraint"]),
    ("Stop the job if it needs more memory.", ["constraint"]),
    ("Tests must pass before merge.", ["constraint"]),
])
def test_offers_and_compound_nouns_are_no_asks_or_rules(text: str, kinds: list[str]) -> None:
    assert [i.kind for i in notable([msg(1, "user", text)])] == kinds


@pytest.mark.parametrize("text, open_after_reply", [
    ("Check out this piece I made!", False),
    ("Yeah, check it out - here's my bookshelf!", False),
    ("Tell me more about them!", False),
    ("Let me know what you think after you read it.", False),
    ("Check this trace!", False),
    ("Check this out and then run the tests.", True),  # also asks for work
    ("Check out the release branch.", True),  # not something shown: a task
])
def test_an_ask_to_look_or_tell_is_settled_by_a_reply(text: str, open_after_reply: bool) -> None:
    events = [msg(1, "user", text)]
    assert [i.kind for i in notable(events)] == ["ask"]  # open until answered
    events.append(msg(2, "assistant", "Nice, the colours work well together."))
    assert [i.kind for i in notable(events)] == (["ask"] if open_after_reply else [])


def test_a_question_takes_nothing_back_and_a_take_back_is_not_a_greeting() -> None:
    before = [msg(1, "user", "Mel: we decided to paint the fence blue."), msg(2, "assistant", "Sounds good.")]
    asked = notable([*before, msg(3, "user", "Mel: Wow! Any more fence painting coming up?")])
    assert [(i.kind, i.superseded_by) for i in asked] == [("decision", None), ("question", None)]
    took_back = notable([*before, msg(3, "user", "Mel: Wow! Actually we paint the fence green.")])
    assert [(i.kind, i.text, i.superseded_by) for i in took_back] == [
        ("decision", "Mel: we decided to paint the fence blue.", 3),
        ("decision", "Actually we paint the fence green.", None)]


@pytest.mark.parametrize("text, goal", [
    ("There's something I want to tell you.", False),  # what comes next in the chat, not the work
    ("I want to show you my new painting!", False),
    ("I'd like to thank you for the help.", False),
    ("I want to talk to you about it.", False),
    ("I'll let you know if I need anything else.", False),
    ("Your support will help me make it happen.", False),
    ("I want to show the metrics on the dashboard.", True),
    ("I'd like to share the results in the doc.", True),
    ("I need to ship v2 by Friday.", True),
    ("Help me fix the parser.", True),
    ("I need you to help me migrate the DB.", True),
])
def test_telling_you_something_is_no_goal(text: str, goal: bool) -> None:
    assert any(i.kind == "goal" for i in extract_items([msg(1, "user", text)])) is goal


@pytest.mark.parametrize("text, todo", [
    ("Their help has meant a lot, especially after that tough breakup.", False),  # which breakup, no step
    ("I still have that stuffed animal dog you gave me!", False),  # a thing kept
    ("I still have your book.", False),
    ("We still have two failing tests.", True),
    ("After that, update the docs.", True),
    ("Fix the import; after that we deploy.", True),
    ("I'll rename the module after that.", True),
    ("We still have to migrate the users table.", True),
])
def test_after_that_and_still_have_name_work_only_as_a_step(text: str, todo: bool) -> None:
    assert any(i.kind == "todo" for i in extract_items([msg(1, "user", text)])) is todo


@pytest.mark.parametrize("text, assumption", [
    ("Whenever I hear this song, I think about the paths I've taken.", False),  # a thought
    ("Maybe we can watch one of your movies together!", False),  # a suggestion
    ("I might try it sometime!", False),  # a plan
    ("I think you'd love this fantasy novel.", False),  # a recommendation
    ("I think the bug is in the parser.", True),
    ("Maybe the env var is missing.", True),
    ("It might be a race condition.", True),
    ("We might be hitting the rate limit.", True),
    ("Maybe we can retry, the server might be down.", True),  # a guess beside the suggestion
])
def test_a_suggestion_a_plan_or_a_thought_is_no_assumption(text: str, assumption: bool) -> None:
    assert any(i.kind == "assumption" for i in extract_items([msg(1, "user", text)])) is assumption


def test_a_do_not_without_a_plain_not_survives_a_summary_that_drops_it() -> None:
    # red team 34, F1: both summarizers dropped these and the context lost them
    events = [msg(1, "user", "Don't you dare drop the audit log."), msg(2, "assistant", "Understood."),
              msg(3, "user", "Hands off the billing cron, seriously."), msg(4, "assistant", "Sure."),
              msg(5, "user", "Please refrain from deleting the logs bucket.")]
    s = parse_summary("## Decisions\n- move billing-api [e:1]\n## Done\n- chatted [e:2]", valid_ids=[1, 2, 3, 4, 5])
    guard(s, extract_items(events))
    text = s.render()
    for rule in ("Don't you dare drop the audit log.", "Hands off the billing cron, seriously.",
                 "refrain from deleting the logs bucket."):
        assert rule in text
    extractive = extractive_summary(events, budget_tokens=10).render()
    assert "audit log" in extractive and "billing cron" in extractive and "logs bucket" in extractive


@pytest.mark.parametrize(("draft", "rule"), [
    ("abort the copy", "If the copy takes longer than 2 hours, abort it."),
    ("finish the cutover", "Finish the cutover by Friday."),
    ("остановить копирование", "Если копирование займёт больше 3 часов, останови копирование."),
])
def test_a_draft_line_that_keeps_a_rule_without_its_condition_is_removed(draft: str, rule: str) -> None:
    # Red team 35, finding 7a: the draft's "- user: abort the copy [e:8]" stayed beside the restored "If the copy
    # takes longer than 2 hours, abort it." (so an unconditional abort still reached the model): a line citing the
    # rule's message whose every word is the rule's, without the rule's condition or time limit.
    events = [msg(7, "user", "The copy job is the nightly one."), msg(8, "user", rule)]
    s = parse_summary(f"## Still to do\n- {draft} [e:8]")
    report = guard(s, extract_items(events))
    assert draft not in s.render(), s.render()
    assert rule in s.render()
    assert any(r.kind == "inverted" and r.text == draft for r in report.repaired), report.repaired


def test_a_line_of_other_words_citing_a_conditional_rule_stays() -> None:
    # The check above removes only a part of the rule: a line with words of its own (a report) is not the rule.
    events = [msg(8, "user", "If the copy takes longer than 2 hours, abort it."),
              msg(9, "assistant", "The copy finished in 40 minutes, checksum verified.")]
    s = parse_summary("## Done\n- the copy finished in 40 minutes, checksum verified [e:8, e:9]")
    guard(s, extract_items(events))
    assert "checksum verified" in s.render(), s.render()


def test_a_hedge_moved_to_the_assumptions_keeps_its_speaker_and_message() -> None:
    # Red team 35, finding 7b: the user's "Maybe the replicas are on version 14.2, I think." (e:17) came out as
    # "assistant: (assumption) … [e:14]": the draft's line cited the assistant's message, and the guard put the
    # hedge in verbatim but kept the draft's citation and speaker.
    events = [msg(14, "assistant", "Which version are the replicas on?"),
              msg(17, "user", "Maybe the replicas are on version 14.2, I think.")]
    s = parse_summary("## Decisions\n- The replicas are on version 14.2 [e:14]")
    guard(s, extract_items(events), events)
    line = next(ln for ln in s.lines if "14.2" in ln.text and ln.section == "Assumptions")
    assert line.text == "Maybe the replicas are on version 14.2, I think."
    assert line.cites == [17] and line.who == "user", (line.cites, line.who)


def _turns(lines: list[str]) -> list[Event]:
    out: list[Event] = []
    for text in lines:
        out += [msg(len(out) + 1, "user", text), msg(len(out) + 2, "assistant", "Noted; here is what I found.")]
    return out


def test_the_latest_request_is_the_users_last_ask_even_when_answered() -> None:
    # Red team 35, finding 5: with "What should we check first…?" and "Which dashboards are relevant for the copy?"
    # answered, the summary had no latest request (c); "Please refrain from deleting the bucket…", a prohibition,
    # was taken for it (a); "Finish the cutover by Friday." asks for work with its limit.
    lines = ["My goal is to migrate the orders table.", "Please refrain from deleting the bucket acme-archive-2024.",
             "Finish the cutover by Friday."]
    assert [i.text for i in extract_items(_turns(lines[:2])) if i.kind == "request"] == []
    assert [i.text for i in extract_items(_turns(lines)) if i.kind == "request"] == ["Finish the cutover by Friday."]
    lines += ["What should we check first on the new cluster?", "Which dashboards are relevant for the copy?"]
    items = extract_items(_turns(lines))
    assert [i.text for i in items if i.kind == "request"] == ["Which dashboards are relevant for the copy?"]
    assert not [i for i in items if i.kind == "question"]  # answered: no open question


def test_a_drafts_paraphrased_or_older_request_leaves_the_latest_request() -> None:
    # Red team 35, finding 5b: the draft's "Which dashboards are relevant? [e:26]" (not verbatim, and e:26 was not
    # compacted) stayed in "Latest user request" beside the guard's verbatim one.
    events = _turns(["Write the runbook for the cutover.", "Which dashboards are relevant for the copy?"])
    s = parse_summary("## Latest user request\n- Which dashboards are relevant? [e:26]\n"
                      "- Write the runbook for the cutover. [e:1]")
    report = guard(s, extract_items(events), events)
    asked = [ln.text for ln in s.lines if ln.section == "Latest user request"]
    assert asked == ["Which dashboards are relevant for the copy?"], s.render()
    assert {r.text for r in report.repaired if r.kind == "stale request"} == {
        "Which dashboards are relevant?", "Write the runbook for the cutover."}


RT36 = [msg(2, "user", "my goal is migrate the billing DB to cluster pg-prod-7"),
        msg(4, "assistant", "Noted. I suggest we stage through host db-shadow-42 with pgbouncer."),
        msg(5, "user", "hands off the billing cron nightly-ledger"),
        msg(8, "user", "please refrain from deleting the bucket s3://acme-ledger-archive"),
        msg(18, "user", "finish the cutover by Friday"),
        msg(20, "user", "Let's use pgbouncer for pooling."),
        msg(22, "user", "actually, scrap that, use pgcat instead"),
        msg(23, "assistant", "Noted.")]


def test_a_reworded_rule_or_goal_leaves_and_the_users_words_come_back() -> None:
    # Red team 36, finding 2: a model's draft said "the billing cron may be adjusted when needed [e:5]" for "hands
    # off the billing cron", "clean up the bucket" for "please refrain from deleting the bucket", "by Monday" for
    # "by Friday", and a goal naming pg-prod-9 for the user's pg-prod-7; the guard appended the user's rules and
    # left the draft's versions beside them (contradictory "user" rules, unflagged).
    draft = ("## Current goal\n- user: migrate the billing DB to cluster pg-prod-9 [e:2]\n"
             "## Constraints and rules\n- user: the billing cron may be adjusted when needed [e:5]\n"
             "- user: clean up the bucket s3://acme-ledger-archive [e:8]\n- user: finish the cutover by Monday [e:18]\n"
             "- user: never deploy on weekends [e:5]\n")
    s = parse_summary(draft)
    report = guard(s, extract_items(RT36), RT36)
    text = s.render()
    for gone in ("pg-prod-9", "may be adjusted", "clean up the bucket", "Monday"):
        assert gone not in text, text
    for kept in ("pg-prod-7", "hands off the billing cron nightly-ledger", "refrain from deleting the bucket",
                 "finish the cutover by Friday", "never deploy on weekends"):
        assert kept in text, text
    assert len([r for r in report.repaired if r.kind == "reworded"]) == 4, report.repaired


def test_what_a_scrap_that_chose_instead_is_kept() -> None:
    # Red team 36, finding 4: a draft without the pooling decisions lost "actually, scrap that, use pgcat instead";
    # the guard listed it under "not in the summary" only.
    s = parse_summary("## Current goal\n- user: my goal is migrate the billing DB to cluster pg-prod-7 [e:2]\n")
    guard(s, extract_items(RT36), RT36)
    assert "use pgcat instead" in s.render(), s.render()


def test_a_citation_of_an_unrelated_user_message_does_not_make_a_proposal_a_decision() -> None:
    # Red team 36, finding 3: "- user: stage through host db-shadow-42 [e:2,e:4]" became a "user+assistant" decision:
    # db-shadow-42 is only in the assistant's reply e:4; e:2 is the user's goal message.
    s = parse_summary("## Decisions\n- user: stage through host db-shadow-42 [e:2,e:4]")
    guard(s, extract_items(RT36), RT36)
    line = next(ln for ln in s.lines if "db-shadow-42" in ln.text)
    assert line.cites == [4] and line.who == "assistant", (line.cites, line.who)


def test_a_draft_line_citing_nothing_of_the_range_is_left_out() -> None:
    # Red team 36, finding 3: "- user: approve the vendor quote from Zenith Metals" (no citation, no message of the
    # range says it) and "rotate the kubernetes certificates weekly [e:999]" stayed in the summary, labelled "user".
    draft = ("## Decisions\n- user: approve the vendor quote from Zenith Metals\n"
             "- user: rotate the kubernetes certificates weekly [e:999]\n- user: use pgcat for pooling [e:22]")
    s = parse_summary(draft, valid_ids={e.id for e in RT36}, attribute=attributor(RT36))
    text = s.render()
    assert "Zenith" not in text and "kubernetes" not in text and "pgcat" in text, text
    assert sum("left out" in i for i in s.issues) == 2, s.issues


def test_an_unhedged_line_beside_its_hedge_leaves_once() -> None:
    # Red team 36, finding 7: "I think the replica lag is about 30 seconds" appeared twice under Assumptions (the
    # draft had it there and stated it as a fact elsewhere; the guard moved the second one in as well).
    events = [msg(21, "user", "I think the replica lag is about 30 seconds.")]
    s = parse_summary("## Decisions\n- The replica lag is about 30 seconds [e:21]\n"
                      "## Assumptions\n- I think the replica lag is about 30 seconds. [e:21]")
    guard(s, extract_items(events), events)
    assert [ln.text for ln in s.lines] == ["I think the replica lag is about 30 seconds."], s.render()


@pytest.mark.parametrize("said, name", [
    ("Hands off the billing cron nightly-ledger.", "nightly-ledger"),
    ("Archive the exports to acme-ledger-archive first.", "acme-ledger-archive"),
    ("Stage the data on the host db-shadow first.", "db-shadow"),
])
def test_a_lowercase_hyphenated_name_the_user_gave_is_an_identifier(said: str, name: str) -> None:
    # Red team 36, finding 6: "hands off the billing cron nightly-ledger" (e:5) gave no identifier: a hyphenated
    # name without a digit had no identifier's shape, so the extractive summary never listed it.
    events = [msg(5, "user", said), msg(6, "assistant", "Understood.")]
    assert name in identifiers_in(said)
    ids = extractive_summary(events).section("Exact identifiers")
    assert [ln.text for ln in ids] == [f"`{name}`"] and ids[0].cites == [5], ids


@pytest.mark.parametrize("said", [
    "It is a well-known, long-term and read-only follow-up, sent by e-mail.",
    "Keep the docs up-to-date and state-of-the-art, a self-hosted built-in for the job.",
    "The repo well-known for its work-life balance is a one-off, a short-term real-time fix.",
])
def test_an_english_hyphenated_word_is_no_identifier(said: str) -> None:
    events = [msg(5, "user", said)]
    assert identifiers_in(said) == []
    assert extractive_summary(events).section("Exact identifiers") == []


def test_a_drafts_hyphenated_name_the_user_typed_is_not_unsourced() -> None:
    # Red team 36, finding 6: "- user: `nightly-ledger` [e:5]" was removed from the draft's identifiers as
    # "unsourced" though the user typed it. A name the draft lists that the user typed word for word beside a word
    # announcing a name stays, also where that word comes after it ("the night-shift job"); an English word, a
    # compound with no such word beside it, a name only the assistant typed, or a part of a name does not.
    events = [msg(5, "user", "Hands off the billing cron nightly-ledger."),
              msg(6, "assistant", "Understood. Should the day-shift job run too?"),
              msg(7, "user", "Keep the night-shift job running, it is read-only. Until Friday keep the dark-launch "
                             "toggle off.")]
    s = parse_summary("## Exact identifiers\n- user: `nightly-ledger` [e:5]\n"
                      "- user: `night-shift`, `read-only`, `day-shift`, `nightly`, `dark-launch` [e:7]\n",
                      valid_ids={5, 6, 7})
    report = guard(s, extract_items(events), events)
    assert [ln.text for ln in s.section("Exact identifiers")] == ["`nightly-ledger`", "`night-shift`"], s.render()
    assert sorted(r.text for r in report.repaired if r.kind == "unsourced") == [
        "dark-launch", "day-shift", "nightly", "read-only"]


@pytest.mark.parametrize("request_line", ["", "## Latest user request\n- user: write the runbook [e:29]\n"])
def test_an_ask_the_restored_latest_request_holds_is_not_listed_as_missing(request_line: str) -> None:
    # Red team 36, finding 7: the review listed "ask: Please write the runbook and the rollback steps." under "Not in
    # the summary" while the guard had put the same sentence (the asking part of "Thanks. Please write …") under
    # "Latest user request": each item was checked against the summary as it was before the guard restored the rest.
    events = [msg(25, "user", "Can you check the replication lag on the replica?"),
              msg(26, "assistant", "Checking."),
              msg(27, "user", "I want to cut over the billing DB to pg-prod-7."), msg(28, "assistant", "Sure."),
              msg(29, "user", "Thanks. Please write the runbook and the rollback steps.")]
    goal = "## Current goal\n- user: I want to cut over the billing DB to pg-prod-7. [e:27]\n"
    s = parse_summary(goal + request_line,
                      valid_ids={e.id for e in events})
    report = guard(s, extract_items(events), events)
    asked = [ln.text for ln in s.section("Latest user request")]
    assert asked == ["Please write the runbook and the rollback steps."], s.render()
    # the ask nothing in the summary carries is still listed
    assert [(d.kind, d.text) for d in report.dropped] == [
        ("ask", "Can you check the replication lag on the replica?")], report.dropped


@pytest.mark.parametrize("reply, kept", [
    ("Noted, I will write them next.", False),
    ("I wrote the runbook and the rollback steps.", True),
])
def test_a_done_line_citing_only_the_users_request_is_no_report_of_work_done(reply: str, kept: bool) -> None:
    # Red team 36, finding 3: "Done: the runbook and the rollback steps were written [e:29]" was accepted, labelled
    # "user", though e:29 is the user's request to write them and nothing was ever written.
    events = [msg(27, "user", "I want to cut over the billing DB to pg-prod-7."), msg(28, "assistant", "Sure."),
              msg(29, "user", "Thanks. Please write the runbook and the rollback steps."), msg(30, "assistant", reply),
              msg(31, "user", "I finished the replica checks yesterday.")]
    draft = ("## Done\n- user: Done: the runbook and the rollback steps were written [e:29]\n"
             "- user: the replica checks are finished [e:31]\n")
    s = parse_summary(draft, valid_ids={e.id for e in events})
    report = guard(s, extract_items(events), events)
    done = [ln.text for ln in s.section("Done")]
    assert ("Done: the runbook and the rollback steps were written" in done) is kept, s.render()
    assert "the replica checks are finished" in done  # the user's own report of work done is a source
    assert [r.text for r in report.repaired if r.kind == "unsupported done"] == (
        [] if kept else ["Done: the runbook and the rollback steps were written"])
    assert "Please write the runbook and the rollback steps." in s.render()  # still asked, in the user's words


RT37_RULES = ["stop the rollout if the error rate exceeds 2%",
              "keep the replica read-only until the migration finishes",
              "под никаким предлогом не удаляй бакет logs-prod",
              "make sure nobody force-pushes to main",
              "the cutover must not exceed 15 minutes of downtime"]


def test_a_draft_with_no_rules_gets_every_rule_back_verbatim_with_its_citation() -> None:
    # Red team 37, finding 3: a draft with an empty "Constraints and rules" section got back only the "if … exceeds
    # 2%" and the "must not exceed" rules. The Russian "do not" led by "под никаким предлогом" and the "until …"
    # rule were silently gone; "make sure nobody force-pushes" was listed as not in the summary, with no reason.
    events: list[Event] = []
    for n, text in enumerate(RT37_RULES):
        events += [msg(2 * n + 1, "user", text), msg(2 * n + 2, "assistant", "Noted.")]
    draft = ("## Current goal\n- Migrate the orders database to Postgres 16 [e:2] (user)\n## Decisions\n- None.\n"
             "## Constraints and rules\n- None.\n## Still to do\n- Migrate.\n")
    s = parse_summary(draft, valid_ids={e.id for e in events})
    report = guard(s, extract_items(events), events)
    rules = {ln.text: ln.cites for ln in s.section("Constraints and rules") if ln.text != "None."}
    assert rules == {text: [2 * n + 1] for n, text in enumerate(RT37_RULES)}, s.render()
    assert {r.text for r in report.repaired if r.kind == "constraint"} == set(RT37_RULES)
    assert report.dropped == []
    assert "`logs-prod`" in "\n".join(ln.render() for ln in s.section("Exact identifiers"))


@pytest.mark.parametrize("text, kind", [
    ("keep the replica read-only until the migration finishes", "condition"),
    ("Hold the deploy until the backup finishes.", "condition"),
    ("Until the audit is over, freeze the schema.", "condition"),
    ("держи реплику только на чтение, пока не закончится миграция", "condition"),
    ("под никаким предлогом не удаляй бакет logs-prod", "negation"),
    ("Ни при каких условиях не перезапускай db-7.", "negation"),
    ("make sure nobody force-pushes to main", "negation"),
    ("No one may touch the prod cluster.", "negation"),
    # statements with "until" that set no rule
    ("I waited until noon.", None),
    ("We talked until midnight.", None),
    ("Everything was fine until the update.", None),
    ("Nothing happened until noon.", None),
    ("Work kept me busy until 9.", None),
    ("Wait until you see it!", None),
    ("Sleep well until tomorrow.", None),
    ("Dance until the morning!", None),
    ("Thanks for staying until the end!", None),
    ("Я ждал, пока не пришёл автобус.", None),
    ("Nobody knows why it broke.", None),
])
def test_an_until_rule_and_a_do_not_without_not_are_constraints_and_stories_are_not(text: str,
                                                                                  kind: str | None) -> None:
    assert constraint_kind(text) == kind


def test_a_story_with_until_is_not_restored_as_a_rule() -> None:
    events = [msg(1, "user", "I waited until noon for the vendor."), msg(2, "assistant", "That is a long wait."),
              msg(3, "user", "Everything was fine until the update.")]
    s = parse_summary("## Current goal\n- None. [e:1]", valid_ids={1, 2, 3})
    report = guard(s, extract_items(events), events)
    assert [r for r in report.repaired if r.kind == "constraint"] == [], report.repaired
    assert "until" not in "\n".join(ln.text for ln in s.section("Constraints and rules"))
