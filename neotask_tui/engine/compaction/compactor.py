"""Compaction that loses nothing silently.

A compaction replaces the older part of a session by a structured, cited summary
(:mod:`neotask_tui.engine.compaction.summary`) and starts a new session for the same key whose transcript is:
its ``session`` header, a ``compaction`` record, then the kept recent messages copied with their
original ids. The old transcript is archived (viewable, never loaded into context) and
``sessions.json`` links child → parent.

Guarantees:

- **Guarded**: the model's summary goes through the deterministic guard; every identifier and
  negated constraint of the compacted range is present, missing ones are appended and reported.
- **Never blocks**: if the model fails, times out or writes nothing usable, the deterministic
  extractive summary is used instead (``fallback=True``).
- **Transactional**: the new transcript is written completely and fsynced, then the index switch
  commits, then the old transcript is archived (see :class:`~neotask_tui.storage.store.SessionStore`).
  A crash before the switch leaves the old session intact; after it, the new one is complete.
- **Reviewable**: ``preview=True`` returns the draft and a "dropped" list and writes no transcript.
- **Counted**: every summarizer call that came back is added to the session's token counters once
  (the provider's usage, or our estimate labelled so when it reported none, as for a turn): as soon
  as the summary is back, a ``call`` event in the compacted session's transcript records it (a
  preview's too, which saves the index at once); the new session carries those counters and records
  them on its compaction record (``carried_totals``), so a rebuild of the index from the
  transcripts finds the same totals. The kept messages are copies (``copied_from``): their calls
  were counted in the compacted session. A call that failed or timed out adds nothing (it
  reported nothing). A read-only engine never asks the model: it could not count the call.
- **Undoable**: :meth:`Compactor.undo` makes the parent current again, carrying over any messages
  sent since.
- **Drift-proof**: every ``rebuild_every`` compactions (and on ``rebuild=True``) the summary is
  rebuilt from the primary events of the whole lineage, never from the previous summary.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

from neotask_tui.engine.compaction.extractive import extractive_summary
from neotask_tui.engine.compaction.guard import (
    CriticalItem,
    GuardReport,
    attributor,
    extract_items,
    guard,
    identifiers_in,
)
from neotask_tui.engine.compaction.inputs import (
    head_summary,
    is_context_event,
    lineage_events,
    memory_candidates,
    previous_items,
    split_recent,
)
from neotask_tui.engine.compaction.summary import Summary, build_summary_prompt, event_text, parse_summary
from neotask_tui.engine.context.assembly import Ledger
from neotask_tui.engine.context.budget import compaction_point, keep_recent
from neotask_tui.engine.ports import ProviderSource, Sessions
from neotask_tui.engine.state.inbox import Candidate
from neotask_tui.errors import UserError
from neotask_tui.providers.base import ChatMessage, Provider, ProviderError, Role, StreamEnd, TextDelta, Usage
from neotask_tui.providers.models import DEFAULT_CONTEXT_WINDOW, ModelInfo, cost_usd
from neotask_tui.storage.events import Event, without_superseded
from neotask_tui.storage.index import SessionRecord
from neotask_tui.storage.transcript import append_events
from neotask_tui.text import tokens
from neotask_tui.text.secrets import MARKER_PREFIX, find_secrets, has_secrets, redact_secrets
from neotask_tui.tuning import (
    SUMMARY_CHUNK_MIN_TOKENS,
    SUMMARY_MAX_TOKENS,
    SUMMARY_MIN_TOKENS,
    SUMMARY_PROMPT_SHARE,
    SUMMARY_SHARE,
)

log = logging.getLogger(__name__)

EXTRACTIVE_MODEL = "extractive"
REVIEWED_MODEL = "reviewed"
"""``model`` of a compaction whose summary the user accepted or edited in the review."""


class MemoryFlush(Protocol):
    """Files durable statements of a compacted range in the promotion inbox (the state manager)."""

    def candidates_from_events(self, key: str, events: list[Event]) -> list[Candidate]: ...


class CompactionHost(Sessions, ProviderSource, Protocol):
    """What the compactor needs of the engine: sessions, the provider, the window, the state."""

    @property
    def state(self) -> MemoryFlush: ...

    def model_info(self) -> ModelInfo: ...


@dataclass
class CompactionResult:
    """What a compaction did (or, for a preview, would do).

    Attributes:
        key: Session key.
        old_session_id: The session compacted.
        new_session_id: The session created (``None`` for a preview).
        summary: Rendered summary text (what context assembly injects).
        sections: The structured summary (section → lines with cites and ``repaired`` flags).
        first_kept_id: Id of the first kept raw event.
        kept_ids: Ids of the events copied into the new session.
        tokens_before: Estimated context tokens before.
        tokens_after: Estimated context tokens after (system + summary + kept).
        model: The model that wrote the summary, or ``extractive``.
        fallback: True when the extractive summarizer was used because the model failed.
        fallback_reason: Why (error kind / timeout / empty), if so.
        repaired: Items the guard appended or removed (kind, text, cites).
        dropped: Decisions/asks/questions of the range the summary does not cover (for review).
        cited: Every event id the summary cites.
        instructions: The user's focus instructions, if any.
        preview: True when nothing was written.
        rebuild: True when summarized from the lineage's primary events.
        reason: ``auto``, ``manual``, ``overflow`` or ``rebuild``.
        candidates: Memory-flush candidates proposed to the promotion inbox.
        issues: Parser notes on the model output (uncited lines, bad citations...).
        summarizer_note: Why the extractive summarizer wrote it although no model failed (the
            model cannot write a usable summary: its table entry says ``summaries = false``; or the
            engine is read-only and could not count the call).
        usage: The summarizer's calls to the model, summed (``Usage.to_dict()`` form: reported, or
            our estimate when the provider reported none); None when no call came back. Counted in
            the session's counters (a preview's too).
        cost_usd: Their cost (None when the price is unknown or no call came back).
    """

    key: str
    old_session_id: str
    new_session_id: str | None
    summary: str
    sections: dict[str, Any]
    first_kept_id: int | None
    kept_ids: list[int]
    tokens_before: int
    tokens_after: int
    model: str
    fallback: bool = False
    fallback_reason: str | None = None
    repaired: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    cited: list[int] = field(default_factory=list)
    instructions: str | None = None
    preview: bool = False
    rebuild: bool = False
    reason: str = "manual"
    candidates: list[dict[str, Any]] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    summarizer_note: str | None = None
    usage: dict[str, Any] | None = None
    cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``--json``, the TUI review modal)."""
        return asdict(self)


