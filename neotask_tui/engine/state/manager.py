"""Structured session state: TTLs, scopes, the classifier hook and the promotion inbox.

:class:`StateManager` is the feature module the engine holds as ``engine.state``. All state lives in
the transcript as ``state`` events (see :mod:`neotask_tui.engine.state.model` for the payloads), so
every read folds the current session's events — following the lineage back through compactions — and
state at any point can be rebuilt from the transcript alone. Writes go through ``engine.append``
(durable, fsynced). Long-term memory is only ever written from :meth:`StateManager.inbox_accept`
(the promotion inbox is a part the manager holds: :class:`~neotask_tui.engine.state.promotion.Promotion`);
the model-facing tools are :mod:`neotask_tui.engine.state.tools`. :class:`StateView`, :class:`Notice`
and :class:`StateError` are defined in :mod:`neotask_tui.engine.state.model` and re-exported here.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from neotask_tui.config import Settings
from neotask_tui.engine.language.classifier import Classification
from neotask_tui.engine.language.periods import describe as describe_period
from neotask_tui.engine.language.periods import period_end, period_of
from neotask_tui.engine.language.rules import classify, classify_each
from neotask_tui.engine.ports import SessionsWithMemory
from neotask_tui.engine.state.inbox import Candidate, Inbox, InboxEntry, InboxError, redact_tree
from neotask_tui.engine.state.model import (
    LIST_FIELDS,
    MAX_DURATION_DAYS,
    RECENTLY_EXPIRED,
    SCOPES,
    WORKFLOW_FIELDS,
    Notice,
    ScopeContext,
    StateEntry,
    StateError,
    StateFold,
    StateView,
    admits,
    capped_duration,
    fold,
    fork_end,
    parse_duration,
    parse_time,
    valid_field,
    value_key,
)
from neotask_tui.engine.state.promotion import Promotion
from neotask_tui.engine.state.tools import ToolReply, tool_specs
from neotask_tui.engine.state.tools import handle_tool as _handle_tool
from neotask_tui.providers.base import ChatMessage, ToolCall, ToolSpec
from neotask_tui.providers.selection import looks_like_key, without_configured_keys
from neotask_tui.storage.events import Event
from neotask_tui.text import lexical
from neotask_tui.text.secrets import MARKER_PREFIX, redact_assigned, redact_secrets
from neotask_tui.text.tokens import message_tokens
from neotask_tui.text.trees import map_strings
from neotask_tui.tuning import STATE_CLASSIFY_MAX_CHARS, STATE_CLASSIFY_THREAD_CHARS

__all__ = ["Notice", "StateBlock", "StateError", "StateManager", "StateView", "ToolReply"]

_LABELS = {
    "current_goal": "Goal", "current_step": "Current step", "selected_entity": "Selected",
    "temporary_preferences": "Preferences (this session)", "constraints": "Rules", "facts": "Stated facts",
    "tool_results_summary": "Tool results", "blocked_by": "Blocked by", "open_questions": "Open questions",
}
_AFTER_EVENT = re.compile(r"^\s*(?:after\s+)?([A-Za-z][\w.\-]*)\s*(?:\+\s*(\S+(?:\s*\w+)?))?\s*$")


_KEEP_ORDER = {"constraints": 0, "current_goal": 1, "current_step": 1, "blocked_by": 1, "selected_entity": 1,
               "temporary_preferences": 2}
"""Which entries a state block over its share keeps first (lower first; newest first within one):
the rules are left out last, a "do not" above all."""


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _label(e: StateEntry) -> str:
    """The label an entry is listed under in the state block."""
    if e.field == "constraints" and e.scope in ("project", "workspace"):
        return f"Rules ({e.scope} {e.scope_ref})" if e.scope_ref else f"Rules (this {e.scope})"
    return _LABELS.get(e.field, e.field.replace("_", " ").capitalize())


def _part(e: StateEntry) -> str:
    """An entry as the state block lists it: its value and when it ends."""
    hint = []
    if e.until_event:
        hint.append(f"until {e.until_event}")
    if e.expires_at:
        hint.append(f"until {e.expires_at.astimezone(UTC).strftime('%Y-%m-%d %H:%M')}Z")
    return _text(e.value) + (f" ({', '.join(hint)})" if hint else "")


def _render(entries: Sequence[StateEntry], view: StateView, *, left_out: int = 0, rules_left_out: int = 0) -> str:
    """The "Current session:" block listing ``entries`` (grouped by label, in their order), and a last
    line when ``left_out`` active entries (``rules_left_out`` of them rules) are not in it."""
    groups: dict[str, list[StateEntry]] = {}
    for e in entries:
        groups.setdefault(_label(e), []).append(e)
    lines = ["Current session:"]
    for label, group in groups.items():
        lines.append(f"- {label}: {'; '.join(_part(e) for e in group)}.".replace("..", "."))
    if view.session_expires_at:
        lines.append(f"- Session state expires: {view.session_expires_at.isoformat(timespec='minutes')}.")
    if left_out:
        rules = f", {rules_left_out} of them rules" if rules_left_out else ""
        lines.append(f"- {left_out} more {'entry' if left_out == 1 else 'entries'} of the session state "
                     f"{'is' if left_out == 1 else 'are'} left out here to fit the context{rules}; they still "
                     "apply, and the user sees them all with /state.")
    return "\n".join(lines)


@dataclass(slots=True)
class StateBlock:
    """The session-state block a call carries (:meth:`StateManager.fit_block`).

    Attributes:
        text: The block ("" when nothing is active).
        kept: The active entries it lists.
        left_out: The active entries it leaves out to stay within its share of the window.
    """

    text: str
    kept: list[StateEntry]
    left_out: list[StateEntry]

    @property
    def rules_left_out(self) -> int:
        """How many of :attr:`left_out` are rules (``constraints``)."""
        return sum(1 for e in self.left_out if e.field == "constraints")


def _words(value: str) -> tuple[str, ...]:
    """A state value as :meth:`StateManager.says` compares it: redacted, its lower-cased words."""
    return tuple(lexical.words(redact_secrets(value)))


def _check_name(what: str, name: str, settings: Settings) -> None:
    """Refuse a field or event name that is not a plain name or that holds a credential: one the
    redactor finds, or :data:`~neotask_tui.providers._sdk.KEY_WINDOW` characters of a configured API
    key in a row (:func:`~neotask_tui.providers.selection.looks_like_key`).

    A name is a key of the state (it is matched, not shown), so it cannot be redacted; it is
    refused instead, and the error does not repeat it.
    """
    if looks_like_key(name, settings):
        raise StateError(f"bad {what} name: it looks like a credential (refused, not stored)")
    if not valid_field(name):
        raise StateError(f"bad {what} name {name[:64]!r} (a letter, then letters, digits, _ . -; at most 64)")


_CUT_AT = re.compile(r"[.!?;,\n]")


def _head(content: str) -> str:
    """The part of a message the classifier reads: all of it, or the first
    :data:`~neotask_tui.tuning.STATE_CLASSIFY_MAX_CHARS` characters ended at the last sentence or
    clause break in their last quarter, so the cut never makes a statement of its own out of half
    of one ("…, my goal is x, today" cut from "…, today answer briefly" set the goal "x, today")."""
    if len(content) <= STATE_CLASSIFY_MAX_CHARS:
        return content
    head = content[:STATE_CLASSIFY_MAX_CHARS]
    ends = [m.end() for m in _CUT_AT.finditer(head, STATE_CLASSIFY_MAX_CHARS * 3 // 4)]
    return head[:ends[-1]] if ends else head


_ANNOUNCED_MAX_CHARS = 2000
"""A user message this short is read in the light of the one before (see ``find_secrets(context=)``);
a longer one is data, and the classifier redacts each statement of it anyway."""


class StateManager:
    """Session state for every key of one engine (``engine.state``).

    Args:
        engine: The sessions and the memory service (the Engine facade passes itself).
    """

    def __init__(self, engine: SessionsWithMemory) -> None:
        """Bind to the engine facade; nothing is read until used."""
        self.engine = engine
        self.promotion = Promotion(now=engine.now, memory=engine)

    # ---- reading -------------------------------------------------------------------------------

    def scope_context(self, key: str) -> ScopeContext:
        """What ``key`` resolves to for scope checks (agent, chat, session, project, workspace)."""
        rec = self.engine.current_record(key)
        sk = self.engine.parse_key(key)
        cfg = rec.config or {}
        proj, ws = cfg.get("project"), cfg.get("workspace")
        return ScopeContext(
            key=key, agent=str(sk.agent_id), session_id=str(rec.session_id),
            project=str(proj) if proj else None, workspace=str(ws) if ws else None,
        )

    def _session_events(self, session_id: str) -> list[Event]:
        try:
            return list(self.engine.store.events(session_id))
        except (OSError, ValueError, LookupError):
            return []

    def _lineage_state_events(self, events: list[Event], depth: int = 0, cap: int | None = None) -> list[Event]:
        """State events of the sessions this one continues (a compaction keeps the lineage; a fork
        continues it as it was at the fork point: the parent's state events up to ``fork_at``)."""
        if not events or depth > 64:
            return []
        head = events[0]
        parent = head.data.get("parent_session_id")
        reason = head.data.get("reason")
        if head.type != "session" or reason not in ("compaction", "fork") or not parent:
            return []
        if reason == "fork":
            at = head.data.get("fork_at")
            if not isinstance(at, int) or isinstance(at, bool):
                return []
            end = fork_end(self._session_events(str(parent)), at)  # with the state its message made
            cap = end if cap is None else min(cap, end)
        pev = [e for e in self._session_events(str(parent)) if cap is None or e.type == "session" or e.id <= cap]
        return [*self._lineage_state_events(pev, depth + 1, cap), *(e for e in pev if e.type == "state")]

    def _fold(self, key: str, now: datetime | None = None, pending: Sequence[Event] = ()) -> StateFold:
        events = self.engine.events(key)
        return fold([*self._lineage_state_events(events), *events, *pending], now or self.engine.now())

    def get(self, key: str, pending: Sequence[Event] = ()) -> StateView:
        """Active in-scope entries plus recently expired ones for ``key``'s current session.

        ``pending``: ``state`` records not written (yet), folded after the stored ones — what a draft
        would set (:meth:`draft_records`), so a preview shows the state sending it makes.
        """
        now = self.engine.now()
        st = self._fold(key, now, pending)
        ctx = self.scope_context(key)
        return StateView(
            key=key, session_id=ctx.session_id,
            active=[e for e in st.active.values() if admits(e, ctx)],
            expired=[e for e in st.expired if e.expired_at and now - e.expired_at <= RECENTLY_EXPIRED
                     and admits(e, ctx)],
            session_expires_at=st.session_expires_at(), session_expiry=st.session_expiry,
            fired=dict(st.fired),
        )

    def audit(self, key: str) -> list[dict[str, Any]]:
        """Everything that expired in this session (lineage), with why and when, oldest first."""
        return [
            {**e.to_dict(), "why": e.expired_reason,
             "when": e.expired_at.isoformat() if e.expired_at else None}
            for e in self._fold(key).expired
        ]

    def says(self, key: str, view: StateView | None = None) -> Callable[[str], bool]:
        """Whether a message of the user's says nothing but what ``key``'s active state holds.

        A rule, a goal or a temporary preference stated in a message becomes a state entry, and
        ``/new`` carries it; recalled as well, the message would put it in the context twice
        (:mod:`neotask_tui.engine.recall`). The message is *said* by the state when each of its
        statements, classified again as when it was sent (:func:`~neotask_tui.engine.language.rules.
        classify_each`), made an entry of the same field and value that is still active: "Please stop
        using emojis." is said by the rule "stop using emojis", "My goal is to migrate X." by the goal
        "migrate X". A message with one more statement (a fact beside the rule), one the state does
        not hold ("Use Redis." beside the rule "do not use Redis"), or whose entry was edited, cleared
        or has expired is not: it is recalled as any other. Secrets are compared redacted, as stored.
        ``view``: :meth:`get` of ``key`` when the caller has it already (one fold, not two).
        """
        held = {(e.field, _words(_text(e.value))) for e in (self.get(key) if view is None else view).active}
        if not held:
            return lambda text: False
        bags = [set(v) for _, v in held]

        def said(text: str) -> bool:
            if len(text) > STATE_CLASSIFY_THREAD_CHARS:  # a paste is data, not a restated rule
                return False
            words = set(lexical.words(text))  # cheap first: the text holds some entry's every word
            if not any(b <= words for b in bags):
                return False
            found = classify_each(text)
            return bool(found) and all(c is not None and c.field is not None and c.value is not None
                                       and (c.field, _words(c.value)) in held for c in found)

        return said

    def block(self, key: str, view: StateView | None = None) -> str:
        """The compact "Current session:" block for the context ("" when nothing is active), every
        active entry in it; ``view``: :meth:`get` of ``key`` when the caller has it already.
        :meth:`fit_block` is the block a call carries, within its share of the window."""
        view = self.get(key) if view is None else view
        return _render(view.active, view) if view.active else ""

    def fit_block(self, key: str, view: StateView | None = None, *, max_tokens: int,
                  count: Callable[[str], int]) -> StateBlock:
        """The state block within ``max_tokens`` (counted as a system message with ``count``).

        When every active entry fits, the block is :meth:`block`. Otherwise it keeps, while they
        fit, the rules ("do not …": left out last), then the goal, step, blocker and selection, the
        temporary preferences, and the other fields, each group newest first (once an entry of a
        group does not fit, no entry of a later group is kept: a rule is never left out for a
        preference); it lists them in their usual order and ends with a line saying how many
        entries (and how many rules) it left out and that ``/state`` lists them. Nothing is left
        out silently: the caller gets both lists.
        """
        view = self.get(key) if view is None else view
        if not view.active:
            return StateBlock("", [], [])
        full = _render(view.active, view)

        def size(text: str) -> int:
            return message_tokens(ChatMessage(role="system", content=text), count)

        if size(full) <= max_tokens:
            return StateBlock(full, list(view.active), [])
        ranked = sorted(view.active, key=lambda e: (_KEEP_ORDER.get(e.field, len(_KEEP_ORDER)), -e.id))
        n_rules = sum(1 for e in ranked if e.field == "constraints")
        left = size(_render([], view, left_out=len(ranked), rules_left_out=n_rules))  # the note at its longest
        labels: set[str] = set()
        kept: list[StateEntry] = []
        full_at: int | None = None  # the rank of the first group that did not fit: no lower one is kept
        for e in ranked:  # an estimate per entry (its part and, once, its label's line); checked below
            rank = _KEEP_ORDER.get(e.field, len(_KEEP_ORDER))
            if full_at is not None and rank > full_at:
                break
            label = _label(e)
            cost = count(_part(e)) + 2 + (0 if label in labels else count(f"- {label}: .") + 1)
            if cost > max_tokens - left:
                full_at = rank
                continue
            kept.append(e)
            labels.add(label)
            left += cost
        while True:
            ids = {e.id for e in kept}
            out = [e for e in view.active if e.id not in ids]
            text = _render([e for e in view.active if e.id in ids], view, left_out=len(out),
                           rules_left_out=sum(1 for e in out if e.field == "constraints"))
            if size(text) <= max_tokens or not kept:
                return StateBlock(text, [e for e in view.active if e.id in ids], out)
            kept.pop()  # the estimate was short: the least important kept entry goes

    # ---- writing -------------------------------------------------------------------------------

    def _stamped(self, data: dict[str, Any]) -> dict[str, Any]:
        """A state record as it is stored: stamped with the time, every string (value, reason,
        names...) redacted — the store boundary."""
        return redact_tree({**data, "at": self.engine.now().isoformat()})

    def _unkeyed(self, value: Any) -> Any:
        """``value`` with every configured API key masked in its strings (as a message is: you may
        type one in a command); ``value`` itself when it holds none."""
        masked = map_strings(value, functools.partial(without_configured_keys, settings=self.engine.settings))
        return value if masked == value else masked

    async def _append(self, key: str, data: dict[str, Any]) -> Event:
        return await self.engine.append(key, "state", self._stamped(data))

    async def set(
        self, key: str, field: str, value: Any, *, source: str = "user command", ttl: str | None = None,
        until_event: str | None = None, scope: str | None = None, workflow: bool | None = None,
        expires_at: datetime | None = None,
    ) -> StateEntry:
        """Set a scalar field or add an item to a list field.

        Args:
            key: Session key.
            field: Typed field (``current_goal``...) or a custom key; ``expires_at`` sets the
                session-level expiry instead.
            value: New value (strings are secret-redacted); ``None``/"" clears the field.
            source: ``"e:<id>"``, ``"user command"`` or ``"model tool"``.
            ttl: Relative lifetime (``30m``, ``2h``, ``7d``).
            until_event: Event name that ends the entry.
            scope: One of :data:`SCOPES` (default ``session``).
            workflow: Expire at workflow end (default: true for workflow fields).
            expires_at: An absolute expiry (the end of the local day), when no ``ttl`` is given.

        Raises:
            StateError: bad field, scope or TTL.
        """
        _check_name("field", field, self.engine.settings)
        value = self._unkeyed(value)
        if field == "expires_at":
            await self.set_session_expiry(key, None if value in (None, "") else _text(value), source=source)
            return StateEntry(id=0, field=field, value=value, source=source, set_at=self.engine.now())
        if value is None or (isinstance(value, str) and not value.strip()):
            await self.clear(key, field, source=source)
            return StateEntry(id=0, field=field, value=None, source=source, set_at=self.engine.now())
        now = self.engine.now()
        data = self._entry_record(key, field, value, source=source, ttl=ttl, until_event=until_event, scope=scope,
                                  workflow=workflow, expires_at=expires_at, active=self.get(key).active)
        if isinstance(data, StateEntry):
            return data  # the same entry again: nothing new to record
        ev = await self._append(key, data)
        exp = data["expires_at"]
        return StateEntry(
            id=ev.id, field=field, value=data["value"], source=source, set_at=now, scope=data["scope"],
            scope_ref=data["scope_ref"], agent=data["agent"], key=key, ttl=ttl,
            expires_at=parse_time(exp) if exp else None, until_event=until_event,
            workflow=bool(data["workflow"]),
        )

    def _entry_record(
        self, key: str, field: str, value: Any, *, source: str, ttl: str | None, until_event: str | None,
        scope: str | None, workflow: bool | None, expires_at: datetime | None, active: list[StateEntry],
    ) -> dict[str, Any] | StateEntry:
        """The record :meth:`set` appends for a non-empty ``value`` (before :meth:`_stamped`), or the
        entry of ``active`` (the active entries) that already says the same: same field, scope and
        value (:func:`~neotask_tui.engine.state.model.value_key`) and the same end (the same ``ttl``
        stated again in the same message counts as the same end); nothing is written then. The
        same value with another end is recorded, and the fold keeps only the later one.

        Raises:
            StateError: bad scope, TTL or event name.
        """
        scope = scope or "session"
        if scope not in SCOPES:
            raise StateError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
        expires = expires_at
        if ttl:
            try:
                expires = self.engine.now() + parse_duration(ttl)
            except ValueError as e:
                raise StateError(str(e)) from None
        if until_event is not None:
            _check_name("event", until_event, self.engine.settings)
        # A value under a secret's name (db_password) is a secret whatever its shape.
        value = redact_assigned(field, value.strip()) if isinstance(value, str) else redact_tree(value)
        ctx = self.scope_context(key)
        ref = ctx.ref(scope)
        wf = field in WORKFLOW_FIELDS if workflow is None else workflow
        same = value_key(value)
        for old in active:  # said again as it stands: one entry, nothing to record
            same_end = old.expires_at == expires or bool(ttl and old.ttl == ttl and old.source == source)
            if (old.field == field and old.scope == scope and old.scope_ref == ref and old.workflow == wf
                    and old.until_event == until_event and same_end and value_key(old.value) == same):
                return old
        return {
            "op": "add" if field in LIST_FIELDS else "set", "field": field, "value": value,
            "scope": scope, "scope_ref": ref, "agent": ctx.agent, "key": key, "ttl": ttl,
            "expires_at": expires.isoformat() if expires else None, "until_event": until_event,
            "workflow": wf, "source": source,
        }

    async def clear(
        self, key: str, field: str, *, item: int | None = None, source: str = "user command",
        reason: str | None = None,
    ) -> int:
        """Clear a field (or one item of a list field); returns how many entries expired.

        Raises:
            StateError: a bad field name, or nothing active to clear.
        """
        _check_name("field", field, self.engine.settings)
        if field == "expires_at":
            if not self._fold(key).session_expiry:
                raise StateError("no session expiry is set")
            await self._append(key, {"op": "session_expiry", "expires_at": None, "after_event": None,
                                     "source": source})
            return 1
        view = self.get(key)
        hits = [e for e in view.active if e.field == field and (item is None or e.id == item)]
        if not hits:
            raise StateError(f"{field} is not set" if item is None else f"no active {field} item #{item}")
        why = reason or ("manual: /state clear" if source == "user command" else f"cleared ({source})")
        await self._append(key, {"op": "clear", "field": field, "item": item, "reason": why,
                                 "source": source})
        return len(hits)

    async def on_superseded(self, key: str, ids: list[int]) -> list[Notice]:
        """``/edit`` replaced these messages: what they stated leaves the state (an edited rule is the
        new message's to state). Each active entry sourced from one of them is cleared, and the
        audit says why; entries set since by something else are left alone. A pending inbox
        candidate proposed only from them is withdrawn (never stored, and not barred either)."""
        gone = {f"e:{i}" for i in ids}
        notices: list[Notice] = []
        for e in self.get(key).active:
            if e.source not in gone:
                continue
            await self.clear(key, e.field, item=e.id if e.field in LIST_FIELDS else None, source="edit",
                             reason=f"edited: its message {e.source} was replaced (/edit)")
            notices.append(Notice(f"{_LABELS.get(e.field, e.field)} cleared: {_text(e.value)} "
                                  f"(its message {e.source} was edited)"))
        ctx = self.scope_context(key)
        try:
            withdrawn = await self.promotion.withdraw(ctx.agent, ctx.session_id, ids)
        except InboxError as err:  # an unreadable inbox: the edit itself stands
            notices.append(Notice(f"inbox: {err}", "inbox"))
            withdrawn = []
        notices += [Notice(f"Inbox #{w.n} withdrawn: {w.text} (its message was edited)", "inbox") for w in withdrawn]
        return notices

    async def set_goal(self, key: str, text: str, *, source: str = "user command") -> StateEntry:
        """Set ``current_goal`` (workflow-bound: ``/done`` resolves it)."""
        if not text.strip():
            raise StateError("usage: /goal TEXT")
        return await self.set(key, "current_goal", text, source=source)

    async def add_pref(
        self, key: str, text: str, for_: str | None = None, until_event: str | None = None,
        *, source: str = "user command",
    ) -> StateEntry:
        """Add a temporary preference, optionally for a duration or until an event."""
        if not text.strip():
            raise StateError("usage: /pref TEXT [--for 2h|--until-event NAME]")
        return await self.set(key, "temporary_preferences", text, source=source, ttl=for_,
                              until_event=until_event)

    async def add_open_question(self, key: str, text: str, *, source: str = "user command") -> StateEntry:
        """Add an open question (workflow-bound)."""
        if not text.strip():
            raise StateError("the question is empty")
        return await self.set(key, "open_questions", text, source=source)

    def open_questions(self, key: str) -> list[StateEntry]:
        """The active open questions, in list order (a question's list number is its 1-based place)."""
        return [e for e in self.get(key).active if e.field == "open_questions"]

    async def resolve_open_question(
        self, key: str, ref: str | int, *, answer: str | None = None, source: str = "user command",
        by_number: bool = False,
    ) -> StateEntry:
        """Resolve an open question by entry id, 1-based position, or (unique) text fragment.

        With ``by_number`` a number is the list number only (the tools name questions so: an entry id
        that happens to equal another question's list number must not win)."""
        qs = self.open_questions(key)
        hit: list[StateEntry] = []
        s = str(ref).strip().lstrip("#")
        if s.isdigit():
            n = int(s)
            by_place = [qs[n - 1]] if 0 < n <= len(qs) else []
            hit = by_place if by_number else [e for e in qs if e.id == n] or by_place
        if not hit:
            hit = [e for e in qs if s and s.casefold() in _text(e.value).casefold()]
        if len(hit) != 1:
            raise StateError(f"no single open question matches {ref!r}" if qs
                             else "there are no open questions")
        why = f"resolved: {redact_secrets(self._unkeyed(answer))}" if answer else "resolved"
        await self._append(key, {"op": "resolve", "field": "open_questions", "item": hit[0].id,
                                 "reason": why, "source": source})
        return hit[0]

    async def fire_event(self, key: str, name: str, *, source: str = "user command") -> int:
        """Fire a named event; returns how many entries it expired."""
        _check_name("event", name, self.engine.settings)
        n = sum(1 for e in self.get(key).active if e.until_event == name)
        await self._append(key, {"op": "fire", "name": name, "source": source})
        return n

    async def done(self, key: str, *, source: str = "user command") -> int:
        """End the workflow: the goal is resolved and workflow-bound entries expire."""
        n = sum(1 for e in self.get(key).active if e.workflow)
        await self._append(key, {"op": "done", "reason": "workflow end: done", "source": source})
        return n

    async def set_session_expiry(
        self, key: str, when: str | datetime | None, *, source: str = "user command",
    ) -> dict[str, Any]:
        """Set the session-level ``expires_at``.

        Args:
            key: Session key.
            when: A datetime, an ISO timestamp, a duration from now (``7d``), an event plus a delay
                (``ticket_closed + 7d``), or ``None`` to clear.

        Raises:
            StateError: ``when`` is none of those.
        """
        spec: dict[str, Any] = {"expires_at": None, "after_event": None, "delay": None}
        if isinstance(when, datetime):
            spec["expires_at"] = (when if when.tzinfo else parse_time(when.isoformat())).isoformat()
        elif when:
            try:
                spec["expires_at"] = parse_time(when).isoformat()
            except ValueError:
                try:
                    spec["expires_at"] = (self.engine.now() + parse_duration(when)).isoformat()
                except ValueError:
                    m = _AFTER_EVENT.match(when)
                    if not m:
                        secret = looks_like_key(when, self.engine.settings)
                        shown = "(it looks like a credential)" if secret else repr(when)
                        raise StateError(f"bad expiry {shown}: use ISO time, 7d, or EVENT + 7d") from None
                    _check_name("event", m.group(1), self.engine.settings)
                    try:
                        parse_duration(m.group(2) or "0s")
                    except ValueError as e:
                        raise StateError(str(e)) from None
                    spec["after_event"], spec["delay"] = m.group(1), (m.group(2) or "0s").replace(" ", "")
        await self._append(key, {"op": "session_expiry", **spec, "source": source})
        return spec

    # ---- engine hooks --------------------------------------------------------------------------

    def _previous_user_text(self, key: str, before: int) -> str | None:
        """The user's message before event ``before`` in the key's session (``None`` if none)."""
        for ev in reversed(self.engine.events(key)):
            if ev.id < before and ev.type == "message" and ev.role == "user":
                return ev.content
        return None

    async def _classified(self, key: str, event_id: int, content: str) -> tuple[list[Classification], bool]:
        """The classifier's reading of the user message ``content`` (event ``event_id``), and whether
        it was read as a password announced by the message before."""
        # Fault-suite fix (tests/faults/hostile_cases.py, 10 MB paste): the classifier took ~60 s on the
        # event loop for a 10 MB paste, freezing the UI. A paste that large is data, not a statement
        # of goals or preferences; only its head is classified, and off the event loop.
        text = _head(content)
        announced = False  # a password sent after "…in the next message" is one: redacted up front
        prev = self._previous_user_text(key, event_id) if len(text) <= _ANNOUNCED_MAX_CHARS else None
        if prev is not None:
            red = redact_secrets(text, context=prev)
            if red != redact_secrets(text):  # else the classifier redacts (and flags) as it always did
                text, announced = red, True
        off_loop = len(text) > STATE_CLASSIFY_THREAD_CHARS
        return (await asyncio.to_thread(classify, text) if off_loop else classify(text)), announced

    def _entry_args(self, event_id: int, c: Classification) -> dict[str, Any]:
        """How the session entry of classification ``c`` of message ``event_id`` is set (:meth:`set`'s
        keyword arguments): one place for the message hook and a draft's preview."""
        ttl = capped_duration(c.ttl)[0] if c.ttl else None  # a period past the cap: the longest one allowed
        return {"source": f"e:{event_id}", "ttl": ttl, "until_event": c.until_event, "scope": c.scope,
                "expires_at": period_end(c.period, self.engine.now()) if c.period else None}

    async def draft_records(self, key: str, text: str) -> list[Event]:
        """The ``state`` records that sending ``text`` now would append (a goal, a rule, a temporary
        preference it states), as events with the ids they would get; nothing is written.

        The same classifier reads the draft as :meth:`on_user_message` reads the sent message, so a
        preview (:meth:`get` with ``pending``) shows the state block the call will carry. Inbox
        candidates are not proposed: they do not enter the context.
        """
        events = self.engine.events(key)
        msg_id = max((e.id for e in events), default=0) + 1  # the id the message would be stored under
        found, _ = await self._classified(key, msg_id, text)
        out: list[Event] = []
        for c in found:
            if not (c.session_entry and c.field and c.value):
                continue
            try:
                data = self._entry_record(key, c.field, c.value, **self._entry_args(msg_id, c), workflow=None,
                                          active=self.get(key, out).active)
            except StateError:  # sending it records nothing for this statement either (a notice says why)
                continue
            if isinstance(data, StateEntry):
                continue
            eid = msg_id + len(out) + 1
            out.append(Event("state", eid, eid - 1, self.engine.now_iso(), self._stamped(data)))
        return out

    async def on_user_message(self, key: str, event: Event) -> list[Notice]:
        """Run the classifier on a user message; record session entries and inbox candidates.

        A statement the state cannot take (a bad event name, say) is a notice and the others are
        recorded; a period longer than :data:`~neotask_tui.engine.state.model.MAX_DURATION_DAYS` is
        kept that long, and the notice says so. A statement the active state already holds (same
        field, value, scope and end) records nothing and is told once.
        """
        notices: list[Notice] = []
        ctx = self.scope_context(key)
        found, announced = await self._classified(key, event.id, event.content)
        for c in found:
            if c.session_entry and c.field and c.value:
                notice = await self._record_statement(key, event.id, c)
                if notice is not None and notice not in notices:
                    notices.append(notice)
            if c.refused:
                notices.append(Notice(c.refused[0].upper() + c.refused[1:], "inbox"))
            if c.candidate and c.candidate_scope:
                cand = Candidate(
                    text=c.text, scope=c.candidate_scope, reason=c.reason, origin="classifier",
                    source_ids=[event.id], session_id=ctx.session_id, key=key,
                    scope_ref=ctx.ref(c.candidate_scope), explicit=True,
                    contains_secret=c.contains_secret or (announced and MARKER_PREFIX in c.text),
                    created_at=self.engine.now().isoformat(),
                )
                try:
                    entry = await self.inbox_add(ctx.agent, cand)
                except InboxError as err:  # e.g. a workspace that is a link: the turn goes on
                    notices.append(Notice(f"Not proposed for long-term memory: {err}", "inbox"))
                    continue
                if entry is not None:
                    notices.append(Notice(
                        f"Proposed for long-term memory (inbox #{entry.n}, {entry.scope}): {entry.text} "
                        f"— /inbox accept {entry.n} or /inbox reject {entry.n}", "inbox",
                    ))
        return notices

    async def _record_statement(self, key: str, event_id: int, c: Classification) -> Notice | None:
        """Record the session entry of statement ``c`` of message ``event_id``; the notice for it."""
        assert c.field is not None and c.value is not None
        label = _LABELS.get(c.field, c.field)
        try:
            e = await self.set(key, c.field, c.value, **self._entry_args(event_id, c))
        except StateError as err:
            return Notice(f"{label}: not recorded ({err})")
        if e.scope != "session":
            label = f"{label} ({e.scope} {e.scope_ref or ''})".replace(" )", ")")
        ttl, capped = capped_duration(c.ttl) if c.ttl else (None, False)
        extra = f" for {ttl}" if ttl else f" until {c.until_event}" if c.until_event else ""
        if c.period:  # "until Friday keep answers short" says "until" already: the end in brackets
            said = period_of(_text(e.value)) == c.period
            extra = f" (to {describe_period(c.period)})" if said else f" until {describe_period(c.period)}"
        if capped:
            asked = c.ttl if c.ttl and len(c.ttl) <= 40 else f"{(c.ttl or '')[:40]}…"
            extra += f" (capped: {asked} is longer than the {MAX_DURATION_DAYS}-day maximum)"
        if e.source != f"e:{event_id}":  # an entry the state holds already, unchanged
            extra += " (already in the session state)"
        return Notice(f"{label}: {_text(e.value)}{extra}")

    def carry_over(self, key: str, reason: str) -> list[dict[str, Any]]:
        """State records that start a fresh session of ``key`` (read before it is created).

        ``/new`` and the daily reset (``reason`` ``new``/``daily``) carry every entry still active
        and in scope — goal, rules, temporary preferences within their TTL… — with its original
        source, scope and absolute expiry, and the session-level expiry; time, events, ``/done``
        and scope changes then expire them in the new session as they would have in the old one.
        Idle expiry (``idle``) is the lecture's "by time" end of a session, and ``/reset``
        (``reset``) the user's: nothing is carried and a ``reset`` record lists what it ended, so the
        new session's audit (``/state audit``) says what ended, why and when (undoing the reset
        brings it back).
        """
        now = self.engine.now()
        at = now.isoformat()
        old = self.engine.current_record(key).session_id
        view = self.get(key)
        if reason in ("idle", "reset"):
            if not view.active:
                return []
            minutes = self.engine.settings.session.idle_reset_minutes
            why, source = ((f"idle expiry: no activity for {minutes} minutes", "idle expiry") if reason == "idle"
                           else ("manual reset", "user command"))
            return [redact_tree({
                "op": "reset", "reason": why, "from_session": old,
                "expired": [e.to_dict() for e in view.active], "source": source, "at": at,
            })]
        out: list[dict[str, Any]] = []
        for e in view.active:
            out.append(redact_tree({
                "op": "add" if e.field in LIST_FIELDS else "set", "field": e.field, "value": e.value,
                "scope": e.scope, "scope_ref": e.scope_ref, "agent": e.agent, "key": e.key, "ttl": e.ttl,
                "expires_at": e.expires_at.isoformat() if e.expires_at else None, "until_event": e.until_event,
                "workflow": e.workflow, "source": e.source, "set_at": e.set_at.isoformat(),
                "carried_from": old, "carried_by": reason, "at": at,
            }))
        expiry = view.session_expiry
        if view.session_expires_at is not None:
            expiry = {"expires_at": view.session_expires_at.isoformat(), "after_event": None, "delay": None}
        if expiry:
            out.append({"op": "session_expiry", **expiry, "source": f"carried over from {old}",
                        "carried_from": old, "carried_by": reason, "at": at})
        return out

    async def on_reset(self, key: str, old_session_id: str) -> None:
        """Manual ``/reset``: everything expires with reason "manual reset" (recorded for the audit)."""
        ctx = self.scope_context(key)
        if ctx.session_id == old_session_id:
            await self._append(key, {"op": "reset", "reason": "manual reset", "source": "user command"})
            return
        old = self._session_events(old_session_id)
        st = fold([*self._lineage_state_events(old), *old], self.engine.now())
        if st.active:
            await self._append(key, {
                "op": "reset", "reason": "manual reset", "from_session": old_session_id,
                "expired": [e.to_dict() for e in st.active.values()], "source": "user command",
            })

    async def on_scope_change(self, key: str, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        """A project/workspace switch drops the entries bound to the old one."""
        changes = {
            dim: [old_config.get(dim), new_config.get(dim)]
            for dim in ("project", "workspace") if old_config.get(dim) != new_config.get(dim)
        }
        if changes:
            await self._append(key, {"op": "scope_change", "changes": changes, "source": "scope change"})

    def tools(self) -> list[ToolSpec]:
        """The model-facing state tools (JSON-schema parameters)."""
        return tool_specs()

    async def handle_tool(self, key: str, call: ToolCall) -> ToolReply | None:
        """Execute one of the state tools (its result, an error one flagged); ``None`` if ``call`` is
        not one of them."""
        return await _handle_tool(self, key, call)

    # ---- the promotion inbox (delegated to :class:`Promotion`) -------------------------------------

    async def inbox_add(self, agent_id: str, candidate: Candidate) -> InboxEntry | None:
        """Store a candidate (redacted, criteria checked); ``None`` if rejected before or a duplicate."""
        return await self.promotion.add(agent_id, candidate)

    async def inbox_list(self, agent_id: str, status: str | None = "pending") -> list[InboxEntry]:
        """Inbox entries (pending by default; ``status=None`` for all)."""
        return await self.promotion.entries(agent_id, status)

    async def inbox_edit(self, agent_id: str, n: int, text: str) -> InboxEntry:
        """Replace the text of pending entry ``n`` (a configured API key in it masked)."""
        return await self.promotion.edit(agent_id, n, self._unkeyed(text))

    async def inbox_reject(self, agent_id: str, n: int) -> InboxEntry:
        """Reject entry ``n``; the same text is never proposed again."""
        return await self.promotion.reject(agent_id, n)

    async def inbox_accept(self, agent_id: str, n: int, scope: str | None = None) -> InboxEntry:
        """Accept entry ``n``: write it to long-term memory (see :meth:`Promotion.accept`).

        Raises:
            InboxError: unknown/decided entry, secrets, or a scope that is not long-term.
        """
        return await self.promotion.accept(agent_id, n, scope)

    def candidates_from_events(self, key: str, events: list[Event]) -> list[Candidate]:
        """Durable-looking statements in user messages → inbox candidates (compaction's flush).

        The candidates are also proposed to the agent's inbox right away (deduplicated; rejected
        texts are skipped), because the compactor's flush is synchronous and only asks for the
        list. Calling :meth:`inbox_add` with them again is harmless.
        """
        ctx = self.scope_context(key)
        out: list[Candidate] = []
        prev: str | None = None  # a password announced in the user's message before is one here too
        for ev in events:
            if ev.type != "message" or ev.role != "user":
                continue
            content = ev.content
            if prev is not None and len(content) <= _ANNOUNCED_MAX_CHARS:
                red = redact_secrets(content, context=prev)
                content = red if red != redact_secrets(content) else content
            prev = ev.content
            for c in classify(content):
                if c.candidate and c.candidate_scope:
                    out.append(Candidate(
                        text=c.text, scope=c.candidate_scope, reason=f"memory flush: {c.reason}",
                        origin="compaction", source_ids=[ev.id], session_id=ctx.session_id, key=key,
                        scope_ref=ctx.ref(c.candidate_scope), explicit=True,
                        contains_secret=c.contains_secret or (content is not ev.content and MARKER_PREFIX in c.text),
                        created_at=self.engine.now().isoformat(),
                    ))
        inbox = Inbox(ctx.agent)
        for cand in out:
            inbox.add(cand)
        return out


__all__ += ["Candidate", "InboxEntry", "InboxError"]
