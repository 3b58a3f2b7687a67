"""The compaction review modal: draft summary, dropped items, accept / edit instructions / cancel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from neotask_tui.engine.compaction.guard import CHANGES
from neotask_tui.engine.compaction.summary import says_something
from neotask_tui.text.terminal import inert
from neotask_tui.tui.widgets.markdown import SafeMarkdown as Markdown

if TYPE_CHECKING:
    from neotask_tui.engine.compaction.compactor import CompactionResult


def dropped_markdown(dropped: list[dict[str, Any]]) -> str:
    """The dropped items as a Markdown list (each with its kind and cited ids)."""
    lines = []
    for d in dropped:
        kind = d.get("kind", "item")
        text = d.get("text", str(d))
        cites = d.get("cites") or d.get("ids") or []
        ref = f" _(e:{', e:'.join(str(c) for c in cites)})_" if cites else ""
        lines.append(f"- **{kind}**: {text}{ref}")
    return "\n".join(lines)


class CompactReviewScreen(ModalScreen[tuple[str, str] | None]):
    """Review a compaction preview.

    Dismisses with ``("accept", summary)`` — the draft, or the user's edit of it (``e`` turns the
    summary into an editor) — or ``None`` (cancel: nothing is written).
    """

    CSS_PATH = "compact_review.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "accept", "Accept", id="compact_accept"),
        Binding("ctrl+s", "accept", "Accept", id="compact_accept_edited", priority=True, show=False),
        Binding("e", "edit", "Edit summary", id="compact_edit"),
        Binding("escape,c", "cancel", "Cancel", id="compact_cancel"),
    ]

    def __init__(self, preview: CompactionResult) -> None:
        super().__init__()
        self.preview = preview
        self.editing = False

    @property
    def result(self) -> dict[str, Any]:
        """The preview as data (its JSON form)."""
        return self.preview.to_dict()

    def compose(self) -> Any:
        r = self.preview
        before, after = int(r.tokens_before), int(r.tokens_after)
        dropped = list(r.dropped or [])
        repaired = list(r.repaired or [])
        instr = r.instructions or ""
        head = f"Compact this session: {before:,} → {after:,} tokens"
        if 0 < before <= after:  # a short session: the summary costs as much as what it replaces
            head += " — no saving, the session is still short"
        notes = [f"summary by {r.model}"]
        if r.fallback:
            notes.append(f"extractive fallback ({r.fallback_reason or 'model failed'})")
        elif r.summarizer_note:
            notes.append(r.summarizer_note)
        if instr:
            notes.append(f"focus: {instr}")
        notes.append(f"{len(r.kept_ids or [])} recent event(s) kept raw")
        with Vertical(id="review"):
            yield Static(head, id="review-title")
            yield Static(inert(" · ".join(notes)), id="review-notes", markup=False)
            with VerticalScroll(id="review-body"):
                yield Static("Draft summary", classes="section-title")
                summary = inert(str(r.summary))  # an edit starts from what is shown
                yield Markdown(summary or "_(empty)_", id="review-summary")
                yield TextArea(summary, id="review-editor", soft_wrap=True)
                yield Static(f"Not covered by the summary ({len(dropped)})", classes="section-title")
                yield Markdown(inert(dropped_markdown(dropped)) or "_nothing dropped_", id="review-dropped")
                restored = [d for d in repaired if d.get("kind") not in CHANGES]
                changed = [{**d, "text": f"{d.get('text', '')} — {CHANGES[str(d.get('kind'))]}"}
                           for d in repaired if d.get("kind") in CHANGES]
                if restored:
                    yield Static(f"Restored by the guard, in the summary ({len(restored)})", classes="section-title")
                    yield Markdown(inert(dropped_markdown(restored)), id="review-repaired")
                if changed:
                    yield Static(f"Changed by the guard ({len(changed)})", classes="section-title")
                    yield Markdown(inert(dropped_markdown(changed)), id="review-changed")
            with Horizontal(id="review-buttons"):
                yield Button("Accept (a)", variant="primary", id="accept")
                yield Button("Edit summary (e)", id="edit")
                yield Button("Cancel (esc)", variant="error", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        actions = {"accept": self.action_accept, "edit": self.action_edit, "cancel": self.action_cancel}
        actions[str(event.button.id)]()

    def on_mount(self) -> None:
        self.query_one("#review-editor").display = False


    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Plain letters type into the editor while it is open; Ctrl+S still accepts.
        return not (self.editing and action == "edit")

    def action_accept(self) -> None:
        """Write the compaction with the draft (or the edited) summary."""
        text = self.query_one("#review-editor", TextArea).text if self.editing else str(self.preview.summary)
        if self.editing and not says_something(text):  # emptied by hand: most likely a slip, not a choice
            self.notify("not accepted: the edited summary says nothing (headings or bullets alone) — "
                        "write one, or Esc to cancel", severity="error", timeout=5)
            return
        self.dismiss(("accept", text))

    def action_edit(self) -> None:
        """Edit the summary before accepting (the guard still checks the edit)."""
        editor = self.query_one("#review-editor", TextArea)
        self.query_one("#review-summary").display = False
        editor.display = True
        self.editing = True
        editor.focus()
        self.notify("editing the summary — Ctrl+S accepts, Esc cancels", timeout=4)

    def action_cancel(self) -> None:
        """Close; nothing is written."""
        self.dismiss(None)
