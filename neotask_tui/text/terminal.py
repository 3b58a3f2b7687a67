"""Text made safe to show in a terminal: control characters become visible and inert.

A reply, a transcript, a memory file or a file name can carry escape sequences: OSC 52 writes the
clipboard, OSC 0/2 renames the window, CSI 2J clears the screen, CSI 6n makes the terminal type a
reply into our input, a DCS/APC/PM/SOS string can reach terminal-specific handlers, and the 8-bit C1
forms (``\\x9b`` is CSI) do the same without an ESC. Bidi overrides (U+202A–202E, U+2066–2069) make
text read in a different order than it is stored. Every display path (CLI plain output, the REPL,
the TUI) shows text through :func:`inert`; what is *stored* is never changed.

- C0 controls except ``\\n`` and ``\\t`` become their Control Pictures (ESC → ``␛``, BEL → ``␇``,
  CR → ``␍``), DEL → ``␡``; a CRLF line ending stays a plain line break.
- C1 controls (U+0080–U+009F) and the bidi overrides/isolates become ``\\x9b`` / ``\\u202e`` spelled
  out in ASCII (there are no pictures for them).

Machine output keeps exact values: :func:`inert_json` escapes the same characters as ``\\uXXXX``
inside JSON text (``json.dumps`` already escapes C0), so a parser reads back the stored string.
"""

from __future__ import annotations

import re
from typing import Any

from neotask_tui.text.trees import map_strings

_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
"""LRE RLE PDF LRO RLO and LRI RLI FSI PDI: the "Trojan Source" reordering controls."""

_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_TABLE[0x7F] = "\u2421"
_TABLE.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_TABLE.update({c: f"\\u{c:04x}" for c in _BIDI})

_UNSAFE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_TABLE)) + "]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f" + "".join(chr(c) for c in _BIDI) + "]")


def is_inert(text: str) -> bool:
    """Whether ``text`` holds no character a terminal would act on (``\\n`` and ``\\t`` aside)."""
    return _UNSAFE.search(text) is None


def inert(text: str) -> str:
    """``text`` with every terminal control made visible and inert (see the module docstring).

    Linear in the length of ``text``; text without controls is returned as it is.
    """
    if _UNSAFE.search(text) is None:
        return text
    return text.replace("\r\n", "\n").translate(_TABLE)


_CONTROL_CODES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[ -/]*[0-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def without_controls(text: str) -> str:
    """``text`` with its terminal escape sequences (OSC, CSI, others) and control characters (``\\n``
    and ``\\t`` aside) removed: for readers of what a text *says* (the statement classifier), where
    :func:`inert` is for showing it."""
    return _CONTROL_CODES.sub("", text)


_ZERO_WIDTH = (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF)
"""Zero-width space, non-joiner, joiner, word joiner and BOM: in a name they make two names look
alike ("MEMO\u200bRY.md"); in message text they stay (a joiner is part of many emoji)."""
_LINE_TABLE: dict[int, str] = {**_TABLE, 0x09: "\u2409", 0x0A: "\u240a",
                               **{c: f"\\u{c:04x}" for c in _ZERO_WIDTH}}
_LINE_UNSAFE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_LINE_TABLE)) + "]")


def inert_line(text: str) -> str:
    """:func:`inert`, and a line break or tab made visible too (``␊``, ``␉``), and a zero-width
    character (``\\u200b``): for a name (a file's, a path) shown on one line, which must not forge the
    lines after it nor pass for another name."""
    if _LINE_UNSAFE.search(text) is None:
        return text
    return text.translate(_LINE_TABLE)


def inert_data(obj: Any) -> Any:
    """``obj`` (JSON-like: dicts, lists, tuples, strings, numbers) with :func:`inert` applied to
    every string, keys included, for a human-readable dump."""
    return map_strings(obj, inert)


def inert_json(dumped: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with DEL, C1 controls and bidi
    overrides escaped as ``\\uXXXX``: the same JSON value, safe to print. These characters can
    only occur inside JSON strings, so escaping them keeps the document valid and exact."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)
