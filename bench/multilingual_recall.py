"""Multilingual paraphrase recall of memory search: the previous bundled embedder vs the shipped one.

``bench/multilingual_data.json`` holds hand-written developer notes in Russian, English, Ukrainian,
German and Spanish, each with a paraphrased query that shares few word forms with its note. Every
note is its own file in ``memory/`` of one agent; the files go through the real indexer
(``MemoryService.reindex``: chunking, the embedder, LanceDB) and every query through
``MemoryService.search`` as ``neotask memory search`` calls it (sources memory + transcript, the
shipped hybrid ranking). A query's rank is the position of its note's file among the hits.

Per language: hit@1, hit@3 and MRR (a note not in the top 10 counts 0); ``dense_only`` is the same
search with the lexical side off (what the embedder alone does). Per model: passages embedded per
second (median of 3 passes over all notes, after a warm-up), the load time, the indexing time (wall
and CPU: on a shared machine the wall time is mostly waiting) and the process's peak RSS. Each model
runs in its own subprocess (so RSS is its own), one after the other in this run.

Usage: python bench/multilingual_recall.py [--models ID,ID] [--data PATH]
(no flags: the previous bundled model, e5 alone, then the shipped default: the pair of both).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "multilingual_data.json"
K = 10
AGENT = "bench"


def _scores(ranks: list[int]) -> dict[str, float]:
    n = len(ranks)
    return {
        "n": n,
        "hit@1": round(sum(r == 1 for r in ranks) / n, 3),
        "hit@3": round(sum(1 <= r <= 3 for r in ranks) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r > 0) / n, 3),
    }


def _by_lang(notes: list[dict[str, str]], ranks: list[int]) -> dict[str, dict[str, float]]:
    langs = sorted({n["lang"] for n in notes}, key=lambda x: (x not in ("ru", "en"), x))
    out = {lang: _scores([r for n, r in zip(notes, ranks, strict=True) if n["lang"] == lang]) for lang in langs}
    out["all"] = _scores(ranks)
    return out


def _rank(hits: list[Any], rel: str) -> int:
    files: list[str] = []
    for h in hits:
        if h.path not in files:
            files.append(h.path)
    return files.index(rel) + 1 if rel in files else 0


def run_one(model: str, data: Path) -> dict[str, Any]:
    """Index the notes with ``model`` and answer every query (in this process)."""
    from neotask_tui.config import MemorySettings
    from neotask_tui.memory.service import MemoryService

    notes: list[dict[str, str]] = json.loads(data.read_text(encoding="utf-8"))["notes"]
    svc = MemoryService(MemorySettings(embedding_model=model))
    ws = svc.workspace(AGENT)
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    for n in notes:
        (ws / "memory" / f"{n['id']}.md").write_text(n["note"] + "\n", encoding="utf-8")
    t = time.perf_counter()
    svc.embedder.embed(["warm up"])
    load_s = time.perf_counter() - t
    t, cpu = time.perf_counter(), time.process_time()
    svc.reindex(AGENT)
    index_s, index_cpu_s = time.perf_counter() - t, time.process_time() - cpu
    dense_params = replace(svc.params, lexical_weight=0.0, sem_weight=0.0, group_weight=0.0)
    ranks, dense = [], []
    for n in notes:
        rel = f"memory/{n['id']}.md"
        hits = svc.search(n["query"], agent_id=AGENT, k=K, sources=("memory", "transcript"))
        ranks.append(_rank(hits, rel))
        dense.append(_rank(svc.search(n["query"], agent_id=AGENT, k=K, sources=("memory", "transcript"),
                                      params=dense_params), rel))
    texts = [n["note"] for n in notes]
    passes = []
    for _ in range(3):
        t = time.perf_counter()
        svc.embedder.embed(texts)
        passes.append(time.perf_counter() - t)
    out = {
        "model_id": svc.embedder.model_id,
        "hybrid": _by_lang(notes, ranks),
        "dense_only": _by_lang(notes, dense),
        "passages_per_s": round(len(texts) / statistics.median(passes), 1),
        "load_s": round(load_s, 2),
        "index_s": round(index_s, 2),
        "index_cpu_s": round(index_cpu_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "misses_at_1": [n["id"] for n, r in zip(notes, ranks, strict=True) if r != 1],
    }
    svc.close()
    return out


def main() -> int:
    from neotask_tui.memory.index.models import DEFAULT, E5_SMALL, MINILM

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=f"{MINILM.model_id},{E5_SMALL.model_id},{DEFAULT.model_id}",
                    help="comma-separated memory.embedding_model values (default: the previous bundled "
                         "model, e5 alone, the shipped default)")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # one model, in this process
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(run_one(args.one, args.data), ensure_ascii=False))
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    result: dict[str, Any] = {"data": str(args.data.name), "k": K, "cores": cores, "models": {}}
    for model in args.models.split(","):
        home = tempfile.mkdtemp(prefix="neotask-mlrecall-")
        try:
            env = {**os.environ, "NEOTASK_HOME": home, "HF_HUB_OFFLINE": "1"}
            proc = subprocess.run([sys.executable, __file__, "--one", model, "--data", str(args.data)],
                                  env=env, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"{model or 'default'}: {proc.stderr.strip().splitlines()[-1:]}")
            one = json.loads(proc.stdout.strip().splitlines()[-1])
            result["models"][one.pop("model_id")] = one
        finally:
            shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(result, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
