"""The one secret redactor: API keys, tokens, private keys and passwords found in free text.

Everything Neotask derives from what the user or the model wrote and keeps outside the transcript
goes through :func:`redact` first: ``MEMORY.md`` and ``memory/`` entries (whatever their source,
``/remember`` and ``neotask memory add`` included), promotion-inbox candidates, session-state
values, and every row of the LanceDB index (archived transcripts and user-written memory files
included). Detection is deliberately eager — a false positive costs a ``[REDACTED:<kind>]`` marker,
a false negative leaks a credential into every future context.

What is found:

- known token formats (the rule lists of gitleaks and detect-secrets): OpenAI, Anthropic, GitHub,
  GitLab, AWS, Slack (tokens and webhooks), Stripe (keys and ``whsec_`` webhook secrets), Twilio, SendGrid,
  Mailgun, Mailchimp, npm, PyPI, Google, Hugging Face, Shopify, DigitalOcean, Heroku, Square, Discord,
  Telegram, Databricks, Vault, Grafana, age, JWTs, PEM/PGP private-key blocks;
- credentials in URLs (``postgres://user:pw@host``), ``Bearer``/``Authorization`` headers;
- assignments whose name says "secret" (``.env`` lines, JSON/YAML keys, connection strings:
  ``DB_PASSWORD=…``, ``"private_key": "…"``, ``AccountKey=…;``, ``security_answer: …``,
  ``totp_seed=…``; an UPPER_SNAKE environment name ending in ``_KEY``, ``_PAT``, ``_PIN``, ``_AUTH``,
  ``_SALT``… — see ``_ENV_SECRET_ENDS``), with the value's continuation (a string split over lines,
  an indented INI/YAML continuation line); the other shapes of config files:
  ``<password>…</password>``, ``define('DB_PASSWORD', '…')``, a Markdown table's password/PIN/token
  column;
- passwords in English and Russian prose ("my password for the box is …", "I log in with … as my
  password", "… is my password", "the pass is …", "пароль от сервера — …", "войти с паролем …",
  "mot de passe: …", "the password's …", "My password? It's …", "пароль такой: …", "пароль — это …",
  "the password, which is …", "the password stays / remains / equals …", "the password I use everywhere
  is …", "… used to be … and now it's …", "hasn't changed, it's still …", "is the same as before: …",
  "the staging password, it is …", "the password for the router is what I use everywhere, it's …",
  "the db password. It's … for sure", "ship v9 with pass …", a hedge or an aside after the cue, skipped and
  kept (``_HEDGE_WORD``: "my password is probably …", "is, I think, …", "my PIN is probably …", "the api token
  is basically …", "пароль точно …", "пароль от сервера скорее всего …"; the value then has a password's shape),
  several values ("the passwords are … and …", "for github: …, for gitlab: …"), a value of symbol-bearing
  pieces one space apart ("P@ss w0rd!! 55");
  an aside after the word is skipped: "password (don't tell anyone): …", "my password, by the way,
  is …", "пароль — вот он — …"; a bracket opening on a plain word is such a remark, never the value:
  "the password (optional)"), also with the separator and/or value on the next line
  ("password:\\n…", "мой пароль\\n— …"; the value alone on its line, also after the cue line's own
  comment prefix: "# password is\\n# …"), multi-word passphrases to
  the end of their clause ("the passphrase is: …", "кодовая фраза: …"; a clause also ends at a
  conjunction: "and", "but", "because", "и", "но", "потому" …, :data:`_CLAUSE_AND`), a new password
  after "I reset it to …" / "поменял его на …" (see ``_SET_TO``;
  also when the message before named the password) or after "I changed the password, now it's …" /
  "пароль поменял, теперь он …", a password after where it is written ("… is on the fridge: …"),
  PINs, door codes and lock combinations
  ("combination is …", "код замка …", "my pin number is …", "the code for the door is …", "My PIN? …",
  spaced digits after a separator: "the PIN is 7 3 1 9"), Wi-Fi
  keys (also a bare "key: …" shortly after the network: "wifi is CafeNet, key: …", or after the
  network and a slash: "wifi: CafeNet / …"), one-time-password seeds ("otp secret JBSW…", read as
  ``otp_seed``), security answers
  (also after a bare "is": "the answer to my security question is …", up to a function word; a
  mother's maiden name: "my mother's maiden name is …", "девичья фамилия матери: …"), code words
  ("code word: …", "кодовое слово для банка: …"), keys and tokens named in prose ("the encryption key:
  …", "the api key for staging: …", "секрет от вебхука — …", "deploy with secret key …", "use token … for
  the api"), card security codes ("CVV 337", "the CVC is …", "код CVV …", read as ``cvv``),
  ``user:password`` pairs (``curl -u``, "creds admin:…", "login: admin / …",
  "login with admin / …"), 2FA backup codes and seed phrases (after "seed phrase", "mnemonic",
  "recovery phrase", "сид-фраза", or a bare "seed:" followed by 12–24 words);
- passwords on command lines: ``--password=…``, ``--db-password …``, ``mysql -p…``,
  ``sshpass -p …``, ``PGPASSWORD=… psql``, ``docker login -p …``, ``htpasswd -b FILE USER …``;
- a prose password wrapped onto the next line ("is Zebra9\\nQuokka1", "hunter2hun-\\nter2") whole;
- long high-entropy tokens (not pure hex: git SHAs, UUIDs and hashes stay readable; nor words
  glued into an identifier, file names with a UUID, ``sha512-`` digests or URL path segments).

Every rule runs on a normalised view: NFKC, zero-width and other default-ignorable characters
removed, combining marks inside a token dropped, decimal digits of any script read as ASCII ones,
confusable hyphens made ``-``, a backslash-continued line joined (``KEY=sk-…\\``), words
mixing Latin, Cyrillic and Greek look-alike letters in their majority script (Latin or Cyrillic), a
known-prefix token wrapped across lines joined, and a password word broken up ("pass\\nword",
"p a s s w o r d", "pass word is", "p@ssw0rd", "пар0ль") read whole; the original span is what gets
replaced. A secret longer than a rule's length cap is redacted whole. Values that are code (calls,
attributes, paths, durations, versions, references) and ``*_key`` names of tables and maps
(``primary_key``, ``cache_key``) are not secrets.

Every pattern is linear in the input: literal prefixes, single character classes and bounded
repeats, no nested quantifiers; keyword rules match the lead-in and the value in two steps so a
rejected value never hides a later secret. Pure module: no app imports.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from neotask_tui.text.remember import REQUEST_PATTERN
from neotask_tui.text.senders import LINE_PREFIX

__all__ = ["API_KEY_MARK", "MARKER_PREFIX", "SecretMatch", "announces_secret", "find_secrets", "fold_letter_forms",
           "has_secrets", "redact", "redact_assigned", "redact_found", "redact_part", "redact_path", "redact_secrets",
           "redact_values", "without_markers"]

MARKER_PREFIX = "[REDACTED:"
"""Every redaction reads ``[REDACTED:<kind>]``."""
API_KEY_MARK = MARKER_PREFIX + "api_key]"
"""What a configured API key reads wherever it would be stored or shown (the providers' key mask,
:func:`~neotask_tui.providers._sdk.without_keys`): a text that holds it held a secret."""


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
    # a webhook signing secret (Stripe's, and Svix's base64 ones: "whsec_…+/…=")
    ("stripe_key", re.compile(_B + r"whsec_[A-Za-z0-9+/]{16,256}={0,2}"), 0, ("whsec_",)),
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

_PEM_BEGIN = re.compile(r"(?i)-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"(?i)-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_MAX = 1 << 16
"""A private key longer than this between BEGIN and END is treated as unterminated."""

# -- keyword rules: a lead-in regex ends where the value starts ---------------------------------
_VALUE = re.compile(
    r"\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|`[^`\n]{1,256}`|«[^»\n]{1,256}»"
    r"|(?:[^\s,;]|[,;](?=[^\s,;])){1,256}+"
)
_MARKER = re.compile(r"\[REDACTED:[a-z_]{1,40}\]")
_TRAILING = ".,;:!?)]}>»\"'`"
"""Punctuation after a value that its checks read it without."""
_BANGS = "!?"
"""Trailing punctuation the mask covers with the value (:func:`_masked_end`): a password often ends
with ``!`` or ``?`` ("Qwerty12345!"), and masking one that was the sentence's gives nothing away,
while leaving one that was the password's gives part of it away (red team 31)."""

# name = value / name: value (.env, YAML, JSON, headers, connection strings, query strings)
_ASSIGN = re.compile(r"(?<![\w.\-])[\"']?([^\W\d][\w.\-]{0,79}+)[\"']?[^\S\n]{0,8}(?::=|=>|[:=])(?!=)[^\S\n]{0,8}")
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_SECRET_PARTS = frozenset({
    "password", "passwd", "pwd", "pw", "pass", "passphrase", "passcode", "secret", "token", "apikey",
    "credential", "credentials", "creds", "dsn", "passwort", "mdp", "contraseña", "sshpass",
})
"""Name parts that make an assignment a secret when the name ends with one (``GITHUB_TOKEN``)."""
_SECRET_SUBSTRINGS = ("password", "passwd", "apikey", "accesskey", "secretkey", "authtoken", "accesstoken",
                      "privatekey", "clientsecret", "refreshtoken", "sessionkey", "signingkey", "masterkey",
                      "accountkey", "webhookurl", "connectionstring", "secret",
                      # a security answer and a one-time-password seed are secrets by their name alone
                      # (a state field ``security_answer: Fluffy``, ``totp_seed``)
                      "securityanswer", "maidenname", "otpseed", "otpkey", "mfaseed", "mfakey", "2faseed", "2fakey")
"""Substrings that make a name secret wherever they occur (``DBPASSWORD``, ``secret_key_base``)."""
_RU_SECRET = re.compile(r"^(?:парол|токен|ключ|секрет)", re.I)
_SECRETISH = re.compile(r"(?i)pass|pw|secret|token|key|cred|auth|dsn|sig|cookie|sid|pat|pin|salt|mdp|contrase|"
                        r"answer|maiden|seed|парол|токен|ключ|секрет|webhook|conn")
"""Cheap first test of an assignment's name (most names are not secret-ish at all)."""

# prose: "my password for the staging box is V", "the password is V", "пароль от сервера — V"
_PW_WORD = (r"(?:pass(?:word|phrase|code)|passwd|pwd|парол(?:ь|я|ю|ем|е|и)|пасс(?![а-яё])|mot[ ]de[ ]passe"
            r"|contrase(?:ñ|n)a|passwort|kennwort|senha|has(?:ł|l)o)")
# a hedge or an intensifier between the cue and the value: "my password is probably V", "the db password is
# for sure V", "the api token is basically V", "my PIN is probably 1234", "пароль точно V", "пароль от сервера
# скорее всего V", "пароль теперь уже V" (red team 41b). It is skipped, never masked: the value after it is
# read (with a password's shape, so "the password is probably wrong", "the token is basically useless",
# "пароль точно неправильный" stay prose)
_S = r"[^\S\n]{1,4}"
_HEDGE_WORD = (r"(?:probably|literally|really|definitely|definately|actually|basically|essentially|just|still|now"
               r"|currently|honestly|apparently|maybe|perhaps|certainly|surely|obviously|clearly|simply|likely"
               r"|most" + _S + r"(?:likely|probably)|presumably|supposedly|technically|officially|seriously|truly"
               r"|again|also|for" + _S + r"sure|of" + _S + r"course|in" + _S + r"fact|right" + _S + r"now"
               r"|i" + _S + r"(?:think|guess|believe|suppose|reckon)|i['’]m" + _S + r"(?:pretty" + _S + r")?sure"
               r"|pretty" + _S + r"sure|iirc|afaik|btw"
               r"|точно|вроде(?:" + _S + r"бы)?|скорее" + _S + r"всего|наверное|наверно|теперь|уже|кажется"
               r"|вероятно|видимо|похоже|по-моему|вс[её]" + _S + r"ещ[её]|сейчас|как" + _S + r"бы|типа|просто"
               r"|конечно|действительно|вообще-то|на" + _S + r"самом" + _S + r"деле|пожалуй|кстати)(?![\w'’-])")
"""A hedge or an intensifier that may stand between a password's cue and its value."""
_HEDGES = r"(?:" + _S + _HEDGE_WORD + r"){1,3}"
# an aside after the separator: "my password is, I think, V", "the password is — I believe — V", "is (I think) V"
_SEP_ASIDE = (r"[^\S\n]{0,2},[^\S\n]{1,4}[^\W\d_][\w'’]{0,23}(?:[^\S\n]{1,3}[^\W\d_][\w'’]{0,23}){0,5}[^\S\n]{0,2},"
              r"|[^\S\n]{1,4}[—–][^\S\n]{1,4}[^\W\d_][\w'’]{0,23}(?:[^\S\n]{1,3}[^\W\d_][\w'’]{0,23}){0,5}"
              r"[^\S\n]{1,4}[—–]"
              r"|[^\S\n]{1,4}\([^\W\d_][\w'’]{0,23}(?:[^\S\n]{1,3}[^\W\d_][\w'’]{0,23}){0,5}\)")
# "the same (as before)" right before a symbol: "my password is the same as before: V" (red team 25)
# ("is still the same as before: V", red team 26)
_SAME = (r"(?:[^\S\n]{1,4}(?:still|just))?"
         r"[^\S\n]{1,4}the[^\S\n]{1,4}same(?:[^\S\n]{1,4}as[^\S\n]{1,4}(?:before|always|ever|usual"
         r"|last[^\S\n]{1,4}time|yesterday))?(?=[^\S\n]{0,2}[:—–])")
_PROSE_SEP = (  # the lookahead is a cheap first test of the alternatives after it
    r"(?=[^\S\n]{0,4}[:=—–\-iwaэе→⇒,sreобпнсuhdвт;])[^\S\n]{0,4}"
    r"(?:->|=>|[→⇒]|[:=—–]|-(?=\s)|\b(?:is|was)\b" + _SAME
    # "is going to be V" before a bare "is", so "going" is not the value (red team 26)
    + r"|(?P<going>\b(?:is|was)[^\S\n]{1,4}going[^\S\n]{1,4}to[^\S\n]{1,4}be\b)"
    # "were" as "are": "The passwords were V and V2" (red team 26)
    r"|\bis\b|\bwas\b|\bare\b|\bwere\b|\bэто\b|\bесть\b"
    # a link that says less, so the value must look like a password ("used to be shorter", "hasn't
    # changed, it's still valid" are prose): "my password used to be V", "the admin password hasn't
    # changed, it's still V" (red team 25)
    r"|(?P<weak>\bused[^\S\n]{1,4}to[^\S\n]{1,4}be\b"
    r"|\b(?:has(?:n['’]t|[^\S\n]{1,4}not)[^\S\n]{1,4}changed|did(?:n['’]t|[^\S\n]{1,4}not)[^\S\n]{1,4}change)"
    # "it's" may be left out before "still": "has not changed; still V" (red team 26)
    r"[^\S\n]{0,2}[,;—–](?:[^\S\n]{1,4}it(?:['’]s|[^\S\n]{1,4}is)\b|(?=[^\S\n]{1,4}still\b))"
    # "Пароль от админки не менялся, всё ещё V"; "Same password as always, V" (red team 26)
    r"|(?<![\w-])не[^\S\n]{1,4}менял(?:ся|ась|ось|ись)[^\S\n]{0,2}[,;—–](?=[^\S\n]{1,4}вс[её][^\S\n]{1,4}ещ[её](?![\w-]))"
    r"|\bas[^\S\n]{1,4}(?:before|always|ever|usual)[^\S\n]{0,2}[,:—–])"
    # "the password, which is / has always been V", "the password stays / will stay / remains (unchanged
    # at) / stays the same: V", "пароль, который (был) V", "пароль остаётся / остался / был /
    # по-прежнему / не меняется: / сохраняется: V"
    r"|,[^\S\n]{1,4}which[^\S\n]{1,4}(?:is|was|has[^\S\n]{1,4}(?:always[^\S\n]{1,4})?been)\b"
    r"|\b(?:stays|remains|equals|will[^\S\n]{1,4}(?:stay|remain|be))\b"
    r"(?:[^\S\n]{1,4}unchanged[^\S\n]{1,4}at\b|" + _SAME + r")?"
    r"|,[^\S\n]{1,4}который(?:[^\S\n]{1,4}был)?(?![\w-])"
    r"|(?<![\w-])(?:оста[её]тся|остался|был|были|по-прежнему|не[^\S\n]{1,4}меняется|сохраняется)(?![\w-])"
    # "Мой пароль всё тот же: V" (red team 26; "были" there too: "Пароли были V и V2")
    r"|(?<![\w-])(?:вс[её][^\S\n]{1,4})?(?:тот|такой)[^\S\n]{1,4}же(?=[^\S\n]{0,2}[:—–]))"
    r"(?:[^\S\n]{0,2}[:—–](?!\S))?(?:[^\S\n]{1,4}(?:это|вот)(?![а-яё]))?"
    r"(?:[^\S\n]{1,4}(?:still|now|currently|actually|just|always|теперь|сейчас|всё ещё|все еще))?"
    # (a dash read as the separator may open the aside the hedge is: "is — I believe — V")
    r"(?P<hedge>" + _HEDGES + r"(?:[^\S\n]{0,2}[,—–](?=[^\S\n]))?|" + _SEP_ASIDE + r")?[^\S\n]{0,4}"
)
# a Russian qualifier in the genitive, one or two words, where English has "of" ("пароль админки",
# "пароль учётной записи", "ПИН-код карты"; red team 31): the endings of a genitive noun or adjective,
# a conjunction or pronoun that ends like one ("или", "его") aside
_RU_GEN_WORD = (r"(?!(?:или|либо|ещё|еще|его|её|ее|их|ей|эти|те|все|они|мои|твои|свои|наши|ваши|тоже|также"
                r"|теперь|сейчас|всегда|иногда|никогда|здесь|тут|там|когда|тогда|куда|почти|очень|нужно|надо"
                r"|можно|просто|только|вроде|типа|да|ну|ли|бы|же)(?![\w-]))"
                r"[а-яё]{1,28}(?:ого|его|ой|ей|ов|ев|ых|их|а|я|ы|и)(?![\w-])")
_RU_OF = r"[^\S\n]{1,4}" + _RU_GEN_WORD + r"(?:[^\S\n]{1,4}" + _RU_GEN_WORD + r")?"
_PW_FOR = (r"(?:[^\S\n]{1,4}(?:for|to|of|on|at|in|from|от|для|к|на)"
           r"(?:[^\S\n]{1,4}[^\s:=—–.!?\[]{1,30}+){1,6}?"
           # the genitive only right before a separator that is a symbol: "пароль админки: V", not
           # "пароль пользователя нужно менять" or "пароль пользователя был изменён"
           r"|" + _RU_OF + r"(?=[^\S\n]{0,4}(?:[:=—–]|-\s)))?")
# a relative clause without "that"/"which", or one past what ``_PW_FOR`` spans: "the password I use
# everywhere is V", "password for the VPN account that Alice set up last Tuesday is V" — plain words
# only, and the value must look like a password ("the password policy that IT set up is strict")
# ("I'll use from now on", a contraction after the pronoun, red team 26)
_PW_REL = (r"(?P<rel>[^\S\n]{1,4}(?:that|which|who|i|we|you|they|he|she)(?:['’](?:ll|d|ve|m|re))?(?![\w'’-])"
           r"(?:[^\S\n]{1,4}[^\W\d_][\w'’-]{0,29}+){1,8}?)?")
