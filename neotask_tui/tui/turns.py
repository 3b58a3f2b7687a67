"""Rendering one turn: engine events → transcript entries, gauge, panels, status."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from textual.app import App

from neotask_tui.engine import events as ev
from neotask_tui.errors import NeotaskError
from neotask_tui.providers.selection import without_configured_keys
from neotask_tui.tui.main_view import ChatState, MainView
from neotask_tui.tui.panels import Panels
from neotask_tui.tui.widgets.transcript import Entry, MessageView, Transcript, compaction_title, entries_from_events

if TYPE_CHECKING:
    from neotask_tui.engine.context.attachments import Attachment
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.base import Usage


def usage_meta(event_id: int | None, usage: Usage, cost: float | None) -> str:
    """The header detail of a finished reply."""
    label = "reported" if usage.reported else "estimated"
    parts = [f"e:{event_id}"] if event_id is not None else []
    parts.append(f"in {usage.input_tokens:,} out {usage.output_tokens:,} ({label})")
    if usage.cache_read_tokens or usage.cache_write_tokens:
        parts.append(f"cache r {usage.cache_read_tokens:,} w {usage.cache_write_tokens:,}")
    if cost is not None:
        parts.append(f"${cost:.4f}")
    return " · ".join(parts)


class TurnRenderer:
    """Drives one ``engine.send`` and renders what it yields (used by the app's turn worker).

    ``app`` is only used for what Textual's App offers (notifications, refreshing the bindings);
    ``restore_key`` is the key the one-key restore offer names.
    """

    def __init__(self, app: App[Any], view: MainView, state: ChatState, engine: Engine, panels: Panels,
                 restore_key: str) -> None:
        self.app = app
        self.view = view
        self.state = state
        self.engine = engine
        self.panels = panels
        self.restore_key = restore_key
        self.reply: MessageView | None = None
        self.asked: MessageView | None = None

    @property
    def transcript(self) -> Transcript:
        """The main transcript."""
        return self.view.transcript

    async def _reply_view(self) -> MessageView:
        if self.reply is None:
            self.reply = await self.transcript.add(Entry(kind="assistant", status="streaming"))
        return self.reply

    async def run(self, text: str | None, files: list[Attachment] | None = None, *, regenerate: bool = False) -> None:
        """Send ``text`` (with the attached ``files``) and render the turn; cancellation keeps the
        partial reply (marked).

        With ``regenerate`` the turn replaces the last one: ``text`` None is ``/retry``, a text is
        ``/edit`` (the transcript is reloaded once the old turn is marked superseded)."""
        app, state = self.app, self.state
        status = self.view.status
        self.reply = None
        self.asked = None
        if regenerate:
            gen = self.engine.retry(state.key) if text is None else self.engine.edit_last(text, state.key, files or ())
        else:
            assert text is not None
            shown = without_configured_keys(text, self.engine.settings)  # as the transcript stores it
            self.asked = await self.transcript.add(Entry(kind="user", text=shown, attachments=list(files or [])))
            gen = self.engine.send(text, state.key, files or ())
        state.streaming = True
        app.refresh_bindings()
        status.activity = "thinking…"
        if state.undo_reset_available:
            state.undo_reset_available = False
            status.offer = ""
        try:
            async for e in gen:
                await self.handle(e)
        except asyncio.CancelledError:
            if self.reply is not None:
                await self.reply.finish()
                self.reply.set_status("interrupted")
                app.notify("reply stopped — the partial text is kept", timeout=3)
            else:
                await self.transcript.add(Entry(kind="notice", text="stopped before the reply started",
                                                level="warning"))
                app.notify("stopped before the reply started — your message is kept", timeout=3)
            raise
        except NeotaskError as e:
            await self.transcript.add(Entry(kind="notice", text=str(e), level="error"))
        finally:
            await gen.aclose()
            if self.reply is not None:
                await self.reply.finish()
            state.streaming = False
            status.activity = ""
            app.refresh_bindings()
            if app.is_running:
                await self.panels.refresh()

    async def handle(self, e: ev.EngineEvent) -> None:
        """Render one engine event."""
        status = self.view.status
        if isinstance(e, ev.TokenDelta):
            view = await self._reply_view()
            if status.activity:
                status.activity = "streaming… (Esc stops)"
            await view.write(e.text)
        elif isinstance(e, ev.ContextBuilt):
            gauge = self.view.gauge
            gauge.for_call = "this"
            gauge.ledger = e.ledger
        elif isinstance(e, ev.TurnStarted):
            if self.asked is not None:  # its id in the header at once: `/copy e:N`, `/edit`, `/fork` name it
                self.asked.entry.event_id = e.user_event_id
                self.asked.set_status(self.asked.entry.status, f"e:{e.user_event_id}")
        elif isinstance(e, ev.TurnDone):
            view = await self._reply_view()
            await view.finish()
            view.entry.event_id = e.event_id
            view.set_status("complete", usage_meta(e.event_id, e.usage, e.cost_usd))
            gauge = self.view.gauge
            gauge.last_call = e.usage
            gauge.totals = e.totals
            gauge.ledger = e.ledger
            status.provider = f"{e.provider} · {e.model}"
        elif isinstance(e, ev.TurnFailed):
            if self.reply is not None:
                await self.reply.finish()
                self.reply.set_status("failed", f"e:{e.partial_event_id}" if e.partial_event_id else "")
            hint = " — send again to retry" if e.retryable else ""
            await self.transcript.add(Entry(kind="notice", text=f"{e.error_kind}: {e.error}{hint}",
                                            level="error"))
        elif isinstance(e, ev.ProviderInfo):
            status.provider, status.reason = f"{e.provider} · {e.model}", e.reason
        elif isinstance(e, ev.ModelLoading):
            status.activity = "" if e.done else e.message
        elif isinstance(e, ev.Recalled):
            self.view.recall.show(e.query, e.items)
        elif isinstance(e, ev.Notice):
            await self.transcript.add(Entry(kind="notice", text=e.text, level=e.level))
        elif isinstance(e, ev.ToolCallStarted):
            await self._close_reply()
            import json

            await self.transcript.add(Entry(kind="tool", title=f"→ {e.name}",
                                            text=json.dumps(e.arguments, ensure_ascii=False)))
        elif isinstance(e, ev.ToolCallFinished):
            await self.transcript.add(Entry(kind="tool", title=f"← {e.name}", text=e.result,
                                            status="failed" if e.is_error else "complete"))
        elif isinstance(e, ev.Compacted):
            await self.transcript.add(Entry(kind="marker", title=compaction_title(
                e.tokens_before, e.tokens_after, e.old_session_id)))
        elif isinstance(e, ev.SessionReset):
            await self.render_reset(e)
        elif isinstance(e, ev.Superseded):
            # the old turn is kept, shown dimmed; an edit's new message is on disk with the marker
            events = await asyncio.to_thread(lambda: list(self.engine.events(self.state.key)))
            await self.transcript.load(entries_from_events(events))

    async def _close_reply(self) -> None:
        """Text before a tool call is its own (complete) message; the next text starts a new one."""
        if self.reply is not None:
            await self.reply.finish()
            self.reply.set_status("complete")
            self.reply = None

    async def render_reset(self, e: ev.SessionReset) -> None:
        """A marker for a new session; an automatic one comes with a one-key restore offer."""
        if e.undoable:
            self.state.undo_reset_available = True
            self.view.status.offer = f"auto reset — {self.restore_key} restores the previous session"
            self.app.refresh_bindings()
        await self.transcript.add(Entry(kind="notice", text=e.line, level="warning" if e.undoable else "info"))
