"""The live transcript: role-styled messages, streaming Markdown, collapsible tool calls, markers.

Long sessions stay smooth because only the newest :attr:`Transcript.PAGE` entries are mounted as
widgets; older entries stay as plain :class:`Entry` records and are mounted a page at a time when
the user scrolls to the top (or presses the "earlier messages" line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from neotask_tui import tuning
from neotask_tui.text.codeblocks import code_blocks
from neotask_tui.text.terminal import inert

if TYPE_CHECKING:  # Markdown (markdown-it, pygments) loads with the first message, after the first paint
    from textual.widgets import Collapsible, Markdown
    from textual.widgets.markdown import MarkdownStream

    from neotask_tui.engine.context.attachments import Attachment
    from neotask_tui.storage.events import Event

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
"""What a session id looks like; only such an id goes into the marker's click action."""

ROLE_LABEL = {"user": "you", "assistant": "assistant", "tool": "tool", "marker": "", "notice": "", "command": ""}


@dataclass
class Entry:
    """One transcript item as data (mounted lazily as a :class:`MessageView`).

    Attributes:
        kind: ``user``, ``assistant``, ``tool``, ``marker`` (compaction), ``notice`` or ``command``
            (a slash command's output, Markdown).
        text: Markdown (assistant), plain text (user), or the body of a tool/marker.
        meta: Short right-hand detail (event id, usage, cost).
        status: ``complete``, ``streaming``, ``interrupted``, ``failed`` or ``superseded`` (replaced
            by ``/retry`` or ``/edit``: kept, shown dimmed, out of the context).
        event_id: Transcript event id, when stored.
        title: Tool name, or a marker's headline.
        level: Notice level (info/warning/error).
        attachments: Files attached to a message of yours (shown folded under it).
    """

    kind: str
    text: str = ""
    meta: str = ""
    status: str = "complete"
    event_id: int | None = None
    title: str = ""
    level: str = "info"
    attachments: list[Attachment] = field(default_factory=list)


def entries_from_events(events: Iterable[Event]) -> list[Entry]:
    """Transcript events (storage :class:`~neotask_tui.storage.events.Event`) → entries (events a
    ``/retry`` or ``/edit`` replaced are kept, with the status ``superseded``)."""
    from neotask_tui.engine.context.attachments import attachments_of  # the redactor loads after the first paint
    from neotask_tui.storage.events import superseded_ids  # storage loads with the engine, after the first paint

    events = list(events)
    gone = superseded_ids(events)
    out: list[Entry] = []
    for e in events:
        d = e.data
        if e.type == "message" and e.role in ("user", "assistant"):
            meta = f"e:{e.id}"
            u = d.get("usage")
            if isinstance(u, dict):
                meta += f" · in {u.get('input', 0):,} out {u.get('output', 0):,}"
            if isinstance(d.get("edited_from"), int):
                meta += f" · edited (was e:{d['edited_from']})"
            status = "superseded" if e.id in gone else str(d.get("status") or "complete")
            out.append(Entry(kind=str(e.role), text=e.content, meta=meta, event_id=e.id, status=status,
                             attachments=attachments_of(d)))
        elif e.type == "tool_call":
            args = json.dumps(d.get("arguments", {}), ensure_ascii=False)
            out.append(Entry(kind="tool", title=f"→ {d.get('name', '?')}", text=args, event_id=e.id,
                             meta=f"e:{e.id}", status="superseded" if e.id in gone else "complete"))
        elif e.type == "tool_result":
            status = "superseded" if e.id in gone else ("failed" if d.get("is_error") else "complete")
            out.append(Entry(kind="tool", title=f"← {d.get('name', '?')}", text=e.content, event_id=e.id,
                             meta=f"e:{e.id}", status=status))
        elif e.type == "compaction":
            before, after = int(d.get("tokens_before") or 0), int(d.get("tokens_after") or 0)
            src = str(d.get("source_session_id") or "")
            out.append(Entry(kind="marker", title=compaction_title(before, after, src),
                             text=str(d.get("summary", "")), event_id=e.id))
        elif e.type == "marker":
            out.append(Entry(kind="notice", text=str(d.get("text", "")), event_id=e.id))
        elif e.type == "session" and d.get("reason") == "fork":
            text = (f"branch forked from {d.get('parent_session_id')} at e:{d.get('fork_at')}: "
                    "the messages up to there are its history")
            out.append(Entry(kind="notice", text=text, event_id=e.id))
        elif e.type == "session" and d.get("reason") not in (None, "new", "compaction"):
            out.append(Entry(kind="notice", text=f"session started ({d.get('reason')})", event_id=e.id))
    return out


def compaction_title(before: int, after: int, archived_session: str = "") -> str:
    """The inline compaction marker text, as markup (with a link to the archived transcript; an id
    that is not a plain session id gets no link: it never goes into the action's text)."""
    link = (f" — [@click=app.view_session('{archived_session}')]view archived[/]"
            if _SESSION_ID.fullmatch(archived_session) else "")
    return f"compacted {before:,} → {after:,} tokens{link}"


