"""Transcript benchmark: append throughput (fsync on) and load time for 10k / 100k lines.

Prints JSON. Loads are timed as the median of several runs; the 100k/10k ratio should be near
linear (<= 12). Runs in a temporary NEOTASK_HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    home = tempfile.mkdtemp(prefix="neotask-bench-")
    os.environ["NEOTASK_HOME"] = home
    try:
        _run()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _run() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from neotask_tui import paths
    from neotask_tui.storage.events import Event, now_iso
    from neotask_tui.storage.store import SessionStore
    from neotask_tui.storage.transcript import append_events, read_transcript

    st = SessionStore()
    rec = st.create_session("agent:bench:cli:x", reason="new")
    n_append = 500
    t0 = time.perf_counter()
    for i in range(n_append):
        st.append(rec.session_id, "message", {"role": "user" if i % 2 else "assistant",
                                              "content": f"turn {i} " + "lorem ipsum " * 20})
    append_s = time.perf_counter() - t0

    def build(n: int) -> Path:
        p = paths.transcript_path(f"bench-{n}")
        batch = []
        for i in range(1, n + 1):
            batch.append(Event(type="message", id=i, parent=i - 1 or None, ts=now_iso(),
                               data={"role": "user" if i % 2 else "assistant",
                                     "content": f"message {i} " + "some realistic text with words " * 8}))
            if len(batch) == 5000:
                append_events(p, batch)
                batch = []
        if batch:
            append_events(p, batch)
        return p

    def time_load(p: Path, runs: int) -> float:
        ts = []
        for _ in range(runs):
            t = time.perf_counter()
            lt = read_transcript(p, repair=False)
            ts.append(time.perf_counter() - t)
            assert not lt.issues
        return statistics.median(ts)

    p10 = build(10_000)
    p100 = build(100_000)
    l10 = time_load(p10, 7)
    l100 = time_load(p100, 3)
    out = {
        "append_events_per_s_fsync": round(n_append / append_s, 1),
        "append_events": n_append,
        "load_10k_s": round(l10, 4),
        "load_100k_s": round(l100, 4),
        "load_ratio_100k_over_10k": round(l100 / l10, 2),
        "load_10k_lines_per_s": round(10_000 / l10),
        "file_mb_100k": round(p100.stat().st_size / 1e6, 1),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