# a lead-in that says "here it comes", right before a symbol: "пароль у меня такой: V", "пароль вот
# такой — V", "my password is as follows: V", "the password is the following: V" (red team 32)
_PW_HERE = (r"[^\S\n]{1,4}(?:(?:у[^\S\n]{1,4}(?:меня|нас)[^\S\n]{1,4})?(?:вот[^\S\n]{1,4})?"
            r"(?:такой|такая|следующий|следующая)(?![а-яё])"
            r"|(?:(?:is|are|was|were)[^\S\n]{1,4})?(?:as[^\S\n]{1,4}follows|the[^\S\n]{1,4}following)(?![\w-]))"
            r"(?=[^\S\n]{0,4}(?:[:=—–]|-\s))")
_PW_PROSE = re.compile(r"(?i)(?<![\w-])" + _PW_WORD + r"s?(?P<qual>" + _PW_FOR + r")" + _PW_REL
                       + r"(?:" + _PW_HERE + r"|[^\S\n]{1,4}(?:такой|такая|следующий|вот)(?![а-яё]))?" + _PROSE_SEP)
# a question and its answer: "My password? It's V.", "Пароль? Это V" — the answer word links the value
# as "is" does (a letters-only value, a passphrase to the end of its clause; red team 36); without it
# the value is strict ("Forgot password? Click here", "Пароль? V"); the question may say what the
# password is for: "The password for the VPN? It's V" (red team 37)
_PW_ASK = re.compile(r"(?i)(?<![\w-])" + _PW_WORD + r"s?" + _PW_FOR + r"[^\S\n]{0,2}\?[^\S\n]{1,4}"
                     r"(?:(?P<answer>it['’]s|it[^\S\n]is|that['’]s|это|вот)[^\S\n]{1,4})?")
_PW_STILL = r"(?:still|now|currently|actually|really|again|also)"
# the password asked about, its value in the question: "is the root password still V?", "was my wifi
# password V?", "is the password for the box still V?" (red team 34; a strict value: "is the password
# still valid?", "is the password field required?" are questions about it)
_PW_QUESTION = re.compile(
    r"(?i)(?<![\w-])(?:is|was|isn['’]t|wasn['’]t)[^\S\n]{1,4}"
    r"(?:(?:the|my|our|your|his|her|their|this|that)[^\S\n]{1,4})?(?:[^\W\d_][\w'’-]{0,29}[^\S\n]{1,4}){0,3}?"
    + _PW_WORD + r"s?(?:[^\S\n]{1,4}(?:for|to|of|on|at|in|from)(?:[^\S\n]{1,4}[^\s:=—–.!?\[]{1,30}+){1,6}?"
    r"[^\S\n]{1,4}" + _PW_STILL + r"|(?:[^\S\n]{1,4}" + _PW_STILL + r")?)[^\S\n]{1,4}"
)
# a weaker link, so the value must look like a password: "changed my password to V", "сменил пароль на V"
_PW_WEAK = re.compile(
    r"(?i)(?<![\w-])" + _PW_WORD + r"s?" + _PW_FOR + r"[^\S\n]{1,4}(?:to|на|теперь|сейчас)[^\S\n]{1,4}"
)
# where the password is written, then a symbol and the value: "the wifi password is on the fridge: V",
# "the password is written on the sticky note: V" (red team 37); a strict value that ends its clause
# ("is on the fridge: ask Bob", "is explained here: docs.example.com" are prose)
_PW_WHERE = re.compile(
    r"(?i)(?<![\w-])" + _PW_WORD + r"s?" + _PW_FOR + r"(?:[^\S\n]{1,4}(?:is|was|are)|['’]s)"
    r"(?:[^\S\n]{1,4}(?:written|stuck|taped|printed|posted|pinned|kept|noted))?"
    r"[^\S\n]{1,4}(?:on|in|at|under|behind|inside|by|near)(?:[^\S\n]{1,4}[^\W\d_][\w'’-]{0,23}){1,5}?"
    r"[^\S\n]{0,2}[:—–][^\S\n]{0,4}"
)
# a changed password and then what it is now: "I reset the password; it's now V", "the password
# changed, it's V now", "пароль поменял, теперь он V", "сменил пароль, он теперь V" (red team 37): the
# change and the password word in one clause, a clause break, a link that says "now it is"; a strict
# value ("it's now working", "теперь он длиннее" are prose)
_PW_CHANGE_VERB = (r"(?:changed|reset|updated|rotated|replaced|renewed"
                   r"|(?:по|с|из|за)мен(?:ил|ила|или|ял|яла|яли|ян|яна|ён|ена|ен)|обнов(?:ил|ила|или|лён|лен|лена)"
                   r"|сброс(?:ил|ила|или)|сброшен|сброшена)(?![\w-])")
_PW_CHANGE_QUAL = (r"(?:[^\S\n]{1,4}(?:for|to|of|on|at|from|от|для|к|на)"
                   r"(?:[^\S\n]{1,4}[^\s,;:=—–.!?]{1,30}+){1,4}?)?")
_PW_CHANGED = re.compile(
    r"(?i)(?<![\w-])(?:" + _PW_CHANGE_VERB + r"(?:[^\S\n]{1,4}[^\s,;:=—–.!?]{1,30}+){0,3}?[^\S\n]{1,4}"
    + _PW_WORD + r"s?" + _PW_CHANGE_QUAL
    + r"|" + _PW_WORD + r"s?" + _PW_CHANGE_QUAL
    + r"(?:[^\S\n]{1,4}(?:was|is|got|has|have|had|has[^\S\n]{1,4}been|was[^\S\n]{1,4}just|я|мы|ты|уже))?"
    r"[^\S\n]{1,4}" + _PW_CHANGE_VERB + r")"
    r"(?:[^\S\n]{1,4}(?:yesterday|today|again|just[^\S\n]{1,4}now|вчера|сегодня|снова|опять))?"
    r"(?:[^\S\n]{0,4}(?:[,;.:—–]|-(?=\s))[^\S\n]{0,4}(?:(?:and|so|и|а)[^\S\n]{1,4})?"
    r"|[^\S\n]{1,4}(?:and|so|и|а)[^\S\n]{1,4})"  # "was changed and now it's V" (red team 38)
    r"(?:(?:now[^\S\n]{1,4})?(?:it|the[^\S\n]{1,4}new[^\S\n]{1,4}(?:one|password))(?:['’]s|[^\S\n]{1,4}is)"
    r"(?:" + _HEDGES + r")?"
    r"|(?:теперь|сейчас)(?:[^\S\n]{1,4}(?:он|она|там|это))?|(?:он|она|там|новый)[^\S\n]{1,4}(?:теперь|сейчас))"
    r"(?:[^\S\n]{0,2}[:—–])?[^\S\n]{1,4}"
)
# a password named, then given in the next clause as "it": "do not share the staging password, it is V",
# "I forgot the router password again, it was V", "the wifi password, it's V" (red team 39); a full stop or
# a semicolon for the comma ("the db password. It is V", "the staging password; it's V"), up to two words
# such as "secret" / "again" / "too" before it ("keep the staging password secret, it's V"), a Russian
# "он / она / это (был)" for "it" ("пароль от стейджинга, он V", "пароль от роутера опять забыл, это был V")
# (red team 40). "it" may stand for something else ("the password, it is stored in the vault", "the
# password expired, it was old", "the password manager; it's 1Password"), so only a word from a short list
# may come between the password phrase and the separator, and the value must have a password's shape
# (``_it_value_ok``); after a full stop or a semicolon it must also end its clause (``_it_value_ends``:
# "I need a new password too. It was iPhone12 that died" is prose)
_PW_IT_BETWEEN = (r"(?:again|too|also|though|anyway|then|now|here|there|btw|secret|safe|private|hidden"
                  r"|опять|снова|тоже|также|забыл|забыла|забыли)")
_PW_COMMA_IT = re.compile(
    r"(?i)(?<![\w-])" + _PW_WORD + r"s?" + _PW_CHANGE_QUAL
    + r"(?:[^\S\n]{1,4}" + _PW_IT_BETWEEN + r"(?![\w-])){0,2}[^\S\n]{0,2}(?P<sep>[,;.])[^\S\n]{1,4}"
    r"(?:it(?:['’]s|[^\S\n]{1,4}(?:is|was))(?:" + _HEDGES + r")?"
    r"|(?:он|она|оно|это)(?:[^\S\n]{1,4}(?:был|была|было))?(?:[^\S\n]{1,4}(?:сейчас|теперь|всё ещё|все еще))?)"
    r"(?![\w-])(?:[^\S\n]{0,2}[:—–])?[^\S\n]{1,4}"
)
_PIN_WORD = (r"(?:pin(?:[ -]?(?:code|код|number))?|passcode|пин(?:[ -]?код)?"
             r"|(?:door|gate|alarm|garage|safe|padlock|entry)[ -]code"  # "locker code 4711" is as often its number
             r"|(?:code|combination|key)(?=[^\S\n]{1,4}(?:for|to|of|on)[^\S\n]{1,4}(?:(?:the|my|our|a)[^\S\n]{1,4})?"
             r"(?:door|gate|alarm|garage|lock|safe|locker|padlock|building|entrance)(?![a-z]))"
             r"|(?:lock(?:er)?|safe|padlock|door|gate)[^\S\n]{1,4}combination|combination(?=[^\S\n]{0,4}(?:[:=—–]|is\b))"
             r"|код[^\S\n]{1,4}(?:замка|сейфа|домофона|двери|подъезда|шкафчика)(?![а-яё])"
             r"|комбинаци(?:я|ю)[^\S\n]{1,4}(?:замка|сейфа)(?![а-яё])"
             r"|код(?=[^\S\n]{1,4}(?:от|для|к|на)[^\S\n]|[^\S\n]{0,4}[:=—–]))")
_DIGIT_WORD = (r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine"
               r"|ноль|нуль|один|одна|два|две|три|четыре|пять|шесть|семь|восемь|девять)(?!\w)")
"""A digit spelled out, in English or Russian: a PIN read out ("one three five seven", "семь три один девять")."""
_PIN_RU_CODE = re.compile(r"(?i)пин[ -]?код(?![а-яё])")  # "ПИН-код 7 3 1 9" needs no separator (red team 26)
_PIN = re.compile(
    r"(?i)(?<![\w-])" + _PIN_WORD +
    r"(?:[^\S\n]{1,4}(?:от|для|к|на|for|to|of|on)(?:[^\S\n]{1,4}(?:the|my|our|a))?[^\S\n]{1,4}[^\s:=—–]{1,30}+"
    r"(?:[^\S\n]{1,4}[^\s:=—–,.]{1,30}+){0,2}?|" + _RU_OF + r")?"
    r"[^\S\n]{0,4}(?P<sep>[:=—–]|\bis\b|\bwas\b|\bэто\b|,[^\S\n]{1,4}(?:which|который)[^\S\n]{1,4}(?:is|was|был)?"
    r"|\b(?:stays|remains|оста[её]тся|остался|был)(?![\w-])"
    # a question and its answer, as in ``_PW_ASK``: "My PIN? 1357." (red team 25)
    r"|\?(?:[^\S\n]{1,4}(?:it['’]s|it[^\S\n]is|that['’]s|это|вот)(?![\w-]))?)?"
    # a hedge or an aside before the digits: "my PIN is probably 8264", "the PIN is, I think, 8264" (red team 41b)
    r"(?:" + _HEDGES + r"|" + _SEP_ASIDE + r")?[^\S\n]{0,4}"
    # the digits, also spaced out or spelled out after a separator ("The PIN is 7 3 1 9.", "My PIN is
    # one three five seven.", see ``_passwords``)
    r"(?P<pin>[0-9]{4,8}(?![0-9]|[\-./:,][0-9])|[0-9](?:[ ][0-9]){3,7}(?![ ]?[0-9]|[\-./:,][0-9])"
    # digits in groups: "4-4-1-9", "12-34-56" (red team 38; a date's year has four digits)
    r"|(?<![0-9])[0-9]{1,3}(?:(?P<dash>[-.])[0-9]{1,3})(?:(?P=dash)[0-9]{1,3}){1,6}(?![0-9]|[\-./:,][0-9])"
    r"|" + _DIGIT_WORD + r"(?:(?:,?[ ]|-)" + _DIGIT_WORD + r"){3,7}(?![\w-]|,?[ ]" + _DIGIT_WORD + r"))")
# a payment card's security code (CVV, CVC, CVV2, CVC2): three or four digits right after its name, with
# or without a separator, since the name says what follows: "CVV 337", "the CVV is 337", "CVC: 123",
# "CVV2 337", "код CVV 337", "CVV-код: 337", "the CVV of my card is 337" ("the CVV is 3 digits", "CVV2
# checks" have none)
_CVV = re.compile(
    r"(?i)(?<![\w-])(?:cvv|cvc)2?(?:[ -]?(?:code|код|number|номер))?"
    r"(?:[^\S\n]{1,4}(?:of|for|on|от|для|на)(?:[^\S\n]{1,4}(?:the|my|our|a))?[^\S\n]{1,4}[^\s:=—–]{1,30}+"
    r"|" + _RU_OF + r")?"
    r"[^\S\n]{0,4}(?:(?:[:=—–]|-(?=\s)|\bis\b|\bwas\b|\bэто\b)[^\S\n]{0,4})?"
    r"(?P<cvv>[0-9]{3,4})(?![0-9]|[\-./:,][0-9])"
)
# no separator: "пароль для NAS V", "the password V", "with password V", "войти с паролем V"
# (a hedge may come first: "пароль точно V", "пароль от сервера скорее всего V", "пароль теперь уже V")
_PW_BARE = re.compile(
    r"(?i)(?<![\w-])" + _PW_WORD + r"(?:[^\S\n]{1,4}(?:от|для|к|на|for)[^\S\n]{1,4}[^\s:=—–]{1,40}+)?"
    r"(?:" + _HEDGES + r")?[^\S\n]{1,32}"
)
# short words that are also plain English, so the value must look like a password: "the pass is V",
# "pw V", "user admin pass V" (a bare "pass V" only after a user name)
_PW_SHORT = re.compile(
    r"(?i)(?<![\w-])(?:pass|pw|пасс)" + _PW_FOR + _PROSE_SEP
    # "ship v9 with pass V" (red team 39): a value that has a password's shape (``_bare_pass_ok``; "with
    # pass rate 99%" is prose); the empty group ``with`` tells the caller which lead-in matched
    + r"|(?<![\w-])(?:with|using)[^\S\n]{1,4}pass[^\S\n]{1,4}(?P<with>)"
    + r"|(?<![\w-])pw[^\S\n]{1,8}"
    r"|(?<![\w-])(?:user(?:name)?|login)[^\S\n]{1,4}[^\s:=]{1,64}+[^\S\n]{1,4}pass(?:word)?[^\S\n]{0,4}[:=]?"
    r"[^\S\n]{1,8}"
)
# the value first, linked by "is": "V is my password" (strict: "That is my password" is prose)
_PW_IS = re.compile(
    r"(?i)(?<!\S)([^\s\"'`]{6,128}+)[^\S\n]{1,4}(?:is|was|=|—|это)(?:" + _HEDGES + r")?[^\S\n]{1,4}"
    r"(?:my|the|our|your|his|her|their|мой|наш)[^\S\n]{1,4}(?:[\w-]{1,30}+[^\S\n]{1,4})?"
    + _PW_WORD + r"(?![\w]|[^\S\n]{1,4}(?:manager|vault|store|safe|hint|reset|field|policy|prompt|generator"
    r"|менеджер|хранилищ))"
)
# the separator and/or the value on the next line: "password:\nV", "Password\n: V", "my password is\nV",
# "мой пароль\n— V", "PIN\n1234", "the password stays\nV"; a value with more on its line must have a
# credential's shape (a next sentence does not)
_WRAP_SEP = (r"(?:->|=>|[→⇒:=—–]|-(?=\s)|\b(?:is|was|are|stays|remains|equals|will[^\S\n]{1,4}be|это|есть)\b"
             r"|(?<![\w-])оста[её]тся(?![\w-]))")
_WRAP_NL = r"[^\S\n]{0,4}\r?\n[ \t]{0,16}"
_PW_WRAPPED = re.compile(
    r"(?i)(?<![\w-])(?:" + _PW_WORD + r"s?|(pass|pw|пасс))" + _PW_FOR + r"(?:[^\S\n]{0,4}(" + _WRAP_SEP + r"))?"
    + _WRAP_NL + r"(?:(#{1,3}|//|--|;{1,2}|\*|>{1,3})[^\S\n]{0,4})?(?:(" + _WRAP_SEP + r")[^\S\n]{0,4})?"
)
# a comment prefix on the value's line counts only when the cue's line has the same one: "# the staging
# password is\n# V", "// password:\n// V"
_COMMENT_LEAD = re.compile(r"[ \t]{0,16}(#{1,3}|//|--|;{1,2}|\*|>{1,3})")
_PIN_WRAPPED = re.compile(
    r"(?i)(?<![\w-])" + _PIN_WORD + r"(?:[^\S\n]{1,4}(?:от|для|к|на|for|to|of|on)[^\S\n]{1,4}[^\s:=—–]{1,30}+"
    r"|" + _RU_OF + r")?"
    r"(?:[^\S\n]{0,4}" + _WRAP_SEP + r")?" + _WRAP_NL + r"(?:" + _WRAP_SEP + r"[^\S\n]{0,4})?"
    r"([0-9]{4,8})(?=[^\S\n]{0,4}[.,;!?]?[^\S\n]{0,4}(?:\r?\n|$))"
)
_VALUE_LINE_END = re.compile(r"[.,;!?)\]}>»\"'`]{0,4}[^\S\n]*(?:\r?\n|$)")
# a passphrase: the rest of the clause after "password is" when it reads as words, not as a sentence;
# a word may hold digits after its first letter ("purple monkey dishwasher8"), and a conjunction that
# opens the next clause ends it as a comma does: "… is correct horse battery staple and that is all",
# "пароль — синий кит летит юговосток2 и больше ничего" (red team 37)
_CLAUSE_AND = (r"(?:and|but|or|so|yet|because|since|unless|though|although|while|whereas|until|till|if|when"
               r"|и|а|но|или|потому|поскольку|хотя|если|когда|пока|ведь|зато|однако)(?![\w'\-])")
"""Words that open the next clause after a passphrase, as a comma does: a coordinating or a
subordinating conjunction ("… low9 because I like birds", "… slow4 yet nobody guesses it", red team 38)."""
_CLAUSE_WORD = r"(?!" + _CLAUSE_AND + r")[A-Za-zА-Яа-яЁё][A-Za-zА-Яа-яЁё0-9'\-]{1,23}"
_CLAUSE = re.compile(r"(?i)" + _CLAUSE_WORD + r"(?:[^\S\n]{1,3}" + _CLAUSE_WORD + r"){2,11}"
                     r"(?=[^\S\n]{0,4}(?:[,;.!?)]|$)|[^\S\n]{1,4}" + _CLAUSE_AND + r")", re.M)
