"""Session-state and inbox slash commands.

``/state``, ``/state set KEY VALUE [--for 2h] [--until-event NAME] [--scope S]``, ``/state clear KEY``,
``/state audit``, ``/goal TEXT``, ``/pref TEXT [--for 2h|--until-event NAME]``, ``/event NAME``,
``/done``, ``/inbox``, ``/inbox accept N [--scope S]``, ``/inbox edit N TEXT``, ``/inbox reject N``.

Free text is taken verbatim (apostrophes and quotes stay as typed); only the known ``--flags`` are
cut out of it. Bad input returns a one-line usage error, never an exception.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from neotask_tui.commands.intents import OpenInbox
from neotask_tui.commands.registry import CommandResult, command, usage_error
from neotask_tui.engine.state.inbox import InboxEntry, InboxError
from neotask_tui.engine.state.manager import StateError, StateManager, StateView
from neotask_tui.engine.state.model import StateEntry

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine

_FLAG = re.compile(r"(?:^|\s)--(for|until-event|scope|ttl)(?:=|\s+)(\S+)")
_BARE_FLAG = re.compile(r"(?:^|\s)--(for|until-event|scope|ttl)(?:=|\s|$)")


def _opts(text: str) -> tuple[str, dict[str, str]]:
    """Cut the known ``--flag VALUE`` pairs out of ``text``; return (rest, flags).

    Raises:
        StateError: (one line) for a known flag without its value (``x --until-event``,
            ``--for --scope s``, ``--for=``): never stored as part of the text.
    """
    found: dict[str, str] = {}
    for m in _FLAG.finditer(text):
        if m.group(2).startswith("--"):
            raise StateError(f"--{m.group(1)} needs a value")
        found[m.group(1)] = m.group(2)
    rest = _FLAG.sub(" ", text)
    if bare := _BARE_FLAG.search(rest):
        raise StateError(f"--{bare.group(1)} needs a value")
    return re.sub(r"\s+", " ", rest).strip(), found


def _unquote(value: str) -> str:
    """A value given as one quoted string (``'do not use Redis'``, ``"x y"``) is stored without the
    quotes, as a shell would read it; quotes inside a value (``don't``, ``say "hi" twice``) stay."""
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"" and v[0] not in v[1:-1]:
        return v[1:-1].strip() or v
    return v


def _state(engine: Engine) -> StateManager:
    """The engine's session-state part (every engine has one)."""
    return engine.state


def _fail(e: Exception) -> CommandResult:
    return CommandResult(text=str(e).splitlines()[0], error=True)


def _val(v: Any) -> str:
    return v if isinstance(v, str) else repr(v)


def local_time(t: datetime) -> str:
    """``t`` on this machine's clock with its zone ("2026-12-07 00:00 JST"): a preference "for today"
    ends at local midnight and says so (it printed local digits with a "Z", 9 hours off in Tokyo)."""
    here = t.astimezone()
    return f"{here.strftime('%Y-%m-%d %H:%M')} {here.tzname() or here.strftime('%z')}"


def local_stamp(ts: str | None) -> str:
    """A stored timestamp (ISO 8601; one without an offset is UTC) as :func:`local_time`, for the
    audit (``/state audit``, ``neotask state --audit``), which printed it in UTC beside ``/state``'s
    local times; ``-`` for none, and text that is no timestamp as it is."""
    if not ts:
        return "-"
    try:
        t = datetime.fromisoformat(ts)
    except ValueError:
        return ts
    return local_time(t if t.tzinfo else t.replace(tzinfo=UTC))


def describe_audit(rows: list[dict[str, Any]]) -> str:
    """Markdown for ``/state audit``: each expired entry, why and when (local time)."""
    lines = [f"- ~~**{a['field']}**: {_val(a['value'])}~~ — {a['why']} at {local_stamp(a['when'])}" for a in rows]
    return "\n".join(lines) or "nothing has expired in this session"


def describe_entry(e: StateEntry) -> str:
    """One Markdown line for an entry (struck through when expired)."""
    hints = [e.source, *([e.carried_note] if e.carried_note else [])]
    if e.scope != "session":
        hints.append(f"{e.scope}{' ' + e.scope_ref if e.scope_ref else ''}")
    if e.until_event:
        hints.append(f"until {e.until_event}")
    if e.expires_at:
        hints.append(f"until {local_time(e.expires_at)}")
    body = f"**{e.field}**: {_val(e.value)}"
    if not e.active:
        return f"- ~~{body}~~ _({e.expired_reason})_"
    return f"- {body} _({', '.join(hints)})_"


def describe_view(view: StateView) -> str:
    """Markdown for ``/state``."""
    # A blank line after the heading: Markdown would join "nothing active" onto the heading's line.
    lines = [f"**Session state** · `{view.key}`", ""]
    lines += [describe_entry(e) for e in view.active] or ["_nothing active_"]
    if view.expired:
        # Struck-through entries under their own heading, so they never read as active (an empty
        # "nothing active" followed by entries looked like a contradiction).
        lines += ["", f"_expired or cleared ({len(view.expired)})_"]
        lines += [describe_entry(e) for e in view.expired]
    if view.session_expires_at:
        lines.append(f"Session state expires at {local_time(view.session_expires_at)}")
    elif view.session_expiry and view.session_expiry.get("after_event"):
        spec = view.session_expiry
        lines.append(f"Session state expires {spec['delay']} after `{spec['after_event']}`")
    return "\n".join(lines)


def describe_inbox(entries: list[InboxEntry]) -> str:
    """Markdown for ``/inbox``."""
    if not entries:
        return "the inbox is empty — nothing is waiting for your approval"
    waiting = sum(e.status == "pending" for e in entries)
    decided = len(entries) - waiting  # `inbox list --all`: each decided entry says what became of it
    head = f"**Inbox** · {waiting} waiting for approval" + (f", {decided} decided" if decided else "")
    lines = [head, ""]  # a list not at 1 starts after a blank line
    for e in entries:
        src = ", ".join(f"e:{i}" for i in e.source_ids) or "-"
        verdict = "all criteria met" if not e.failed else "; ".join(
            f"✗ {k}: {e.criteria[k]['why']}" for k in e.failed)
        if e.status != "pending":
            verdict = f"**{e.status}**" + (f" {e.decided_at[:16].replace('T', ' ')}" if e.decided_at else "")
        # "#N", never a Markdown ordered list: a renderer renumbers one (#1, #3, #4 showed as 1, 2, 3,
        # and `inbox accept 3` then stored the candidate shown as 2)
        lines.append(f"- **#{e.n}** {e.text} — _{e.scope}, {e.origin} {src}; {verdict}_")
    lines += ["", "`/inbox accept N [--scope S]` · `/inbox edit N TEXT` · `/inbox reject N`"]
    return "\n".join(lines)


@command("state", "/state [set KEY VALUE [--for 2h] [--until-event E] [--scope S] | clear KEY | audit]",
         "Show or change the structured session state")
async def _state_cmd(engine: Engine, key: str, args: str) -> CommandResult:
    st = _state(engine)
    sub, _, rest = args.strip().partition(" ")
    try:
        if not sub:
            view = st.get(key)
            return CommandResult(text=describe_view(view), data=view.to_dict())
        if sub == "set":
            body, flags = _opts(rest)
            field, _, value = body.partition(" ")
            unknown = set(flags) - {"for", "ttl", "until-event", "scope"}
            if not field or not value.strip() or unknown:
                return usage_error("state", "give a key and a value")
            e = await st.set(key, field, _unquote(value), ttl=flags.get("for") or flags.get("ttl"),
                             until_event=flags.get("until-event"), scope=flags.get("scope"))
            return CommandResult(text=f"{field} = {_val(e.value)}", data=e.to_dict())
        if sub == "clear":
            field = rest.strip()
            if not field or " " in field:
                return usage_error("state", "give one key to clear")
            n = await st.clear(key, field)
            noun = "entry" if n == 1 else "entries"
            return CommandResult(text=f"cleared {field} ({n} {noun}; kept in the audit log)")
        if sub == "audit":
            rows = st.audit(key)
            return CommandResult(text=describe_audit(rows), data=rows)
    except StateError as e:
        return _fail(e)
    return usage_error("state", f"unknown subcommand {sub[:20]!r}")


@command("goal", "/goal TEXT", "Set the current goal (ends with /done)")
async def _goal(engine: Engine, key: str, args: str) -> CommandResult:
    if not args.strip():
        return usage_error("goal", "the goal is empty")
    try:
        e = await _state(engine).set_goal(key, _unquote(args))
    except StateError as err:
        return _fail(err)
    return CommandResult(text=f"goal: {e.value}", data=e.to_dict())


@command("pref", "/pref TEXT [--for 2h|--until-event NAME]",
         "Add a preference (until it expires or /reset; /new carries it)")
async def _pref(engine: Engine, key: str, args: str) -> CommandResult:
    try:
        text, flags = _opts(args)
    except StateError as err:
        return _fail(err)
    if not text or set(flags) - {"for", "ttl", "until-event"}:
        return usage_error("pref", "the preference is empty" if not text else "unknown option")
    try:
        e = await _state(engine).add_pref(key, _unquote(text), for_=flags.get("for") or flags.get("ttl"),
                                          until_event=flags.get("until-event"))
    except StateError as err:
        return _fail(err)
    until = f" for {e.ttl}" if e.ttl else f" until {e.until_event}" if e.until_event else " for this session"
    return CommandResult(text=f"preference{until}: {e.value}", data=e.to_dict())


@command("event", "/event NAME", "Fire a workflow event (e.g. checkout_paid); entries bound to it expire")
async def _event(engine: Engine, key: str, args: str) -> CommandResult:
    name = args.strip()
    if not name or " " in name:
        return usage_error("event", "give one event name")
    try:
        n = await _state(engine).fire_event(key, name)
    except StateError as err:
        return _fail(err)
    return CommandResult(text=f"event {name}: {n} entr{'y' if n == 1 else 'ies'} expired")


@command("done", "/done", "End the current workflow: the goal is resolved, task state expires")
async def _done(engine: Engine, key: str, args: str) -> CommandResult:
    if args.strip():
        return usage_error("done", "no arguments expected")
    n = await _state(engine).done(key)
    return CommandResult(text=f"workflow done: {n} entr{'y' if n == 1 else 'ies'} expired (see /state audit)")


def _number(s: str) -> int | None:
    s = s.strip().lstrip("#")
    # ASCII digits only: str.isdigit() is true for "²" and "٥" (int() then fails or reads 5).
    return int(s) if s.isascii() and s.isdigit() and len(s) <= 18 else None


@command("inbox", "/inbox [accept N [--scope S] | edit N TEXT | reject N]",
         "Review memories proposed for long-term storage (nothing is saved without you)")
async def _inbox(engine: Engine, key: str, args: str) -> CommandResult:
    st = _state(engine)
    agent = engine.parse_key(key).agent_id
    sub, _, rest = args.strip().partition(" ")
    try:
        if not sub or sub == "list":
            entries = await st.inbox_list(agent)
            return CommandResult(text=describe_inbox(entries), data=[e.to_dict() for e in entries],
                                 intent=OpenInbox())
        if sub == "accept":
            body, flags = _opts(rest)
            n = _number(body)
            if n is None or set(flags) - {"scope"}:
                return usage_error("inbox", "accept needs an entry number")
            e = await st.inbox_accept(agent, n, scope=flags.get("scope"))
            return CommandResult(text=f"#{n} saved to long-term memory ({e.scope}; {e.memory})",
                                 data=e.to_dict())
        if sub == "edit":
            num, _, text = rest.strip().partition(" ")
            n = _number(num)
            if n is None or not text.strip():
                return usage_error("inbox", "edit needs an entry number and the new text")
            e = await st.inbox_edit(agent, n, text.strip())
            return CommandResult(text=f"#{n} is now: {e.text}", data=e.to_dict())
        if sub == "reject":
            n = _number(rest)
            if n is None:
                return usage_error("inbox", "reject needs an entry number")
            e = await st.inbox_reject(agent, n)
            return CommandResult(text=f"#{n} rejected; it will not be proposed again", data=e.to_dict())
    except (InboxError, StateError) as err:
        return _fail(err)
    return usage_error("inbox", f"unknown subcommand {sub[:20]!r}")
