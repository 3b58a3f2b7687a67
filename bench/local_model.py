"""Local model throughput: our LocalProvider vs calling llama.cpp directly. Prints JSON.

Both sides load the same bundled GGUF with the same context, threads and greedy sampling, get the
same ChatML prompt and the same max tokens; the KV cache is reset before every run so each pays the
full prompt evaluation. Runs are interleaved (rotating order) and medians reported.

``direct`` calls ``Llama.create_completion(stream=True)`` from a worker thread, as our provider does
(and as any async app must); ``direct_main_thread`` calls it from the main thread, for information:
on a busy 2-core machine it was sometimes several times slower than the same call from a worker
thread, sometimes equal. ``ratio_decode_tps`` = our decode tokens/s divided by ``direct``'s
(target >= 0.9). ``load_avg_1m`` tells how busy the machine was.

Usage: ``python bench/local_model.py [--runs 5] [--max-tokens 64]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

from neotask_tui.providers.base import ChatMessage, StreamEnd, TextDelta
from neotask_tui.providers.local import LocalProvider, bundled_model_path, render_chatml

MESSAGES = [
    ChatMessage("system", "You are a helpful assistant."),
    ChatMessage("user", "Write a long, detailed story about a lighthouse keeper during a winter storm."),
]


def _rates(start: float, first: float | None, end: float, tokens: int) -> dict[str, float | int | None]:
    ttft = None if first is None else first - start
    decode = (tokens - 1) / (end - first) if first is not None and tokens > 1 and end > first else None
    return {"ttft_s": ttft, "decode_tps": decode, "total_tps": tokens / (end - start), "tokens": tokens}


async def run_ours(p: LocalProvider, max_tokens: int) -> tuple[dict[str, Any], str]:
    p._llm.reset()  # bench only: make every run pay the prompt evaluation, like the direct side
    start = time.perf_counter()
    first: float | None = None
    text: list[str] = []
    tokens = 0
    async for ev in p.stream(MESSAGES, max_tokens=max_tokens):
        if isinstance(ev, TextDelta):
            if first is None:
                first = time.perf_counter()
            text.append(ev.text)
        elif isinstance(ev, StreamEnd) and ev.usage is not None:
            tokens = ev.usage.output_tokens
    end = time.perf_counter()
    return _rates(start, first, end, tokens), "".join(text)


def run_direct(llm: Any, prompt: str, max_tokens: int) -> tuple[dict[str, Any], str]:
    llm.reset()
    start = time.perf_counter()
    first: float | None = None
    text: list[str] = []
    chunks = 0
    finish = None
    for chunk in llm.create_completion(prompt, max_tokens=max_tokens, stream=True, temperature=0.0, top_p=0.9,
                                       repeat_penalty=1.1, stop=["<|im_end|>", "<|endoftext|>"]):
        choice = chunk["choices"][0]
        if choice["text"]:
            if first is None:
                first = time.perf_counter()
            text.append(choice["text"])
            chunks += 1
        finish = choice.get("finish_reason") or finish
    end = time.perf_counter()
    out = "".join(text)
    tokens = max_tokens if finish == "length" else len(llm.tokenize(out.encode(), add_bos=False))
    return _rates(start, first, end, tokens), out


def median(values: list[Any]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()
    threads = os.cpu_count() or 1

    t0 = time.perf_counter()
    from llama_cpp import Llama

    import_s = time.perf_counter() - t0
    ours = LocalProvider(temperature=0.0, top_p=0.9, repeat_penalty=1.1, n_ctx=8192, n_threads=threads)
    t0 = time.perf_counter()
    await ours.load()
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    direct = Llama(model_path=str(bundled_model_path()), n_ctx=8192, n_threads=threads, n_threads_batch=threads,
                   verbose=False)
    direct_load_s = time.perf_counter() - t0
    prompt = render_chatml(MESSAGES)

    # One warm-up each (page cache, first-call allocations), not measured.
    await run_ours(ours, 8)
    run_direct(direct, prompt, 8)

    runs: dict[str, list[dict[str, Any]]] = {"ours": [], "direct": [], "direct_main_thread": []}
    same_text = True
    sides = list(runs)
    for i in range(args.runs):
        texts = {}
        for side in sides[i % 3:] + sides[: i % 3]:
            if side == "ours":
                r, texts[side] = await run_ours(ours, args.max_tokens)
            elif side == "direct":
                r, texts[side] = await asyncio.to_thread(run_direct, direct, prompt, args.max_tokens)
            else:
                r, texts[side] = run_direct(direct, prompt, args.max_tokens)
            runs[side].append(r)
        same_text = same_text and len(set(texts.values())) == 1

    def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
        return {k: median([r[k] for r in runs]) for k in ("ttft_s", "decode_tps", "total_tps", "tokens")}

    stats = {side: summary(r) for side, r in runs.items()}
    s_ours, s_direct = stats["ours"], stats["direct"]
    ratio = (s_ours["decode_tps"] / s_direct["decode_tps"]) if s_ours["decode_tps"] and s_direct["decode_tps"] else None

    def rounded(d: dict[str, Any]) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in d.items()}

    print(json.dumps({
        "model": ours.model,
        "runs": args.runs,
        "max_tokens": args.max_tokens,
        "threads": threads,
        "import_llama_cpp_s": round(import_s, 3),
        "load_s": round(load_s, 3),
        "direct_load_s": round(direct_load_s, 3),
        **{side: rounded(st) for side, st in stats.items()},
        "ratio_decode_tps": None if ratio is None else round(ratio, 3),
        "ratio_total_tps": round(s_ours["total_tps"] / s_direct["total_tps"], 3),
        "same_text": same_text,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }, indent=2))
    await ours.aclose()
    direct.close()


if __name__ == "__main__":
    asyncio.run(main())
