"""Summarization-drift cases (English and Russian) and how to run one; not a test module.

Each case is a short conversation (user turn, assistant reply) with filler around it: chit-chat
whose assistant replies invent identifiers (``os.path.getaccess(``, ``F_LARGHCADSCREDISABLE``, a
made-up path) and whose user lines hold abbreviations and bare years. It is streamed through the
real :class:`~neotask_tui.engine.facade.Engine`, compacted, and the summary is checked against
patterns for what must and must not appear (optionally within one section). The families are the
lecture's drift forms: lost negations, lost conditions, lost uncertainty, mixed roles, lost
sources, plus identifiers, numbers, reversed decisions, temporary preferences, done vs still to
do and the latest ask.

Two summarizers run a case: the extractive one, and the model path through a local server
speaking the real OpenAI protocol whose scripted summary is lossy on purpose
(:func:`lossy_summary`: the first thing said as the goal, every decision as current and the user's,
negations and conditions dropped, hedges removed, every identifier listed, some cut) — the guard
must repair all of it. Used by ``tests/engine/test_drift.py`` and ``bench/drift.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from neotask_tui.config import Settings
from neotask_tui.engine.compaction.compactor import CompactionResult
from neotask_tui.engine.events import TurnDone
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.openai_compat import OpenAICompatProvider
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.storage.events import Event
from neotask_tui.text.tokens import count_text
from tests.doubles import Clock
from tests.protocol_servers import OpenAIServer, Reply

Mode = Literal["extractive", "model"]


@dataclass(frozen=True)
class Check:
    """A pattern that must (or must not) match the summary, within one section if ``section``."""

    pattern: str
    section: str = ""

    def found(self, summary: str) -> bool:
        text = section_text(summary, self.section) if self.section else summary
        return re.search(self.pattern, text, re.MULTILINE) is not None


@dataclass(frozen=True)
class DriftCase:
    """One conversation, what its summary must and must not say, and the identifiers the user gave."""

    name: str
    lang: str
    family: str
    turns: tuple[tuple[str, str], ...]
    must: tuple[Check, ...]
    must_not: tuple[Check, ...] = ()
    ids: tuple[str, ...] = ()


@dataclass
class Outcome:
    """What one run of a case gave."""

    case: str
    mode: str
    passed: bool
    summary: str
    failures: list[str] = field(default_factory=list)
    listed: list[str] = field(default_factory=list)
    """Identifiers listed under Exact identifiers."""
    fallback: bool = False
    tokens: int = 0
    """Estimated tokens of the summary."""
    repaired: dict[str, int] = field(default_factory=dict)
    """What the guard repaired, by kind (``inverted``, ``superseded``, ``unsourced``...)."""
    budget: int = 0
    """The summary's soft cap (:meth:`~neotask_tui.engine.compaction.compactor.Compactor.summary_budget`)."""


def section_text(summary: str, name: str) -> str:
    """The lines of one ``## name`` section of a rendered summary."""
    out: list[str] = []
    inside = False
    for line in summary.splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == name
            continue
        if inside:
            out.append(line)
    return "\n".join(out)


def listed_identifiers(summary: str) -> list[str]:
    """The backticked identifiers of the summary's Exact identifiers section."""
    return re.findall(r"`([^`]+)`", section_text(summary, "Exact identifiers"))


G, D, C, A, Q = "Current goal", "Decisions", "Constraints and rules", "Assumptions", "Open questions"
DONE, TODO, LAST, IDS = "Done", "Still to do", "Latest user request", "Exact identifiers"

FILLER_EN = (
    ("Hi! Quick one before we start.", "Sure. On macOS you could call os.path.getaccess( or set "
     "F_LARGHCADSCREDISABLE, e.g. for /Users/user/Desktop/test-data/myfile.txt."),
    ("I read about this in 2019, e.g. on some blog, i.e. nothing official.",
     "Makes sense, i.e. see https://docs.made-up.example/v9 and run `fixture_loader --all` with v9.9.9."),
)
FILLER_RU = (
    ("Привет! Пара слов перед началом.", "Конечно. Например, можно вызвать os.path.getaccess( или "
     "выставить F_LARGHCADSCREDISABLE для /Users/user/Desktop/test-data/myfile.txt."),
    ("Я читал об этом в 2019, т.е. где-то в блоге, и т.д.",
     "Понятно, т.е. см. https://docs.made-up.example/v9 и запустите `fixture_loader --all` с v9.9.9."),
)
TAIL_EN = ("Thanks, that's all for now.", "You're welcome. Whenever you come back, just send a message and we can "
           "pick up where we left off; the session keeps the history, so nothing you said here gets lost in "
           "the meantime, and I can recap it for you.")
