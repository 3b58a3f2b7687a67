"""Every filesystem location Neotask uses, in one place.

Data lives under ``platformdirs.user_data_dir("neotask")`` and configuration under
``platformdirs.user_config_dir("neotask")``. ``NEOTASK_HOME`` overrides both: data goes to
``$NEOTASK_HOME/data`` and config to ``$NEOTASK_HOME/config`` (tests always set it).

Nothing here touches the disk at import time; directories are created lazily by :func:`ensure_dir`
with mode 0700, and files we create get mode 0600 (see :mod:`neotask_tui.storage.atomic`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from neotask_tui.errors import DataDirError

APP = "neotask"
DIR_MODE = 0o700
FILE_MODE = 0o600


def _home() -> Path | None:
    h = os.environ.get("NEOTASK_HOME")
    return Path(h).expanduser() if h else None


def data_dir() -> Path:
    """Root of all data (sessions, transcripts, memory, index)."""
    h = _home()
    return h / "data" if h else Path(platformdirs.user_data_dir(APP))


def config_dir() -> Path:
    """Directory holding ``config.toml``, user themes and model/price overrides."""
    h = _home()
    return h / "config" if h else Path(platformdirs.user_config_dir(APP))


def config_file() -> Path:
    """The user's ``config.toml``."""
    return config_dir() / "config.toml"


def user_themes_dir() -> Path:
    """User theme files (``*.toml``) overriding built-ins by name."""
    return config_dir() / "themes"


def sessions_dir() -> Path:
    """Live transcripts (``<session_id>.jsonl``) and ``sessions.json``."""
    return data_dir() / "sessions"


def sessions_index() -> Path:
    """The ``sessions.json`` index."""
    return sessions_dir() / "sessions.json"


def transcript_path(session_id: str) -> Path:
    """Transcript of a live (non-archived) session."""
    return sessions_dir() / f"{session_id}.jsonl"


def archive_dir() -> Path:
    """Archived transcripts: compacted, reset, replaced and cleaned-up sessions."""
    return data_dir() / "archive"


def archived_transcript_path(session_id: str) -> Path:
    """Transcript of an archived session."""
    return archive_dir() / f"{session_id}.jsonl"


def exports_dir() -> Path:
    """Where ``/export`` writes by default, and the clipboard's fallback file."""
    return data_dir() / "exports"


def clipboard_file() -> Path:
    """The copy of the last ``/copy`` when no clipboard tool is found (a terminal may ignore OSC 52)."""
    return exports_dir() / "clipboard.txt"


def quarantine_dir() -> Path:
    """Corrupt lines cut out of transcripts, and corrupt index files, kept for inspection."""
    return data_dir() / "quarantine"


def lock_file() -> Path:
    """The data-dir lock held by the one writing process."""
    return data_dir() / "neotask.lock"


def logs_dir() -> Path:
    """Log files (never contain API keys)."""
    return data_dir() / "logs"


def history_file() -> Path:
    """Prompt history shared by the TUI and the plain REPL."""
    return data_dir() / "history"


_PLAIN = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789-")
_FOLDER = re.compile(r"(?:[a-z0-9-]|%[0-9a-f]{2})+")
_LEGACY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
NAME_MAX = 255
"""Longest folder name (bytes) an agent id may map to; every common filesystem allows 255."""


def agent_folder(agent_id: str) -> str:
    """The folder name of an agent's workspace: injective, reversible, safe on any filesystem.

    Lowercase ASCII letters, digits and ``-`` are kept as they are (so ``main`` stays ``main``);
    every other UTF-8 byte — uppercase, ``.``, ``_``, ``@``, ``+``, spaces, non-ASCII — becomes
    ``%xx`` in lowercase hex. The result uses only ``[a-z0-9%-]``, so two ids never share a folder,
    not even on a case-insensitive or Unicode-normalising filesystem, and it is never ``.``/``..``.

    Raises:
        ValueError: for an empty id, or one whose folder name would exceed :data:`NAME_MAX` bytes.
    """
    if not agent_id:
        raise ValueError("an agent id cannot be empty")
    out = "".join(chr(b) if b in _PLAIN else f"%{b:02x}" for b in agent_id.encode("utf-8", "surrogatepass"))
    if len(out) > NAME_MAX:
        raise ValueError(f"agent id {agent_id[:40]!r}… is too long for a folder name")
    return out


