"""Plain dataclass events the Engine yields to the TUI, REPL and CLI (no UI imports here).

Payloads are typed: the context's :class:`~neotask_tui.engine.context.assembly.Ledger`, the call's
:class:`~neotask_tui.providers.base.Usage`, the session's
:class:`~neotask_tui.storage.index.Counters`, :class:`RecallReceipt` for each recalled item.
:meth:`EngineEvent.to_dict` gives their JSON form (each payload's own ``to_dict``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, Final

from neotask_tui.memory.types import recall_label  # import-cheap: plain types

if TYPE_CHECKING:  # annotations only: importing the events stays cheap for the front ends
    from neotask_tui.engine.context.assembly import Ledger
    from neotask_tui.providers.base import Usage
    from neotask_tui.storage.index import Counters


def _plain(v: Any) -> Any:
    """The JSON form of a payload: its ``to_dict()`` if it has one, dataclasses as dicts."""
    if hasattr(v, "to_dict"):
        return v.to_dict()
    if is_dataclass(v) and not isinstance(v, type):
        return asdict(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


@dataclass(slots=True)
class EngineEvent:
    """Base class. ``kind`` is a stable string for JSON output."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form including the event kind."""
        d = {f.name: _plain(getattr(self, f.name)) for f in fields(self)}
        d["kind"] = type(self).__name__
        return d


RESET_WHY: Final[dict[str, str]] = {"daily": "daily reset", "idle": "idle expiry", "new": "/new", "reset": "/reset"}
"""What started a fresh session (:attr:`SessionReset.reason`), in the words shown to the user."""


@dataclass(slots=True)
class SessionReset(EngineEvent):
    """A fresh session started for the key (automatic or manual)."""

    key: str
    reason: str  # daily | idle | new | reset
    old_session_id: str | None
    new_session_id: str
    detail: str = ""
    undoable: bool = False
    carried: int = 0
    """Session-state entries carried over into the new session (``/new``, daily reset)."""

    @property
    def line(self) -> str:
        """The reset as the app, the REPL and ``neotask send`` say it: ``new session <id> (daily reset);
        the previous one, <id>, is archived · <detail>`` (each front end adds how to undo it there)."""
        line = f"new session {self.new_session_id} ({RESET_WHY.get(self.reason, self.reason)})"
        if self.old_session_id:
            line += f"; the previous one, {self.old_session_id}, is archived"
        if self.detail:
            line += f" · {self.detail}"
        return line


@dataclass(slots=True)
class ResetUndone(EngineEvent):
    """An automatic reset was undone: the session it replaced is the key's current one again, and
    counts as active now (the same daily boundary or idle gap does not reset it again)."""

    key: str
    reason: str  # daily | idle
    session_id: str
    """The session brought back."""
    replaced_session_id: str
    """The reset's session, archived again (viewable and restorable)."""
    messages_left: int = 0
    """Your messages sent in the reset's session: they stay there, not in the one brought back."""

    @property
    def line(self) -> str:
        """``restored <id> (the daily reset is undone)``, and where the messages sent since the
        reset are, when there are any."""
        line = f"restored {self.session_id} (the {RESET_WHY.get(self.reason, self.reason)} is undone)"
        if self.messages_left:
            n = self.messages_left
            line += (f"; your {n} message{'s' if n != 1 else ''} since the reset stay{'s' if n == 1 else ''} "
                     f"in {self.replaced_session_id}, now archived")
        return line


@dataclass(slots=True)
class Superseded(EngineEvent):
    """``/retry`` or ``/edit`` retired events of the key's session (they stay in the transcript,
    marked by the ``superseded`` marker ``marker_id``, and leave the context)."""

    key: str
    session_id: str
    by: str  # retry | edit
    superseded_ids: list[int]
    marker_id: int


@dataclass(slots=True)
class TurnStarted(EngineEvent):
    """The user's message is durably on disk."""

    key: str
    session_id: str
    user_event_id: int


@dataclass(slots=True)
class ProviderInfo(EngineEvent):
    """Which provider/model answers and why (emitted when it is chosen or loaded)."""

    provider: str
    model: str
    reason: str


@dataclass(slots=True)
class ModelLoading(EngineEvent):
    """Progress of loading a local model (runs in a thread)."""

    message: str
    done: bool = False


@dataclass(slots=True, frozen=True)
class RecallReceipt:
    """One recalled item as the user sees it: what, from where, how relevant, under which scope."""

    id: str
    text: str
    source: str
    score: float
    scope: str
    kind: str = "memory"
    """``memory``, ``conversation`` or ``history`` (see :data:`~neotask_tui.memory.types.RECALL_KINDS`)."""
    speaker: str = ""
    """Who said a quoted transcript passage (``user``, ``assistant``); empty for memory."""
    said_on: str = ""
    """When it was said; empty for memory."""

    @property
    def label(self) -> str:
        """The kind as shown to the user: ``memory``, ``this conversation`` or ``history · user,
        2023-05-08 13:56`` (a quoted passage says who said it, and when)."""
        return recall_label(self.kind, self.speaker, self.said_on)


@dataclass(slots=True)
class Recalled(EngineEvent):
    """Memories recalled for this turn (receipts for the sidebar)."""

    query: str
    items: list[RecallReceipt] = field(default_factory=list)


@dataclass(slots=True)
class Notice(EngineEvent):
    """Something the user should see (info/warning/error), shown inline."""

    text: str
    level: str = "info"


@dataclass(slots=True)
class ContextBuilt(EngineEvent):
    """The ledger of the context about to be sent."""

    ledger: Ledger


@dataclass(slots=True)
class TokenDelta(EngineEvent):
    """A piece of the streaming reply."""

    text: str


@dataclass(slots=True)
class ToolCallStarted(EngineEvent):
    """The model called a tool."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class ToolCallFinished(EngineEvent):
    """A tool call finished."""

    call_id: str
    name: str
    result: str
    is_error: bool = False


@dataclass(slots=True)
class Compacted(EngineEvent):
    """A compaction happened (auto or manual)."""

    key: str
    old_session_id: str
    new_session_id: str
    tokens_before: int
    tokens_after: int
    repaired: list[dict[str, Any]] = field(default_factory=list)
    fallback: bool = False


@dataclass(slots=True)
class TurnDone(EngineEvent):
    """The reply is complete and durably stored."""

    key: str
    session_id: str
    event_id: int
    text: str
    usage: Usage
    cost_usd: float | None
    provider: str
    model: str
    totals: Counters
    ledger: Ledger


@dataclass(slots=True)
class TurnFailed(EngineEvent):
    """The turn failed; the user's message is on disk and any partial reply is kept (interrupted)."""

    key: str
    error: str
    error_kind: str
    partial_event_id: int | None = None
    partial_text: str = ""
    retryable: bool = True


@dataclass(slots=True)
class TurnInterrupted(EngineEvent):
    """The user stopped the reply; the partial text is kept and marked interrupted."""

    key: str
    partial_event_id: int | None
    partial_text: str