TAIL_RU = ("Спасибо, пока всё.", "Пожалуйста. Когда вернётесь, просто напишите сообщение, и мы продолжим с того "
           "же места; сессия хранит историю, так что ничего из сказанного здесь не потеряется, а я смогу "
           "кратко напомнить, на чём мы остановились.")
NOISE = ("os.path.getaccess", "F_LARGHCADSCREDISABLE", "/Users/user", "made-up", "fixture_loader", "9.9.9",
         "e.g", "i.e", "т.е", "2019")
"""Identifiers only the assistant produced, abbreviations and bare years: never listed."""


def _c(pattern: str, section: str = "") -> Check:
    return Check(pattern, section)


def _not_current(pattern: str) -> tuple[Check, ...]:
    """A revoked statement: absent from the current goal, and marked superseded wherever it is listed."""
    return (_c(pattern, G), _c(rf"^- (?!.*\(superseded by e:\d+\)).*{pattern}", D), _c(pattern, C))


CASES: tuple[DriftCase, ...] = (
    # --- reversed decisions
    DriftCase("reversed-queue", "en", "reversed", (
        ("Let's go with option B for the queue: RabbitMQ.", "RabbitMQ it is; we'll use a topic exchange."),
        ("Actually, scrap that. We go with option C: Postgres LISTEN/NOTIFY, no separate broker.",
         "Understood, LISTEN/NOTIFY then."),
    ), must=(_c(r"user: We go with option C: Postgres LISTEN/NOTIFY, no separate broker\.", D),
             _c(r"\(superseded by e:\d+\) Let's go with option B", D)),
       must_not=(*_not_current("RabbitMQ"),), ids=("LISTEN/NOTIFY",)),
    DriftCase("reversed-db", "en", "reversed", (
        ("We decided to store sessions in MySQL.", "OK, MySQL."),
        ("Change of plan: we'll use SQLite instead, it ships with Python.", "Fine, SQLite."),
    ), must=(_c(r"user: Change of plan: we'll use SQLite instead", ""),),
       must_not=_not_current("MySQL")),
    DriftCase("reversed-constraint", "en", "reversed", (
        ("Do not add any new dependencies.", "Noted: no new dependencies."),
        ("Actually, new dependencies are fine now if they are pure Python.", "Got it."),
    ), must=(_c(r"\(superseded by e:\d+\) Do not add any new dependencies", C),
             _c(r"new dependencies are fine now if they are pure Python")),
       must_not=(_c(r"^- user: Do not add any new dependencies", C),)),
    DriftCase("reversed-goal", "en", "reversed", (
        ("I want to migrate the billing service to Go.", "Go is a good fit."),
        ("Never mind the Go migration. My goal now is to fix the flaky invoice tests.", "OK, the tests."),
    ), must=(_c(r"fix the flaky invoice tests", G),), must_not=(_c(r"billing service to Go", G),)),
    DriftCase("reversed-ru-queue", "ru", "reversed", (
        ("Давай возьмём Kafka для очереди.", "Хорошо, Kafka."),
        ("Нет, я передумал: используем Redis Streams, без Kafka.", "Понял, Redis Streams."),
    ), must=(_c(r"user: Нет, я передумал: используем Redis Streams, без Kafka\.", ""),
             _c(r"\(superseded by e:\d+\) Давай возьмём Kafka", D)),
       must_not=(_c(r"^- (?!.*superseded).*возьмём Kafka", D), _c("Kafka", G))),
    DriftCase("reversed-ru-format", "ru", "reversed", (
        ("Решили выгружать отчёт в CSV.", "Хорошо, CSV."),
        ("Забудь про CSV, выгружаем в Parquet.", "Понял, Parquet."),
    ), must=(_c(r"Забудь про CSV, выгружаем в Parquet"),
             _c(r"\(superseded by e:\d+\) Решили выгружать отчёт в CSV", D)),
       must_not=(_c(r"^- (?!.*superseded).*Решили выгружать", D),)),
    DriftCase("reversed-ru-goal", "ru", "reversed", (
        ("Моя задача — переписать парсер логов.", "Хорошо."),
        ("Отбой, парсер подождёт. Сейчас цель — починить деплой на staging.", "Понял."),
    ), must=(_c(r"починить деплой на staging", G),), must_not=(_c(r"переписать парсер", G),)),
    # --- negations
    DriftCase("negation-redis", "en", "negation", (
        ("Do not use Redis for the session cache.", "Sure, I'll keep it in memory."),
    ), must=(_c(r"^- user: Do not use Redis for the session cache\.", C),),
       must_not=(_c(r"^- (?:user: )?Use Redis", ""),)),
    DriftCase("negation-main", "en", "negation", (
        ("Never push directly to main; open a merge request.", "Understood."),
    ), must=(_c(r"Never push directly to main", C),), must_not=(_c(r"^- [^\n]*(?<!Never )push directly to main", D),)),
    DriftCase("negation-api", "en", "negation", (
        ("We won't change the public API of make_app() in this release.", "Right, it stays."),
    ), must=(_c(r"We won't change the public API of make_app\(\)", C), _c(r"`make_app\(\)`", IDS)),
       ids=("make_app()",)),
    DriftCase("negation-ru-orm", "ru", "negation", (
        ("Не используй ORM в этом сервисе, только чистый SQL.", "Хорошо, без ORM."),
    ), must=(_c(r"Не используй ORM в этом сервисе", C),)),
    DriftCase("negation-ru-migrations", "ru", "negation", (
        ("Нельзя трогать миграции в папке db/migrations.", "Не трогаю."),
    ), must=(_c(r"Нельзя трогать миграции", C), _c(r"`db/migrations`", IDS)), ids=("db/migrations",)),
    # --- conditions
    DriftCase("condition-demo", "en", "condition", (
        ("Only for the demo, disable auth on port 8080.", "OK, auth off on 8080 for the demo."),
    ), must=(_c(r"Only for the demo, disable auth on port 8080", C), _c("`8080`", IDS)),
       must_not=(_c(r"^- (?:user: )?Disable auth on port 8080", ""),), ids=("8080",)),
    DriftCase("condition-unless", "en", "condition", (
        ("Retry the upload three times unless the server returns 413.", "Will do."),
    ), must=(_c(r"unless the server returns 413", C), _c("`413`", IDS)), ids=("413",)),
    DriftCase("condition-ru-demo", "ru", "condition", (
        ("Только для демо отключи проверку токена.", "Хорошо, только для демо."),
    ), must=(_c(r"Только для демо отключи проверку токена", C),),
       must_not=(_c(r"^- (?:user: )?[Оо]тключи проверку токена", ""),)),
    DriftCase("condition-ru-if", "ru", "condition", (
        ("Деплой только если все тесты зелёные.", "Понял."),
    ), must=(_c(r"Деплой только если все тесты зелёные", C),)),
    # --- uncertainty
    DriftCase("uncertain-timezone", "en", "uncertainty", (
        ("Maybe the problem is the timezone of the cron host.", "Could be; let's check."),
    ), must=(_c(r"Maybe the problem is the timezone", A),),
       must_not=(_c(r"^- (?!.*\(assumption\))(?!.*[Mm]aybe).*problem is the timezone", ""),)),
    DriftCase("uncertain-cache", "en", "uncertainty", (
        ("I think the cache is stale after deploys, not sure.", "Possible."),
    ), must=(_c(r"I think the cache is stale after deploys", A),)),
    DriftCase("uncertain-ru-memory", "ru", "uncertainty", (
        ("Возможно, утечка памяти в воркере импорта.", "Проверим."),
    ), must=(_c(r"Возможно, утечка памяти в воркере импорта", A),),
       must_not=(_c(r"^- (?!.*\(assumption\))(?!.*Возможно).*утечка памяти", ""),)),
    DriftCase("uncertain-ru-dns", "ru", "uncertainty", (
        ("Кажется, виноват DNS, но я не уверен.", "Посмотрим логи."),
    ), must=(_c(r"Кажется, виноват DNS", A),)),
    # --- identifiers
    DriftCase("identifiers-build", "en", "identifiers", (
        ("CI build build-4471 on branch feat/tz-fix fails in src/app/time_utils.py at line 212.",
         "Probably naive datetimes; try datetime.now(tz=UTC) in time_utils or patch utcnow_legacy()."),
    ), must=(_c("`build-4471`", IDS), _c("`feat/tz-fix`", IDS), _c("`src/app/time_utils.py`", IDS), _c("`212`", IDS)),
       must_not=(_c(r"`/tz-fix`", IDS), _c(r"utcnow_legacy", IDS)),
       ids=("build-4471", "feat/tz-fix", "src/app/time_utils.py", "212")),
    DriftCase("identifiers-contact", "en", "identifiers", (
        ("Send the report to ops@acme.example and cc https://status.acme.example/incidents/77.", "Will do."),
    ), must=(_c("`ops@acme.example`", IDS), _c("`https://status.acme.example/incidents/77`", IDS)),
       ids=("ops@acme.example", "https://status.acme.example/incidents/77")),
    DriftCase("identifiers-commit", "en", "identifiers", (
        ("The regression came with commit 9f3c2ab1 in v2.14.0, see ticket PAY-3310.",
         "I'd bisect with git bisect start HEAD v2.13.9 and check payments/ledger_sync.py."),
    ), must=(_c("`9f3c2ab1`", IDS), _c("`v2.14.0`", IDS), _c("`PAY-3310`", IDS)),
       must_not=(_c("v2.13.9", IDS), _c("ledger_sync", IDS)), ids=("9f3c2ab1", "v2.14.0", "PAY-3310")),
    DriftCase("identifiers-ru-config", "ru", "identifiers", (
        ("Конфиг лежит в deploy/k8s/values-prod.yaml, сервис billing-api-7.", "Понял, посмотрю."),
    ), must=(_c("`deploy/k8s/values-prod.yaml`", IDS), _c("`billing-api-7`", IDS)),
       ids=("deploy/k8s/values-prod.yaml", "billing-api-7")),
    DriftCase("identifiers-ru-env", "ru", "identifiers", (
        ("Переменная DATABASE_URL задана в .env.staging, хост db-3.internal:5432.",
         "Можно ещё добавить POOL_MAX_OVERFLOW=20 в settings_local.py."),
    ), must=(_c("`DATABASE_URL`", IDS), _c("`db-3.internal:5432`", IDS)),
       must_not=(_c("POOL_MAX_OVERFLOW", IDS), _c("settings_local", IDS)),
       ids=("DATABASE_URL", ".env.staging", "db-3.internal:5432")),
    # --- numbers
    DriftCase("numbers-budget", "en", "numbers", (
        ("The budget is $1,250 per month and the limit is 5000 rows per batch.", "Noted."),
    ), must=(_c(r"`\$1,250`", IDS), _c("`5000`", IDS)), ids=("$1,250", "5000")),
    DriftCase("numbers-sla", "en", "numbers", (
        ("We must keep p99 latency under 250 ms and uptime at 99.95%.", "OK."),
    ), must=(_c("`250`", IDS), _c(r"`99\.95%`", IDS), _c(r"p99 latency under 250 ms", C)), ids=("250", "99.95%")),
    DriftCase("numbers-ru-price", "ru", "numbers", (
        ("Цена — 1 990 ₽, скидка 15% до 2025-12-31.", "Записал."),
    ), must=(_c("`15%`", IDS), _c("`2025-12-31`", IDS)), ids=("1 990 ₽", "15%", "2025-12-31")),
    DriftCase("numbers-ru-timeout", "ru", "numbers", (
        ("Таймаут запроса 30 секунд, ретраев не больше 3, порт 6432.", "Хорошо."),
    ), must=(_c("`6432`", IDS), _c(r"ретраев не больше 3", C)), ids=("6432",)),
    # --- roles
    DriftCase("roles-proposal", "en", "roles", (
        ("How should we schedule the retries?", "I suggest we'll use Celery beat with a 5 minute interval."),
        ("Hmm, let me think about it.", "Sure."),
    ), must=(_c(r"^- assistant \(proposal\): .*Celery", D),), must_not=(_c(r"^- user: .*Celery", ""),)),
    DriftCase("roles-user-chose", "en", "roles", (
        ("Which ORM would you pick?", "We could go with SQLAlchemy or Peewee."),
        ("We chose Peewee for the admin tool.", "Peewee it is."),
    ), must=(_c(r"^- user: We chose Peewee for the admin tool\.", D),),
       must_not=(_c(r"^- user: .*SQLAlchemy", ""),)),
    DriftCase("roles-ru-proposal", "ru", "roles", (
        ("Как лучше хранить вложения?", "Предлагаю: решили хранить их в S3 с подписанными ссылками."),
        ("Надо подумать.", "Хорошо."),
    ), must=(_c(r"^- assistant \(proposal\): .*S3", D),), must_not=(_c(r"^- user: .*S3", ""),)),
    DriftCase("roles-ru-user", "ru", "roles", (
        ("Какой брокер посоветуешь?", "Можно RabbitMQ или NATS."),
        ("Решили: берём NATS.", "Хорошо, NATS."),
    ), must=(_c(r"^- user: Решили: берём NATS\.", D),), must_not=(_c(r"^- user: .*RabbitMQ", ""),)),
    # --- temporary preferences
    DriftCase("temporary-brief", "en", "temporary", (
        ("Today answer briefly, I'm in a hurry.", "OK."),
    ), must=(_c(r"Today answer briefly", C),), must_not=(_c(r"^- (?:user: )?Answer briefly", ""),)),
    DriftCase("temporary-english", "en", "temporary", (
        ("For now, write the comments in English.", "Sure."),
    ), must=(_c(r"For now, write the comments in English", C),)),
    DriftCase("temporary-ru-short", "ru", "temporary", (
        ("Сегодня отвечай коротко, я спешу.", "Хорошо."),
    ), must=(_c(r"Сегодня отвечай коротко", C),), must_not=(_c(r"^- (?:user: )?[Оо]твечай коротко", ""),)),
    DriftCase("temporary-ru-session", "ru", "temporary", (
        ("Пока что пиши примеры на Python 3.12.", "Хорошо."),
    ), must=(_c(r"Пока что пиши примеры на Python 3\.12", C), _c(r"`3\.12`", IDS)), ids=("3.12",)),
    # --- done vs still to do
    DriftCase("progress-migration", "en", "progress", (
        ("The schema migration is done and merged.", "Great."),
        ("We still need to update the API docs and the changelog.", "OK."),
    ), must=(_c(r"schema migration is done", DONE), _c(r"still need to update the API docs", TODO)),
       must_not=(_c(r"schema migration", TODO), _c(r"API docs", DONE))),
    DriftCase("progress-asked-then-done", "en", "progress", (
        ("Please add a regression test for the parser.", "Will do."),
        ("I've added the regression test for the parser myself. Next, rename the config loader.", "OK."),
    ), must=(_c(r"added the regression test", DONE), _c(r"rename the config loader", TODO)),
       must_not=(_c(r"Please add a regression test", TODO),)),
    DriftCase("progress-ru-done", "ru", "progress", (
        ("Миграция базы готово, я уже задеплоил её.", "Отлично."),
        ("Осталось обновить документацию.", "Хорошо."),
    ), must=(_c(r"задеплоил", DONE), _c(r"Осталось обновить документацию", TODO)),
       must_not=(_c(r"документаци", DONE),)),
    DriftCase("progress-ru-notyet", "ru", "progress", (
        ("Тесты ещё не исправлены.", "Понял."),
        ("Линтер я уже починил.", "Отлично."),
    ), must=(_c(r"Тесты ещё не исправлены", TODO), _c(r"Линтер я уже починил", DONE)),
       must_not=(_c(r"Тесты ещё не", DONE),)),
    # --- latest ask and goal
    DriftCase("latest-ask", "en", "latest", (
        ("I want to speed up the CSV export.", "Profiling first?"),
        ("Yes. Can you profile export_csv() on the 2 GB sample and show the top 10 calls?", "Running it."),
    ), must=(_c(r"Can you profile export_csv\(\) on the 2 GB sample and show the top 10 calls\?", LAST),
             _c(r"speed up the CSV export", G), _c(r"`export_csv\(\)`", IDS)),
       ids=("export_csv()",)),
    DriftCase("latest-ask-two", "en", "latest", (
        ("Please rename the module to billing_core.", "Done."),
        ("Now write a migration note for the rename.", "Sure."),
    ), must=(_c(r"Now write a migration note for the rename", LAST),),
       must_not=(_c(r"rename the module", LAST),), ids=("billing_core",)),
    DriftCase("latest-ru-ask", "ru", "latest", (
        ("Хочу ускорить сборку фронтенда.", "Начнём с кэша?"),
        ("Да. Напиши конфиг кэша для vite.config.ts, пожалуйста.", "Пишу."),
    ), must=(_c(r"Напиши конфиг кэша для vite\.config\.ts, пожалуйста", LAST), _c(r"ускорить сборку", G),
             _c(r"`vite\.config\.ts`", IDS)), ids=("vite.config.ts",)),
    DriftCase("latest-ru-goal", "ru", "latest", (
        ("Нужно перенести крон-задачи в systemd.", "Хорошо."),
        ("Теперь займёмся логами: настрой ротацию для /var/log/neotask.", "Делаю."),
    ), must=(_c(r"настрой ротацию", LAST), _c(r"`/var/log/neotask`", IDS)), ids=("/var/log/neotask",)),
    DriftCase("goal-latest-en", "en", "latest", (
        ("I'm working on the login page styles.", "OK."),
        ("Now let's switch to the password reset flow; I need it working by Friday.", "Sure."),
    ), must=(_c(r"password reset flow", G),), must_not=(_c(r"login page styles", G),)),
    # --- red team #2: time limits, goals, take-backs, identifiers, instructions, the latest ask
    DriftCase("time-until-weekday", "en", "temporary", (
        ("Until Thursday, keep the dark-launch toggle off.", "OK, off until Thursday."),
    ), must=(_c(r"Until Thursday, keep the dark-launch toggle off", C),)),
    DriftCase("time-till-end-of-day", "en", "temporary", (
        ("Keep the response cache disabled till end of day.", "Sure."),
        ("Through the end of the week, do not merge anything into release.", "Understood."),
    ), must=(_c(r"Keep the response cache disabled till end of day", C),
             _c(r"Through the end of the week, do not merge anything into release", C))),
    DriftCase("time-ru-hours", "ru", "temporary", (
        ("В течение трёх часов не перезапускай воркеры.", "Хорошо."),
    ), must=(_c(r"В течение трёх часов не перезапускай воркеры", C),)),
    DriftCase("time-ru-week", "ru", "temporary", (
        ("До конца месяца не трогай настройки биллинга.", "Не трогаю."),
        ("До пятницы держи фичу выключенной.", "Хорошо."),
    ), must=(_c(r"До конца месяца не трогай настройки биллинга", C), _c(r"До пятницы держи фичу выключенной", C))),
    DriftCase("goal-the-goal-is", "en", "latest", (
        ("The goal is to move the reporting jobs to Airflow 2.9.", "Sounds good."),
    ), must=(_c(r"The goal is to move the reporting jobs to Airflow 2\.9", G),), ids=("2.9",)),
    DriftCase("goal-ru-the-goal-is", "ru", "latest", (
        ("Цель — перевести отчёты на ClickHouse 24.3.", "Хорошо."),
    ), must=(_c(r"Цель — перевести отчёты на ClickHouse 24\.3", G),), ids=("ClickHouse", "24.3")),
    DriftCase("goal-kept-after-ask", "en", "latest", (
        ("The goal is to move the reporting jobs to Airflow 2.9.", "Sounds good."),
        ("I need you to check the scheduler logs first.", "Checking."),
    ), must=(_c(r"The goal is to move the reporting jobs to Airflow 2\.9", G),
             _c(r"I need you to check the scheduler logs first", LAST)),
       must_not=(_c(r"scheduler logs", G),), ids=("2.9",)),
    DriftCase("goal-ru-kept-after-ask", "ru", "latest", (
        ("Цель — перевести отчёты на ClickHouse 24.3.", "Хорошо."),
        ("Мне нужно, чтобы ты сначала проверил логи планировщика.", "Проверяю."),
    ), must=(_c(r"Цель — перевести отчёты на ClickHouse 24\.3", G),),
       must_not=(_c(r"логи планировщика", G),), ids=("ClickHouse", "24.3")),
    DriftCase("reversed-decision-not-goal", "en", "reversed", (
        ("The goal is to move the order store to MongoDB 7.", "OK."),
        ("We decided to use MongoDB 7 with the Atlas operator.", "Fine."),
        ("Actually, scrap that — use CouchDB instead of MongoDB.", "Understood."),
    ), must=(_c(r"move the order store to MongoDB 7", G),
             _c(r"\(superseded by e:\d+\) We decided to use MongoDB 7", D)),
       must_not=(_c(r"^- (?!.*\(superseded by e:\d+\)).*We decided to use MongoDB", D),)),
    DriftCase("reversed-ru-decision-not-goal", "ru", "reversed", (
        ("Цель — перенести очередь заказов на RabbitMQ.", "Хорошо."),
        ("Решили использовать RabbitMQ с плагином shovel.", "Понял."),
        ("Нет, я передумал: используем NATS вместо RabbitMQ.", "Понял, NATS."),
    ), must=(_c(r"перенести очередь заказов на RabbitMQ", G),
             _c(r"\(superseded by e:\d+\) Решили использовать RabbitMQ", D))),
    DriftCase("identifiers-odd-shapes", "en", "identifiers", (
        ("The image digest is sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae and the "
         "binary is D:\\Tools\\agent\\run.exe.", "Noted."),
        ("The node listens on 2001:db8:85a3::8a2e:370:7334, release v4.0.1-beta.2+exp.sha.5114.", "OK."),
    ), must=(_c(r"`sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae`", IDS),
             _c(r"`D:\\Tools\\agent\\run\.exe`", IDS), _c(r"`2001:db8:85a3::8a2e:370:7334`", IDS),
             _c(r"`v4\.0\.1-beta\.2\+exp\.sha\.5114`", IDS)),
       ids=("sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae", "D:\\Tools\\agent\\run.exe",
            "2001:db8:85a3::8a2e:370:7334", "v4.0.1-beta.2+exp.sha.5114")),
    DriftCase("identifiers-accounts-channels", "en", "identifiers", (
        ("Deploy with arn:aws:iam::210987654321:role/ci-runner, ping @jane.doe in #deploy-status, "
         "binaries go to $HOME/.local/bin.", "Sure."),
    ), must=(_c(r"`arn:aws:iam::210987654321:role/ci-runner`", IDS), _c(r"`@jane\.doe`", IDS),
             _c(r"`#deploy-status`", IDS), _c(r"`\$HOME/\.local/bin`", IDS)),
       ids=("arn:aws:iam::210987654321:role/ci-runner", "@jane.doe", "#deploy-status", "$HOME/.local/bin")),
    DriftCase("identifiers-ru-cyrillic", "ru", "identifiers", (
        ("Сборка идёт на узле агент-линукс-3, тикет #7781, канал #релизы-прод.", "Понял."),
    ), must=(_c(r"`агент-линукс-3`", IDS), _c(r"`#7781`", IDS), _c(r"`#релизы-прод`", IDS)),
       ids=("агент-линукс-3", "#7781", "#релизы-прод")),
    DriftCase("assume-role-instruction", "en", "roles", (
        ("Assume the role arn:aws:iam::111122223333:role/release for the rollout.", "OK."),
    ), must=(_c(r"Assume the role arn:aws:iam::111122223333:role/release for the rollout", TODO),),
       must_not=(_c(r"Assume the role", A),), ids=("arn:aws:iam::111122223333:role/release",)),
    DriftCase("latest-ask-imperative", "en", "latest", (
        ("Please rebuild the search index.", "Rebuilding."),
        ("Notify the on-call channel once the reindex finishes.", "Will do."),
    ), must=(_c(r"Notify the on-call channel once the reindex finishes", LAST),),
       must_not=(_c(r"rebuild the search index", LAST),)),
    DriftCase("latest-ru-ask-imperative", "ru", "latest", (
        ("Пожалуйста, пересобери поисковый индекс.", "Пересобираю."),
        ("Пингани дежурного, когда индекс будет готов.", "Хорошо."),
    ), must=(_c(r"Пингани дежурного, когда индекс будет готов", LAST),),
       must_not=(_c(r"пересобери поисковый индекс", LAST),)),
)


