"""Archived session transcripts in the memory index: which are indexed, and indexing the rest.

The one home of this for every process that holds the data-dir lock: the engine before a turn's
recall (:class:`~neotask_tui.engine.recall.memory.MemoryRecall`) and ``neotask memory search`` /
``neotask memory reindex``. A manifest (:func:`~neotask_tui.paths.memory_transcripts_file`)
remembers the sessions indexed, so each is embedded once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence

from neotask_tui import paths
from neotask_tui.memory.index.indexer import TRANSCRIPT_MESSAGE_MAX_CHARS
from neotask_tui.memory.service import MemoryService
from neotask_tui.storage.atomic import atomic_write_text
from neotask_tui.storage.events import Event
from neotask_tui.storage.store import ArchivedInfo


def of_agent(archived: Iterable[ArchivedInfo], agent: str) -> list[ArchivedInfo]:
    """The archived sessions of ``agent``'s keys (each agent's memory is its own)."""
    return [a for a in archived if a.key.startswith(f"agent:{agent}:")]


def indexed_sessions() -> dict[str, str]:
    """Archived session ids already indexed (and when); empty when the manifest is missing or bad."""
    try:
        done = json.loads(paths.memory_transcripts_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return done if isinstance(done, dict) else {}


def not_indexed(archived: Iterable[ArchivedInfo]) -> list[str]:
    """Ids of the ``archived`` sessions not indexed yet (read-only)."""
    done = indexed_sessions()
    return [a.session_id for a in archived if a.session_id not in done]


def index_archived(mem: MemoryService, agent: str, archived: Sequence[ArchivedInfo],
                   events: Callable[[str], Sequence[Event]], now: Callable[[], str], *,
                   background: bool = True) -> int:
    """Index the ``archived`` transcripts (of ``agent``) not indexed yet, as the ``transcript`` source.

    Nothing is done when ``memory.include_transcripts`` is off, or while a background indexing runs
    (the next call looks again). What :meth:`~MemoryService.index_transcript` indexes is redacted and
    leaves out forgotten (tombstoned) messages. A session enters the manifest only once its rows are
    written, so one cut short (close, kill) is indexed again next time; only a writer
    (``mem.writer``: it holds the data-dir lock) writes the manifest.

    Args:
        mem: The memory service.
        agent: Whose memory.
        archived: Archived sessions of ``agent`` (:func:`of_agent`).
        events: The events of a session id.
        now: The time to record for a session indexed (ISO-8601).
        background: Never hold the caller up (a turn): when what is waiting is more message text than
            one message is indexed at most (``TRANSCRIPT_MESSAGE_MAX_CHARS``: a session holding a paste;
            every row of a transcript is embedded twice, alone and in context), it is indexed in the
            service's background thread, one session after another, with a notice. ``False`` (a
            command that brings the index up to date, then exits) indexes everything before returning.

    Returns:
        How many sessions were indexed before returning.
    """
    if not mem.settings.include_transcripts or mem.background_busy():
        return 0
    done = indexed_sessions()
    if done and not mem.stats(agent).get("by_source", {}).get("transcript"):
        # The store lost its transcript rows (e.g. a damaged table was rebuilt): index again.
        done = {k: v for k, v in done.items() if k not in {a.session_id for a in archived}}
    todo = [(a.session_id, events(a.session_id)) for a in archived if a.session_id not in done]
    if not todo:
        return 0
    size = sum(
        min(len(ev.content), TRANSCRIPT_MESSAGE_MAX_CHARS)
        for _, evs in todo for ev in evs if ev.type == "message"
    )

    def index(sid: str, evs: Sequence[Event]) -> None:
        mem.index_transcript(agent, sid, evs, f"agent:{agent}")
        done[sid] = now()
        if mem.writer:
            atomic_write_text(paths.memory_transcripts_file(), json.dumps(done, indent=0, sort_keys=True))

    if not background or size <= TRANSCRIPT_MESSAGE_MAX_CHARS:
        for sid, evs in todo:
            index(sid, evs)
        return len(todo)

    def job() -> None:
        for sid, evs in todo:
            if mem.closing:
                return  # the rest waits for the next start
            index(sid, evs)

    n = len(todo)
    mem.start_background(
        job, f"memory-transcripts-{agent}",
        f"memory: indexing {n} archived session{'s' if n != 1 else ''} in the background; "
        "recall uses the rest meanwhile")
    return 0
