#!/usr/bin/env python3
"""What attaching a file costs: reading it (checks, decoding, redaction) and assembling a context
that carries it, against the same context without it (the baseline, in the same run). JSON, medians.

Usage::

    python bench/attach.py [--kib 64] [--history 200] [--repeat 15]

With no flags: a file of ``tuning.ATTACH_MAX_BYTES`` (64 KiB of Python-like lines) attached to the
newest of 200 history messages, the shipped context settings (``Settings().context``) and a
128k-token window.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from neotask_tui.config import Settings
from neotask_tui.engine.context.assembly import ContextInputs, build_context
from neotask_tui.engine.context.attachments import read_attachment
from neotask_tui.storage.events import Event
from neotask_tui.text.tokens import count_text
from neotask_tui.tuning import ATTACH_MAX_BYTES


def _median_ms(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kib", type=int, default=ATTACH_MAX_BYTES // 1024, help="size of the attached file")
    ap.add_argument("--history", type=int, default=200, help="messages before the one carrying the file")
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "module.py"
        line = "def handler_{i}(request):  # the handler for route {i}\n    return respond(request, status=200)\n"
        body, i = [], 0
        while sum(len(x) for x in body) < args.kib * 1024:
            body.append(line.format(i=i))
            i += 1
        f.write_text("".join(body)[: args.kib * 1024])
        read_ms = _median_ms(lambda: read_attachment(str(f)), args.repeat)
        att = read_attachment(str(f))
    cs = Settings().context
    hist = [Event(type="message", id=i + 1, parent=i or None, ts="2026-01-01T00:00:00+00:00",
                  data={"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} about routes"})
            for i in range(args.history)]
    with_file = list(hist)
    last = with_file[-2]
    with_file[-2] = Event(type=last.type, id=last.id, parent=last.parent, ts=last.ts,
                          data=dict(last.data, attachments=[att.to_data()]))

    def inputs(history: list[Event]) -> ContextInputs:
        return ContextInputs(system="You are helpful.", history=history, new_message="and route 7?",
                             window=128_000, count_text=count_text, reply_reserve=cs.reply_reserve_tokens,
                             max_message_tokens=cs.max_message_tokens,
                             tool_result_max_tokens=cs.tool_result_max_tokens)

    base = build_context(inputs(hist))
    carried = build_context(inputs(with_file))
    out = {
        "file_kib": args.kib, "history_messages": args.history, "repeat": args.repeat,
        "read_attachment_ms_p50": read_ms,
        "attached_tokens": carried.ledger.sections["attachment"],
        "attached_chars": len(att.text), "truncated": att.truncated,
        "build_context_ms_p50": {
            "baseline_no_file": _median_ms(lambda: build_context(inputs(hist)), args.repeat),
            "with_file": _median_ms(lambda: build_context(inputs(with_file)), args.repeat),
        },
        "context_tokens": {"baseline_no_file": base.ledger.total, "with_file": carried.ledger.total},
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