def filler(case: DriftCase) -> tuple[tuple[str, str], ...]:
    return FILLER_RU if case.lang == "ru" else FILLER_EN


def conversation(case: DriftCase) -> list[tuple[str, str]]:
    """Filler, the case's first turn, filler, the rest, and a closing pair (kept raw)."""
    pre = filler(case)
    tail = TAIL_RU if case.lang == "ru" else TAIL_EN
    return [pre[0], case.turns[0], pre[1], *case.turns[1:], tail]


def settings() -> Settings:
    s = Settings()
    s.memory.enabled = False
    s.session.daily_reset_hour = -1
    s.context.window_tokens = 8000
    s.compaction.keep_recent_tokens = 40
    s.compaction.rebuild_every = 0
    s.compaction.timeout_seconds = 20
    return s


def _clock() -> Clock:
    return Clock(datetime(2025, 3, 1, 10, 0, 1, tzinfo=UTC), auto_tick=timedelta(seconds=1))


_HEDGE = re.compile(r"^(?:maybe|i think|perhaps|possibly|возможно|кажется|наверное),?\s*", re.IGNORECASE)
_NEG = re.compile(r"\b(?:do not|don't|never|won't|not)\s+|(?<!\w)(?:не|нельзя)\s+", re.IGNORECASE)
_COND = re.compile(r"^(?:only for the demo|только для демо),?\s*|\s*unless .*$|\s*только если", re.IGNORECASE)
_TIME = re.compile(r"^(?:today|for now|сегодня|пока что),?\s*", re.IGNORECASE)
_TOKEN = re.compile(r"[\w./:@$%-]{3,}")


