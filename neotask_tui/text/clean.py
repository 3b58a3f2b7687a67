"""Text a user typed, made storable."""

from __future__ import annotations


def clean_text(text: str) -> str:
    """Make user text storable: lone surrogates become U+FFFD (everything else is kept as is)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
