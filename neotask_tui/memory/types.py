"""Plain result types of the memory service, and the seams its parts use (import-cheap: no numpy,
no LanceDB).

The Protocols here name what a part below the service needs of it (:mod:`.forget`, :mod:`.watcher`,
:mod:`.tools`), so no part imports the service: :class:`~.service.MemoryService` satisfies them
structurally.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from neotask_tui.text.secrets import redact_path

SOURCES = ("memory", "transcript", "inbox")
"""Every value the ``source`` column can take."""

CONSENTED_SOURCES = ("memory", "inbox")
"""Sources the user consented to: ``MEMORY.md``, ``memory/`` and accepted inbox entries."""

RECALL_KINDS = {"memory": "memory", "conversation": "this conversation", "history": "history"}
"""The three kinds of recall and the label each is shown with (context fence, sidebar, ``/recall``,
``memory search``): *memory* is what the user consented to keep (:data:`CONSENTED_SOURCES`); *this
conversation* is a turn compacted away from the current session's own lineage; *history* is what was
said in another session's transcript, quoted with its speaker and date (a record, not a fact)."""


def recall_rank(kind: str) -> int:
    """Where a recalled item of ``kind`` goes, for every list of recall (auto-recall, the memory tools,
    ``/recall``, ``memory search``): consented memory first, then this conversation, then history. Sort
    by it with a stable sort, so items keep their rank within a kind."""
    return _RECALL_ORDER.get(kind, len(_RECALL_ORDER))


_RECALL_ORDER = {k: i for i, k in enumerate(RECALL_KINDS)}


def history_admits(kind: str, speaker: str | None, history: str) -> bool:
    """Whether ``memory.recall_history`` (``history``) lets a passage through, for auto-recall and the
    memory tools alike: ``off`` no other session's message, ``user`` only the user's own, ``all``
    every one (each labelled with its speaker). Memory and this conversation always pass."""
    if kind != "history":
        return True
    return history == "all" or (history == "user" and speaker == "user")


def score_text(score: float) -> str:
    """A hit's score as listed (``memory search``, ``/recall``): three decimals, or two significant
    digits below 0.001, so a weak but real hit never reads ``0.000``."""
    return f"{score:.3f}" if score >= 0.001 or score <= 0 else f"{score:.2g}"


def recall_label(kind: str, speaker: str = "", said_on: str = "") -> str:
    """How a recalled item's kind is shown: ``memory``, ``this conversation · user, 2023-05-08 13:56``,
    ``history · assistant, 2023-05-08 13:56`` (a quoted passage says who said it, and when)."""
    name = RECALL_KINDS.get(kind, kind)
    who = ", ".join(x for x in (speaker, said_on) if x)
    return f"{name} · {who}" if who and kind != "memory" else name


