"""Reading the date periods a memory-search query names, in a long pasted message.

``before`` is the scan as it was (each match checked against a list of every span taken so far,
one window per mention: quadratic); ``after`` is :func:`neotask_tui.memory.search.dates.query_windows`
(a mask of taken characters, each period once: linear). Both run the same patterns on the same
text, in one run: a message of ``--kb`` KB made of one dated phrase repeated. Prints JSON with the
median seconds over ``--runs`` runs and the number of windows each returns. Not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from datetime import datetime

from neotask_tui.memory.search import dates
from neotask_tui.memory.search.dates import Window, query_windows

UNITS = ("весной 2023 ", "3 дня назад ", "в мае 2023 ")


def before(query: str) -> list[Window]:
    """The scan as it was before round 9 (a list of taken spans, every window kept)."""
    text = query.replace("ё", "е").replace("Ё", "Е").replace("’", "'")
    today = datetime.fromtimestamp(time.time()).date()
    out: list[Window] = []
    taken: list[tuple[int, int]] = []
    for _need, pat, handler in dates._PATTERNS:
        for m in pat.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            try:
                window = handler(m.groupdict(), today)
            except (ValueError, KeyError):
                window = dates._month_of(m, today)
            if window is None:
                continue
            out.append(window)
            taken.append((m.start(), m.end()))
    return out


def median_s(fn: Callable[[str], list[Window]], text: str, runs: int) -> tuple[float, int]:
    times = []
    n = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        n = len(fn(text))
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 3), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kb", type=int, default=100, help="message size in KB (default 100)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    out = {}
    for unit in UNITS:
        text = unit * (args.kb * 1000 // len(unit))
        b, nb = median_s(before, text, args.runs)
        a, na = median_s(query_windows, text, args.runs)
        out[unit.strip()] = {"chars": len(text), "before_s": b, "before_windows": nb,
                             "after_s": a, "after_windows": na}
    print(json.dumps({"kb": args.kb, "runs": args.runs, "results": out}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