def lossy_summary(events: list[Event]) -> str:
    """A model summary with every drift on purpose: the first thing said as the goal; every sentence
    as a current decision of the user (the assistant's too); negations, conditions, time limits and
    hedges dropped; every token of any speaker listed as an identifier, and paths cut at a slash."""
    msgs = [e for e in events if e.type == "message" and e.content.strip()]
    if not msgs:
        return "## Goal\n- nothing"
    first = msgs[0]
    out = ["## Goal", f"- user: {first.content.split('.')[0]} [e:{first.id}]", "## Decisions"]
    rules = ["## Constraints and rules"]
    idents: list[str] = []
    for ev in msgs:
        for sent in re.split(r"(?<=[.!?])\s+", ev.content.strip()):
            flat = _TIME.sub("", _COND.sub("", _NEG.sub("", _HEDGE.sub("", sent)))).strip()
            if not flat:
                continue
            flat = flat[0].upper() + flat[1:]
            if flat != sent:
                rules.append(f"- user: {flat} [e:{ev.id}]")
            else:
                out.append(f"- user: {flat} [e:{ev.id}]")
        for tok in _TOKEN.findall(ev.content):
            if any(c in tok for c in "/_.-@$%") or any(c.isdigit() for c in tok):
                idents.append(tok.rstrip(".,:"))
                if "/" in tok.strip("/"):
                    idents.append("/" + tok.rsplit("/", 1)[-1])
    ident_lines = ["## Exact identifiers", "- " + ", ".join(f"`{t}`" for t in dict.fromkeys(idents) if t)
                   + f" [e:{msgs[-1].id}]"]
    return "\n".join(out + rules + ident_lines)