@dataclass
class MemoryHit:
    """One ranked passage returned by search or recall.

    Attributes:
        id: Stable chunk id (use it with ``forget``).
        text: The passage text as stored (redacted where it came from inbox/transcripts).
        score: Fused score in ``[0, 1]``; higher is better.
        components: Score parts (``dense``, ``lexical``, ``dense_norm``, ``lexical_norm``, ``decay``...).
        source: ``memory``, ``transcript`` or ``inbox``.
        path: Workspace-relative file (``MEMORY.md``, ``memory/x.md``) or ``transcripts/<session>``.
        line_start: First line (1-based) of the passage in ``path``; 0 for transcripts.
        line_end: Last line (inclusive); 0 for transcripts.
        event_ids: Transcript event ids the passage came from (empty for files).
        scope: ``agent:<id>``, ``user``, ``project:<name>``...
        heading: Markdown heading path (``A > B``) or the transcript session date.
        why: One human-readable line on why this passage was returned.
    """

    id: str
    text: str
    score: float
    components: dict[str, float]
    source: str
    path: str
    line_start: int
    line_end: int
    event_ids: list[int]
    scope: str
    heading: str
    why: str
    matched: list[str] = field(default_factory=list)
    """The query's normalised terms found in the passage's own text."""

    @property
    def kind(self) -> str:
        """``memory`` for a consented source, else ``history`` (a transcript; the engine tells the
        current conversation's own compacted-away turns apart as ``conversation``)."""
        return "memory" if self.source in CONSENTED_SOURCES else "history"

    @property
    def speaker(self) -> str:
        """Who said a transcript passage (``user``, ``assistant``); empty for memory files."""
        if self.source != "transcript":
            return ""
        return self.heading.rsplit(" · ", 1)[-1] if self.heading else ""

    @property
    def said_on(self) -> str:
        """When a transcript passage was said (``2023-05-08 13:56``, local time); empty if unknown."""
        if self.source != "transcript" or " · " not in self.heading:
            return ""
        return self.heading.rsplit(" · ", 1)[0]

    @property
    def location(self) -> str:
        """Where the passage is: ``path:start-end`` for files, ``transcripts/<session>#e:12`` (or
        ``#e:12-14``) for transcripts, whose passages have no lines but event ids.

        A secret in a file name is redacted (``memory/[REDACTED:github_token].md:1-3``): the
        location is shown (search output, the context fence's ``source=``, tool results), while
        :attr:`path` — the key the file is read again by — stays as it is in the index;
        :meth:`MemoryService.get <neotask_tui.memory.service.MemoryService.get>` resolves a
        redacted location back to its file."""
        if self.event_ids:
            first, last = self.event_ids[0], self.event_ids[-1]
            return redact_path(f"{self.path}#e:{first}" + (f"-{last}" if last != first else ""))
        return redact_path(f"{self.path}:{self.line_start}-{self.line_end}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``--json`` output, tool results, the recall sidebar)."""
        d = asdict(self)
        d["score"] = round(self.score, 4)
        d["components"] = {k: round(v, 4) for k, v in self.components.items()}
        d["path"] = redact_path(self.path)  # shown, not a key (see :attr:`location`)
        d["location"] = self.location
        d["kind"] = self.kind
        d["speaker"] = self.speaker
        d["said_on"] = self.said_on
        return d


@dataclass
class AddReceipt:
    """What ``add`` did.

    Attributes:
        path: Workspace-relative file the entry was appended to.
        line_start: First line of the new entry.
        line_end: Last line of the new entry.
        text: The entry text as written (after redaction for non-user sources).
        redacted: Number of secrets replaced before writing.
        chunk_ids: Chunks of the file that now hold the entry.
        stats: The reindex of that file.
        existing: The same text was already in the file: nothing was written, the lines are the
            existing entry's.
    """

    path: str
    line_start: int
    line_end: int
    text: str
    redacted: int
    chunk_ids: list[str]
    stats: ReindexStats
    existing: bool = False

    @property
    def shown_path(self) -> str:
        """The file as shown to people (a secret in a file name is redacted, as in recall receipts)."""
        return redact_path(self.path)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (the path as shown)."""
        d = asdict(self)
        d["path"] = self.shown_path
        return d


@dataclass
class ForgetReceipt:
    """What ``forget`` removed and how it was verified.

    Attributes:
        removed: Texts removed from files or tombstoned.
        chunk_ids: Chunk ids whose rows were deleted from the store.
        path: Workspace-relative file edited (or ``transcripts/<session>``).
        lines: Line range removed from the file, ``(0, 0)`` for a tombstone.
        tombstoned: True when a transcript chunk was tombstoned instead of edited.
        verified: True when a search right after returned none of the removed text.
        removed_lines: ``(line number, text cut from that line)`` for every line of the file that
            lost text, in file order: exactly what is gone (no copy is kept anywhere else).
        partial_lines: The numbers of those lines that kept the rest of their text (only a
            sentence was cut).
        rewritten_ids: Transcript rows of neighbouring messages re-embedded without the text.
        dropped_copies: Damaged store copies in ``quarantine/`` deleted because they held it.
    """

    removed: list[str]
    chunk_ids: list[str]
    path: str
    lines: tuple[int, int]
    tombstoned: bool
    verified: bool
    removed_lines: list[tuple[int, str]] = field(default_factory=list)
    partial_lines: list[int] = field(default_factory=list)
    rewritten_ids: list[str] = field(default_factory=list)
    dropped_copies: list[str] = field(default_factory=list)

    @property
    def shown_path(self) -> str:
        """The file as shown to people (a secret in a file name is redacted, as in recall receipts)."""
        return redact_path(self.path)

    @property
    def summary(self) -> str:
        """What was removed, line by line (for ``/forget`` and logs)."""
        if self.tombstoned:
            head = [f"forgot from {self.shown_path} (tombstoned):", *(f"  {t}" for t in self.removed)]
        else:
            head = [f"forgot from {self.shown_path}, {len(self.removed_lines)} line(s):"]
            for n, t in self.removed_lines:
                head.append(f"  {n}{' (part)' if n in self.partial_lines else ''}: {t}")
        head.append("verified: a search no longer returns it" if self.verified
                    else "warning: the same text still exists elsewhere in memory")
        return "\n".join(head)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (the path as shown)."""
        d = asdict(self)
        d["path"] = self.shown_path
        return d


@dataclass
class ReindexStats:
    """Counters of one (incremental or full) reindex.

    Attributes:
        files_seen: Memory files looked at.
        chunks_embedded: Chunks whose text had to be embedded.
        chunks_unchanged: Chunks reused (same content hash), vectors kept.
        chunks_deleted: Rows removed (edited-away text, deleted files).
        seconds: Wall time.
        files_changed: Workspace-relative files whose rows changed.
        skipped: One line per entry not read (a link, a FIFO, too big, binary, too deep).
        notices: Problems to tell the user, each only the first time it is seen (the service fills
            it from the skipped entries of this and earlier scans it has not reported yet).
        sessions_indexed: Archived sessions indexed as the ``transcript`` source (``neotask memory
            reindex``, :func:`~neotask_tui.memory.archived.index_archived`).
    """

    files_seen: int = 0
    chunks_embedded: int = 0
    chunks_unchanged: int = 0
    chunks_deleted: int = 0
    seconds: float = 0.0
    files_changed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    sessions_indexed: int = 0

    def merge(self, other: ReindexStats) -> None:
        """Add ``other``'s counters into this one."""
        self.files_seen += other.files_seen
        self.chunks_embedded += other.chunks_embedded
        self.chunks_unchanged += other.chunks_unchanged
        self.chunks_deleted += other.chunks_deleted
        self.sessions_indexed += other.sessions_indexed
        self.files_changed.extend(other.files_changed)
        self.skipped.extend(other.skipped)
        self.notices.extend(other.notices)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        d = asdict(self)
        d["seconds"] = round(self.seconds, 3)
        return d


class MemorySearch(Protocol):
    """Searching an agent's memory (forget's verification)."""

    def search(
        self, query: str, *, agent_id: str, k: int = ..., sources: Sequence[str] = ...,
    ) -> list[MemoryHit]:
        """Hits for ``query`` in ``agent_id``'s memory, best first."""
        ...


class MemoryReader(MemorySearch, Protocol):
    """Searching and reading an agent's memory (the model tools)."""

    def get(self, agent_id: str, path: str, lines: tuple[int, int] | None = None) -> str:
        """Text of a memory file (optionally lines ``(start, end)``) or of ``transcripts/<session>``."""
        ...


class MemoryFiles(Protocol):
    """An agent's memory files as the service reads, writes and indexes them (what forget uses)."""

    def workspace(self, agent_id: str) -> Path:
        """The agent's workspace directory."""
        ...

    def resolve(self, agent_id: str, rel: str) -> Path:
        """The path of a validated workspace-relative memory file (it may not exist yet)."""
        ...

    def read(self, agent_id: str, rel: str, *, missing_ok: bool = False) -> str:
        """A memory file's text, read as the indexer reads it."""
        ...

    def sync(self, agent_id: str, *, full: bool = False, only: Sequence[str] | None = None) -> ReindexStats:
        """Bring the file index up to date (only the files ``only`` names, if given)."""
        ...


class Reindexing(Protocol):
    """Reindexing an agent's memory files (what the watcher uses)."""

    def workspace(self, agent_id: str) -> Path:
        """The agent's workspace directory."""
        ...

    def reindex(self, agent_id: str, *, full: bool = False) -> ReindexStats:
        """Bring the agent's file index up to date; the stats carry the notices not reported yet."""
        ...