def agent_id_from_folder(folder: str) -> str:
    """The agent id whose workspace folder is ``folder`` (inverse of :func:`agent_folder`).

    Raises:
        ValueError: when ``folder`` is not a name :func:`agent_folder` produces.
    """
    if not _FOLDER.fullmatch(folder):
        raise ValueError(f"{folder!r} is not an agent folder name")
    raw = bytearray()
    i = 0
    while i < len(folder):
        if folder[i] == "%":
            raw.append(int(folder[i + 1:i + 3], 16))
            i += 3
        else:
            raw.append(ord(folder[i]))
            i += 1
    agent = bytes(raw).decode("utf-8", "surrogatepass")  # invalid UTF-8 raises (a ValueError)
    if agent_folder(agent) != folder:  # e.g. "%61" for a plain "a": not canonical
        raise ValueError(f"{folder!r} is not an agent folder name")
    return agent


def legacy_agent_folder(agent_id: str) -> str:
    """The folder name releases before the injective mapping used (lossy: ``alice.`` was ``alice``)."""
    return _LEGACY_UNSAFE.sub("_", agent_id).strip(".") or "_"


def agents_dir() -> Path:
    """Parent of every agent workspace."""
    return data_dir() / "agents"


def workspace_dir(agent_id: str) -> Path:
    """The agent's workspace: ``MEMORY.md``, ``memory/`` and the inbox live here (pure: no disk access)."""
    return agents_dir() / agent_folder(agent_id)


def legacy_workspace(agent_id: str) -> Path | None:
    """The pre-injective folder that :func:`migrate_workspace` would move for ``agent_id``, if any.

    Only a folder that no id maps to today qualifies: ``agents/alice`` is plain ``alice``'s own
    folder, so ``alice.`` never takes it.
    """
    old = legacy_agent_folder(agent_id)
    if old == agent_folder(agent_id) or _FOLDER.fullmatch(old):
        return None
    return agents_dir() / old


def migrate_workspace(agent_id: str) -> str | None:
    """Move the agent's workspace from its pre-injective folder once; return a notice if moved.

    Before the injective mapping, ``My.Agent`` lived in ``agents/My.Agent`` and ``team@x`` in
    ``agents/team_x``. When that folder exists and the new one does not, it is renamed (atomic, on
    the same filesystem) so nobody's memory disappears. Ids that differed only in the lost
    characters shared that folder; whichever is used first takes it, and the notice says so.
    """
    old = legacy_workspace(agent_id)
    if old is None:
        return None
    new = workspace_dir(agent_id)
    try:
        # Listed by its exact name: on a case-insensitive disk agents/Main *is* agents/main.
        if old.name not in os.listdir(old.parent) or old.is_symlink() or not old.is_dir():
            return None
        if os.path.lexists(new):
            return None
        os.rename(old, new)
    except OSError:
        return None  # another process moved it first, or it cannot move: the old folder stays intact
    return (f"moved the workspace of agent {agent_id!r} from {old} to {new} (agent ids now map to "
            f"folders one to one; ids that differed only in characters like . _ @ + or case shared "
            f"{old.name} before)")


def search_dir() -> Path:
    """The full-text search index over every transcript (``index.sqlite3``; rebuildable from them)."""
    return data_dir() / "search"


def search_index() -> Path:
    """The SQLite FTS5 database of :mod:`neotask_tui.storage.search`."""
    return search_dir() / "index.sqlite3"


def memory_db_dir() -> Path:
    """Default LanceDB database location (the URI is configurable)."""
    return data_dir() / "lancedb"


def memory_reported_file() -> Path:
    """The memory files already reported as skipped, by agent (each is told once, not once per process)."""
    return data_dir() / "memory-reported.json"


def memory_transcripts_file() -> Path:
    """The archived sessions already indexed as the memory ``transcript`` source (and when)."""
    return data_dir() / "memory-transcripts.json"


def model_cache_dir() -> Path:
    """Where user-configured extra models (downloaded when online) are cached."""
    return data_dir() / "models"


