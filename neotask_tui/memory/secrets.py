"""Secret redaction applied before text from inbox entries or transcripts is written or indexed.

If the engine's shared redactor (``neotask_tui.engine.redact.redact_secrets``) exists it runs first;
this module's patterns always run too, so memory never depends on another module's coverage.
"""

from __future__ import annotations

import math
import re
from collections import Counter

MASK = "[REDACTED]"

_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-.=]{16,}"),
    re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:[^\s@/]+@"),  # user:password@ in URLs
)
# key = value / key: value where the key names a secret; the value is masked, the key kept.
_ASSIGN = re.compile(
    r"(?i)\b((?:[a-z0-9_\-]*?)(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|"
    r"private[_\-]?key|client[_\-]?secret|пароль)[a-z0-9_\-]*)(\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|\S+)"
)
_CANDIDATE = re.compile(r"[A-Za-z0-9+/_\-=]{24,}")


def _entropy(s: str) -> float:
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(tok: str) -> bool:
    """High-entropy token mixing character classes (keys, hashes of secrets); not plain words."""
    classes = sum(
        (any(c.islower() for c in tok), any(c.isupper() for c in tok), any(c.isdigit() for c in tok))
    )
    if classes < 2 or not any(c.isdigit() for c in tok):
        return False
    return _entropy(tok) >= 4.0


def _local_redact(text: str) -> tuple[str, int]:
    n = 0

    def sub(_: re.Match[str]) -> str:
        nonlocal n
        n += 1
        return MASK

    for pat in _PATTERNS:
        text = pat.sub(sub, text)

    def assign(m: re.Match[str]) -> str:
        nonlocal n
        if m.group(3) == MASK:
            return m.group(0)
        n += 1
        return f"{m.group(1)}{m.group(2)}{MASK}"

    text = _ASSIGN.sub(assign, text)

    def rand(m: re.Match[str]) -> str:
        if "REDACTED" in m.group(0):
            return m.group(0)
        nonlocal n
        if _looks_random(m.group(0)):
            n += 1
            return MASK
        return m.group(0)

    text = _CANDIDATE.sub(rand, text)
    return text, n


def redact(text: str) -> tuple[str, int]:
    """Mask secrets in ``text``.

    Args:
        text: Any text.

    Returns:
        The redacted text and how many secrets were masked.
    """
    n = 0
    try:
        from neotask_tui.engine.redact import redact_secrets  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        pass
    else:
        shared = redact_secrets(text)
        if shared != text:
            n += max(1, shared.count("[REDACTED") - text.count("[REDACTED"))
            text = shared
    text, m = _local_redact(text)
    return text, n + m


def redact_secrets(text: str) -> str:
    """Mask secrets in ``text`` (the count-free form of :func:`redact`)."""
    return redact(text)[0]
