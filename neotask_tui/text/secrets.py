"""The one secret redactor: API keys, tokens, private keys and passwords found in free text.

Everything Neotask derives from what the user or the model wrote and keeps outside the transcript
goes through :func:`redact` first: ``MEMORY.md`` and ``memory/`` entries (whatever their source,
``/remember`` and ``neotask memory add`` included), promotion-inbox candidates, session-state
values, and every row of the LanceDB index (archived transcripts and user-written memory files
included). Detection is deliberately eager — a false positive costs a ``[REDACTED:<kind>]`` marker,
a false negative leaks a credential into every future context.

What is found:

- known token formats (the rule lists of gitleaks and detect-secrets): OpenAI, Anthropic, GitHub,
  GitLab, AWS, Slack (tokens and webhooks), Stripe, Twilio, SendGrid, Mailgun, Mailchimp, npm,
  PyPI, Google, Hugging Face, Shopify, DigitalOcean, Heroku, Square, Discord, Telegram, Databricks,
  Vault, Grafana, age, JWTs, PEM/PGP private-key blocks;
- credentials in URLs (``postgres://user:pw@host``), ``Bearer``/``Authorization`` headers;
- assignments whose name says "secret" (``.env`` lines, JSON/YAML keys, connection strings:
  ``DB_PASSWORD=…``, ``"private_key": "…"``, ``AccountKey=…;``);
- passwords in English and Russian prose ("my password for the box is …", "I log in with … as my
  password", "пароль от сервера — …", "войти с паролем …");
- long high-entropy tokens (not pure hex: git SHAs, UUIDs and hashes stay readable).

Every pattern is linear in the input: literal prefixes, single character classes and bounded
repeats, no nested quantifiers; keyword rules match the lead-in and the value in two steps so a
rejected value never hides a later secret. Pure module: no app imports.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["MARKER_PREFIX", "SecretMatch", "find_secrets", "has_secrets", "redact", "redact_secrets"]

MARKER_PREFIX = "[REDACTED:"
"""Every redaction reads ``[REDACTED:<kind>]``."""


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


# -- known formats -----------------------------------------------------------------------------
# (kind, pattern, group holding the secret (0 = whole match), literals one of which must occur)
_B = r"(?<![A-Za-z0-9_])"  # a token starts here (like \b, but also after "-" or "/")
_E = r"(?![A-Za-z0-9_])"

_FORMATS: list[tuple[str, re.Pattern[str], int, tuple[str, ...]]] = [
    ("anthropic_key", re.compile(_B + r"sk-ant-[A-Za-z0-9_\-]{16,512}"), 0, ("sk-ant-",)),
    ("openai_key", re.compile(_B + r"sk-(?:proj|svcacct|admin|live|test)-[A-Za-z0-9_\-]{16,512}"), 0, ("sk-",)),
    ("openai_key", re.compile(_B + r"sk-[A-Za-z0-9]{20,512}(?:T3BlbkFJ[A-Za-z0-9_\-]{0,256})?"), 0, ("sk-",)),
    ("github_token", re.compile(_B + r"github_pat_[A-Za-z0-9_]{22,255}"), 0, ("github_pat_",)),
    ("github_token", re.compile(_B + r"gh[pousr]_[A-Za-z0-9]{20,255}"), 0, ("gh",)),
    ("gitlab_token", re.compile(_B + r"gl(?:pat|dt|rt|ptt|soat|ft|imt|cbt|oas)-[A-Za-z0-9_\-]{20,64}"), 0,
     ("gl",)),
    ("aws_access_key", re.compile(
        _B + r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[0-9A-Z]{16}" + _E), 0,
     ("A",)),
    ("slack_webhook", re.compile(
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{10,256}"), 0,
     ("hooks.slack.com",)),
    ("discord_webhook", re.compile(
        r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_\-]{20,128}"), 0,
     ("discord",)),
    ("slack_token", re.compile(_B + r"xox[abposre]-[A-Za-z0-9\-]{10,256}"), 0, ("xox",)),
    ("slack_token", re.compile(_B + r"xapp-[0-9]-[A-Za-z0-9\-]{10,256}"), 0, ("xapp-",)),
    ("stripe_key", re.compile(_B + r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,256}"), 0, ("k_",)),
    ("twilio_key", re.compile(_B + r"SK[0-9a-fA-F]{32}" + _E), 0, ("SK",)),
    ("sendgrid_key", re.compile(_B + r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"), 0, ("SG.",)),
    ("mailgun_key", re.compile(_B + r"key-[0-9a-zA-Z]{32}" + _E), 0, ("key-",)),
    ("mailchimp_key", re.compile(_B + r"[0-9a-f]{32}-us[0-9]{1,2}" + _E), 0, ("-us",)),
    ("npm_token", re.compile(_B + r"npm_[A-Za-z0-9]{36}" + _E), 0, ("npm_",)),
    ("pypi_token", re.compile(_B + r"pypi-AgE[A-Za-z0-9_\-]{40,1024}"), 0, ("pypi-",)),
    ("google_api_key", re.compile(_B + r"AIza[0-9A-Za-z_\-]{30,40}"), 0, ("AIza",)),
    ("google_oauth", re.compile(_B + r"ya29\.[0-9A-Za-z_\-]{20,512}"), 0, ("ya29.",)),
    ("google_oauth", re.compile(_B + r"GOCSPX-[0-9A-Za-z_\-]{20,64}"), 0, ("GOCSPX-",)),
    ("huggingface_token", re.compile(_B + r"hf_[A-Za-z0-9]{30,40}" + _E), 0, ("hf_",)),
    ("shopify_token", re.compile(_B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E), 0, ("shp",)),
    ("digitalocean_token", re.compile(_B + r"do[opr]_v1_[a-f0-9]{64}" + _E), 0, ("_v1_",)),
    ("heroku_key", re.compile(_B + r"HRKU-[A-Za-z0-9_\-]{40,80}"), 0, ("HRKU-",)),
    ("square_token", re.compile(_B + r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,60}"), 0, ("sq0",)),
    ("square_token", re.compile(_B + r"EAAA[0-9A-Za-z_\-]{56,64}" + _E), 0, ("EAAA",)),
    ("databricks_token", re.compile(_B + r"dapi[a-f0-9]{32}(?:-[0-9])?" + _E), 0, ("dapi",)),
    ("vault_token", re.compile(_B + r"hv[sbr]\.[A-Za-z0-9_\-]{24,256}"), 0, ("hv",)),
    ("grafana_token", re.compile(_B + r"gl(?:c|sa)_[A-Za-z0-9_\-+/=]{32,256}"), 0, ("gl",)),
    ("newrelic_key", re.compile(_B + r"NRAK-[A-Z0-9]{27}" + _E), 0, ("NRAK-",)),
    ("postman_key", re.compile(_B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E), 0, ("PMAK-",)),
    ("age_key", re.compile(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"), 0, ("AGE-SECRET-KEY-",)),
    ("discord_token", re.compile(
        _B + r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}" + _E), 0, (".",)),
    ("telegram_token", re.compile(_B + r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{32,33}" + _E), 0, (":AA",)),
    ("jwt", re.compile(
        _B + r"eyJ[A-Za-z0-9_\-]{5,4096}\.eyJ[A-Za-z0-9_\-]{5,8192}\.[A-Za-z0-9_\-]{5,4096}"), 0, ("eyJ",)),
    ("bearer_token", re.compile(r"(?i)\bbearer[^\S\n]{1,8}([A-Za-z0-9._~+/\-]{16,4096}=*)"), 1, ("bearer",)),
    ("basic_auth", re.compile(r"(?i)\bbasic[^\S\n]{1,8}([A-Za-z0-9+/]{12,2048}={0,2})(?![A-Za-z0-9+/=])"), 1,
     ("basic",)),
    # user:password@ in URLs: only the password part is redacted.
    ("url_password", re.compile(
        r"(?i)(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]{0,30}://[^\s:/@]{0,128}:([^\s@/]{1,256})@"), 1, ("://",)),
]

_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_MAX = 1 << 16
"""A private key longer than this between BEGIN and END is treated as unterminated."""

# -- keyword rules: a lead-in regex ends where the value starts ---------------------------------
_VALUE = re.compile(
    r"\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|`[^`\n]{1,256}`|«[^»\n]{1,256}»"
    r"|(?:[^\s,;]|[,;](?=[^\s,;])){1,256}+"
)
_MARKER = re.compile(r"\[REDACTED:[a-z_]{1,40}\]")
_TRAILING = ".,;:!?)]}>»\"'`"

# name = value / name: value (.env, YAML, JSON, headers, connection strings, query strings)
_ASSIGN = re.compile(r"(?<![\w.\-])[\"']?([^\W\d][\w.\-]{0,79}+)[\"']?[^\S\n]{0,8}(?::=|=>|[:=])[^\S\n]{0,8}")
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_SECRET_PARTS = frozenset({
    "password", "passwd", "pwd", "pw", "pass", "passphrase", "passcode", "secret", "token", "apikey",
    "credential", "credentials", "creds", "dsn", "passwort", "mdp", "contraseña",
})
"""Name parts that make an assignment a secret when the name ends with one (``GITHUB_TOKEN``)."""
_SECRET_SUBSTRINGS = ("password", "passwd", "apikey", "accesskey", "secretkey", "authtoken", "accesstoken",
                      "privatekey", "clientsecret", "refreshtoken", "sessionkey", "signingkey", "masterkey",
                      "accountkey", "webhookurl", "connectionstring", "secret")
"""Substrings that make a name secret wherever they occur (``DBPASSWORD``, ``secret_key_base``)."""
_RU_SECRET = re.compile(r"^(?:парол|токен|ключ|секрет)", re.I)
_SECRETISH = re.compile(r"(?i)pass|pw|secret|token|key|cred|auth|dsn|sig|cookie|sid|pat|mdp|contrase|"
                        r"парол|токен|ключ|секрет|webhook|conn")
"""Cheap first test of an assignment's name (most names are not secret-ish at all)."""

