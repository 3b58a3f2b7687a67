#!/usr/bin/env python3
"""Answerability on LoCoMo: is the evidence of a question inside the assembled context?

Each LoCoMo conversation is streamed through the real :class:`~neotask_tui.engine.facade.Engine`
(turns in order; ``speaker_a`` → user, ``speaker_b`` → assistant, the scripted provider replying
with the next assistant turn; session dates as timestamps through the engine's injectable clock)
with a small context budget (default 4096 tokens). Then, for every question of categories 1–4, the
context for that question is assembled as the next turn's would be and we check whether the text of
every evidence turn is inside it: when that context crosses the compaction trigger, the engine
compacts before the call, and so does the bench (once; the questions whose context does not cross
it are answered first, on the state as the stream left it; ``questions_after_a_compaction`` counts
the others). No question is added to the history. Reported per strategy, side by side, as JSON:

- ``window``: the last N tokens only (no compaction, no summary, no recall).
- ``summary`` (the default): rolling summary + recall (memories, and compacted-away turns from the
  session's archived transcripts) + window, with auto-compaction at the configured threshold. The
  deterministic extractive summarizer is used unless ``--model`` is given (then the provider writes
  the summaries; slow).

Usage::

    python bench/answerability.py --data ../shared/bench/locomo/locomo-dev.json [--budget 4096]
        [--conversations N] [--skip N] [--strategies window,summary] [--no-dense] [--model] [--out FILE]
        [--cache DIR] [--details FILE] [--errata FILE]

``--cache DIR`` keeps each streamed conversation's data directory and reuses it when the settings
that shape streaming (strategy, budget, compaction, summarizer) are unchanged, so iterating on
recall/assembly only re-runs the questions. ``--details`` writes one JSON line per question
(evidence, what was missing, ledger sections) for analysis. ``--errata FILE`` (the dev set's
``locomo-dev-errata.json``, a public audit of LoCoMo's evidence) also reports, under ``audited``, the
score with the audit's corrected evidence for the questions it lists (same contexts, same questions;
the headline figure stays the one on the original evidence).

With no flags the engine runs the shipped settings (``Settings()``) with a model window of the
budget plus the shipped reply reserve plus the tool definitions the engine sends with every call
(the budget is the messages'; the engine measures every budget against the window less the tools):
the recall and raw-window shares, their floors and caps,
drift rebuilds and the threshold are the defaults users get (the JSON's ``settings`` says what
they come to at this budget). Only the session lifecycle is off (no daily or idle reset: one
continuous conversation) and the ``window`` strategy has no compaction or memory.
``--recall-share``, ``--keep-recent-share`` and ``--rebuild-every`` explore other values.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KEY = "agent:bench:locomo:default"


def norm_evidence(ev: list[str], valid: set[str]) -> list[str]:
    """Normalise evidence ids as the reference baseline does ('D8:6; D9:17', 'D:11:26', 'D30:05')."""
    out: list[str] = []
    for e in ev:
        for p in re.split(r"[;,\s]+", e.strip()):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", p)
            if m:
                p = f"D{m.group(1)}:{m.group(2)}"
            if p in valid and p not in out:
                out.append(p)
    return out


def session_turns(conv: dict[str, Any]) -> list[tuple[datetime, list[dict[str, Any]]]]:
    """Sessions in order with their start time."""
    nums = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    out = []
    for n in nums:
        raw = conv.get(f"session_{n}_date_time", "")
        try:
            when = datetime.strptime(raw, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
        except ValueError:
            when = datetime(2023, 1, 1, tzinfo=UTC) + timedelta(days=n)
        out.append((when, conv[f"session_{n}"]))
    return out


def turn_text(t: dict[str, Any]) -> str:
    """A turn as stored: ``Speaker: text [shares caption]`` (as in the reference baseline)."""
    text = f"{t['speaker']}: {t['text']}"
    if t.get("blip_caption"):
        text += f" [shares {t['blip_caption']}]"
    return text


def squash(s: str) -> str:
    return " ".join(s.split())


STREAM_VERSION = 2
"""Bumped when the streaming itself changes (v2: the clock starts at the first session's date; v1
started at 2023-01-01, so conversations dated 2022 were all stamped 2023-01-01)."""


class Clock:
    """The engine's clock: set to each session's date, advancing 30 s per call (never backwards)."""

    def __init__(self) -> None:
        self.t = datetime(1970, 1, 1, tzinfo=UTC)

    def set(self, when: datetime) -> None:
        self.t = max(when, self.t)

    def __call__(self) -> datetime:
        self.t += timedelta(seconds=30)
        return self.t


OVERRIDES: dict[str, float | int | None] = {"recall_share": None, "keep_recent_share": None, "rebuild_every": None}
"""Exploration only (``--recall-share``, ``--keep-recent-share``, ``--rebuild-every``): None = the
shipped default, which is what the bench measures with no flags."""


def make_settings(strategy: str, budget: int, dense: bool) -> Any:
    from neotask_tui.config import Settings

    s = Settings()
    s.context.strategy = strategy
    s.context.window_tokens = budget + s.context.reply_reserve_tokens
    s.session.daily_reset_hour = -1
    s.session.idle_reset_minutes = 0
    s.memory.enabled = dense and strategy == "summary"
    s.compaction.enabled = strategy == "summary"
    # Everything else (recall and raw-window shares, drift rebuilds, thresholds) is the shipped
    # default unless a flag asks otherwise.
    if OVERRIDES["recall_share"] is not None:
        s.memory.recall_share = float(OVERRIDES["recall_share"])
    if OVERRIDES["keep_recent_share"] is not None:
        s.compaction.keep_recent_share = float(OVERRIDES["keep_recent_share"])
    if OVERRIDES["rebuild_every"] is not None:
        s.compaction.rebuild_every = int(OVERRIDES["rebuild_every"])
    return s


def shipped_budget(budget: int) -> dict[str, Any]:
    """The budget settings the run used and what they come to at this budget (for the JSON)."""
    from neotask_tui.engine.context.budget import keep_recent, recall_reserve

    s = make_settings("summary", budget, True)
    window = s.context.window_tokens
    return {"budget_is": "the messages' (window = budget + reply reserve + tool definitions)",
            "recall_share": s.memory.recall_share, "keep_recent_share": s.compaction.keep_recent_share,
            "rebuild_every": s.compaction.rebuild_every, "threshold": s.compaction.threshold,
            "recall_reserve_tokens": recall_reserve(s, window), "keep_recent_tokens": keep_recent(s, window),
            "overridden": sorted(k for k, v in OVERRIDES.items() if v is not None)}


def stream_fingerprint(strategy: str, budget: int, dense: bool, use_model: bool) -> str:
    """What decides the streamed state (transcripts, compactions): a cached home is reused only if equal."""
    s = make_settings(strategy, budget, dense)
    key = json.dumps([STREAM_VERSION, strategy, budget, dense, use_model, vars(s.compaction), s.context.strategy,
                      s.memory.recall_budget_tokens, s.memory.recall_share, s.context.window_tokens,
                      s.context.reply_reserve_tokens],
                     sort_keys=True, default=str)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def conversation_texts(conv: dict[str, Any]) -> dict[str, str]:
    """dia_id → the turn's text as streamed (squashed)."""
    return {t["dia_id"]: squash(turn_text(t)) for _, turns in session_turns(conv) for t in turns}


