"""``neotask state`` and ``neotask inbox``.

- ``neotask state [KEY] [--audit] [--json]`` prints the key's session state (read-only): active
  entries and recently expired ones, or with ``--audit`` everything that expired, why and when.
- ``neotask inbox list [--all] [--json]``, ``neotask inbox accept N [--scope S]``,
  ``neotask inbox reject N``, ``neotask inbox edit N TEXT`` review the promotion inbox of the key's
  agent (``--agent`` picks another). Only ``accept`` writes to long-term memory.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from neotask_tui.cli.core import _console, _key, open_engine
from neotask_tui.cli.output import print_json

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine
    from neotask_tui.engine.state.manager import StateManager


def _manager(engine: Engine) -> StateManager:
    """The engine's session-state part (every engine has one)."""
    return engine.state


def cmd_state(args: argparse.Namespace) -> int:
    """Run ``neotask state`` (read-only)."""
    engine = open_engine(readonly=True)
    try:
        key = _key(args, engine)
        st = _manager(engine)
        if engine.store.get(key) is None:
            out: dict[str, Any] = {"key": key, "session_id": None, "active": [], "expired": [],
                                   "session_expires_at": None}
            if args.audit:
                out = {"key": key, "session_id": None, "audit": []}
            if args.json:
                print_json(out)
            else:
                _console().print(f"no session for {key}")
            return 0
        if args.audit:
            rows = st.audit(key)
            if args.json:
                print_json({"key": key, "session_id": engine.current_record(key).session_id, "audit": rows})
                return 0
            from rich.table import Table

            from neotask_tui.commands.state import local_stamp

            t = Table("field", "value", "set", "source", "expired", "why", title=f"state audit · {key}")
            for a in rows:
                t.add_row(a["field"], str(a["value"]), local_stamp(a["set_at"]), a["source"], local_stamp(a["when"]),
                          a["why"])
            _console().print(t if rows else "nothing has expired in this session")
            return 0
        view = st.get(key)
        if args.json:
            print_json(view.to_dict())
            return 0
        from neotask_tui.commands.state import describe_view
        from neotask_tui.text.console import markdown

        _console().print(markdown(describe_view(view)))
        return 0
    finally:
        engine.close()


def _agent(args: argparse.Namespace, engine: Engine) -> str:
    if args.agent is not None:
        from neotask_tui.storage.keys import validate_agent_id

        return validate_agent_id(args.agent)
    return str(engine.parse_key(_key(args, engine)).agent_id)


def cmd_inbox(args: argparse.Namespace) -> int:
    """Run ``neotask inbox``."""
    from neotask_tui.errors import UserError

    action = args.action
    if action != "list" and args.n is None:
        raise UserError(f"inbox {action} needs an entry number")
    if action == "edit" and not (args.text and " ".join(args.text).strip()):
        raise UserError("inbox edit needs the new text")
    engine = open_engine(readonly=action == "list")

    async def run() -> Any:
        st = _manager(engine)
        agent = _agent(args, engine)
        engine.migrate_workspace(agent)  # a writer moves a pre-injective folder first (no-op when read-only)
        if action == "list":
            return await st.inbox_list(agent, status=None if args.all else "pending")
        if action == "accept":
            return await st.inbox_accept(agent, args.n, scope=args.scope)
        if action == "reject":
            return await st.inbox_reject(agent, args.n)
        return await st.inbox_edit(agent, args.n, " ".join(args.text))

    from neotask_tui.engine.state.inbox import InboxError

    try:
        res = asyncio.run(run())
    except InboxError as e:
        raise UserError(str(e)) from None
    finally:
        if action == "list":
            engine.close()
        else:
            asyncio.run(engine.aclose())
    if args.json:
        print_json([e.to_dict() for e in res] if action == "list" else res.to_dict())
        return 0
    if action == "list":
        from neotask_tui.commands.state import describe_inbox
        from neotask_tui.text.console import markdown

        _console().print(markdown(describe_inbox(res)))
    else:
        verb = {"accept": "saved to long-term memory", "reject": "rejected", "edit": "edited"}[action]
        _console().print(f"#{res.n} {verb}: {res.text}")  # printed literally (no markup)
    return 0


def register(sub: Any) -> None:
    """Add ``state`` and ``inbox``."""
    from neotask_tui.config import int_arg

    p = sub.add_parser("state", help="show a session's structured state (or its audit log)")
    p.add_argument("key", nargs="?", help="session key (default from config)")
    p.add_argument("--audit", action="store_true", help="everything that expired, why and when")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_state)

    p = sub.add_parser("inbox", help="review memories proposed for long-term storage")
    p.add_argument("action", choices=["list", "accept", "reject", "edit"], nargs="?", default="list")
    p.add_argument("n", nargs="?", type=int_arg(1, 1_000_000_000), help="entry number")
    p.add_argument("text", nargs="*", help="new text (edit)")
    p.add_argument("--scope", default=None, help="long-term scope on accept (user, project, team, org...)")
    p.add_argument("--all", action="store_true", help="list accepted and rejected entries too")
    p.add_argument("--agent", default=None, help="agent id (default: the session key's agent)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_inbox)