# prose: "my password for the staging box is V", "the password is V", "пароль от сервера — V"
_PW_WORD = r"(?:pass(?:word|phrase|code)|passwd|pwd|парол(?:ь|я|ю|ем|е|и))"
_PROSE_SEP = (  # the lookahead is a cheap first test of the alternatives after it
    r"(?=[^\S\n]{0,4}[:=—–\-iwaэе])[^\S\n]{0,4}(?:[:=—–]|-(?=\s)|\bis\b|\bwas\b|\bare\b|\bэто\b|\bесть\b)"
    r"(?:[^\S\n]{0,2}[:—–](?!\S))?"
    r"(?:[^\S\n]{1,4}(?:still|now|currently|actually|just|always|теперь|сейчас|всё ещё|все еще))?[^\S\n]{0,4}"
)
_PW_FOR = (r"(?:[^\S\n]{1,4}(?:for|to|of|on|at|in|from|от|для|к|на)"
           r"(?:[^\S\n]{1,4}[^\s:=—–.!?\[]{1,30}+){1,6}?)?")
_PW_PROSE = re.compile(r"(?i)(?<![\w-])" + _PW_WORD + r"s?" + _PW_FOR + _PROSE_SEP)
# a weaker link, so the value must look like a password: "changed my password to V", "сменил пароль на V"
_PW_WEAK = re.compile(
    r"(?i)(?<![\w-])" + _PW_WORD + r"s?" + _PW_FOR + r"[^\S\n]{1,4}(?:to|на|теперь|сейчас)[^\S\n]{1,4}"
)
_PIN = re.compile(r"(?i)(?<![\w-])(?:pin(?:[ -]?code)?|пин(?:[ -]?код)?)[^\S\n]{0,4}(?:[:=—–]|\bis\b|\bэто\b)"
                  r"[^\S\n]{0,4}([0-9]{4,8})(?![0-9])")