def key_of(case: DriftCase, mode: Mode) -> str:
    """Each run has its own session key: runs sharing a data dir never see each other's turns."""
    return f"agent:main:tui:drift-{case.name}-{mode}"


async def _chat(eng: Engine, key: str, pairs: list[tuple[str, str]], queue: object) -> None:
    for user, reply in pairs:
        if isinstance(queue, ScriptedProvider):
            queue.queue(reply)
        elif isinstance(queue, OpenAIServer):
            queue.queue(Reply(chunks=[reply]))
        out = [e async for e in eng.send(user, key)]
        assert any(isinstance(e, TurnDone) for e in out), out


async def run(case: DriftCase, mode: Mode) -> Outcome:
    """Stream ``case`` through a real Engine, compact it with ``mode``, and check the summary."""
    pairs = conversation(case)
    key = key_of(case, mode)
    if mode == "extractive":
        prov = ScriptedProvider()
        eng = Engine(settings(), provider=prov, clock=_clock())
        try:
            await _chat(eng, key, pairs, prov)
            eng.compactor.use_model = False
            res = await eng.compact(key)
            budget = eng.compactor.summary_budget()
        finally:
            await eng.aclose()
    else:
        with OpenAIServer() as srv:
            provider = OpenAICompatProvider(base_url=srv.base_url, api_key="k", model="gpt-4o", max_retries=0)
            eng = Engine(settings(), provider=provider, clock=_clock())
            try:
                await _chat(eng, key, pairs, srv)
                srv.queue(Reply(chunks=[lossy_summary(list(eng.events(key)))]))
                res = await eng.compact(key)
                budget = eng.compactor.summary_budget()
            finally:
                await eng.aclose()
    out = judge(case, mode, res)
    out.tokens, out.budget = count_text(res.summary), budget
    return out