@dataclass
class UndoResult:
    """What :meth:`Compactor.undo` did."""

    key: str
    restored_session_id: str
    undone_session_id: str
    carried_event_ids: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return asdict(self)


class Compactor:
    """Automatic, manual and overflow compaction for an :class:`~neotask_tui.engine.facade.Engine`.

    Args:
        engine: The engine (settings, store, provider, token counts, window, state manager).
    """

    def __init__(self, engine: CompactionHost) -> None:
        self.engine = engine
        self.use_model = True
        """False = always use the deterministic extractive summarizer (benches, offline use)."""

    # ----- triggers
    def should_auto(self, key: str, ledger: Ledger | None) -> bool:
        """Whether the next call's context crosses the threshold and compaction is allowed."""
        cs = self.engine.settings.compaction
        if not cs.enabled or ledger is None:
            return False
        budget = ledger.budget or ledger.window
        # Recall is elastic (it takes what the budget leaves, by relevance): only the history-driven
        # part of the context — summary, raw window, tool output — is what compaction can shrink, and
        # the threshold is of the room that part has (the window less the recall reserve).
        total = ledger.without_recall
        point = compaction_point(self.engine.settings, ledger.window, ledger.kept_by_compaction)
        # Raw history that no longer fits the window would be dropped silently: compact it instead.
        dropping = bool(ledger.dropped_event_ids)
        if budget <= 0 or ((point <= 0 or total < point) and not dropping):
            return False
        # Compaction shrinks the raw history (recent messages, tool output) to what it keeps raw plus a
        # summary. When what it cannot shrink — the system prompt, the session state, the new message —
        # keeps the context over the threshold anyway, it would compact the last turn or two at every
        # call and gain nothing (red team 29: a new session, with an empty summary, each turn).
        # Below the point a compaction cannot bring the context, it still runs once it folds at least as
        # much raw history as it keeps (red team 35: a threshold of 0.3, under what a compaction leaves,
        # never fired until the window was full).
        history = ledger.sections.get("recent", 0) + ledger.sections.get("tool", 0)
        keep = keep_recent(self.engine.settings, self._window())
        gain = max(history - keep, 0)
        if not dropping and total - gain >= point and gain < keep:
            return False
        msgs = [e for e in without_superseded(self.engine.events(key))
                if e.type == "message" and e.role in ("user", "assistant")]
        return len(msgs) >= cs.min_messages

    async def maybe_auto(self, key: str, ledger: Ledger | None) -> CompactionResult | None:
        """Compact when :meth:`should_auto` says so (called before each model call); ``None`` when it
        does not, or when there is nothing to compact (the history fits the raw window a compaction
        keeps: the call goes on as it is)."""
        if ledger is None or not self.should_auto(key, ledger):
            return None
        try:
            return await self.compact(key, reason="auto", tokens_before=ledger.total)
        except UserError as e:
            log.info("auto-compaction skipped: %s", e)
            return None

    # ----- compaction
    async def compact(
        self,
        key: str,
        instructions: str | None = None,
        preview: bool = False,
        rebuild: bool = False,
        reason: str = "manual",
        tokens_before: int | None = None,
        summary_text: str | None = None,
    ) -> CompactionResult:
        """Compact the current session of ``key``.

        Args:
            key: Session key.
            instructions: What the summary should focus on (manual compaction).
            preview: Return the draft summary and the dropped list; the session does not change
                (the model's call, when one came back, is recorded and counted like any call).
            rebuild: Summarize the whole lineage from primary events, not from the last summary.
            reason: ``manual``, ``auto`` or ``overflow`` (recorded on the compaction record).
            tokens_before: Context size before, when the caller measured it (the ledger total).
            summary_text: A reviewed (possibly edited) summary from the preview to commit as is;
                no model is called, and the guard still checks it.

        Returns:
            The result.

        Raises:
            UserError: the session has nothing to compact.
        """
        eng = self.engine
        rec = eng.current_record(key, create=False)  # compacting (or previewing) never creates a session
        events: list[Event] = list(eng.events(key))
        prev_ev = head_summary(events)
        split = split_recent(events, eng.count_event, keep_recent(eng.settings, self._window()))
        every = eng.settings.compaction.rebuild_every
        periodic = every > 0 and prev_ev is not None and (rec.compaction_count + 1) % every == 0
        rebuild = rebuild or periodic
        if not split.head and not (rebuild and prev_ev is not None):
            raise UserError("nothing to compact yet: the whole session fits in the recent window")
        kept_ids = {e.id for e in split.kept}
        previous: Summary | None = None
        if rebuild:
            primary, _ = lineage_events(events, eng.store.events)
            cut = split.first_kept_id if split.first_kept_id is not None else max(e.id for e in events) + 1
            source = [e for e in primary if is_context_event(e) and e.id < cut and e.id not in kept_ids]
        else:
            source = split.head
            if prev_ev is not None:
                previous = parse_summary(str(prev_ev.data.get("summary", "")))
        items = extract_items(source) + (previous_items(previous) if previous else [])
        valid = {e.id for e in source} | kept_ids | (set(previous.cited_ids()) if previous else set())

        spent: list[Usage] = []  # the summarizer's calls that came back (a failed one reported nothing)
        if summary_text is not None:
            summary = parse_summary(summary_text, valid_ids=valid, attribute=attributor(source))
            model, fb_reason, issues = REVIEWED_MODEL, None, list(summary.issues)
        else:
            summary, model, fb_reason, issues = await self._summarize(source, previous, instructions, valid, spent)
        usage, cost = await asyncio.to_thread(self._price, spent)  # the first price lookup imports genai-prices
        if usage is not None:  # the call was paid, whatever comes of the draft: counted now, on disk
            await asyncio.to_thread(self._record_call, rec, usage, cost, preview)
        by_policy = self.use_model and model == EXTRACTIVE_MODEL and fb_reason is None and bool(source)
        note = self._not_asked() if by_policy else None
        known = _known_secrets(source)
        items = _scrub_items(items, known, source)
        _scrub_summary(summary, known)
        report = guard(summary, items, source)
        _scrub_summary(summary, known)  # the guard re-adds items: none may bring a secret back
        _scrub_report(report, known, summary)  # what it says it changed quotes the draft: shown and stored as well
        instructions = _scrub_text(instructions, known) if instructions else instructions
        issues = [_scrub_cut(i, known) for i in issues]
        text = summary.render()
        if tokens_before is None:
            tokens_before = self._tokens(events)
        system = eng.count_text(eng.settings.general.system_prompt)
        tokens_after = system + eng.count_text(text) + sum(eng.count_event(e) for e in split.kept
                                                                if is_context_event(e))
        candidates = [{k: _scrub_text(v, known) if isinstance(v, str) else v for k, v in c.items()}
                      for c in memory_candidates(source)]
        result = CompactionResult(
            key=key, old_session_id=rec.session_id, new_session_id=None, summary=text,
            sections=summary.to_dict(), first_kept_id=split.first_kept_id,
            kept_ids=[e.id for e in split.kept], tokens_before=tokens_before, tokens_after=tokens_after,
            model=model, fallback=fb_reason is not None, fallback_reason=fb_reason,
            repaired=[r.to_dict() for r in report.repaired], dropped=[d.to_dict() for d in report.dropped],
            cited=summary.cited_ids(), instructions=instructions, preview=preview, rebuild=rebuild,
            reason="rebuild" if rebuild and reason == "manual" else reason, candidates=candidates,
            issues=issues, summarizer_note=note, usage=usage.to_dict() if usage else None, cost_usd=cost,
        )
        if preview:
            return result
        await asyncio.to_thread(self._flush_memory, key, source, candidates)
        result.new_session_id = await asyncio.to_thread(self._commit, rec, split.kept, result)
        return result

    async def _summarize(
        self, source: Sequence[Event], previous: Summary | None, instructions: str | None, valid: set[int],
        spent: list[Usage],
    ) -> tuple[Summary, str, str | None, list[str]]:
        """Ask the model (rolling over chunks that fit its window); fall back to extractive.

        The usage of every call that came back is appended to ``spent`` as it comes, so a call
        made before a later one failed or the time ran out is counted too."""
        eng = self.engine
        budget = self.summary_budget()

        def extractive(why: str | None) -> tuple[Summary, str, str | None, list[str]]:
            s = extractive_summary(source, budget_tokens=budget, count=tokens.count_text,
                                   instructions=instructions, previous=previous)
            return s, EXTRACTIVE_MODEL, why, []

        if not source or not self.use_model or self._not_asked() is not None:
            return extractive(None)  # never wait for a reply that would be thrown away
        provider = eng.provider
        if provider is None:
            try:
                provider = await eng.get_provider()
            except Exception as e:  # no model available: the extractive summary is the answer
                return extractive(f"no model: {e}")
        timeout = float(eng.settings.compaction.timeout_seconds)
        prev_text = previous.render() if previous else None
        issues: list[str] = []
        try:
            async with asyncio.timeout(timeout):
                for chunk in self._chunks(source):
                    prompt = build_summary_prompt(chunk, instructions, prev_text)
                    out, used = await self._ask(provider, prompt)
                    spent.append(used)
                    parsed = parse_summary(out, valid_ids=valid, attribute=attributor(chunk))
                    if not parsed.lines or not parsed.headings:
                        return extractive("the model's reply was not in the summary shape")
                    issues.extend(parsed.issues)
                    prev_text = parsed.render()
        except TimeoutError:
            return extractive(f"timed out after {timeout:g}s")
        except Exception as e:  # any provider failure: never block the session on the summary
            return extractive(f"{e.kind if isinstance(e, ProviderError) else type(e).__name__}: {e}")
        final = parse_summary(prev_text or "", valid_ids=valid)
        return final, provider.model or provider.name, None, issues

    def summarizer_note(self) -> str | None:
        """Why the model is not asked for a summary (its table entry says it cannot write a usable
        one), or None: the model is asked, within ``compaction.timeout_seconds``."""
        try:
            info = self.engine.model_info()
        except Exception:  # an unreadable model table: ask the model, the fallback still guards
            return None
        if info.summaries:
            return None
        return (f"{info.name} cannot write a usable summary (model table: summaries = false, "
                "measured by bench/summarizer.py), so it was not asked")

    def _not_asked(self) -> str | None:
        """Why the model is not asked: :meth:`summarizer_note`, or a read-only engine (beside the
        process that holds the data dir, or on one that cannot be written), which could not add the
        call to the session's counters."""
        note = self.summarizer_note()
        if note is None and self.engine.readonly:
            return ("the model was not asked: another neotask process holds the data dir (or it cannot be "
                    "written), so this read-only preview could not count the call in the session's totals")
        return note

    def summary_budget(self) -> int:
        """Soft token cap of an extractive summary (see :data:`~neotask_tui.tuning.SUMMARY_SHARE`)."""
        eng = self.engine
        usable = self._window() - int(eng.settings.context.reply_reserve_tokens)
        cap = min(keep_recent(eng.settings, self._window()), int(usable * SUMMARY_SHARE))
        return max(cap, SUMMARY_MIN_TOKENS)

    def _chunks(self, source: Sequence[Event]) -> list[list[Event]]:
        """Split the range so each summarization prompt fits the model's window."""
        window = self._window()
        limit = max(int(window * SUMMARY_PROMPT_SHARE) - SUMMARY_MAX_TOKENS, SUMMARY_CHUNK_MIN_TOKENS)
        chunks: list[list[Event]] = [[]]
        used = 0
        for ev in source:
            cost = self.engine.count_event(ev)
            if chunks[-1] and used + cost > limit:
                chunks.append([])
                used = 0
            chunks[-1].append(ev)
            used += cost
        return chunks

    def _window(self) -> int:
        try:
            window = self.engine.message_window()
        except Exception:  # the model table or provider choice failed: compaction still proceeds
            return DEFAULT_CONTEXT_WINDOW
        return window if window > 0 else DEFAULT_CONTEXT_WINDOW

    async def _ask(self, provider: Provider, prompt: list[tuple[Role, str]]) -> tuple[str, Usage]:
        """The reply and the call's usage: the provider's, or (it reported none) our estimate,
        labelled ``reported=False``, as a turn's is."""
        msgs = [ChatMessage(role=r, content=c) for r, c in prompt]
        parts: list[str] = []
        usage: Usage | None = None
        async for ev in provider.stream(msgs, max_tokens=SUMMARY_MAX_TOKENS):
            if isinstance(ev, TextDelta):
                parts.append(ev.text)
            elif isinstance(ev, StreamEnd):
                usage = ev.usage
                break
        text = "".join(parts)
        if usage is None:
            count = self.engine.count_text
            usage = Usage(input_tokens=tokens.count_messages(msgs, count), output_tokens=count(text), reported=False)
        return text, usage

    def _price(self, spent: Sequence[Usage]) -> tuple[Usage | None, float | None]:
        """The calls summed, and their cost (each call priced on its own: tiers are per call)."""
        if not spent:
            return None, None
        total = Usage(
            input_tokens=sum(u.input_tokens for u in spent), output_tokens=sum(u.output_tokens for u in spent),
            cache_read_tokens=sum(u.cache_read_tokens for u in spent),
            cache_write_tokens=sum(u.cache_write_tokens for u in spent),
            reported=all(u.reported for u in spent),
        )
        try:
            info = self.engine.model_info()
        except Exception:  # an unreadable model table: the tokens still count, the cost is unknown
            return total, None
        costs = [cost_usd(u, info) for u in spent]
        return total, None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 8)

    def _record_call(self, rec: SessionRecord, usage: Usage, cost: float | None, preview: bool) -> None:
        """Append the summarizer's ``call`` event to the session being compacted; the store adds it
        to the counters as it appends, so the call is counted whether the switch to the new session
        then happens, fails, or the process dies first (the next start catches the index up with
        the transcript). A preview saves the index now: nothing else will."""
        eng = self.engine
        prov = eng.provider
        store = eng.store
        store.append(rec.session_id, "call", {
            "purpose": "compaction_preview" if preview else "compaction",
            "provider": prov.name if prov is not None else None, "model": prov.model if prov is not None else None,
            "usage": usage.to_dict(), "cost_usd": cost,
        }, ts=eng.now_iso())
        if preview:
            store.save()

    def _tokens(self, events: Sequence[Event]) -> int:
        eng = self.engine
        prev = head_summary(events)
        n = eng.count_text(eng.settings.general.system_prompt)
        if prev is not None:
            n += eng.count_text(str(prev.data.get("summary", "")))
        return n + sum(eng.count_event(e) for e in without_superseded(events) if is_context_event(e))

    def _flush_memory(self, key: str, source: Sequence[Event], candidates: list[dict[str, Any]]) -> None:
        """Propose durable facts to the promotion inbox before the range leaves the context."""
        try:
            # The state manager classifies, redacts and files them in the promotion inbox.
            proposed = self.engine.state.candidates_from_events(key, [e for e in source if e.type == "message"])
            candidates[:] = [c.to_dict() for c in proposed]
        except Exception as e:  # the flush is advisory; compaction must still happen
            log.warning("memory flush failed for %s: %s", key, e)

    def _commit(self, rec: SessionRecord, kept: Sequence[Event], result: CompactionResult) -> str:
        """Write the new session (header, compaction record, kept events) and switch the index."""
        store = self.engine.store
        last_id = max((e.id for e in store.events(rec.session_id)), default=0)  # the summarizer's call too
        header_id = last_id + 1
        now = self.engine.now()
        ts = now.isoformat()
        # Token counters are cumulative over the lineage (a compaction must not reset the gauge); the
        # summarizer's calls are in them already. Written with the index switch, in one write, and
        # recorded on the compaction record for a rebuild of the index.
        counters = replace(rec.counters)
        record = Event("compaction", header_id + 1, header_id, ts, {
            "summary": result.summary, "sections": result.sections, "first_kept_id": result.first_kept_id,
            "tokens_before": result.tokens_before, "tokens_after": result.tokens_after, "model": result.model,
            "source_session_id": rec.session_id, "repaired": result.repaired, "cited": result.cited,
            "instructions": result.instructions, "reason": result.reason, "fallback": result.fallback,
            "fallback_reason": result.fallback_reason, "summarizer_note": result.summarizer_note,
            "rebuild": result.rebuild, "kept_ids": result.kept_ids,
            "dropped": result.dropped,
            "carried_totals": counters.totals(),
            # The summarizer's calls, for reading: the ``call`` event in the compacted session counts them.
            **({"usage": result.usage, "cost_usd": result.cost_usd, "copied_from": rec.session_id}
               if result.usage is not None else {}),
        })
        extra = [record]
        parent = record.id
        for ev in kept:
            data = dict(ev.data)
            if isinstance(data.get("usage"), dict) and not data.get("copied_from"):
                data["copied_from"] = rec.session_id  # counted in the compacted session, not again here
            extra.append(Event(ev.type, ev.id, parent, ev.ts, data))
            parent = ev.id
        new = store.create_session(
            rec.key, reason="compaction", parent_session_id=rec.session_id, first_id=header_id,
            extra_events=extra, compaction_count=rec.compaction_count + 1, now=now, counters=counters,
        )
        return new.session_id

    # ----- undo
    async def undo(self, key: str) -> UndoResult:
        """Undo the last compaction of ``key``: its parent session becomes current again.

        Messages sent after the compaction are appended to the parent (same ids), so undo loses
        nothing; the undone session is archived and stays viewable.

        Raises:
            UserError: the current session was not created by a compaction.
        """
        store = self.engine.store
        rec = self.engine.current_record(key, create=False)
        events = list(self.engine.events(key))
        header = events[0] if events and events[0].type == "session" else None
        parent_id = rec.parent_session_id
        if header is None or header.data.get("reason") != "compaction" or not parent_id:
            raise UserError("the current session was not created by a compaction; nothing to undo")
        parent_events = store.events(parent_id)
        have = {e.id for e in parent_events}
        comp = head_summary(events)
        after = comp.id if comp is not None else header.id
        carried = [e for e in events if e.id not in have and e.type not in ("session", "compaction")
                   and e.id > after]
        if carried:
            # Appended while the parent is still archived (idempotent by id): a crash here leaves
            # the child current and complete; the parent merely holds copies.
            path = store.transcript_path(parent_id)
            prev = parent_events[-1].id if parent_events else None
            chain: list[Event] = []
            for ev in carried:
                chain.append(Event(ev.type, ev.id, prev, ev.ts, dict(ev.data)))
                prev = ev.id
            await asyncio.to_thread(append_events, path, chain)
            store.drop_cache(parent_id)
            await asyncio.to_thread(store.search.sync_session, parent_id)
        restored = await asyncio.to_thread(store.make_current, parent_id, key=key)
        restored.counters = rec.counters
        await asyncio.to_thread(store.save)
        return UndoResult(key=key, restored_session_id=parent_id, undone_session_id=rec.session_id,
                          carried_event_ids=[e.id for e in carried])


