"""The keymap check knows every binding the app declares, and every key the app itself uses passes."""

from __future__ import annotations

import importlib
from pathlib import Path

from textual.binding import Binding

import neotask_tui
from neotask_tui.tui import keymap

TUI = Path(neotask_tui.__file__).resolve().parent / "tui"


def test_every_module_with_bindings_is_scanned() -> None:
    declaring = {"neotask_tui." + ".".join(p.relative_to(TUI.parent).with_suffix("").parts)
                 for p in TUI.rglob("*.py") if "Binding(" in p.read_text(encoding="utf-8")}
    assert declaring <= set(keymap._BINDING_MODULES), declaring - set(keymap._BINDING_MODULES)


def test_the_apps_own_keys_and_ids_pass() -> None:
    own: dict[str, str] = {}
    for name in keymap._BINDING_MODULES:
        for obj in vars(importlib.import_module(name)).values():
            for b in getattr(obj, "BINDINGS", ()) if isinstance(obj, type) else ():
                if isinstance(b, Binding) and b.id:
                    own[b.id] = b.key
    assert {"compact", "sessions", "retry", "copy_message", "search_resume"} <= set(own)
    assert keymap.keymap_problems(own) == []
    assert keymap.keymap_problems({"compact": "ctrl+k", "sessions": "hyper+x"}) == []
    assert keymap.keymap_problems({"compact": "cmd+k"}) == ["ui.bindings.compact: 'cmd+k' is not a key (modifiers: "
                                                             "alt, ctrl, hyper, meta, shift, super)"]
