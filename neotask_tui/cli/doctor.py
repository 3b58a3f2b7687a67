"""``neotask doctor``: integrity check of the data dir, with optional repair."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neotask_tui import paths
from neotask_tui.storage.history import history_problem
from neotask_tui.storage.index import SessionRecord, load_index, rebuild_records
from neotask_tui.storage.lock import DataLock
from neotask_tui.storage.transcript import _already_quarantined, read_header, read_transcript

if TYPE_CHECKING:
    from neotask_tui.config import Settings


def run_doctor(*, fix: bool = False) -> dict[str, Any]:
    """Check the data dir is usable, index vs transcripts, torn/corrupt lines, orphans, transcripts
    and the input history that are links, config and provider choice.

    With ``fix`` the data-dir lock is taken and problems are repaired: torn tails quarantined and
    cut, the index rebuilt, orphaned live transcripts archived, loose modes under the data dir made
    0700/0600 (a hard link is only reported). Loose modes are listed under ``permissions`` and
    hard-linked transcripts under ``links`` (warnings: the integrity verdict ``clean`` does not
    depend on them), memory files not indexed under ``memory_skipped``. ``manual`` lists every line
    of ``problems``, ``permissions``, ``links`` and ``memory_skipped`` that ``--fix`` does not change
    (you do), and ``fixable`` counts the ones it would change. Lines keep exact values (a control
    character in a name is shown inert by the text report, escaped by ``--json``); a secret in a
    name below the data dir is redacted.
    """
    problems: list[str] = []
    manual: list[str] = []  # the lines (problems and warnings) --fix does not change
    fixed: list[str] = []
    unusable = {"data_dir": str(paths.data_dir()), "provider": "unknown (no usable data dir)", "sessions": 0,
                "fixed": [], "quarantined": [], "clean": False, "memory_skipped": [], "permissions": [],
                "links": [], "usable": False, "fixable": 0}
    # A read-only doctor may run beside the holder: it writes nothing. --fix probes the data dir by
    # writing to it, so only once it holds the lock (beside a holder it exits 3 having written nothing).
    home = paths.home_problem(probe=False)
    if home is not None and not paths.data_dir().is_dir():  # nothing below can work (or be repaired)
        return {**unusable, "problems": [home], "manual": [home]}
    if home is not None:  # it exists but cannot be written (a read-only mount, no permission): the
        fix = False       # read-only checks still run, with that as their first problem; nothing is repaired
    loose = paths.private_modes()  # before the lock: a writer taking it tightens them
    bad_lock = _lock_problem()
    if bad_lock is not None:  # its mode is not --fix's to change: --fix refuses that lock like every writer
        lock_path = str(paths.lock_file().parent.resolve() / paths.lock_file().name)
        loose = [m for m in loose if m.path != lock_path and not m.path.startswith(lock_path + os.sep)]
    lock = DataLock()
    if fix:
        lock.acquire()
        home = paths.home_problem(probe=True)
        if home is not None:
            lock.release()
            return {**unusable, "problems": [home], "manual": [home]}
        left = paths.private_modes()
        still = {m.line for m in left}
        fixed.extend(f"{m.shown(_redacted)} (now private)" for m in loose if m.line not in still)
        loose = left
    if home is not None:
        problems.append(home)
        manual.append(home)
    try:
        try:
            from neotask_tui.config import load_settings

            settings = load_settings()
            problems.extend(_settings_problems(settings))
            manual.extend(problems)  # a setting is yours to change
            provider = "?"
            try:
                from neotask_tui.providers.selection import choose_provider

                c = choose_provider(settings)
                provider = f"{c.name} · {c.model} — {c.reason}"
            except Exception as e:  # a config problem listed below is not said twice
                provider = "unavailable (see the config problem below)" if any(
                    str(e) in p for p in problems) else f"unavailable: {e}"
        except Exception as e:
            problems.append(f"config: {e}")
            manual.append(problems[-1])
            provider = "unknown (config error)"
        refused = paths.quarantine_problem()
        if refused is not None:  # reported, not repaired: what the link points to is not ours to touch
            problems.append(refused.split(";")[0] + "; nothing can be quarantined until it is a folder")
            manual.append(problems[-1])
        if bad_lock is not None:  # every write is refused until it is removed: yours, not --fix's
            problems.append(bad_lock)
            manual.append(bad_lock)
        search_link = _search_index_link()
        if search_link is not None:  # reported, not repaired: what the link points to is not ours to remove
            problems.append(search_link)
            manual.append(search_link)
        history = history_problem()
        if history is not None:  # the app and the REPL run without saving it; the link is yours to replace
            problems.append(history)
            manual.append(history)
        sdir = paths.sessions_dir()
        index_link = paths.linked_part(paths.sessions_index())  # sessions/ or sessions.json: never read through
        if index_link is not None:  # reported, not repaired; every session is refused until it is a file
            problems.append(f"{index_link} is a symbolic link; Neotask does not follow links inside its data dir, "
                            "so no session can be read or written (replace the link with the file)")
            manual.append(problems[-1])
            records: dict[str, SessionRecord] = {}
        else:
            loaded = load_index(repair=fix)
            if loaded.problem:
                (fixed if fix else problems).append(loaded.problem)
            records = loaded.records
        live = {p.stem: p for p in sdir.glob("*.jsonl")} if sdir.is_dir() and paths.linked_part(sdir) is None else {}
        linked, hard = _linked_transcripts(live)
        problems.extend(linked.values())
        manual.extend(linked.values())
        manual.extend(hard)
        for key, rec in records.items():
            if rec.session_id in linked:  # reported above; never read through the link
                continue
            if rec.session_id not in live:
                problems.append(f"{key}: current session {rec.session_id} has no live transcript")
                continue
            h = read_header(live[rec.session_id])
            if h is None or h.data.get("key") != key:
                problems.append(f"{key}: transcript header does not match the index")
        # --- fault-suite fixes (tests/faults/test_corruption.py):
        # 1. repair the index *before* looking for orphans: otherwise the transcript a broken record
        #    should point to is archived as an "orphan" and the key loses its current session;
        # 2. a corrupt middle line already copied to quarantine is reported as known, not as a problem,
        #    so `doctor` is clean after `doctor --fix` (the append-only file keeps the line; loads skip it).
        broken = [p for p in problems if "no live transcript" in p or "does not match" in p]
        if fix and broken:
            from neotask_tui.storage.index import save_index

            records = rebuild_records()
            save_index(records)
            fixed.append(f"rebuilt sessions.json from transcripts ({len(records)} sessions)")
            problems = [p for p in problems if p not in broken]
        quarantined: list[str] = []
        for sid, p in sorted(live.items()):
            if sid in linked:
                continue
            lt = read_transcript(p, repair=False)
            known = _already_quarantined(p)
            for iss in lt.issues:
                msg = f"{p.name} line {iss.line_no}: {iss.reason}"
                if not iss.tail and iss.line_no in known:
                    quarantined.append(msg + " (copy in quarantine)")
                    continue
                if refused is not None:  # kept in place until quarantine/ is a folder again: --fix cannot
                    problems.append(msg)
                    manual.append(msg)
                elif fix:
                    read_transcript(p, repair=True)
                    fixed.append(msg + " (quarantined)")
                else:
                    problems.append(msg)
            if index_link is None and not any(r.session_id == sid for r in records.values()):
                msg = f"orphaned live transcript {p.name}"
                if fix:
                    from neotask_tui.storage.store import SessionStore

                    SessionStore().archive_transcript(sid)
                    fixed.append(msg + " (archived)")
                else:
                    problems.append(msg)
        # --- end of fault-suite fixes
        foreign = _foreign_parents({sid: p for sid, p in live.items() if sid not in linked})
        problems.extend(foreign)
        manual.extend(foreign)
    finally:
        lock.release()
    clean = not problems  # the integrity verdict: the warnings below (modes, links, skipped memory) leave it
    permissions = [m.shown(_redacted) for m in loose]
    manual.extend(line for m, line in zip(loose, permissions, strict=True) if not m.fixable)
    skipped = _memory_skipped()
    manual.extend(skipped)  # the user's own files: --fix never changes them
    fixable = sum(p not in manual for p in problems) + sum(m.fixable for m in loose)
    return {"data_dir": str(paths.data_dir()), "provider": provider, "sessions": len(records),
            "problems": problems, "fixed": fixed, "quarantined": quarantined, "clean": clean,
            "memory_skipped": skipped, "permissions": permissions, "links": hard,
            "manual": manual, "fixable": 0 if fix else fixable, "usable": True,
            "memory_workspace": memory_workspace()}


def _lock_problem() -> str | None:
    """The lock file when it is something every writer refuses (a symbolic link, a folder, a FIFO,
    a file with a second name), as one line; ``None`` when it is missing or a regular file."""
    import stat

    p = paths.lock_file()
    try:
        st = os.lstat(p)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
        return None
    kind = ("a symbolic link" if stat.S_ISLNK(st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode)
            else "a hard link (a file with a second name)" if stat.S_ISREG(st.st_mode) else "a FIFO"
            if stat.S_ISFIFO(st.st_mode) else "not a regular file")
    return (f"the lock file {p} is {kind}: every command that writes refuses it until it is removed "
            "(no neotask process uses it as it is)")


def _search_index_link() -> str | None:
    """The search index (its folder, its file or its ``-wal``/``-shm``) when it is a symbolic link,
    as one line: it is never opened through one, so search stops until the link is removed."""
    index = paths.search_index()
    for p in (index, Path(str(index) + "-wal"), Path(str(index) + "-shm")):
        link = paths.linked_part(p)
        if link is not None:
            return (f"{link} is a symbolic link; Neotask does not follow links inside its data dir, so search "
                    "cannot use the index (remove the link: the index is rebuilt from the transcripts)")
    return None


def _redacted(path: str) -> str:
    """``path`` as a ``doctor`` line shows it: a secret in a name below the data dir redacted (the
    one rule, ``text.secrets.redact_path``, as in the lines about skipped memory files), name by
    name so the folders above it still say where it is; control characters kept (``--json`` keeps
    exact values, the text shows them inert)."""
    from neotask_tui.text.secrets import redact_path

    root = str(paths.data_dir().resolve())  # as paths.private_modes names what it finds
    if not path.startswith(root + os.sep):
        return path
    return root + os.sep + redact_path(path[len(root) + 1:])  # name by name, then whole (redact_path)


def _linked_transcripts(live: dict[str, Path]) -> tuple[dict[str, str], list[str]]:
    """Transcripts that are links: symbolic links (by session id; never followed, so the session
    cannot be read or written until it is a file again) and hard links (lines: a file with another
    name, which may be changed through it outside Neotask). Reported, not repaired: what a link
    points to, or the other name, is not ours to change."""
    symbolic: dict[str, str] = {}
    hard: list[str] = []
    adir = paths.archive_dir()
    files = [*live.items()]
    if adir.is_dir() and paths.linked_part(adir) is None:
        files += [(p.stem, p) for p in sorted(adir.glob("*.jsonl"))]
    for sid, p in files:
        if p.is_symlink():
            symbolic.setdefault(sid, f"{p} is a symbolic link; Neotask does not follow links inside its data dir, "
                                     "so this session is not read or written (replace the link with the file)")
        else:
            note = paths.hard_link_note(p)
            if note is not None:
                hard.append(note)
    return symbolic, hard


def _foreign_parents(live: dict[str, Path]) -> list[str]:
    """Transcripts whose header names another agent's session as its parent (reported, not
    repaired: the header is the first line of an append-only file). Lineage stops there (one agent
    never sees another's sessions), so such a header is damage or tampering. Headers only: cheap."""
    from neotask_tui.storage.keys import header_agent

    adir = paths.archive_dir()
    files = dict(live)
    if adir.is_dir():
        files.update({p.stem: p for p in adir.glob("*.jsonl") if p.stem not in files and not p.is_symlink()})
    heads = {sid: ev.data for sid, p in files.items() if (ev := read_header(p)) is not None}
    out: list[str] = []
    for sid, head in sorted(heads.items()):
        parent = head.get("parent_session_id")
        if not parent or str(parent) not in heads:
            continue
        mine, theirs = header_agent(head), header_agent(heads[str(parent)])
        if mine != theirs:
            out.append(f"{files[sid].name}: parent session {parent} belongs to agent {theirs}, not {mine} "
                       "(lineage stops there)")
    return out


def memory_workspace() -> str:
    """The default agent's memory workspace (``MEMORY.md``, ``memory/``, the inbox), for the report."""
    from neotask_tui.config import load_settings
    from neotask_tui.storage.keys import parse_key

    try:
        agent = parse_key(load_settings().general.default_key).agent_id
    except Exception:  # a bad config or key is reported elsewhere; the default agent's folder is still right
        agent = "main"
    return str(paths.workspace_dir(agent))


def _settings_problems(settings: Settings) -> list[str]:
    """Settings that load but that a command would refuse (or the app replace) when used."""
    from neotask_tui.config import unknown_env
    from neotask_tui.errors import UserError
    from neotask_tui.providers.selection import model_setting_problem
    from neotask_tui.storage.keys import parse_key, validate_agent_id
    from neotask_tui.tui.keymap import keymap_problems
    from neotask_tui.tui.themes import theme_problem

    out: list[str] = list(unknown_env())
    try:
        validate_agent_id(settings.general.agent)
    except UserError as e:
        out.append(f"config: general.agent: {e}")
    try:
        parse_key(settings.general.default_key)
    except UserError as e:
        out.append(f"config: general.default_key: {e}")
    model = model_setting_problem(settings)  # an API key typed as the model: where, never the value
    if model:
        out.append(f"config: {model}")
    bad_theme = theme_problem(settings.ui.theme)
    if bad_theme:
        out.append(f"config: {bad_theme}")
    if settings.ui.bindings:
        out.extend(f"config: {p}" for p in keymap_problems(settings.ui.bindings))
    return out


def _memory_skipped() -> list[str]:
    """Entries of every agent's workspace that memory does not index (links, FIFOs, too big,
    binary, too deep), one line each (a secret in a name redacted, control characters kept);
    reported, not repaired (they are the user's files: each needs manual action)."""
    from neotask_tui.config import load_settings
    from neotask_tui.memory.files import problems

    try:
        cap = load_settings().memory.max_file_bytes
    except Exception:
        cap = 1024 * 1024
    root = paths.agents_dir()
    out: list[str] = []
    for ws in sorted(root.iterdir()) if root.is_dir() else []:
        if ws.is_symlink():
            out.append(f"{ws.name} is not indexed: the workspace is a symbolic link (links are not followed)")
        elif ws.is_dir():
            out.extend(f"{ws.name}/{s.line()}" for s in problems(ws, cap))
    return out