def home_problem(*, probe: bool = True) -> str | None:
    """Why the data dir cannot be used, as one line (``None`` when it is a directory or can be made).

    Checks what a writer needs: every existing ancestor a directory, and the data dir creatable
    and writable (probed by creating it, never by permission bits: root ignores those). With
    ``probe=False`` (a read-only check, e.g. ``doctor`` without ``--fix``, which may run beside
    the lock holder) nothing is created: the nearest existing ancestor must be a directory and
    ``os.access`` must allow writing there, which misses only what root's access check does.
    """
    d = data_dir()
    try:
        if probe:
            ensure_dir(d)
            fd, probe_file = tempfile.mkstemp(prefix=".probe-", dir=d)
            os.close(fd)
            os.unlink(probe_file)
        else:
            p = d
            while not os.path.lexists(p) and p != p.parent:
                p = p.parent
            if not p.is_dir():
                raise NotADirectoryError(20, "Not a directory")
            if not os.access(p, os.W_OK | os.X_OK):
                if _read_only_fs(p):
                    raise OSError(errno.EROFS, os.strerror(errno.EROFS))
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as e:
        return home_error(e)
    return None


def _read_only_fs(path: Path) -> bool:
    """Whether ``path`` is on a file system mounted read-only."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def home_error(e: OSError) -> str:
    """One line naming ``NEOTASK_HOME`` (or the data dir) and why it cannot be used (``e``)."""
    d = data_dir()
    where = f"NEOTASK_HOME={os.environ['NEOTASK_HOME']}" if _home() else f"the data dir {d}"
    p = d
    while not p.exists() and p != p.parent:
        p = p.parent
    what = f"{p} is not a directory" if p.exists() and not p.is_dir() else (e.strerror or str(e))
    return f"{where}: cannot use {d} ({what})"


def ensure_data_dir(path: Path) -> Path:
    """:func:`ensure_dir` for a directory under the data dir, with a one-line user error on failure.

    Raises:
        DataDirError: naming ``NEOTASK_HOME`` (or the data dir) and the reason.
    """
    try:
        ensure_dir(path)
    except OSError as e:
        raise DataDirError(home_problem() or home_error(e)) from None
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` (mode 0600, parents 0700) if missing and make it 0600 if it is not; return it.

    For files that other code appends to by name (prompt-toolkit's history), so they are never
    created with the umask's 0644.
    """
    ensure_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


PRIVATE_WALK_DEPTH = 64
"""Folders below the data dir that :func:`private_modes` walks (deeper ones are reported)."""


def _open_dir(top: int, parts: list[str]) -> int:
    """A descriptor of the folder ``parts`` below ``top``, no component followed if it is a link."""
    flags = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.dup(top)
    try:
        for part in parts:
            nfd = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


@dataclass(frozen=True, slots=True)
class LooseMode:
    """An entry below the data dir whose mode is looser than 0700/0600.

    Attributes:
        line: What it is, e.g. ``"<data>/agents/main/memory is 0o777, want 0o700"`` (starts with ``path``).
        fixable: Whether ``neotask doctor --fix`` changes it (a folder, a file with one name, a FIFO);
            a hard link, a socket or device, a folder too deep or a change that failed needs you.
        path: The entry (``line`` starts with it), for a caller that shows it otherwise.
    """

    line: str
    fixable: bool
    path: str

    def __str__(self) -> str:
        return self.line

    def shown(self, name: Callable[[str], str]) -> str:
        """:attr:`line` with its path shown as ``name`` shows it (``doctor``: a secret in a name redacted)."""
        return name(self.path) + self.line[len(self.path):]


