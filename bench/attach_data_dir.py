#!/usr/bin/env python3
"""What refusing the data dir's files by inode costs an attach (``read_attachment``).

A file on the data dir's device makes the reader walk the data dir's folders (a second mount of
one of them is refused) and, for a file with more than one name, its files' inodes (a hard link to
a transcript is refused). Baseline in the same run: the same file with no data dir at all (no
walk). JSON, medians.

Usage::

    python bench/attach_data_dir.py [--sessions 5000] [--repeat 15]

With no flags: a data dir of 5,000 session transcripts, a 4 KiB file beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path


def _median_ms(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=5000, help="transcripts in the data dir")
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NEOTASK_HOME"] = str(Path(tmp) / "home")
        from neotask_tui import paths
        from neotask_tui.engine.context.attachments import read_attachment

        f = Path(tmp) / "notes.txt"
        f.write_text("a line of notes about the release\n" * 120)
        one_name = _median_ms(lambda: read_attachment(str(f)), args.repeat)  # no data dir yet: no walk
        sessions = paths.data_dir() / "sessions"
        sessions.mkdir(parents=True)
        for i in range(args.sessions):
            (sessions / f"20260101-000000-{i:08x}.jsonl").write_text("{}\n")
        walk_dirs = _median_ms(lambda: read_attachment(str(f)), args.repeat)
        os.link(f, Path(tmp) / "notes-again.txt")
        walk_files = _median_ms(lambda: read_attachment(str(f)), args.repeat)
    print(json.dumps({
        "sessions": args.sessions, "repeat": args.repeat,
        "read_attachment_ms_p50": {"baseline_no_data_dir": one_name, "same_device_one_name": walk_dirs,
                                   "same_device_hard_linked": walk_files},
    }, indent=2))


if __name__ == "__main__":
    main()