# a password named, then given after a comma as "it" with more words between than ``_PW_IT_BETWEEN`` holds:
# "the password for the router is what I use everywhere, it's V", "my password for the nas, the one I always
# forget, it is V" (red team 41). Up to ten words, an aside's commas included; a compound right after the
# password word names something else ("the password policy is strict", "the password field is empty",
# "password reset works", "the password manager"), and a conjunction opens a clause whose "it" is its own
# ("… but the build failed, it's Jenkins2"); the value is read as after the short list (``_it_value_ok``)
_PW_IT_NOT = (r"(?:manager|vault|store|safe|hint|reset|field|policy|prompt|generator|app|tool|hash|hashing|rules?"
              r"|requirements?|length|strength|screen|page|form|dialog|input|change|expiry)")
_PW_FAR_IT = re.compile(
    r"(?i)(?<![\w-])" + _PW_WORD + r"s?(?![\w-])(?![^\S\n]{1,4}" + _PW_IT_NOT + r"(?![\w-]))"
    r"(?:[^\S\n]{0,2},?[^\S\n]{1,4}(?!" + _CLAUSE_AND + r")[^\s,;:=—–.!?()\[\]\"«»]{1,30}+){1,10}?"
    r"[^\S\n]{0,2},[^\S\n]{1,4}it(?:['’]s|[^\S\n]{1,4}(?:is|was))(?:" + _HEDGES + r")?"
    r"(?![\w-])(?:[^\S\n]{0,2}[:—–])?[^\S\n]{1,4}"
)
_FUNCTION_WORDS = frozenset({
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "is", "are", "was", "were", "be", "been",
    "being", "not", "no", "in", "on", "at", "of", "for", "to", "from", "with", "by", "and", "or", "but", "if",
    "when", "then", "so", "than", "as", "into", "my", "your", "our", "his", "her", "their", "i", "you", "we",
    "they", "he", "she", "me", "us", "them", "too", "very", "still", "now", "also", "just", "here", "there",
    "what", "which", "who", "how", "why", "where", "must", "should", "can", "could", "will", "would", "may",
    "might", "shall", "do", "does", "did", "has", "have", "had", "required", "needed", "set", "stored", "saved",
    "hidden", "changed", "reset", "expired", "wrong", "please", "again", "always", "never", "every", "each",
    "all", "any", "some", "same", "different", "like", "about", "after", "before", "over", "under", "only",
    "already", "yet", "more", "less", "much", "many", "long", "short", "strong", "weak", "unknown",
    "known", "available", "ok", "okay", "fine", "good", "bad", "new", "old", "one", "two", "three",
    "case", "sensitive", "because", "since", "until", "while", "via", "per", "etc", "see", "used", "use",
})
_RU_FUNCTION_WORDS = frozenset({
    "а", "но", "или", "либо", "и", "да", "в", "во", "на", "с", "со", "от", "для", "к", "ко", "по", "у", "о", "об",
    "из", "за", "до", "при", "про", "без", "через", "под", "над", "перед", "после", "не", "нет", "ни", "это",
    "этот", "эта", "эти", "тот", "та", "те", "то", "там", "тут", "здесь", "где", "куда", "когда", "если", "что",
    "чтобы", "как", "так", "уже", "ещё", "еще", "теперь", "сейчас", "всегда", "никогда", "иногда", "только",
    "тоже", "также", "очень", "же", "ли", "бы", "я", "ты", "он", "она", "оно", "мы", "вы", "они", "мне", "меня",
    "мой", "моя", "моё", "мое", "мои", "твой", "твоя", "наш", "наша", "ваш", "ваша", "его", "её", "ее", "их",
    "свой", "своя", "был", "была", "было", "были", "будет", "есть", "нужно", "надо", "можно", "нельзя",
    "должен", "должна", "лежит", "хранится", "записан", "записана", "указан", "указана", "задан", "задана",
    "сохранён", "сохранен", "изменён", "изменен", "см", "смотри", "ниже", "выше", "такой", "такая", "любой",
    "каждый", "все", "всё", "весь", "вся", "раз", "год", "день", "минимум", "максимум", "символов", "символа",
})
"""Russian words that make the clause after "пароль:" a sentence about the password (``_passphrase``)."""
_RU_PHRASE_SEP = re.compile(r"[:=—–]|-\s")
# curl -u user:password, --user user:password
_CURL_USER = re.compile(r"(?<!\S)(?:-u|--user)(?:[^\S\n]{1,4}|=)[\"']?[^\s:\"'@]{1,64}:(?=[^\s\"'@])")
# a user/password pair after a credential word: "creds admin:V", "login: admin / V"
_CRED_PAIR = re.compile(
    r"(?i)(?<![\w-])(?:creds|credentials|login|логин|учётка|учетка|account)"
    # what it is for: "the login for the router is admin / V" (red team 34)
    r"(?:[^\S\n]{1,4}(?:for|to|on|at|of|от|для|к|на)(?:[^\S\n]{1,4}[^\s:=—–/@.!?]{1,30}+){1,4}?)?"
    r"(?:[^\S\n]{1,4}(?:with|as|using|под|через))?[^\S\n]{0,4}"
    r"(?:[:=—–]|\bare\b|\bis\b)?[^\S\n]{1,4}[^\s:/@]{1,64}+(:|[^\S\n]{1,4}/[^\S\n]{1,4})"
)
# a token word and the token itself, no separator: "token 9f86d0…" (the value must look like a token)
_TOKEN_BARE = re.compile(r"(?i)(?<![\w-])(?:token|api[ _\-]?key|apikey|secret|access[ _\-]?key|auth[ _\-]?key)"
                         r"[^\S\n]{1,4}")
_TOKENISH = re.compile(r"[A-Za-z0-9_\-+/=.]{20,4096}")
# an instruction to use a token, secret or api key, its value right after the word: "use token V for the
# api", "authenticate with the bot token V", "paste secret V" (red team 41). A short value counts here, but it
# must read as a credential (``_token_use_ok``): "use token auth", "use token v2", "the token count is 4096",
# "use the refresh token flow", "use token base64" are prose
_TOKEN_USE = re.compile(
    r"(?i)(?<![\w-])(?:use|using|with|try|pass|paste|enter|supply|provide)"
    r"(?:[^\S\n]{1,4}(?:the|my|our|your|this|that|a|new))?(?:[^\S\n]{1,4}[^\W\d_][\w-]{0,20}+)?"
    r"[^\S\n]{1,4}(?:token|api[ _\-]?key|apikey|secret)(?![\w-])[^\S\n]{1,4}"
)
_NAME_VERSION = re.compile(r"[a-z]{2,12}[0-9]{1,2}")
"""A lowercase name with a version or size after it (``base64``, ``oauth2``, ``http2``): no credential."""
# 2FA backup codes, seed phrases
_BACKUP_LEAD = re.compile(
    r"(?i)(?<![\w-])(?:(?:backup|recovery|2fa|mfa|otp|one[- ]time|emergency|scratch)"
    r"(?:[^\S\n]{1,4}(?:backup|recovery|login))?[^\S\n]{1,4}codes?|резервн\w{0,3}[^\S\n]{1,4}коды?"
    r"|коды?[^\S\n]{1,4}восстановления)[^\S\n]{0,4}(?:[:=—–]|\bare\b|\bэто\b)?"
)
_BACKUP_CODE = re.compile(r"\s{0,4}(?:[,;][^\S\n]{0,4})?([A-Za-z0-9]{4,12}(?:-[A-Za-z0-9]{3,12})?)(?![\w-])")
_SEED = re.compile(
    r"(?i)(?<![\w-])(?:(?:seed|recovery|mnemonic|secret|backup|wallet)[^\S\n]{1,4}(?:phrase|words)"
    r"|mnemonic(?:[^\S\n]{1,4}phrase)?|мнемоник[аиуе]|(?:сид|seed)[- ]?фраз[аеуы]"
    r"|мнемоническ\w{0,4}[^\S\n]{1,4}фраз[аеуы]"
    r"|фраз[аеуы][^\S\n]{1,4}восстановления)"
    r"[^\S\n]{0,4}(?:[:=—–-]|\bis\b|\bare\b|\bэто\b)?\s{0,4}"
    r"([a-z]{3,8}(?:\s{1,4}[a-z]{3,8}){11,23})(?![a-z])"
)
# a bare "seed" (a random seed is a number, a seed phrase is words): "seed: w1 … w12", "my wallet seed
# is w1 … w24" — only a run of exactly 12, 15, 18, 21 or 24 short lowercase words (the BIP-39 lengths)
# that ends its clause, since no BIP-39 wordlist is installed to check the words themselves
_SEED_BARE = re.compile(
    r"(?i)(?<![\w-])(?:seed|сид)(?![\w-])[^\S\n]{0,4}(?:[:=—–]|-(?=\s)|\bis\b|\bэто\b)[^\S\n]{0,2}[:—–]?\s{0,4}"
    r"([a-z]{3,8}(?:\s{1,4}[a-z]{3,8}){11,23})(?![\w'\-])"
)
_SEED_END = re.compile(r"[^\S\n]{0,4}(?:[.,;!?)\]\"'`]|\r?\n|$)")
# the value first: "I log in with V as my password", "use V as the password", "V как пароль"
_PW_AS = re.compile(
    r"(?i)(?<!\S)([^\s\"'`]{4,128}+)[^\S\n]{1,4}(?:as|как|в качестве)[^\S\n]{1,4}"
    r"(?:(?:my|the|our|your|his|her|their|a|an|мой|моего|наш|нашего)[^\S\n]{1,4})?(?:[\w-]{1,30}+[^\S\n]{1,4})?"
    + _PW_WORD + r"(?![\w]|[^\S\n]{1,4}(?:manager|vault|store|safe|hint|reset|field|policy|prompt|generator"
    r"|менеджер|хранилищ))"
)
# other secrets in prose: "my aws secret key is V", "the api key: V", "токен — V", "the encryption key: V",
# also with what it is for: "the api key for staging: V", "секрет от вебхука — V", "токен бота: V" (red team 39),
# where the value must look like one even after a symbol ("the secret to success: Practice" is prose)
_KEY_KINDS = (r"encryption|decryption|signing|master|hmac|session|shared|recovery|license|licence|product|deploy"
              r"|webhook|ssh|gpg|pgp|root|admin")
"""What a key word names a secret key of in prose ("the encryption key", "the signing key")."""
_CRED_PROSE = re.compile(
    r"(?i)(?<![\w-])(?:api[ _\-]?key|apikey|access[ _\-]?key(?:[ _\-]?id)?|secret(?:[ _\-]?(?:access[ _\-]?)?key)?"
    r"|client[ _\-]?secret|auth[ _\-]?token|access[ _\-]?token|refresh[ _\-]?token|token|private[ _\-]?key"
    r"|(?:" + _KEY_KINDS + r")[ _\-]?key|(?:webhook|signing)[ _\-]?secret"
    r"|creds|credentials|(?:wi-?fi|wlan|wpa2?|wpa3|network|router)[ _\-]?(?:key|psk)"
    r"|ключ[^\S\n]{1,4}от[^\S\n]{1,4}(?:wi-?fi|вай-?фая?|сети|роутера)"
    r"|мастер-?ключ|ключ[^\S\n]{1,4}(?:шифрования|подписи)"
    r"|токен|ключ(?:[^\S\n]{1,4}(?:api|апи|доступа))?|секрет(?:ный ключ)?)(?P<qual>" + _PW_FOR + r")" + _PROSE_SEP
)
# a key word and a short value right after it, no separator: "deploy with secret key V", "use the api key V
# for prod" (red team 39); the value must have letters and digits (``_bare_key_ok``: "the secret key rotation",
# "the api key OPENAI_API_KEY", "the ssh key id_ed25519" are prose); a long token after any of them, or
# after a bare "token"/"secret", is a ``_TOKEN_BARE``
_KEY_BARE = re.compile(
    r"(?i)(?<![\w-])(?:(?:secret|api|access|auth|private|" + _KEY_KINDS + r")[ _\-]?key"
    r"|секретн(?:ый|ого|ым)[^\S\n]{1,4}ключ(?:ом|а)?|ключ(?:ом|а)?[^\S\n]{1,4}(?:api|апи|шифрования|подписи))"
    r"[^\S\n]{1,4}"
)
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?[^\S\n]{0,4}[:=][^\S\n]{0,4}[\"']?"
    r"(?:(?:basic|bearer|token|digest|apikey|api-key|key|sso-key|ssws)[^\S\n]{1,4})?"
)

# "the password's V": the possessive read as "password is" (a strict value: "the password's length")
_PW_POSS = re.compile(r"(?i)(?<![\w-])" + _PW_WORD + r"['’]s(?:" + _HEDGES + r")?[^\S\n]{1,4}")
_MEASURE = re.compile(r"(?i)[0-9]{1,4}(?:st|nd|rd|th|x|%)?(?:[ -]?(?:chars?|characters?|digits?|letters?|symbols?"
                      r"|words?|bytes?|bits?|days?|hours?|minutes?|attempts?|tries|times))?")
_HASH_NAME = re.compile(r"(?i)(?:sha|md|aes|rsa|utf|crc|des|ecdsa|ed|pbkdf|scrypt|argon|bcrypt)[0-9\-_]{0,8}\w{0,4}"
                        # a signature algorithm: "the signing key ES256K" (red team 39)
                        r"|[hrpe]s(?:256|384|512)k?|secp(?:256|384|521)[kr]1")
# the answer to a security question, named in English or Russian: "my security answer", "the answer to
# my security question", "security question answer", "memorable word", "ответ на секретный вопрос",
# "mother's maiden name", "девичья фамилия матери"
_ANSWER_WORD = (
    r"(?:(?:security|secret|recovery|control)[ -]answer"
    r"|(?:security|secret|recovery)[ -]question(?:['’]s)?[ -]answer"
    r"|answer[^\S\n]{1,4}(?:to|for|of)[^\S\n]{1,4}(?:(?:my|the|your|our|a|this)[^\S\n]{1,4})?"
    r"(?:security|secret|recovery|control)[^\S\n]{1,4}question"
    r"|memorable[ -](?:word|answer|phrase|name)"
    # the classic security question's answer: "my mother's maiden name is V", "девичья фамилия матери: V"
    r"|(?:(?:mother|mom|mum)['’]?s[^\S\n]{1,4})?maiden[^\S\n]{1,4}name"
    r"|девичь\w{0,2}[^\S\n]{1,4}фамили\w{1,2}(?:[^\S\n]{1,4}(?:матери|мамы))?"
    r"|(?:ответ|отв)\w{0,2}[^\S\n]{1,4}на[^\S\n]{1,4}(?:(?:мой|свой|твой|наш|этот)[^\S\n]{1,4})?"
    r"(?:секретн|контрольн|проверочн)\w{0,3}[^\S\n]{1,4}вопрос\w{0,2}"
    r"(?:[^\S\n]{1,4}(?!(?:это|не|был|была|будет|такой|такая|вот)(?![а-яё]))[а-яё]{2,20}(?![а-яё-]))?"  # "вопрос банка"
    r"|(?:секретн|контрольн)\w{0,3}[^\S\n]{1,4}ответ\w{0,2})"
)
# a passphrase or a code word after a symbol separator ("the passphrase is: hunter two", "кодовая фраза:
# синий кот", "code word: V", "кодовое слово для банка: V"):
# the rest of the clause, to the end of its sentence or line, function words and all — unlike after a
# bare "is", where a sentence about the passphrase ("is stored in the vault") has to be told apart
_PHRASE_LEAD = re.compile(
    r"(?i)(?<![\w-])(?:pass[ -]?phrase|(?:secret|security|code|safe|magic)[ -](?:phrase|words?)"
    r"|(?:кодов|парольн|секретн)\w{0,3}[^\S\n]{1,4}(?:фраз[аеуы]|слов[оа])|фраз[аеуы][- ]пароль"
    r"|" + _ANSWER_WORD + r")s?" + _PW_FOR
    + r"[^\S\n]{0,4}(?:(?:is|was|это)[^\S\n]{0,2})?(?:[:=—–]|-(?=\s))[^\S\n]{0,4}"
)
_PHRASE_REST = re.compile(
    r"(?:[^\n.!?;,]|[.!?](?![^\S\n]|$)|,(?![^\S\n]{1,4}(?:and|but|or|then|so|the|my|user|username|login"
    r"|и|а|но|логин|потом)\b)){1,256}"
)
_PHRASE_EMPTY = frozenset({"not", "no", "none", "set", "yet", "required", "needed", "empty", "blank", "unset",
                           "given", "shown", "here", "below", "above", "see", "vault", "не", "нет", "задана",
                           "задан", "нужна", "пусто", "пустая", "см", "ниже", "выше"})
# a security answer after a bare link ("my security answer is Fluffy", "the answer to my security
# question was Fluffy", "ответ на контрольный вопрос это Пушистик"): an answer is a plain word or name,
# so the value is the run of words after the link up to the first function word or the clause's end, and
# a sentence about the answer ("is stored in the vault", "is case sensitive", "is the name of my first
# pet", "не задан") leaves nothing to redact
_ANSWER_IS = re.compile(
    r"(?i)(?<![\w-])" + _ANSWER_WORD + r"s?" + _PW_FOR + r"[^\S\n]{1,4}(?:is|was|это|будет)(?![\w-])"
    r"(?:[^\S\n]{1,4}(?:still|now|just|теперь|всё ещё|все еще))?[^\S\n]{1,4}(?=[^\W_])"
)
_ANSWER_TOKEN = re.compile(r"[^\W_][\w'’\-]{0,39}(?![\w'’\-])")
_ANSWER_GAP = re.compile(r"[^\S\n]{1,3}")
_ANSWER_END = re.compile(r"[^\S\n]{0,4}(?:[,;.!?)\]\"'`»]|\r?\n|$)")
_ANSWER_MAX_WORDS = 4
_ANSWER_PROSE = frozenset({
    "important", "private", "personal", "confidential", "unique", "simple", "easy", "hard", "obvious",
    "mandatory", "insensitive", "lowercase", "uppercase", "forgotten", "lost", "gone", "outdated", "something",
    "nothing", "anything", "somewhere", "useless", "mine", "yours", "secure", "insecure", "public",
    "важен", "важно", "секрет", "задан", "задана", "указан", "записан", "сохранён", "сохранен", "утерян",
    "забыт", "забыл", "забыла", "простой", "сложный", "личный", "мой", "твой", "свой",
})
"""Words that make the run after "security answer is" a remark about the answer, not the answer."""
# a Wi-Fi key named only "key" ("psk", "ключ") after the network: "wifi is CafeNet, key: V", "SSID
# CafeNet / key V", "вайфай CafeNet, ключ V". The bare word is a cue only shortly after a word naming
# a wireless network in the same paragraph; the value must look like a key ("key point is clarity",
# "the key is to stay calm" are prose anywhere)
_NET_WORD = re.compile(
    r"(?i)(?<![\w-])(?:wi-?fi|wlan|wpa[23]?|ssid|hotspot|router|network|вай-?фа(?:й|я|ю|е)?|роутер\w{0,2}"
    r"|сет(?:ь|и)|точк(?:а|и|у)[^\S\n]{1,4}доступа)(?![\w-])"
)
_NET_KEY = re.compile(r"(?i)(?<![\w-])(?:(?:pass|network|security)[ -]?key|key|psk|ключ(?:ом)?)"
                      r"(?:" + _PROSE_SEP + r"|[^\S\n]{1,4})")
