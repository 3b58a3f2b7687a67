"""Colour themes from TOML files, turned into Textual :class:`~textual.theme.Theme` objects.

Built-in themes ship as package data (``neotask_tui/themes/*.toml`` in a wheel, the repository's
top-level ``themes/`` in a checkout). User themes in :func:`neotask_tui.paths.user_themes_dir`
override built-ins of the same name. A bad file is reported (one message per file) and skipped;
the others still load.

File format::

    name = "neotask-dark"        # required: lowercase letters, digits and dashes
    dark = true                  # optional (default true)
    [colors]                     # primary is required; every value must parse as a colour
    primary = "#5fafff"
    background = "#16181d"
    [variables]                  # optional Textual design variables (colours or plain values)
    footer-key-foreground = "#5fafff"
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

import neotask_tui
from neotask_tui import paths

if TYPE_CHECKING:
    from textual.app import App

COLOR_KEYS = (
    "primary", "secondary", "accent", "warning", "error", "success",
    "foreground", "background", "surface", "panel", "boost",
)
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_TOP_KEYS = {"name", "dark", "colors", "variables", "luminosity_spread", "text_alpha"}


class ThemeError(ValueError):
    """A theme file is invalid (the message names the file and the problem)."""


@dataclass
class ThemeSet:
    """Loaded themes by name, where each came from, and the problems found."""

    themes: dict[str, Theme] = field(default_factory=dict)
    origin: dict[str, Path] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def builtin_themes_dir() -> Path:
    """Where the shipped theme files are: package data in a wheel, ``themes/`` in a checkout."""
    pkg = Path(neotask_tui.__file__).resolve().parent
    inside = pkg / "themes"
    return inside if inside.is_dir() else pkg.parent / "themes"


def _color(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ThemeError(f"{where}: expected a colour string, got {value!r}")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeError(f"{where}: not a colour: {value!r}") from None
    return value


def parse_theme(data: dict[str, Any], source: str = "<theme>") -> Theme:
    """Validate a theme table and build a :class:`Theme`.

    Raises:
        ThemeError: unknown keys, a missing/bad name, a missing primary colour, a bad colour.
    """
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ThemeError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}")
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ThemeError(f"{source}: 'name' must be lowercase letters, digits and dashes")
    colors = data.get("colors", {})
    if not isinstance(colors, dict):
        raise ThemeError(f"{source}: [colors] must be a table")
    bad = set(colors) - set(COLOR_KEYS)
    if bad:
        raise ThemeError(f"{source}: unknown colour(s) {', '.join(sorted(bad))}; "
                         f"known: {', '.join(COLOR_KEYS)}")
    if "primary" not in colors:
        raise ThemeError(f"{source}: [colors] needs at least 'primary'")
    checked = {k: _color(v, f"{source}: colors.{k}") for k, v in colors.items()}
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeError(f"{source}: [variables] must be a table of strings")
    for k, v in variables.items():
        # Colour-like variables must parse; others (e.g. "bold") are passed through.
        if v.startswith(("#", "rgb", "hsl")):
            _color(v, f"{source}: variables.{k}")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeError(f"{source}: 'dark' must be true or false")
    extra: dict[str, Any] = dict(checked)
    for k in ("luminosity_spread", "text_alpha"):
        if k in data:
            if not isinstance(data[k], int | float) or isinstance(data[k], bool):
                raise ThemeError(f"{source}: '{k}' must be a number")
            extra[k] = float(data[k])
    return Theme(name=name, dark=dark, variables=dict(variables), **extra)


def load_theme_file(path: Path) -> Theme:
    """Read and validate one theme file (raises :class:`ThemeError`)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ThemeError(f"{path}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ThemeError(f"{path}: {e}") from None
    return parse_theme(data, str(path))


def _load_dir(directory: Path, out: ThemeSet) -> None:
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.toml")):
        try:
            theme = load_theme_file(path)
        except ThemeError as e:
            out.errors.append(str(e))
            continue
        out.themes[theme.name] = theme
        out.origin[theme.name] = path


def load_themes(builtin_dir: Path | None = None, user_dir: Path | None = None) -> ThemeSet:
    """Built-in themes, then user themes (which override built-ins by name)."""
    out = ThemeSet()
    _load_dir(builtin_dir or builtin_themes_dir(), out)
    _load_dir(user_dir or paths.user_themes_dir(), out)
    return out


def theme_problem(name: str) -> str | None:
    """Why ``ui.theme = name`` would not be used (the app falls back to neotask-dark), or ``None``."""
    from textual.theme import BUILTIN_THEMES

    themes = load_themes()
    if name in themes.themes or name in BUILTIN_THEMES:
        return None
    known = ", ".join(sorted(themes.themes))
    return f"ui.theme: unknown theme {name[:80]!r} (the app uses neotask-dark); themes: {known}"


def install_themes(app: App[Any], wanted: str) -> list[tuple[str, str, float | None]]:
    """Register the themes on a not yet running ``app`` and select ``wanted`` (else neotask-dark).

    Call it from the app's ``__init__``: setting ``App.theme`` once the app runs re-parses every
    stylesheet and re-applies it to every widget (a large part of the startup time), so the first
    theme is applied directly and the stylesheet is built with its variables from the start.
    Returns ``(message, title, timeout)`` notifications to show once mounted.
    """
    from textual.app import App

    themes = load_themes()
    for theme in themes.themes.values():
        app.register_theme(theme)
    notes: list[tuple[str, str, float | None]] = [(e, "theme skipped", 10) for e in themes.errors]
    if wanted not in app.available_themes:
        notes.append((f"unknown theme {wanted!r}; using neotask-dark", "", None))
        wanted = "neotask-dark" if "neotask-dark" in app.available_themes else "textual-dark"
    # What setting App.theme does (Textual's App._watch_theme), minus the CSS refresh it schedules:
    # nothing is parsed or mounted yet. tests/tui/test_textual_api.py checks the result is the same.
    app.set_reactive(App.theme, wanted)
    dark = app.current_theme.dark
    app.update_classes({f"-theme-{wanted}": True, "-dark-mode": dark, "-light-mode": not dark}, update=False)
    # The one private Textual call left: the ANSI → truecolor line filter follows the theme's ANSI
    # palette; Textual has no public way to refresh it without a CSS refresh (guarded by a test).
    app._refresh_truecolor_filter(app.ansi_theme)
    app.stylesheet.set_variables(app.get_css_variables())
    return notes


UI_STATE = "ui-state.json"
"""In the data dir: the last ``/theme`` choice and the configured theme it overrode."""


def chosen_theme(configured: str) -> str:
    """The theme to start with: the last ``/theme`` choice, unless ``ui.theme`` in the config
    changed since it was made (an edit of config.toml is the newer wish)."""
    try:
        data = json.loads((paths.data_dir() / UI_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return configured
    if isinstance(data, dict) and data.get("config_theme") == configured and isinstance(data.get("theme"), str):
        return str(data["theme"])
    return configured


def save_theme_choice(name: str, configured: str) -> None:
    """Remember a ``/theme`` choice for the next start (atomic write; raises ``OSError``)."""
    from neotask_tui.storage.atomic import atomic_write_text

    atomic_write_text(paths.ensure_dir(paths.data_dir()) / UI_STATE,
                      json.dumps({"theme": name, "config_theme": configured}) + "\n")