def private_modes(root: Path | None = None, *, fix: bool = False) -> list[LooseMode]:
    """Entries below the data dir (``root``) whose mode is not 0700 (folders) / 0600 (files).

    Folders and regular files are checked without following a link (a symbolic link is neither
    reported nor changed, nor walked into: every folder is opened component by component with
    ``O_NOFOLLOW``); a FIFO is checked as a file is (opened without blocking to change it), a socket
    or a device only reported when others may use it (opening one could do anything). With ``fix``
    each one is chmod-ed through a descriptor, so nothing outside the data dir is ever touched; a regular file with
    more than one name (a hard link) is reported but never changed, since its other name may be
    anywhere. A data dir that is itself a symbolic link is followed (the user put it there). The
    walk is iterative and stops :data:`PRIVATE_WALK_DEPTH` folders down.

    Returns:
        One :class:`LooseMode` per entry still loose (without ``fix``: every loose entry).
    """
    base = root or data_dir()
    out: list[LooseMode] = []
    try:
        base = base.resolve()
        top = os.open(base, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return out

    def note(where: str, mode: int, want: int, extra: str = "", *, fixable: bool = False) -> None:
        out.append(LooseMode(f"{where} is {oct(mode)}, want {oct(want)}{extra}", fixable, where))

    nofollow = getattr(os, "O_NOFOLLOW", 0)
    stack: list[list[str]] = [[]]
    try:
        while stack:
            parts = stack.pop()
            here = os.path.join(str(base), *parts)
            try:
                dfd = _open_dir(top, parts)
            except OSError:
                continue  # removed, or swapped for a link meanwhile
            try:
                m = stat.S_IMODE(os.fstat(dfd).st_mode)
                if m != DIR_MODE and not fix:
                    note(here, m, DIR_MODE, fixable=True)
                elif m != DIR_MODE:
                    try:
                        os.fchmod(dfd, DIR_MODE)
                    except OSError as e:
                        note(here, m, DIR_MODE, f" (cannot change it: {e.strerror or e})")
                try:
                    names = sorted(os.listdir(dfd))
                except OSError:
                    continue
                for name in names:
                    where = os.path.join(here, name)
                    try:
                        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(st.st_mode):
                        if len(parts) < PRIVATE_WALK_DEPTH:
                            stack.append([*parts, name])
                        else:
                            out.append(LooseMode(f"{where} is more than {PRIVATE_WALK_DEPTH} folders deep: "
                                                 "not checked", False, where))
                        continue
                    m = stat.S_IMODE(st.st_mode)
                    if stat.S_ISLNK(st.st_mode) or m == FILE_MODE:
                        continue
                    if not stat.S_ISREG(st.st_mode) and not stat.S_ISFIFO(st.st_mode):
                        # a socket or a device: opening it could do anything; told, never changed
                        if m & 0o077:
                            note(where, m, FILE_MODE, " (a socket or device: not changed; remove it)")
                        continue
                    if st.st_nlink > 1:
                        note(where, m, FILE_MODE, " (a hard link: not changed, its other name may be anywhere)")
                        continue
                    if not fix:
                        note(where, m, FILE_MODE, fixable=True)
                        continue
                    why = _chmod_file(dfd, name, st, nofollow)
                    if why:
                        note(where, m, FILE_MODE, f" (cannot change it: {why})")
            finally:
                os.close(dfd)
    finally:
        os.close(top)
    return out


def _chmod_file(dfd: int, name: str, st: os.stat_result, nofollow: int) -> str:
    """chmod 0600 the regular file ``name`` of folder ``dfd`` (checked to be ``st``) via a
    descriptor; returns why it failed ("" when done, or when the file changed meanwhile)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | nofollow, dir_fd=dfd)
    except PermissionError:  # write-only or 0000: we own it, so a chmod by name works
        try:
            os.chmod(name, FILE_MODE, dir_fd=dfd)
        except OSError as e:
            return str(e.strerror or e)
        return ""
    except OSError:
        return ""  # swapped for a link or removed meanwhile
    try:
        got = os.fstat(fd)
        if (stat.S_ISREG(got.st_mode) or stat.S_ISFIFO(got.st_mode)) and got.st_nlink == 1 \
                and os.path.samestat(got, st):
            os.fchmod(fd, FILE_MODE)
    except OSError as e:
        return str(e.strerror or e)
    finally:
        os.close(fd)
    return ""


def make_data_private() -> list[str]:
    """Tighten the data dir and everything in it to 0700/0600 (see :func:`private_modes`); called
    once when a writer takes the data-dir lock. Returns what could not be changed."""
    try:
        return [m.line for m in private_modes(fix=True)]
    except OSError:
        return []


def linked_part(path: Path) -> Path | None:
    """The first component of ``path`` below the data dir that is a symbolic link, else ``None``.

    Neotask does not follow links inside its data dir: a workspace or ``sessions/`` that is a link
    would read and write another agent's (or any) folder. The data dir itself may be a link (a user
    may keep it on another disk). A path outside the data dir is checked only itself.
    """
    root = data_dir()
    try:
        rel = path.relative_to(root)
    except ValueError:
        return path if path.is_symlink() else None
    p = root
    for part in rel.parts:
        p = p / part
        if p.is_symlink():
            return p
    return None


def hard_links(path: Path) -> int:
    """How many names the regular file ``path`` has when it has more than one (a hard link: it can be
    changed through its other name, outside Neotask), else 0 (one name, not a regular file, missing;
    a symbolic link is not followed)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return 0
    return st.st_nlink if stat.S_ISREG(st.st_mode) and st.st_nlink >= 2 else 0


