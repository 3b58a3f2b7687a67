"""Fences around untrusted text in the context: quoted data that can neither close nor open a fence.

Recalled memories, tool results, attached files and the rolling summary reach the model inside tags
(``<recalled-memory source="…" scope="…" id="…">``, ``<tool-output name="…">``, ``<attached-file path="…">``,
``<conversation-summary>``). Two rules keep the data inside:

- attribute values (a memory file name, a scope, a tool name) are escaped as in XML, and so is
  every control, format (zero-width, bidi), line-break and bracket-like character, so a value can
  never end its tag or add an attribute;
- in a body, every opening bracket that a forgiving reader could take for the start of one of our
  tags is replaced by ``[`` (the text stays readable, the tag is gone). The body is read as such a
  reader would, as a *skeleton*:

  * escapes are decoded first: HTML/XML entities (``&lt;``, ``&#60;``, ``&#x3c;``, ``&amp;lt;``,
    ``&lang;``…, also behind a percent-encoded ampersand: ``%26lt;``), backslash escapes (``\n``,
    ``\t``, ``\u003c``, ``\\u{3c}``, ``\x3c``, surrogate pairs —
    a JSON tool result is read as the text it encodes) and percent escapes (``%3C``), decoded again
    until nothing changes (``%253C``, ``%25%33%43``; at most :data:`_PCT_ROUNDS` times), a run of
    them read as UTF-8 as a browser reads a URL (``%EF%BC%9C`` is ``＜``, FULLWIDTH LESS-THAN SIGN;
    a byte that is part of no valid sequence is dropped), also ``%u003C`` as JavaScript's
    ``unescape()`` reads it, and quoted-printable ``=3C`` (``=3D3C``) — only that one: any other
    ``=XX`` stays text;
  * every character is folded: NFKD, combining marks (accents) dropped, case folded, Unicode TR39
    confusables of the letters of our tag names mapped to those letters (Cyrillic, Greek,
    Armenian, Cherokee, Lisu, math alphanumerics…), ``1``/``I``/``|`` read as ``l``, ``0`` as
    ``o``, ``rn`` as ``m``, ``cl`` as ``d``;
  * an opening bracket is ``<`` or any character that looks like one: its NFKC form or TR39
    confusable is ``<``, or it is a non-ASCII opening bracket (category Ps), or a left-pointing
    angle/arrowhead/less-than quotation mark, symbol or modifier;
  * everything else that is not a letter or a digit (spaces of any length, punctuation, slashes,
    dashes, default-ignorable characters such as zero-width joiners or Hangul fillers, controls)
    is a separator and dropped; a letter of another script is kept as a letter, so it breaks a
    name.

  A bracket followed, in the skeleton, by ``recalledmemory``, ``tooloutput`` or
  ``conversationsummary`` is neutralised. Building the skeleton and matching it are linear in the
  length of the body.

Pure functions; no I/O.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from typing import Final

FENCE_TAGS: Final = ("recalled-memory", "tool-output", "conversation-summary", "attached-file")
"""Every tag the engine fences untrusted text with."""

NEUTRAL: Final = "["
"""What a neutralised opening bracket becomes."""

# Characters a reader may take for "<", ">", "/" or '"' in an attribute value.
_LOOKALIKE: Final = {
    "\u2039": "<", "\u3008": "<", "\u27e8": "<", "\u276e": "<", "\u02c2": "<", "\u1438": "<", "\u2329": "<",
    "\u16b2": "<", "\U0001d236": "<",
    "\u203a": ">", "\u3009": ">", "\u27e9": ">", "\u276f": ">", "\u02c3": ">", "\u1433": ">", "\u232a": ">",
    "\U00016f3f": ">", "\U0001d237": ">",
    "\u2044": "/", "\u2215": "/", "\u29f8": "/", "\u2571": "/",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
}
_OPENERS: Final = frozenset(c for c, t in _LOOKALIKE.items() if t == "<")

# Unicode TR39 confusables (confusables.txt) of the letters in our tag names that NFKD + case folding
# do not already turn into those letters, plus small capitals; ``i`` is read as ``l``.
_CONFUSABLES: Final = {
    "a": "ɑΑαАаᎪᗅ⍺ꓮ𐊠𖽀𝚨𝛂𝛢𝛼𝜜𝜶𝝖𝝰𝞐𝞪",
    "c": "ϲϹСсᏟᴄⲤⲥꓚꮯ𐊢𐌂𐐕𐐽𐔜𑣩𑣲🝌",
    "d": "ԁᎠᏧᑯᗞᗪꓒꓓ",
    "e": "ΕЕеҽᎬ℮⋿ⴹꓰꬲ𐊆𑢦𑢮𝚬𝛦𝜠𝝚𝞔",
    "l": "ıƖǀɩɪ˛ͺΙιІіӀӏ\u05c0\u05d5\u05df\u0627\u0661۱\u07caᎥᏞᒪᛁι∣⍳⏽ⲒⳐⵏꓡꓲꙇꭵ\ufe8d\ufe8e￨𐊊𐌉"
         "𐌠𐐛𐔦𑢣𑢲𑣃𖼖𖼨𝈪𝚤𝚰𝛊𝛪𝜄𝜤𝜾𝝞𝝸𝞘𝞲\U0001e8c7\U0001ee00\U0001ee80",
    "m": "ΜϺМᎷᗰᛖⲘꓟ𐊰𐌑𝚳𝛭𝜧𝝡𝞛",
    "n": "ΝոռⲚꓠ𐔓𝚴𝛮𝜨𝝢𝞜",
    "o": "ΟοσОоՕօ\u05e1\u0647\u0665\u06be\u06c1\u06d5۵\u07c0०০੦૦ଠ୦௦\u0c02౦\u0c82೦\u0d02ഠ൦"
         "\u0d82๐໐ဝ၀ჿዐᴏᴑⲞⲟⵔ〇ꓳꬽ\ufba6\ufba7\ufba8\ufba9\ufbaa\ufbab\ufbac\ufbad\ufee9\ufeea"
         "\ufeeb\ufeec𐊒𐊫𐐄𐐬𐓂𐓪𐔖𑓐𑢵𑣈𑣗𑣠𝚶𝛐𝛔𝛰𝜊𝜎𝜪𝝄𝝈𝝤𝝾𝞂𝞞𝞸𝞼\U0001ee24\U0001ee64\U0001ee84",
    "p": "ΡρϱРрᏢᑭ⍴Ⲣⲣꓑ𐊕𝚸𝛒𝛠𝛲𝜌𝜚𝜬𝝆𝝔𝝦𝞀𝞎𝞠𝞺𝟈",
    "r": "ƦгᎡᏒᖇᴦⲅꓣꭇꭈꮁ𐒴𖼵𝈖",
    "s": "ƽЅѕՏᏕᏚꓢꜱꮪ𐊖𐐠𐑈𑣁𖼺",
    "t": "ΤТᎢ⊤⟙Ⲧꓔ𐊗𐊱𐌕𑢼𖼊𝚻𝛵𝜯𝝩𝞣🝨",
    "u": "ʋυՍսሀᑌᴜ∪⋃ꓴꞟꭎꭒ𐓎𐓶𑢸𑣘𖽂𝛖𝜐𝝊𝞄𝞾",
    "v": "νѴѵ\u05d8\u0667۷Ꮩᐯᴠ∨⋁ⴸꓦꛟꮩ𐔝𑜆𑢠𑣀𖼈𝈍𝛎𝜈𝝂𝝼𝞶",
    "y": "ɣʏΥγϒУуҮүყᎩᎽᶌỿℽⲨꓬꭚ𐊲𑢤𑣜𖽃𝚼𝛄𝛶𝛾𝜰𝜸𝝪𝝲𝞤𝞬",
}
_EXTRA: Final = {"a": "ᴀ", "d": "ᴅ", "e": "ᴇ", "l": "ʟ", "m": "ᴍм", "n": "ɴпηռ", "p": "ᴘ", "r": "ʀ", "t": "ᴛтτ",
                 "u": "и", "v": "ᴠ"}
_FOLD: Final = {c: t for t, cs in (*_CONFUSABLES.items(), *_EXTRA.items()) for c in cs}
_ASCII_CANON: Final = str.maketrans("i1|0", "lllo")
# Default-ignorable code points (DerivedCoreProperties.txt) that are not format/mark characters:
# Hangul fillers and the like render as nothing. (Cf, Mn, Me, Cc, Z* are dropped by category.)
_IGNORABLE: Final = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
                     (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
                     (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
_LEFT_NAME: Final = re.compile(r"LEFT|LESS-THAN|PRECEDES")

# One escape: an entity (behind any chain of encoded ampersands), a backslash escape (any number of
# backslashes; the lookbehind makes a run of backslashes cost one scan; ``\u{3c}`` as ES6 writes it) or
# a run of percent escapes, each a ``%``, itself encoded any number of times (``%25``, ``%2525``), and
# two hex digits, each plain or percent-encoded (``%253C``, ``%25%33%43``), decoded as a whole
# (``_percent_decoded``); the run's bytes are read as UTF-8 (``_percent_chars``).
_PCT_DIGIT: Final = r"(?:[0-9a-fA-F]|%(?:25)*(?:3[0-9]|[46][1-6]))"
_PCT_ONE: Final = re.compile(r"%(?:25)*" + _PCT_DIGIT + _PCT_DIGIT)
"""One percent escape: one byte, however often its ``%`` or its digits were encoded again."""
_ESCAPE: Final = re.compile(
    # an ampersand may itself be percent-encoded: ``%26lt;``, ``%2526lt;`` (red team 34)
    r"(?:&|%(?:25)*26)(?:(?:amp|#0*38|#[xX]0*26);)*(#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});?"
    r"|(?<!\\)\\+(u[0-9a-fA-F]{4}(?:\\+u[dD][c-fC-F][0-9a-fA-F]{2})?|u\{0*[0-9a-fA-F]{1,6}\}|U[0-9a-fA-F]{8}"
    r"|x[0-9a-fA-F]{2}|[0-7]{1,3}|[nrtfvbe/])"
    # JavaScript ``unescape()``'s (and IIS's) ``%u003C``, before ``%25`` alone is taken for a ``%``;
    # quoted-printable ``=3C`` (``=3D3C`` encoded again) read only as the bracket it stands for: other
    # ``=XX`` are ordinary text (red team 32)
    r"|%(?:25)*[uU]([0-9a-fA-F]{4})"
    r"|((?:" + _PCT_ONE.pattern + r")+)"
    r"|(=(?:3[dD])*3[cC])"
)
_PCT: Final = re.compile(r"%([0-9a-fA-F]{2})")
_PCT_CHAIN: Final = re.compile(r"%(?:25)+")
_PCT_ROUNDS: Final = 8
"""How many times a run of percent escapes is decoded again (a chain of ``%25`` counts once)."""


def _percent_decoded(run: str) -> str:
    """``run`` (one percent escape, ``_PCT_ONE``) percent-decoded until nothing changes, at most
    :data:`_PCT_ROUNDS` times (an encoded ``%``, ``%25``, however often encoded again, is one round):
    one character, a byte from 0x80 up standing for itself (U+0080–U+00FF) until
    :func:`_percent_chars` reads the run's bytes as UTF-8."""
    for _ in range(_PCT_ROUNDS):
        run = _PCT_CHAIN.sub("%", run)  # %2525253C is %3C after as many rounds as it has 25s
        decoded = _PCT.sub(lambda m: chr(int(m.group(1), 16)), run)
        if decoded == run:
            break
        run = decoded
    return run


