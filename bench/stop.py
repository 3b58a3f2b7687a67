"""How fast a stop (Esc / Ctrl+C) frees the bundled model. Prints JSON.

Each run starts a reply from the bundled SmolLM2-135M-Instruct, cancels the consuming task the
way the app and the REPL do, and measures the time from the cancel to the provider's worker thread
having finished (the CPU is free again and the next call may start). Two phases:

- ``prefill``: a long paste (about 6,000 prompt tokens); the cancel comes ``--after`` seconds into
  reading the prompt. Before the abort callback this waited for the whole prompt to be read
  (minutes on a busy 2-core machine).
- ``decode``: a short prompt; the cancel comes after the first streamed token.

``cached_after`` tells how much of the prompt was read when the worker stopped (a stop part-way
reads less than ``prompt_tokens``). ``load_avg_1m`` tells how busy the machine was.

Usage: ``python bench/stop.py [--runs 5] [--after 1.0]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import threading
import time
from typing import Any

from neotask_tui.providers.base import ChatMessage, TextDelta
from neotask_tui.providers.local import LocalProvider
from neotask_tui.tuning import LOCAL_PREFILL_CHUNK_TOKENS

PASTE = [ChatMessage("user", "The quick brown fox jumps over the lazy dog by the river. " * 520)]
SHORT = [ChatMessage("user", "Write a long story about a lighthouse keeper.")]


def _worker() -> threading.Thread | None:
    return next((t for t in threading.enumerate() if t.name == "neotask-llama"), None)


async def one(p: LocalProvider, messages: list[ChatMessage], *, after: float | None) -> dict[str, Any]:
    first = asyncio.Event()

    async def consume() -> None:
        async for ev in p.stream(messages, max_tokens=256):
            if isinstance(ev, TextDelta):
                first.set()

    task = asyncio.ensure_future(consume())
    if after is None:
        await first.wait()
    else:
        while _worker() is None:
            await asyncio.sleep(0.005)
        await asyncio.sleep(after)
    worker = _worker()
    start = time.perf_counter()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    if worker is not None:
        await asyncio.to_thread(worker.join)
    return {"cancel_to_worker_done_s": round(time.perf_counter() - start, 4), "cached_after": p.cached_tokens}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--after", type=float, default=1.0)
    args = ap.parse_args()
    p = LocalProvider(temperature=0.0, seed=1)
    await p.load()
    out: dict[str, Any] = {"model": p.model, "prompt_tokens": len(p.prompt_tokens(PASTE)),
                           "prefill_chunk_tokens": LOCAL_PREFILL_CHUNK_TOKENS, "runs": args.runs}
    for phase, messages, after in (("prefill", PASTE, args.after), ("decode", SHORT, None)):
        runs = [await one(p, messages, after=after) for _ in range(args.runs)]
        times = [r["cancel_to_worker_done_s"] for r in runs]
        out[phase] = {"median_s": statistics.median(times), "max_s": max(times),
                      "cached_after": [r["cached_after"] for r in runs]}
    out["load_avg_1m"] = os.getloadavg()[0]
    await p.aclose()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
