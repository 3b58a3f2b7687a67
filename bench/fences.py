"""Is neutralising fence tags linear in the input? Prints JSON.

For each hostile shape of ``tests/faults/test_promise_fences.py`` (a long run of ``<``, escaped
``<``, nested entities, a tag name padded with spaces, zero-padded numeric references, closing tags
repeated, look-alike brackets with invisible fillers) it times
:func:`~neotask_tui.engine.context.fences.neutralise_tags` on a tenth of the shape and on all of it,
median of ``--runs``; ``ratio`` is the second over the first (about 10 when linear, about 100 when
quadratic). ``load_avg_1m`` tells how busy the machine was. This was a test with a timing
assertion, which a loaded machine made fail; speed is measured here.

Usage: ``python bench/fences.py [--runs 5]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHAPES = {
    "lt_run": "<" * 200_000,
    "escaped_lt": "\\" * 200_000 + "u003c",
    "nested_entities": "&amp;" * 40_000 + "lt;",
    "padded_name": "<" + " " * 200_000 + "recalled memory",
    "zero_padded_ref": "&#" + "0" * 200_000 + "60;",
    "closing_tags": "</recalled-memory>" * 10_000,
    "lookalike_fillers": "\u2039\u3164" * 100_000,
    "encoded_percents": "%25" * 60_000 + "3Crecalled memory",
    "percent_run": "%" * 200_000 + "3C",
    "padded_brace_escape": "\\u{" + "0" * 200_000 + "3c}recalled memory",
    "encoded_percent_u": "%25" * 60_000 + "u003Crecalled memory",
    "quoted_printable_chain": "=3D" * 60_000 + "3Crecalled memory",
    "quoted_printable_run": "=3" * 60_000 + "C",
    "utf8_percent_run": "%EF%BC%9C" * 30_000 + "recalled memory",
    "cut_utf8_percent_run": "%E2" * 60_000 + "%80%B9recalled memory",
}


def timed(text: str, runs: int) -> float:
    from neotask_tui.engine.context.fences import neutralise_tags

    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        neutralise_tags(text)
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    res = {}
    for name, shape in SHAPES.items():
        small = timed(shape[: len(shape) // 10], args.runs)
        full = timed(shape, args.runs)
        res[name] = {"chars": len(shape), "tenth_s": round(small, 5), "full_s": round(full, 5),
                     "ratio": round(full / max(small, 1e-6), 1)}
    print(json.dumps({"shapes": res, "max_ratio": max(r["ratio"] for r in res.values()),
                      "load_avg_1m": round(os.getloadavg()[0], 2), "runs": args.runs}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
