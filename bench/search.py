"""Full-text search over every session: index build time and query latency at 10k and 100k messages.

Prints JSON. For each size it writes realistic, varied transcripts (English and Russian chat about
deploys, code, meetings, travel…, with code lines, ids, numbers and names; 40–400 messages per
session, a third of them archived) into a temporary ``NEOTASK_HOME``, then measures:

- ``build_s``: indexing every transcript from nothing (``SearchIndex.sync``: parse, redact, insert);
- ``query_ms``: p50 / p95 over a mix of queries (a common word, a rare word, two words, a quoted
  phrase, a Russian word, a prefix, a word with ``--agent`` and with ``--since``), each run through
  :meth:`SearchIndex.search` of the index the app keeps (``/search``, the sessions browser);
- ``cli_query_ms``: the same mix, each with a fresh index object as ``neotask search`` runs it
  (open the database, check every transcript for lines not indexed yet, search);
- ``baseline_scan_ms``: the same queries answered without an index, by reading and matching every
  transcript (what a search would cost with no index), p50 / p95 on a sample of the queries;
- ``append_ms``: one durable message append through the store with the index kept (p50 / p95),
  against ``append_raw_ms``, the same append with no index (the baseline in the same run).

Target: 100k messages, ``query_ms.p50`` ≤ 50.

Usage: ``python bench/search.py [--sizes 10000,100000] [--queries 200]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOPICS_EN = [
    "the staging deploy failed again after the nginx config change on {host}",
    "can you review the pull request for the billing service before {day}",
    "the postgres migration {n} locks the orders table for about {m} minutes",
    "remind me what we decided about the retry policy for the payment webhook",
    "my flight to {city} leaves at {h}:{mm}, can we move the standup",
    "the kubernetes pod {host} keeps restarting with OOMKilled, memory limit is {m}Mi",
    "write a python function that parses ISO dates and returns the weekday",
    "Caroline said the support group meets on {day} evenings at the library",
    "what is the difference between a mutex and a semaphore in practice",
    "the grafana dashboard shows p99 latency of {n} ms for the search endpoint",
    "we agreed to freeze the API until the {day} release, no breaking changes",
    "the invoice {n} from {city} office is still unpaid, ping finance",
    "how do I rebase my feature branch onto main without losing the merge commits",
    "Nate adopted a second dog in {city}, they named him Biscuit",
    "the redis cache hit rate dropped to {m} percent after the {day} rollout",
]
TOPICS_RU = [
    "встреча по релизу перенесена на {day_ru}, в {h}:{mm}",
    "не трогай конфиг балансировщика до конца недели",
    "сервер {host} опять перегружен, загрузка процессора {m} процентов",
    "напомни, какой порт у тестовой базы данных, кажется {n}",
    "мы решили использовать очередь сообщений вместо прямых вызовов",
    "отпуск в {city_ru} начинается в {day_ru}, билеты уже куплены",
]
REPLIES = [
    "Sure. First check the upstream block:\n```nginx\nupstream app {{ server {host}:{n}; }}\n```\nthen reload.",
    "Here is a sketch:\n```python\ndef weekday(s: str) -> str:\n"
    "    return datetime.fromisoformat(s).strftime('%A')\n```",
    "Based on what you said earlier, the decision was to retry {m} times with exponential backoff.",
    "I don't have access to your calendar, but {day} at {h}:{mm} works if the room is free.",
    "The lock comes from the ALTER TABLE; run it with a concurrent index build instead.",
    "Понял. Перенёс встречу на {day_ru} и предупредил команду.",
    "A mutex has an owner; a semaphore counts permits. Use the mutex for exclusive access.",
    "Check `kubectl describe pod {host}`: the memory limit of {m}Mi is below the working set.",
]
HOSTS = ["api-7.example.com", "db-east-2", "worker-14", "edge-proxy-3", "узел-сборки-7", "cache-01"]
CITIES = ["Lisbon", "Berlin", "Tbilisi", "Osaka", "Denver", "Nairobi"]
CITIES_RU = ["Казань", "Сочи", "Калининград", "Иркутск"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
DAYS_RU = ["понедельник", "вторник", "среду", "четверг", "пятницу"]
QUERIES = [
    ("common word", "deploy", {}), ("rare word", "Biscuit", {}), ("two words", "postgres migration", {}),
    ("phrase", '"retry policy"', {}), ("russian word", "встреча", {}), ("prefix", "kube*", {}),
    ("code word", "fromisoformat", {}), ("agent filter", "nginx", {"agent": "ops"}),
    ("since filter", "invoice", {"since_days": 30}), ("no match", "xylophone", {}),
]


def _fill(rng: random.Random, template: str) -> str:
    return template.format(host=rng.choice(HOSTS), day=rng.choice(DAYS), n=rng.randint(10, 9999),
                           m=rng.randint(2, 95), city=rng.choice(CITIES), h=rng.randint(7, 22),
                           mm=f"{rng.choice([0, 15, 30, 45]):02d}", day_ru=rng.choice(DAYS_RU),
                           city_ru=rng.choice(CITIES_RU))


def make_corpus(n_messages: int, seed: int = 7) -> int:
    """Write transcripts totalling ``n_messages`` messages; returns the number of sessions."""
    from neotask_tui import paths
    from neotask_tui.storage.events import Event

    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    written = sessions = 0
    paths.ensure_dir(paths.sessions_dir())
    paths.ensure_dir(paths.archive_dir())
    while written < n_messages:
        sessions += 1
        n = min(rng.randint(40, 400), n_messages - written)
        agent = rng.choice(["main", "main", "ops", "research"])
        sid = f"2026{sessions:04d}-000000-{rng.getrandbits(32):08x}"
        t = start + timedelta(hours=sessions * 7)
        lines = [Event("session", 1, None, t.isoformat(), {
            "session_id": sid, "key": f"agent:{agent}:tui:chat{sessions % 9}", "created_at": t.isoformat(),
            "parent_session_id": None, "reason": "new"}).to_line()]
        for i in range(n):
            t += timedelta(seconds=rng.randint(5, 600))
            if i % 2 == 0:
                pool = TOPICS_RU if rng.random() < 0.2 else TOPICS_EN
                text = _fill(rng, rng.choice(pool))
                if rng.random() < 0.3:
                    text += " " + _fill(rng, rng.choice(TOPICS_EN))
                role = "user"
            else:
                text = _fill(rng, rng.choice(REPLIES))
                role = "assistant"
            lines.append(Event("message", i + 2, i + 1, t.isoformat(), {"role": role, "content": text}).to_line())
        folder = paths.archive_dir() if sessions % 3 == 0 else paths.sessions_dir()
        (folder / f"{sid}.jsonl").write_text("".join(lines), encoding="utf-8")
        written += n
    return sessions


def _pct(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"p50": round(statistics.median(xs), 2), "p95": round(xs[min(len(xs) - 1, int(len(xs) * 0.95))], 2),
            "n": len(xs)}


def _scan_baseline(query: str) -> int:
    """Answer a query with no index: read every transcript and match each message's words."""
    from neotask_tui.storage.search import _transcripts  # the same set of files the index covers
    from neotask_tui.storage.transcript import read_transcript

    words = [w.strip('"*').lower() for w in query.split()]
    found = 0
    for p in _transcripts():
        for e in read_transcript(p, repair=False).events:
            if e.type == "message":
                low = e.content.lower()
                if all(w in low for w in words):
                    found += 1
    return found


