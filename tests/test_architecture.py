"""Boundaries of the package, checked on its import graph (``ast``, every import statement).

Every ``import``/``from … import`` of our own modules counts: at module level, inside functions
(a function-level import is still a dependency; hiding a cycle behind one does not remove it) and
under ``TYPE_CHECKING`` (a type a module needs is a dependency too). Two rules:

1. **No import cycles** between modules of the package.
2. **Layer order**: a module imports only modules of its own layer or of the layers below it
   (:data:`LAYERS`, lowest first). Inside ``engine`` and ``memory`` the sub-packages are layered the
   same way (:data:`SUBLAYERS`).

Size is not the measure (there is no line limit); boundaries are. Only ``neotask_tui/tui/`` may
import textual.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import neotask_tui

PKG = Path(neotask_tui.__file__).resolve().parent
ROOT = PKG.name

LAYERS: list[tuple[str, ...]] = [
    ("__init__", "errors"),  # the version string; the one error type a user sees
    ("paths",),
    ("config", "tuning"),  # user settings with ranges; tuned constants (imports nothing of ours)
    ("text",),  # pure text tools: tokens, redaction, lexical terms + BM25, terminal safety
    ("storage",),  # transcripts, session index, the one-writer lock
    ("providers",),  # model wire protocols + the model/price table
    ("memory",),  # long-term memory: files, index, search, forget, watcher, service
    ("engine",),  # sessions, turns, context, compaction, state, recall, the Engine facade
    ("commands",),  # slash commands as typed intents (no UI)
    ("repl", "tui"),  # the two front ends
    ("cli",),  # `neotask …` (starts either front end)
    ("__main__",),
]
"""The package's layers, lowest first: a module imports only its own layer and the layers below."""

SUBLAYERS: dict[str, list[tuple[str, ...]]] = {
    "engine": [
        ("ports",),  # the seams the parts depend on (Protocols)
        ("language",),  # what a statement means (classifier, constraints)
        ("context",),  # assembly with its ledger, fences
        ("events",),  # what the engine yields (typed payloads: the ledger, usage, counters)
        ("state",),  # session state, its tools, the promotion inbox
        ("compaction",),  # compactor, summary, guard, extractive
        ("recall",),  # memory recall, recall of compacted-away turns
        ("session",),  # routing, lifecycle, the turn runner
        ("facade",),  # the Engine: wires the parts
    ],
    "memory": [
        ("types", "files"),
        ("search",),
        ("index",),
        ("forget", "watcher", "tools"),
        ("service",),
        ("archived",),  # archived transcripts into the index (the engine's recall, `neotask memory`)
        ("__init__",),
    ],
}
"""Layers inside a package (sub-package or module names, lowest first)."""