def _utf8_length(lead: str) -> int:
    """How many bytes the UTF-8 sequence that the byte ``lead`` starts has (0: it starts none)."""
    b = ord(lead)
    return 2 if 0xC2 <= b <= 0xDF else 3 if 0xE0 <= b <= 0xEF else 4 if 0xF0 <= b <= 0xF4 else 0


def _is_byte(c: str) -> bool:
    """Whether a decoded escape is a byte from 0x80 up (see :func:`_percent_decoded`)."""
    return len(c) == 1 and "\x80" <= c <= "\xff"


def _percent_chars(run: str) -> list[tuple[int, int, str]]:
    """The characters a run of percent escapes stands for, each with the span of ``run`` it is read
    from. Each escape is one byte (:func:`_percent_decoded`); bytes from 0x80 up are read as UTF-8, as
    a browser reads a URL: a valid multi-byte sequence (``%EF%BC%9C``) is its character (``＜``), a
    byte that starts or continues none (a cut sequence, an overlong form, ``%FF``) is dropped."""
    escapes = [(m.start(), m.end(), _percent_decoded(m.group(0))) for m in _PCT_ONE.finditer(run)]
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(escapes):
        start, end, c = escapes[i]
        if not _is_byte(c):  # ASCII (or what is left after the last round): as it is
            out.append((start, end, c))
            i += 1
            continue
        n = _utf8_length(c)
        seq = escapes[i:i + n]
        if n and len(seq) == n and all(_is_byte(x[2]) for x in seq):
            try:
                out.append((start, seq[-1][1], bytes(ord(x[2]) for x in seq).decode("utf-8")))
            except UnicodeDecodeError:  # an overlong form, a surrogate: no character
                pass
            else:
                i += len(seq)
                continue
        i += 1  # no valid sequence starts here: the byte is dropped
    return out


