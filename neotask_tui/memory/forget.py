"""Forgetting: cut text out of a memory file (or tombstone a transcript chunk) and verify it is gone."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from neotask_tui.memory import lexical
from neotask_tui.memory.chunking import Block, parse_blocks
from neotask_tui.memory.types import ForgetReceipt
from neotask_tui.storage.atomic import atomic_write_text

if TYPE_CHECKING:
    from neotask_tui.memory.service import MemoryService


def _pick_blocks(svc: MemoryService, blocks: list[Block], query: str, by_id: bool) -> list[Block]:
    """All blocks of the chunk when forgetting by id; the single best-matching one for a query."""
    if by_id or len(blocks) <= 1:
        return blocks
    import numpy as np

    texts = ["\n".join(t for _, t in b.lines) for b in blocks]
    vecs = svc.embedder.embed(texts)
    q = svc.embedder.embed_query(query)
    qterms = set(lexical.terms(query))
    scores = []
    for text, v in zip(texts, vecs, strict=True):
        terms = set(lexical.terms(text))
        overlap = len(qterms & terms) / max(1, len(qterms))
        scores.append(0.5 * float(v @ q) + 0.5 * overlap)
    return [blocks[int(np.argmax(scores))]]


def forget_chunk(svc: MemoryService, agent_id: str, row: dict[str, Any], query: str) -> ForgetReceipt:
    """Remove ``row``'s text from its source and the index, then check a search cannot find it.

    Args:
        svc: The memory service (its lock is held by the caller).
        agent_id: The agent.
        row: The chunk row to forget.
        query: What the user asked to forget (the id itself, or a query).

    Returns:
        The receipt.
    """
    by_id = query.strip() == row["id"]
    if row["source"] == "transcript":
        tomb = svc.workspace(agent_id) / ".memory-tombstones.json"
        hashes = sorted(svc._tombstones(agent_id) | {row["hash"]})
        atomic_write_text(tomb, json.dumps(hashes))
        svc.store.delete_ids([row["id"]])
        verified = svc._verify_gone(agent_id, query if not by_id else row["text"][:200], [row["text"]])
        return ForgetReceipt([row["text"]], [row["id"]], row["path"], (0, 0), True, verified)

    rel = row["path"]
    target = svc._resolve(agent_id, rel)
    text = svc._read(agent_id, rel)  # never through a link or a FIFO; a Latin-1 file is saved as UTF-8
    lo, hi = int(row["own_start"]) or int(row["line_start"]), int(row["line_end"])
    inside = [
        b for b in parse_blocks(text)
        if b.kind != "heading" and b.lines[0][0] >= lo and b.lines[-1][0] <= hi
    ]
    if not inside:  # a block straddling the chunk boundary (split paragraph): take what overlaps
        inside = [
            b for b in parse_blocks(text)
            if b.kind != "heading" and b.lines[-1][0] >= lo and b.lines[0][0] <= hi
        ]
    chosen = _pick_blocks(svc, inside, query, by_id)
    drop = {n for b in chosen for n, _ in b.lines}
    lines = text.splitlines()
    kept = [ln for n, ln in enumerate(lines, 1) if n not in drop]
    new = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n") + "\n"
    removed = ["\n".join(t for _, t in b.lines) for b in chosen]
    old_ids = [
        r["id"] for r in svc.store.rows_where(
            f"agent_id = '{agent_id.replace(chr(39), chr(39) * 2)}' AND path = '{rel.replace(chr(39), chr(39) * 2)}'",
            ["id"],
        )
    ]
    atomic_write_text(target, new)
    svc._sync(agent_id, only=[rel])
    snap = svc.store.snapshot()
    gone = [i for i in old_ids if i not in snap.index]
    verified = svc._verify_gone(agent_id, query if not by_id else removed[0][:200], removed)
    span = (min(drop), max(drop)) if drop else (0, 0)
    return ForgetReceipt(removed, gone, rel, span, False, verified)
