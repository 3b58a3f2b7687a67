"""What a ``ui.bindings`` remap may name: the app's binding ids and the keys Textual can read.

Textual applies a keymap silently: an unknown binding id or a key name it cannot produce (a typo
such as ``ctrl+kk`` or ``f99``) just never fires. ``neotask doctor`` and the app's start report
such entries with :func:`keymap_problems` instead.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from functools import lru_cache

_MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})

# Every module of the app that declares bindings (their ids are what a keymap may name).
_BINDING_MODULES = (
    "neotask_tui.tui.app",
    "neotask_tui.tui.screens.compact_review",
    "neotask_tui.tui.screens.context",
    "neotask_tui.tui.screens.help",
    "neotask_tui.tui.screens.inbox",
    "neotask_tui.tui.screens.modals",
    "neotask_tui.tui.screens.search",
    "neotask_tui.tui.screens.sessions",
    "neotask_tui.tui.widgets.prompt",
    "neotask_tui.tui.widgets.side",
    "neotask_tui.tui.widgets.transcript",
)


@lru_cache(1)
def binding_ids() -> frozenset[str]:
    """The ids of every binding the app declares (app, screens, widgets)."""
    from textual.binding import Binding

    ids: set[str] = set()
    for name in _BINDING_MODULES:
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if isinstance(obj, type) and obj.__module__ == name:
                for b in getattr(obj, "BINDINGS", ()):  # a class attribute of Textual's DOM classes
                    if isinstance(b, Binding) and b.id:
                        ids.add(b.id)
    return frozenset(ids)


@lru_cache(1)
def _key_names() -> frozenset[str]:
    from textual.keys import ASCII_KEY_NAMES, KEY_ALIASES, KEY_NAME_REPLACEMENTS, Keys

    names = ({k.value for k in Keys} | set(KEY_ALIASES) | set(KEY_NAME_REPLACEMENTS.values())
             | set(ASCII_KEY_NAMES.values()) | {"space", "tab", "enter", "escape", "backspace"})
    return frozenset(n for n in names if "+" not in n)


def key_problem(key: str) -> str | None:
    """Why Textual could never produce ``key`` (``None`` if it can)."""
    from textual.keys import key_to_character

    *mods, base = key.strip().lower().split("+")
    if not base or any(m not in _MODIFIERS for m in mods):
        return f"{key!r} is not a key (modifiers: {', '.join(sorted(_MODIFIERS))})"
    if len(base) == 1 or base in _key_names() or key_to_character(base) is not None:
        return None
    return f"{key!r} is not a key Textual knows (e.g. ctrl+k, f9, pageup, escape)"


def keymap_problems(bindings: Mapping[str, str], known: Iterable[str] | None = None) -> list[str]:
    """One line per ``ui.bindings`` entry that would never fire: an unknown id (with the closest
    real one) or a key that cannot be pressed. A value may list several keys, comma-separated."""
    import difflib

    ids = frozenset(known) if known is not None else binding_ids()
    out: list[str] = []
    for bid, keys in bindings.items():
        if bid not in ids:
            near = difflib.get_close_matches(bid, sorted(ids), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            out.append(f"ui.bindings: no binding has the id {bid!r}{hint}; the README lists the ids")
            continue
        for key in str(keys).split(","):
            why = key_problem(key)
            if why:
                out.append(f"ui.bindings.{bid}: {why}")
    return out
