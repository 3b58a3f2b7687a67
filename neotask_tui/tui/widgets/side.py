"""The side panels: session state (with TTL countdowns) and the memory-recall sidebar."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from neotask_tui.text.terminal import inert, inert_line

if TYPE_CHECKING:
    from neotask_tui.engine.events import RecallReceipt
    from neotask_tui.engine.state.model import StateEntry, StateView


def countdown(until: datetime | None, now: datetime) -> str:
    """Human countdown: ``1h 05m``, ``42s``, ``expired``."""
    if until is None:
        return ""
    secs = int((until - now).total_seconds())
    if secs <= 0:
        return "expired"
    d, rem = divmod(secs, 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    if d:
        return f"{d}d {h}h"
    if h:
        return f"{h}h {m:02d}m"
    if m:
        return f"{m}m {s:02d}s"
    return f"{s}s"


def _value(v: Any) -> str:
    s = v if isinstance(v, str) else repr(v)
    return inert(s).replace("\n", " ")


class StatePanel(Vertical):
    """Structured session state: field, value, source, scope, TTL; expired entries struck through."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "edit", "Edit", id="state_edit"),
        Binding("d,delete", "clear", "Clear", id="state_clear"),
    ]

    class EditRequested(Message):
        """The user wants to edit an entry (``entry`` is a StateEntry)."""

        def __init__(self, entry: StateEntry) -> None:
            super().__init__()
            self.entry = entry

    class ClearRequested(Message):
        """The user wants to clear an entry."""

        def __init__(self, entry: StateEntry) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.view: StateView | None = None
        self.entries: list[StateEntry] = []
        self.available = True

    def compose(self) -> Any:
        yield Static("[b]session state[/b]", classes="panel-title")
        yield OptionList(id="state-list")
        yield Static("", id="state-foot", classes="panel-foot")

    def show(self, view: StateView | None, now: datetime) -> None:
        """Render a :class:`StateView` (None = the state module is not available)."""
        self.view = view
        ol = self.query_one(OptionList)
        foot = self.query_one("#state-foot", Static)
        highlighted = ol.highlighted
        ol.clear_options()
        self.entries = []
        if view is None:
            self.available = False
            foot.update("state: not available")
            return
        self.available = True
        opts: list[Option] = []
        for e in list(view.active) + list(view.expired):
            expired = e.expired_at is not None
            t = Text()
            t.append(inert(str(e.field)), style="bold strike dim" if expired else "bold")
            t.append("  ")
            t.append(_value(e.value)[:200], style="strike dim" if expired else "")
            detail = [str(e.source), str(e.scope), *([e.carried_note] if e.carried_note else [])]
            if expired:
                detail.append(f"expired: {e.expired_reason or 'yes'}")
            elif e.expires_at is not None:
                detail.append(f"⏱ {countdown(e.expires_at, now)}")
            elif e.until_event:
                detail.append(f"until {e.until_event}")
            elif e.workflow:
                detail.append("until /done")
            t.append("\n  " + inert(" · ".join(detail)), style="dim")
            opts.append(Option(t, disabled=expired))
            self.entries.append(e)
        ol.add_options(opts)
        if highlighted is not None and highlighted < len(opts):
            ol.highlighted = highlighted
        n_act = len(view.active)
        carried = sum(1 for e in view.active if e.carried_from)
        carried_part = f" ({carried} carried over from the previous session)" if carried else ""
        tail = ""
        if view.session_expires_at:
            tail = f" · session state ends in {countdown(view.session_expires_at, now)}"
        foot.update(f"{n_act} active{carried_part}, {len(view.expired)} recently expired{tail}" if opts
                    else "empty — /goal, /pref, /state set" + tail)

    def _current(self) -> StateEntry | None:
        idx = self.query_one(OptionList).highlighted
        if idx is None or idx >= len(self.entries):
            return None
        e = self.entries[idx]
        return None if e.expired_at is not None else e

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_edit()

    def action_edit(self) -> None:
        """Ask the app to edit the highlighted entry."""
        e = self._current()
        if e is not None:
            self.post_message(self.EditRequested(e))

    def action_clear(self) -> None:
        """Ask the app to clear the highlighted entry."""
        e = self._current()
        if e is not None:
            self.post_message(self.ClearRequested(e))


class RecallSidebar(Vertical):
    """What long-term memory recalled for the current turn, with score, source and scope."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "open", "Open", id="recall_open"),
        Binding("f", "forget", "Forget", id="recall_forget"),
        Binding("n", "never", "Never here", id="recall_never"),
    ]

    class Action(Message):
        """``action`` is open, forget or never; ``item`` the recalled item's receipt."""

        def __init__(self, action: str, item: RecallReceipt) -> None:
            super().__init__()
            self.action = action
            self.item = item

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.items: list[RecallReceipt] = []
        self.query_text = ""
        self._inbox_pending = 0

    def compose(self) -> Any:
        yield Static("[b]recalled memory[/b]", classes="panel-title")
        yield OptionList(id="recall-list")
        yield Static("nothing recalled yet", id="recall-foot", classes="panel-foot")

    def show(self, query: str, items: list[RecallReceipt]) -> None:
        """Render the items recalled for ``query``."""
        self.items = list(items)
        self.query_text = query
        ol = self.query_one(OptionList)
        ol.clear_options()
        for it in self.items:
            t = Text()
            t.append(f"{it.score:.2f} ", style="bold")
            t.append(inert(it.label) + " ", style="italic")
            t.append(inert_line(it.source), style="underline")
            t.append(inert(f"  [{it.scope}]"), style="dim")
            t.append("\n  " + inert(it.text).replace("\n", " ")[:160])
            ol.add_option(Option(t))
        self.set_foot(self.summary())

    def summary(self) -> str:
        """One line about what was recalled."""
        if self.items:
            return f"{len(self.items)} item(s) for this turn"
        return "nothing recalled this turn" if self.query_text else "nothing recalled yet"

    def set_foot(self, text: str, inbox: int | None = None) -> None:
        """Footer line (recall summary and the inbox count)."""
        if inbox is not None:
            self._inbox_pending = inbox
        n = self._inbox_pending
        box = f"\ninbox: {n} pending — [@click=app.open_inbox]open[/]" if n else ""
        self.query_one("#recall-foot", Static).update(text + box)

    def remove_item(self, item_id: str) -> None:
        """Drop an item from the list (after forget / never-recall)."""
        self.show(self.query_text, [i for i in self.items if i.id != item_id])

    def _act(self, action: str) -> None:
        idx = self.query_one(OptionList).highlighted
        if idx is not None and idx < len(self.items):
            self.post_message(self.Action(action, self.items[idx]))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._act("open")

    def action_open(self) -> None:
        """Show the full passage."""
        self._act("open")

    def action_forget(self) -> None:
        """Forget this memory everywhere."""
        self._act("forget")

    def action_never(self) -> None:
        """Never recall this item in this session."""
        self._act("never")