# no separator: "пароль для NAS V", "the password V", "with password V", "войти с паролем V"
_PW_BARE = re.compile(
    r"(?i)(?<![\w-])" + _PW_WORD + r"(?:[^\S\n]{1,4}(?:от|для|к|на|for)[^\S\n]{1,4}[^\s:=—–]{1,40}+)?[^\S\n]{1,4}"
)
# the value first: "I log in with V as my password", "use V as the password", "V как пароль"
_PW_AS = re.compile(
    r"(?i)(?<!\S)([^\s\"'`]{4,128}+)[^\S\n]{1,4}(?:as|как|в качестве)[^\S\n]{1,4}"
    r"(?:(?:my|the|our|your|his|her|their|a|an|мой|моего|наш|нашего)[^\S\n]{1,4})?(?:[\w-]{1,30}+[^\S\n]{1,4})?"
    + _PW_WORD + r"(?![\w]|[^\S\n]{1,4}(?:manager|vault|store|safe|hint|reset|field|policy|prompt|generator"
    r"|менеджер|хранилищ))"
)
# other secrets in prose: "my aws secret key is V", "the api key: V", "токен — V"
_CRED_PROSE = re.compile(
    r"(?i)(?<![\w-])(?:api[ _\-]?key|apikey|access[ _\-]?key(?:[ _\-]?id)?|secret(?:[ _\-]?(?:access[ _\-]?)?key)?"
    r"|client[ _\-]?secret|auth[ _\-]?token|access[ _\-]?token|refresh[ _\-]?token|token|private[ _\-]?key"
    r"|creds|credentials"
    r"|токен|ключ(?:[^\S\n]{1,4}(?:api|апи|доступа))?|секрет(?:ный ключ)?)" + _PROSE_SEP
)
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?[^\S\n]{0,4}[:=][^\S\n]{0,4}[\"']?"
    r"(?:(?:basic|bearer|token|digest|apikey|api-key|key|sso-key|ssws)[^\S\n]{1,4})?"
)