def hard_link_note(path: Path) -> str | None:
    """One line when the regular file ``path`` has more than one name (:func:`hard_links`), else ``None``.

    Such a file (a transcript) is changed by whatever writes through its other name, which may be
    anywhere on the disk, outside Neotask; it is reported (by the writer that opens it and by
    ``neotask doctor``), not changed: the other name may be a backup the user made."""
    names = hard_links(path)
    if not names:
        return None
    return (f"{path} has {names} names (a hard link): it can be changed through its other name, outside "
            "Neotask (to give it one name: copy it, then move the copy over it, with Neotask closed)")


def refuse_links(path: Path) -> Path:
    """``path``, unless a component below the data dir is a symbolic link (a path outside the data
    dir: unless it is one itself, see :func:`linked_part`).

    Raises:
        UserError: naming the link (one line), and saying which rule refused it: a link inside the
            data dir, or a path given outside it that is a link.
    """
    link = linked_part(path)
    if link is not None:
        from neotask_tui.errors import UserError

        try:
            link.relative_to(data_dir())
        except ValueError:  # given outside the data dir (an export's folder): not "inside" anything
            raise UserError(f"{link} is a symbolic link; Neotask does not follow it (name the folder it points to "
                            "instead)") from None
        raise UserError(f"{link} is a symbolic link; Neotask does not follow links inside its data dir")
    return path


def data_dir_view(path: Path, depth: int) -> Path | None:
    """The data dir folder that ``path`` (an existing folder outside the data dir's real location)
    or one of its parents *is*, by ``st_dev``/``st_ino``, else ``None``.

    A bind mount (or any second view) of the data dir, or of a folder in it, is still the data dir:
    comparing path strings cannot see that. Folders down to ``depth`` levels below the data dir are
    compared (callers pass :data:`~neotask_tui.tuning.EXPORT_DATA_DIR_DEPTH`; ``paths`` sits below
    ``tuning`` in the layers), links not followed.
    """
    root = data_dir()
    ids: dict[tuple[int, int], Path] = {}
    level = [root]
    for _ in range(depth + 1):
        below: list[Path] = []
        for d in level:
            try:
                st = os.stat(d, follow_symlinks=d == root)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                continue
            ids[(st.st_dev, st.st_ino)] = d
            try:
                below += [Path(e.path) for e in os.scandir(d) if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
        level = below
    for p in (path, *path.parents):
        try:
            st = os.stat(p)
        except OSError:
            continue
        hit = ids.get((st.st_dev, st.st_ino))
        if hit is not None:
            return hit
    return None


def quarantine_problem() -> str | None:
    """Why nothing may be written to ``quarantine/`` (it, or a folder above it inside the data dir,
    is a symbolic link), else ``None``. A damaged copy moved through such a link would leave the
    data dir (a torn transcript line may hold a password), so writers keep the data in place."""
    link = linked_part(quarantine_dir())
    if link is None:
        return None
    return (f"{link} is a symbolic link; Neotask does not follow links inside its data dir, so nothing "
            "was moved to quarantine (the damaged data was kept in place)")


def quarantine_target() -> Path:
    """``quarantine/``, created if missing, for a writer to put a damaged copy in.

    Raises:
        UserError: :func:`quarantine_problem` (one line); nothing may be written there.
    """
    why = quarantine_problem()
    if why is not None:
        from neotask_tui.errors import UserError

        raise UserError(why)
    return ensure_dir(quarantine_dir())


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 if missing; return it."""
    if path.is_dir():
        return path
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):  # every directory we create is 0700, parents included
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        with contextlib.suppress(OSError):
            os.chmod(d, DIR_MODE)
    return path