async def run_conversation(sample: dict[str, Any], strategy: str, budget: int, dense: bool,
                           use_model: bool, streamed: bool = False,
                           errata: dict[int, list[str]] | None = None, ask: bool = True) -> dict[str, Any]:
    from neotask_tui.engine.events import Compacted
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    conv = sample["conversation"]
    speaker_a = conv["speaker_a"]
    clock = Clock()
    provider = ScriptedProvider(model="locomo-replay")
    engine = Engine(make_settings(strategy, budget, dense), provider=provider, clock=clock)
    # The budget is the messages': the tool definitions sent with every call come on top (the engine
    # measures every budget against the window less them).
    engine.settings.context.window_tokens += engine.tool_tokens()
    if engine.compactor is not None:
        engine.compactor.use_model = use_model
    texts: dict[str, str] = conversation_texts(conv) if streamed else {}
    compactions = 0
    t0 = time.perf_counter()
    try:
        for when, turns in ([] if streamed else session_turns(conv)):
            clock.set(when)
            i = 0
            while i < len(turns):
                t = turns[i]
                texts[t["dia_id"]] = squash(turn_text(t))
                role = "user" if t["speaker"] == speaker_a else "assistant"
                nxt = turns[i + 1] if i + 1 < len(turns) else None
                if role == "user" and nxt is not None and nxt["speaker"] != speaker_a:
                    texts[nxt["dia_id"]] = squash(turn_text(nxt))
                    provider.queue(turn_text(nxt))
                    async for e in engine.send(turn_text(t), KEY):
                        compactions += isinstance(e, Compacted)
                    i += 2
                    continue
                await engine.append(KEY, "message", {"role": role, "content": turn_text(t), "status": "complete"})
                i += 1
        if streamed:
            clock.set(max(when for when, _ in session_turns(conv)) + timedelta(hours=1))
            compactions = engine.current_record(KEY).compaction_count
        stream_s = time.perf_counter() - t0
        if not ask:
            return {"per_q": [], "compactions": compactions, "turns": len(texts), "stream_s": stream_s,
                    "max_fill": 0.0, "mean_fill": 0.0, "compacted_first": 0}
        valid = set(texts)
        scored: dict[int, dict[str, Any]] = {}
        fills: list[float] = []

        def score(qi: int, qa: dict[str, Any], ev: list[str], ctx: Any, first: bool) -> None:
            blob = squash("\n".join(m.content for m in ctx.messages))
            inside = [e for e in ev if texts[e] in blob]
            fills.append(ctx.ledger.total / max(ctx.ledger.budget, 1))
            fixed = norm_evidence((errata or {}).get(qi, []), valid)
            audited = all(texts[e] in blob for e in fixed) if fixed else len(inside) == len(ev)
            scored[qi] = {"category": qa["category"], "all": len(inside) == len(ev), "frac": len(inside) / len(ev),
                          "all_audited": audited, "corrected": bool(fixed), "compacted_first": first,
                          "question": qa["question"], "evidence": ev,
                          "missing": [e for e in ev if e not in inside], "sections": ctx.ledger.sections}

        # Each question is asked of the state the stream left, as the next turn would be: the engine
        # compacts before a call whose context crosses its trigger and recalls again
        # (session.turn._answer), so a question whose context would is answered after that one
        # compaction (the questions that
        # would not are answered first, on the state as it is; none is ever added to the history).
        pending: list[tuple[int, dict[str, Any], list[str], Any, Any]] = []
        for qi, qa in enumerate(sample["qa"]):
            if qa.get("category") not in CATEGORIES:
                continue
            ev = norm_evidence(qa.get("evidence", []), valid)
            if not ev:
                continue
            recall = await engine.recall(KEY, qa["question"]) if strategy == "summary" else []
            ctx = await engine.build(KEY, qa["question"], recall=recall)
            if engine.compactor is not None and engine.compactor.should_auto(KEY, ctx.ledger):
                pending.append((qi, qa, ev, recall, ctx.ledger))
                continue
            score(qi, qa, ev, ctx, False)
        if pending and engine.compactor is not None:
            if await engine.compactor.maybe_auto(KEY, pending[0][4]) is not None:
                compactions += 1
            for qi, qa, ev, _recall, _led in pending:  # the turn recalls again once it has compacted
                recall = await engine.recall(KEY, qa["question"])
                score(qi, qa, ev, await engine.build(KEY, qa["question"], recall=recall), True)
        per_q = [scored[qi] for qi in sorted(scored)]
        return {"per_q": per_q, "compactions": compactions, "turns": len(texts), "stream_s": stream_s,
                "max_fill": max(fills, default=0.0), "mean_fill": sum(fills) / max(len(fills), 1),
                "compacted_first": len(pending)}
    finally:
        await engine.aclose()


