"""The main screen's panels from the engine: transcript load, status line, gauge, state panel, inbox count."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.css.query import NoMatches

from neotask_tui.tui.main_view import ChatState, MainView
from neotask_tui.tui.widgets.transcript import Entry, entries_from_events

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine


class Panels:
    """Reads the session of ``state.key`` from ``engine`` into the widgets of ``view``."""

    def __init__(self, view: MainView, state: ChatState, engine: Engine) -> None:
        self.view = view
        self.state = state
        self.engine = engine

    async def load_session(self) -> None:
        """(Re)load the transcript, gauge, state, status for the current key."""
        eng, key = self.engine, self.state.key
        events = await asyncio.to_thread(lambda: list(eng.events(key)))
        await self.view.transcript.load(entries_from_events(events))
        await self.refresh(full=True)

    async def show_welcome(self) -> None:
        """On a first screen (nothing said yet in this session): which model answers, what the
        bundled one is, how to connect a real one (shown, never stored)."""
        eng, key = self.engine, self.state.key
        events = await asyncio.to_thread(lambda: list(eng.events(key)))
        if any(e.type == "message" for e in events):
            return
        from neotask_tui.commands.core import welcome_text

        text = await asyncio.to_thread(welcome_text, eng)
        await self.view.add_entry(Entry(kind="command", title="welcome", text=text))

    async def refresh(self, *, full: bool = False) -> None:
        """Status line, gauge totals/ledger, state panel and inbox count."""
        eng, key = self.engine, self.state.key
        status = self.view.status
        status.key = key
        info = await asyncio.to_thread(eng.session_info, key)
        gauge = self.view.gauge
        from neotask_tui.storage.index import Counters

        gauge.totals = Counters(**info["totals"])
        if full and eng.provider is None:
            try:
                choice = await asyncio.to_thread(eng.choose_provider)
                status.provider = f"{choice.name} · {choice.model}"
                status.reason = f"{choice.reason}; loads on first message"
            except Exception as e:  # no provider configured: say so, the app still works
                status.provider, status.reason = "no provider", str(e)
        elif eng.provider is not None:
            status.provider = f"{eng.provider.name} · {eng.provider.model}"
            status.reason = eng.provider_reason
        # Every change to the context (a turn, a stop, /new, /reset, compaction and its undo, state,
        # recall actions) ends here: the gauge shows our estimate of the *next* call and the usage
        # of this session's last call, never the numbers of a session that is no longer current.
        await asyncio.to_thread(eng.count_text, "warm up")  # loads the tokenizer off the event loop
        ctx = await eng.context(key)
        gauge.last_call = await asyncio.to_thread(eng.last_call_usage, key)
        gauge.for_call = "next"
        gauge.ledger = ctx.ledger
        await self.refresh_state()
        await self.refresh_inbox_count()
        self.tick()

    async def refresh_state(self) -> None:
        """Re-read the session state into the panel."""
        eng = self.engine
        panel = self.view.state
        view = await asyncio.to_thread(eng.state.get, self.state.key)
        panel.show(view, eng.now())

    async def refresh_inbox_count(self) -> None:
        """Pending memory candidates, shown in the recall sidebar."""
        eng = self.engine
        try:
            n = len(await eng.state.inbox_list(eng.parse_key(self.state.key).agent_id))
        except Exception:  # a broken inbox file must not break the main screen
            n = 0
        self.show_inbox_count(n)

    def show_inbox_count(self, pending: int) -> None:
        """The recall sidebar's footer with ``pending`` inbox entries."""
        side = self.view.recall
        side.set_foot(side.summary(), inbox=pending)

    def tick(self) -> None:
        """The reset countdown and the state TTL countdowns (the app calls it once a second)."""
        now = self.engine.now()
        try:
            nr = self.engine.next_reset(self.state.key)
        except Exception:  # a session that cannot be read yet has no countdown
            nr = None
        try:
            self.view.status.set_reset(nr, now)
            panel = self.view.state
        except NoMatches:  # shutting down
            return
        if panel.view is not None:
            panel.show(panel.view, now)