def _known_secrets(source: Sequence[Event]) -> dict[str, str]:
    """Every secret found in the compacted events (its text → kind), longest first.

    The summary is derived data, stored in the compaction record and sent with every call: a
    secret the model copies out of context (or a fragment the redactor alone would not know as
    one, like a hex token whose key word stayed behind) is replaced wherever it shows up. A user
    message is read in the light of the user's message before it, so a password announced in one
    message and sent in the next ("my NAS password is in the next message" / "Zebra9Quokka1") is
    known too.
    """
    found: dict[str, str] = {}
    prev_user: str | None = None
    for ev in source:
        text = event_text(ev)
        user = ev.type == "message" and ev.role == "user"
        for m in find_secrets(text, context=prev_user if user else None) if text else ():
            value = text[m.start:m.end]
            if len(value) >= 4:
                found.setdefault(value, m.kind)
        if user:
            prev_user = text
    return dict(sorted(found.items(), key=lambda kv: -len(kv[0])))


def _scrub_text(text: str, known: dict[str, str]) -> str:
    for value, kind in known.items():
        if value in text:
            text = text.replace(value, f"{MARKER_PREFIX}{kind}]")
    return redact_secrets(text)


def _scrub_item_text(text: str, known: dict[str, str], shown: str) -> str:
    """``text`` redacted (see :func:`_scrub_text`); a text that is only a part of a secret of the
    compacted messages (an identifier the draft cut out of a password), and not in the summary
    (``shown``, which keeps one given outside every secret), reads as that secret's marker."""
    text = _scrub_text(text, known)
    bare = text.strip(" `'\"")
    if len(bare) >= 4 and MARKER_PREFIX not in bare and bare not in shown:
        kind = next((k for v, k in known.items() if bare in v), None)
        if kind is not None:
            return f"{MARKER_PREFIX}{kind}]"
    return text