# a Wi-Fi key after the network's name and a slash, as a login and its password are written:
# "wifi: CafeNet / V", "SSID HomeNet / V"; V must have letters and digits, and not be a band
# ("5GHz / 2.4GHz") or a security mode ("WPA2-PSK")
_NET_SLASH = re.compile(
    r"(?i)(?<![\w-])(?:wi-?fi|wlan|ssid|hotspot|вай-?фа(?:й|я|ю|е)?)(?:[^\S\n]{1,4}is)?"
    r"(?:[^\S\n]{0,4}[:=—–][^\S\n]{0,4}|[^\S\n]{1,4})[\"'`«]?[^\s/\"'`«»]{1,64}[\"'`»]?[^\S\n]{1,4}/[^\S\n]{1,4}"
)
_NET_NOT_KEY = re.compile(r"(?i)[0-9.,]+[^\S\n]?[a-z]{1,4}|(?:wpa|wep|wps|aes|tkip|psk|sae|802\.).*")
# a one-time-password seed (base32, as an authenticator app shows it, maybe in groups of four) after
# "otp/totp/2fa/mfa secret|seed|key": "otp secret JBSWY3DPEHPK3PXP", "2fa key: jbsw y3dp ehpk 3pxp"
_OTP_SEED = re.compile(
    r"(?i)(?<![\w-])(?:t?otp|2fa|mfa|two[ -]factor|authenticator)[ _\-]?(?:secret|seed|key)s?"
    r"(?:[^\S\n]{1,4}(?:is|was|это)(?![\w-]))?(?:[^\S\n]{0,4}[:=—–][^\S\n]{0,4}|[^\S\n]{1,4})[\"'`]?"
    r"(?-i:([A-Z2-7]{4,64}(?:[ ][A-Z2-7]{4,8}){0,15}|[a-z2-7]{4,64}(?:[ ][a-z2-7]{4,8}){0,15}))(?![\w-])"
)


def _otp_seeds(text: str) -> Iterator[SecretMatch]:
    for m in _OTP_SEED.finditer(text):
        v = m.group(1)
        n = len(v.replace(" ", ""))
        if n >= 16 and (any(c in "234567" for c in v) or (v.isupper() and " " not in v)):
            yield SecretMatch("otp_seed", *m.span(1))


def _net_key_ok(value: str) -> bool:
    return (_plausible(value, strict=True) and _DIGIT.search(value) is not None and _ALPHA.search(value) is not None
            and _NET_NOT_KEY.fullmatch(value) is None)


# "I reset it to V", "changed the new one to V", "поменял его на V": a value after a set/change verb and
# "to"/"на" is a secret only (a) when the verb's object stands for the password (a pronoun, "the new
# one", a password/PIN/code/key word), a password, passphrase or PIN word is near (the sentence before
# or the same one: "My gmail password leaked. I reset it to V") and V reads as a password, or (b) when
# V is random-looking on its own: mixed case and digits changing every character or two, no word
# inside it, no path or dotted name. Without (a) or (b) this shape is ordinary ("set the timeout to
# 30s", "reset HEAD to origin/main", "changed the theme to Dark", "switched to useState2", "changed the
# sender to bob@example.com" after a word about passwords), so no single test is enough.
_SET_TO = re.compile(
    r"(?i)(?<![\w-])(?:(?:re)?set(?:ting)?|chang(?:e|ed|ing)|updat(?:e|ed|ing)|rotat(?:e|ed|ing)|switch(?:ed|ing)?"
    r"|(?:с|по|из)мен(?:ил|ила|или|ить|ял|яла|яли|ять)|постави(?:л|ла|ли|ть)|установи(?:л|ла|ли|ть)|сброси(?:л|ла|ли|ть))"
    r"((?:[^\S\n]{1,4}[^\s.!?:;=]{1,30}+){0,6}?)[^\S\n]{1,4}(?:to|на)[^\S\n]{1,4}"
)
_SET_OBJECT = frozenset({
    "it", "this", "that", "mine", "them", "one", "ones", "his", "hers", "theirs", "the", "my", "our", "your",
    "her", "their", "a", "new", "old", "back", "again", "i", "we", "pin", "code", "key", "login", "password",
    "passwords", "passphrase", "passcode", "его", "её", "ее", "это", "их", "свой", "мой", "наш", "новый", "я",
    "обратно", "снова", "пароль", "пин", "код", "ключ",
})
"""Words the object of "I reset … to V" may be made of when V is a password by context alone."""
_PW_NEAR = re.compile(r"(?i)" + _PW_WORD)
_PIN_NEAR = re.compile(r"(?i)(?<![a-zа-яё])(?:pin|пин|pin-?код|пин-?код|passcode)(?![a-zа-яё])")
_NEAR_BEFORE, _NEAR_AFTER = 160, 60
_SYMBOLS = frozenset("!@#$%^&*+=?~")
# command lines: --password=V, --password V, mysql -pV, sshpass -p V (openssl's "pass:V" is a _PW_SHORT)
_CLI_PW = re.compile(r"(?i)(?<![\w-])--(?!no-)(?:[a-z0-9]{1,20}-){0,3}(?:password|passwd|pass|passphrase|pwd)"
                     r"(=|[^\S\n]{1,4})")
_NEXT_OPTION = re.compile(r"[^\S\n]{1,4}-")
_MYSQL_CMD = re.compile(r"(?<![\w./-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlsh"
                        r"|mariadb(?:-dump|-admin)?)(?![\w-])[^\n|;&]{0,512}")
_MYSQL_P = re.compile(r"(?<!\S)-p(?=[^\s\-])")
_SSHPASS = re.compile(r"(?<![\w-])sshpass(?:[^\S\n]{1,4}-v)*[^\S\n]{1,4}-p[^\S\n]{0,4}(?=[^\s\-])")
# registry logins ("docker login -u bob -p V") and htpasswd's batch mode ("htpasswd -b FILE USER V",
# "htpasswd -nb USER V": the password is the last argument)
_LOGIN_CMD = re.compile(r"(?<![\w./-])(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[^\S\n]{1,4}registry)"
                        r"[^\S\n]{1,4}login(?![\w-])[^\n|;&]{0,512}")
_LOGIN_P = re.compile(r"(?<!\S)(?:-p|--password)(?:[^\S\n]{1,4}|=)(?=[^\s\-])")
_HTPASSWD = re.compile(r"(?<![\w./-])htpasswd((?:[^\S\n]{1,4}-[a-zA-Z]{1,8})+)[^\S\n]{1,4}")
_ARG = re.compile(r"(?:\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s|;&]{1,256})(?:[^\S\n]{1,4}|(?=[\s|;&]|$))")
_OPTION_WORDS = frozenset({"flag", "option", "argument", "arg", "switch", "parameter", "param", "prompt",
                           "флаг", "опция", "опцию", "ключ", "параметр", "аргумент"})

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
    # how a password is, not what it is: "the password is hard to remember", "… is easy to guess"
    "hard", "easy", "simple", "complex", "complicated", "obvious", "random", "unique", "temporary", "new", "old",
    "secure", "insecure", "safe", "unsafe", "broken", "locked", "lost", "forgotten", "written", "somewhere",
    "case-sensitive", "sensitive", "similar", "impossible", "difficult", "annoying", "terrible", "awful",
    "read-only", "write-only", "read-write",  # "the deploy key is read-only" (red team 39)
})
_RU_STOPWORDS = frozenset({
    "не", "нет", "и", "в", "на", "с", "от", "для", "к", "по", "это", "этот", "эта", "тот", "та", "там", "тут",
    "здесь", "уже", "ещё", "еще", "теперь", "сейчас", "такой", "же", "неверный", "неправильный", "правильный",
    "верный", "старый", "новый", "простой", "сложный", "пустой", "забыл", "забыла", "сменил",
    "был", "была", "было", "были",  # "пароль от роутера забыл, это было глупо" (red team 40)
})


def _masked_end(raw: str) -> int:
    """How much of ``raw`` (a value and the punctuation after it, up to a space) the mask covers: all
    but its final run of sentence or bracket punctuation (``.``, ``,``, ``)``, a quote…), so a ``!`` or
    ``?`` (:data:`_BANGS`) before that run, or at the end, is masked with the value ("Qwerty12345!",
    "Qwerty12345!!", "Qwerty12345!)"), and a final period stays ("… is Qwerty12345.")."""
    kept = raw.rstrip(_TRAILING.translate(str.maketrans("", "", _BANGS)))
    return len(kept) if kept.rstrip(_TRAILING) else 0


_REMARK = re.compile(r"[(\[][^\W\d_]{1,40}")
"""A value that opens a bracket with a plain word: a remark on the word before ("the password
(optional)", "password: (see below)", "пароль (необязательно)"), not a value."""


def _value_at(text: str, pos: int) -> tuple[int, int, str] | None:
    """The value that starts at ``pos``: its span (quotes included, a trailing ``!``/``?`` too, see
    :func:`_masked_end`) and the value as its checks read it (no quotes, no trailing punctuation);
    ``None`` for a bracketed remark (``_REMARK``)."""
    m = _VALUE.match(text, pos)
    if m is None:
        return None
    start, end = m.span()
    raw = m.group(0)
    if raw[0] in "\"'`«" and len(raw) > 2 and raw[-1] in "\"'`»":
        return start, end, raw[1:-1]
    stripped = raw.rstrip(_TRAILING)
    if not stripped or _REMARK.fullmatch(stripped):
        return None
    return start, start + _masked_end(raw), stripped


_CODE_VALUE = re.compile(
    r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[(\[][^\n]{0,256}"  # a call or subscript: os.getcwd(
    r"|[A-Za-z_$][\w$]*(?:\(|[(\[][\"'][^\n]{0,256})"  # get_password(, env["X"]
    r"|(?:self|this|cls|os|process|env|config|settings|args|options)\.[\w.]+"  # an attribute
    r"|(?:/|~/|\./|\.\./)[A-Za-z_][\w.\-]*(?:/[\w.\-]+)*/?"  # a path
    r"|[0-9]{1,9}(?:\.[0-9]+)?(?:ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?)"
    r"|v?[0-9]{1,4}(?:\.[0-9]{1,4}){1,3}(?:[-+][\w.]{1,20})?"  # a version
    r"|\$\{?[A-Z_][A-Z0-9_]*\}?|%\(\w+\)s|\{\{[^{}]{1,60}\}\}|<[\w\- ]{1,40}>"  # a reference/placeholder
)
_CODE_WORDS = frozenset({"lambda", "function", "await", "async", "new", "none", "null", "nil", "undefined",
                         "true", "false", "self", "this", "input", "getpass", "prompt", "def", "return"})


def _is_code(value: str) -> bool:
    """A value that is an expression, a path, a duration or a version, not a literal credential."""
    return value.casefold() in _CODE_WORDS or bool(_CODE_VALUE.fullmatch(value))


def _is_marker(value: str) -> bool:
    return value.startswith(MARKER_PREFIX) or value.startswith("[REDACTED")


_CONTRACTION = re.compile(r"(?i)[a-z]{1,12}['’](?:t|s|re|ve|ll|d|m)")


def _plausible(value: str, *, strict: bool) -> bool:
    """Whether a value after a secret-ish key word looks like a credential.

    ``strict`` (prose without an ``=``/``:``) asks for a digit, a symbol or mixed case, so ordinary
    sentences ("the token expired", "пароль для входа в систему") are left alone.
    """
    if len(value) < 4 or _is_marker(value) or _is_code(value):
        return False
    low = value.casefold()
    if low in _STOPWORDS or low in _RU_STOPWORDS:
        return False
    if not strict:
        return True
    if _CONTRACTION.fullmatch(value):  # "the admin password hasn't changed" (red team 25)
        return False
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
    if (len(parts) >= 2 and parts[-1] in _ENV_SECRET_ENDS and name.isupper() and parts[-2] not in _PLAIN_KEY_PREFIXES
            and parts[-2] not in _PUBLIC_KEY_PREFIXES):
        return "env"  # an environment variable: ENCRYPTION_KEY, GITHUB_PAT, BASIC_AUTH, ADMIN_PIN
    if parts and parts[-1] in ("key", "auth", "pat", "sig", "signature", "cookie", "sid"):
        if parts[-1] == "key" and len(parts) >= 2 and parts[-2] in _PLAIN_KEY_PREFIXES:
            return None  # primary_key, sort_key, cache_key: a key of a table or a map, no secret
        return "key"
    return None


_ENV_SECRET_ENDS = frozenset({"key", "pat", "pin", "auth", "sig", "signature", "cookie", "sid", "salt"})
"""Last parts of an UPPER_SNAKE environment name that hold a secret (``HMAC_KEY``, ``APP_KEY``,
``GITHUB_PAT``, ``ADMIN_PIN``, ``BASIC_AUTH``); ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ``*_PASS``,
``*_PWD``, ``*_CREDENTIALS`` are secret in any spelling (``_SECRET_PARTS``). ``KEY_ID``, ``KEY_PATH``,
``AUTH_URL``, ``PIN_LENGTH`` end in another part and stay readable, as do ``PUBLIC_KEY`` and
``PUBLISHABLE_KEY`` and table keys (``SORT_KEY``)."""
_PUBLIC_KEY_PREFIXES = frozenset({"public", "publishable", "pub", "site", "recaptcha"})

_PLAIN_KEY_PREFIXES = frozenset({
    "primary", "sort", "foreign", "cache", "partition", "unique", "composite", "index", "lookup", "dict", "map",
    "hash", "row", "range", "shard", "routing", "group", "order", "join", "dedup", "dedupe", "idempotency",
    "cluster", "clustering", "surrogate", "natural", "candidate", "alternate", "compound", "secondary",
    "object", "item", "entry", "record", "table", "column", "field", "attr", "attribute", "property", "prop",
    "list", "sequence", "translation", "i18n", "message", "msg", "label", "option", "param", "event",
    "metric", "counter", "query", "search", "filter", "shortcut", "hotkey", "keyboard", "music", "piano",
})


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/_=\-])[A-Za-z0-9+/_=\-]{32,}")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
_HEX_ONLY = re.compile(r"[0-9a-fA-F\-]+")
_SEGMENT = re.compile(r"[^/]{32,}")


_WORD_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWELS = frozenset("aeiouyAEIOUY")
_CHUNK = re.compile(r"[^\-_.]+")
_INTEGRITY = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)|md5|blake2b?|sha3)[-:_]")


def _wordlike(token: str) -> bool:
    """An identifier made of words (``AbstractSingletonProxyFactoryBean2Impl``), not random text.

    Most of its letters sit in parts of four or more letters that have a vowel: random base62 is
    broken into one- to three-letter parts by its case changes and digits.
    """
    parts = _WORD_PART.findall(token)
    letters = sum(len(p) for p in parts if p.isalpha())
    digits = sum(len(p) for p in parts if p.isdigit())
    if letters == 0 or digits > 4:
        return False
    wordy = sum(len(p) for p in parts if p.isalpha() and len(p) >= 4 and any(c in _VOWELS for c in p))
    return wordy >= 0.75 * letters


def _structured(token: str) -> bool:
    """Dash/underscore/dot-separated chunks that are each hex, digits or a lowercase word: a file
    name with a UUID in it (``part-00000-4f3c2b1a-7d6e-….parquet``), not a credential."""
    chunks = _CHUNK.findall(token)
    if len(chunks) < 3:
        return False
    return all(_HEX_ONLY.fullmatch(c) or c.isdigit() or (c.isalpha() and c.islower()) for c in chunks)


def _looks_random(token: str) -> bool:
    """A long token mixing letters and digits with high per-character entropy.

    Pure hex (git SHAs, UUIDs, content hashes) is excluded: it is everywhere in developer text and
    real hex credentials are rare compared with the noise redacting every hash would cause; hex
    secrets are caught by their key word (``token = 9f8e…``) instead. A token with ``/`` (a path
    looks like that too) must mix all three classes.
    """
    if _HEX_ONLY.fullmatch(token):
        return False
    if token.isascii():
        has_digit = _DIGIT.search(token) is not None
        has_lower = _LOWER.search(token) is not None
        has_upper = _UPPER.search(token) is not None
    else:
        has_digit = any(c.isdigit() for c in token)
        has_lower = any(c.islower() for c in token)
        has_upper = any(c.isupper() for c in token)
    if not has_digit or not (has_lower or has_upper):
        return False
    if "/" in token:
        ok = has_lower and has_upper and _entropy(token) >= 4.2
    else:
        ok = has_lower + has_upper + has_digit >= 2 and _entropy(token) >= 4.0
    return ok and not (_INTEGRITY.match(token) or _wordlike(token) or _structured(token))


_DIGIT = re.compile(r"\d")
_LOWER = re.compile(r"[a-z]")
_UPPER = re.compile(r"[A-Z]")
_ALPHA = re.compile(r"[^\W\d_]")


def _looks_random_aws(token: str) -> bool:
    """A 40-character AWS secret access key: base64 with all three classes and a ``/`` or ``+``."""
    classes = (any(c.islower() for c in token) and any(c.isupper() for c in token)
               and any(c.isdigit() for c in token))
    return classes and ("/" in token or "+" in token) and _entropy(token) >= 4.0



# -- the normalised view ------------------------------------------------------------------------
# Every rule runs on a view of the text in which look-alikes are undone: NFKC (fullwidth letters,
# ":" for "：", no-break spaces), default-ignorable characters removed (zero-width spaces, soft
# hyphens, BOM...), confusable hyphens made "-", a word mixing Latin, Cyrillic and Greek letters
# written in its majority script, Latin or Cyrillic ("pаssword" with a Cyrillic "а", "passwοrd"
# with a Greek omicron), and a known-prefix token wrapped across lines joined. Each match is mapped
# back, so the original span (zero-width characters and all) is what gets replaced.

IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
"""One character a reader does not see (zero-width, soft hyphen, bidi and other default-ignorable)."""
HYPHEN_LOOKALIKES = "\u2010\u2011\u2012\u2043\u2212\ufe63\uff0d\u02d7\u2796"
"""Characters that read as ``-``."""
_HYPHENS = {c: "-" for c in HYPHEN_LOOKALIKES}
_HYPHEN_TABLE = str.maketrans(_HYPHENS)
_SPECIAL = re.compile(IGNORABLE.pattern[:-1] + "".join(_HYPHENS) + "]")
_NONASCII = re.compile(r"[^\x00-\x7f]+")
_CYR_TO_LAT = str.maketrans("аеорсухіјѕԁһԛԝАВЕКМНОРСТУХІЈЅ", "aeopcyxijsdhqwABEKMHOPCTYXIJS")
_LAT_TO_CYR = str.maketrans("aeopcyxABEKMHOPCTYX", "аеорсухАВЕКМНОРСТУХ")
# Greek look-alikes ("passwοrd" with an omicron): folded into the word's majority script, Latin or
# Cyrillic; a word of Greek letters only is Greek text and stays as it is.
_GRK_TO_LAT = "αεικνορτυχωϲϳΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ", "aeiknoptuxwcjABEZHIKMNOPTYXC"
_GRK_TO_CYR = "αεκορτχϲΑΒΕΗΚΜΟΡΤΧϹ", "аекортхсАВЕНКМОРТХС"
_TO_LAT = str.maketrans(_CYR_TO_LAT | str.maketrans(*_GRK_TO_LAT))
_TO_CYR = str.maketrans(_LAT_TO_CYR | str.maketrans(*_GRK_TO_CYR))
TO_LATIN = _TO_LAT
"""``str.translate`` table: Cyrillic and Greek letters that look like Latin ones, as those."""
# A combining mark inside a token ("ghp_aB1c̲D2…", an accent added to one letter) and a decimal digit
# of another script ("Ab٣dEf٦…": NFKC keeps Arabic-Indic, Devanagari… digits) hide it from the rules:
# the view drops the one and reads the other as its ASCII digit.
_MARKS_IN_TOKEN = re.compile(r"(?<=[A-Za-z0-9_\-]|\d)[^\w\s\x00-\x7f]{1,16}(?=[A-Za-z0-9_\-]|\d)")
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")
# Small capitals ("ᴘᴀꜱꜱᴡᴏʀᴅ", "ɢʜᴘ_…"): NFKC keeps them, a reader sees the letters; the view (and the
# configured-key mask) reads each as its lower-case Latin letter.
_SMALL_CAPS = "\u0262\u026a\u0274\u0280\u028f\u0299\u029c\u029f\u1d00\u1d04\u1d05\u1d07\u1d0a\u1d0b\u1d0d" \
              "\u1d0f\u1d18\u1d1b\u1d1c\u1d20\u1d21\u1d22\ua730\ua731\ua7af"
