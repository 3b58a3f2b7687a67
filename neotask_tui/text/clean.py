"""Text a user typed, made storable."""

from __future__ import annotations


def clean_text(text: str) -> str:
    """Make user text storable: lone surrogates become U+FFFD (everything else is kept as is)."""
    if storable(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def storable(text: str) -> bool:
    """Whether ``text`` is storable as it is (no lone surrogate: valid UTF-8 once encoded)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
