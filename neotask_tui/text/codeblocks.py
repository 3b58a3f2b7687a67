"""Fenced code blocks of a Markdown text, numbered from the top (what ``/copy N`` counts).

A block opens with three or more backticks or tildes (up to three spaces of indent, an optional info
string) and closes with a fence of the same character at least as long, as CommonMark says; a block
left open runs to the end of the text (a reply cut off mid-block still has its block). Indented code
blocks are not counted: in a chat reply four spaces are more often a list's continuation than code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One fenced block: its language (the info string's first word, "" if none) and its text."""

    lang: str
    text: str


def code_blocks(markdown: str) -> list[CodeBlock]:
    """The fenced code blocks of ``markdown`` in order (block 1 first)."""
    out: list[CodeBlock] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if m is None or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        fence = m["fence"]
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            body.append(lines[i])
            i += 1
        i += 1  # past the closing fence (or the end)
        words = m["info"].split()
        out.append(CodeBlock(lang=words[0] if words else "", text="\n".join(body)))
    return out
