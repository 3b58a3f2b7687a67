"""Token/cost gauge: context-window fill split by ledger section, totals and cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from neotask_tui.tuning import GAUGE_NEAR_COMPACTION

if TYPE_CHECKING:
    from neotask_tui.engine.context.assembly import Ledger
    from neotask_tui.providers.base import Usage
    from neotask_tui.storage.index import Counters

# Ledger sections in the order they are assembled, with the colour variable of their bar part.
SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("system", "sys", "$secondary"),
    ("state", "state", "$accent"),
    ("summary", "summary", "$success"),
    ("recall", "recall", "$warning"),
    ("recent", "recent", "$primary"),
    ("tool", "tools", "$error"),
    ("attachment", "files", "$secondary-lighten-2"),
    ("new_message", "new", "$foreground"),
)
_FALLBACK = {"$secondary": "grey62", "$accent": "dark_orange", "$success": "green", "$warning": "yellow",
             "$primary": "dodger_blue2", "$error": "red", "$foreground": "white",
             "$secondary-lighten-2": "plum2"}


def fmt_tokens(n: int | float) -> str:
    """Compact token count: 950, 12.3k, 1.2M."""
    n = int(n)
    if n < 10_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


class TokenGauge(Widget):
    """Two lines: the section bar with fill %, then session totals and cost.

    Each number says where it comes from. ``ledger`` is *our estimate* (tiktoken) of a call's
    context: of the next call (``for_call == "next"``, before your message and its recall; what the
    panels compute after every change) or of the call being made (``"this"``, during a turn).
    ``last_call`` is the usage of the session's last completed call: the input the provider
    reported (``Usage.reported``), or our estimate when it reported none. ``totals`` the session's
    :class:`Counters`. "Nearing compaction" and "compaction due" compare the context without recall
    (what compaction can shrink) with the ledger's ``compaction_at`` (the engine's own trigger), and
    the mark on the bar is where the bar ends when it fires with this recall.
    """

    DEFAULT_CSS = """
    TokenGauge { height: 2; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    TokenGauge.-warn { color: $warning; }
    TokenGauge.-danger { color: $error; text-style: bold; }
    """

    ledger: reactive[Ledger | None] = reactive(None, always_update=True)
    totals: reactive[Counters | None] = reactive(None, always_update=True)
    last_call: reactive[Usage | None] = reactive(None, always_update=True)
    for_call: reactive[str] = reactive("next")

    @property
    def reported(self) -> bool | None:
        """Whether the provider reported the last call's usage (None before the first call)."""
        return None if self.last_call is None else self.last_call.reported

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._vars: dict[str, str] | None = None

    @property
    def fill(self) -> float:
        """Fraction of the window the last context used (0 without a ledger)."""
        return self.ledger.fill if self.ledger is not None else 0.0

    @property
    def total(self) -> int:
        """Tokens of the last context."""
        return self.ledger.total if self.ledger is not None else 0

    @property
    def window(self) -> int:
        """Context window in tokens."""
        return self.ledger.window if self.ledger is not None else 0

    @property
    def compaction(self) -> str | None:
        """``"due"`` when the engine would compact before this call (``Ledger.compaction_due``), ``"near"``
        when the context without recall is within :data:`~neotask_tui.tuning.GAUGE_NEAR_COMPACTION` of
        the size at which it fires, else ``None`` (also when compaction is off)."""
        led = self.ledger
        if led is None or led.compaction_at <= 0:
            return None
        if led.compaction_due:  # the compactor's own decision for this ledger
            return "due"
        return "near" if GAUGE_NEAR_COMPACTION * led.compaction_at <= led.without_recall < led.compaction_at else None

    def watch_ledger(self) -> None:
        due = self.compaction
        self.set_class(due == "near", "-warn")
        self.set_class(due == "due", "-danger")

    def _colour(self, var: str) -> str:
        if self._vars is None:
            try:
                self._vars = self.app.get_css_variables()
            except Exception:  # no app yet (rendering outside an app)
                return _FALLBACK[var]
        return self._vars.get(var.lstrip("$"), _FALLBACK[var])

    def refresh_colours(self) -> None:
        """Re-read theme colours (after a theme switch)."""
        self._vars = None
        self.refresh()

    def bar_parts(self, width: int) -> list[tuple[str, int]]:
        """(section, cells) of the bar for a given width; the rest is empty space."""
        window = self.window
        secs = self.ledger.sections if self.ledger is not None else {}
        if not window or width <= 0:
            return []
        parts: list[tuple[str, int]] = []
        used = 0
        for name, _label, _c in SECTIONS:
            n = secs.get(name, 0)
            if n <= 0:
                continue
            cells = max(1, round(width * n / window))
            cells = min(cells, width - used)
            if cells <= 0:
                break
            parts.append((name, cells))
            used += cells
        return parts

    def numbers(self, *, short: bool = False) -> Text:
        """The fill and where each number comes from: our estimate of the next (or this) call, and
        the provider-reported input of the last call (``short``: the same in fewer cells)."""
        out = Text()
        led = self.ledger
        if led is not None:
            which = ("next" if short else "next call") if self.for_call == "next" else ("now" if short else "this call")
            exact = led.source == "exact"  # the local model's own tokenizer and chat template
            label = "exact" if exact else "estimated"
            est = label if short else f"({label})"
            about = "" if exact else "≈"
            out.append(f" {self.fill:.0%} · {which} {about}{fmt_tokens(self.total)}/{fmt_tokens(self.window)} {est}")
        # the warning before the last call's numbers: a narrow gauge cuts the end of the line
        due = self.compaction
        if due == "due":
            out.append(" · compaction due", style="bold")
        elif due == "near":
            out.append(" · nearing compaction")
        last = self.last_call
        call = "last" if short else "last call"
        if last is None:
            out.append(" · no call yet" if short else " · no call yet in this session", style="dim")
        elif last.reported:
            out.append(f" · {call} {fmt_tokens(last.prompt_tokens)} in (reported)")
        else:
            out.append(f" · {call} ≈{fmt_tokens(last.prompt_tokens)} in (estimated{'' if short else ': not reported'})")
        return out

    def legend(self, *, counts: bool = True) -> Text:
        """Which colour is which section (with its tokens when ``counts``)."""
        legend = Text(" ")
        secs = self.ledger.sections if self.ledger is not None else {}
        for name, short, var in SECTIONS:
            if secs.get(name, 0) > 0:
                legend.append("■", style=self._colour(var))
                legend.append(f"{short} {fmt_tokens(secs[name])} " if counts else f"{short} ", style="dim")
        return legend

    def render(self) -> Text:
        width = max(self.size.width - 2, 10)
        led = self.ledger
        line1 = Text(no_wrap=True, overflow="ellipsis")
        numbers = self.numbers()
        if numbers.cell_len + 10 > width:
            numbers = self.numbers(short=True)
        if not led:
            line1.append("context: nothing estimated yet", style="dim")
            line1.append_text(numbers)
        else:
            # The legend stays after the first turn: the bar gives way first (down to 10 cells),
            # then the legend drops its counts (the bar down to 6), and only then the legend itself.
            legend = self.legend()
            room = width - numbers.cell_len
            if room - legend.cell_len < 10:
                legend = self.legend(counts=False)
            if room - legend.cell_len < 6:
                legend = Text()
            bar_w = max(min(room - legend.cell_len, 60), 6 if legend else 10)
            used = 0
            for name, cells in self.bar_parts(bar_w):
                colour = self._colour(dict((n, c) for n, _l, c in SECTIONS)[name])
                line1.append("█" * cells, style=colour)
                used += cells
            thr = -1  # where the bar ends when compaction fires, with this call's recall
            if led.compaction_at > 0 and self.window:
                thr = int(bar_w * (led.compaction_at + led.sections.get("recall", 0)) / self.window)
            rest = "".join("┊" if used + i == thr else "░" for i in range(bar_w - used))
            line1.append(rest, style="dim")
            line1.append_text(numbers)
            line1.append_text(legend)
        t = self.totals
        if t is None:  # nothing counted yet
            z = fmt_tokens(0)
            line2 = Text(f"session: in {z} · out {z} · cache read {z} · write {z} · cost n/a", style="dim")
        else:
            cost_s = "cost n/a" if t.cost_usd is None else f"${t.cost_usd:.4f}"
            line2 = Text(
                f"session: in {fmt_tokens(t.input)} · out {fmt_tokens(t.output)} · "
                f"cache read {fmt_tokens(t.cache_read)} · "
                f"write {fmt_tokens(t.cache_write)} · {cost_s}",
                style="dim",
            )
            if t.estimated_turns:
                line2.append(f" ({t.estimated_turns} turn(s) estimated)", style="dim")
        out = Text("\n", no_wrap=True, overflow="ellipsis").join([line1, line2])
        out.no_wrap, out.overflow = True, "ellipsis"  # two lines, whatever the width: never wrapped
        return out
