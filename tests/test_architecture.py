"""Layering rules: only ``neotask_tui/tui/`` may import textual."""

from __future__ import annotations

import ast
from pathlib import Path

import neotask_tui

PKG = Path(neotask_tui.__file__).resolve().parent


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


def test_tui_modules_stay_small() -> None:
    big = [f"{p.relative_to(PKG)}: {n}" for p in (PKG / "tui").rglob("*.py")
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500]
    assert big == []


def test_every_screen_has_its_stylesheet() -> None:
    screens = [p for p in (PKG / "tui" / "screens").glob("*.py") if p.name != "__init__.py"]
    assert screens
    missing = [p.name for p in screens if not p.with_suffix(".tcss").exists()]
    assert missing == []
