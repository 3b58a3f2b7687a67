"""The prompt: multi-line input with history and slash-command autocomplete.

Enter sends; Ctrl+J / Alt+Enter / Shift+Enter insert a newline. PageUp / PageDown and Ctrl+Up /
Ctrl+Down scroll the transcript (the prompt keeps focus). Up/Down on the first/last line walk
the history, which is the same file the plain REPL uses (prompt-toolkit ``FileHistory`` format).
Typing ``/`` shows matching commands with their descriptions; Tab (or Enter) completes. ``@`` in a
message (and the path of ``/file``) shows the files and folders that complete the path typed.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Final

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from neotask_tui import paths

ALT_ENTER: Final = "\x1b\r"
"""What most terminals send for Alt+Enter (ESC, CR) unless they speak the kitty keyboard protocol."""


def read_alt_enter_as_ctrl_j() -> None:
    """Make Textual read ESC CR as Ctrl+J (a newline in the prompt) instead of Enter (send).

    Textual 8 drops the Alt of a named key sent ESC-prefixed (textualize/textual#6663): Alt+Enter
    arrived as plain ``enter`` and sent the message. Its table of terminal sequences is private;
    ``tests/tui/test_textual_api.py`` pins what this relies on. An existing entry is left alone.
    """
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
    from textual.keys import Keys

    if ALT_ENTER not in ANSI_SEQUENCES_KEYS and isinstance(ANSI_SEQUENCES_KEYS, dict):  # typed as a Mapping
        ANSI_SEQUENCES_KEYS[ALT_ENTER] = (Keys.ControlJ,)


class PromptArea(TextArea):
    """The text area; keys that belong to the prompt as a whole are forwarded to :class:`Prompt`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+j,alt+enter,shift+enter", "newline", "Newline", show=False, id="prompt_newline"),
        Binding("pageup", "scroll_transcript('page_up')", "Scroll up", show=False, id="transcript_page_up"),
        Binding("pagedown", "scroll_transcript('page_down')", "Scroll down", show=False,
                id="transcript_page_down"),
        Binding("ctrl+up", "scroll_transcript('up')", "Scroll up", show=False, id="transcript_up"),
        Binding("ctrl+down", "scroll_transcript('down')", "Scroll down", show=False, id="transcript_down"),
    ]
    OWN_BINDINGS = frozenset({"prompt_newline", "transcript_page_up", "transcript_page_down", "transcript_up",
                              "transcript_down"})
    """Ids of the bindings above: they run from :meth:`on_key`, in order with the keys typed around them."""

    class ScrollTranscript(Message):
        """Scroll the transcript: ``how`` is ``page_up``, ``page_down``, ``up`` or ``down``."""

        def __init__(self, how: str) -> None:
            super().__init__()
            self.how = how

    def action_newline(self) -> None:
        """Insert a line break."""
        self.insert("\n")

    def action_scroll_transcript(self, how: str) -> None:
        """Ask the app to scroll the transcript (the prompt keeps focus)."""
        self.post_message(self.ScrollTranscript(how))

    async def on_key(self, event: events.Key) -> None:
        # Runs before TextArea's own key handler; prevent_default() skips it (and the other base-class
        # handlers) for the keys the prompt handles.
        prompt = self.parent
        if isinstance(prompt, Prompt) and prompt.prompt_key(event.key, self):
            event.stop()
            event.prevent_default()
            return
        # A binding would only run once the key has bubbled up to the app, after the keys typed right
        # behind it were inserted (text typed after Ctrl+J landed before the line break): run ours now.
        # ``active_bindings`` has the keymap (``ui.bindings``) applied.
        bound = self.screen.active_bindings.get(event.key)
        if bound is not None and bound.node is self and bound.binding.id in self.OWN_BINDINGS:
            event.stop()
            event.prevent_default()
            await self.run_action(bound.binding.action)