def summarize(results: list[dict[str, Any]], audited: bool = False) -> dict[str, Any]:
    per_q = [q for r in results for q in r["per_q"]]
    by_cat: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for q in per_q:
        by_cat[q["category"]].append(q)
    n = len(per_q)
    out: dict[str, Any] = {
        "questions": n,
        "all_evidence_in_context": round(sum(q["all"] for q in per_q) / max(n, 1), 3),
        "evidence_recall": round(sum(q["frac"] for q in per_q) / max(n, 1), 3),
        "by_category": {
            f"{c} {CATEGORIES[c]}": {
                "n": len(v), "all_evidence_in_context": round(sum(q["all"] for q in v) / len(v), 3),
            }
            for c, v in sorted(by_cat.items())
        },
        "compactions": sum(r["compactions"] for r in results),
        "questions_after_a_compaction": sum(bool(q.get("compacted_first")) for q in per_q),
        "max_fill_of_budget": round(max((r["max_fill"] for r in results), default=0.0), 3),
        "stream_seconds": round(sum(r["stream_s"] for r in results), 1),
    }
    if audited:  # the score on the audit's corrected evidence (--errata)
        out["audited"] = {
            "corrected_questions": sum(q["corrected"] for q in per_q),
            "all_evidence_in_context": round(sum(q["all_audited"] for q in per_q) / max(n, 1), 3),
        }
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))[: args.conversations or None]
    first = min(args.skip, len(data))
    errata: dict[int, dict[int, list[str]]] = defaultdict(dict)  # conversation index -> qa index -> evidence
    for e in json.loads(Path(args.errata).read_text(encoding="utf-8")) if args.errata else []:
        _, ci, qi = e["question_id"].split("_")  # locomo_<conversation index>_qa<qa index>
        errata[int(ci)][int(qi.removeprefix("qa"))] = e["correct_evidence"]
    details: list[dict[str, Any]] = []
    out: dict[str, Any] = {
        "data": str(args.data), "conversations": len(data) - first, "skipped": first, "budget_tokens": args.budget,
        "summarizer": "model" if args.model else "extractive", "dense": not args.no_dense,
        "settings": shipped_budget(args.budget),
        "metric": "fraction of category 1-4 questions whose evidence turns' text is inside the assembled context",
        "reference": {"last_4k_tokens": 0.169, "last_4k_plus_top10_bm25_dense": 0.570, "target_default": 0.90},
        "strategies": {},
    }
    for strategy in args.strategies.split(","):
        t0 = time.perf_counter()
        results = []
        fp = stream_fingerprint(strategy, args.budget, not args.no_dense, args.model)
        for i, sample in enumerate(data):
            if i < first:
                continue
            name = str(sample.get("sample_id", i))
            if args.cache:
                home = Path(args.cache) / f"{name}-{strategy}-{fp}"
                done = home / ".streamed"
                stream: dict[str, Any] | None = None
                if not done.exists():
                    os.environ["NEOTASK_HOME"] = str(home)
                    stream = await run_conversation(sample, strategy, args.budget, not args.no_dense, args.model,
                                                    ask=False)
                    done.write_text("ok\n", encoding="utf-8")
                # The questions may compact (as the next turn would): on a copy, so the cache stays the
                # state the stream left.
                with tempfile.TemporaryDirectory(prefix="neotask-bench-") as tmp:
                    shutil.copytree(home, Path(tmp) / "home", symlinks=True)
                    os.environ["NEOTASK_HOME"] = str(Path(tmp) / "home")
                    r = await run_conversation(sample, strategy, args.budget, not args.no_dense, args.model,
                                               streamed=True, errata=errata.get(i))
                if stream is not None:
                    r["stream_s"] = stream["stream_s"]
            else:
                with tempfile.TemporaryDirectory(prefix="neotask-bench-") as tmp:
                    os.environ["NEOTASK_HOME"] = tmp
                    r = await run_conversation(sample, strategy, args.budget, not args.no_dense, args.model,
                                               errata=errata.get(i))
            results.append(r)
            done_q = r["per_q"]
            print(f"{name} {strategy}: {sum(q['all'] for q in done_q) / max(len(done_q), 1):.3f} "
                  f"({len(done_q)} questions, {r['compactions']} compactions, stream {r['stream_s']:.0f} s)",
                  file=sys.stderr, flush=True)
            details.extend({"conversation": name, "strategy": strategy, **q} for q in r["per_q"])
        res = summarize(results, audited=bool(args.errata))
        res["seconds"] = round(time.perf_counter() - t0, 1)
        out["strategies"][strategy] = res
        print(f"{strategy}: {res['all_evidence_in_context']}", file=sys.stderr)
    if args.details:
        Path(args.details).write_text("".join(json.dumps(d) + "\n" for d in details), encoding="utf-8")
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="locomo-dev.json")
    p.add_argument("--budget", type=int, default=4096, help="context budget in tokens (reply reserve excluded)")
    p.add_argument("--conversations", "--limit-conversations", type=int, default=0,
                   help="only the first N conversations")
    p.add_argument("--skip", type=int, default=0, help="skip the first N conversations (to split a run)")
    p.add_argument("--cache", default="", help="keep/reuse streamed data directories here (see above)")
    p.add_argument("--details", default="", help="write per-question JSON lines here")
    p.add_argument("--strategies", default="window,summary")
    p.add_argument("--no-dense", action="store_true", help="BM25 only for archive recall (no embeddings)")
    p.add_argument("--model", action="store_true", help="let the provider write summaries (slow)")
    p.add_argument("--recall-share", type=float, default=None,
                   help="explore: memory.recall_share (default: the shipped setting)")
    p.add_argument("--keep-recent-share", type=float, default=None,
                   help="explore: compaction.keep_recent_share (default: the shipped setting)")
    p.add_argument("--rebuild-every", type=int, default=None,
                   help="explore: compaction.rebuild_every (default: the shipped setting)")
    p.add_argument("--errata", default="",
                   help="locomo-dev-errata.json: also report the score with the audit's corrected evidence")
    p.add_argument("--out", default="", help="also write the JSON here")
    args = p.parse_args()
    OVERRIDES.update(recall_share=args.recall_share, keep_recent_share=args.keep_recent_share,
                     rebuild_every=args.rebuild_every)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    result = asyncio.run(main_async(args))
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