def _scrub_report(report: GuardReport, known: dict[str, str], summary: Summary) -> None:
    """Redact the guard's report in place: every item it restored, changed or found missing is shown in
    the review and stored in the compaction record, so none may carry a secret the summary does not
    (an identifier the guard left out as "unsourced" because only a password gave it, red team 36)."""
    shown = summary.render()
    for item in (*report.repaired, *report.dropped):
        item.text = _scrub_item_text(item.text, known, shown)


def _scrub_cut(text: str, known: dict[str, str]) -> str:
    """:func:`_scrub_text` for a note that quotes a draft line cut short (``'…'[:40]``): a secret the cut
    went through is masked from where it starts."""
    text = _scrub_text(text, known)
    for value, kind in known.items():
        for n in range(len(value) - 1, 3, -1):
            at = text.find(value[:n] + "'")
            if at < 0:
                at = text.find(value[:n] + '"')
            if at >= 0:
                text = text[:at] + f"{MARKER_PREFIX}{kind}]" + text[at + n:]
                break
    return text


def _scrub_summary(summary: Summary, known: dict[str, str]) -> None:
    """Redact every line of ``summary`` in place (a line left only a marker is dropped)."""
    keep = []
    for ln in summary.lines:
        ln.text = _scrub_text(ln.text, known)
        if ln.text.strip(" `") and not _only_markers(ln.text):
            keep.append(ln)
    summary.lines[:] = keep


def _only_markers(text: str) -> bool:
    return not re.sub(r"\[REDACTED:[a-z_]{1,40}\]|[\s`'\".,;:]", "", text)


def _scrub_items(items: list[CriticalItem], known: dict[str, str],
                 source: Sequence[Event] = ()) -> list[CriticalItem]:
    """Items with secrets redacted; an identifier that is (part of) a secret is no item at all,
    unless the compacted messages also give it outside every secret (``source``): the "123" of
    "latency 123 ms" stays an identifier when a token elsewhere ends in "0123456789"."""
    out = []
    outside: set[str] | None = None
    for it in items:
        if it.kind == "identifier":
            if has_secrets(it.text) or any(v in it.text for v in known):
                continue  # it holds a secret
            if any(it.text in v for v in known):  # a part of a secret: kept only when given outside them
                if outside is None:
                    outside = {t for ev in source for t in identifiers_in(_scrub_text(event_text(ev), known))}
                if it.text in outside:
                    out.append(it)
                continue
        text = _scrub_text(it.text, known)
        if MARKER_PREFIX in text and _only_markers(text):
            continue
        out.append(CriticalItem(it.kind, text, list(it.cites), it.who, it.superseded_by))
    return out

