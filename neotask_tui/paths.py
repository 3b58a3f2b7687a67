"""Every filesystem location Neotask uses, in one place.

Data lives under ``platformdirs.user_data_dir("neotask")`` and configuration under
``platformdirs.user_config_dir("neotask")``. ``NEOTASK_HOME`` overrides both: data goes to
``$NEOTASK_HOME/data`` and config to ``$NEOTASK_HOME/config`` (tests always set it).

Nothing here touches the disk at import time; directories are created lazily by :func:`ensure_dir`
with mode 0700, and files we create get mode 0600 (see :mod:`neotask_tui.storage.atomic`).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import platformdirs

APP = "neotask"
DIR_MODE = 0o700
FILE_MODE = 0o600


def _home() -> Path | None:
    h = os.environ.get("NEOTASK_HOME")
    return Path(h).expanduser() if h else None


def data_dir() -> Path:
    """Root of all data (sessions, transcripts, memory, index)."""
    h = _home()
    return h / "data" if h else Path(platformdirs.user_data_dir(APP))


def config_dir() -> Path:
    """Directory holding ``config.toml``, user themes and model/price overrides."""
    h = _home()
    return h / "config" if h else Path(platformdirs.user_config_dir(APP))


def config_file() -> Path:
    """The user's ``config.toml``."""
    return config_dir() / "config.toml"


def user_themes_dir() -> Path:
    """User theme files (``*.toml``) overriding built-ins by name."""
    return config_dir() / "themes"


def sessions_dir() -> Path:
    """Live transcripts (``<session_id>.jsonl``) and ``sessions.json``."""
    return data_dir() / "sessions"


def sessions_index() -> Path:
    """The ``sessions.json`` index."""
    return sessions_dir() / "sessions.json"


def transcript_path(session_id: str) -> Path:
    """Transcript of a live (non-archived) session."""
    return sessions_dir() / f"{session_id}.jsonl"


def archive_dir() -> Path:
    """Archived transcripts: compacted, reset, replaced and cleaned-up sessions."""
    return data_dir() / "archive"


def archived_transcript_path(session_id: str) -> Path:
    """Transcript of an archived session."""
    return archive_dir() / f"{session_id}.jsonl"


def quarantine_dir() -> Path:
    """Corrupt lines cut out of transcripts, and corrupt index files, kept for inspection."""
    return data_dir() / "quarantine"


def lock_file() -> Path:
    """The data-dir lock held by the one writing process."""
    return data_dir() / "neotask.lock"


def logs_dir() -> Path:
    """Log files (never contain API keys)."""
    return data_dir() / "logs"


def history_file() -> Path:
    """Prompt history shared by the TUI and the plain REPL."""
    return data_dir() / "history"


_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_component(name: str) -> str:
    """Turn an agent id (or other user-given name) into one safe path component."""
    s = _SAFE.sub("_", name).strip(".")
    return s or "_"


def workspace_dir(agent_id: str) -> Path:
    """The agent's workspace: ``MEMORY.md``, ``memory/`` and the inbox live here."""
    return data_dir() / "agents" / safe_component(agent_id)


def memory_db_dir() -> Path:
    """Default LanceDB database location (the URI is configurable)."""
    return data_dir() / "lancedb"


def model_cache_dir() -> Path:
    """Where user-configured extra models (downloaded when online) are cached."""
    return data_dir() / "models"


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 if missing; return it."""
    if path.is_dir():
        return path
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):  # every directory we create is 0700, parents included
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        with contextlib.suppress(OSError):
            os.chmod(d, DIR_MODE)
    return path