class Prompt(Vertical):
    """Suggestions list above a multi-line text area."""

    class Submitted(Message):
        """The user sent ``text`` (a message or a slash command)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, history_path: Path | None = None, *, for_history: Callable[[str], str | None] | None = None,
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.history_path = history_path or paths.history_file()
        self.for_history: Callable[[str], str | None] = for_history or (lambda text: text)
        """What the history keeps of a text sent (or left in the prompt at quit), None: nothing (the
        app's rule: a configured API key masked, a ``/model`` refused as an API key left out)."""
        self.history: list[str] = []
        self._hist_pos: int | None = None
        self._draft = ""
        self._matches: list[tuple[str, str]] = []
        self._partial: str | None = None
        """The path being completed (after ``@`` or ``/file``), when the suggestions are paths."""
        self._unsaved: deque[str] = deque()
        """Entries sent but not yet appended to the history file, in the order sent."""
        self._saving = threading.Lock()
        """Guards :attr:`_unsaved` and :attr:`_saver_running` (held briefly, also on the app's thread)."""
        self._writing = threading.Lock()
        """Held while an entry is taken and appended (off the app's thread, but for :meth:`keep_draft`),
        so two writers never swap two entries."""
        self._saver_running = False

    def compose(self) -> Any:
        suggestions = OptionList(id="suggestions")
        suggestions.display = False  # shown while typing a /command
        yield suggestions
        yield PromptArea(id="prompt-input", soft_wrap=True, show_line_numbers=False, compact=True,
                         placeholder="Message, or / for commands — Enter sends, Ctrl+J newline")

    def on_mount(self) -> None:  # read after the first paint (storage is imported then, not before it)
        self.call_after_refresh(lambda: self.run_worker(self._load_history, thread=True, group="history"))

    def _load_history(self) -> None:
        from neotask_tui.storage.history import read_history  # after the first paint (storage is deferred)

        self.history = read_history(self.history_path) + self.history

    @property
    def area(self) -> PromptArea:
        """The text area."""
        return self.query_one(PromptArea)

    @property
    def text(self) -> str:
        """Current text."""
        return self.area.text

    @text.setter
    def text(self, value: str) -> None:
        self.area.text = value
        lines = value.split("\n")
        self.area.move_cursor((len(lines) - 1, len(lines[-1])))

    # --- suggestions -------------------------------------------------------------------------
    @property
    def suggesting(self) -> bool:
        """Whether the suggestion list is shown."""
        return bool(self.query_one("#suggestions").display)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._update_suggestions(event.text_area.text)

    def _update_suggestions(self, text: str) -> None:
        ol = self.query_one("#suggestions", OptionList)
        before = (list(self._matches), ol.highlighted if ol.display else None)
        self._partial = None
        if text.startswith("/") and " " not in text and "\n" not in text:
            from neotask_tui.commands import completions  # the registry loads on the first "/"

            self._matches = completions(text[1:])
        elif (partial := self._path_being_typed(text)) is not None:
            from neotask_tui.engine.context.attachments import path_completions

            self._partial = partial
            self._matches = [(c, "folder" if c.rstrip('"').endswith("/") else "file")
                             for c in path_completions(partial)]
        else:
            self._matches = []
        ol.clear_options()
        if not self._matches:
            ol.display = False
            return
        width = max(len(n) for n, _ in self._matches)
        ol.add_options([Option(Text.assemble((n.ljust(width + 2), "bold"), (h, "dim")))
                        for n, h in self._matches])
        # The same list again (Tab brings it up to date first): the choice made with Up/Down stays.
        ol.highlighted = before[1] if before[0] == self._matches and before[1] is not None else 0
        ol.display = True

    def _path_being_typed(self, text: str) -> str | None:
        """The partial path at the end of the text, when the cursor is there: after ``@`` in a message,
        or the last word of ``/file …``."""
        area = self.area
        if area.cursor_location != area.document.end:
            return None
        if text.startswith("/"):
            if not text.startswith("/file ") or "\n" in text:
                return None
            word = text.rsplit(" ", 1)[-1]
            return None if word.startswith("--") else word
        from neotask_tui.engine.context.attachments import mention_at_end

        return mention_at_end(text)

    def _complete(self) -> bool:
        ol = self.query_one("#suggestions", OptionList)
        idx = ol.highlighted if ol.highlighted is not None else 0
        if not self._matches:
            return False
        name = self._matches[idx][0]
        if self._partial is not None:  # a path: replace what is typed of it
            if self._partial == name:
                return False
            folder = name.rstrip('"').endswith("/")
            self.text = self.text[: len(self.text) - len(self._partial)] + name + ("" if folder else " ")
            if not folder:
                ol.display = False
            return True
        if self.text.strip() in {n for n, _ in self._matches}:  # typed in full: Enter sends it as typed
            return False
        self.text = name + " "
        ol.display = False
        return True

    # --- keys --------------------------------------------------------------------------------
    def prompt_key(self, key: str, area: PromptArea) -> bool:
        """Keys with prompt-wide meaning; True when handled."""
        ol = self.query_one("#suggestions", OptionList)
        if self.suggesting and key in ("tab", "enter"):
            # Typed fast, the list may still be for an earlier text (it follows TextArea.Changed, a
            # message): "/help" + Enter completed "/" to the first command. Bring it up to date first.
            self._update_suggestions(area.text)
        if self.suggesting:
            if key in ("up", "down"):
                n = ol.option_count
                cur = ol.highlighted or 0
                ol.highlighted = (cur + (1 if key == "down" else -1)) % n
                return True
            if key == "tab":
                self._complete()
                return True
            if key == "escape":
                ol.display = False
                return True
            if key == "enter" and self._complete():
                return True
        if key == "enter":
            self.submit()
            return True
        if key == "up" and area.cursor_location[0] == 0:
            return self._history_step(-1)
        if key == "down" and area.cursor_location[0] == area.document.line_count - 1:
            return self._history_step(1)
        return False

    def _history_step(self, step: int) -> bool:
        if not self.history:
            return False
        if self._hist_pos is None:
            if step > 0:
                return False
            self._draft = self.text
            self._hist_pos = len(self.history)
        pos = self._hist_pos + step
        if pos < 0:
            return True
        if pos >= len(self.history):
            self._hist_pos = None
            self.text = self._draft
            return True
        self._hist_pos = pos
        self.text = self.history[pos]
        return True

    def submit(self) -> None:
        """Send the current text (ignored when blank)."""
        text = self.text
        if not text.strip():
            return
        self.area.text = ""
        self._hist_pos = None
        self.query_one("#suggestions").display = False
        entry = self.for_history(text)
        if entry is not None and (not self.history or self.history[-1] != entry):
            self.history.append(entry)
            with self._saving:
                self._unsaved.append(entry)
                start, self._saver_running = not self._saver_running, True
            if start:  # one writer at a time, so the file keeps the order they were sent in
                self.run_worker(self._save_history, thread=True, group="history")
        self.post_message(self.Submitted(text))

    def _save_history(self) -> None:
        """Append the entries sent so far to the history file, oldest first (a worker thread)."""
        while True:
            with self._writing:
                with self._saving:
                    if not self._unsaved:
                        self._saver_running = False
                        return
                    text = self._unsaved.popleft()
                self._append(text)

    def _append(self, text: str) -> None:
        from neotask_tui.storage.history import append_history

        with contextlib.suppress(OSError):  # a convenience, not a record (the transcript has the message)
            append_history(self.history_path, text)

    def keep_draft(self) -> None:
        """The app is quitting: put the text not sent into the input history (after everything sent
        before it, written now, in this thread), so ↑ brings it back at the next start."""
        text = self.text
        with self._writing:
            with self._saving:
                entry = self.for_history(text) if text.strip() else None
                if entry is not None and entry not in self.history:  # one recalled with ↑ is there
                    self.history.append(entry)
                    self._unsaved.append(entry)
                pending = list(self._unsaved)
                self._unsaved.clear()
            for entry in pending:
                self._append(entry)
