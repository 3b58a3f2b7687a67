"""Can this model write a usable compaction summary? Prints JSON.

The measurement behind the model table's ``summaries`` field (``neotask_tui/data/models.toml``):
compaction asks a model for a summary only when the table says it can write one, and otherwise
uses the extractive summary at once instead of waiting for a reply it would throw away.

For each conversation below (the compaction tests' drift cases: negations, identifiers, hedged
facts, decisions), the model gets exactly the prompt compaction sends
(:func:`~neotask_tui.engine.compaction.summary.build_summary_prompt`); its reply is parsed as
compaction parses it, then the guard checks it. A reply is *usable* when it is in the summary shape
(headings and cited lines) and the guard had to add back at most ``--max-repairs`` of the range's
required items (identifiers, "do not" rules). ``seconds`` is the wall time of each reply; the
summary of a run says how many replies were usable and the median time.

Usage: ``python bench/summarizer.py [--model-path GGUF] [--max-tokens 600] [--max-repairs 1]
[--conversations N]`` (each run's figures also go to stderr as it finishes)
(the bundled SmolLM2-135M-Instruct by default, greedy decoding).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from typing import Any

from neotask_tui.engine.compaction.guard import attributor, extract_items, guard
from neotask_tui.engine.compaction.summary import build_summary_prompt, parse_summary
from neotask_tui.providers.base import ChatMessage, TextDelta
from neotask_tui.providers.local import LocalProvider
from neotask_tui.storage.events import Event

CONVERSATIONS: list[list[tuple[str, str]]] = [
    [
        ("user", "I want to fix the CSV importer in src/importer/csv_reader.py. Do not use Redis."),
        ("assistant", "Sure, let's look."),
        ("user", "The workspace is acme-prod and the ticket is ABC-123."),
        ("assistant", "Noted ABC-123."),
        ("user", "Never change the public API of make_app()."),
        ("assistant", "Understood."),
        ("user", "We decided to split files into batches of 5000 rows."),
        ("assistant", "Good, batches of 5000."),
    ],
    [
        ("user", "Maybe the outage was caused by the cron job on db-replica-2, I am not sure."),
        ("assistant", "We can check the logs of db-replica-2."),
        ("user", "Do not restart the primary database during business hours."),
        ("assistant", "Noted: no primary restarts during business hours."),
        ("user", "If the disk is above 90% then page the on-call; otherwise just open ticket OPS-77."),
        ("assistant", "Will do."),
    ],
    [
        ("user", "Deploy only from the release/2.4 branch and never force-push to main."),
        ("assistant", "Understood, release/2.4 only."),
        ("user", "The staging URL is https://staging.example.com and the port is 8443."),
        ("assistant", "Staging at port 8443."),
        ("user", "We agreed to keep the retry limit at 3 and not to add caching yet."),
        ("assistant", "Retry limit 3, no caching for now."),
    ],
]


def events_of(turns: list[tuple[str, str]]) -> list[Event]:
    """Transcript events for a conversation (ids from 1)."""
    ts = datetime(2025, 3, 1, 10, 0, tzinfo=UTC).isoformat()
    out: list[Event] = []
    for i, (role, text) in enumerate(turns, start=1):
        out.append(Event("message", i, i - 1 or None, ts, {"role": role, "content": text}))
    return out


async def one(provider: LocalProvider, turns: list[tuple[str, str]], max_tokens: int,
              max_repairs: int) -> dict[str, Any]:
    events = events_of(turns)
    prompt = build_summary_prompt(events)
    start = time.perf_counter()
    parts: list[str] = []
    async for ev in provider.stream([ChatMessage(r, c) for r, c in prompt], max_tokens=max_tokens):
        if isinstance(ev, TextDelta):
            parts.append(ev.text)
    seconds = time.perf_counter() - start
    reply = "".join(parts)
    parsed = parse_summary(reply, valid_ids={e.id for e in events}, attribute=attributor(events))
    shaped = bool(parsed.lines and parsed.headings)
    items = extract_items(events)
    required = [it for it in items if it.kind in ("identifier", "constraint")]
    report = guard(parsed, items)
    repaired = len([r for r in report.repaired if r.kind != "inverted"])
    inverted = len([r for r in report.repaired if r.kind == "inverted"])
    return {
        "seconds": round(seconds, 2), "reply_chars": len(reply), "shaped": shaped,
        "required_items": len(required), "repaired": repaired, "inverted_removed": inverted,
        "usable": shaped and repaired <= max_repairs and inverted == 0, "reply_head": reply[:160],
    }


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-path", default=None)
    ap.add_argument("--max-tokens", type=int, default=600)
    ap.add_argument("--max-repairs", type=int, default=1)
    ap.add_argument("--conversations", type=int, default=len(CONVERSATIONS))
    args = ap.parse_args()
    provider = LocalProvider(model_path=args.model_path, temperature=0.0, seed=1)
    await provider.load()
    runs = []
    for c in CONVERSATIONS[:args.conversations]:
        runs.append(await one(provider, c, args.max_tokens, args.max_repairs))
        print(json.dumps(runs[-1]), file=sys.stderr, flush=True)  # progress: a slow machine takes minutes
    await provider.aclose()
    print(json.dumps({
        "model": provider.model,
        "conversations": len(runs),
        "usable": sum(r["usable"] for r in runs),
        "shaped": sum(r["shaped"] for r in runs),
        "median_seconds": statistics.median(r["seconds"] for r in runs),
        "runs": runs,
    }, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
