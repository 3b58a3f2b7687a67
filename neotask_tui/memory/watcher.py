"""Background watcher: reindex an agent's memory files when they change on disk."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from neotask_tui.memory.types import Reindexing, ReindexStats

log = logging.getLogger(__name__)


def _relevant(path: str, workspace: Path) -> bool:
    try:
        rel = Path(path).resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return False
    if any(part.startswith(".") for part in rel.split("/")):
        return False
    if rel == "memory" or (rel.startswith("memory/") and Path(path).is_dir()):
        # A new folder: a file written right after it is created can land before the OS watch on
        # the folder is in place and raise no event of its own; the reindex scans every file.
        return True
    return rel == "MEMORY.md" or (rel.startswith("memory/") and rel.endswith(".md"))


class Watcher:
    """Runs ``watchfiles.watch`` on the workspace in a daemon thread.

    Args:
        service: What reindexes the agent's files (the memory service).
        agent_id: The agent whose workspace is watched.
        on_change: Called with the stats of every reindex that changed something.
    """

    def __init__(
        self, service: Reindexing, agent_id: str, on_change: Callable[[ReindexStats], None] | None
    ) -> None:
        self.service = service
        self.agent_id = agent_id
        self.on_change = on_change
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"memory-watch-{agent_id}", daemon=True)

    def start(self) -> None:
        """Start watching (returns once the watch is armed)."""
        self._thread.start()
        self._ready.wait(timeout=30)

    def stop(self) -> None:
        """Stop watching and join the thread."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _run(self) -> None:
        from watchfiles import Change, watch

        ws = self.service.workspace(self.agent_id)
        # Index what is there now, so the first event compares against a current state.
        try:
            first = self.service.reindex(self.agent_id)
        except Exception as e:  # surfaced via log; the watcher keeps running
            log.error("memory watcher: initial reindex failed: %s", e)
        else:
            # Reported too: on a busy machine ``start`` may return before the watch is armed, and a
            # file written then is indexed here, not by a later event.
            if self.on_change and (first.chunks_embedded or first.chunks_deleted or first.files_changed
                                   or first.notices):
                self.on_change(first)
        armed = False
        try:
            for changes in watch(
                ws, stop_event=self._stop, debounce=300, step=50, rust_timeout=200, yield_on_timeout=True,
                raise_interrupt=False,
            ):
                if not armed:
                    # The first (timeout) yield means the OS watch is in place; anything edited
                    # between the initial reindex and now is caught by treating it as a change.
                    armed = True
                    self._ready.set()
                    changes = {(Change.modified, str(ws / "MEMORY.md"))}
                if not any(_relevant(p, ws) for _, p in changes):
                    continue
                try:
                    stats = self.service.reindex(self.agent_id)
                except Exception as e:
                    log.error("memory watcher: reindex failed: %s", e)
                    continue
                if self.on_change and (stats.chunks_embedded or stats.chunks_deleted or stats.files_changed
                                   or stats.notices):
                    self.on_change(stats)
        except Exception as e:  # pragma: no cover - e.g. the workspace was removed
            log.error("memory watcher stopped: %s", e)
        finally:
            self._ready.set()
