"""The app quits, as Ctrl+Q quits it, when its terminal goes away (a closed tmux pane, terminal
window or SSH link): on SIGHUP, and when the terminal reads as hung up though no signal came (SIGHUP
ignored, as under ``nohup``, or the app not the terminal's controlling process). Without this the
signal killed the app wherever it was, or, ignored, left Textual's input thread reading end-of-file
from the dead terminal in a busy loop, forever, with the data-dir lock held.

A terminal that is gone cannot be restored: Textual's teardown writes to it through a bounded queue
whose writer thread died with it, and waits on that queue forever. So once the app has stopped what
runs and closed the engine, the process ends without that teardown (:func:`end_process`), and a
daemon thread ends it anyway if the event loop itself is stuck on such a write (:func:`exit_later`)."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable

_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


def terminal_fd() -> int | None:
    """The app's terminal as Textual's driver reads it (standard input); ``None`` when that is no
    terminal."""
    stream = sys.__stdin__
    try:
        fd = stream.fileno() if stream is not None else -1
    except (OSError, ValueError):
        return None
    return fd if fd >= 0 and os.isatty(fd) else None


def hung_up(fd: int) -> bool:
    """Whether the terminal at ``fd`` is gone: polling it reports a hang-up or an error (a read then
    returns end-of-file at once, every time). Never blocks."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    try:
        ready = poller.poll(0)
    except OSError:
        return True
    return any(events & _GONE for _, events in ready)


def watch_hangup(quit_app: Callable[[], object], every: Callable[[float, Callable[[], None]], object],
                 period: float) -> int | None:
    """Call ``quit_app`` (once) when the app's terminal goes away: on SIGHUP, unless the app was
    started with SIGHUP ignored or handled by someone else (``nohup``: left as it is), and when
    ``every(period, check)`` finds the terminal hung up; on SIGTERM too (``kill PID``, a system
    shutdown), alike: ``quit_app`` quits as Ctrl+Q does while the terminal is still there. Runs on
    the app's event loop.

    Returns:
        The terminal's file descriptor, for :func:`hung_up` (its ``isatty`` fails once it is gone);
        ``None`` when there is no terminal to watch (nothing is installed).
    """
    fd = terminal_fd()
    if fd is None:
        return None
    done = False

    def hang_up() -> None:
        nonlocal done
        if not done:
            done = True
            quit_app()

    for sig in (signal.SIGHUP, signal.SIGTERM):  # `kill PID`, a shutdown: quit as Ctrl+Q does too
        if signal.getsignal(sig) is signal.SIG_DFL:
            asyncio.get_running_loop().add_signal_handler(sig, hang_up)

    def check() -> None:
        if hung_up(fd):
            hang_up()

    every(period, check)
    return fd


def end_process() -> None:
    """End the process now, with nothing of Textual's teardown (the terminal is gone): for after the
    engine is closed, the lock released."""
    os._exit(0)


def exit_later(seconds: float) -> None:
    """End the process after ``seconds`` from a daemon thread, whatever the event loop is doing (it
    can be stuck writing to the dead terminal): the kernel releases the lock, and a transcript line
    cut short is repaired at the next load."""

    def run() -> None:
        time.sleep(seconds)
        os._exit(0)

    threading.Thread(target=run, name="neotask-hangup-exit", daemon=True).start()
