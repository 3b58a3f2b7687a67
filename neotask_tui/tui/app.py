"""The Neotask Textual app: main screen, bindings, engine workers.

Build it with :func:`make_app` (tests inject an ``Engine`` with a scripted provider). Without an
injected engine the app paints first and opens the engine in a thread worker (it takes the data-dir
lock and reads the index); providers, LanceDB and embeddings load later, when first needed.
Every engine call runs in a worker; widgets only render what the engine yields.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.screen import Screen

from neotask_tui.errors import LockedError, NeotaskError, UserError
from neotask_tui.text.terminal import inert, inert_line
from neotask_tui.tui.commands import SlashCommandProvider
from neotask_tui.tui.hangup import end_process, exit_later, hung_up, watch_hangup
from neotask_tui.tui.input_queue import QUEUE_LIMIT, InputQueue, Job, label_of, queue_line
from neotask_tui.tui.layout import WIDTH_CLASSES, SideLayout, focus_now, side_classes
from neotask_tui.tui.main_view import ChatState, MainView
from neotask_tui.tui.messages import EditRequested, InboxChanged, PaletteCommandChosen
from neotask_tui.tui.panels import Panels
from neotask_tui.tui.themes import chosen_theme, install_themes
from neotask_tui.tui.typeahead import TypeAhead
from neotask_tui.tui.widgets.footer import KeyFooter
from neotask_tui.tui.widgets.gauge import TokenGauge
from neotask_tui.tui.widgets.prompt import Prompt, PromptArea, read_alt_enter_as_ctrl_j
from neotask_tui.tui.widgets.side import RecallSidebar, StatePanel
from neotask_tui.tui.widgets.status import StatusBar
from neotask_tui.tui.widgets.transcript import Entry, MessageView, Transcript
from neotask_tui.tuning import HANGUP_CHECK_SECONDS, HANGUP_EXIT_SECONDS, LOCAL_CLOSE_WAIT_SECONDS

if TYPE_CHECKING:
    from neotask_tui.config import Settings
    from neotask_tui.engine.events import RecallReceipt
    from neotask_tui.engine.facade import Engine
    from neotask_tui.engine.state.model import StateEntry
    from neotask_tui.tui.actions import SlashCommands
    from neotask_tui.tui.turns import TurnRenderer

LOCKED_EXIT = 3
MAIN_ONLY = frozenset({"new_session", "sessions", "compact", "context", "open_inbox", "toggle_state",
                       "toggle_recall", "undo_reset", "focus_next_panel", "focus_previous_panel", "close_panel",
                       "help", "stop", "retry", "edit_last", "cancel_edit"})
IMMEDIATE = frozenset({"help", "context"})
"""Commands that skip the input queue: they only read, and open a screen (``/help NAME``, which
answers inline, waits its turn). So F1 and F4 work while a reply streams or a command runs."""


class NeotaskApp(App[int]):
    """Chat with the engine: transcript, gauge, state panel, recall sidebar, prompt."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute, so subclasses elsewhere still find it
    TITLE = "Neotask"
    COMMANDS = App.COMMANDS | {SlashCommandProvider}
    HORIZONTAL_BREAKPOINTS = list(WIDTH_CLASSES)  # noqa: RUF012 (declared by App as an instance variable)
    BINDINGS: ClassVar[list[BindingType]] = [
        # The footer shows them in this order, the essential ones first (see widgets/footer.py).
        Binding("f1", "help", "Help", id="help"),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
        # Priority: the prompt's TextArea binds F6 itself (select line), which shadowed the cycle.
        Binding("f6", "focus_next_panel", "Focus", id="focus_panels", priority=True),
        Binding("shift+f6", "focus_previous_panel", "Focus back", id="focus_panels_back", priority=True,
                show=False),
        Binding("ctrl+u", "undo_reset", "Restore previous", id="undo_reset", priority=True),
        Binding("escape", "stop", "Stop reply", id="stop", show=False),
        Binding("escape", "close_panel", "Close panel", id="close_panel", show=False),
        Binding("ctrl+c", "interrupt", "Stop reply", id="interrupt", priority=True, show=False),
        Binding("ctrl+n", "new_session", "New", id="new_session"),
        # Off the footer (it is full at 120 columns); F1 lists them. Ctrl+E is the prompt's end of
        # line; Ctrl+R and Ctrl+T are free in the TextArea.
        Binding("ctrl+r", "retry", "Retry reply", id="retry", show=False),
        Binding("ctrl+t", "edit_last", "Edit last message", id="edit_last", show=False),
        Binding("escape", "cancel_edit", "Cancel edit", id="cancel_edit", show=False),
        Binding("ctrl+o", "sessions", "Sessions", id="sessions"),
        Binding("f5", "compact", "Compact", id="compact"),
        Binding("f4", "context", "Context", id="context"),
        Binding("ctrl+b", "open_inbox", "Inbox", id="inbox"),
        Binding("f2", "toggle_state", "State", id="toggle_state"),
        Binding("f3", "toggle_recall", "Recall", id="toggle_recall"),
    ]

    def __init__(self, settings: Settings, engine: Engine | None = None, key: str | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.engine: Engine | None = engine
        self.owns_engine = engine is None
        self.view = MainView(self)
        self.chat = ChatState(key=key or settings.general.default_key)
        self.ready = asyncio.Event()
        self.startup_error: tuple[int, str] | None = None
        self._terminal_fd: int | None = None
        """The terminal watched for a hang-up (tui/hangup.py); None headless."""
        self.inputs = InputQueue(self, self.ready, self._show_queue)
        self.typeahead = TypeAhead(self, lambda: self.view.prompt_area)
        self._panels: Panels | None = None
        self._turns: TurnRenderer | None = None
        self._commands: SlashCommands | None = None
        self.layout = SideLayout(self.view, settings.ui.show_state_panel, settings.ui.show_recall_sidebar)
        self.set_keymap(dict(settings.ui.bindings))
        read_alt_enter_as_ctrl_j()
        # Themes are registered and the configured one selected before any CSS is parsed.
        self._theme_notes = install_themes(self, chosen_theme(settings.ui.theme))

    async def on_event(self, event: events.Event) -> None:
        # A screen that opened while you typed passes your typing on to the prompt (tui/typeahead.py).
        if isinstance(event, (events.Key, events.MouseDown, events.Paste)) and not event.is_forwarded:
            if await self.typeahead.take(event):
                return
            self.typeahead.note(event)
        await super().on_event(event)

    def notify(self, message: str, *, title: str = "", **kw: Any) -> None:
        """Every notification (the app's and its screens') is shown inert and literally (never read
        as markup: errors quote file names, replies and server messages)."""
        kw["markup"] = False
        super().notify(inert(message), title=inert(title), **kw)

    # ------------------------------------------------------------------ layout
    def compose(self) -> Any:
        # Widgets start in their first-frame state (no toggling after mount: each costs a restyle).
        status = StatusBar(id="status")
        status.set_reactive(StatusBar.key, self.key)
        yield status
        with Horizontal(id="main"):
            with Vertical(id="chat"):
                yield Transcript(id="transcript")
                yield TokenGauge(id="gauge")
                yield Prompt(id="prompt", for_history=self.history_entry)
            ui = self.settings.ui
            with Vertical(id="side", classes=side_classes(ui.show_state_panel, ui.show_recall_sidebar)):
                yield StatePanel(id="state", classes="" if ui.show_state_panel else "-off")
                yield RecallSidebar(id="recall", classes="" if ui.show_recall_sidebar else "-off")
        yield KeyFooter()

    def on_mount(self) -> None:
        for text, title, timeout in self._theme_notes:
            self.notify(text, title=title, severity="warning", timeout=timeout)
        self.view.prompt_area.focus()
        # The engine (lock, index, later the tokenizer) opens after the first paint, off the loop.
        self.call_after_refresh(self.start_engine)
        self.set_interval(1.0, self._tick)
        if not self.is_headless:  # a real terminal: quit cleanly when it goes away
            self._terminal_fd = watch_hangup(lambda: self.call_later(self._terminal_gone), self.set_interval,
                                             HANGUP_CHECK_SECONDS)

    def watch_theme(self, _theme: str) -> None:
        if not self.screen_stack:
            return
        for gauge in self.main.query(TokenGauge):
            gauge.refresh_colours()

    # ------------------------------------------------------------------ state and controllers
    @property
    def key(self) -> str:
        """The session key the main screen shows."""
        return self.chat.key

    @property
    def streaming(self) -> bool:
        """A reply is streaming."""
        return self.chat.streaming

    @property
    def undo_reset_available(self) -> bool:
        """The last automatic reset can be undone with one key."""
        return self.chat.undo_reset_available

    @property
    def main(self) -> Screen[Any]:
        """The main screen (queries on the app itself only see the active screen)."""
        return self.view.screen

    def _engine(self) -> Engine:
        if self.engine is None:
            raise RuntimeError("the engine is not open yet")
        return self.engine

    @property
    def panels(self) -> Panels:
        """The main screen's panels, read from the engine (once it is open)."""
        if self._panels is None:
            self._panels = Panels(self.view, self.chat, self._engine())
        return self._panels

    @property
    def turns(self) -> TurnRenderer:
        """Renders engine events of a turn (engine events load with the first turn, not at startup)."""
        if self._turns is None:
            from neotask_tui.tui.turns import TurnRenderer

            self._turns = TurnRenderer(self, self.view, self.chat, self._engine(), self.panels,
                                       restore_key=self.binding_key("undo_reset"))
        return self._turns

    @property
    def commands(self) -> SlashCommands:
        """Runs slash commands (the registry loads with the first command, not at startup)."""
        if self._commands is None:
            from neotask_tui.tui.actions import SlashCommands

            self._commands = SlashCommands(self, self.view, self.chat, self._engine(), self.panels, self.turns,
                                           configured_theme=self.settings.ui.theme, regenerate=self.regenerate,
                                           typeahead=self.typeahead)
        return self._commands

    def _mask_keys(self, text: str) -> str:
        """``text`` with a configured API key masked, as the transcript stores it (a queued input's label)."""
        from neotask_tui.providers.selection import without_configured_keys

        return without_configured_keys(text, self.settings)

    def history_entry(self, text: str) -> str | None:
        """What the input history keeps of ``text``, as the REPL keeps it
        (:func:`~neotask_tui.commands.core.history_entry` with this app's settings)."""
        from neotask_tui.commands.core import history_entry  # loads the commands, as sending does next

        return history_entry(text, self.settings)

    # ------------------------------------------------------------------ engine startup
    @work(group="startup")
    async def start_engine(self) -> None:
        """Open the engine off the event loop (unless injected), then load the session."""
        if self.engine is None:
            try:
                self.engine = await asyncio.to_thread(_open_engine, self.settings)
            except Exception as e:
                from neotask_tui.config import ConfigError

                if isinstance(e, UserError | ConfigError):  # a bad setting: exit 2, as the CLI's commands
                    self.startup_error = (code := 2, f"neotask: error: {str(e).splitlines()[0]}")
                else:
                    self.startup_error = (code := LOCKED_EXIT if isinstance(e, LockedError) else 1, f"neotask: {e}")
                self.exit(code)
                return
        engine = self.engine
        from neotask_tui.tui.actions import MemoryProgress

        engine.show_memory_progress(MemoryProgress(self))  # a re-embed after a model change, shown
        self._show_engine_notices()
        from neotask_tui.storage.history import history_problem

        history = history_problem()  # a `history` that is a link or hard-linked: not saved (see append_history)
        if history is not None:
            self.notify(history, severity="warning", timeout=10)
        if self.settings.ui.bindings:  # a remap Textual would ignore silently (unknown id, no such key)
            from neotask_tui.tui.keymap import keymap_problems

            for note in await asyncio.to_thread(keymap_problems, self.settings.ui.bindings):
                self.notify(note, severity="warning", timeout=10)
        try:
            with self.view.tolerant():
                await self.load_session()
                await self.panels.show_welcome()
        finally:  # only now: a message sent earlier would be wiped by the transcript load
            self.ready.set()
        from neotask_tui.tui.actions import watch_memory

        self.run_worker(watch_memory(self, engine, self.key), group="memory-watch")

    async def load_session(self) -> None:
        """(Re)load the transcript, gauge, state, status for ``self.key``; then tell what loading it
        repaired (a quarantined line, a hard link: :meth:`_show_engine_notices`)."""
        self._end_edit()  # an edit belongs to the session it was started in
        await self.panels.load_session()
        self._show_engine_notices()

    def _show_engine_notices(self) -> None:
        """Each repair or problem the engine found while loading (``engine.notices``) as a warning,
        once (taken from the list, as a turn takes them): a transcript is read when its session is
        first shown, so they come after start too."""
        engine = self.engine
        if engine is None:
            return
        notes = engine.notices
        for note in list(notes):
            self.notify(note, severity="warning", timeout=10)
        notes.clear()

    async def refresh_panels(self, *, full: bool = False) -> None:
        """Status line, gauge totals/ledger, state panel and inbox count."""
        await self.panels.refresh(full=full)

    def on_inbox_changed(self, message: InboxChanged) -> None:
        self.panels.show_inbox_count(message.pending)

    def _tick(self) -> None:
        """Once a second: the reset countdown and the state TTL countdowns."""
        if not self.ready.is_set() or self.engine is None or not self.is_running:
            return
        self.panels.tick()

    # ------------------------------------------------------------------ sending
    @on(Prompt.Submitted)
    def on_prompt_submitted(self, message: Prompt.Submitted) -> None:
        from neotask_tui.commands import split_line

        line, text = split_line(message.text)
        if line is not None:
            self.run_command(line, typed=message.text)
            return
        if text != message.text:  # "//…": the app drops the whitespace typed before it too
            text = text.lstrip()
        editing = self.chat.editing is not None
        self._end_edit()
        send = functools.partial(self.send_message, text, regenerate=editing)
        self._enqueue(Job(label_of(text, self._mask_keys), send, "turn"),
                      typed=message.text)

    def _enqueue(self, job: Job, typed: str | None = None) -> None:
        """Handle ``job`` after everything typed before it (now, when nothing runs). Refused (the
        queue is full, the app is quitting), the ``typed`` text goes back into the prompt."""
        behind = self.inputs.running
        job = dataclasses.replace(job, typed=self.typeahead.mark)
        if self.inputs.submit(job):
            if behind is not None and len(self.screen_stack) > 1:  # the queue line is under this screen
                self.notify(f"queued: {job.label} — runs after {behind}", timeout=4)
            return
        # Quitting, the screens may be gone already (an input queued in a burst is handled as the app
        # closes): the text is in the input history then; nothing to put back.
        with contextlib.suppress(NoMatches):
            if typed is not None and not self.view.prompt.text:
                self.view.prompt.text = typed
        self.notify(f"not queued: {QUEUE_LIMIT} inputs already wait — your text is kept in the prompt"
                    if not self.inputs.closed else "not run: the app is quitting", severity="warning")

    def _show_queue(self, waiting: list[str]) -> None:
        """The prompt's bottom border names the inputs waiting their turn (none: no line)."""
        with self.view.tolerant():
            self.view.prompt_area.border_subtitle = Content(queue_line(waiting)) if waiting else None

    async def send_message(self, text: str | None, *, regenerate: bool = False) -> None:
        """One turn: stream the engine's events into the transcript and panels (``regenerate``:
        ``/retry`` when ``text`` is None, else ``/edit`` of your last message). The files attached
        with ``/file`` and a new message's ``@path`` ones go with it; one that cannot be read stops
        the send with a one-line error and the text goes back into the prompt. Runs as a job of
        the input queue (Esc cancels its worker)."""
        with self.view.tolerant():
            files = []
            if text is not None:  # an edit carries them too (and keeps the files of the message it replaces)
                try:
                    files = await asyncio.to_thread(self.chat.pending.take, text)
                except NeotaskError as e:
                    await self.view.add_entry(Entry(kind="notice", text=f"not sent: {e}", level="error"))
                    if not self.view.prompt.text:
                        self.view.prompt.text = text
                    return
            await self.turns.run(text, files, regenerate=regenerate)

    async def regenerate(self, text: str | None) -> None:
        """``/retry`` (``text`` None) or ``/edit TEXT``: the regenerated turn, inside that command's job."""
        self._end_edit()
        await self.send_message(text, regenerate=True)

    @on(EditRequested)
    def on_edit_requested(self, message: EditRequested) -> None:
        self._begin_edit(message.text, message.event_id)

    def _begin_edit(self, text: str, event_id: int) -> None:
        """The prompt edits your message ``event_id``: Enter replaces it and regenerates, Esc cancels."""
        self.chat.editing = event_id
        self.view.prompt.text = text
        self.view.status.offer = f"editing your message e:{event_id} — Enter regenerates the reply · Esc cancels"
        focus_now(self.view.prompt.area)
        self.refresh_bindings()

    def _end_edit(self) -> None:
        if self.chat.editing is not None:
            self.chat.editing = None
            self.view.status.offer = ""
            self.refresh_bindings()

    def action_retry(self) -> None:
        """Ctrl+R: ask the model again for the last reply (``/retry``)."""
        self.run_command("/retry")

    def action_edit_last(self) -> None:
        """Ctrl+T: edit your last message. On an empty prompt it brings the message back; with text
        in the prompt (say, the message ↑ recalled, changed) that text replaces it on Enter."""
        engine = self.engine
        last = engine.last_user_message(self.key) if engine is not None else None
        if last is None:
            self.notify("nothing to edit: no message of yours in this session", severity="warning")
            return
        current = self.view.prompt.text
        self._begin_edit(current if current.strip() else last.content, last.id)

    def action_cancel_edit(self) -> None:
        """Esc while editing: back to a new message (the prompt is cleared, nothing changed)."""
        self.view.prompt.text = ""
        self._end_edit()
        self.notify("edit cancelled — nothing changed", timeout=2)

    def action_stop(self) -> None:
        """Stop a streaming reply (the partial text is kept, marked interrupted); what waits in the
        input queue then runs."""
        turn = self.inputs.current
        if self.streaming and turn is not None:
            turn.cancel()

    async def action_quit(self) -> None:
        """Ctrl+Q / ``/quit``: stop what runs, say "finishing…" while the model lets go, then exit.

        The screen stays up meanwhile (a quit never goes blank while it waits), and the wait is
        bounded: the local model stops within one compute step and closing gives it at most
        :data:`~neotask_tui.tuning.LOCAL_CLOSE_WAIT_SECONDS`.
        """
        await self._wind_down(close_engine=False)
        self.exit()

    async def _wind_down(self, *, close_engine: bool) -> None:
        """What a quit does before the app exits: what waits is not run, the draft and a streaming
        reply are kept, the model released; the engine is closed (the lock released) when the model
        was loaded or ``close_engine`` (else ``on_unmount`` closes it)."""
        engine = self.engine
        self.inputs.close()  # what waits is not run (it is in the input history, ↑)
        with self.view.tolerant():
            self.view.prompt.keep_draft()  # and so is what was typed and not sent
        turn = self.inputs.current
        if self.streaming and turn is not None:
            self.view.status.activity = "finishing… (stopping the reply)"
            turn.cancel()
            with contextlib.suppress(Exception):  # cancelled or failed: either way it is over
                await asyncio.wait_for(turn.wait(), LOCAL_CLOSE_WAIT_SECONDS)
        if engine is not None and self.owns_engine and (close_engine or engine.provider is not None):
            self.view.status.activity = "finishing… (releasing the model)"
            await engine.aclose()  # on_unmount's close is then a no-op

    def _terminal_gone_now(self) -> bool:
        return self._terminal_fd is not None and hung_up(self._terminal_fd)

    async def _terminal_gone(self) -> None:
        """SIGHUP, or the terminal hung up: quit as Ctrl+Q does. A terminal that is gone cannot be
        restored, and Textual's teardown writes to it through a bounded queue whose writer thread
        died with it (the app would wait on it forever): once what runs is stopped and the engine
        closed, the process ends here. A SIGHUP sent with the terminal still there is an ordinary quit."""
        if not self._terminal_gone_now():
            await self.action_quit()
            return
        exit_later(HANGUP_EXIT_SECONDS)
        await self._wind_down(close_engine=True)
        end_process()

    def action_interrupt(self) -> None:
        """Ctrl+C: stop a streaming reply, else copy the selection, else explain how to quit."""
        if self.streaming:
            self.action_stop()
            return
        selected = self.view.prompt_area.selected_text
        if selected:
            self.copy_to_clipboard(selected)
            return
        self.notify("nothing to stop — Ctrl+Q quits", timeout=3)

    # ------------------------------------------------------------------ commands
    def run_command(self, line: str, *, typed: str | None = None) -> None:
        """Run a slash command (via the shared registry, then its UI action) after everything typed
        before it; ``/help`` and ``/context`` (read-only, a screen) at once. ``typed``: the prompt's
        text, given back to the prompt if the command cannot be queued."""
        name, _, args = line[1:].partition(" ")
        if name.lower() in IMMEDIATE and not (name.lower() == "help" and args.strip()):
            self._command_now(line)
            return
        self._enqueue(Job(label_of(line, self._mask_keys), functools.partial(self._command, line), "command"),
                      typed=typed)

    async def _command(self, line: str) -> None:
        await self.ready.wait()
        with self.view.tolerant():
            await self.commands.run(line)

    @work(group="command")
    async def _command_now(self, line: str) -> None:
        await self._command(line)

    @on(MessageView.CopyRequested)
    @work(group="command")
    async def on_copy_requested(self, message: MessageView.CopyRequested) -> None:
        """``c`` on a focused message copies it (one of another session's transcript, as shown there).
        Not queued: it only reads, and it is pressed in screens a queued command keeps open (the
        sessions browser's transcripts), which would wait for themselves."""
        await self.ready.wait()
        with self.view.tolerant():
            await self.commands.copy_entry(message.entry, current=message.view.screen is self.main)

    @on(PaletteCommandChosen)
    def on_palette_command_chosen(self, message: PaletteCommandChosen) -> None:
        self.palette_command(message.name)

    def palette_command(self, name: str) -> None:
        """Run a command chosen in the palette (commands with arguments prefill the prompt)."""
        from neotask_tui.commands import load_all

        cmd = load_all().get(name)
        prompt = self.view.prompt
        if cmd is not None and cmd.usage.strip() != f"/{name}" and "[" not in cmd.usage.split(" ", 1)[-1][:1]:
            prompt.text = f"/{name} "
            focus_now(prompt.area)
        else:
            self.run_command(f"/{name}")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for title, help_, callback in (
            ("New session", "Start a fresh session (old one archived, active state carried over)",
             self.action_new_session),
            ("Sessions", "Browse, resume, view and restore sessions", self.action_sessions),
            ("Compact", "Summarize older messages (review first)", self.action_compact),
            ("Context", "What the next call sends, section by section", self.action_context),
            ("Inbox", "Memory candidates to accept, edit or reject", self.action_open_inbox),
            ("Toggle state panel", "Show or hide the session state", self.action_toggle_state),
            ("Toggle recall sidebar", "Show or hide recalled memory", self.action_toggle_recall),
        ):
            yield SystemCommand(title, help_, callback)

    def action_new_session(self) -> None:
        """``/new``."""
        self.run_command("/new")

    def action_sessions(self) -> None:
        """``/sessions``."""
        self.run_command("/sessions")

    def action_compact(self) -> None:
        """``/compact`` (opens the review modal)."""
        self.run_command("/compact")

    def action_context(self) -> None:
        """``/context``: with a draft in the prompt, what sending it would send (recall for it)."""
        draft = self.view.prompt.text.strip()
        self.run_command(f"/context {draft}" if draft and not draft.startswith("/") else "/context")

    def action_open_inbox(self) -> None:
        """``/inbox``."""
        self.run_command("/inbox")

    def action_help(self) -> None:
        """``/help``."""
        self.run_command("/help")

    def action_toggle_state(self) -> None:
        """Show/hide the state panel (narrow screens: open it over the transcript, or close it)."""
        self.layout.toggle("state", self.focused)

    def action_toggle_recall(self) -> None:
        """Show/hide the recall sidebar (narrow screens: open it over the transcript, or close it)."""
        self.layout.toggle("recall", self.focused)

    def action_focus_next_panel(self) -> None:
        """Cycle focus: prompt → state → recall → transcript (from anywhere on the main screen)."""
        self.layout.cycle(self.focused, 1)

    def action_focus_previous_panel(self) -> None:
        """The focus cycle backwards."""
        self.layout.cycle(self.focused, -1)

    def action_close_panel(self) -> None:
        """Esc: close the panel open over the transcript (narrow screens)."""
        self.layout.close()

    @on(PromptArea.ScrollTranscript)
    def on_prompt_scroll_transcript(self, message: PromptArea.ScrollTranscript) -> None:
        self.view.transcript.scroll_by_key(message.how)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Main-screen actions are hidden (and off) while another screen or a modal is on top.
        if action in MAIN_ONLY and len(self.screen_stack) > 1:
            return False
        if action == "undo_reset":
            return self.undo_reset_available
        if action == "stop":
            # A panel open over the transcript is closed first: Esc pressed to leave it stopped the reply.
            return self.streaming and not (self.layout.open is not None and self.layout.narrow)
        if action == "cancel_edit":
            return self.chat.editing is not None and not self.streaming
        if action in ("retry", "edit_last"):
            return not self.streaming
        if action == "close_panel":
            return self.layout.open is not None and self.layout.narrow
        return True

    def action_undo_reset(self) -> None:
        """Bring back the session replaced by the last automatic reset (in order with what is typed)."""
        if self.chat.undo_reset_available:
            self._enqueue(Job("restore the previous session", self._undo_reset, "command"))

    async def _undo_reset(self) -> None:
        if not self.chat.undo_reset_available:  # withdrawn meanwhile (a message was sent first)
            self.notify("nothing to restore: the offer ended with the message sent before", severity="warning")
            return
        self.chat.undo_reset_available = False
        self.view.status.offer = ""
        try:
            rec = await self._engine().undo_reset(self.key)
        except Exception as e:
            self.notify(f"cannot restore: {e}", severity="error")
            return
        self.notify(f"restored session {rec.session_id}")
        with self.view.tolerant():
            await self.load_session()
        self.refresh_bindings()

    def binding_key(self, action: str) -> str:
        """The key :attr:`BINDINGS` gives ``action`` (its first key), for hints; ``?`` if none.

        A ``ui.bindings`` remap is not reflected (it never was: the hint names the default key)."""
        for b in self.BINDINGS:
            if isinstance(b, Binding) and b.action == action:
                return b.key.split(",")[0].strip()
        return "?"

    async def action_view_session(self, session_id: str) -> None:
        """Open a (usually archived) transcript read-only."""
        from neotask_tui.tui.screens.sessions import TranscriptScreen

        await self.push_screen(TranscriptScreen(self._engine(), session_id, archived=True))

    # ------------------------------------------------------------------ panels → engine
    # The edits below write (state, memory, session config): they run in order with what is typed,
    # like the commands that do the same. Their dialogs open at once, outside the queue.
    @on(StatePanel.EditRequested)
    @work(group="state-edit")
    async def edit_state(self, message: StatePanel.EditRequested) -> None:
        e = message.entry
        from neotask_tui.tui.screens.modals import InputModal

        value = await self.push_screen_wait(InputModal(f"Edit {e.field}", str(e.value)))
        if value is not None:
            self._enqueue(Job(f"edit {e.field}", functools.partial(self._edit_state, e, value), "state-edit"))

    async def _edit_state(self, e: StateEntry, value: str) -> None:
        state = self._engine().state
        try:
            await state.clear(self.key, e.field, item=e.id, source="user edit")
            if value.strip():
                await state.set(self.key, e.field, value, scope=e.scope, ttl=e.ttl,
                                            until_event=e.until_event)
        except Exception as err:
            self.notify(f"cannot edit {e.field}: {err}", severity="error")
        with self.view.tolerant():
            await self.refresh_panels()

    @on(StatePanel.ClearRequested)
    def clear_state(self, message: StatePanel.ClearRequested) -> None:
        e = message.entry
        self._enqueue(Job(f"clear {e.field}", functools.partial(self._clear_state, e), "state-edit"))

    async def _clear_state(self, e: StateEntry) -> None:
        try:
            await self._engine().state.clear(self.key, e.field, item=e.id)
            self.notify(f"cleared {e.field}")
        except Exception as err:
            self.notify(f"cannot clear {e.field}: {err}", severity="error")
        with self.view.tolerant():
            await self.refresh_panels()

    @on(RecallSidebar.Action)
    async def recall_action(self, message: RecallSidebar.Action) -> None:
        item, act = message.item, message.action
        if act == "open":
            from neotask_tui.tui.screens.modals import TextModal

            title = f"{inert_line(item.source)} · score {item.score:.2f} · {item.scope}"
            await self.push_screen(TextModal(title, item.text))
        elif act in ("forget", "never"):
            what = "forget" if act == "forget" else "never recall"
            self._enqueue(Job(f"{what} {item.id}", functools.partial(self._recall_write, item, act), "recall"))

    async def _recall_write(self, item: RecallReceipt, act: str) -> None:
        side = self.view.recall
        engine = self._engine()
        if act == "forget":
            from neotask_tui.commands import dispatch

            res = await dispatch(engine, self.key, f"/forget {item.id}")
            self.notify(res.text or "forgotten", severity="error" if res.error else "information")
            if not res.error:
                side.remove_item(item.id)
        else:
            rec = engine.current_record(self.key)
            ids = [*rec.config.get("never_recall", []), item.id]
            await engine.set_session_config(self.key, never_recall=ids)
            side.remove_item(item.id)
            self.notify("won't be recalled again in this session")
        with self.view.tolerant():  # the next call's estimate changes with what memory holds
            await self.refresh_panels()

    async def on_unmount(self) -> None:
        if self.engine is not None and self.owns_engine:
            await self.engine.aclose()
        if self._terminal_gone_now():
            # Textual ended the app itself (its input read failed on the dead terminal): what comes
            # next, its driver's close, would wait forever on writes to that terminal (tui/hangup.py).
            end_process()


def _open_engine(settings: Settings) -> Engine:
    from neotask_tui.engine.facade import Engine

    return Engine(settings)


def make_app(settings: Settings, engine: Engine | None = None, key: str | None = None) -> NeotaskApp:
    """Build the app. With ``engine=None`` the app opens (and closes) its own engine."""
    return NeotaskApp(settings, engine=engine, key=key)


def run_app(settings: Settings, key: str | None = None) -> int:
    """Run the app until it exits; returns the exit code (3 when the data dir is locked)."""
    app = make_app(settings, key=key)
    code = app.run()
    if app.startup_error is not None:
        sys.stderr.write(inert(app.startup_error[1]) + "\n")
        return app.startup_error[0]
    return int(code or 0)


__all__ = ["NeotaskApp", "make_app", "run_app"]
