"""``/compact [instructions]`` and ``/undo-compact``.

``/compact`` first returns a *preview* (draft summary, what the guard repaired, what would be
dropped) with a :class:`~neotask_tui.commands.intents.ReviewCompaction` intent: the TUI opens its
review modal (accept / edit / cancel) and on accept calls :func:`apply_review` with the (possibly
edited) summary, so the model is not asked twice. ``/compact --now [instructions]`` compacts without
review (the plain REPL's path); ``--rebuild`` re-summarizes from the primary events of the whole lineage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neotask_tui.commands.intents import ReviewCompaction
from neotask_tui.commands.registry import CommandResult, command, split_args
from neotask_tui.engine.compaction.guard import CHANGES, LEFT_OUT
from neotask_tui.providers.base import Usage

if TYPE_CHECKING:
    from neotask_tui.engine.compaction.compactor import CompactionResult
    from neotask_tui.engine.facade import Engine


def _flags(args: str) -> tuple[set[str], str]:
    """Leading ``--flags`` and the rest (the instructions, verbatim)."""
    flags: set[str] = set()
    rest = args.strip()
    while rest.startswith("--"):
        word, _, rest = rest.partition(" ")
        flags.add(word)
        rest = rest.strip()
    return flags, rest


def summary_call(usage: dict[str, Any], cost: float | None) -> str:
    """What the summarizer's calls cost, as counted in the session's totals."""
    u = Usage.from_dict(usage)
    label = "reported" if u.reported else "estimated"
    price = "" if cost is None else f", ${cost:.4f}"
    return f"model call in {u.prompt_tokens:,} out {u.output_tokens:,} ({label}{price}; in the session's totals)"


def describe(res: CompactionResult) -> str:
    """Markdown for a compaction result or preview (summary, repairs, dropped items)."""
    d = res.to_dict()
    head = "Compaction preview (nothing changed yet)" if d.get("preview") else "Compacted"
    meta = f"{d['tokens_before']:,} → {d['tokens_after']:,} tokens · summary by {d['model']}"
    if d.get("fallback"):
        meta += f" (fallback: {d.get('fallback_reason')})"
    elif d.get("summarizer_note"):
        meta += f" ({d['summarizer_note']})"
    if d.get("rebuild"):
        meta += " · rebuilt from primary events"
    if d.get("usage"):
        meta += f" · {summary_call(d['usage'], d.get('cost_usd'))}"
    out = [f"**{head}** · {meta}", "", d["summary"] or "_(empty summary)_"]
    restored = [r for r in d.get("repaired") or [] if r["kind"] not in CHANGES]
    changed = [r for r in d.get("repaired") or [] if r["kind"] in CHANGES]
    if restored:
        out += ["", "**Guard restored** (the draft had lost these; they are in the summary above):"]
        out += [f"- {r['kind']}: {r['text']}" for r in restored]
    if changed:
        out += ["", "**Guard changed** (what the draft said, and what the guard did with it):"]
        out += [f"- {r['kind']}: {r['text']} — {CHANGES[r['kind']]}" for r in changed]
    uncited = [i for i in d.get("issues") or [] if i.startswith("uncited line attributed to")]
    if uncited:
        out += ["", "**The model cited no events for these lines** (their sources were guessed from the words "
                "they share with the messages; check them before applying):"]
        out += [f"- {i.removeprefix('uncited line ')}" for i in uncited]
    if d.get("dropped"):
        out += ["", "**Not in the summary** (still in the archived transcript):"]
        out += [f"- {r['kind']}: {r['text']}" + (f" — {LEFT_OUT[r['kind']]}" if r["kind"] in LEFT_OUT else "")
                for r in d["dropped"]]
    if d.get("candidates"):
        n = len(d["candidates"])
        out += ["", f"{n} memory candidate(s) would be proposed to the inbox when it is applied (nothing written)."
                if d.get("preview") else f"{n} memory candidate(s) proposed to the inbox (each once)."]
    return "\n".join(out)


@command("compact", "/compact [--now] [--rebuild] [instructions]",
         "Summarize older messages into a cited summary (review first; --now to skip the review)")
async def _compact(engine: Engine, key: str, args: str) -> CommandResult:
    flags, instructions = _flags(args)
    unknown = flags - {"--now", "--rebuild", "--preview"}
    if unknown:
        return CommandResult(text=f"unknown option {sorted(unknown)[0]} — usage: "
                             "/compact [--now] [--rebuild] [instructions]", error=True)
    rebuild = "--rebuild" in flags
    now = "--now" in flags and "--preview" not in flags
    res: CompactionResult = await engine.compact(key, instructions=instructions or None, preview=not now,
                                                 rebuild=rebuild)
    data = res.to_dict()
    if now:
        return CommandResult(text=describe(res), data=data)
    data["apply"] = {"instructions": instructions or None, "rebuild": rebuild}
    hint = "Accept in the review dialog, or run `/compact --now` to compact without review."
    text = f"{describe(res)}\n\n{hint}"
    return CommandResult(text=text, data=data, intent=ReviewCompaction(res, instructions or None))


async def apply_review(engine: Engine, key: str, summary: str, instructions: str | None = None) -> CommandResult:
    """Commit a reviewed (possibly edited) summary from the preview; the guard still checks it."""
    res = await engine.compact(key, instructions=instructions, summary_text=summary)
    return CommandResult(text=describe(res), data=res.to_dict())


@command("undo-compact", "/undo-compact", "Undo the last compaction (the previous session becomes current)")
async def _undo(engine: Engine, key: str, args: str) -> CommandResult:
    if split_args(args):
        return CommandResult(text="usage: /undo-compact", error=True)
    res = await engine.undo_compact(key)
    carried = f"; {len(res.carried_event_ids)} newer event(s) carried over" if res.carried_event_ids else ""
    return CommandResult(
        text=f"Compaction undone: session {res.restored_session_id} is current again{carried}.",
        data=res.to_dict(),
    )
