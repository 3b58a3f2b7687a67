"""Find and redact secrets (API keys, tokens, passwords, private keys) in free text.

Used before anything derived from user or model text is stored outside the transcript: promotion
inbox candidates, long-term memory entries, session-state values from the classifier. Detection is
deliberately eager — a false positive costs a ``[REDACTED:...]`` marker, a false negative leaks a
credential into ``MEMORY.md`` and from there into every future context.

Covered formats: OpenAI (``sk-``, ``sk-proj-``), Anthropic (``sk-ant-``), GitHub (``ghp_``,
``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``), GitLab (``glpat-``), AWS access key ids
(``AKIA``/``ASIA``), Slack (``xoxb-``/``xoxp-``/...), Google API keys (``AIza``), JWTs, PEM private
keys, ``Bearer`` tokens, passwords in URLs (``https://user:pw@host``), ``password=`` / ``token:`` /
``api_key=`` style assignments (English and Russian key words), "my password is ..." phrasing, and
long high-entropy strings.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["SecretMatch", "find_secrets", "has_secrets", "redact_secrets"]


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One detected secret.

    The matched text itself is deliberately not kept, so a match can be logged or shown safely.

    Attributes:
        kind: What was found (``openai_key``, ``github_token``, ``password``, ``high_entropy``...).
        start: Start offset of the secret value in the scanned text.
        end: End offset (exclusive).
    """

    kind: str
    start: int
    end: int


# (kind, pattern, group holding the secret value — 0 = whole match)
_PATTERNS: list[tuple[str, re.Pattern[str], int]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
        0,
    ),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"), 0),
    ("openai_key", re.compile(r"\bsk-proj-[A-Za-z0-9_\-]{16,}"), 0),
    ("openai_key", re.compile(r"\bsk-(?:live-|test-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), 0),
    ("github_token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), 0),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), 0),
    ("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), 0),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0),
    # user:password@ in URLs: only the password part is redacted.
    ("url_password", re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:([^\s@/]+)@"), 1),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), 0),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}"), 0),
    ("bearer_token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{16,}=*)"), 1),
    (
        "password",
        re.compile(
            r"(?i)(?:\b|(?<=_))(?:password|passwd|passphrase|pwd|пароль|парол[ья])"
            r"\s*(?P<sep>[:=]|\bis\b|—|-|–|\bэто\b)\s*(?P<val>\"[^\"\n]+\"|'[^'\n]+'|[^\s,;]+)"
        ),
        2,
    ),
    (
        "credential",
        re.compile(
            r"(?i)\b(?:api[_\-]?key|apikey|access[_\-]?key(?:[_\-]?id)?|secret(?:[_\-]?key)?|"
            r"client[_\-]?secret|auth[_\-]?token|access[_\-]?token|refresh[_\-]?token|token|"
            r"private[_\-]?key|токен|ключ(?:\s+api)?)"
            r"\s*(?P<sep>[:=]|\bis\b|—|–|\bэто\b)\s*(?P<val>\"[^\"\n]+\"|'[^'\n]+'|[^\s,;]+)"
        ),
        2,
    ),
]

_CANDIDATE_TOKEN = re.compile(r"[A-Za-z0-9+_=\-]{32,}")
_HEX_ONLY = re.compile(r"^[0-9a-fA-F\-]+$")


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    """A long token mixing letters and digits with high per-character entropy.

    Pure hex (git SHAs, UUIDs, content hashes) is excluded: it is everywhere in developer text and
    real hex credentials are rare compared with the noise redacting every hash would cause.
    """
    if _HEX_ONLY.match(token):
        return False
    has_digit = any(c.isdigit() for c in token)
    has_alpha = any(c.isalpha() for c in token)
    if not (has_digit and has_alpha):
        return False
    classes = sum((any(c.islower() for c in token), any(c.isupper() for c in token), has_digit))
    return classes >= 2 and _entropy(token) >= 4.0


def _plausible_value(value: str, *, strict: bool) -> bool:
    """Whether the value of a ``key = value`` / ``key is value`` phrase looks like a credential.

    ``strict`` (prose such as "the token is expired") additionally asks for a digit, a symbol or
    mixed case, so ordinary sentences about tokens are left alone.
    """
    if len(value) < 4 or value.startswith("[REDACTED"):
        return False
    if not strict:
        return True
    has_other = any(not c.isalpha() for c in value)
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return len(value) >= 6 and (has_other or mixed)


def find_secrets(text: str) -> list[SecretMatch]:
    """Locate secrets in ``text``.

    Args:
        text: Any free text.

    Returns:
        Non-overlapping matches sorted by position (when two detections overlap, the longer
        one wins; a known format beats the generic high-entropy rule for the same span).
    """
    found: list[SecretMatch] = []
    for kind, pat, group in _PATTERNS:
        for m in pat.finditer(text):
            start, end = m.span(group)
            value = m.group(group).strip("\"'")
            if kind in {"password", "credential"} and not _plausible_value(
                value, strict=kind == "credential" and m.group("sep") not in {":", "="}
            ):
                continue
            found.append(SecretMatch(kind, start, end))
    for m in _CANDIDATE_TOKEN.finditer(text):
        if _looks_random(m.group(0)):
            found.append(SecretMatch("high_entropy", m.start(), m.end()))
    # Resolve overlaps: longest first, then by position; keep spans that do not overlap a kept one.
    found.sort(key=lambda s: (-(s.end - s.start), s.start, s.kind == "high_entropy"))
    kept: list[SecretMatch] = []
    for s in found:
        if all(s.end <= k.start or s.start >= k.end for k in kept):
            kept.append(s)
    return sorted(kept, key=lambda s: s.start)


def has_secrets(text: str) -> bool:
    """Whether :func:`find_secrets` finds anything in ``text``."""
    return bool(find_secrets(text))


def redact_secrets(text: str) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``.

    Assignments keep their key (``password=[REDACTED:password]``) so the redacted text still
    reads naturally. Redaction is idempotent.
    """
    out: list[str] = []
    pos = 0
    for s in find_secrets(text):
        out.append(text[pos : s.start])
        out.append(f"[REDACTED:{s.kind}]")
        pos = s.end
    out.append(text[pos:])
    return "".join(out)
