"""The layout of the test suite: no module under ``tests/`` imports a test module (``test_*.py``) or a
``conftest.py``; shared helpers live in support modules (``tests/doubles.py``, ``tests/engine/*_support.py``,
...) and shared fixtures in ``conftest.py``. Every import statement counts, also inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _is_forbidden(dotted: str, root: Path) -> bool:
    """Whether ``dotted`` names a test module or a conftest inside the tree at ``root``."""
    parts = dotted.split(".")
    if parts[0] != root.name:
        return False
    file = root.parent.joinpath(*parts).with_suffix(".py")
    return file.is_file() and (file.name.startswith("test_") or file.name == "conftest.py")


def _imported(node: ast.Import | ast.ImportFrom, module_parts: tuple[str, ...]) -> list[str]:
    """Every dotted name an import statement may load (for ``from x import y``: ``x`` and ``x.y``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base_parts = list(module_parts[:-node.level])
        if node.module:
            base_parts += node.module.split(".")
        base = ".".join(base_parts)
    else:
        base = node.module or ""
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def imports_of_test_modules(root: Path) -> list[str]:
    """``path:line imports name`` for every import under ``root`` of a test module or a conftest."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module_parts = path.relative_to(root.parent).with_suffix("").parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for name in _imported(node, module_parts):
                    if _is_forbidden(name, root):
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno} imports {name}")
    return found


def test_no_test_module_imports_another() -> None:
    assert imports_of_test_modules(TESTS) == []


def test_the_check_finds_every_kind_of_import(tmp_path: Path) -> None:
    root = tmp_path / "tests"
    (root / "a").mkdir(parents=True)
    for init in (root / "__init__.py", root / "a" / "__init__.py"):
        init.write_text("")
    (root / "a" / "test_two.py").write_text("X = 1\n")
    (root / "a" / "conftest.py").write_text("")
    (root / "a" / "support.py").write_text("from tests.a.test_two import X\n")
    (root / "a" / "test_ok.py").write_text(
        "from tests.a.support import X\nimport tests.a.support\nfrom tests import a\nimport os\n"
    )
    (root / "a" / "test_one.py").write_text(
        "from tests.a.test_two import X\n"
        "from .test_two import X as Y\n"
        "from . import test_two\n"
        "from tests.a import conftest\n"
        "def f() -> None:\n"
        "    import tests.a.test_two\n"
    )
    assert imports_of_test_modules(root) == [
        "tests/a/support.py:1 imports tests.a.test_two",
        "tests/a/test_one.py:1 imports tests.a.test_two",
        "tests/a/test_one.py:2 imports tests.a.test_two",
        "tests/a/test_one.py:3 imports tests.a.test_two",
        "tests/a/test_one.py:4 imports tests.a.conftest",
        "tests/a/test_one.py:6 imports tests.a.test_two",
    ]