_SMALL_CAP_TABLE = str.maketrans(_SMALL_CAPS, "ginrybhlacdejkmoptuvwzfsq")
_SMALL_CAP = re.compile("[" + _SMALL_CAPS + "]+")


def _is_mark(c: str) -> bool:
    return unicodedata.category(c) in ("Mn", "Me")


_MARK_BLOCKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
"""The general-purpose combining marks (accents, overlays, underlines)."""
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _compat_alnum(c: str) -> str | None:
    """The ASCII letter or digit a compatibility form reads as (NFKC: "𝐀", "Ⓐ", "ℂ", "①", "Ａ"; or a
    small capital); None for any other character."""
    n = unicodedata.normalize("NFKC", c)
    if n != c and len(n) == 1 and n.isascii() and n.isalnum():
        return n
    r = c.translate(_SMALL_CAP_TABLE)
    return r if r != c else None


@functools.cache
def _foldable() -> re.Pattern[str]:
    """One class of the BMP's characters :func:`fold_letter_forms` changes (a bitmap: a fast scan)."""
    ranges: list[list[int]] = []
    for cp in range(0x80, 0x10000):
        c = chr(cp)
        if unicodedata.category(c) == "Nd" or (not c.isspace() and _compat_alnum(c) is not None):
            if ranges and cp == ranges[-1][1] + 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return re.compile("[" + _MARK_BLOCKS + "".join(f"{chr(x)}-{chr(y)}" for x, y in ranges) + "]")


def _folded(m: re.Match[str]) -> str:
    c = m.group(0)
    d = unicodedata.decimal(c, None)
    if d is not None:
        return str(d)
    if unicodedata.category(c) in ("Mn", "Me"):
        return ""
    return _compat_alnum(c) or c


def fold_letter_forms(text: str) -> str:
    """``text`` with every general-purpose combining mark dropped, every decimal digit of another
    script read as its ASCII digit and every compatibility form of a letter or digit (mathematical
    bold "𝐀", circled "Ⓐ", full-width "Ａ", superscript "²", small capital "ᴀ") read as its ASCII
    one, one character for one, for readers that compare text whole (the configured-key mask);
    linear, and a no-op for text without them."""
    if text.isascii():
        return text
    found = _foldable()
    if found.search(text) is not None:
        text = found.sub(_folded, text)
    return _ASTRAL.sub(_folded, text) if _ASTRAL.search(text) is not None else text


_MIX_POINT = re.compile(r"[A-Za-z][\u0370-\u04ff]|[\u0370-\u04ff][A-Za-z]|[\u0370-\u03ff][\u0400-\u04ff]"
                        r"|[\u0400-\u04ff][\u0370-\u03ff]")
_MIX_WORD = re.compile(r"[A-Za-z\u0370-\u04ff]{1,256}")
_WRAP_PREFIX = (r"gh[pousr]_|github_pat_|glpat-|gl(?:sa|c)_|AKIA|ASIA|sk-|sk_(?:live|test)_|rk_(?:live|test)_|whsec_|"
                r"xox[abposre]-|AIza|hf_|npm_|pypi-|eyJ|SG\.|shp(?:at|ca|pa|ss)_|do[opr]_v1_|hv[sbr]\.|"
                r"sq0(?:atp|csp)-|ya29\.|GOCSPX-|HRKU-|dapi|NRAK-|PMAK-")
# A next line that starts with a word and a space ("Do not touch…", "is my token") is the next
# sentence, not the rest of the token: joined, the token's rule would take that word with it.
_WRAP = re.compile(r"(?<![A-Za-z0-9_\-])(?:" + _WRAP_PREFIX + r")[A-Za-z0-9_\-.]{0,512}"
                   r"(?:\r?\n[ \t]{0,16}(?![A-Za-z][a-z]{0,15}[^\S\n])[A-Za-z0-9_\-]{1,512}){1,8}"
                   r"(?![A-Za-z0-9_\-])")
_WRAP_BREAK = re.compile(r"\r?\n[ \t]{0,16}")
# a line continued with a backslash right after a token or an "=" (``OPENAI_API_KEY=sk-…\``,
# ``export DB_PASSWORD=\``): the view joins it, so the rules see one token or one assignment
_BACKSLASH_BREAK = re.compile(r"(?<=[^\s\\])\\\r?\n[ \t]{0,16}(?=\S)")


# A password cue word broken up, so the rules never see it: wrapped ("pass\nword", "pass-\nword",
# "passw\r\nord", "pass\u2028word"), letter-spaced ("p a s s w o r d") or in leetspeak ("p@ssword",
# "passw0rd", "pa55word", "пар0ль"); the view reads it as the plain word, but only right before a
# separator or an aside, so "pass\nword lists" or a value "P@ssw0rd!" stays as it is.
_BRK = r"(?:-?[^\S\n]{0,4}\r?\n[ \t]{0,16}|[\u2028\u2029\x85])"


_LOOKS = {"p": "pр", "a": "aа@4", "s": "sѕ5$", "w": "wԝ", "o": "oоο0", "r": "r", "d": "dԁ",
          "п": "п", "а": "аa@", "р": "рp", "о": "оo0", "л": "л", "ь": "ь"}
"""Each letter of a cue word and what may stand for it (look-alike letters, leetspeak; full-width too)."""


def _letters(part: str) -> str:
    out = []
    for c in part:
        alts = _LOOKS.get(c, c) + "".join(chr(ord(a) + 0xFEE0) for a in _LOOKS.get(c, c) if "a" <= a <= "z")
        out.append("[" + re.escape(alts) + "]")
    return "".join(out)


def _split_word(word: str) -> str:
    return "|".join(_letters(word[:i]) + _BRK + _letters(word[i:]) for i in range(1, len(word)))


_CUE_AHEAD = (r"(?=s?[^\S\n]{0,4}(?:[:=—–?(,]|-\s|\bis\b|\bwas\b|\bэто\b|\r?\n)"
              r"|s?[^\S\n]{1,4}(?:for|to|of|on|at|от|для|к|на)[^\S\n])")
_CUE_BROKEN = re.compile(
    r"(?i)(?<![\w@$-])(?:(" + _split_word("password") + "|" + " ".join(_letters(c) for c in "password")
    + "|" + _letters("password")
    # split by a space, only right before a separator: "pass word is V" (red team 25)
    + r"|pass[^\S\n]word(?=s?[^\S\n]{0,4}(?:[:=—–]|is\b|was\b))"
    + ")|(" + _split_word("пароль") + "|" + " ".join(_letters(c) for c in "пароль")
    + "|" + _letters("пароль") + "))" + _CUE_AHEAD
)
# an aside between a password word and its separator or value: "password (don't tell anyone): V",
# "my password — don't share — is V", "the root password, which I set yesterday, is V",
# "пароль, кстати, V", "пароль — вот он — V": the view drops it. Only plain words: a value in brackets
# or dashes stays.
_ASIDE_WORDS = r"[^\W\d_][\w'’]{0,23}(?:[^\S\n]{1,3}[^\W\d_][\w'’]{0,23}){0,7}"
_ASIDE = re.compile(
    r"(?i)(?<![\w-])(?:" + _PW_WORD + "|" + _PIN_WORD + r")s?"
    r"(?:[^\S\n]{1,4}(?:for|to|of|on|at|in|from|от|для|к|на)(?:[^\S\n]{1,4}[^\s:=—–,()]{1,30}+){1,5}?)?"
    r"([^\S\n]{0,4}\(" + _ASIDE_WORDS + r"[!?.…]{0,3}\)"
    r"|[^\S\n]{1,4}[—–-][^\S\n]{1,4}" + _ASIDE_WORDS + r"[^\S\n]{1,4}[—–-](?=[^\S\n]{1,4}\S|:)"
    r"|[^\S\n]{0,4},[^\S\n]{1,4}" + _ASIDE_WORDS + r",)"
)
_ASIDE_AFTER_COMMA = re.compile(r"[^\S\n]{0,4}(?:[:=—–]|-\s|\bis\b|\bwas\b|\bэто\b)")
_CLAUSE_END = re.compile(r"[^\S\n]{0,4}(?:[.,;!?)\]\"'`]|\r?\n|$)")
_GAP = re.compile(r"[^\S\n]{1,4}")


def _cue_edits(text: str) -> list[tuple[int, int, str]]:
    """View edits that undo a broken-up password word and drop an aside after one (see above)."""
    out: list[tuple[int, int, str]] = []
    for m in _CUE_BROKEN.finditer(text):
        word = "password" if m.group(1) else "пароль"
        if m.group(0).casefold() != word:
            out.append((m.start(), m.end(), word))
    low = text.casefold()
    if any(w in low for w in ("pass", "pwd", "парол", "mot de", "contrase", "kennwort", "senha", "has", "pin", "пин",
                              "code", "код", "combination", "комбинаци")):
        for m in _ASIDE.finditer(text):
            start, end = m.span(1)
            comma = m.group(1).rstrip().endswith(",")
            if _ASIDE_AFTER_COMMA.match(text, end) is None:
                # no separator after it: "пароль, кстати, V", "the password (don't tell anyone) V",
                # "пароль (никому!) V" (red team 32), "пароль — вот он — V": V must look like one
                nxt = _GAP.match(text, end)
                v = _value_at(text, nxt.end()) if nxt else None
                if v is None:
                    continue
                if (comma or not _is_marker(v[2])) and (  # masked already: still an aside
                        not _plausible(v[2], strict=True) or (comma and not _CLAUSE_END.match(text, v[1]))):
                    continue
            out.append((start, end, ""))
    return out


