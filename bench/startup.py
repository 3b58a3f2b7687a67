"""Startup benchmark: time to first paint of the Neotask app, next to Textual baselines.

What is measured (wall clock, from just before ``subprocess.Popen`` in this process):

- ``import_textual``: ``python -c "import textual"`` until the process exits.
- ``bare_textual_app``: a Textual app with Header, Static, Input and Footer, until its first paint.
- ``neotask_app``: ``neotask_tui.tui.app.make_app(load_settings())`` as ``neotask`` builds it, until
  its first paint. The engine (data-dir lock, session index) opens after the first paint in a worker;
  ``neotask_engine_ready`` is the time until it is ready and the session is loaded.

"First paint" = the first ``call_after_refresh`` callback scheduled from the app's ``on_mount``, i.e.
after the first screen has been composed, laid out and rendered. Apps run headless (Textual's
headless driver: everything but the terminal write), each in a fresh interpreter with
``NEOTASK_HOME`` in a temporary directory and the scripted provider (no network probe). The child
also reports which heavy modules were already imported at first paint (they must not be).

Bytecode: ``make run`` compiles it at install (``uv sync --compile-bytecode`` + ``compileall``), and
the report says whether the .pyc files were there. Without them and with ``PYTHONDONTWRITEBYTECODE=1``
in the environment every module is compiled from source on every start, which inflates all variants
and weighs code volume, not work. ``--bytecode-cache`` runs the children with a private
``PYTHONPYCACHEPREFIX`` (a temporary directory, after one discarded warm-up run per variant).

Prints JSON: median/min/max seconds per variant over ``--runs`` runs (default 7), and the ratio of
the app's median first paint to the bare app's (the number to watch on a busy machine). Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HEAVY = ("openai", "anthropic", "llama_cpp", "lancedb", "fastembed", "tiktoken", "pyarrow", "numpy",
         # UI and engine modules the first frame does not need (see tests/tui/test_startup.py)
         "markdown_it", "pygments", "neotask_tui.engine.facade", "neotask_tui.commands")


def _say(line: str) -> None:
    # Textual captures print() while an app runs; write to the real stdout.
    sys.__stdout__.write(line + "\n")  # type: ignore[union-attr]
    sys.__stdout__.flush()  # type: ignore[union-attr]


def _child(kind: str) -> None:
    """Run inside the child interpreter: paint once, report, exit."""
    if kind == "bare":
        from textual.app import App
        from textual.widgets import Footer, Header, Input, Static

        class Bare(App[None]):
            def compose(self) -> Any:
                yield Header()
                yield Static("hello")
                yield Input()
                yield Footer()

            def on_mount(self) -> None:
                self.call_after_refresh(self.painted)

            def painted(self) -> None:
                _say("PAINT")
                self.exit()

        Bare().run(headless=True, size=(120, 40))
        return

    from neotask_tui.config import load_settings
    from neotask_tui.tui.app import NeotaskApp

    class Timed(NeotaskApp):
        def on_mount(self) -> None:  # Textual also runs NeotaskApp.on_mount (handlers run along the MRO)
            self.call_after_refresh(self.painted)

        def painted(self) -> None:
            heavy = sorted(m for m in HEAVY if m in sys.modules)
            _say("PAINT " + json.dumps(heavy))
            self.set_interval(0.01, self.check_ready)

        def check_ready(self) -> None:
            if self.ready.is_set() and self.main.query_one("#gauge").ledger is not None:  # type: ignore[attr-defined]
                _say("READY")
                self.exit()

    Timed(load_settings()).run(headless=True, size=(120, 40))


def _measure(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out: dict[str, Any] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("PAINT"):
            out["paint"] = time.perf_counter() - t0
            rest = line[5:].strip()
            out["heavy_at_paint"] = json.loads(rest) if rest else []
        elif line.startswith("READY"):
            out["ready"] = time.perf_counter() - t0
    proc.wait(timeout=120)
    out["exit"] = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{args} failed: {proc.stderr.read() if proc.stderr else ''}")
    return out


def _stats(xs: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(xs), 3), "min_s": round(min(xs), 3), "max_s": round(max(xs), 3)}


def _bytecode_mode(private: bool) -> str:
    """Say where the children's bytecode came from (it decides a third of the time)."""
    if private:
        return "cached (private prefix)"
    import importlib.util

    import textual

    import neotask_tui.tui.app as app_mod

    have = all(os.path.exists(importlib.util.cache_from_source(f))
               for f in (textual.__file__, app_mod.__file__) if f)
    no_write = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    if have:
        return "installed .pyc files (make run compiles them)" + (" ; none written" if no_write else "")
    return "compiled on every start (no .pyc, PYTHONDONTWRITEBYTECODE)" if no_write else "default"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--bytecode-cache", action="store_true",
                   help="children cache bytecode in a private temporary directory (warm-up run first)")
    p.add_argument("--child", choices=["bare", "app"], help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        _child(a.child)
        return
    py = sys.executable
    me = os.path.abspath(__file__)
    results: dict[str, list[float]] = {"import_textual": [], "bare_textual_app": [], "neotask_app": [],
                                       "neotask_engine_ready": []}
    heavy: set[str] = set()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as pycache:
        env = dict(os.environ, NEOTASK_HOME=home, NEOTASK_PROVIDER="scripted",
                   NEOTASK_PROVIDER_PROBE_OLLAMA="false", TEXTUAL="")
        if a.bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = pycache
            _measure([py, me, "--child", "bare"], env)
            _measure([py, me, "--child", "app"], env)
        for _ in range(a.runs):  # interleaved so machine noise hits every variant alike
            results["import_textual"].append(_measure([py, "-c", "import textual"], env)["exit"])
            results["bare_textual_app"].append(_measure([py, me, "--child", "bare"], env)["paint"])
            r = _measure([py, me, "--child", "app"], env)
            results["neotask_app"].append(r["paint"])
            results["neotask_engine_ready"].append(r["ready"])
            heavy |= set(r["heavy_at_paint"])
    report = {
        "what": "seconds from subprocess start to first paint (headless), median over runs",
        "runs": a.runs,
        "python": sys.version.split()[0],
        "target_first_paint_s": 0.8,
        "bytecode": _bytecode_mode(a.bytecode_cache),
        **{k: _stats(v) for k, v in results.items()},
        "neotask_over_bare": round(statistics.median(results["neotask_app"])
                                   / statistics.median(results["bare_textual_app"]), 2),
        "heavy_modules_imported_before_first_paint": sorted(heavy),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