_STOPWORDS = frozenset({
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "is", "was", "be", "been", "not", "no",
    "none", "null", "nil", "empty", "blank", "missing", "unset", "set", "required", "needed", "wrong",
    "correct", "incorrect", "invalid", "valid", "expired", "changed", "reset", "stored", "saved", "hidden",
    "secret", "same", "different", "weak", "strong", "long", "short", "too", "very", "still", "now", "also",
    "just", "here", "there", "what", "which", "in", "on", "at", "of", "for", "to", "from", "with", "by", "and",
    "or", "but", "if", "when", "then", "so", "than", "as", "into", "my", "your", "our", "his", "her", "their",
    "ok", "okay", "fine", "good", "bad", "fake", "known", "unknown", "optional", "disabled", "enabled", "given",
    "shown", "below", "above", "true", "false", "yes", "example", "sample", "redacted",
    "updated", "rotated", "protected", "encrypted",
})
_RU_STOPWORDS = frozenset({
    "не", "нет", "и", "в", "на", "с", "от", "для", "к", "по", "это", "этот", "эта", "тот", "та", "там", "тут",
    "здесь", "уже", "ещё", "еще", "теперь", "сейчас", "такой", "же", "неверный", "неправильный", "правильный",
    "верный", "старый", "новый", "простой", "сложный", "пустой", "забыл", "забыла", "сменил",
})


def _value_at(text: str, pos: int) -> tuple[int, int, str] | None:
    """The value that starts at ``pos`` (quotes included in the span, trailing punctuation not)."""
    m = _VALUE.match(text, pos)
    if m is None:
        return None
    start, end = m.span()
    raw = m.group(0)
    if raw[0] in "\"'`«" and len(raw) > 2 and raw[-1] in "\"'`»":
        return start, end, raw[1:-1]
    stripped = raw.rstrip(_TRAILING)
    if not stripped:
        return None
    return start, start + len(stripped), stripped


def _is_marker(value: str) -> bool:
    return value.startswith(MARKER_PREFIX) or value.startswith("[REDACTED")


def _plausible(value: str, *, strict: bool) -> bool:
    """Whether a value after a secret-ish key word looks like a credential.

    ``strict`` (prose without an ``=``/``:``) asks for a digit, a symbol or mixed case, so ordinary
    sentences ("the token expired", "пароль для входа в систему") are left alone.
    """
    if len(value) < 4 or _is_marker(value):
        return False
    low = value.casefold()
    if low in _STOPWORDS or low in _RU_STOPWORDS:
        return False
    if not strict:
        return True
    has_other = any(not c.isalpha() for c in value)
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value[1:])  # not just "Bob"
    return len(value) >= 6 and (has_other or mixed)


@functools.lru_cache(maxsize=4096)
def _secret_name(name: str) -> str | None:
    """``"strong"`` if an assignment's name says it holds a secret, ``"key"`` for ``*_key`` names."""
    low = name.casefold()
    if _RU_SECRET.match(low):
        return "strong"
    compact = re.sub(r"[^a-z0-9]", "", low)
    if any(s in compact for s in _SECRET_SUBSTRINGS) and "secretar" not in compact:
        return "strong"
    parts = [p.casefold() for p in _NAME_PARTS.findall(name)]
    if parts and parts[-1] in _SECRET_PARTS:
        return "strong"
    if parts and parts[-1] in ("key", "auth", "pat", "sig", "signature", "cookie", "sid"):
        return "key"
    return None


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/_=\-])[A-Za-z0-9+/_=\-]{32,}")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
_HEX_ONLY = re.compile(r"[0-9a-fA-F\-]+")
_SEGMENT = re.compile(r"[^/]{32,}")


