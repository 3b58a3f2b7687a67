"""What you type is handled in order: messages and slash commands run one at a time, as typed.

A message or command entered while another one is still running waits in the queue (the prompt
says how many wait, and which) instead of running beside it: a ``/new`` finishes before the
message typed after it is sent, so that message lands in the new session, and a slow ``/inbox
accept`` shows its result before the next reply, where it was typed.

Each job runs in a worker of its own and the queue waits for it from another worker, never from a
message handler. So a job may wait on a screen (``push_screen_wait``: the compaction review, the
sessions browser) while the app keeps handling keys, and stopping a reply (cancelling that job's
worker) ends that job alone: the next one starts.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from textual.app import App
from textual.worker import Worker, WorkerCancelled, WorkerFailed

from neotask_tui.text.secrets import redact_secrets
from neotask_tui.text.terminal import inert

QUEUE_LIMIT: Final = 20
"""At most this many inputs wait; one more is refused (and stays in the prompt). A guard against a
key held down, not a tuned figure."""

LABEL_CHARS: Final = 32
"""How much of a queued input the prompt's queue line shows."""
LABEL_SCAN_CHARS: Final = 2000
"""How much of a queued input's head is read for secrets before its label is cut (a key cut at
:data:`LABEL_CHARS` no longer has a key's shape; a 10 MB paste is not scanned on the event loop)."""


ASKED_TYPED: ContextVar[int | None] = ContextVar("asked_typed", default=None)
"""In a job's worker: :attr:`Job.typed` (how many characters had been typed into a text field when
the job was asked for); None outside the queue's jobs."""


def label_of(text: str, mask: Callable[[str], str] | None = None) -> str:
    """A queued input as the queue line names it: one line, at most :data:`LABEL_CHARS`, terminal
    controls made visible (it is shown as plain text, never as markup), secrets redacted (a key pasted
    as ``/model sk-…`` showed its first 24 characters while it waited), and ``mask`` applied first
    (the app's: a configured API key, which no format finds, as the transcript will store it)."""
    head = text[:LABEL_SCAN_CHARS]
    one = " ".join(inert(redact_secrets(mask(head) if mask is not None else head)).split())
    return one if len(one) <= LABEL_CHARS else one[: LABEL_CHARS - 1] + "…"


def queue_line(waiting: list[str]) -> str:
    """The prompt's line for the inputs ``waiting`` (labels, in order)."""
    return f"{len(waiting)} queued, run in order: " + " · ".join(waiting)


@dataclass(frozen=True)
class Job:
    """One input to handle.

    Attributes:
        label: How the queue line names it (:func:`label_of`).
        start: Makes the coroutine that does it (called when its turn comes, not before).
        group: The worker group it runs in (``turn`` for a message, ``command`` for a command).
        typed: How many characters had been typed into a text field (the prompt, the palette, a
            dialog) when it was asked for (``TypeAhead.mark``): a screen it opens knows whether you
            typed since.
    """

    label: str
    start: Callable[[], Coroutine[Any, Any, None]]
    group: str
    typed: int = 0


class InputQueue:
    """Runs :class:`Job` s one at a time in the order submitted, once ``ready`` is set.

    ``changed`` is called with the labels still waiting whenever they change (the running job is
    not among them).
    """

    def __init__(self, app: App[Any], ready: asyncio.Event, changed: Callable[[list[str]], None]) -> None:
        self._app = app
        self._ready = ready
        self._changed = changed
        self._jobs: deque[Job] = deque()
        self._runner: Worker[None] | None = None
        self._closed = False
        self.current: Worker[None] | None = None
        """The worker of the job running now (None between jobs)."""
        self.running: str | None = None
        """The label of the job running now."""

    @property
    def busy(self) -> bool:
        """A job runs or waits to run (a new one would wait)."""
        return self._runner is not None

    @property
    def closed(self) -> bool:
        """:meth:`close` was called: nothing more runs."""
        return self._closed

    @property
    def waiting(self) -> list[str]:
        """The labels of the jobs waiting, in order."""
        return [j.label for j in self._jobs]

    def submit(self, job: Job) -> bool:
        """Add ``job`` at the end; False when it is refused (the queue is full or closed)."""
        if self._closed or len(self._jobs) >= QUEUE_LIMIT:
            return False
        self._jobs.append(job)
        if self._runner is None:
            self._runner = self._app.run_worker(self._run(), group="input-queue", name="input queue")
        else:
            self._changed(self.waiting)
        return True

    def close(self) -> list[str]:
        """Run nothing more (the app is quitting); returns the labels dropped."""
        self._closed = True
        dropped = self.waiting
        self._jobs.clear()
        if dropped:
            self._changed([])
        return dropped

    async def _run(self) -> None:
        try:
            await self._ready.wait()
            while self._jobs and not self._closed:
                job = self._jobs.popleft()
                self._changed(self.waiting)
                ASKED_TYPED.set(job.typed)  # the worker's task copies this context
                worker = self._app.run_worker(job.start(), group=job.group, name=job.label)
                self.current, self.running = worker, job.label
                try:
                    await worker.wait()
                except WorkerCancelled:  # a stopped reply ends its job; the next one runs
                    task = asyncio.current_task()
                    if task is not None and task.cancelling():  # the queue itself is cancelled (exit)
                        raise asyncio.CancelledError from None
                except WorkerFailed:  # the app reports the error itself (and exits)
                    pass
                finally:
                    self.current = self.running = None
        finally:
            self._runner = None
