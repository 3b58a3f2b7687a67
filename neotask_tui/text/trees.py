"""JSON-like data (dicts, lists, tuples, strings, numbers) with a function applied to every string."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def map_strings(obj: Any, fn: Callable[[str], str]) -> Any:
    """``obj`` with ``fn`` applied to every string in it, mapping keys included; a tuple becomes a
    list, anything else is kept as it is."""
    if isinstance(obj, str):
        return fn(obj)
    if isinstance(obj, dict):
        return {map_strings(k, fn): map_strings(v, fn) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [map_strings(v, fn) for v in obj]
    return obj
