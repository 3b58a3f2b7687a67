"""Session keys: ``agent:<agent_id>:<channel>:<chat_id>``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from neotask_tui.errors import UserError

_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
ID_RULE = "must be 1-64 chars of letters, digits, . _ @ + -, start with a letter or digit and hold no '..'"
"""The id rule as every refusal says it: ``..`` is refused too (ids become file and folder names)."""


@dataclass(frozen=True, slots=True)
class SessionKey:
    """A parsed, validated session key."""

    agent_id: str
    channel: str
    chat_id: str

    def __str__(self) -> str:
        return f"agent:{self.agent_id}:{self.channel}:{self.chat_id}"


def parse_key(key: str) -> SessionKey:
    """Parse and validate a session key.

    Raises:
        UserError: with a one-line explanation when the key is malformed.
    """
    if not isinstance(key, str):
        raise UserError("session key must be a string like agent:main:tui:default")
    parts = key.split(":")
    if len(parts) != 4 or parts[0] != "agent":
        raise UserError(f"bad session key {key[:80]!r}: expected agent:<agent_id>:<channel>:<chat_id>")
    for name, value in zip(("agent_id", "channel", "chat_id"), parts[1:], strict=True):
        if not _PART.fullmatch(value) or ".." in value:
            raise UserError(f"bad session key {key[:80]!r}: {name} {ID_RULE}")
    return SessionKey(parts[1], parts[2], parts[3])


def validate_key(key: str) -> str:
    """Return the canonical key string, raising :class:`UserError` if invalid."""
    return str(parse_key(key))


def validate_agent_id(agent_id: str) -> str:
    """Return ``agent_id`` if it may appear in a session key, else raise :class:`UserError`."""
    if not isinstance(agent_id, str) or not _PART.fullmatch(agent_id) or ".." in agent_id:
        raise UserError(f"bad agent id {str(agent_id)[:80]!r}: {ID_RULE}")
    return agent_id


def validate_session_id(session_id: str) -> str:
    """Return ``session_id`` if it is a session id (never a path), else raise :class:`UserError`.

    Session ids look like ``20261129-225432-3f2a9c1b``; letters, digits, ``-`` and ``_`` only, so
    ``../archive/<id>`` or ``/etc/passwd`` can never reach a path.
    """
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        raise UserError(f"bad session id {str(session_id)[:80]!r}: expected one like 20261129-225432-3f2a9c1b")
    return session_id


def header_agent(header: Mapping[str, object]) -> str | None:
    """The agent a session header's ``key`` names (``agent:<agent>:…``), else ``None``. Lineage
    (export, context, recall) follows ``parent_session_id`` only while this stays the same: one
    agent never sees another's sessions."""
    key = header.get("key")
    if not isinstance(key, str):
        return None
    parts = key.split(":")
    return parts[1] if len(parts) == 4 and parts[0] == "agent" and parts[1] else None
