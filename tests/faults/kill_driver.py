"""Child process of the kill -9 harness: runs turns through the real Engine until it is killed.

Run as ``python -m tests.faults.kill_driver --start N --run R [--trace]`` with ``NEOTASK_HOME`` set.
It uses the real :class:`~neotask_tui.engine.facade.Engine`, real storage and the scripted provider
(empty queue: the reply is ``"(scripted) <user text>"``), and prints one line per fact to stdout:

- ``ack <turn> <key> <session_id> <event_id> <sha(user)> <sha(reply)>`` only after ``send`` yielded
  :class:`TurnDone` (the reply is durably stored and the index saved);
- ``ackstate <turn> <key> <sha(value)>`` after a session-state change returned;
- ``ackcmd <turn> <name> ok|error`` after a slash command returned (``fork``: after
  :meth:`Engine.fork_session` returned; ``retry``: after the regenerated reply was stored);
- ``phase <name> <turn>`` just before an operation starts (and, with ``--trace``, before every write
  at the storage boundary: ``phase write-index`` / ``phase write-transcript`` / ``phase write-other``),
  so the parent can aim its SIGKILL at compaction, state changes, ``/new``, forks, retries and
  index rewrites.

Turn texts come from :func:`turn_text` so the parent can tell which text belongs to which turn.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
from pathlib import Path

KEYS = ("agent:main:tui:default", "agent:ops:cli:night")


def sha(text: str) -> str:
    """Short content hash used in ack lines."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def turn_text(turn: int, run: int) -> str:
    """The user text of ``turn`` in child run ``run`` (distinct per attempt; some turns are long)."""
    filler = " lorem ipsum dolor sit amet" * (1 + (turn * 7) % 23)
    return f"turn {turn} run {run}:{filler}"


def key_of(turn: int) -> str:
    """Which session key a turn goes to (two keys, so the index holds several records)."""
    return KEYS[1] if turn % 5 == 3 else KEYS[0]


def op_of(turn: int) -> str | None:
    """The extra operation run before the turn's message (None = just a message)."""
    if turn % 29 == 0:
        return "reset"
    if turn % 13 == 0:
        return "new"
    if turn % 11 == 0:
        return "compact"
    if turn % 7 == 0:
        return "state"
    if turn % 17 == 0:
        return "remember"
    if turn % 9 == 5:
        return "fork"
    if turn % 4 == 2:
        return "retry"
    return None


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def _run(start: int, run: int, end: int, trace: bool) -> None:
    from neotask_tui.commands import dispatch
    from neotask_tui.config import load_settings
    from neotask_tui.engine.events import TurnDone, TurnFailed
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider
    from neotask_tui.storage import atomic

    turn = start

    if trace:
        def hook(path: Path) -> None:
            kind = ("write-index" if path.name == "sessions.json" else
                    "write-transcript" if path.suffix == ".jsonl" else "write-other")
            _say(f"phase {kind} {turn}")

        atomic.io_hooks.before_write = hook

    _say(f"phase startup {start}")
    engine = Engine(load_settings(), provider=ScriptedProvider())
    _say(f"ready {start}")
    try:
        while turn < end:
            key = key_of(turn)
            op = op_of(turn)
            if op == "state" and engine.state is not None:
                _say(f"phase state {turn}")
                value = f"goal of turn {turn} run {run}"
                await engine.state.set_goal(key, value)
                _say(f"ackstate {turn} {key} {sha(value)}")
            elif op == "remember" and await engine.get_memory() is not None:
                _say(f"phase remember {turn}")
                r = await dispatch(engine, key, f"/remember fact of turn {turn} run {run}")
                _say(f"ackcmd {turn} remember {'error' if r.error else 'ok'}")
            elif op in ("new", "reset"):
                _say(f"phase {op} {turn}")
                r = await dispatch(engine, key, f"/{op}")
                _say(f"ackcmd {turn} {op} {'error' if r.error else 'ok'}")
            elif op == "fork" and engine.store.get(key) is not None:
                _say(f"phase fork {turn}")
                msgs = [e.id for e in engine.events(key) if e.type == "message"]
                at = msgs[len(msgs) // 2] if msgs else None  # mid-conversation: a real branch point
                await engine.fork_session(key, at)
                _say(f"ackcmd {turn} fork ok")
            elif op == "retry" and engine.last_user_message(key) is not None:
                _say(f"phase retry {turn}")
                async for e in engine.retry(key):
                    if isinstance(e, TurnDone):
                        _say(f"ackcmd {turn} retry ok")
                    elif isinstance(e, TurnFailed):
                        _say(f"failed {turn} {e.error_kind}")
            elif op == "compact" and engine.compactor is not None:
                _say(f"phase compact {turn}")
                await engine.compact(key)
                _say(f"ackcmd {turn} compact ok")
            text = turn_text(turn, run)
            _say(f"phase send {turn}")
            async for e in engine.send(text, key):
                if type(e).__name__ == "Compacted":
                    _say(f"phase compacted {turn}")
                elif isinstance(e, TurnDone):
                    _say(f"ack {turn} {key} {e.session_id} {e.event_id} {sha(text)} {sha(e.text)}")
                elif isinstance(e, TurnFailed):
                    _say(f"failed {turn} {e.error_kind}")
            turn += 1
    finally:
        await engine.aclose()
    _say("done")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run turns until ``--end`` (or until killed)."""
    p = argparse.ArgumentParser()
    p.add_argument("--start", type=int, default=1)
    p.add_argument("--run", type=int, default=0)
    p.add_argument("--end", type=int, default=10**9)
    p.add_argument("--trace", action="store_true")
    a = p.parse_args(argv)
    asyncio.run(_run(a.start, a.run, a.end, a.trace))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
