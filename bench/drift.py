#!/usr/bin/env python3
"""Summarization drift: the cases of ``tests/engine/drift_cases.py`` (English and Russian), each
streamed through the real Engine with filler, compacted, and checked with patterns for what the
summary must and must not say. Two summarizers: ``extractive`` and ``model`` (a deliberately lossy
summary served by a local server speaking the OpenAI protocol; the guard must repair it).

Prints JSON: cases passed per summarizer (and per family), the failures, identifier precision
(share of listed identifiers that the user stated, whole) and recall (share of the user's
identifiers listed), the largest summary against its soft cap, and what the guard repaired.

Usage::

    python bench/drift.py [--modes extractive,model] [--out FILE] [--show-failures]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


async def _run(modes: list[str]) -> dict[str, Any]:
    from tests.engine.drift_cases import CASES, Outcome, identifier_figures, run

    report: dict[str, Any] = {"cases": len(CASES), "languages": sorted({c.lang for c in CASES}), "modes": {}}
    family = {c.name: c.family for c in CASES}
    for mode in modes:
        outcomes: list[Outcome] = []
        for case in CASES:
            try:
                outcomes.append(await run(case, mode))  # type: ignore[arg-type]
            except Exception as e:  # a case that crashes is a failed case, not a failed bench
                outcomes.append(Outcome(case.name, mode, False, "", [f"crashed: {type(e).__name__}: {e}"]))
        fams: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in outcomes:
            fams[family[o.case]][0] += 1
            fams[family[o.case]][1] += o.passed
        worst = max(outcomes, key=lambda o: o.tokens)
        repaired: dict[str, int] = defaultdict(int)
        for o in outcomes:
            for kind, n in o.repaired.items():
                repaired[kind] += n
        report["modes"][mode] = {
            "passed": sum(o.passed for o in outcomes),
            "by_family": {f: {"cases": n, "passed": p} for f, (n, p) in sorted(fams.items())},
            "identifiers": identifier_figures([o for o in outcomes if o.summary]),
            "max_summary_tokens": worst.tokens,
            "summary_budget": worst.budget,
            "fallbacks": sum(o.fallback for o in outcomes),
            "guard_repairs": dict(sorted(repaired.items())),
            "failures": {o.case: o.failures for o in outcomes if not o.passed},
        }
    return report


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default="extractive,model")
    p.add_argument("--out", default="", help="also write the JSON here")
    p.add_argument("--show-failures", action="store_true", help="print each failure list in full")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="neotask-drift-") as tmp:
        os.environ["NEOTASK_HOME"] = tmp
        report = asyncio.run(_run([m.strip() for m in args.modes.split(",") if m.strip()]))
    if not args.show_failures:
        for m in report["modes"].values():
            m["failures"] = {k: v[:3] for k, v in m["failures"].items()}
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