def _canon(word: str) -> str:
    return word.translate(_ASCII_CANON)


def _name_pattern(tag: str) -> str:
    return "".join({"m": "(?:m|rn)", "d": "(?:d|cl)"}.get(c, c) for c in _canon(tag.replace("-", "")))


# A run of brackets (the lookbehind keeps a long run linear) followed by a tag name.
_OPENER: Final = re.compile(r"(?<!<)<+(?=" + "|".join(_name_pattern(t) for t in FENCE_TAGS) + ")")


def _ignorable(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _IGNORABLE)


@lru_cache(maxsize=4096)
def opens_tag(c: str) -> bool:
    """Whether a reader could take the character ``c`` for ``<``."""
    if c.isascii():
        return c == "<"
    n = unicodedata.normalize("NFKC", c)
    if n == "<" or c in _OPENERS:
        return True
    if n.isascii():
        return False
    cat = unicodedata.category(c)
    if cat == "Ps":
        return True
    name = unicodedata.name(c, "")
    if cat in ("Pi", "Sm", "So", "Sk") and _LEFT_NAME.search(name):
        return "QUOTATION MARK" not in name or "ANGLE" in name
    return False


def _fold_one(x: str) -> str:
    if x.isascii():
        if x.isalnum():
            return x.lower().translate(_ASCII_CANON)
        return "<" if x == "<" else "l" if x == "|" else ""
    if x in _FOLD:
        return _FOLD[x]
    cat = unicodedata.category(x)
    if cat == "Nd":
        return str(unicodedata.digit(x)).translate(_ASCII_CANON)
    return "?" if cat[0] in "LN" and not _ignorable(ord(x)) else ""


