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