@dataclass(slots=True)
class _View:
    """The normalised text and its edits: ``(view_start, view_end, orig_start, orig_end)``."""

    text: str
    edits: list[tuple[int, int, int, int]]
    starts: list[int]

    def orig(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text behind the view span ``[start, end)``."""
        if not self.edits:
            return start, end
        return self._pos(start, False), self._pos(end - 1, True) if end > start else self._pos(start, False)

    def _pos(self, p: int, after: bool) -> int:
        i = bisect.bisect_right(self.starts, p) - 1
        if i < 0:
            return p + (1 if after else 0)
        _vs, ve, os_, oe = self.edits[i]
        if p < ve:  # inside a replaced stretch: all of it
            return oe if after else os_
        return oe + (p - ve) + (1 if after else 0)


@functools.cache
def _any_format() -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{pat.pattern})" for _k, pat, group, _n in _FORMATS if group == 0))


def _full_format(run: str) -> bool:
    return _any_format().fullmatch(run) is not None


def _view(text: str) -> _View:
    """The normalised view of ``text`` (see above); linear, and a no-op for plain ASCII text."""
    edits: list[tuple[int, int, str]] = []  # (orig_start, orig_end, replacement), sorted
    inplace: list[tuple[int, str]] = []  # same-length replacements: the offsets do not move
    if not text.isascii() and unicodedata.is_normalized("NFKC", text):
        for m in _SPECIAL.finditer(text):  # only zero-width characters and hyphens to undo
            inplace.append((m.start(), "-")) if m.group(0) in _HYPHENS else edits.append(
                (m.start(), m.end(), ""))
    elif not text.isascii():
        for m in _NONASCII.finditer(text):
            run = m.group(0)
            if unicodedata.is_normalized("NFKC", run) and not _SPECIAL.search(run):
                continue
            fixed = unicodedata.normalize("NFKC", run.translate(_HYPHEN_TABLE))
            if len(fixed) == len(run) and not IGNORABLE.search(run):
                inplace.append((m.start(), fixed))
                continue
            for i, c in enumerate(run, m.start()):
                if IGNORABLE.match(c):
                    edits.append((i, i + 1, ""))
                    continue
                r = _HYPHENS.get(c) or unicodedata.normalize("NFKC", c)
                if r != c:
                    edits.append((i, i + 1, r))
    if not text.isascii():
        for m in _OTHER_DIGIT.finditer(text):
            inplace.append((m.start(), str(unicodedata.decimal(m.group(0), 0))))
        for m in _SMALL_CAP.finditer(text):
            inplace.append((m.start(), m.group(0).translate(_SMALL_CAP_TABLE)))
        done = {e[0] for e in edits}  # zero-width ones (CGJ, variation selectors) are dropped above
        for m in _MARKS_IN_TOKEN.finditer(text):
            if all(_is_mark(c) or IGNORABLE.match(c) for c in m.group(0)):
                edits.extend((i, i + 1, "") for i, c in enumerate(m.group(0), m.start())
                             if i not in done and _is_mark(c))
    if "\\\n" in text or "\\\r\n" in text:
        edits.extend((m.start(), m.end(), "") for m in _BACKSLASH_BREAK.finditer(text))
    if "\n" in text:
        for m in _WRAP.finditer(text):
            pos = m.start()
            breaks = list(_WRAP_BREAK.finditer(m.group(0)))
            run = m.group(0)[: breaks[0].start()]
            for j, b in enumerate(breaks):
                nxt = breaks[j + 1].start() if j + 1 < len(breaks) else len(m.group(0))
                cont = m.group(0)[b.end():nxt]
                mixed = any(c.isdigit() for c in cont) and any(c.isalpha() for c in cont)
                if _full_format(run) and not mixed:
                    break
                edits.append((pos + b.start(), pos + b.end(), ""))
                run += cont
    cue = _cue_edits(text)
    if cue:  # these win over a character edit inside them
        spans = sorted((a, b) for a, b, _r in cue)
        firsts = [a for a, _b in spans]

        def inside(a: int, b: int) -> bool:
            i = bisect.bisect_right(firsts, max(a, b - 1)) - 1
            return i >= 0 and spans[i][1] > a

        edits = [e for e in edits if not inside(e[0], e[1])] + cue
        inplace = [(pos, r) for pos, r in inplace if not inside(pos, pos + len(r))]
    if inplace:
        swapped = list(text)
        for pos, r in inplace:
            swapped[pos:pos + len(r)] = r
        text = "".join(swapped)
    if not edits and (text.isascii() or not _MIX_POINT.search(text)):
        return _View(text, [], [])
    edits.sort()
    out: list[str] = []
    vedits: list[tuple[int, int, int, int]] = []
    prev = vlen = 0
    for os_, oe, r in edits:
        out.append(text[prev:os_])
        vlen += os_ - prev
        out.append(r)
        vedits.append((vlen, vlen + len(r), os_, oe))
        vlen += len(r)
        prev = oe
    out.append(text[prev:])
    view = "".join(out)
    if _MIX_POINT.search(view):  # one-for-one letter swaps: the offsets stay as they are
        chars: list[str] | None = None
        for w in _MIX_WORD.finditer(view):
            word = w.group(0)
            if word.isascii() or not _MIX_POINT.search(word):
                continue
            lat = sum(c.isascii() for c in word)
            cyr = sum("\u0400" <= c <= "\u04ff" for c in word)
            fixed = word.translate(_TO_LAT if lat >= cyr else _TO_CYR)
            if fixed != word:
                chars = chars if chars is not None else list(view)
                chars[w.start():w.end()] = fixed
        if chars is not None:
            view = "".join(chars)
    return _View(view, vedits, [e[0] for e in vedits])

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
    if "PRIVATE KEY" not in text and "private key" not in text.lower():
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
            found = SecretMatch(kind, v[0], v[1])
            if kind == "password" and "\n" in text:  # "with password Zebra9\nQuokka1"
                found = _wrapped_rest(text, found)
            covered = found.end
            yield found


_NEXT_LINE = re.compile(r"\r?\n([ \t]{1,16})(?=[^\s#\-])")


def _next_line_value(text: str, pos: int) -> tuple[int, int, str] | None:
    """A YAML value on the next, indented line (``password:\n  V``): the whole line, one token."""
    m = _NEXT_LINE.match(text, pos)
    if m is None:
        return None
    v = _value_at(text, m.end())
    if v is None or v[2].endswith(":") or ": " in v[2]:
        return None
    if not _LINE_END.match(text, v[1]):
        return None  # more on that line: prose or a mapping, not a lone scalar
    return v


_LINE_END = re.compile(r"[^\S\n]*(?:\r?\n|$)")


def _assigned_ok(strength: str, name: str, value: str) -> bool:
    """Whether ``value``, stored under a name of this ``strength`` (see :func:`_secret_name`), is a secret."""
    if strength == "env":  # a value, not a switch or a word: "true", "enabled", "basic" stay
        return (_plausible(value, strict=False) and not (value.isalpha() and value.islower())
                and value.casefold() not in _STOPWORDS)
    if strength == "key":
        return not _is_marker(value) and not _is_code(value) and len(value) >= 8 and (
            _looks_random(value) or (len(value) >= 16 and _DIGIT.search(value) is not None
                                     and _ALPHA.search(value) is not None))
    pw = bool(_PW_NAME.search(name))
    return _plausible(value, strict=False) or (pw and len(value) >= 1 and not _is_marker(value)
                                               and not _is_code(value) and value.casefold() not in _STOPWORDS)


_PW_NAME = re.compile(r"(?i)pass|pwd|парол")  # "пароли: V" names passwords too
# a string value continued on the next line: Python's implicit concatenation inside parentheses,
# ``"…" +`` / ``"…" .`` (JS, PHP) or a backslash; the next line is that string alone
_STR_CONT = re.compile(r"[^\S\n]{0,4}[+.\\]?[^\S\n]{0,4}\r?\n[ \t]{0,40}[+.]?[^\S\n]{0,4}"
                       r"(\"[^\"\n]{1,256}\"|'[^'\n]{1,256}')(?=[^\S\n]{0,4}[)\];,+.\\]{0,3}[^\S\n]{0,4}(?:\r?\n|$))")
# an unquoted value continued on a more indented line of one token (INI and YAML continuations:
# ``aws_secret_access_key = wJalr…\n  /bPxR…``)
_INDENT_CONT = re.compile(r"[^\S\n]{0,4}\r?\n([ \t]{1,40})([A-Za-z0-9+/=_\-.]{1,512})(?=[^\S\n]*(?:\r?\n|$))")
_OPEN_PAREN = re.compile(r"[(\[][^\S\n]{0,4}(?=[\"'])")


def _continued(text: str, found: SecretMatch, line_start: int) -> SecretMatch:
    """``found`` with the continuation lines of its value (see ``_STR_CONT``, ``_INDENT_CONT``)."""
    end = found.end
    if text[found.start] in "\"'":
        for _ in range(8):
            c = _STR_CONT.match(text, end)
            if c is None:
                break
            end = c.end(1)
    else:
        indent = len(text[line_start:found.start]) - len(text[line_start:found.start].lstrip())
        for _ in range(8):
            c = _INDENT_CONT.match(text, end)
            if c is None or len(c.group(1).expandtabs(4)) <= indent or _is_marker(c.group(2)):
                break
            end = c.end(2)
    return found if end == found.end else SecretMatch(found.kind, found.start, end)


_HEDGE_AT = re.compile(r"(?i)" + _HEDGES)
"""A hedge where an assignment's value would start ("password: probably V")."""


def _assignments(text: str) -> Iterator[SecretMatch]:
    covered = 0
    for m in _ASSIGN.finditer(text):
        if m.start() < covered or not _SECRETISH.search(m.group(1)):
            continue
        strength = _secret_name(m.group(1))
        if strength is None:
            continue
        pos = m.end()
        paren = _OPEN_PAREN.match(text, pos)  # api_key = ("…"\n "…")
        v = _value_at(text, paren.end() if paren else pos)
        hedge = _HEDGE_AT.match(text, pos - 1) if v is not None and not paren and text[pos - 1] in " \t" else None
        if hedge is not None:  # "пароль: вроде V", "password: probably V": the value after it (red team 41b)
            gap = _GAP.match(text, hedge.end())
            v = _value_at(text, gap.end()) if gap is not None else None
            if v is None or not _plausible(v[2], strict=True):
                continue
        if v is None and strength == "strong":
            v = _next_line_value(text, m.end())
        if v is None or not _assigned_ok(strength, m.group(1), v[2]):
            continue
        found = SecretMatch("password" if _PW_NAME.search(m.group(1)) else "credential", v[0], v[1])
        if "\n" in text:
            if v[2].endswith("-"):  # PASSWORD=hunter2hun-\nter2: hyphenated by a wrap
                found = _wrapped_rest(text, found)
            found = _continued(text, found, text.rfind("\n", 0, m.start()) + 1)
        covered = found.end
        yield found


# <password>V</password>, <add key="…"/> aside: an element named like a secret holds one
_XML_ELEMENT = re.compile(r"<([A-Za-z_][\w.\-:]{0,79})(?:[^\S\n][^<>\n]{0,256})?>[^\S\n]{0,8}"
                          r"([^<>\s](?:[^<>\n]{0,254}[^<>\s])?)[^\S\n]{0,8}</\1>")
# define('DB_PASSWORD', 'V'), setdefault("api_key", "V"), ("password", "V"): a quoted secret name,
# a comma, a quoted value (one word that looks like a password)
_CALL_PAIR = re.compile(r"([\"'])([^\W\d][\w.\-]{0,79})\1[^\S\n]{0,4},[^\S\n]{0,4}(?=[\"'])")


# a Markdown table whose header names a secret column: "| service | user | password |", its separator
# row, then each body row's cell in that column
_TABLE_SEP = re.compile(r"[ \t]{0,16}\|?[ \t]{0,4}:?-{3,}:?[ \t]{0,4}(?:\|[ \t]{0,4}:?-{3,}:?[ \t]{0,4}){0,63}"
                        r"\|?[ \t]*\r?")
_CELL = re.compile(r"(?:\\\||[^|\n])*+")
_TABLE_STRONG = frozenset({"password", "passwd", "pwd", "passphrase", "passcode", "secret", "credential",
                           "credentials", "creds", "pin", "passwort", "mdp", "contraseña", "пароль"})
"""Header words whose column is a secret (``pass`` is not one: a test table's pass/fail column)."""
_TABLE_TOKEN = frozenset({"token", "key", "apikey"})
"""Header words whose column holds a secret only when the cell looks like one (``Token | Count``)."""


_TABLE_MAX_PIPES = 66
"""A row with more pipes than a 64-column table has (``_TABLE_SEP``) is not read as one."""


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The cell spans of the table row ``text[start:end]`` (outer pipes dropped)."""
    spans = [(c.start(), c.end()) for c in _CELL.finditer(text, start, end)]
    spans = [sp for i, sp in enumerate(spans) if sp[1] > sp[0] or i == 0 or spans[i - 1][1] != sp[0]]
    if spans and not text[spans[0][0]:spans[0][1]].strip():
        spans = spans[1:]
    if spans and not text[spans[-1][0]:spans[-1][1]].strip():
        spans = spans[:-1]
    return spans


def _column_kind(cell: str) -> str | None:
    parts = [p.casefold() for p in _NAME_PARTS.findall(cell)] or [cell.strip().casefold()]
    last = parts[-1]
    if last in _TABLE_STRONG or _RU_SECRET.match(last):
        return "strong"
    if last in _TABLE_TOKEN and not (len(parts) >= 2 and parts[-2] in _PLAIN_KEY_PREFIXES | _PUBLIC_KEY_PREFIXES):
        return "token"
    return None


def _tables(text: str) -> Iterator[SecretMatch]:
    lines: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        lines.append((pos, pos + len(line)))
        pos += len(line) + 1
    i = 1
    while i < len(lines):
        s0, e0 = lines[i]
        if (not 0 < text.count("|", *lines[i - 1]) <= _TABLE_MAX_PIPES
                or not _TABLE_SEP.fullmatch(text, s0, e0)):
            i += 1
            continue
        header = _cells(text, *lines[i - 1])
        columns = {k: kind for k, (a, b) in enumerate(header) if (kind := _column_kind(text[a:b]))}
        i += 1
        while i < len(lines) and "|" in text[lines[i][0]:lines[i][1]]:
            if columns and text.count("|", *lines[i]) <= _TABLE_MAX_PIPES:
                for k, (a, b) in enumerate(_cells(text, *lines[i])):
                    kind = columns.get(k)
                    value = text[a:b].strip()
                    if kind is None or not value or _is_marker(value) or value.casefold() in _STOPWORDS:
                        continue
                    if (_plausible(value, strict=False) if kind == "strong" else
                            _bare_token(value) or (_plausible(value, strict=True) and " " not in value)):
                        lead = len(text[a:b]) - len(text[a:b].lstrip())
                        yield SecretMatch("password" if kind == "strong" else "credential",
                                          a + lead, a + lead + len(value))
            i += 1


def _markup(text: str) -> Iterator[SecretMatch]:
    if "</" in text:
        for m in _XML_ELEMENT.finditer(text):
            name = m.group(1).rsplit(":", 1)[-1]
            strength = _secret_name(name) if _SECRETISH.search(name) else None
            if strength is not None and _assigned_ok(strength, name, m.group(2)):
                yield SecretMatch("password" if _PW_NAME.search(name) else "credential", *m.span(2))
    if "," in text and ("'" in text or '"' in text):
        for m in _CALL_PAIR.finditer(text):
            name = m.group(2)
            strength = _secret_name(name) if _SECRETISH.search(name) else None
            if strength is None:
                continue
            v = _value_at(text, m.end())
            if (v is not None and text[v[0]] in "\"'" and not any(c.isspace() for c in v[2])
                    and _plausible(v[2], strict=True) and _assigned_ok(strength, name, v[2])):
                yield SecretMatch("password" if _PW_NAME.search(name) else "credential", v[0], v[1])
    if "|" in text and "---" in text:
        yield from _tables(text)


def _prose_sep_is_symbol(m: re.Match[str]) -> bool:
    tail = m.group(0).rstrip()
    return tail.endswith((":", "=", "—", "–", "-"))


# plain words after "is"/"will be" that describe the password (red team 26: "The password will be sent by
# email", "is going to change", "now the password is broken"; "пароль был слишком короткий")
_PROSE_VALUES = frozenset({"sent", "broken", "gone", "lost", "stolen", "leaked", "written", "given", "known",
                           "forgotten", "shown", "kept", "stronger", "weaker", "longer", "shorter", "better",
                           "worse", "safer", "harder", "easier", "about", "going", "sometimes", "always", "never",
                           "слишком", "очень", "совсем", "довольно", "чересчур", "вполне"})
# the Russian "-ed" after "был"/"остаётся": a short passive participle ("пароль был изменён вчера", "была
# сброшена", "забыт", "утерян") or an adjective in the instrumental ("остаётся прежним", "был слабым") is
# a verb phrase about the password, not its value (a lowercase password with these endings, "баран",
# is taken for one too)
_RU_PARTICIPLE = re.compile(r"[а-яё]{1,28}(?:[аяеё]нн?|[ыи]т)[аоы]?|[а-яё]{1,28}[ыи]м")


def _prose_ok(m: re.Match[str], value: str, *, strict: bool) -> bool:
    """A value after "is"/"are"/"was"/"был" that is a plain participle ("hashed", "rotated", "going",
    "изменён") is no secret."""
    if (value.isalpha() and value.islower() and not _prose_sep_is_symbol(m)
            and (value.endswith("ed") or (len(value) > 4 and value.endswith("ing")) or value in _PROSE_VALUES
                 or _RU_PARTICIPLE.fullmatch(value))):
        return False
    return _plausible(value, strict=strict)


def _passphrase(text: str, m: re.Match[str], *, answer: bool = False) -> SecretMatch | None:
    """Several plain words after "password is", up to the clause end: ``correct horse battery staple``.

    ``answer``: the lead-in is a question and its answer ("Пароль? Это …"), which links a Russian
    passphrase as a symbol separator does."""
    c = _CLAUSE.match(text, m.end())
    if c is None:
        return None
    words = c.group(0).casefold().split()
    if any(w in _FUNCTION_WORDS or (len(w) > 4 and w.endswith(("ly", "ing", "ed"))) for w in words):
        return None  # a sentence about the password ("is stored in the vault"), not the password
    if any(not w.isascii() for w in words) and (  # Russian: "пароль: корректная лошадь батарейка скрепка"
            # only after a symbol ("пароль был изменён вчера вечером" is a sentence), with no function
            # word or verb ("пароль: хранится в сейфе", "пароль — менять раз в год")
            not (answer or _RU_PHRASE_SEP.search(m.group(0)))
            or any(w in _RU_FUNCTION_WORDS or (len(w) > 4 and w.endswith(("ть", "тся", "ться"))) for w in words)):
        return None
    end = c.end()
    while end < len(text) and text[end] in _BANGS:  # masked with it (see ``_masked_end``)
        end += 1
    return SecretMatch("password", c.start(), end)


# a prose password value wrapped onto the next line: "my password is Zebra9\nQuokka1", "hunter2hun-\nter2";
# the next line must be one token on its own, and the value ends in "-" or the rest has a digit or a symbol
_VALUE_WRAP = re.compile(r"[^\S\n]{0,4}\r?\n[ \t]{0,16}([A-Za-z0-9][A-Za-z0-9!@#$%^&*+?~_\-]{0,63})"
                         r"(?=[.,;!?)]{0,2}[^\S\n]*(?:\r?\n|$))")


_FILLER_END = re.compile(r"(?i)[:—–][^\S\n]{1,4}(?:это|вот)[^\S\n]*$")


def _wrapped_rest(text: str, found: SecretMatch) -> SecretMatch:
    """``found`` with the rest of its value when the value was wrapped onto the next line."""
    c = _VALUE_WRAP.match(text, found.end)
    if c is None:
        return found
    rest = c.group(1).rstrip(".,;!?)")
    value = text[found.start:found.end]
    if value.endswith("-") or any(not ch.isalpha() for ch in rest):
        return SecretMatch(found.kind, found.start, c.start(1) + len(rest))
    return found


# a value of pieces with symbols in them, one space apart, to the end of its clause: "my password is
# P@ss w0rd!! 55" (red team 25); each piece has a digit or a symbol, so a next sentence is not taken
_PIECES = re.compile(r"(?:[ ][^\s,;]{1,64}){1,4}")


def _spaced_rest(text: str, found: SecretMatch) -> SecretMatch:
    """``found`` with the rest of a space-separated value (see ``_PIECES``) when it has a symbol."""
    value = text[found.start:found.end]
    if value.isalnum() or value[0] in "\"'`«":
        return found
    c = _PIECES.match(text, found.end)
    if c is None:
        return found
    pieces = c.group(0).split(" ")[1:]
    # a plain word after the pieces ends the value: "P@ss w0rd!! 55 okay" (red team 26)
    word = next((i for i, p in enumerate(pieces) if p.isalpha() or _is_marker(p)), None)
    if word is not None:
        pieces = pieces[:word]
    if not pieces:
        return found
    last = pieces[-1][:_masked_end(pieces[-1])]
    if not last:
        return found
    end = c.start() + sum(len(p) + 1 for p in pieces) - (len(pieces[-1]) - len(last))
    return SecretMatch(found.kind, found.start, end) if word is not None or _CLAUSE_END.match(text, end) else found


# a further value after a prose password (red team 25): "… used to be V and now it's V2", "Password for
# github: V, for gitlab: V2", and after a plural word a bare list, "The passwords are V and V2",
# "Пароли: V и V2"; each further value must look like a password
_PW_MORE = re.compile(
    r"(?i)[^\S\n]{0,4}(?:[,;][^\S\n]{0,4}(?:(?:and|but|и|а|но)[^\S\n]{1,4})?|[^\S\n]{1,4}(?:and|but|&|и|а|но)[^\S\n]{1,4})"
    r"(?:(?P<label>(?:for|on|at|для|от|на)[^\S\n]{1,4}[^\s:=—–,;]{1,30}+[^\S\n]{0,4}(?:[:=—–]|-(?=\s)|is\b))"
    r"|(?P<now>(?:(?:now|today)[^\S\n]{1,4})?it(?:['’]s|[^\S\n]{1,4}is)(?:[^\S\n]{1,4}(?:now|just))?|now"
    r"|(?<![\w-])(?:теперь|сейчас)(?:[^\S\n]{1,4}(?:он|это))?(?![\w-])))?[^\S\n]{0,4}"
)
_PW_PLURAL = re.compile(r"(?i)(?:pass(?:word|phrase|code)s|passwds|pwds|пароли)(?![\w-])")


def _more_passwords(text: str, found: SecretMatch, plural: bool) -> Iterator[SecretMatch]:
    """Further values after ``found`` (see ``_PW_MORE``); a bare list only after a plural word."""
    for _ in range(8):
        c = _PW_MORE.match(text, found.end)
        if c is None or not (c["label"] or c["now"] or plural):
            return
        v = _value_at(text, c.end())
        if v is None or not _plausible(v[2], strict=True):
            return
        found = _spaced_rest(text, SecretMatch("password", v[0], v[1]))
        yield found


def _rel_strict(m: re.Match[str]) -> bool:
    """Whether a ``_PW_PROSE`` lead-in needs its relative clause (``_PW_REL``) and so a strict value:
    a clause right after the word, or a qualifier longer than ``_PW_FOR`` alone allows."""
    if m["rel"] is None:
        return False
    return not m["qual"] or len(m["qual"].split()) + len(m["rel"].split()) > 7


# an earlier value before the cue word: "it used to be V and now the password is V2" (red team 26); only
# when the cue's own value was found, and the earlier one must look like a password
_PW_BEFORE = re.compile(
    r"(?i)(?<![\w-])used[^\S\n]{1,4}to[^\S\n]{1,4}be[^\S\n]{1,4}(?P<v>[^\s,;\"'`]{4,64}+)[,;]?[^\S\n]{1,4}"
    r"(?:and|but)[^\S\n]{1,4}(?:now[^\S\n]{1,4})?(?:(?:the|my|our|your)[^\S\n]{1,4})?(?:[\w-]{1,30}+[^\S\n]{1,4})?$"
)


def _linked_value(text: str, m: re.Match[str], *, strict: bool,
                  answer: bool = False) -> tuple[SecretMatch | None, bool]:
    """The password after a lead-in that links it as "is" does (``_PW_PROSE``, ``_PW_ASK`` with its
    answer word): a passphrase to the end of its clause (:func:`_passphrase`), else one value that
    :func:`_prose_ok` accepts ("correcthorse"; not "in the vault", "the one on the sticky note",
    "expired"), with its wrapped or space-separated rest. The flag says the value is a single one, which
    further values may follow."""
    found = _passphrase(text, m, answer=answer)
    if found is not None:
        return found, False
    v = _value_at(text, m.end())
    if v is None or not _prose_ok(m, v[2], strict=strict):
        return None, False
    found = SecretMatch("password", v[0], v[1])
    if "\n" in text:
        found = _wrapped_rest(text, found)
    return _spaced_rest(text, found), True


# a question about doing something to the password, not about what it is: "Forgot your password? It's
# easy to reset", "Need a new password? It's quick" — its answer links a value only if it looks like one
_PW_ASK_ABOUT = re.compile(
    r"(?i)(?<![\w-])(?:forg[eo]t|lost|reset|change|update|need|want|create|choose|pick|enter|type|new"
    r"|забыли|забыл|забыла|сменить|поменять|восстановить|новый|нужен)"
    r"(?:[^\S\n]{1,4}(?:your|my|the|a|an|new|свой|ваш|мой|новый))?[^\S\n]{1,4}$"
)


def _asked_passwords(text: str) -> Iterator[SecretMatch]:
    """A password as a question's answer: "My password? It's V" links V as "is" does; a bare answer
    ("Пароль? V"), or one to a question about doing something to the password (``_PW_ASK_ABOUT``),
    must look like a password ("Forgot password? Click here")."""
    covered = 0
    for m in _PW_ASK.finditer(text):
        if m.start() < covered:
            continue
        if m["answer"] is not None and not _PW_ASK_ABOUT.search(text, max(0, m.start() - 40), m.start()):
            found, _ = _linked_value(text, m, strict=False, answer=True)
        else:
            v = _value_at(text, m.end())
            found = SecretMatch("password", v[0], v[1]) if v is not None and _plausible(v[2], strict=True) else None
            if found is not None and "\n" in text:
                found = _wrapped_rest(text, found)
        if found is not None:
            covered = found.end
            yield found


def _prose_passwords(text: str) -> Iterator[SecretMatch]:
    covered = 0
    for m in _PW_PROSE.finditer(text):
        if m.start() < covered:
            continue
        prev = covered  # where an earlier value (``_PW_BEFORE``) may start
        # "пароль — это важно", "my password used to be shorter", "the password I use is simple" are prose
        # after a hedge or an aside the value must look like one: "is probably wrong", "is, I think, fine"
        strict = (_FILLER_END.search(m.group(0)) is not None or m["weak"] is not None or _rel_strict(m)
                  or m["going"] is not None or m["hedge"] is not None)
        found, single = _linked_value(text, m, strict=strict)
        if single and found is not None:
            plural = _PW_PLURAL.match(text, m.start()) is not None
            for more in _more_passwords(text, found, plural):
                covered = more.end
                yield more
            before = _PW_BEFORE.search(text, max(prev, m.start() - 200), m.start())
            if before is not None and _plausible(before["v"], strict=True):
                yield SecretMatch("password", *before.span("v"))
        if found is not None:
            covered = max(covered, found.end)
            yield found


def _wrapped_passwords(text: str) -> Iterator[SecretMatch]:
    """A password whose separator or value continues on the next line (one line break)."""
    covered = 0
    for m in _PW_WRAPPED.finditer(text):
        if m.start() < covered:
            continue
        if m.group(3):
            lead = _COMMENT_LEAD.match(text, text.rfind("\n", 0, m.start()) + 1)
            if lead is None or lead.group(1) != m.group(3):
                continue
        seps = [g for g in (m.group(2), m.group(4)) if g]
        found = _passphrase(text, m) if seps and m.group(1) is None else None
        if found is None:
            v = _value_at(text, m.end())
            if v is None:
                continue
            value = v[2]
            # More on the value's line ("password:\nhello world how are you") is the next sentence,
            # unless the value has a credential's shape ("the password stays\nMarble-Otter-52 until Monday").
            alone = _VALUE_LINE_END.match(text, v[1]) is not None
            symbol = any(not g[0].isalpha() for g in seps)
            if not symbol and value.isalpha() and value.islower() and (value.endswith("ed")
                                                                      or _RU_PARTICIPLE.fullmatch(value)):
                continue  # "password was\nchanged", "пароль остаётся\nпрежним"
            if not _plausible(value, strict=not alone or not seps or m.group(1) is not None):
                continue
            found = SecretMatch("password", v[0], v[1])
        covered = found.end
        yield found


def _pairs(text: str, lead: re.Pattern[str], kind: str) -> Iterator[SecretMatch]:
    """The password of a ``user:password`` (or ``user / password``) pair after ``lead``."""
    for m in lead.finditer(text):
        v = _value_at(text, m.end())
        if v is None or ":" in v[2] or "@" in v[2]:
            continue
        slash = m.lastindex is not None and m.group(m.lastindex).strip() == "/"
        if _plausible(v[2], strict=slash):
            yield SecretMatch(kind, v[0], v[1])


def _backup_codes(text: str) -> Iterator[SecretMatch]:
    for m in _BACKUP_LEAD.finditer(text):
        pos, first, last = m.end(), -1, -1
        for _ in range(32):
            c = _BACKUP_CODE.match(text, pos)
            if c is None or not any(ch.isdigit() for ch in c.group(1)):
                break
            first = c.start(1) if first < 0 else first
            last, pos = c.end(1), c.end()
        if first >= 0:
            yield SecretMatch("backup_codes", first, last)


def _possessive_ok(value: str) -> bool:
    """A value after "password's" that is not about the password ("length", "12-char", "SHA256 hash")."""
    return (_plausible(value, strict=True) and not _MEASURE.fullmatch(value)
            and not _HASH_NAME.fullmatch(value))


def _passphrases(text: str) -> Iterator[SecretMatch]:
    """The rest of the clause after "passphrase:" / "the passphrase is:" (one to many words)."""
    covered = 0
    for m in _PHRASE_LEAD.finditer(text):
        if m.start() < covered:
            continue  # inside the passphrase just found
        r = _PHRASE_REST.match(text, m.end())
        if r is None:
            continue
        raw = r.group(0).rstrip().rstrip(_TRAILING.translate(str.maketrans("", "", "\"'`" + _BANGS)))
        value = raw.rstrip(_BANGS)  # read without a final "!", masked with it (see ``_masked_end``)
        words = re.findall(r"[^\W_]+", value.casefold())
        if not value or value[0] in "([<{" or _is_marker(value) or _is_code(value) or not words:
            continue  # a remark in brackets ("passphrase: (leave empty)"), not the passphrase
        if all(w in _PHRASE_EMPTY or w in _STOPWORDS or w in _RU_STOPWORDS for w in words):
            continue  # "passphrase: not set", "кодовая фраза: не задана"
        covered = r.start() + len(raw)
        while covered < len(text) and text[covered] in _BANGS:  # "…: hunter two!" (``_PHRASE_REST`` stops there)
            covered += 1
        yield SecretMatch("password", r.start(), covered)


def _random_looking(value: str) -> bool:
    """A short password-looking token on its own: mixed case and a digit (or letters, a digit and a
    symbol), 8-64 characters, no path, no dotted or ``::`` name, no word of four letters or more
    making up half of its letters (``useState2``, ``Python3``, ``MyProject2024`` are names)."""
    if not 8 <= len(value) <= 64 or "/" in value or "::" in value or "\\" in value or _is_code(value):
        return False
    lower = any(c.islower() for c in value)
    upper = any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    symbol = any(c in _SYMBOLS for c in value)
    if not digit or not ((lower and upper) or ((lower or upper) and symbol)):
        return False
    if re.fullmatch(r"[\w\-]+(?:\.[\w\-]+)+", value):
        return False  # a dotted name: file.ext, pkg.mod, host.name
    parts = _WORD_PART.findall(value)
    letters = sum(len(p) for p in parts if p.isalpha())
    wordy = sum(len(p) for p in parts if p.isalpha() and len(p) >= 4 and any(c in _VOWELS for c in p))
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "s" for c in value]
    changes = sum(a != b for a, b in itertools.pairwise(kinds))
    return wordy * 2 < letters and changes >= max(4, len(value) * 2 // 5)  # Bob_2024, PROD_EU1: names


def _set_to(text: str, *, pw_before: bool = False) -> Iterator[SecretMatch]:
    """``I reset it to V`` and the like (see :data:`_SET_TO` for when V is a secret).

    ``pw_before``: the message before ended by naming a password ("The staging password expired
    yesterday." and then "I reset it to V"), which counts as a word near the start of ``text`` does."""
    for m in _SET_TO.finditer(text):
        v = _value_at(text, m.end())
        if v is None:
            continue
        value = v[2]
        lo, hi = max(0, m.start() - _NEAR_BEFORE), min(len(text), v[1] + _NEAR_AFTER)
        if value.isdigit() and 4 <= len(value) <= 8:
            if _PIN_NEAR.search(text, lo, hi):  # "my PIN was 4821, I changed it to 9921"
                raw = text[v[0]:v[1]]  # no "!" in a PIN: "… changed it to 9921!"
                yield SecretMatch("pin", v[0], v[0] + len(raw.rstrip(_BANGS)))
            continue
        if _random_looking(value) or (
                "@" not in value and all(w in _SET_OBJECT for w in m.group(1).casefold().split())
                and _plausible(value, strict=True) and not _MEASURE.fullmatch(value)
                and (_PW_NEAR.search(text, lo, hi) is not None or (pw_before and m.start() < _NEAR_BEFORE))):
            yield SecretMatch("password", v[0], v[1])


def _cli_passwords(text: str) -> Iterator[SecretMatch]:
    """Passwords on a command line: long options, ``mysql -pV``, ``sshpass -p V``."""
    if "--" in text:
        for m in _CLI_PW.finditer(text):
            v = _value_at(text, m.end())
            if v is None:
                continue
            value = v[2]
            if value.startswith(("-", "$", "<")) or _is_marker(value) or _is_code(value):
                continue  # another option, a variable or command substitution, a placeholder
            if m.group(1) != "=":  # "--password V": in prose too ("use the --password flag")
                low_v = value.casefold()
                if (low_v in _OPTION_WORDS or low_v in _STOPWORDS or low_v in _RU_STOPWORDS
                        or (value.isupper() and value.isalpha())):
                    continue  # a word about the option, or a placeholder ("--password PASSWORD")
                lo = max(0, m.start() - 512)  # the command before the option, on its line
                nl = text.rfind("\n", lo, m.start())
                line = text[nl + 1 if nl >= 0 else lo : m.start()]
                argv = (_NEXT_OPTION.match(text, v[1]) is not None
                        or (_LINE_END.match(text, v[1]) is not None and _plausible(value, strict=False)))
                if not (_plausible(value, strict=True) or (argv and not _MYSQL_CMD.search(line))):
                    continue  # mysql's "--password db" prompts: "db" is the database
            yield SecretMatch("password", v[0], v[1])
    low = text.lower()
    if "mysql" in low or "mariadb" in low:
        for cmd in _MYSQL_CMD.finditer(text):
            for p in _MYSQL_P.finditer(text, cmd.start(), cmd.end()):
                v = _value_at(text, p.end())
                if v is not None and not _is_marker(v[2]) and not v[2].startswith("$"):
                    yield SecretMatch("password", v[0], v[1])
    if "login" in low:
        for cmd in _LOGIN_CMD.finditer(text):
            for p in _LOGIN_P.finditer(text, cmd.start(), cmd.end()):
                v = _value_at(text, p.end())
                if v is not None and not _is_marker(v[2]) and not v[2].startswith(("$", "<")):
                    yield SecretMatch("password", v[0], v[1])
    if "htpasswd" in low:
        for m in _HTPASSWD.finditer(text):
            flags = m.group(1).replace("-", "").replace(" ", "")
            if "b" not in flags:
                continue  # the password is prompted for
            pos, args = m.end(), []
            for _ in range(2 if "n" in flags else 3):
                a = _ARG.match(text, pos)
                if a is None:
                    break
                args.append(a)
                pos = a.end()
            if len(args) == (2 if "n" in flags else 3):
                v = _value_at(text, args[-1].start())
                if v is not None and not _is_marker(v[2]) and not v[2].startswith(("$", "<")):
                    yield SecretMatch("password", v[0], v[1])
    if "sshpass" in low:
        yield from _after_lead(text, _SSHPASS, "password",
                               lambda m, v: not _is_marker(v) and not v.startswith("$"))


def _bare_seeds(text: str) -> Iterator[SecretMatch]:
    for m in _SEED_BARE.finditer(text):
        if len(m.group(1).split()) % 3 == 0 and _SEED_END.match(text, m.end(1)):
            yield SecretMatch("seed_phrase", *m.span(1))


def _answers(text: str) -> Iterator[SecretMatch]:
    """A security answer after a bare "is"/"это": one to four words up to the clause's end or a
    function word ("Fluffy and my PIN…"), none of them a function word or a remark about the answer."""
    stop = _FUNCTION_WORDS | _STOPWORDS | _RU_STOPWORDS | _PHRASE_EMPTY | _ANSWER_PROSE
    for m in _ANSWER_IS.finditer(text):
        end, n, ended = m.end(), 0, False
        t = _ANSWER_TOKEN.match(text, end)
        while t is not None:
            w = t.group(0).casefold()
            if w in stop or (w.isascii() and w.islower() and len(w) > 4 and w.endswith(("ly", "ing", "ed"))):
                ended = w in _FUNCTION_WORDS and w not in _ANSWER_PROSE and n > 0  # "Fluffy and …"
                break
            if n == _ANSWER_MAX_WORDS:
                break  # more words than an answer has: a sentence
            end, n = t.end(), n + 1
            if _ANSWER_END.match(text, end):
                ended = True
                break
            g = _ANSWER_GAP.match(text, end)
            t = _ANSWER_TOKEN.match(text, g.end()) if g is not None else None
        value = text[m.end():end]
        if n and ended and not _is_marker(value) and not _is_code(value):
            yield SecretMatch("password", m.end(), end)


def _network_keys(text: str) -> Iterator[SecretMatch]:
    """A bare "key"/"psk"/"ключ" shortly after a word naming a wireless network, and its value."""
    nets = [m.end() for m in _NET_WORD.finditer(text)]
    if not nets:
        return

    def near(pos: int) -> bool:
        i = bisect.bisect_right(nets, pos) - 1
        return i >= 0 and pos - nets[i] <= _NEAR_BEFORE and "\n\n" not in text[nets[i]:pos]

    yield from _after_lead(text, _NET_KEY, "credential", lambda m, v: near(m.start()) and _plausible(v, strict=True))


def _where_ok(text: str, v: tuple[int, int, str]) -> bool:
    """A value after "the password is on the fridge:" (``_PW_WHERE``): strict, no link or host name,
    and the end of its clause."""
    value = v[2]
    return (_plausible(value, strict=True) and "/" not in value and _DOTTED.fullmatch(value) is None
            and _CLAUSE_END.match(text, v[1]) is not None)


_CLOCK_OR_SIZE = re.compile(r"(?i)[0-9]{1,4}(?:[:.][0-9]{2})?(?:am|pm|h|hrs?|ms|s|sec|mins?|k|kb|mb|gb|tb|px|pt)")
"""A time or a size after "now it's" ("now it's 10am", "now it's 512mb"): no password."""


def _it_value_ok(value: str, *, changed: bool = False) -> bool:
    """A value given as "it" once a password was named: "the password, it is V" (``_PW_COMMA_IT``), "it is
    V" in the message after one naming it (``_IT_IS_LEAD``): a password's shape (strict :func:`_plausible`),
    not a count, a size or a time ("12-chars", "512mb", "10am") nor a hash's name ("Argon2id").

    ``changed``: after "I changed the password, now it's" (``_PW_CHANGED``) the cue itself says a value
    follows, so letters and a digit are one at four or five characters too ("chg7x", red team 38), as they
    are after "the password is"; a hash's name is not told apart there."""
    if _MEASURE.fullmatch(value) or _CLOCK_OR_SIZE.fullmatch(value):
        return False
    if changed:
        return _plausible(value, strict=True) or (
            _plausible(value, strict=False) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value))
    return _plausible(value, strict=True) and not _HASH_NAME.fullmatch(value)


_SHAPED = re.compile(r"(?:[^\W_]|[!@#$%^&*+?~\-]){6,64}")


def _shaped(value: str, *, mixed_case: bool) -> bool:
    """A short value with a password's shape: 6-64 letters, digits and symbols (no ``_``, ``.``, ``/``: a
    name, a file, a path), with letters and a digit, or (``mixed_case``) a capital after its first letter;
    not a size, a time, a count, a hash's name or code."""
    if (_SHAPED.fullmatch(value) is None or _is_code(value) or _MEASURE.fullmatch(value)
            or _CLOCK_OR_SIZE.fullmatch(value) or _HASH_NAME.fullmatch(value) or value.casefold() in _STOPWORDS):
        return False
    if _DIGIT.search(value) is not None and _ALPHA.search(value) is not None:
        return True
    return mixed_case and any(c.islower() for c in value) and any(c.isupper() for c in value[1:])


_IT_IS_LEAD = re.compile(
    r"(?i)^[^\S\n]*(?:(?:and|oh|ok|btw|и|а)[,\s]+)?(?:it(?:['’]s|[^\S\n]+is|[^\S\n]+was)|он[аo]?|это(?:[^\S\n]+был[аио]?)?)"
    r"(?:" + _HEDGES + r")?[^\S\n]*[:—–-]?[^\S\n]*")
"""A message that gives a value as "it" ("it is V", "it's V", "это V") right after one that named a password."""


# words after a value given as "It's V" that leave it the value: "the db password. It's V for sure", "… It is
# V I think" (red team 41); any other word may make "it" something else ("It was iPhone12 that died", "it was
# WiFi6Ready for a week")
_IT_HEDGE = re.compile(
    r"(?i)[^\S\n]{1,4}(?:for[^\S\n]{1,4}sure|i[^\S\n]{1,4}(?:think|guess|believe|suppose)"
    r"|i['’]m[^\S\n]{1,4}(?:pretty[^\S\n]{1,4})?sure|probably|apparently|iirc|afaik|btw|now|still|again|too"
    r"|if[^\S\n]{1,4}i[^\S\n]{1,4}re(?:member|call)(?:[^\S\n]{1,4}(?:right|correctly))?)(?![\w'’-])"
)


def _it_value_ends(text: str, pos: int) -> bool:
    """Whether the value at ``pos`` (after "the password. It is") ends its clause (``_CLAUSE_END``), maybe
    after a hedge (``_IT_HEDGE``: "… It's V for sure")."""
    v = _value_at(text, pos)
    if v is None:
        return False
    hedge = _IT_HEDGE.match(text, v[1])
    return _CLAUSE_END.match(text, hedge.end() if hedge else v[1]) is not None


def _passwords(text: str, context: str | None = None) -> Iterator[SecretMatch]:
    """Passwords, PINs and other credentials found by their cue words (``context``: the message
    before, see :func:`find_secrets`)."""
    low = text.lower()  # key words are looked for first: most text has none of them
    if any(w in low for w in ("pass", "pwd", "парол", "пасс", "contrase", "kennwort", "senha", "has")):
        yield from _prose_passwords(text)
        for m in _PW_WHERE.finditer(text):
            v = _value_at(text, m.end())
            if v is not None and _where_ok(text, v):
                yield SecretMatch("password", v[0], v[1])
        yield from _after_lead(text, _PW_CHANGED, "password", lambda m, v: _it_value_ok(v, changed=True))
        if "it" in low or "он" in low or "это" in low:  # the value ends its clause after a "." or a ";"
            yield from _after_lead(text, _PW_COMMA_IT, "password", lambda m, v: _it_value_ok(v) and (
                m["sep"] == "," or _it_value_ends(text, m.end())))
            if "," in text:
                yield from _after_lead(text, _PW_FAR_IT, "password", lambda m, v: _it_value_ok(v))
        yield from _after_lead(text, _PW_BARE, "password", lambda m, v: _plausible(v, strict=True))
        yield from _after_lead(text, _PW_WEAK, "password", lambda m, v: _plausible(v, strict=True))
        if "?" in text:
            yield from _asked_passwords(text)
            yield from _after_lead(text, _PW_QUESTION, "password", lambda m, v: _plausible(v, strict=True))
        if "'s" in text or "’s" in text:
            yield from _after_lead(text, _PW_POSS, "password", lambda m, v: _possessive_ok(v))
        for m in _PW_AS.finditer(text):
            value = m.group(1).rstrip(_TRAILING)
            if _plausible(value, strict=False):
                yield SecretMatch("password", m.start(1), m.start(1) + len(value))
        for m in _PW_IS.finditer(text):
            value = m.group(1).rstrip(_TRAILING)
            if _plausible(value, strict=True):
                yield SecretMatch("password", m.start(1), m.start(1) + len(value))
    if "pass" in low or "pw" in low or "пасс" in low:
        yield from _after_lead(text, _PW_SHORT, "password", lambda m, v: _shaped(v, mixed_case=True)
                               if m["with"] is not None else _plausible(v, strict=True))
    if "\n" in text and any(w in low for w in ("pass", "pw", "парол", "пасс", "contrase", "kennwort", "senha", "has")):
        yield from _wrapped_passwords(text)
    if any(w in low for w in ("pin", "пин", "код", "code", "combination", "комбинаци", "key")):
        for m in _PIN.finditer(text):
            if m["sep"] is None and " " in m["pin"] and not _PIN_RU_CODE.match(m.group(0)):
                # spaced digits only after a separator or "ПИН-код" (red team 26): "pin 3 4 5 6" is a row of pins
                continue
            yield SecretMatch("pin", *m.span("pin"))
        if "\n" in text:
            for m in _PIN_WRAPPED.finditer(text):
                yield SecretMatch("pin", *m.span(1))
    if any(w in low for w in ("key", "secret", "token", "cred", "токен", "ключ", "секрет")):
        yield from _after_lead(text, _CRED_PROSE, "credential",
                               lambda m, v: _prose_ok(m, v, strict=bool(m["qual"]) or m["hedge"] is not None
                                                      or not _prose_sep_is_symbol(m)))
        yield from _after_lead(text, _TOKEN_BARE, "credential", lambda m, v: _bare_token(v))
        yield from _after_lead(text, _TOKEN_USE, "credential", lambda m, v: _token_use_ok(v))
        yield from _after_lead(text, _KEY_BARE, "credential", lambda m, v: _shaped(v, mixed_case=False))
    if ("key" in low or "psk" in low or "ключ" in low) and _NET_WORD.search(text):
        yield from _network_keys(text)
    if "/" in text and any(w in low for w in ("wifi", "wi-fi", "wlan", "ssid", "hotspot", "вай")):
        yield from _after_lead(text, _NET_SLASH, "credential", lambda m, v: _net_key_ok(v))
    if any(w in low for w in ("otp", "2fa", "mfa", "factor", "authenticator")):
        yield from _otp_seeds(text)
    if "authorization" in low:
        yield from _after_lead(text, _AUTH_HEADER, "credential", lambda m, v: _plausible(v, strict=False))
    if "-u" in text or "--user" in text:
        yield from _pairs(text, _CURL_USER, "password")
    if any(w in low for w in ("cred", "login", "логин", "учётк", "учетк", "account")):
        yield from _pairs(text, _CRED_PAIR, "password")
    if "code" in low or "коды" in low:
        yield from _backup_codes(text)
    if "cvv" in low or "cvc" in low:
        for m in _CVV.finditer(text):
            yield SecretMatch("cvv", *m.span("cvv"))
    answer = any(w in low for w in ("answer", "вопрос", "ответ", "memorable", "maiden", "девич"))
    if answer or any(w in low for w in ("phrase", "word", "mnemonic", "фраз", "мнемоник", "слов")):
        for m in _SEED.finditer(text):
            yield SecretMatch("seed_phrase", *m.span(1))
        yield from _passphrases(text)
        if answer:
            yield from _answers(text)
    if "seed" in low or "сид" in low:
        yield from _bare_seeds(text)
    pw_before = context is not None and _PW_NEAR.search(context, max(0, len(context) - _NEAR_BEFORE)) is not None
    if any(w in low for w in (" to ", " на ")):
        yield from _set_to(text, pw_before=pw_before)
    if pw_before:
        # "do not share the staging password" and then "it is Robin2323Nest" (red team 40): the message
        # before named the password; this one starts with "it is" and a password's shape, ending its clause
        lead = _IT_IS_LEAD.match(text)
        v = _value_at(text, lead.end()) if lead else None
        if v is not None and _it_value_ok(v[2]) and _CLAUSE_END.match(text, v[1]) is not None:
            yield SecretMatch("password", v[0], v[1])
    if "remember" in low or "запомни" in low:
        yield from _announced_inline(text)
    if "--" in text or any(w in low for w in ("mysql", "mariadb", "sshpass", "login", "htpasswd")):
        yield from _cli_passwords(text)


def _token_use_ok(value: str) -> bool:
    """A value after "use token" (``_TOKEN_USE``): letters and a digit with a password's shape
    (:func:`_shaped`: no word, number, version, measure or hash name), not a lowercase name and a version."""
    return _shaped(value, mixed_case=False) and _NAME_VERSION.fullmatch(value) is None


def _bare_token(value: str) -> bool:
    """A value after a bare "token"/"api key" that looks like one: long, token characters, random or hex."""
    if len(value) < 20 or not _TOKENISH.fullmatch(value) or _is_code(value) or "://" in value:
        return False
    if _HEX_ONLY.fullmatch(value):
        return len(value) >= 32
    return _looks_random(value) or (len(value) >= 24 and _DIGIT.search(value) is not None
                                    and _ALPHA.search(value) is not None and not _wordlike(value))


_URL = re.compile(r"(?i)(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]{0,30}://[^\s\"'<>`]++")


_ASSIGNED = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}=(?=[^=])")
"""A ``NAME=`` before a random-looking value in one token (``API_TOKEN=ghp_…``)."""


