"""Themes: built-ins load and validate, user themes override by name, bad files are reported once,
and the wheel ships the theme files."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.themes import ThemeError, builtin_themes_dir, load_themes, parse_theme
from tests.tui.support import SIZE, wait_for

REPO = Path(__file__).resolve().parents[2]
REQUIRED = {"neotask-dark", "neotask-light", "neotask-high-contrast"}


def test_builtin_themes_load_and_validate() -> None:
    themes = load_themes(user_dir=Path("/nonexistent"))
    assert themes.errors == []
    assert set(themes.themes) >= REQUIRED
    assert themes.themes["neotask-light"].dark is False
    assert themes.themes["neotask-dark"].dark is True
    assert builtin_themes_dir().is_dir()


@pytest.mark.parametrize(("data", "problem"), [
    ({"name": "x", "colors": {"primary": "not-a-colour"}}, "not a colour"),
    ({"name": "x", "colors": {}}, "needs at least 'primary'"),
    ({"name": "Bad Name", "colors": {"primary": "#fff"}}, "'name'"),
    ({"name": "x", "colors": {"primary": "#fff", "sparkle": "#000"}}, "unknown colour"),
    ({"name": "x", "colors": {"primary": "#fff"}, "extra": 1}, "unknown key"),
    ({"name": "x", "colors": {"primary": "#fff"}, "dark": "yes"}, "'dark'"),
    ({"name": "x", "colors": {"primary": "#fff"}, "variables": {"border": "#zzzzzz"}}, "not a colour"),
])
def test_bad_themes_are_rejected_with_a_reason(data: dict[str, object], problem: str) -> None:
    with pytest.raises(ThemeError, match=problem):
        parse_theme(data, "t.toml")


def test_user_theme_overrides_builtin_and_bad_file_is_skipped(tmp_path: Path) -> None:
    user = tmp_path / "themes"
    user.mkdir()
    (user / "dark.toml").write_text('name = "neotask-dark"\n[colors]\nprimary = "#ff0000"\n', encoding="utf-8")
    (user / "broken.toml").write_text('name = "broken"\n[colors\n', encoding="utf-8")
    (user / "mine.toml").write_text('name = "mine"\ndark = false\n[colors]\nprimary = "rgb(10,20,30)"\n',
                                    encoding="utf-8")
    themes = load_themes(user_dir=user)
    assert themes.themes["neotask-dark"].primary == "#ff0000"
    assert themes.origin["neotask-dark"] == user / "dark.toml"
    assert "mine" in themes.themes and set(themes.themes) >= REQUIRED
    assert len(themes.errors) == 1 and "broken.toml" in themes.errors[0]


async def test_app_notifies_once_about_a_bad_theme_and_uses_user_themes(
        app_factory: Callable[..., NeotaskApp]) -> None:
    user = paths.ensure_dir(paths.user_themes_dir())
    (user / "bad.toml").write_text('name = "bad"\n[colors]\nprimary = "#12"\n', encoding="utf-8")
    (user / "mine.toml").write_text('name = "mine"\n[colors]\nprimary = "#00aa00"\n', encoding="utf-8")
    app = app_factory(theme="mine")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        assert app.theme == "mine"
        notes = [n for n in app._notifications if "bad.toml" in n.message]
        assert len(notes) == 1
        assert set(app.available_themes) >= REQUIRED


@pytest.mark.slow
def test_wheel_ships_the_theme_files(tmp_path: Path) -> None:
    src = tmp_path / "src"
    # Build from a copy so nothing is written into the shared working tree.
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "dist",
                                                           "build", ".mypy_cache", ".ruff_cache", ".pytest_cache",
                                                           ".tools"))
    out = tmp_path / "dist"
    uv = shutil.which("uv")
    if uv:  # uv has hatchling in its cache, so this works offline
        cmd = [uv, "build", "--wheel", "--offline", "--out-dir", str(out), str(src)]
    else:
        cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(out.glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in REQUIRED:
        assert f"neotask_tui/themes/{name}.toml" in names
