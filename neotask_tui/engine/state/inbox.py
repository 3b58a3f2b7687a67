"""The promotion inbox: long-term memory only by consent.

Candidates come from the classifier (explicit "always ..." statements, project rules, stated facts),
from the model (``propose_memory`` tool) and from compaction's memory flush. Each candidate is
redacted, checked against the lecture's criteria one by one, and stored in
``workspace_dir(agent_id)/inbox.json`` (rewritten atomically). Nothing reaches ``MEMORY.md`` until
the user accepts it; a rejected text is remembered (normalised) and never proposed again.

This module is synchronous file logic; :class:`~neotask_tui.engine.state.promotion.Promotion` calls it off
the event loop and performs the memory write on accept.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from neotask_tui.engine.language.classifier import (
    no_store_marker,
    permanence_markers,
    temporary_markers,
)
from neotask_tui.memory.index.chunking import format_entry
from neotask_tui.paths import linked_part, workspace_dir
from neotask_tui.storage.atomic import atomic_write_text
from neotask_tui.text.clean import clean_text
from neotask_tui.text.secrets import API_KEY_MARK, find_secrets, redact_secrets
from neotask_tui.text.trees import map_strings

LONG_TERM_SCOPES = ("agent", "workspace", "project", "user", "team", "org")
"""Scopes a long-term memory entry may have (session/chat are not long-term)."""
CRITERIA = (
    "explicit_permanence", "future_useful", "clear_scope", "no_temporary_marker",
    "allowed_to_store", "has_source", "editable",
)
"""The lecture's promotion criteria, in the order they are shown."""
_ONE_OFF = re.compile(
    r"\b(?:let'?s|let us)\s+(?:go with|pick|choose|select|take)\b"
    r"|\b(?:выберем|выбираем|возьм[её]м|берём|берем)\b",
    re.I,
)


_redact_str = functools.lru_cache(maxsize=8192)(redact_secrets)


def redact_tree(v: Any) -> Any:
    """``v`` with secrets redacted from every string in it, keys included (lists and mappings too)."""
    return map_strings(v, _redact_str)


class InboxError(ValueError):
    """A bad inbox request (unknown number, not pending, not allowed); the message is one line."""


@dataclass(slots=True)
class Candidate:
    """A proposed long-term memory, before it is stored.

    Attributes:
        text: The proposed memory text (redacted when stored).
        scope: Proposed scope (one of :data:`LONG_TERM_SCOPES`, or ``session`` if unclear).
        reason: Why it was proposed.
        origin: ``classifier``, ``model`` or ``compaction``.
        source_ids: Transcript event ids it came from.
        session_id: Session the source events belong to.
        key: Session key.
        scope_ref: What the scope is bound to (project name...), if any.
        explicit: The statement explicitly marks permanence (an "always"/"for this project" rule or
            a stated fact), as judged by the producer; permanence markers in the text also count.
        created_at: ISO timestamp.
        contains_secret: The producer already redacted a credential out of ``text``.
    """

    text: str
    scope: str = "user"
    reason: str = ""
    origin: str = "classifier"
    source_ids: list[int] = field(default_factory=list)
    session_id: str | None = None
    key: str | None = None
    scope_ref: str | None = None
    explicit: bool = False
    created_at: str = ""
    contains_secret: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return asdict(self)


