"""Child process of the search kill -9 test: appends messages (the store keeps the search index)
until it is killed.

Run as ``python -m tests.faults.search_kill_driver --run R --start N`` with ``NEOTASK_HOME`` set.
It takes the data-dir lock, opens the real :class:`~neotask_tui.storage.store.SessionStore`,
brings the search index up to date (``phase sync``: a long rebuild when the parent deleted the
index), then appends one user message per step, printing ``ack <step> <word>`` only after the
append returned (the message is durable and the store has updated the index). Every 9th step
starts a new session for the key (the old transcript moves to the archive), every 5th runs a
search (reads beside the writes).
"""

from __future__ import annotations

import argparse
import sys

KEYS = ("agent:main:tui:default", "agent:ops:cli:night")


def word(run: int, step: int) -> str:
    """The unique word of a step's message (what the parent searches for)."""
    return f"zq{run}x{step}w"


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    """Append messages until ``--end`` (or until killed)."""
    p = argparse.ArgumentParser()
    p.add_argument("--run", type=int, default=0)
    p.add_argument("--start", type=int, default=1)
    p.add_argument("--end", type=int, default=10**9)
    a = p.parse_args(argv)
    from neotask_tui.storage.lock import DataLock
    from neotask_tui.storage.store import SessionStore

    lock = DataLock()
    lock.acquire()
    store = SessionStore()
    _say(f"phase sync {a.start}")
    store.search.sync()
    _say(f"ready {a.start}")
    for step in range(a.start, a.end):
        key = KEYS[step % 2]
        if step % 9 == 0 or store.get(key) is None:
            store.create_session(key, reason="new")
        rec = store.get(key)
        assert rec is not None
        filler = " lorem ipsum dolor sit amet" * (1 + step % 13)
        store.append(rec.session_id, "message", {"role": "user", "content": f"step {step} {word(a.run, step)}{filler}"})
        _say(f"ack {step} {word(a.run, step)}")
        if step % 5 == 0:
            store.search.search("lorem", limit=5)
    store.search.close()
    lock.release()
    _say("done")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
