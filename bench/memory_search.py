"""Memory search benchmark: index throughput, search latency at 1k/10k/100k chunks, no-op reindex.

- 1k: real chunks — synthetic markdown notes written to ``memory/*.md`` and indexed through
  ``MemoryService.reindex`` (chunking + fastembed + LanceDB); reports chunks/s, then an unchanged
  reindex (must embed 0 chunks).
- 10k and 100k: synthetic texts with random unit vectors inserted through the store API as archived
  transcript chunks (embedding 100k chunks would take many minutes on 2 cores); only search is timed
  there. Their vocabulary gets real word vectors (semantic query expansion scans them per query).
  Search latency is the full ``MemoryService.search`` call: staleness check, query embedding, BM25
  (numpy inverted index over the cached table), semantic expansion, dense scan (numpy over the
  cached vectors), fusion; the query embedding, the search with a cached query vector, and that
  search without the expansion/date/sender signals (the baseline) are reported beside it (see
  ``_time_search``).

Usage: python bench/memory_search.py [--sizes 1000,10000,100000] [--queries 40]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

_SYL = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "da", "fe", "gi", "ho", "ju"]
_REAL_TEXT = (
    "deploy server database backup schedule coffee meeting budget invoice release branch review test "
    "migration python rust kubernetes docker latency cache index memory search garden holiday train "
    "flight hotel birthday doctor dentist gym running recipe pasta salad guitar piano novel poem"
)
_REAL = _REAL_TEXT.split()


def _vocab(n: int, rng: random.Random) -> list[str]:
    words = set(_REAL)
    while len(words) < n:
        words.add("".join(rng.choice(_SYL) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _sentence(vocab: list[str], rng: random.Random, n: int) -> str:
    # Zipf-ish: low indices are frequent
    return " ".join(vocab[min(len(vocab) - 1, int(rng.paretovariate(1.1)) - 1)] if rng.random() < 0.5
                    else rng.choice(vocab) for _ in range(n)).capitalize() + "."


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def _stats(lat: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(lat), 2), "p95_ms": round(_pct(lat, 0.95), 2)}


def _time_search(svc: Any, agent: str, queries: list[str]) -> dict[str, Any]:
    """Search latency three ways, interleaved per query so machine load hits them alike.

    - ``search``: the full call with a cold query (embedding cache cleared first) — what a new
      question costs;
    - ``embed_query``: the query embedding alone (MiniLM on the CPU; most sensitive to load);
    - ``search_cached_embedding``: the same call with the query vector already cached — everything
      but the model: staleness check, BM25, expansion, dense scan, fusion;
    - ``search_cached_embedding_plain``: the same without semantic expansion and the date/sender
      signals (the baseline of the previous version), and the ratio of the two medians.
    """
    from dataclasses import replace

    emb = svc.embedder
    plain_params = replace(svc.params, sem_weight=0.0, date_weight=0.0, sender_weight=0.0)
    for q in queries[:3]:
        svc.search(q, agent_id=agent, k=8)
    full, embed, warm, plain = [], [], [], []
    for q in queries:
        emb.clear_query_cache()
        t = time.perf_counter()
        svc.search(q, agent_id=agent, k=8)
        full.append((time.perf_counter() - t) * 1000)
        emb.clear_query_cache()
        t = time.perf_counter()
        emb.embed_query(q)
        embed.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        svc.search(q, agent_id=agent, k=8)
        warm.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        svc.search(q, agent_id=agent, k=8, params=plain_params)
        plain.append((time.perf_counter() - t) * 1000)
    return {**_stats(full), "embed_query": _stats(embed), "search_cached_embedding": _stats(warm),
            "search_cached_embedding_plain": _stats(plain),
            "expansion_cost_ratio": round(statistics.median(warm) / statistics.median(plain), 2)}


def bench_real(n: int, queries: list[str], vocab: list[str], rng: random.Random) -> dict[str, Any]:
    from neotask_tui.config import MemorySettings
    from neotask_tui.memory.service import MemoryService

    svc = MemoryService(MemorySettings(chunk_tokens=64, chunk_overlap=0,
                                       db_uri=tempfile.mkdtemp(prefix="db-", dir=os.environ["NEOTASK_HOME"])))
    ws = svc.workspace("bench")
    per_file = 100
    for f in range(n // per_file):
        paras = [f"## Note {f}-{i}\n\n{_sentence(vocab, rng, 30)}" for i in range(per_file)]
        p = ws / "memory" / f"notes{f:03d}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    svc.embedder.embed(["warm up"])
    t = time.perf_counter()
    first = svc.reindex("bench")
    secs = time.perf_counter() - t
    again = svc.reindex("bench")
    out = {
        "chunks": svc.stats("bench")["rows"],
        "index_seconds": round(secs, 2),
        "index_chunks_per_s": round(first.chunks_embedded / secs, 1),
        "unchanged_reindex": {"chunks_embedded": again.chunks_embedded,
                              "chunks_unchanged": again.chunks_unchanged,
                              "seconds": round(again.seconds, 4)},
        "search": _time_search(svc, "bench", queries),
        "vectors": "real (fastembed)",
    }
    svc.close()
    return out


def bench_synthetic(n: int, queries: list[str], vocab: list[str], rng: random.Random) -> dict[str, Any]:
    import numpy as np

    from neotask_tui.config import MemorySettings
    from neotask_tui.memory.index.chunking import content_hash
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.text import lexical

    svc = MemoryService(MemorySettings(db_uri=tempfile.mkdtemp(prefix="db-", dir=os.environ["NEOTASK_HOME"])))
    store = svc.store
    gen = np.random.default_rng(7)
    batch = 20_000
    t = time.perf_counter()
    for start in range(0, n, batch):
        m = min(batch, n - start)
        texts = [_sentence(vocab, rng, 30) for _ in range(m)]
        vecs = gen.standard_normal((m, store.dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        ids = [content_hash("bench", str(start + i))[:16] for i in range(m)]
        meta: dict[str, list[Any]] = {
            "id": ids, "agent_id": ["bench"] * m, "scope": ["agent:bench"] * m, "source": ["transcript"] * m,
            "path": [f"transcripts/synthetic{(start + i) // 100:05d}" for i in range(m)],
            "line_start": [1] * m, "own_start": [1] * m, "line_end": [1] * m, "heading": [""] * m,
            "text": texts, "etext": texts, "lex": [lexical.normalize(x) for x in texts], "ctx": [""] * m,
            "hash": ids, "file_hash": [""] * m, "file_mtime": [0.0] * m, "file_size": [0] * m,
            "ts": [0.0] * m, "event_ids": [[start + i] for i in range(m)],
            "session_id": [f"synthetic{(start + i) // 100:05d}" for i in range(m)],
        }
        store.add_arrays(meta, vecs)
        assert svc._terms is not None  # the indexer feeds the vocabulary's word vectors the same way
        svc._terms.add_texts(texts)
    store.optimize()
    load_s = time.perf_counter() - t
    out = {
        "chunks": store.count(),
        "insert_and_fts_index_seconds": round(load_s, 1),
        "vocabulary_word_vectors": len(svc._terms) if svc._terms is not None else 0,
        "search": _time_search(svc, "bench", queries),
        "vectors": "synthetic random unit vectors (search timing only)",
    }
    svc.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=40)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="neotask-bench-")
    os.environ["NEOTASK_HOME"] = home
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        return _run(args)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _run(args: argparse.Namespace) -> int:
    rng = random.Random(42)
    vocab = _vocab(5000, rng)
    queries = [" ".join(rng.sample(_REAL, 2) + rng.sample(vocab, 2)) for _ in range(args.queries)]
    result: dict[str, Any] = {"cpus": os.cpu_count(), "queries": len(queries), "sizes": {}}
    t0 = time.perf_counter()
    for size in (int(s) for s in args.sizes.split(",")):
        fn = bench_real if size <= 1000 else bench_synthetic
        result["sizes"][str(size)] = fn(size, queries, vocab, rng)
        print(f"done {size}", file=sys.stderr, flush=True)
    result["targets"] = {"p50_ms_at_10k": 25, "p50_ms_at_100k": 100, "unchanged_reindex_embeddings": 0}
    result["total_seconds"] = round(time.perf_counter() - t0, 1)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