def judge(case: DriftCase, mode: str, res: CompactionResult) -> Outcome:
    """Check a compaction result against the case's patterns and the noise every case must leave out."""
    text = res.summary
    failures = [f"missing {c.pattern!r}" + (f" in {c.section}" if c.section else "")
                for c in case.must if not c.found(text)]
    failures += [f"unwanted {c.pattern!r}" + (f" in {c.section}" if c.section else "")
                 for c in case.must_not if c.found(text)]
    listed = listed_identifiers(text)
    failures += [f"noise identifier {t!r}" for t in listed if any(n in t for n in NOISE)]
    if mode == "model" and res.fallback:
        failures.append(f"the model path fell back: {res.fallback_reason}")
    repaired: dict[str, int] = {}
    for r in res.repaired:
        repaired[str(r["kind"])] = repaired.get(str(r["kind"]), 0) + 1
    return Outcome(case.name, mode, not failures, text, failures, listed, res.fallback, repaired=repaired)


def identifier_figures(outcomes: list[Outcome]) -> dict[str, float | int]:
    """Precision (listed identifiers that the user stated, whole) and recall (stated ones listed)."""
    by_name = {c.name: c for c in CASES}
    listed = stated = correct = found = 0
    for o in outcomes:
        case = by_name[o.case]
        listed += len(o.listed)
        correct += sum(1 for t in o.listed if t in case.ids)
        stated += len(case.ids)
        found += sum(1 for t in case.ids if t in o.listed)
    return {
        "listed": listed, "stated": stated,
        "precision": round(correct / listed, 3) if listed else 1.0,
        "recall": round(found / stated, 3) if stated else 1.0,
    }