def _entropy_tokens(text: str) -> Iterator[SecretMatch]:
    # A URL's path segments are names (downloads, object keys, ids): credentials in URLs are
    # found by their shape (user:password@, webhooks) or by their query key word (?token=...).
    urls = [m.span() for m in _URL.finditer(text)] if "://" in text else []
    url_starts = [u[0] for u in urls]

    def in_url(pos: int) -> bool:
        i = bisect.bisect_right(url_starts, pos) - 1
        return i >= 0 and urls[i][0] <= pos < urls[i][1]

    for m in _AWS_SECRET.finditer(text):
        if _looks_random_aws(m.group(0)) and not in_url(m.start()):
            yield SecretMatch("aws_secret_key", m.start(), m.end())
    for m in _CANDIDATE.finditer(text):
        tok = m.group(0)
        if in_url(m.start()) or _INTEGRITY.match(tok):  # sha512-… is a content digest
            continue
        name = _ASSIGNED.match(tok)
        if name is not None and _looks_random(tok[name.end():]):
            # API_TOKEN=ghp_…: the value is the secret, the name stays ("search API_TOKEN" finds it)
            yield SecretMatch("high_entropy", m.start() + name.end(), m.end())
            continue
        if _looks_random(tok):
            yield SecretMatch("high_entropy", m.start(), m.end())
        elif "/" in tok:  # a path ("a/b/c") is judged by its parts: one random-looking part is caught
            for part in _SEGMENT.finditer(tok):
                if _looks_random(part.group(0)):
                    yield SecretMatch("high_entropy", m.start() + part.start(), m.start() + part.end())


