"""Token counts: the old estimate against the exact count, on a small multilingual sample.

Two comparisons, on the same conversations (English, Russian, code, mixed):

- ``local``: the bundled SmolLM2 model. ``estimate`` is what the gauge showed before #20 (cl100k
  content + the per-message overhead rule, :func:`neotask_tui.text.tokens.count_messages`);
  ``exact`` is the prompt as the model reads it (its own tokenizer through its own chat template,
  :class:`neotask_tui.providers.gguf.ChatFormat`), what the gauge shows now. ``error`` is
  ``estimate / exact - 1``.
- ``openai_o200k``: message contents counted with cl100k (what gpt-4o/o1/o3/gpt-4.1/gpt-5 were
  counted with before) and with o200k (their own encoding, used now).

Also the median time of one whole-prompt count (ms) for each counter over ``--runs`` runs. Prints
JSON. Not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from neotask_tui.config import Settings
from neotask_tui.providers import gguf
from neotask_tui.providers.base import ChatMessage
from neotask_tui.providers.local import bundled_model_path
from neotask_tui.text import tokens

SYSTEM = Settings().general.system_prompt
SAMPLES: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("user", "Can you remind me what we decided about the cache eviction policy last week?"),
        ("assistant", "We chose LRU with a 10-minute TTL, and agreed to revisit it once the metrics "
                      "dashboard shows the hit rate per endpoint."),
        ("user", "Right. Draft a short note for the team explaining why we didn't pick LFU."),
    ],
    "ru": [
        ("user", "Напомни, пожалуйста, что мы решили насчёт политики вытеснения кэша на прошлой неделе?"),
        ("assistant", "Мы выбрали LRU с временем жизни десять минут и договорились вернуться к вопросу, "
                      "когда на панели метрик появится доля попаданий по каждому адресу."),
        ("user", "Точно. Набросай короткую заметку для команды: почему мы не взяли LFU."),
    ],
    "code": [
        ("user", "Why does this fail?\n```python\ndef load(path: str) -> dict[str, int]:\n"
                 "    with open(path) as f:\n        return {k: int(v) for k, v in (l.split('=') for l in f)}\n```"),
        ("assistant", "A line without `=` (or with two) makes `split('=')` return the wrong number of "
                      "parts, so the unpacking `k, v` raises `ValueError`. Use `l.partition('=')`."),
    ],
    "mixed": [
        ("user", "Переведи на английский: «Ключи доступа храним в хранилище секретов, не в репозитории.»"),
        ("assistant", "“We keep access keys in the secrets vault, not in the repository.”"),
        ("user", "Und jetzt auf Deutsch, bitte. 谢谢!"),
    ],
}


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="timing runs per counter (median)")
    args = ap.parse_args()
    fmt = gguf.vocab(str(bundled_model_path()))
    o200k = tokens.counter("openai", "gpt-4o")
    local: dict[str, dict[str, float]] = {}
    openai: dict[str, dict[str, float]] = {}
    for name, turns in SAMPLES.items():
        msgs = [ChatMessage("system", SYSTEM), *(ChatMessage(r, c) for r, c in turns)]
        estimate = tokens.count_messages(msgs)
        exact = fmt.count_prompt(msgs)
        local[name] = {"estimate": estimate, "exact": exact, "error": round(estimate / exact - 1, 4)}
        text = "\n".join(c for _, c in turns)
        cl, o2 = tokens.count_text(text), o200k.count(text)
        openai[name] = {"cl100k": cl, "o200k": o2, "cl100k_over_o200k": round(cl / o2 - 1, 4)}
    msgs = [ChatMessage("system", SYSTEM), *(ChatMessage(r, c) for t in SAMPLES.values() for r, c in t)]
    timing = {
        "estimate_ms": _median_ms(lambda: tokens.count_messages(msgs), args.runs),
        "exact_local_ms": _median_ms(lambda: fmt.count_prompt(msgs), args.runs),
    }
    worst = max(abs(v["error"]) for v in local.values())
    print(json.dumps({"local": local, "local_worst_abs_error": worst, "openai_o200k": openai,
                      "timing": timing, "runs": args.runs}, indent=2))


if __name__ == "__main__":
    main()
