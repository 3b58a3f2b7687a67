#!/usr/bin/env python3
"""Recall hygiene: does auto-recall bring back the assistant's own wrong answers, outrank what the
user consented to keep, or spend tokens when nothing relevant exists?

A scripted multi-session history goes through the real :class:`~neotask_tui.engine.facade.Engine`
(scripted provider, real fastembed model, real LanceDB, a fresh ``NEOTASK_HOME``): ``MEMORY.md``
holds consented facts; earlier sessions hold the user's questions and the assistant's *planted
hallucinations* (a wrong host and date, an invented URL, a wrong weekday, a wrong name, a wrong
language), plus unrelated chat. In a new session, every probe message is recalled for
(``Engine.recall``) and its context assembled (``Engine.build``), exactly as a turn does. Printed as
one JSON object:

- ``assistant_claims_as_facts_share``: of all recalled items, the share holding a planted assistant
  reply that the context does not attribute to the assistant on the same line (quoted as a fact);
- ``consented_outranked_share``: of the probes a consented fact answers, the share where a transcript
  item comes before the item holding that fact (or the fact is missing while transcripts come back);
- ``recall_tokens_nothing_relevant``: mean tokens of the context's recall section over probes about
  nothing in memory or history;
- beside them: ``consented_recalled_share`` (the fact is recalled at all), items per probe, duplicate
  items (one item's words repeat another's), items scoring below 0.005, recall tokens of the relevant
  probes.

The history and probes are written here by hand, to show the failure modes of issue #18; they are
not a tuning set (no constant was fitted to them).

Usage: ``python bench/recall_hygiene.py [--no-details] [--recall-history user|all|off]``. It runs on
older code too (``PYTHONPATH=`` another checkout) as long as ``Engine.recall``/``Engine.build`` exist.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

KEY = "agent:main:tui:default"

CONSENTED = {
    "staging": "The staging database host is stage-db.internal on port 6432.",
    "deploy": "We deploy on Thursdays; there are no deploys on Fridays.",
    "manager": "My manager is Priya Raman.",
    "billing": "The billing service is written in Go.",
    "ci": "The CI runner image is ubuntu-22.04 with Python 3.12.",
}
"""Facts the user saved to ``MEMORY.md`` (consented)."""

HISTORY: list[list[tuple[str, str]]] = [
    [("What's the staging host and port again?",
      "The staging host and port is db-old.example.com:5432, last changed on 2019-03-28."),
     ("Thanks. Anything else about staging?", "Staging is rebuilt every night at 02:00 UTC.")],
    [("Where is the runbook for the billing service?",
      "The billing runbook is at https://wiki.example.com/billing/runbook-v2-final."),
     ("And what language is billing written in?", "The billing service is written in Rust.")],
    [("Which day do we usually deploy?", "You deploy on Mondays, right after the standup."),
     ("Who is my manager, do you remember?", "Your manager is John Smith from the platform team.")],
    [("I'm flying to Lisbon for a conference in May.", "Nice! Lisbon is lovely in May."),
     ("Can you recommend a good book about distributed systems?",
      "Designing Data-Intensive Applications by Martin Kleppmann is a classic.")],
    [("What Python version does our CI runner use?", "Your CI runner uses Python 3.8 on CentOS 7."),
     ("My cat is called Miso and she hates the vacuum cleaner.", "Miso sounds like a character!")],
]
"""Earlier sessions: (user message, scripted assistant reply); most replies are planted hallucinations."""

PLANTED = [
    "db-old.example.com:5432", "wiki.example.com/billing/runbook-v2-final", "written in Rust",
    "deploy on Mondays", "John Smith", "Python 3.8 on CentOS 7", "rebuilt every night at 02:00",
    "Kleppmann is a classic", "Lisbon is lovely", "sounds like a character",
]
"""A distinctive piece of every assistant reply above."""

RELEVANT = [
    ("What is the staging host and port?", "staging"),
    ("Which day of the week do we deploy?", "deploy"),
    ("Who is my manager?", "manager"),
    ("What language is the billing service written in?", "billing"),
    ("Which Python version does the CI runner use?", "ci"),
]
"""Probes a consented fact answers (and a hallucination competes with)."""

NOTHING = [
    "Write a haiku about autumn leaves.", "thanks!", "What is the capital of Australia?",
    "Explain how a hash map handles collisions.", "hi", "Translate 'good morning' into French.",
]
"""Probes about nothing in memory or history."""


class _Clock:
    def __init__(self, start: datetime) -> None:
        self.t = start

    def __call__(self) -> datetime:
        self.t += timedelta(seconds=30)
        return self.t


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _repeats(a: str, b: str) -> bool:
    wa, wb = _words(a), _words(b)
    n = len(wa)
    return bool(n) and any(wb[i:i + n] == wa for i in range(len(wb) - n + 1))


def _recall_text(ctx: Any) -> str:
    return "\n".join(m.content for m, sec in zip(ctx.messages, ctx.section_of, strict=True) if sec == "recall")


def _as_fact(recall_text: str, planted: str) -> bool:
    """Whether ``planted`` is in the recall section on a line that does not attribute it to the assistant."""
    for line in recall_text.splitlines():
        at = line.find(planted)
        if at >= 0 and "assistant" not in line[:at]:
            return True
    return False


def _is_transcript(item: Any) -> bool:
    return str(getattr(item, "source", "")).startswith(("transcripts/", "archived transcripts"))


async def _run(recall_history: str) -> dict[str, Any]:
    from neotask_tui import paths
    from neotask_tui.config import Settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    clock = _Clock(datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
    settings = Settings()
    settings.session.daily_reset_hour = -1
    settings.session.idle_reset_minutes = 0
    if recall_history:
        settings.memory.recall_history = recall_history  # type: ignore[attr-defined,unused-ignore]
    ws = paths.workspace_dir("main")
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n" + "".join(f"- {t}\n" for t in CONSENTED.values()), encoding="utf-8")
    prov = ScriptedProvider()
    engine = Engine(settings, provider=prov, clock=clock)
    try:
        for session in HISTORY:
            for user, reply in session:
                prov.queue(reply)
                async for _ in engine.send(user, KEY):
                    pass
            clock.t += timedelta(days=3)
            await engine.new_session(KEY)
        t0 = time.perf_counter()
        items_total = as_fact = dupes = zero = 0
        outranked = recalled = 0
        rel_tokens: list[int] = []
        none_tokens: list[int] = []
        per_probe: list[dict[str, Any]] = []
        for text, fact in [*RELEVANT, *((t, "") for t in NOTHING)]:
            recall = await engine.recall(KEY, text)
            ctx = await engine.build(KEY, text, recall=recall)
            rtext = _recall_text(ctx)
            tokens = int(ctx.ledger.sections.get("recall", 0))
            items_total += len(recall)
            as_fact += sum(1 for it in recall if any(p in it.text and _as_fact(rtext, p) for p in PLANTED))
            zero += sum(1 for it in recall if float(getattr(it, "score", 1.0)) < 0.005)
            dupes += sum(1 for i, a in enumerate(recall) for b in recall[:i] if _repeats(a.text, b.text)
                         or _repeats(b.text, a.text))
            row: dict[str, Any] = {"probe": text, "items": len(recall), "recall_tokens": tokens,
                                   "kinds": [getattr(it, "kind", "?") for it in recall]}
            if fact:
                rel_tokens.append(tokens)
                pos = next((i for i, it in enumerate(recall) if CONSENTED[fact] in it.text), None)
                first_tr = next((i for i, it in enumerate(recall) if _is_transcript(it)), None)
                recalled += pos is not None
                bad = (first_tr is not None and (pos is None or first_tr < pos))
                outranked += bad
                row.update(fact_at=pos, first_transcript_at=first_tr, outranked=bad)
            else:
                none_tokens.append(tokens)
            per_probe.append(row)
        seconds = time.perf_counter() - t0
    finally:
        await engine.aclose()
    n_probes = len(RELEVANT) + len(NOTHING)
    return {
        "assistant_claims_as_facts_share": round(as_fact / items_total, 4) if items_total else 0.0,
        "consented_outranked_share": round(outranked / len(RELEVANT), 4),
        "recall_tokens_nothing_relevant": round(sum(none_tokens) / len(none_tokens), 1),
        "consented_recalled_share": round(recalled / len(RELEVANT), 4),
        "recall_tokens_relevant": round(sum(rel_tokens) / len(rel_tokens), 1),
        "items_per_probe": round(items_total / n_probes, 2),
        "duplicate_items": dupes,
        "items_below_0.005": zero,
        "probes": n_probes,
        "seconds_recalling": round(seconds, 1),
        "per_probe": per_probe,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--no-details", action="store_true", help="leave out the per-probe rows")
    ap.add_argument("--recall-history", default="", choices=("", "user", "all", "off"),
                    help="memory.recall_history (default: the setting's default)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="neotask-hygiene-") as home:
        os.environ["NEOTASK_HOME"] = home
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ["NEOTASK_PROVIDER_PROBE_OLLAMA"] = "false"
        out = asyncio.run(_run(args.recall_history))
    if args.no_details:
        out.pop("per_probe")
    out["code"] = str(Path(sys.modules["neotask_tui"].__file__ or "").parent.parent)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
