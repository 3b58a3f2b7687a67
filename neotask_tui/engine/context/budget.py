"""How the usable window is shared between recall, the raw recent messages and the session state.

The usable window is the model's context window less ``context.reply_reserve_tokens``. Two
sections have a size of their own:

- the **recall reserve** (:func:`recall_reserve`): tokens always kept for recall, whatever the
  history takes (the sliding window drops its oldest messages, and compaction fires, before recall
  shrinks below it); recall also takes whatever the rest of the context leaves free;
- the **raw window a compaction keeps** (:func:`keep_recent`): the newest messages that stay
  verbatim after a compaction; the rest is summarized, and reachable by recall.

A third, the **session-state block** (:func:`state_budget`), has a bound, not a reserve: the state
takes what it needs up to its share, and past it the block carries its most important entries and
says how many it left out.

Each is a share of the usable window (``memory.recall_share``, ``compaction.keep_recent_share``,
:data:`~neotask_tui.tuning.STATE_BLOCK_SHARE`) between a floor and a cap (:mod:`neotask_tui.tuning`),
so the same defaults fit a 4k local model and a 200k remote one. An explicit token count in the
settings (``memory.recall_budget_tokens``, ``compaction.keep_recent_tokens``, when positive) is
used as is.
"""

from __future__ import annotations

from neotask_tui.config import Settings
from neotask_tui.tuning import (
    KEEP_RECENT_MAX_TOKENS,
    KEEP_RECENT_MIN_TOKENS,
    RECALL_MAX_TOKENS,
    RECALL_MIN_TOKENS,
    STATE_BLOCK_MAX_TOKENS,
    STATE_BLOCK_MIN_TOKENS,
    STATE_BLOCK_SHARE,
)


def usable_window(settings: Settings, window: int) -> int:
    """The window less the room kept for the reply (never negative)."""
    return max(int(window) - int(settings.context.reply_reserve_tokens), 0)


def _share(usable: int, share: float, floor: int, cap: int) -> int:
    # A floor never takes more than a quarter of a tiny window; a share of 0 turns the section off.
    if share <= 0:
        return 0
    return min(max(int(usable * share), min(floor, usable // 4)), cap)


def recall_reserve(settings: Settings, window: int) -> int:
    """Tokens always kept for recall in a call to a model with this ``window``.

    ``memory.recall_budget_tokens`` when positive, else ``memory.recall_share`` of the usable
    window, at least :data:`~neotask_tui.tuning.RECALL_MIN_TOKENS` (a quarter of the usable window
    at most) and at most :data:`~neotask_tui.tuning.RECALL_MAX_TOKENS`.
    """
    explicit = int(settings.memory.recall_budget_tokens)
    if explicit > 0:
        return explicit
    return _share(usable_window(settings, window), float(settings.memory.recall_share),
                  RECALL_MIN_TOKENS, RECALL_MAX_TOKENS)


def keep_recent(settings: Settings, window: int) -> int:
    """Tokens of raw recent messages a compaction keeps for a model with this ``window``.

    ``compaction.keep_recent_tokens`` when positive, else ``compaction.keep_recent_share`` of the
    usable window, at least :data:`~neotask_tui.tuning.KEEP_RECENT_MIN_TOKENS` (a quarter of the
    usable window at most) and at most :data:`~neotask_tui.tuning.KEEP_RECENT_MAX_TOKENS`.
    """
    explicit = int(settings.compaction.keep_recent_tokens)
    if explicit > 0:
        return explicit
    return _share(usable_window(settings, window), float(settings.compaction.keep_recent_share),
                  KEEP_RECENT_MIN_TOKENS, KEEP_RECENT_MAX_TOKENS)


def state_budget(settings: Settings, window: int) -> int:
    """Most tokens the session-state block may take in a call to a model with this ``window``:
    :data:`~neotask_tui.tuning.STATE_BLOCK_SHARE` of the usable window, at least
    :data:`~neotask_tui.tuning.STATE_BLOCK_MIN_TOKENS` (a quarter of the usable window at most) and
    at most :data:`~neotask_tui.tuning.STATE_BLOCK_MAX_TOKENS`."""
    return _share(usable_window(settings, window), STATE_BLOCK_SHARE, STATE_BLOCK_MIN_TOKENS, STATE_BLOCK_MAX_TOKENS)


def compaction_point(settings: Settings, window: int, kept: int = 0) -> int:
    """Tokens of the history-driven context (everything in a call but recall) at which automatic
    compaction fires for a model with this ``window``: ``compaction.threshold`` of the room the
    history has, the usable window less the recall reserve (:func:`recall_reserve`).

    Recall is elastic (it takes the free room by relevance) and the reserve is never the history's:
    a threshold of the whole window could never be reached while the reserve is a share of the
    window (0.8 of a 4k window is more than its history may ever take), and the setting did nothing.

    ``kept``: tokens of the context a compaction leaves as they are — the system prompt, the session
    state, the summary, the new message (:attr:`~neotask_tui.engine.context.assembly.Ledger.kept_by_compaction`).
    When that plus the raw window a compaction keeps (:func:`keep_recent`) is already at the point,
    compacting cannot bring the context under it, and the compactor waits until it can fold at least
    as much raw history as it keeps
    (:meth:`~neotask_tui.engine.compaction.compactor.Compactor.should_auto`): the point is then
    ``kept`` plus twice the raw window (up to the history's whole room, past which raw messages would
    be dropped and compaction fires), so the point the gauge and ``/context`` state is where
    compaction fires (red team 35: at a 2,000-token window they said 595 while it fired near 750).
    """
    room = max(usable_window(settings, window) - recall_reserve(settings, window), 0)
    point = int(float(settings.compaction.threshold) * room)
    keep = keep_recent(settings, window)
    if kept > 0 and 0 < point <= kept + keep:
        point = min(kept + 2 * keep, room)
    return point
