"""The lexical tokenizer and the chunker on text of many scripts: the previous rules (baseline, kept
here) next to the shipped ones, in one run.

- ``whole_words``: per sample language, the share of the sample's words (whitespace-separated,
  stopwords left out) kept whole: one token holding all of the word's letters; for
  Chinese, Japanese and Korean the share of characters that occur in some term. Baseline vs shipped.
- ``normalize_us_per_kchar``: median microseconds per 1,000 characters of ``normalize`` over an
  English and a mixed-script text, baseline vs shipped.
- ``chunk_max_tokens``: the largest chunk (cl100k tokens) of a 200k-character line without spaces,
  baseline (pieces cut by characters) vs shipped (pieces counted), at the shipped chunk size.

Usage: python bench/lexical.py [--repeat N]. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
import unicodedata
from collections.abc import Callable

from neotask_tui.memory.index.chunking import chunk_markdown, token_counter
from neotask_tui.text import lexical
from neotask_tui.tuning import MEMORY_CHUNK_OVERLAP, MEMORY_CHUNK_TOKENS

SAMPLES = {
    "english": "The engineers were deploying the payment service to staging on Thursday evening.",
    "russian": "Учётные данные от тестового сервера лежат в хранилище паролей команды.",
    "ukrainian": "Привіт! Зустріч із постачальниками перенесли на п'ятницю о дев'ятій.",
    "german": "Die Straße vor dem Büro wird nächste Woche für Bauarbeiten gesperrt.",
    "polish": "Zażółć gęślą jaźń: spotkanie zespołu przesunięto na środę.",
    "turkish": "İstanbul'daki toplantı ağaçların gölgesinde, kızlar ve oğlanlar ile yapıldı.",
    "greek": "Η συνάντηση με τους προμηθευτές είναι την Τρίτη στην Αθήνα.",
    "chinese": "我们下周在北京讨论机器学习项目的预算。",
    "japanese": "来週東京で機械学習の予算について話し合います。",
    "korean": "다음 주에 서울에서 머신러닝 예산을 논의합니다.",
}

_OLD_TOKEN = re.compile(r"[0-9a-zà-ÿа-яё]+(?:['’][a-z]+)?", re.IGNORECASE)


def old_terms(text: str) -> list[str]:
    """The tokenizer before this release: a–z, à–ÿ and Russian letters, Snowball English/Russian."""
    out = []
    for m in _OLD_TOKEN.finditer(text):
        w = m.group(0).lower().replace("’", "'")
        if w in lexical.STOPWORDS:
            continue
        w = lexical.unpossessive(w)
        if not w or w in lexical.STOPWORDS:
            continue
        ru = any("а" <= c <= "я" or c == "ё" for c in w)
        out.append(lexical.stem(w.replace("ё", "е")) if ru else lexical.stem(w))
    return out


def _letters(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", s.casefold()) if c.isalnum())


def old_words(text: str) -> list[str]:
    return [m.group(0).lower() for m in _OLD_TOKEN.finditer(text)]


def coverage(words: Callable[[str], list[str]], terms: Callable[[str], list[str]]) -> dict[str, float]:
    out = {}
    for lang, text in SAMPLES.items():
        if lang in ("chinese", "japanese", "korean"):
            chars = [c for c in text if c.isalnum()]
            got = "".join(terms(text))
            out[lang] = round(sum(1 for c in chars if c in got) / len(chars), 3)
            continue
        units = [u for u in text.split() if any(c.isalnum() for c in u)]
        units = [u for u in units if not set(lexical.words(u)) <= lexical.STOPWORDS]
        whole = [u for u in units if len(toks := words(u)) == 1 and _letters(toks[0]) == _letters(u)]
        out[lang] = round(len(whole) / len(units), 3)
    return out


def speed(terms: Callable[[str], list[str]], text: str, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        lexical.stem.cache_clear()
        t = time.perf_counter()
        for line in text.splitlines():
            terms(line)
        runs.append((time.perf_counter() - t) * 1e6 / (len(text) / 1000))
    return round(statistics.median(runs), 1)


def _old_split_word(word: str, size: int, count: Callable[[str], int]) -> list[str]:
    """The chunker's cut before this release: pieces of ``size`` characters, halved while over."""
    if len(word) <= size or count(word) <= size:
        return [word]
    out: list[str] = []
    for i in range(0, len(word), size):
        part = word[i : i + size]
        while count(part) > size and len(part) > 1:
            half = len(part) // 2
            out.extend(_old_split_word(part[:half], size, count))
            part = part[half:]
        out.append(part)
    return out


def chunk_max(line: str, old: bool) -> int:
    import neotask_tui.memory.index.chunking as chunking

    count = token_counter()
    shipped = chunking._split_word
    if old:
        chunking._split_word = _old_split_word  # the baseline, for this measurement only
    try:
        chunks = chunk_markdown(line, size=MEMORY_CHUNK_TOKENS, overlap=MEMORY_CHUNK_OVERLAP, count=count)
    finally:
        chunking._split_word = shipped
    return max(count(c.text) for c in chunks)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="timing runs (median)")
    args = ap.parse_args()
    rng = random.Random(7)
    english = "\n".join(SAMPLES["english"] for _ in range(400))
    mixed = "\n".join(SAMPLES.values()) * 40
    lines = {
        "base64": "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/")
                          for _ in range(200_000)),
        "han": "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(200_000)),
        "emoji": "".join(chr(rng.randint(0x1F600, 0x1F64F)) for _ in range(200_000)),
    }
    out = {
        "lexical_version": lexical.VERSION,
        "whole_words": {"baseline": coverage(old_words, old_terms), "shipped": coverage(lexical.words, lexical.terms)},
        "normalize_us_per_kchar": {
            "english": {"baseline": speed(old_terms, english, args.repeat),
                        "shipped": speed(lexical.terms, english, args.repeat)},
            "mixed": {"baseline": speed(old_terms, mixed, args.repeat),
                      "shipped": speed(lexical.terms, mixed, args.repeat)},
        },
        "chunk_size": MEMORY_CHUNK_TOKENS,
        "chunk_max_tokens": {k: {"baseline": chunk_max(v, True), "shipped": chunk_max(v, False)}
                             for k, v in lines.items()},
    }
    print(json.dumps(out, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
