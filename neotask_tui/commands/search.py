"""``/search``: find messages in every session (live, archived, reset, compacted) by content.

The search itself is :meth:`neotask_tui.engine.facade.Engine.search`; this module parses the
command's flags, and holds how a hit is labelled (session, date, speaker, ``e:N``) so the app, the
plain REPL and the CLI say the same thing.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

from neotask_tui import tuning
from neotask_tui.commands.intents import ShowSearch
from neotask_tui.commands.registry import CommandResult, command, usage_error
from neotask_tui.config import parse_int, shown_value
from neotask_tui.storage.search import MARK_CLOSE, MARK_OPEN, SearchHit, SearchResult

if TYPE_CHECKING:
    from neotask_tui.engine.facade import Engine

_FLAG = re.compile(r"(?:^|\s)--(agent|since|limit)(?:=(\S*)|\s+(\S+)|\s*$)")
"""A flag and its value; ``--since=`` or a last ``--since`` has the value ``""`` (an error, never no filter)."""
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~])")


def parse_search_args(args: str) -> tuple[str, dict[str, str]]:
    """``QUERY [--agent A] [--since DATE] [--limit N]`` → (the query as typed, quotes kept; flags)."""
    flags: dict[str, str] = {}
    for m in _FLAG.finditer(args):
        flags[m.group(1)] = m.group(2) or m.group(3) or ""
    return _FLAG.sub(" ", args).strip(), flags


def parse_limit(text: str | None) -> int | None:
    """``--limit`` as an int in 1..:data:`tuning.SEARCH_LIMIT_MAX` (None when not given), read as
    every typed integer is (:func:`~neotask_tui.config.parse_int`: ``5.0`` is 5).

    Raises:
        ValueError: for anything else (an inline error / a CLI user error).
    """
    if text is None:
        return None
    try:  # the shared reading of a typed integer: digits and a point ("5.0" is 5), no exponent
        n = parse_int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= tuning.SEARCH_LIMIT_MAX:
        raise ValueError(f"--limit takes a whole number from 1 to {tuning.SEARCH_LIMIT_MAX}, not {shown_value(text)}")
    return n


def local_time(ts: str) -> str:
    """A stored UTC timestamp as local ``YYYY-MM-DD HH:MM``."""
    try:
        d = datetime.fromisoformat(ts if "+" in ts[10:] or ts.endswith("Z") else ts + "+00:00")
    except ValueError:
        return ts[:16].replace("T", " ")
    return d.astimezone().strftime("%Y-%m-%d %H:%M")


def hit_label(hit: SearchHit) -> str:
    """``key · session (archived) · date · speaker · e:N`` (plain text; show it inert)."""
    where = f"{hit.session_id} (archived)" if hit.archived else hit.session_id
    return " · ".join(x for x in (hit.key or "?", where, local_time(hit.ts), hit.role, hit.ref) if x)


def md_escape(text: str) -> str:
    """``text`` as literal Markdown (every ASCII punctuation mark that could be syntax escaped)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def hit_markdown(hit: SearchHit) -> str:
    """The matching line as Markdown with each match in bold."""
    out: list[str] = []
    for i, part in enumerate(re.split(f"[{MARK_OPEN}{MARK_CLOSE}]", hit.line)):
        if not part:
            continue
        # The split alternates outside / inside a match (the line always starts outside).
        out.append(f"**{md_escape(part)}**" if i % 2 else md_escape(part))
    return "".join(out)


def result_markdown(res: SearchResult) -> str:
    """A whole result as Markdown: one bullet per hit, its label, then the matching line."""
    if not res.hits:
        text = f"no message matches {md_escape(res.query)}"
    else:
        n = len(res.hits)
        head = f"{n}{'+' if res.more else ''} message{'s' if n != 1 or res.more else ''} match {md_escape(res.query)}"
        rows = [f"- `{hit_label(h).replace('`', chr(39))}`  \n  {hit_markdown(h)}" for h in res.hits]
        text = head + ":\n\n" + "\n".join(rows)
        if res.more:
            text += "\n\n(more matched: narrow the query, or `--limit N`)"
    if res.notices:
        text += "\n\n" + "\n".join(f"*{md_escape(n)}*" for n in res.notices)
    return text


@command("search", "/search QUERY [--agent A] [--since D] [--limit N]",
         'Find messages in every session, archived too ("a phrase", word*)')
async def _search(engine: Engine, key: str, args: str) -> CommandResult:
    query, flags = parse_search_args(args)
    if not query:
        return usage_error("search", "what to search for")
    res = await engine.search(query, agent=flags.get("agent"), since=flags.get("since"),
                              limit=parse_limit(flags.get("limit")))
    return CommandResult(text=result_markdown(res), data=res.to_dict(), intent=ShowSearch(res))