_CONTINUES = re.compile(r"[A-Za-z0-9_\-+/=]++")

# -- a secret announced by the message before ------------------------------------------------------
# "I'm going to tell you my NAS admin password in the next message." and then "Zebra9Quokka1"; "And
# the old one was:" and then "Yak4Wombat88-old": the value alone says nothing, the message before
# (or the line before it in the same message) says what it is. The value must be a whole line of
# one password-looking token; the announcement a password/secret/PIN word in prose, or (from the
# previous message only) a line ending in ":".
_ANNOUNCE_PIN_WORD = r"(?:pin|pin[ -]?code|passcode|пин(?:[ -]?код)?)"
_ANNOUNCE_WORD = (r"(?:" + _PW_WORD + r"s?|pass|pw|secret|secrets|creds|credentials|" + _ANNOUNCE_PIN_WORD
                  # a Wi-Fi key announced: "I'll send you the wifi key next" (red team 34)
                  + r"|(?:wi-?fi|wlan|wpa2?|network|router)[ _\-]?(?:key|psk|passphrase)"
                  r"|ключ[^\S\n]{1,4}от[^\S\n]{1,4}(?:wi-?fi|вай-?фая?|сети|роутера)|секрет\w{0,3})")
_ANNOUNCE = re.compile(r"(?i)(?<![\w-])" + _ANNOUNCE_WORD + r"(?![\w-])")
# a PIN announced, then sent alone: "my PIN is in the next message" and then "5531" (red team 34)
_ANNOUNCE_PIN = re.compile(r"(?i)(?<![\w-])" + _ANNOUNCE_PIN_WORD + r"(?![\w-])")
_PIN_ALONE = re.compile(r"[0-9]{4,8}")
# the same announcement inside one line, as a request to remember the value: "The wifi password,
# remember: V", "my security answer — запомни: V", "PIN, remember that: V"
_ANNOUNCED_INLINE = re.compile(
    r"(?i)(?<![\w-])(?:(?P<ans>" + _ANSWER_WORD + r")s?|(?:wi-?fi|wlan|network|router)[ _\-]?(?:key|psk)"
    r"|ключ[^\S\n]{1,4}от[^\S\n]{1,4}(?:wi-?fi|вай-?фая?|сети|роутера)|" + _ANNOUNCE_WORD + r")" + _PW_FOR
    + r"[^\S\n]{0,4}[,;:—–-]?[^\S\n]{0,4}(?:" + REQUEST_PATTERN + r")"
)
_ANNOUNCE_ANSWER = re.compile(r"(?i)(?<![\w-])" + _ANSWER_WORD + r"s?(?![\w-])")
# a value alone on its line, or after a request to remember ("Remember: V", "Запомни: V")
# a pasted log or a bridged group chat puts the sender (and a time) before every line: "Bob: V",
# "[2026-03-02 09:14] Bob: V", "<Bob> V" is the value alone on its line all the same
_SPEAKER = LINE_PREFIX
_SPEAKER_PREFIX = re.compile(r"^" + _SPEAKER)
_LONE = re.compile(r"^[ \t]*" + _SPEAKER + r"(?i:" + REQUEST_PATTERN + r")?"
                   r"[\"'`«]?([^\s\"'`«»]{4,128})[\"'`»]?[.!]?[ \t]*\r?$", re.M)
_CODE_LINE = re.compile(r"[(){}\[\];=<>|]|^\s*(?:#|//|def |class |import |from |\$ )")
_DOTTED = re.compile(r"[\w\-]+(?:\.[\w\-]+)+")
_FENCE = re.compile(r"(?:```|~~~)[\w+\-]{0,20}")


def _announces(line: str, *, colon: bool) -> str | None:
    """``"word"`` if a line of prose says a password or secret follows, ``"answer"`` if it says a
    security answer follows, ``"colon"`` if it only ends in ":" (counted when ``colon``), else ``None``."""
    line = _SPEAKER_PREFIX.sub("", line.strip(), count=1)  # "[09:14] Bob: my password is …"
    if not line or _CODE_LINE.search(line):
        return None
    if _ANNOUNCE_ANSWER.search(line):  # before "secret": "ответ на секретный вопрос" names an answer
        return "answer"
    if _ANNOUNCE.search(line):
        return "word"
    return "colon" if colon and line.endswith(":") else None


# what says the value comes on its own, later: "in the next message", "I'll send you …", "пришлю
# следующим сообщением"
_FOLLOWS = re.compile(
    r"(?i)(?<![\w-])(?:(?:next|following|separate|another|second|later)[^\S\n]{1,4}(?:message|msg|line|text)"
    r"|(?:i['’]?ll|i[^\S\n]{1,4}will|i['’]?m[^\S\n]{1,4}going[^\S\n]{1,4}to|i[^\S\n]{1,4}am[^\S\n]{1,4}going"
    r"[^\S\n]{1,4}to|gonna|let[^\S\n]{1,4}me)[^\S\n]{1,4}(?:send|give|tell|type|paste|share|text|write)"
    r"|следующ\w{0,4}[^\S\n]{1,4}сообщени\w{0,3}|отдельн\w{0,4}[^\S\n]{1,4}сообщени\w{0,3}"
    r"|(?:пришлю|скину|напишу|отправлю|сообщу))(?![\w-])"
)


def announces_secret(text: str) -> bool:
    """Whether a line of ``text`` announces a secret sent on its own later ("my password is in the
    next message", "I'll send you the PIN", "пароль пришлю следующим сообщением"): it names one as
    :func:`find_secrets` reads an announcement (the lone value after it is then redacted) and says it
    follows. Such a line states nothing worth keeping: it is no fact to remember."""
    return any(_announces(line, colon=False) is not None and _FOLLOWS.search(line) is not None
               for line in text.splitlines())


def _announced_value(value: str, how: str) -> bool:
    """A lone value after an announcement: password-looking; after a bare ":" ("the old one was:")
    also mixed case and a digit ("Run this:" and then "make-test2" is a command)."""
    if (_is_marker(value) or _is_code(value) or "://" in value or "/" in value or _DOTTED.fullmatch(value)
            or re.fullmatch(r"[a-z_][a-z0-9_]*", value)):
        return False
    if how == "answer":  # an answer is a plain word or name ("Fluffy", "Пушистик")
        return value.casefold() not in _STOPWORDS | _RU_STOPWORDS | _PHRASE_EMPTY and not _DIGIT.fullmatch(value)
    if how == "colon":
        return _random_looking(value) or (_DIGIT.search(value) is not None and _LOWER.search(value) is not None
                                          and _UPPER.search(value) is not None and len(value) >= 8)
    return _random_looking(value) or _plausible(value, strict=True)


def _announced(text: str, context: str | None) -> Iterator[SecretMatch]:
    """Lone password-looking lines of ``text`` announced by the line before or by ``context``."""
    prev_line = context.rstrip().rsplit("\n", 1)[-1] if context and context.strip() else None
    first = True
    last = 0
    for m in _LONE.finditer(text):
        gap = text[last:m.start()]
        lines = gap.rstrip().split("\n")
        if len(lines) >= 2 and _FENCE.fullmatch(lines[-1].strip()):  # the value opens a code block
            lines.pop()
        before = lines[-1] if gap.strip() and lines[-1].strip() else None
        last = m.end()
        how: str | None = None
        said = before if before is not None else prev_line if first else None
        if before is not None:
            how = _announces(before, colon=False)
        elif first and prev_line is not None:
            how = _announces(prev_line, colon=True)
        first = False
        value = m.group(1).rstrip(_TRAILING)
        if how == "word" and said is not None and _PIN_ALONE.fullmatch(value) and _ANNOUNCE_PIN.search(said):
            yield SecretMatch("pin", m.start(1), m.start(1) + len(value))
        elif how is not None and len(value) >= 6 and _announced_value(value, how):
            yield SecretMatch("password", m.start(1), m.start(1) + _masked_end(m.group(1)))


def _announced_inline(text: str) -> Iterator[SecretMatch]:
    """A value right after "<password word>, remember: " on one line (see ``_ANNOUNCED_INLINE``)."""
    for m in _ANNOUNCED_INLINE.finditer(text):
        v = _value_at(text, m.end())
        if v is not None and _announced_value(v[2], "answer" if m["ans"] else "word"):
            yield SecretMatch("password", v[0], v[1])


def find_secrets(text: str, *, context: str | None = None) -> list[SecretMatch]:
    """Locate secrets in ``text``.

    Matching runs on a normalised view (look-alike characters undone, zero-width characters
    dropped, wrapped tokens joined); every span is that of the original text. A secret longer
    than a rule's length cap is found whole: a match that stops inside a run of token characters
    is extended to the run's end.

    Args:
        text: Any free text.
        context: The message before ``text`` in the same conversation (the previous user message),
            when ``text`` is a message: a lone password-looking line that it (or the line before it
            in ``text``) announces — "my password is in the next message", "the old one was:" — is
            a secret too, and so is V in "I reset it to V" near the start of ``text`` when a
            password word ends it ("The staging password expired yesterday."). ``None`` for text
            that is not part of a conversation.

    Returns:
        Non-overlapping matches sorted by position. When two detections overlap the longer one
        wins; for the same span a known format beats a key-word rule, which beats the generic
        high-entropy rule.
    """
    if len(text) < 4:
        return []
    view = _view(text)
    vt = view.text
    # an earlier redaction's marker is never redacted again (idempotence)
    found: list[tuple[int, SecretMatch]] = [
        (-1, SecretMatch("marker", m.start(), m.end())) for m in _MARKER.finditer(vt)
    ] if MARKER_PREFIX in vt else []
    announced = _announced(vt, context) if context is not None or "\n" in vt else iter(())
    for rank, gen in enumerate((_pem(vt), _formats(vt), itertools.chain(_assignments(vt), _markup(vt)),
                                _passwords(vt, context), itertools.chain(_entropy_tokens(vt), announced))):
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
    out: list[SecretMatch] = []
    for s in kept:
        if s.kind == "marker":
            continue
        end = s.end
        if end < len(vt) and (vt[end].isascii() and (vt[end].isalnum() or vt[end] == "_")):
            c = _CONTINUES.match(vt, end)  # cut by a length cap: the rest of the token goes too
            end = c.end() if c else end
        start, stop = view.orig(s.start, end)
        if out and start < out[-1].end:  # the extension reached the next match: one span
            out[-1] = SecretMatch(out[-1].kind, out[-1].start, max(stop, out[-1].end))
            continue
        out.append(SecretMatch(s.kind, start, stop))
    return out


def has_secrets(text: str, *, context: str | None = None) -> bool:
    """Whether :func:`find_secrets` finds anything in ``text`` (``context``: see there)."""
    return bool(find_secrets(text, context=context))


def redact(text: str, *, keep_lines: bool = False, context: str | None = None) -> tuple[str, int]:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``.

    Assignments and prose keep their key word (``password=[REDACTED:password]``,
    ``my password is [REDACTED:password]``) so the text still reads naturally. Idempotent.

    Args:
        text: Any free text.
        keep_lines: Keep the line structure of a redacted span (a PEM block): each further line
            becomes its indentation and ``…``, so line numbers and indented entry continuations of
            the rest of the text stay as they were (used when indexing files by line).
        context: The previous user message when ``text`` is a message (see :func:`find_secrets`).

    Returns:
        The redacted text and how many secrets were replaced.
    """
    matches = find_secrets(text, context=context)
    return redact_found(text, matches, keep_lines=keep_lines), len(matches)


def redact_found(text: str, matches: Sequence[SecretMatch], *, keep_lines: bool = False) -> str:
    """``text`` with the secrets :func:`find_secrets` found in it (``matches``) replaced as :func:`redact`
    replaces them: for a caller that also needs the values, so the text is scanned once."""
    if not matches:
        return text
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
    return "".join(out)


def without_markers(text: str) -> str:
    """``text`` with every redaction marker (``[REDACTED:password]``) replaced by a space: what it
    says besides the secrets it held."""
    return _MARKER.sub(" ", text)


def redact_part(text: str, start: int, end: int) -> tuple[str, bool]:
    """``text[start:end]`` redacted as it reads inside ``text`` (a cue before ``start`` counts:
    "wifi password, remember: V" → ``V`` is redacted in the part after "remember: "), and whether
    anything was. A secret that runs past ``end`` is replaced to ``end``."""
    out: list[str] = []
    pos = start
    hit = False
    for s in find_secrets(text):
        if s.end <= start or s.start >= end:
            continue
        out.append(text[pos:max(pos, s.start)])
        out.append(f"{MARKER_PREFIX}{s.kind}]")
        pos = min(max(pos, s.end), end)
        hit = True
    out.append(text[pos:end])
    return "".join(out), hit


def redact_secrets(text: str, *, context: str | None = None) -> str:
    """:func:`redact` without the count."""
    return redact(text, context=context)[0]


def redact_assigned(name: str, value: str) -> str:
    """``value`` redacted as it would be in ``name=value``: a value stored under a secret's name
    (``db_password``, ``api_key``, ``пароль``) is redacted even when it has no secret's shape.

    Args:
        name: The name the value is stored under (a state field, a setting).
        value: Its text.

    Returns:
        The value, redacted by the same rules as an assignment in free text.
    """
    head = f"{name}="
    red = redact_secrets(head + value)
    return red[len(head):] if red.startswith(head) else redact_secrets(value)


_PATH_SUFFIX = re.compile(r"(?:\.[A-Za-z0-9]{1,8})?(?::[0-9]{1,9}-[0-9]{1,9}|#e:[0-9]{1,12}(?:-[0-9]{1,12})?)?$")


def redact_path(path: str) -> str:
    """A file path (or a ``path:start-end`` / ``path#e:12`` location) as it may be shown: a secret in
    a file or folder name (``memory/ghp_….md``, ``memory/password is ….md``) redacted, the
    extension and the line or event suffix kept, so the location still reads as one.

    Args:
        path: A relative path or location.

    Returns:
        The path with every secret in it replaced by ``[REDACTED:<kind>]``.
    """
    m = _PATH_SUFFIX.search(path)
    cut = m.start() if m else len(path)
    head, tail = path[:cut], path[cut:]
    # name by name, so a secret's mask never takes its folder with it ("memory/" + a token read as
    # one high-entropy run was "[REDACTED:high_entropy]"); then the whole, for one that spans a "/"
    red = redact_secrets("/".join(redact_secrets(part) for part in head.split("/")))
    return path if red == head else red + tail


def redact_values(text: str, values: Sequence[str]) -> str:
    """``text`` with each literal occurrence of a secret value (a reply quoting the password the
    user sent, which only the conversation marks as one) replaced by a marker. Values shorter than
    six characters are left alone (a short PIN matches too much ordinary text)."""
    for v in sorted({v for v in values if len(v) >= 6}, key=len, reverse=True):
        if v in text:
            text = text.replace(v, f"{MARKER_PREFIX}password]")
    return text
