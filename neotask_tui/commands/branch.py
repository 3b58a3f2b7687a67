"""Branch and regenerate: ``/fork [e:N]``, ``/retry``, ``/edit [TEXT]``.

``/fork`` runs here; ``/retry`` and ``/edit TEXT`` return a :class:`~neotask_tui.commands.intents.Regenerate`
intent, because the reply streams like any turn's and each front end streams turns its own way.
``/edit`` without text returns :class:`~neotask_tui.commands.intents.EditLast`: the front end puts
your last message into the prompt for editing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from neotask_tui.commands.intents import EditLast, Regenerate
from neotask_tui.commands.registry import CommandResult, command, split_args, usage_error
from neotask_tui.errors import UserError

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine

_EVENT_ID = re.compile(r"(?:e:)?([0-9]{1,12})", re.IGNORECASE)


def parse_event_id(text: str) -> int:
    """``e:12`` or ``12`` → 12.

    Raises:
        UserError: anything else.
    """
    m = _EVENT_ID.fullmatch(text.strip())
    if m is None:
        raise UserError(f"not an event id: {text[:40]!r} (write e:N, as the transcript shows it)")
    return int(m.group(1))


@command("fork", "/fork [e:N]",
         "Branch the conversation at message e:N (default: the last one); the other branch is archived")
async def _fork(engine: Engine, key: str, args: str) -> CommandResult:
    a = split_args(args)
    if len(a) > 1:
        return usage_error("fork", "one event id")
    at = parse_event_id(a[0]) if a else None
    old = engine.current_record(key, create=False).session_id
    rec = await engine.fork_session(key, at)
    text = (f"forked at e:{rec.fork_at}: new session {rec.session_id} (branch {old} archived; "
            "the sessions browser shows the tree, restore switches back)")
    return CommandResult(text=text, data={"session_id": rec.session_id, "parent_session_id": rec.parent_session_id,
                                          "fork_at": rec.fork_at, "archived": old})


@command("retry", "/retry", "Ask the model again for the last reply (the old one stays, marked superseded)")
async def _retry(engine: Engine, key: str, args: str) -> CommandResult:
    if args:
        return usage_error("retry", "no arguments expected")
    if engine.last_user_message(key) is None:
        return CommandResult(text="/retry: nothing to regenerate: no message of yours in this session", error=True)
    return CommandResult(intent=Regenerate(None))


@command("edit", "/edit [TEXT]",
         "Edit your last message and regenerate (no TEXT: put it in the prompt); the old turn stays, marked")
async def _edit(engine: Engine, key: str, args: str) -> CommandResult:
    last = engine.last_user_message(key)
    if last is None:
        return CommandResult(text="/edit: nothing to edit: no message of yours in this session", error=True)
    if not args.strip():
        return CommandResult(text=last.content, data={"event_id": last.id}, intent=EditLast(last.content, last.id))
    return CommandResult(intent=Regenerate(args))
