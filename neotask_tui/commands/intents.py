"""What a slash command asks of the UI beyond showing its text: typed intents.

A command returns one in :attr:`~neotask_tui.commands.CommandResult.intent`; each front end performs
it (the Textual app opens a screen or a modal, switches the theme, exits; the plain REPL prints a
plain-text equivalent or asks on the prompt) with a ``match`` on the intent's type. ``name`` is the
intent's stable name (``CommandResult.action``, what ``--json`` and the tests see).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

if TYPE_CHECKING:
    from neotask_tui.engine.compaction.compactor import CompactionResult
    from neotask_tui.engine.context.attachments import Attachment
    from neotask_tui.storage.search import SearchResult


@dataclass(frozen=True)
class Quit:
    """Leave the front end."""

    name: ClassVar[str] = "quit"


@dataclass(frozen=True)
class ListThemes:
    """List the colour themes (``/theme`` without a name)."""

    name: ClassVar[str] = "theme"


@dataclass(frozen=True)
class SwitchTheme:
    """Switch to the colour theme ``theme`` (and keep it for the next start)."""

    theme: str
    name: ClassVar[str] = "theme"


@dataclass(frozen=True)
class OpenSessions:
    """Browse the sessions (``rows``: :meth:`Engine.list_sessions` with the archived ones)."""

    rows: list[dict[str, Any]]
    name: ClassVar[str] = "open_sessions"


@dataclass(frozen=True)
class OpenInbox:
    """Review the memory candidates of the promotion inbox."""

    name: ClassVar[str] = "open_inbox"


@dataclass(frozen=True)
class ShowSearch:
    """Show the hits of a content search; opening one shows its transcript at that message."""

    result: SearchResult
    name: ClassVar[str] = "search"


@dataclass(frozen=True)
class ShowContext:
    """Show what the next call sends (``data``: :func:`neotask_tui.commands.core.context_payload`)."""

    data: dict[str, Any]
    name: ClassVar[str] = "show_context"


@dataclass(frozen=True)
class ShowHelp:
    """Show the grouped command list (``groups``: (title, [(usage, what it does)])) with the keys a
    keypress away."""

    groups: list[tuple[str, list[tuple[str, str]]]]
    name: ClassVar[str] = "help"


@dataclass(frozen=True)
class ReviewCompaction:
    """Review a compaction preview, then commit it (or an edit of its summary) with
    :func:`neotask_tui.commands.compaction.apply_review` and ``instructions``, or cancel."""

    preview: CompactionResult
    instructions: str | None = None
    name: ClassVar[str] = "compact_review"


@dataclass(frozen=True)
class Regenerate:
    """Stream a regenerated reply: :meth:`Engine.retry` (``text`` None, ``/retry``) or
    :meth:`Engine.edit_last` with ``text`` (``/edit TEXT``)."""

    text: str | None
    name: ClassVar[str] = "regenerate"


@dataclass(frozen=True)
class EditLast:
    """Put your last message (``text``, event ``event_id``) into the prompt to edit; sending it
    replaces that message (:class:`Regenerate` with the edited text)."""

    text: str
    event_id: int
    name: ClassVar[str] = "edit_last"


@dataclass(frozen=True)
class CopyText:
    """Put ``text`` on the clipboard and say so: ``what`` names it ("code block 2 of 3 (python) of the
    last reply, e:12"); :func:`neotask_tui.commands.clipboard.deliver` does the fallbacks."""

    text: str
    what: str
    redacted: int = 0
    name: ClassVar[str] = "copy"


@dataclass(frozen=True)
class AttachFiles:
    """Change the files attached to the next message: add ``add`` (already read), or ``clear`` them;
    with neither, list them."""

    add: tuple[Attachment, ...] = ()
    clear: bool = False
    name: ClassVar[str] = "attach"


Intent: TypeAlias = (Quit | ListThemes | SwitchTheme | OpenSessions | OpenInbox | ShowContext | ShowHelp
                     | ReviewCompaction | Regenerate | EditLast | ShowSearch | CopyText | AttachFiles)
"""Every UI intent a command can return."""

__all__ = ["AttachFiles", "CopyText", "EditLast", "Intent", "ListThemes", "OpenInbox", "OpenSessions", "Quit",
           "Regenerate", "ReviewCompaction", "ShowContext", "ShowHelp", "ShowSearch", "SwitchTheme"]
