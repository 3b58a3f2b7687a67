"""The main screen's widgets and the chat's UI state, as the controllers (panels, turns, commands) see them.

:class:`MainView` looks each widget up (by type) on the main screen when it is used, so a worker
that outlives the screen (the app exits mid-task) gets ``NoMatches``, which :meth:`MainView.tolerant`
ignores while the app shuts down. :class:`ChatState` is what the app and its controllers share:
the session key shown, whether a reply streams, whether a one-key restore is offered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.css.query import NoMatches
from textual.screen import Screen

from neotask_tui.tui.widgets.gauge import TokenGauge
from neotask_tui.tui.widgets.prompt import Prompt, PromptArea
from neotask_tui.tui.widgets.side import RecallSidebar, StatePanel
from neotask_tui.tui.widgets.status import StatusBar
from neotask_tui.tui.widgets.transcript import Entry, Transcript

if TYPE_CHECKING:
    from neotask_tui.commands.attach import PendingFiles


@dataclass
class ChatState:
    """The chat's UI state (shared by the app and its controllers).

    Attributes:
        key: The session key the main screen shows.
        streaming: A reply is streaming (what you send meanwhile waits its turn; Esc stops it).
        undo_reset_available: An automatic reset can be undone with one key.
        editing: The id of your message the prompt is editing (``/edit``, Ctrl+T): sending
            replaces it and regenerates the reply; None when the prompt sends a new message.
    """

    key: str
    streaming: bool = False
    undo_reset_available: bool = False
    editing: int | None = None
    _pending: PendingFiles | None = field(default=None, repr=False)

    @property
    def pending(self) -> PendingFiles:
        """The files ``/file`` attached to the next message (made on first use: the command registry
        loads after the first paint)."""
        if self._pending is None:
            from neotask_tui.commands.attach import PendingFiles

            self._pending = PendingFiles()
        return self._pending


class MainView:
    """Typed access to the main screen's widgets (the first screen of ``app``'s stack)."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app

    @property
    def screen(self) -> Screen[Any]:
        """The main screen (queries on the app itself only see the active screen)."""
        if not self._app.screen_stack:  # the app is shutting down while a worker still runs
            raise NoMatches("the app has no screen any more")
        return self._app.screen_stack[0]

    @property
    def status(self) -> StatusBar:
        """The status line."""
        return self.screen.query_one(StatusBar)

    @property
    def transcript(self) -> Transcript:
        """The main transcript."""
        return self.screen.query_one("#transcript", Transcript)

    @property
    def gauge(self) -> TokenGauge:
        """The token gauge."""
        return self.screen.query_one(TokenGauge)

    @property
    def prompt(self) -> Prompt:
        """The prompt."""
        return self.screen.query_one(Prompt)

    @property
    def prompt_area(self) -> PromptArea:
        """The prompt's text area."""
        return self.screen.query_one("#prompt-input", PromptArea)

    @property
    def state(self) -> StatePanel:
        """The session-state panel."""
        return self.screen.query_one(StatePanel)

    @property
    def recall(self) -> RecallSidebar:
        """The recall sidebar."""
        return self.screen.query_one(RecallSidebar)

    async def add_entry(self, entry: Entry) -> None:
        """Append an entry to the transcript."""
        await self.transcript.add(entry)

    @contextlib.contextmanager
    def tolerant(self) -> Iterator[None]:
        """Workers may outlive the widgets they update when the app exits mid-task: ignore that."""
        try:
            yield
        except NoMatches:
            if self._app.is_running and self._app.screen_stack:
                raise