def folds(text: str) -> bool:
    """Whether a message of yours is shown folded (a long paste): see ``tuning.PASTE_FOLD_*``."""
    return len(text) > tuning.PASTE_FOLD_CHARS or text.count("\n") >= tuning.PASTE_FOLD_LINES


def preview(text: str) -> str:
    """The head of a folded message: its first lines, at most so many characters, and an ellipsis."""
    head = "\n".join(text.split("\n", tuning.PASTE_PREVIEW_LINES)[: tuning.PASTE_PREVIEW_LINES])
    return head[: tuning.PASTE_PREVIEW_CHARS].rstrip() + " …"


COPYABLE = frozenset({"user", "assistant", "command"})
"""Entries that take focus (Tab / Shift+Tab from the prompt reach them) and copy with ``c``."""


class MessageView(Vertical):
    """One mounted transcript entry (a message takes focus; ``c`` copies it)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy", "Copy message", id="copy_message"),
    ]

    class CopyRequested(Message):
        """Copy this message (``entry``, shown by ``view``) to the clipboard."""

        def __init__(self, view: MessageView) -> None:
            super().__init__()
            self.view = view
            self.entry = view.entry

    def __init__(self, entry: Entry) -> None:
        classes = f"-{entry.kind}"
        if entry.status in ("interrupted", "failed", "streaming", "superseded"):
            classes += f" -{entry.status}"
        if entry.kind == "notice":
            classes += f" -level-{entry.level}"
        super().__init__(classes=classes)
        self.entry = entry
        self.can_focus = entry.kind in COPYABLE
        self.body: Markdown | Static | None = None
        self._stream: MarkdownStream | None = None

    def action_copy(self) -> None:
        """``c``: ask the app to copy this message."""
        self.post_message(self.CopyRequested(self))

    def _header_text(self) -> Content:
        e = self.entry
        label = ROLE_LABEL.get(e.kind, e.kind)
        status = {"interrupted": ("⏸ interrupted — partial reply kept", "bold"),
                  "failed": ("✗ failed", "bold"), "streaming": ("…", ""),
                  "superseded": ("superseded — kept, not sent", "italic")}.get(e.status)
        blocks = len(code_blocks(e.text)) if e.kind == "assistant" and e.status != "streaming" else 0
        span = f"1–{blocks}" if blocks > 1 else "1"
        hint = f" · {blocks} code block{'s' if blocks != 1 else ''} (/copy {span})" if blocks else ""
        return Content.assemble((label, "bold"), *((" · ", status) if status else ()),
                                *((" ", (inert(e.meta), "dim")) if e.meta else ()), (hint, "dim"))

    def compose(self) -> Any:
        from textual.widgets import Collapsible

        from neotask_tui.tui.widgets.markdown import SafeMarkdown as Markdown

        # Shown inert (escape sequences visible, never sent to the terminal); the entry keeps the text.
        e = replace(self.entry, text=inert(self.entry.text), title=inert(self.entry.title))
        if e.kind in ("user", "assistant"):
            yield Static(self._header_text(), classes="msg-header")
        if e.kind == "command":
            yield Static(Content(e.title), classes="msg-header")
            yield Markdown(e.text, classes="msg-body")
        elif e.kind == "assistant":
            self.body = Markdown(e.text, classes="msg-body")
            yield self.body
        elif e.kind == "user" and folds(e.text):
            # A long paste shows its head and a toggle (Enter on it, Tab / Shift+Tab reach it).
            self.body = Static(preview(e.text), markup=False, classes="msg-body msg-preview")
            yield self.body
            lines = e.text.count("\n") + 1
            with Collapsible(title=f"show all {lines:,} lines ({len(e.text):,} characters)", collapsed=True,
                             classes="paste"):
                yield Static(e.text, markup=False, classes="msg-body")
        elif e.kind == "user":
            self.body = Static(e.text, markup=False, classes="msg-body")
            yield self.body
        elif e.kind == "tool":
            title = f"{e.title}  {e.meta}" + ("  (error)" if e.status == "failed" else "")
            with Collapsible(title=Content(title), collapsed=True, classes="tool"):  # type: ignore[arg-type]
                yield Static(e.text, markup=False)
        elif e.kind == "marker":
            yield Static(f"── {e.title} ──", classes="marker-title")
            if e.text:
                with Collapsible(title="summary", collapsed=True):
                    yield Markdown(e.text)
        else:
            yield Static(Content(e.text), classes="notice")
        for a in e.attachments:  # folded like a long paste: the title says what it is, Enter opens it
            fold = Content(inert(f"📎 {a.summary()}"))  # a file name is never markup
            with Collapsible(title=fold, collapsed=True, classes="attachment"):  # type: ignore[arg-type]
                yield Static(inert(a.text), markup=False, classes="msg-body")

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible.has_class("paste"):  # the whole text replaces its head
            for head in self.query(".msg-preview"):
                head.display = False

    def on_collapsible_collapsed(self, event: Collapsible.Collapsed) -> None:
        if event.collapsible.has_class("paste"):
            for head in self.query(".msg-preview"):
                head.display = True

    def set_status(self, status: str, meta: str | None = None) -> None:
        """Update the status (and meta) shown in the header."""
        for s in ("streaming", "interrupted", "failed"):
            self.remove_class(f"-{s}")
        if status != "complete":
            self.add_class(f"-{status}")
        self.entry.status = status
        if meta is not None:
            self.entry.meta = meta
        for header in self.query(".msg-header").results(Static):
            header.update(self._header_text())

    # --- streaming ---------------------------------------------------------------------------
    async def write(self, fragment: str) -> None:
        """Append a streamed fragment (batched by Textual's MarkdownStream)."""
        from textual.widgets import Markdown

        self.entry.text += fragment
        if not isinstance(self.body, Markdown):
            return
        if self._stream is None:
            self._stream = Markdown.get_stream(self.body)
        await self._stream.write(inert(fragment))

    async def finish(self) -> None:
        """Flush and stop the stream."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()


class Transcript(VerticalScroll):
    """The scrolling transcript with lazy mounting of older entries."""

    PAGE = 60
    can_focus = True

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.entries: list[Entry] = []
        self._first = 0  # index in ``entries`` of the first mounted entry
        self._loading_older = False

    def compose(self) -> Any:
        yield Static("", id="earlier", classes="earlier")

    @property
    def mounted_count(self) -> int:
        """How many entries are mounted as widgets."""
        return len(self.entries) - self._first

    def _earlier_label(self) -> None:
        label = self.query_one("#earlier", Static)
        label.display = self._first > 0
        label.update(f"▲ {self._first:,} earlier message(s) — [@click=load_older]load more[/] or scroll up")

    async def load(self, entries: list[Entry], *, focus_event: int | None = None) -> None:
        """Replace everything with ``entries`` (only the newest page is mounted).

        With ``focus_event`` (a search hit) every entry from that event on is mounted, the event's
        message is marked (``-hit``) and scrolled into view instead of the end.
        """
        await self.query(MessageView).remove()
        self.entries = list(entries)
        self._first = max(0, len(self.entries) - self.PAGE)
        at = next((i for i, e in enumerate(self.entries) if e.event_id == focus_event), None)
        if focus_event is not None and at is not None:
            self._first = min(self._first, max(0, at - 2))
        views = [MessageView(e) for e in self.entries[self._first :]]
        if views:
            await self.mount_all(views)
        self._earlier_label()
        if at is None:
            self.scroll_end(animate=False, immediate=True)
            self.anchor()
            return
        target = views[at - self._first]
        target.add_class("-hit")
        self.call_after_refresh(self.scroll_to_widget, target, animate=False, top=True)

    def hit_view(self) -> MessageView | None:
        """The message a search hit opened (marked ``-hit``), if any."""
        return next(iter(self.query("MessageView.-hit").results(MessageView)), None)

    async def add(self, entry: Entry) -> MessageView:
        """Append an entry and mount it at the bottom."""
        self.entries.append(entry)
        view = MessageView(entry)
        await self.mount(view)
        self.anchor()
        return view

    async def action_load_older(self) -> None:
        """Mount the previous page of entries above the current ones."""
        if self._first <= 0 or self._loading_older:
            return
        self._loading_older = True
        try:
            start = max(0, self._first - self.PAGE)
            views = [MessageView(e) for e in self.entries[start : self._first]]
            first = next(iter(self.query(MessageView)), None)
            old_height = self.virtual_size.height
            if first is not None:
                await self.mount_all(views, before=first)
            else:
                await self.mount_all(views)
            self._first = start
            self._earlier_label()
            self.refresh(layout=True)
            # Keep what the user was looking at in place.
            def keep_place() -> None:
                self.scroll_to(y=self.scroll_y + self.virtual_size.height - old_height, animate=False)

            self.call_after_refresh(keep_place)
        finally:
            self._loading_older = False

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value and self._first > 0:
            self.run_worker(self.action_load_older(), group="older", exclusive=True)

    def scroll_by_key(self, how: str) -> None:
        """Scroll as the prompt's scroll keys ask: ``page_up``, ``page_down``, ``up`` or ``down``."""
        if how == "page_up":
            self.scroll_page_up()
        elif how == "page_down":
            self.scroll_page_down()
        elif how == "up":
            self.scroll_relative(y=-3)
        elif how == "down":
            self.scroll_relative(y=3)

    def last_view(self) -> MessageView | None:
        """The newest mounted entry."""
        views = list(self.query(MessageView))
        return views[-1] if views else None