def _looks_random(token: str) -> bool:
    """A long token mixing letters and digits with high per-character entropy.

    Pure hex (git SHAs, UUIDs, content hashes) is excluded: it is everywhere in developer text and
    real hex credentials are rare compared with the noise redacting every hash would cause; hex
    secrets are caught by their key word (``token = 9f8e…``) instead. A token with ``/`` (a path
    looks like that too) must mix all three classes.
    """
    if _HEX_ONLY.fullmatch(token):
        return False
    has_digit = any(c.isdigit() for c in token)
    has_lower = any(c.islower() for c in token)
    has_upper = any(c.isupper() for c in token)
    if not has_digit or not (has_lower or has_upper):
        return False
    if "/" in token:
        return has_lower and has_upper and _entropy(token) >= 4.2
    return has_lower + has_upper + has_digit >= 2 and _entropy(token) >= 4.0


def _looks_random_aws(token: str) -> bool:
    """A 40-character AWS secret access key: base64 with all three classes and a ``/`` or ``+``."""
    classes = (any(c.islower() for c in token) and any(c.isupper() for c in token)
               and any(c.isdigit() for c in token))
    return classes and ("/" in token or "+" in token) and _entropy(token) >= 4.0


# -- scanning -----------------------------------------------------------------------------------

def _formats(text: str) -> Iterator[SecretMatch]:
    low = ""
    for kind, pat, group, needles in _FORMATS:
        hay = text
        if pat.flags & re.IGNORECASE:  # its key word, in any case
            hay = low = low or text.lower()
        if needles and not any(n in hay for n in needles):
            continue
        for m in pat.finditer(text):
            yield SecretMatch(kind, *m.span(group))


def _pem(text: str) -> Iterator[SecretMatch]:
    if "PRIVATE KEY" not in text:
        return
    pos = 0
    while True:
        m = _PEM_BEGIN.search(text, pos)
        if m is None:
            return
        end_m = _PEM_END.search(text, m.end(), m.end() + _PEM_MAX)
        end = end_m.end() if end_m else len(text)  # unterminated: redact to the end
        yield SecretMatch("private_key", m.start(), end)
        pos = end


def _after_lead(text: str, lead: re.Pattern[str], kind: str, accept: Callable[[re.Match[str], str], bool],
                ) -> Iterator[SecretMatch]:
    covered = 0  # a lead inside the value just found would only find a shorter overlapping span
    for m in lead.finditer(text):
        if m.start() < covered:
            continue
        v = _value_at(text, m.end())
        if v is not None and accept(m, v[2]):
            covered = v[1]
            yield SecretMatch(kind, v[0], v[1])


def _assignments(text: str) -> Iterator[SecretMatch]:
    covered = 0
    for m in _ASSIGN.finditer(text):
        if m.start() < covered or not _SECRETISH.search(m.group(1)):
            continue
        strength = _secret_name(m.group(1))
        if strength is None:
            continue
        v = _value_at(text, m.end())
        if v is None:
            continue
        value = v[2]
        pw = bool(re.search(r"(?i)pass|pwd|пароль", m.group(1)))
        if strength == "key":
            ok = not _is_marker(value) and len(value) >= 8 and (
                _looks_random(value) or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)))
        else:
            ok = _plausible(value, strict=False) or (pw and len(value) >= 1 and not _is_marker(value)
                                                     and value.casefold() not in _STOPWORDS)
        if ok:
            covered = v[1]
            yield SecretMatch("password" if pw else "credential", v[0], v[1])


def _prose_sep_is_symbol(m: re.Match[str]) -> bool:
    tail = m.group(0).rstrip()
    return tail.endswith((":", "=", "—", "–", "-"))


def _prose_ok(m: re.Match[str], value: str, *, strict: bool) -> bool:
    """A value after "is"/"are"/"was" that is a plain participle ("hashed", "rotated") is no secret."""
    if value.isalpha() and value.islower() and value.endswith("ed") and not _prose_sep_is_symbol(m):
        return False
    return _plausible(value, strict=strict)


