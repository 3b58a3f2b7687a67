"""Bench: a pasted huge ``/search`` query, before (every word one FTS5 AND term) vs after (distinct
terms, at most ``tuning.SEARCH_QUERY_MAX_TERMS``). Prints JSON: median seconds per query.

    python bench/search_query_terms.py [--words 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import time

from neotask_tui import tuning
from neotask_tui.storage.search import fts_query


def _db() -> sqlite3.Connection:
    con = sqlite3.connect(":memory:")
    con.execute('CREATE VIRTUAL TABLE m USING fts5(a, tokenize = "unicode61 remove_diacritics 2")')
    con.executemany("INSERT INTO m VALUES (?)", [("evil twin",), ("warm words here",)] * 50)
    return con


def _time(con: sqlite3.Connection, match: str, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        con.execute("SELECT rowid FROM m WHERE m MATCH ?", (match,)).fetchall()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--words", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    con = _db()
    query = "x " * a.words + "evil"
    before = " ".join(f'"{w}"' for w in query.split())  # the old expression: one term per word
    t0 = time.perf_counter()
    after = fts_query(query)
    build = time.perf_counter() - t0
    distinct = " ".join(f"w{i}" for i in range(a.words // 10))
    print(json.dumps({
        "words": a.words, "cap": tuning.SEARCH_QUERY_MAX_TERMS,
        "repeated_word_query_s": {"before": round(_time(con, before, a.repeat), 4),
                                  "after": round(_time(con, after, a.repeat) + build, 4)},
        "distinct_words_query_s": {"before": round(_time(con, " ".join(f'"{w}"' for w in distinct.split()),
                                                      a.repeat), 4),
                                   "after": round(_time(con, fts_query(distinct), a.repeat), 4)},
    }))


if __name__ == "__main__":
    main()