@lru_cache(maxsize=8192)
def _fold(c: str) -> str:
    """The skeleton of one character: ``<``, lowercase ASCII letters/digits, ``?`` (a letter of
    another script) or nothing (a separator)."""
    if c.isascii():
        return _fold_one(c)
    if _ignorable(ord(c)):
        return ""
    if c in _FOLD:
        return _FOLD[c]
    if opens_tag(c):
        return "<"
    cat = unicodedata.category(c)
    if cat[0] in "CZM":
        return ""
    d = "".join(x for x in unicodedata.normalize("NFKD", c) if not unicodedata.combining(x)).casefold()
    return "".join(_fold_one(x) for x in d)


def _decoded(m: re.Match[str]) -> list[tuple[int, int, str]]:
    """What an escape stands for, piece by piece, each with the span of the text it is read from: one
    piece, or one per character of a run of percent escapes (:func:`_percent_chars`)."""
    if m.group(4) is None:
        return [(m.start(), m.end(), _decode(m))]
    return [(m.start() + lo, m.start() + hi, c) for lo, hi, c in _percent_chars(m.group(4))]


def _decode(m: re.Match[str]) -> str:
    """The text an escape other than a run of percent escapes stands for ('' for a line break, tab or
    other control escape)."""
    ent, bs, uni, _pct, qp = m.groups()
    if uni is not None:
        return chr(int(uni, 16))
    if qp is not None:
        return "<"
    if ent is not None:
        got = html.unescape(f"&{ent};")
        return m.group(0) if got == f"&{ent};" else got
    assert bs is not None
    kind = bs[0]
    if bs.startswith("u{"):
        cp = int(bs[2:-1], 16)
        return chr(cp) if cp <= 0x10FFFF else ""
    if kind in "uU":
        hexes = re.findall(r"[uU]([0-9a-fA-F]+)", bs)
        cps = [int(h, 16) for h in hexes]
        if len(cps) == 2:
            return chr(0x10000 + ((cps[0] - 0xD800) << 10) + (cps[1] - 0xDC00)) if 0xD800 <= cps[0] < 0xDC00 \
                else chr(cps[0]) + chr(cps[1])
        return chr(cps[0]) if cps[0] <= 0x10FFFF else ""
    if kind == "x":
        return chr(int(bs[1:], 16))
    if kind in "01234567":
        return chr(int(bs, 8))
    return "/" if kind == "/" else ""


