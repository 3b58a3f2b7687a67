"""Branch benchmark: ``fork_session`` and the context after ``/retry``, with baselines in the same run.

Prints JSON. For a session of N messages (1k and 10k by default) on the real store (fsync on):

- ``fork_ms``: median time of :meth:`Engine.fork_session` at the middle message (copying half the
  history into a new transcript, switching the index, archiving the other branch), against
  ``new_ms``, the median of ``/new`` on the same session (the baseline: same index switch and
  archive move, no history copied);
- ``history_ms``: median time of :meth:`Engine.history` (what context assembly starts from) with
  one retry in ten (10% of the replies superseded), against ``history_plain_ms`` for the same
  session without markers.

Runs in a temporary NEOTASK_HOME with the scripted provider and memory off (the shipped settings
otherwise). ``--sizes 1000,10000`` and ``--repeat 5`` are the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

KEY = "agent:bench:cli:branch"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000", help="messages per session, comma-separated")
    p.add_argument("--repeat", type=int, default=5, help="runs per figure (the median is reported)")
    a = p.parse_args()
    home = tempfile.mkdtemp(prefix="neotask-bench-branch-")
    os.environ["NEOTASK_HOME"] = home
    try:
        out = asyncio.run(_run([int(s) for s in a.sizes.split(",")], a.repeat))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(out, indent=1))


def _seed(engine: Any, n: int, superseded: bool) -> None:
    from neotask_tui.storage.events import SUPERSEDED

    sid = engine.current_record(KEY).session_id
    items: list[tuple[str, dict[str, Any]]] = []
    next_id = engine.events(KEY)[-1].id + 1
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        items.append(("message", {"role": role, "content": f"message {i} " + "realistic words of a turn " * 8}))
        next_id += 1
        if superseded and role == "assistant" and i % 20 == 1:  # one reply in ten retried
            items.append(("marker", {"kind": SUPERSEDED, "by": "retry", "superseded": [next_id - 1]}))
            next_id += 1
            items.append(("message", {"role": "assistant", "content": f"retried reply {i}"}))
            next_id += 1
    engine.store.append_many(sid, items)


async def _run(sizes: list[int], repeat: int) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from neotask_tui.config import Settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    s = Settings()
    s.memory.enabled = False
    engine = Engine(s, provider=ScriptedProvider())
    results: dict[str, Any] = {"repeat": repeat, "sizes": {}}
    try:
        for n in sizes:
            fork, new, hist, plain = [], [], [], []
            for _ in range(repeat):
                await engine.new_session(KEY)
                _seed(engine, n, superseded=False)
                mid = [e.id for e in engine.events(KEY) if e.type == "message"][n // 2]
                t0 = time.perf_counter()
                engine.history(KEY)
                plain.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                await engine.fork_session(KEY, mid)
                fork.append(time.perf_counter() - t0)
                await engine.new_session(KEY)
                _seed(engine, n, superseded=False)
                t0 = time.perf_counter()
                await engine.new_session(KEY)
                new.append(time.perf_counter() - t0)
                _seed(engine, n, superseded=True)
                t0 = time.perf_counter()
                engine.history(KEY)
                hist.append(time.perf_counter() - t0)
            results["sizes"][str(n)] = {
                "fork_ms": round(statistics.median(fork) * 1000, 2),
                "new_ms": round(statistics.median(new) * 1000, 2),
                "history_ms": round(statistics.median(hist) * 1000, 2),
                "history_plain_ms": round(statistics.median(plain) * 1000, 2),
            }
    finally:
        await engine.aclose()
    return results


if __name__ == "__main__":
    main()
