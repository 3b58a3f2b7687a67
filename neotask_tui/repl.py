"""``neotask chat --plain``: the same engine and slash commands in a line-based REPL.

prompt-toolkit reads the input (history file shared with the app, slash-command completion with
descriptions, Esc+Enter or Ctrl+J… for a newline); rich renders replies as Markdown once they are
complete, while the raw text streams as it arrives (readable by screen readers). After each turn a
one-line status shows the context fill and the session totals. Ctrl+C stops a streaming reply (the
partial text is kept, marked interrupted); Ctrl+D or ``/quit`` leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
from collections.abc import AsyncGenerator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import History
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output
from rich.console import Console
from rich.text import Text

from neotask_tui import paths
from neotask_tui.commands import completions, dispatch, split_line
from neotask_tui.commands.attach import PendingFiles
from neotask_tui.commands.core import history_entry
from neotask_tui.commands.intents import (
    AttachFiles,
    CopyText,
    EditLast,
    ListThemes,
    Quit,
    Regenerate,
    ReviewCompaction,
    SwitchTheme,
)
from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.errors import NeotaskError, UserError
from neotask_tui.storage.history import append_history, history_problem, read_history
from neotask_tui.storage.index import Counters

if TYPE_CHECKING:
    from neotask_tui.engine.context.assembly import Ledger
    from neotask_tui.engine.context.attachments import Attachment
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.base import Usage
from neotask_tui.text.console import InertConsole, InertRenderHook, markdown, styled
from neotask_tui.text.terminal import inert


class SlashCompleter(Completer):
    """Completes ``/command`` names with their one-line help, and paths after ``@`` or ``/file``."""

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        from neotask_tui.engine.context.attachments import mention_at_end, path_completions

        text = document.text_before_cursor
        if text.startswith("/file ") and "\n" not in text:
            partial: str | None = text.rsplit(" ", 1)[-1]
        elif text.startswith("/"):
            partial = None
            if " " not in text and "\n" not in text:
                for name, help_ in completions(text[1:]):
                    yield Completion(name, start_position=-len(text), display_meta=help_)
        else:
            partial = mention_at_end(text)
        if partial is None or partial.startswith("--"):
            return
        for c in path_completions(partial):
            yield Completion(c, start_position=-len(partial),
                             display_meta="folder" if c.rstrip('"').endswith("/") else "file")


def status_line(ledger: Ledger | None, totals: Counters, last: Usage | None) -> str:
    """The gauge as one line: context fill (our estimate of the call), what the provider reported
    for it, session totals and cost."""
    parts = []
    if ledger:
        exact = ledger.source == "exact"
        parts.append(f"context {ledger.fill:.0%} {'' if exact else '≈'}{ledger.total:,}/{ledger.window:,} "
                     f"({ledger.source})")
    if last is not None:
        parts.append(f"call {last.prompt_tokens:,} in ({'reported' if last.reported else 'estimated: not reported'})")
    parts.append(f"in {totals.input:,} out {totals.output:,} cache r/w {totals.cache_read:,}/{totals.cache_write:,}")
    cost = totals.cost_usd
    parts.append("cost n/a" if cost is None else f"${cost:.4f}")
    return " · ".join(parts)


def _bindings() -> KeyBindings:
    kb = KeyBindings()

    @kb.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return kb


class InputHistory(History):
    """The input history file shared with the app (``storage.history``: never opened through a
    link), as :func:`history_entry` keeps it (a configured API key masked; a ``/model`` refused as
    an API key left out). ``path`` None: kept in memory only (the file cannot be used)."""

    def __init__(self, path: Path | None, settings: Settings) -> None:
        super().__init__()
        self.path = path
        self._settings = settings

    def load_history_strings(self) -> Iterable[str]:
        """The saved entries, newest first (prompt-toolkit's order)."""
        return reversed(read_history(self.path)) if self.path is not None else ()

    def store_string(self, string: str) -> None:
        """Append ``string`` to the file (a convenience, not a record: a failed write is dropped)."""
        if self.path is not None:
            with contextlib.suppress(OSError):
                append_history(self.path, string)

    def append_string(self, string: str) -> None:
        """Add ``string`` to the history (in memory and on disk) as :func:`history_entry` keeps it."""
        entry = history_entry(string, self._settings)
        if entry is not None:
            super().append_string(entry)


def _open_history(settings: Settings) -> tuple[InputHistory, str | None]:
    """The REPL's history, and why it is not saved (one line) when the file cannot be used (a
    ``history`` that is a link is not followed: the REPL runs, with what you type kept in memory)."""
    why = history_problem()
    if why is None:
        try:
            return InputHistory(paths.private_file(paths.history_file()), settings), None
        except OSError as e:
            why = f"your input history is not saved: {paths.history_file()}: {e.strerror or e}"
    return InputHistory(None, settings), why


class Repl:
    """The loop, separated from terminal setup so tests can drive it with a pipe input."""

    def __init__(self, engine: Engine, key: str, *, console: Console | None = None, input: Input | None = None,
                 output: Output | None = None) -> None:
        self.engine = engine
        self.key = key
        self.console = console or InertConsole(highlight=False)
        if not isinstance(self.console, InertConsole):
            self.console.push_render_hook(InertRenderHook())  # whatever console it is given, output is inert
        history, self.history_problem = _open_history(engine.settings)
        self.session: PromptSession[str] = PromptSession(
            history=history,
            completer=SlashCompleter(), complete_while_typing=True, key_bindings=_bindings(),
            input=input, output=output,
        )
        self.last_call: Usage | None = None
        self.pending = PendingFiles()

    def print_md(self, text: str) -> None:
        """Render Markdown (links show their target, never a hidden hyperlink)."""
        self.console.print(markdown(text))

    def say(self, text: str, style: str = "") -> None:
        """Print ``text`` literally (never read as markup, whatever console this is)."""
        self.console.print(Text(inert(text), style=style))

    async def run(self) -> int:
        """Read-eval-print until /quit or end of input."""
        self.console.print(styled(("neotask", "bold"), inert(f" {self.key} — /help lists commands, Ctrl+D quits")))
        said = any(e.type == "message" for e in self.engine.events(self.key))  # loads the session's transcript
        for note in list(self.engine.notices):  # repairs made while loading (a quarantined line...), as the app says
            self.say(f"notice: {note}", "yellow")
        if self.history_problem is not None:
            self.say(f"notice: {self.history_problem}", "yellow")
        if not said:
            from neotask_tui.commands.core import welcome_text

            self.print_md(await asyncio.to_thread(welcome_text, self.engine))  # may ask Ollama on loopback
        while True:
            try:
                line = await self.session.prompt_async("› ")
            except KeyboardInterrupt:
                continue
            except EOFError:
                return 0
            if not line.strip():
                continue
            command, message = split_line(line)
            if command is not None:
                if await self.command(command) == "quit":
                    return 0
            else:
                files = await self.take_files(message)
                if files is None:
                    continue
                await self.turn(message, files)

    async def command(self, line: str) -> str | None:
        """Run a slash command; UI intents get a plain-text equivalent (screens show the command's text)."""
        res = await dispatch(self.engine, self.key, line)
        if isinstance(res.intent, Quit):
            return "quit"
        if res.error:
            self.say(res.text, "red")
            return None
        match res.intent:
            case ListThemes() | SwitchTheme():
                self.console.print("themes apply to the full-screen app (`neotask`); here your terminal colours rule")
            case ReviewCompaction(preview=preview, instructions=instructions):
                self.print_md(res.text)
                answer = (await self.session.prompt_async("accept this compaction? [y/N] ")).strip().lower()
                if answer in ("y", "yes"):
                    from neotask_tui.commands.compaction import apply_review

                    done = await apply_review(self.engine, self.key, preview.summary, instructions)
                    self.print_md(done.text)
                else:
                    self.console.print("compaction cancelled — nothing changed")
            case CopyText() as copy:
                await self.copy(copy)
            case AttachFiles() as attach:
                self.say(self.pending.apply(attach))
            case Regenerate(text=text):
                await self.turn(text, regenerate=True)
            case EditLast(text=text, event_id=event_id):
                self.say(f"editing your message e:{event_id} — Enter sends it (the old one stays, marked "
                         "superseded); an empty line cancels", "dim")
                try:
                    edited = await self.session.prompt_async("edit› ", default=text)
                except (KeyboardInterrupt, EOFError):
                    edited = ""
                if edited.strip():
                    await self.turn(edited, regenerate=True)
                else:
                    self.say("edit cancelled — nothing changed", "dim")
            case _:
                if res.text:
                    self.print_md(res.text)
        return None

    async def copy(self, copy: CopyText) -> None:
        """OSC 52 to the terminal when the output is one, then the fallbacks; say what was copied."""
        from neotask_tui.commands.clipboard import deliver, osc52

        out = self.console.file
        sent = False
        with contextlib.suppress(AttributeError, ValueError, OSError):
            if out.isatty():
                out.write(osc52(copy.text))  # base64: nothing in it reaches the terminal as a control
                out.flush()
                sent = True
        self.say(await asyncio.to_thread(deliver, copy, osc52_sent=sent), "dim")

    async def take_files(self, text: str) -> list[Attachment] | None:
        """The files for a message (pending ``/file`` ones and its ``@path`` ones), each announced;
        ``None`` after a one-line error (nothing is sent)."""
        try:
            files = await asyncio.to_thread(self.pending.take, text)
        except NeotaskError as e:
            self.say(f"not sent: {e}", "red")
            return None
        for a in files:
            self.say(f"📎 {a.summary()}", "dim")
        return files

    async def turn(self, text: str | None, files: list[Attachment] | None = None, *,
                   regenerate: bool = False) -> None:
        """Stream one reply (``files`` attached to the message); Ctrl+C stops it and keeps the partial
        text. With ``regenerate`` the reply replaces the last one: ``text`` None retries it, a text
        edits your last message."""
        if regenerate and text is not None and files is None:  # an edit carries /file's and its @path files
            files = await self.take_files(text)
            if files is None:
                return
        if regenerate:
            gen = self.engine.retry(self.key) if text is None else self.engine.edit_last(text, self.key, files or [])
        else:
            assert text is not None
            gen = self.engine.send(text, self.key, files or [])
        task = asyncio.ensure_future(self._stream(gen))
        loop = asyncio.get_running_loop()
        installed = False
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, task.cancel)
            installed = True
        try:
            await task
        except asyncio.CancelledError:
            self.say("\n⏸ interrupted — the partial reply is kept", "yellow")
        except UserError as e:  # e.g. /retry with nothing to regenerate: one line, nothing written
            self.say(str(e), "red")
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGINT)

    async def _stream(self, gen: AsyncGenerator[ev.EngineEvent, None]) -> None:
        out = self.console.file
        ledger: Ledger | None = None
        totals: Counters | None = None
        streamed = False
        try:
            async for e in gen:
                if isinstance(e, ev.TokenDelta):
                    out.write(inert(e.text))
                    out.flush()
                    streamed = True
                elif isinstance(e, ev.ContextBuilt):
                    ledger = e.ledger
                elif isinstance(e, ev.TurnDone):
                    if streamed:
                        out.write("\n")
                    if any(mark in e.text for mark in ("```", "|", "**", "# ", "\n- ")):
                        self.console.rule(style="dim")
                        self.print_md(e.text)
                    self.last_call = e.usage
                    totals = e.totals
                    ledger = e.ledger
                elif isinstance(e, ev.TurnFailed):
                    self.say(f"\n{e.error_kind}: {e.error}", "red")
                elif isinstance(e, ev.Notice):
                    self.say(e.text, "dim")
                elif isinstance(e, ev.SessionReset):
                    self.say(e.line + (" (/undo-reset restores it)" if e.undoable else ""), "yellow")
                elif isinstance(e, ev.Superseded):
                    ids = ", ".join(f"e:{i}" for i in e.superseded_ids)
                    self.say(f"/{e.by}: {ids} superseded (kept in the transcript, out of the context)", "dim")
                elif isinstance(e, ev.Compacted):
                    self.say(f"compacted {e.tokens_before:,} → {e.tokens_after:,} tokens", "dim")
                elif isinstance(e, ev.Recalled) and e.items:
                    srcs = ", ".join(f"{i.source} ({i.label})" for i in e.items[:4])
                    self.say(f"recalled {len(e.items)}: {srcs}", "dim")
                elif isinstance(e, ev.ToolCallStarted):
                    self.say(f"→ {e.name}", "dim")
                elif isinstance(e, ev.ModelLoading) and not e.done:
                    self.say(e.message, "dim")
        finally:
            await gen.aclose()
        if totals is not None or ledger is not None:
            self.say(status_line(ledger, totals or Counters(), self.last_call), "dim")


def run_repl(settings: Settings, key: str | None = None) -> int:
    """Open the engine and run the REPL; returns the exit code (3 when the data dir is locked)."""
    from neotask_tui.engine.facade import Engine
    from neotask_tui.errors import LockedError

    try:
        engine = Engine(settings)
    except LockedError as e:
        sys.stderr.write(inert(f"neotask: {e}") + "\n")
        return 3

    async def main() -> int:
        try:
            if _stdin_is_a_file():
                # prompt_toolkit cannot wait on a regular file (epoll refuses it): the lines of
                # `neotask chat --plain < script.txt` go through a pipe input instead.
                from prompt_toolkit.input import create_pipe_input

                with create_pipe_input() as inp:
                    inp.send_text(sys.stdin.read().replace("\r\n", "\n").replace("\n", "\r"))
                    inp.close()
                    return await Repl(engine, key or engine.default_key(), input=inp).run()
            return await Repl(engine, key or engine.default_key()).run()
        finally:
            await engine.aclose()

    return asyncio.run(main())


def _stdin_is_a_file() -> bool:
    """Whether standard input is a regular file (a redirect ``< file``), not a terminal or a pipe."""
    try:
        return stat.S_ISREG(os.fstat(sys.stdin.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False