def _skeleton(text: str, depth: int = 0) -> tuple[list[str], list[tuple[int, int]]]:
    """``text`` as a forgiving reader sees it, one entry per skeleton piece, with the span of
    ``text`` each piece came from."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []

    def literal(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            s = _fold(text[i])
            if s:
                out.append(s)
                spans.append((i, i + 1))

    prev = 0
    for m in _ESCAPE.finditer(text):
        literal(prev, m.start())
        prev = m.end()
        if depth >= 3:
            literal(m.start(), m.end())
            continue
        for lo, hi, decoded in _decoded(m):
            if decoded == text[lo:hi]:
                literal(lo, hi)
                continue
            inner, _ = _skeleton(decoded, depth + 1)
            for s in inner:
                out.append(s)
                spans.append((lo, hi))
    literal(prev, len(text))
    return out, spans


def skeleton(text: str) -> str:
    """``text`` as a forgiving reader sees it (see the module docstring)."""
    return "".join(_skeleton(text)[0])


def neutralise_tags(body: str) -> str:
    """``body`` with every opening bracket (character, look-alike, entity or escape) that starts
    something a reader could take for one of our fence tags replaced by ``[``; nothing else
    changes. Idempotent; linear in ``len(body)``."""
    if body.isascii() and not any(c in body for c in "<&\\%="):
        return body
    pieces, spans = _skeleton(body)
    # Pieces are one character except for an expansion (``ﬀ`` → ``ff``): index characters to spans.
    flat: list[tuple[int, int]] = []
    for s, sp in zip(pieces, spans, strict=True):
        flat.extend([sp] * len(s))
    hits: dict[int, int] = {}
    for m in _OPENER.finditer("".join(pieces)):
        for k in range(m.start(), m.end()):
            lo, hi = flat[k]
            hits[lo] = hi
    if not hits:
        return body
    parts: list[str] = []
    prev = 0
    for lo in sorted(hits):
        if lo < prev:
            continue
        parts += [body[prev:lo], NEUTRAL]
        prev = hits[lo]
    parts.append(body[prev:])
    return "".join(parts)


def _needs_ref(c: str) -> bool:
    if c in "&<>\"'":
        return True
    if c.isascii():
        return not c.isprintable()
    if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Mn", "Me") or c in _LOOKALIKE:
        return True
    if _ignorable(ord(c)) or opens_tag(c):
        return True
    return any(x in "&<>\"'/" for x in unicodedata.normalize("NFKC", c))


def escape_attr(value: str) -> str:
    """An attribute value that cannot end its tag: XML escapes for ``& < > " '``, and a numeric
    reference for every control, format, line-break, default-ignorable and bracket/quote
    look-alike character (an XML 1.1 reader gives the value back; ``html.unescape`` turns C0
    controls into U+FFFD)."""
    named = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
    return "".join((named.get(c) or f"&#x{ord(c):x};") if _needs_ref(c) else c for c in value)


def fence(tag: str, body: str, **attrs: str) -> str:
    """``body`` inside ``<tag attrs…>`` … ``</tag>``, attributes escaped and look-alike tags in the
    body neutralised."""
    head = "".join(f' {k}="{escape_attr(v)}"' for k, v in attrs.items())
    return f"<{tag}{head}>\n{neutralise_tags(body)}\n</{tag}>"