def _module_name(path: Path, pkg: Path = PKG) -> str:
    rel = path.relative_to(pkg.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(pkg: Path = PKG) -> dict[str, Path]:
    return {_module_name(p, pkg): p for p in pkg.rglob("*.py")}


def imports_of(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """Our modules that ``path`` (module ``name``) imports, wherever the import statement stands."""
    known = set(known)
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == ROOT}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != ROOT:
                continue
            for a in node.names:
                out.add(f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod)
    return {m for m in out if m in known and m != name}


def graph(pkg: Path = PKG) -> dict[str, set[str]]:
    mods = _modules(pkg)
    return {name: imports_of(name, path, mods) for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def _rank(name: str, layers: list[tuple[str, ...]], depth: int) -> int | None:
    parts = name.split(".")
    part = parts[depth] if len(parts) > depth else "__init__"
    for i, layer in enumerate(layers):
        if part in layer:
            return i
    return None


def layer_violations(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for a, targets in sorted(edges.items()):
        for b in sorted(targets):
            ra, rb = _rank(a, LAYERS, 1), _rank(b, LAYERS, 1)
            if ra is None or rb is None:
                bad.append(f"{a} -> {b}: not in LAYERS")
                continue
            if rb > ra:
                bad.append(f"{a} -> {b}: against the layer order")
                continue
            top_a, top_b = [*a.split("."), ""][1], [*b.split("."), ""][1]
            if top_a == top_b and top_a in SUBLAYERS:
                sa, sb = _rank(a, SUBLAYERS[top_a], 2), _rank(b, SUBLAYERS[top_a], 2)
                if sa is None or sb is None:
                    bad.append(f"{a} -> {b}: not in SUBLAYERS[{top_a!r}]")
                elif sb > sa:
                    bad.append(f"{a} -> {b}: against the layer order inside {top_a}")
    return bad


def test_the_walk_covers_the_package() -> None:
    edges = graph()
    assert len(edges) > 80
    assert "neotask_tui.engine.facade" in edges
    assert "neotask_tui.engine.session.turn" in edges["neotask_tui.engine.facade"]


def test_no_import_cycles() -> None:
    assert cycles(graph()) == []


def test_imports_follow_the_layer_order() -> None:
    assert layer_violations(graph()) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / ROOT
    for rel, text in files.items():
        p = pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return pkg


def test_the_checks_catch_cycles_hidden_in_functions_and_type_checking(tmp_path: Path) -> None:
    pkg = _tree(tmp_path, {
        "__init__.py": "",
        "engine/__init__.py": "",
        "engine/a.py": "def f():\n    from neotask_tui.engine import b\n",
        "engine/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from neotask_tui.engine.a import f\n",
        "engine/c.py": "from . import d\n",
        "engine/d.py": "from .c import x\n",
    })
    found = cycles(graph(pkg))
    assert ["neotask_tui.engine.a", "neotask_tui.engine.b"] in found
    assert ["neotask_tui.engine.c", "neotask_tui.engine.d"] in found


def test_the_checks_catch_imports_against_the_layers(tmp_path: Path) -> None:
    pkg = _tree(tmp_path, {
        "__init__.py": "",
        "text/__init__.py": "",
        "text/t.py": "from neotask_tui.engine.events import X\n",  # text below engine
        "engine/__init__.py": "",
        "engine/events.py": "X = 1\n",
        "engine/context/__init__.py": "",
        "engine/context/assembly.py": "import neotask_tui.engine.facade\n",  # context below facade
        "engine/facade.py": "from neotask_tui.engine.context.assembly import *\n",
        "engine/mystery.py": "",
        "engine/state/__init__.py": "from neotask_tui.engine import mystery\n",
    })
    bad = layer_violations(graph(pkg))
    assert "neotask_tui.text.t -> neotask_tui.engine.events: against the layer order" in bad
    assert ("neotask_tui.engine.context.assembly -> neotask_tui.engine.facade: against the layer order"
            " inside engine") in bad
    assert "neotask_tui.engine.state -> neotask_tui.engine.mystery: not in SUBLAYERS['engine']" in bad
    assert not any("facade -> " in b for b in bad)


def _textual_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{path}:{node.lineno}: import {a.name}" for a in node.names
                      if a.name == "textual" or a.name.startswith("textual.")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                node.module == "textual" or node.module.startswith("textual.")):
            found.append(f"{path}:{node.lineno}: from {node.module} import …")
    return found


def test_no_textual_import_outside_tui() -> None:
    modules = [p for p in PKG.rglob("*.py") if "tui" not in p.relative_to(PKG).parts[:1]]
    assert len(modules) > 20  # the walk really covers the package
    offenders = [hit for p in modules for hit in _textual_imports(p)]
    assert offenders == []


def test_the_check_catches_textual_imports(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom textual.app import App\nimport textual\n", encoding="utf-8")
    assert len(_textual_imports(bad)) == 2


def test_every_screen_has_its_stylesheet() -> None:
    screens = [p for p in (PKG / "tui" / "screens").glob("*.py") if p.name != "__init__.py"]
    assert screens
    missing = [p.name for p in screens if not p.with_suffix(".tcss").exists()]
    assert missing == []
