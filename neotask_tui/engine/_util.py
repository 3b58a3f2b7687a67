"""Small helpers shared by the Engine's modules."""

from __future__ import annotations

import importlib
from typing import Any

from neotask_tui.storage.index import SessionRecord


def clean_text(text: str) -> str:
    """Make user text storable: lone surrogates become U+FFFD (everything else is kept as is)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def optional(module: str, attr: str) -> Any:
    """A feature class if its module exists (features land independently)."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name == module:
            return None
        raise
    return getattr(mod, attr, None)


def totals(rec: SessionRecord) -> dict[str, Any]:
    c = rec.counters
    return {"input": c.input, "output": c.output, "cache_read": c.cache_read, "cache_write": c.cache_write,
            "cost_usd": c.cost_usd, "estimated_turns": c.estimated_turns}