@dataclass(slots=True)
class InboxEntry:
    """A stored candidate with its number, criteria and status.

    Attributes:
        n: Stable number shown to the user (``/inbox accept N``).
        text: Redacted text.
        scope: Proposed (or accepted) scope.
        scope_ref: Scope binding (project name...), if any.
        reason: Why it was proposed.
        origin: Who proposed it.
        source_ids: Transcript event ids.
        session_id: Session of the source events.
        key: Session key.
        created_at: When proposed.
        criteria: ``{name: {"ok": bool, "why": str}}`` for each of :data:`CRITERIA`.
        status: ``pending``, ``accepted``, ``rejected`` or ``withdrawn`` (its message was edited away).
        decided_at: When accepted/rejected.
        edited: The user edited the text.
        memory: Where it was written on accept (``MEMORY.md`` / memory service).
        redacted: Secrets were removed from the text.
    """

    n: int
    text: str
    scope: str
    scope_ref: str | None
    reason: str
    origin: str
    source_ids: list[int]
    session_id: str | None
    key: str | None
    created_at: str
    criteria: dict[str, dict[str, Any]]
    status: str = "pending"
    decided_at: str | None = None
    edited: bool = False
    memory: str | None = None
    redacted: bool = False

    @property
    def failed(self) -> list[str]:
        """Names of the criteria that are not met."""
        return [k for k in CRITERIA if not self.criteria.get(k, {}).get("ok")]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (also what ``--json`` prints)."""
        d = asdict(self)
        d["failed"] = self.failed
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> InboxEntry:
        """Inverse of :meth:`to_dict` (unknown keys ignored)."""
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in names})


def normalize(text: str) -> str:
    """The form used to recognise "the same text" (case, spacing and end punctuation ignored)."""
    return re.sub(r"\s+", " ", text).strip().strip(" .!…;,").casefold()


def check_criteria(
    text: str, *, scope: str, explicit: bool, source_ids: list[int], created_at: str, origin: str,
    contained_secret: bool,
) -> dict[str, dict[str, Any]]:
    """Check the lecture's promotion criteria one by one.

    Args:
        text: Candidate text (already redacted).
        scope: Proposed scope.
        explicit: The producer judged the statement explicitly lasting.
        source_ids: Source event ids.
        created_at: Timestamp.
        origin: Who proposed it.
        contained_secret: The original text held a credential.

    Returns:
        ``{criterion: {"ok": bool, "why": str}}`` for each of :data:`CRITERIA`.
    """
    perm = permanence_markers(text)
    temp = temporary_markers(text)
    no_store = no_store_marker(text)
    out: dict[str, dict[str, Any]] = {}
    if perm or explicit:
        why = f"marker: {', '.join(perm)}" if perm else "stated as a lasting rule/fact"
        out["explicit_permanence"] = {"ok": True, "why": why}
    else:
        out["explicit_permanence"] = {"ok": False, "why": "no explicit sign that this is lasting"}
    one_off = bool(_ONE_OFF.search(text))
    out["future_useful"] = {
        "ok": not one_off and len(text.split()) >= 2,
        "why": "a one-off action in the current workflow" if one_off else "a rule/preference/fact",
    }
    out["clear_scope"] = {
        "ok": scope in LONG_TERM_SCOPES,
        "why": f"scope: {scope}" if scope in LONG_TERM_SCOPES else f"scope {scope!r} is not long-term",
    }
    out["no_temporary_marker"] = {
        "ok": not temp, "why": f"temporary marker: {', '.join(temp)}" if temp else "none found",
    }
    if contained_secret or find_secrets(text):
        out["allowed_to_store"] = {"ok": False, "why": "contained a credential (redacted); never stored"}
    elif no_store:
        out["allowed_to_store"] = {"ok": False, "why": "the user asked not to remember this"}
    else:
        out["allowed_to_store"] = {"ok": True, "why": "no secrets, no do-not-store request"}
    ids = ", ".join(f"e:{i}" for i in source_ids)
    has_src = bool(created_at) and (bool(source_ids) or origin in ("model", "user"))
    out["has_source"] = {
        "ok": has_src,
        "why": f"{origin}: {ids or 'no event ids'} at {created_at or '?'}",
    }
    out["editable"] = {"ok": True, "why": "editable/deletable in the inbox and in MEMORY.md"}
    return out


class Inbox:
    """One agent's promotion inbox file."""

    def __init__(self, agent_id: str, path: Path | None = None) -> None:
        """Open the inbox of ``agent_id`` (nothing is read or created until used)."""
        self.agent_id = agent_id
        self.path = path or workspace_dir(agent_id) / "inbox.json"

    def _linked(self) -> str | None:
        """Why the inbox may not be used: its workspace (or a folder above it in the data dir) is a
        symbolic link, which would read and write another agent's (or any) folder."""
        link = linked_part(self.path)
        return None if link is None else f"{link} is a symbolic link; the inbox is not read or written through it"

    def _load(self) -> dict[str, Any]:
        if self._linked() is not None or not self.path.exists():
            return {"version": 1, "next_n": 1, "entries": [], "rejected": []}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InboxError(f"{self.path}: unreadable inbox ({e}); fix or move it aside") from None
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            raise InboxError(f"{self.path}: not an inbox file")
        data.setdefault("rejected", [])
        data.setdefault("next_n", 1 + max((int(e.get("n", 0)) for e in data["entries"]), default=0))
        return data

    def _save(self, data: dict[str, Any]) -> None:
        # The store boundary: every string of every entry (reason, scope_ref, criteria, ...) is
        # redacted, not only the text, whoever filled it in (the model's tool call included).
        why = self._linked()
        if why is not None:
            raise InboxError(why)
        data = {**data, "entries": redact_tree(data["entries"]), "rejected": redact_tree(data["rejected"])}
        atomic_write_text(self.path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")

    def entries(self, status: str | None = None) -> list[InboxEntry]:
        """All entries (or only those with ``status``), by number."""
        out = [InboxEntry.from_dict(e) for e in self._load()["entries"]]
        return [e for e in out if status is None or e.status == status]

    def get(self, n: int) -> InboxEntry:
        """Entry number ``n``.

        Raises:
            InboxError: if there is no such entry.
        """
        for e in self.entries():
            if e.n == n:
                return e
        raise InboxError(f"no inbox entry #{n}")

    def add(self, cand: Candidate) -> InboxEntry | None:
        """Store a candidate (redacted, with criteria checked).

        Returns:
            The new entry, or ``None`` when the same text was rejected before, is already pending
            (its sources are merged) or already accepted.
        """
        # a configured API key was masked where it was typed, before the message was stored
        secrets = bool(find_secrets(cand.text)) or cand.contains_secret or API_KEY_MARK in cand.text
        text = redact_secrets(clean_text(cand.text)).strip()  # a model's JSON may hold a lone surrogate
        if not text:
            return None
        data = self._load()
        norm = normalize(text)
        if norm in data["rejected"] or redact_secrets(norm) in data["rejected"]:
            return None
        for raw in data["entries"]:
            if normalize(raw["text"]) == norm and raw["status"] in ("pending", "accepted"):
                if raw["status"] == "pending":
                    merged = sorted(set(raw.get("source_ids") or []) | set(cand.source_ids))
                    if merged != raw.get("source_ids"):
                        raw["source_ids"] = merged
                        self._save(data)
                return None
        scope = cand.scope if cand.scope in (*LONG_TERM_SCOPES, "session", "chat") else "user"
        entry = InboxEntry(
            n=int(data["next_n"]), text=text, scope=scope, scope_ref=cand.scope_ref,
            reason=redact_secrets(cand.reason) if isinstance(cand.reason, str) else cand.reason,
            origin=cand.origin, source_ids=list(cand.source_ids), session_id=cand.session_id, key=cand.key,
            created_at=cand.created_at,
            criteria=check_criteria(
                text, scope=scope, explicit=cand.explicit, source_ids=cand.source_ids,
                created_at=cand.created_at, origin=cand.origin, contained_secret=secrets,
            ),
            redacted=secrets,
        )
        entry = InboxEntry.from_dict(redact_tree(entry.to_dict()))
        data["next_n"] = entry.n + 1
        data["entries"].append(entry.to_dict())
        self._save(data)
        return entry

    def _update(self, n: int, fn: Callable[[InboxEntry, dict[str, Any]], None]) -> InboxEntry:
        data = self._load()
        for i, raw in enumerate(data["entries"]):
            if int(raw.get("n", 0)) == n:
                entry = InboxEntry.from_dict(raw)
                fn(entry, data)
                data["entries"][i] = entry.to_dict()
                self._save(data)
                return entry
        raise InboxError(f"no inbox entry #{n}")

    def check_acceptable(self, n: int, scope: str | None = None) -> InboxEntry:
        """Validate that entry ``n`` may be accepted (with ``scope`` if given); return it.

        Raises:
            InboxError: unknown/decided entry, secrets, or a scope that is not long-term.
        """
        e = self.get(n)
        if e.status != "pending":
            raise InboxError(f"inbox entry #{n} is already {e.status}")
        if find_secrets(e.text):  # an entry written before the redactor knew this shape
            e.criteria["allowed_to_store"] = {"ok": False, "why": "contains a credential; never stored"}
        if not e.criteria.get("allowed_to_store", {}).get("ok"):
            raise InboxError(
                f"inbox entry #{n} may not be stored: {e.criteria['allowed_to_store']['why']} "
                "(edit it first)"
            )
        final = scope or e.scope
        if final not in LONG_TERM_SCOPES:
            raise InboxError(f"scope {final!r} is not long-term; use --scope {'|'.join(LONG_TERM_SCOPES)}")
        return e

    def mark_accepted(self, n: int, *, scope: str | None, at: str, memory: str) -> InboxEntry:
        """Record that entry ``n`` was written to long-term memory."""

        def fn(e: InboxEntry, _data: dict[str, Any]) -> None:
            if scope:
                e.scope = scope
                e.criteria["clear_scope"] = {"ok": True, "why": f"scope: {scope} (chosen by the user)"}
            e.status, e.decided_at, e.memory = "accepted", at, memory

        return self._update(n, fn)

    def edit(self, n: int, text: str) -> InboxEntry:
        """Replace the text of pending entry ``n`` (redacted; criteria re-checked).

        Raises:
            InboxError: unknown or decided entry, or empty text.
        """
        new = clean_text(text).strip()  # as a message: a lone surrogate (an undecodable byte) is U+FFFD
        if not new:
            raise InboxError("the new text is empty")

        def fn(e: InboxEntry, _data: dict[str, Any]) -> None:
            if e.status != "pending":
                raise InboxError(f"inbox entry #{n} is already {e.status}")
            secrets = bool(find_secrets(new)) or API_KEY_MARK in new  # the key masked where you typed it
            e.text = redact_secrets(new)
            e.edited, e.redacted = True, bool(secrets)
            e.criteria = check_criteria(
                e.text, scope=e.scope, explicit=True, source_ids=e.source_ids, created_at=e.created_at,
                origin=e.origin, contained_secret=bool(secrets),
            )
            e.criteria["explicit_permanence"]["why"] = "edited and kept by the user"

        return self._update(n, fn)

    def withdraw(self, session_id: str, source_ids: Collection[int], at: str) -> list[InboxEntry]:
        """Withdraw the pending entries proposed only from these messages of ``session_id`` (the
        user replaced them with ``/edit``): the words they came from were taken back. Unlike a
        rejection, the same text may be proposed again by a later message."""
        gone = set(source_ids)
        data = self._load()
        out: list[InboxEntry] = []
        for i, raw in enumerate(data["entries"]):
            srcs = set(raw.get("source_ids") or [])
            if raw.get("status") != "pending" or raw.get("session_id") != session_id or not srcs or srcs - gone:
                continue
            entry = InboxEntry.from_dict(raw)
            entry.status, entry.decided_at = "withdrawn", at
            data["entries"][i] = entry.to_dict()
            out.append(entry)
        if out:
            self._save(data)
        return out

    def reject(self, n: int, at: str) -> InboxEntry:
        """Reject pending entry ``n``; its text is never proposed again."""

        def fn(e: InboxEntry, data: dict[str, Any]) -> None:
            if e.status != "pending":
                raise InboxError(f"inbox entry #{n} is already {e.status}")
            e.status, e.decided_at = "rejected", at
            norm = normalize(e.text)
            if norm not in data["rejected"]:
                data["rejected"].append(norm)

        return self._update(n, fn)


_UNSAFE_TAG = re.compile(r"[\s\]]+")


def memory_scope(scope: str, scope_ref: str | None, agent_id: str) -> str | None:
    """The scope tag of a long-term entry: ``user``, ``project:acme``... (``None`` = the agent's own)."""
    if scope == "agent":
        return None
    if scope in ("project", "workspace") and scope_ref:
        ref = _UNSAFE_TAG.sub("_", scope_ref)
        return f"{scope}:{ref}"
    return scope


def memory_entry(text: str, *, when: datetime, scope: str | None, source: str = "inbox") -> str:
    """A ``MEMORY.md`` entry in the memory service's format (``- 2026-03-02 12:00 [inbox scope=user] TEXT``).

    Used only when the memory service is unavailable, so its indexer reads the entry like its own
    once memory is enabled again (the memory package's own :func:`format_entry` writes it).
    """
    return format_entry(text, when=when, source=source, scope=scope)