def run_size(n: int, queries: int) -> dict[str, Any]:
    from neotask_tui.storage.search import SearchIndex, parse_since

    home = tempfile.mkdtemp(prefix="neotask-bench-search-")
    os.environ["NEOTASK_HOME"] = home
    try:
        sessions = make_corpus(n)
        idx = SearchIndex(writable=True)
        t0 = time.perf_counter()
        added = idx.sync()
        build_s = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in Path(home, "data", "search").iterdir())
        now = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=(sessions + 1) * 7)
        per_kind: dict[str, list[float]] = {}
        times: list[float] = []
        hits: dict[str, int] = {}
        for i in range(queries):
            label, q, kw = QUERIES[i % len(QUERIES)]
            since = parse_since(f"{kw['since_days']}d", now) if "since_days" in kw else None
            t0 = time.perf_counter()
            res = idx.search(q, agent=kw.get("agent"), since=since)
            ms = (time.perf_counter() - t0) * 1000
            times.append(ms)
            per_kind.setdefault(label, []).append(ms)
            hits[label] = len(res.hits)
        cli: list[float] = []
        for i in range(max(10, queries // 10)):
            _label, q, _kw = QUERIES[i % len(QUERIES)]
            t0 = time.perf_counter()
            fresh = SearchIndex(writable=True)
            fresh.search(q)
            fresh.close()
            cli.append((time.perf_counter() - t0) * 1000)
        base: list[float] = []
        for _label, q, _kw in QUERIES[:3]:
            t0 = time.perf_counter()
            _scan_baseline(q)
            base.append((time.perf_counter() - t0) * 1000)
        append_ms, raw_ms = _appends(idx)
        idx.close()
        return {
            "messages": added, "sessions": sessions, "index_bytes": size, "build_s": round(build_s, 2),
            "query_ms": _pct(times), "cli_query_ms": _pct(cli),
            "query_p50_ms_by_kind": {k: _pct(v)["p50"] for k, v in per_kind.items()},
            "hits_by_kind": hits, "baseline_scan_ms": _pct(base), "append_ms": _pct(append_ms),
            "append_raw_ms": _pct(raw_ms),
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _appends(idx: Any) -> tuple[list[float], list[float]]:
    """Durable appends with the index kept (the store) and without (raw), alternating."""
    from neotask_tui import paths
    from neotask_tui.storage.events import Event, now_iso
    from neotask_tui.storage.store import SessionStore
    from neotask_tui.storage.transcript import append_events

    store = SessionStore()
    rec = store.create_session("agent:main:tui:bench", reason="new")
    raw = paths.transcript_path("bench-raw")
    kept: list[float] = []
    plain: list[float] = []
    for i in range(60):
        text = f"turn {i}: the staging deploy of build {i} finished, logs are on worker-14"
        t0 = time.perf_counter()
        store.append(rec.session_id, "message", {"role": "user", "content": text})
        kept.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        append_events(raw, [Event("message", i + 1, i or None, now_iso(), {"role": "user", "content": text})])
        plain.append((time.perf_counter() - t0) * 1000)
    store.search.close()
    return kept, plain


def main() -> None:
    from neotask_tui import tuning

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    out: dict[str, Any] = {"bench": "search", "engine": "sqlite fts5 (unicode61)",
                           "message_max_chars": tuning.SEARCH_MESSAGE_MAX_CHARS,
                           "load_avg_1m": round(os.getloadavg()[0], 2), "sizes": {}}
    for n in (int(x) for x in a.sizes.split(",")):
        out["sizes"][str(n)] = run_size(n, a.queries)
    out["target_100k_p50_ms"] = 50
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