def _passwords(text: str) -> Iterator[SecretMatch]:
    low = text.lower()  # key words are looked for first: most text has none of them
    if any(w in low for w in ("pass", "pwd", "парол")):
        yield from _after_lead(text, _PW_PROSE, "password", lambda m, v: _prose_ok(m, v, strict=False))
        yield from _after_lead(text, _PW_BARE, "password", lambda m, v: _plausible(v, strict=True))
        yield from _after_lead(text, _PW_WEAK, "password", lambda m, v: _plausible(v, strict=True))
        for m in _PW_AS.finditer(text):
            value = m.group(1).rstrip(_TRAILING)
            if _plausible(value, strict=False):
                yield SecretMatch("password", m.start(1), m.start(1) + len(value))
    if "pin" in low or "пин" in low:
        for m in _PIN.finditer(text):
            yield SecretMatch("pin", *m.span(1))
    if any(w in low for w in ("key", "secret", "token", "cred", "токен", "ключ", "секрет")):
        yield from _after_lead(text, _CRED_PROSE, "credential",
                               lambda m, v: _prose_ok(m, v, strict=not _prose_sep_is_symbol(m)))
    if "authorization" in low:
        yield from _after_lead(text, _AUTH_HEADER, "credential", lambda m, v: _plausible(v, strict=False))


def _entropy_tokens(text: str) -> Iterator[SecretMatch]:
    for m in _AWS_SECRET.finditer(text):
        if _looks_random_aws(m.group(0)):
            yield SecretMatch("aws_secret_key", m.start(), m.end())
    for m in _CANDIDATE.finditer(text):
        tok = m.group(0)
        if _looks_random(tok):
            yield SecretMatch("high_entropy", m.start(), m.end())
        elif "/" in tok:  # a path ("a/b/c") is judged by its parts: one random-looking part is caught
            for part in _SEGMENT.finditer(tok):
                if _looks_random(part.group(0)):
                    yield SecretMatch("high_entropy", m.start() + part.start(), m.start() + part.end())


def find_secrets(text: str) -> list[SecretMatch]:
    """Locate secrets in ``text``.

    Args:
        text: Any free text.

    Returns:
        Non-overlapping matches sorted by position. When two detections overlap the longer one
        wins; for the same span a known format beats a key-word rule, which beats the generic
        high-entropy rule.
    """
    if len(text) < 4:
        return []
    # an earlier redaction's marker is never redacted again (idempotence)
    found: list[tuple[int, SecretMatch]] = [
        (-1, SecretMatch("marker", m.start(), m.end())) for m in _MARKER.finditer(text)
    ] if MARKER_PREFIX in text else []
    for rank, gen in enumerate((_pem(text), _formats(text), _assignments(text), _passwords(text),
                                _entropy_tokens(text))):
        found.extend((rank, s) for s in gen if s.end > s.start)
    found.sort(key=lambda r: (r[0] >= 0, -(r[1].end - r[1].start), r[0], r[1].start))
    starts: list[int] = []
    kept: list[SecretMatch] = []
    for _, s in found:
        i = bisect.bisect_right(starts, s.start)
        if i > 0 and kept[i - 1].end > s.start:
            continue
        if i < len(kept) and kept[i].start < s.end:
            continue
        starts.insert(i, s.start)
        kept.insert(i, s)
    return [s for s in kept if s.kind != "marker"]


def has_secrets(text: str) -> bool:
    """Whether :func:`find_secrets` finds anything in ``text``."""
    return bool(find_secrets(text))


def redact(text: str, *, keep_lines: bool = False) -> tuple[str, int]:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``.

    Assignments and prose keep their key word (``password=[REDACTED:password]``,
    ``my password is [REDACTED:password]``) so the text still reads naturally. Idempotent.

    Args:
        text: Any free text.
        keep_lines: Keep the line structure of a redacted span (a PEM block): each further line
            becomes its indentation and ``…``, so line numbers and indented entry continuations of
            the rest of the text stay as they were (used when indexing files by line).

    Returns:
        The redacted text and how many secrets were replaced.
    """
    matches = find_secrets(text)
    if not matches:
        return text, 0
    out: list[str] = []
    pos = 0
    for s in matches:
        out.append(text[pos : s.start])
        out.append(f"{MARKER_PREFIX}{s.kind}]")
        if keep_lines:  # each further line of the span: its indentation and "…" (entries stay whole)
            out.extend("\n" + ln[: len(ln) - len(ln.lstrip())] + "…"
                       for ln in text[s.start : s.end].split("\n")[1:])
        pos = s.end
    out.append(text[pos:])
    return "".join(out), len(matches)


def redact_secrets(text: str) -> str:
    """:func:`redact` without the count."""
    return redact(text)[0]
