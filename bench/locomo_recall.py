"""LoCoMo turn-retrieval recall through Neotask's own memory module, next to the BM25 reference.

Every conversation goes into a fresh memory store as archived transcripts (one per LoCoMo session,
events dated by the session date, text ``speaker: text`` plus `` [shares <caption>]``) through
``MemoryService.index_transcript`` — the code path of real recall — and every question with evidence
is answered by ``MemoryService.search(..., sources=("transcript",))``. R@k = share of the evidence
dia_ids among the turns of the top-k hits. The reference BM25 (``bm25_baseline.py`` beside the data)
runs in the same process on the same questions.

Usage: python bench/locomo_recall.py --data ../shared/bench/locomo/locomo-dev.json [--limit N]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

CATS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10)


def _load_baseline(data: Path) -> Any:
    src = data.parent / "bm25_baseline.py"
    spec = importlib.util.spec_from_file_location("bm25_baseline", src)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {src}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _session_dt(text: str) -> datetime:
    for fmt in ("%I:%M %p on %d %B, %Y", "%H:%M on %d %B, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return datetime(2023, 1, 1)


def _summary(rec: dict[int, dict[str, float]], cnt: Counter[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in sorted(cnt):
        out[f"{c} {CATS.get(c, '?')}"] = {
            "n": cnt[c], **{f"R@{k}": round(rec[c][f"R@{k}"] / cnt[c], 4) for k in KS}
        }
    for name, cats in (("overall 1-4", (1, 2, 3, 4)), ("overall 1-5", (1, 2, 3, 4, 5))):
        n = sum(cnt[c] for c in cats)
        if n:
            out[name] = {"n": n, **{f"R@{k}": round(sum(rec[c][f"R@{k}"] for c in cats) / n, 4) for k in KS}}
    return out


class _EmbedCache:
    """Wraps the service's embedder with a persistent ``(model, query?, text) -> vector`` cache (bench
    iterations)."""

    def __init__(self, svc: Any, path: Path) -> None:
        import pickle

        import numpy as np

        self.path = path
        self.vecs: dict[str, Any] = pickle.loads(path.read_bytes()) if path.exists() else {}
        self.dirty = False
        emb = svc.embedder
        real = emb.embed

        def embed(texts: Any, **kw: Any) -> Any:
            # keyed by model and kind too: a query and a passage of the same text differ (prefixes,
            # a pair's query weights), and one cache file may serve several models
            def key(t: str) -> tuple[str, bool, str]:
                return (emb.model_id, bool(kw.get("query")), t)

            missing = [t for t in dict.fromkeys(texts) if key(t) not in self.vecs]
            if missing:
                for t, v in zip(missing, real(missing, **kw), strict=True):
                    self.vecs[key(t)] = v
                self.dirty = True
            return np.asarray([self.vecs[key(t)] for t in texts], dtype=np.float32).reshape(len(texts), -1)

        emb.embed = embed

    def save(self) -> None:
        import pickle

        if self.dirty:
            self.path.write_bytes(pickle.dumps(self.vecs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--limit", type=int, default=0, help="only the first N conversations")
    ap.add_argument("--embed-cache", type=Path, default=None,
                    help="pickle of (model, query?, text) -> vector reused across runs (same vectors, no re-embedding)")
    ap.add_argument("--embedding-model", default="",
                    help="memory.embedding_model (default: the shipped one; all-MiniLM-L6-v2-int8: the previous)")
    ap.add_argument("--params", default="", help="JSON overrides of RankParams (for sweeps)")
    ap.add_argument("--audit", type=Path, default=None,
                    help="errata JSON (locomo-dev-errata.json): use its correct_evidence, for ours and BM25 alike")
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="neotask-locomo-")
    os.environ["NEOTASK_HOME"] = home
    try:
        return _run(args)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from neotask_tui.config import MemorySettings
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.storage.events import Event

    base = _load_baseline(args.data)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.limit:
        data = data[: args.limit]
    ours: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    ref: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    cnt: Counter[int] = Counter()
    svc = MemoryService(MemorySettings(embedding_model=args.embedding_model))
    if args.params:
        from dataclasses import replace

        svc.params = replace(svc.params, **json.loads(args.params))
    cache = _EmbedCache(svc, args.embed_cache) if args.embed_cache else None
    index_s = 0.0
    n_turns = 0
    lat: list[float] = []
    fixes: dict[tuple[int, int], list[str]] = {}
    if args.audit:
        for e in json.loads(args.audit.read_text(encoding="utf-8")):
            _, ci, qi = e["question_id"].split("_")
            fixes[(int(ci), int(qi[2:]))] = e["correct_evidence"]
    for si, sample in enumerate(data):
        conv = sample["conversation"]
        agent = re.sub(r"[^A-Za-z0-9_-]", "_", sample["sample_id"])
        eid_to_dia: dict[int, str] = {}
        eid = 0
        t0 = time.perf_counter()
        sessions = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        for s in sessions:
            when = _session_dt(conv.get(f"session_{s}_date_time", "")).isoformat()
            events = []
            for turn in conv[f"session_{s}"]:
                eid += 1
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares {turn['blip_caption']}]"
                role = "user" if turn["speaker"] == conv["speaker_a"] else "assistant"
                events.append(Event("message", eid, eid - 1 or None, when, {"role": role, "content": text}))
                eid_to_dia[eid] = turn["dia_id"]
            svc.index_transcript(agent, f"session_{s}", events, scope=f"agent:{agent}")
        index_s += time.perf_counter() - t0
        n_turns += len(eid_to_dia)

        ids, texts = zip(*base.turns_of(conv), strict=True)
        bm = base.BM25([base.tokenize(t) for t in texts])
        valid = set(ids)
        for qi, qa in enumerate(sample["qa"]):
            ev = base.norm_evidence(fixes.get((si, qi), qa.get("evidence", [])), valid)
            if not ev:
                continue
            c = qa["category"]
            cnt[c] += 1
            t1 = time.perf_counter()
            hits = svc.search(qa["question"], agent_id=agent, k=max(KS), sources=("transcript",))
            lat.append(time.perf_counter() - t1)
            ranked: list[str] = []
            for h in hits:
                for e in h.event_ids:
                    d = eid_to_dia.get(e)
                    if d and d not in ranked:
                        ranked.append(d)
            sc = bm.scores(base.tokenize(qa["question"]))
            order = [ids[j] for j in sorted(range(len(ids)), key=lambda j: -sc[j])]
            for k in KS:
                ours[c][f"R@{k}"] += sum(e in ranked[:k] for e in ev) / len(ev)
                ref[c][f"R@{k}"] += sum(e in order[:k] for e in ev) / len(ev)
    svc.close()
    if cache is not None:
        cache.save()
    o, r = _summary(ours, cnt), _summary(ref, cnt)
    ratios = {
        name: {m: round(o[name][m] / r[name][m], 3) if r[name][m] else None for m in ("R@5", "R@10")}
        for name in o
    }
    lat_ms = sorted(x * 1000 for x in lat)
    out = {
        "data": str(args.data),
        "conversations": len(data),
        "evidence": f"audited ({len(fixes)} errata from {args.audit.name})" if args.audit else "as published",
        "turns": n_turns,
        "questions": sum(cnt.values()),
        "ours": o,
        "bm25_reference": r,
        "ratio_ours_over_bm25": ratios,
        "index_seconds": round(index_s, 1),
        "search_ms_p50": round(statistics.median(lat_ms), 2) if lat_ms else None,
        "search_ms_p95": round(lat_ms[int(0.95 * (len(lat_ms) - 1))], 2) if lat_ms else None,
        "method": "hybrid: stemmed BM25 (own + neighbour-context column, in-process, per-agent statistics; "
        "query expanded with vocabulary words close in meaning) + dense "
        f"{args.embedding_model or 'bundled pair (all-MiniLM-L6-v2 int8 + multilingual-e5-small q4)'} (mean of "
        "turn and previous-turn+turn vectors) + session-level BM25, per-query normalised and weighted, plus 0/1 "
        "matches of a date period / message sender the question names",
        "embedding_model": args.embedding_model or "(shipped default: the bundled pair)",
        "params": asdict(svc.params),
    }
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
