"""Machine output of the ``neotask`` subcommands."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

from neotask_tui.text.terminal import inert_json


def print_json(obj: Any) -> None:
    """Print machine output: exact values, with no character a terminal would act on left raw."""
    sys.stdout.write(inert_json(json.dumps(obj, ensure_ascii=False, indent=2, default=_default)) + "\n")


def _default(o: Any) -> Any:
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return dataclasses.asdict(o)
    return str(o)


def shown_keys() -> list[str]:
    """The configured API keys (:func:`~neotask_tui.providers.selection.configured_keys`) that no
    CLI output may show: those of the settings as loaded, the environment's alone when
    ``config.toml`` does not load (its error is then what is printed)."""
    from neotask_tui.config import Settings, load_settings
    from neotask_tui.providers.selection import configured_keys

    try:
        settings = load_settings()
    except Exception:  # the command reports it; here only the keys are wanted
        settings = Settings()
    return configured_keys(settings)


def masked(text: str, keys: list[str] | None = None) -> str:
    """``text`` with every configured API key masked ``[REDACTED:api_key]``, read as a reply is
    masked (any 16 of its characters in a row; :func:`~neotask_tui.providers._sdk.without_keys`)."""
    from neotask_tui.providers._sdk import without_keys

    return without_keys(text, shown_keys() if keys is None else keys)


class MaskedStream:
    """A text stream that writes through to ``stream`` with the configured API keys masked: the one
    place a subcommand's output (tables, JSON, an argument echoed in "no message matches …", a
    ``doctor`` line naming an environment variable) and errors go out, so a key given as an
    argument is never printed back. Each write is masked whole (a line, a JSON document)."""

    def __init__(self, stream: Any, keys: list[str]) -> None:
        self._stream = stream
        self._keys = keys

    def write(self, text: str) -> int:
        from neotask_tui.providers._sdk import without_keys

        self._stream.write(without_keys(text, self._keys))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
