"""An agent's memory files on disk: which entries are memory, and reading one safely.

Only regular files reached from the workspace without following a symbolic link are memory: a link
(to ``/etc/passwd``, ``/proc/self/environ`` or another agent's workspace) is never read, nor is a
FIFO, a device or a folder named ``x.md``; nor is a hard link (a file with more than one name: the
other name may be ``/etc/shadow`` or a file of another agent). Files over the size cap, binary files and folders nested
deeper than :data:`MAX_DEPTH` are skipped too. Each skipped entry is named with its reason, so the
service can tell the user once and ``doctor`` can list them.

Reading opens every path component relative to its parent with ``O_NOFOLLOW`` and checks the opened
file with ``fstat``, so a file swapped for a link or a FIFO between the scan and the read is refused
too (and a FIFO never blocks the open: ``O_NONBLOCK``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from neotask_tui import paths
from neotask_tui.storage.atomic import atomic_write_text
from neotask_tui.text.clean import clean_text, storable
from neotask_tui.text.secrets import redact_path
from neotask_tui.text.terminal import inert_line
from neotask_tui.tuning import MEMORY_BINARY_CONTROL_RATIO

MEMORY_FILE: Final = "MEMORY.md"
MEMORY_DIR: Final = "memory"
MAX_DEPTH: Final = 32
"""Folders below ``memory/`` that are walked; deeper ones are skipped (and reported)."""
TOMBSTONES: Final = ".memory-tombstones.json"
"""The workspace file listing the forgotten transcript messages (keys re-indexing skips)."""
LINK = "a symbolic link (links are not followed)"
HARD_LINK = "a hard link (a file with more than one name may live outside the workspace; not read)"


class SkipFile(ValueError):
    """This entry is not memory; the message (one line) says why."""


@dataclass(frozen=True)
class Skipped:
    """An entry of the workspace that looks like memory but is not read."""

    path: str
    """Workspace-relative path."""
    reason: str

    def line(self) -> str:
        """One line, a secret in the name redacted ("memory/my password is ….md"), control characters
        kept as they are: for ``doctor`` (its ``--json`` keeps exact values; its text shows them inert)."""
        return f"{redact_path(self.path)} is not indexed: {self.reason}"

    def message(self) -> str:
        """:meth:`line` shown on one line (a line break or a terminal control in the name made
        visible), for notices and ``reindex``."""
        return inert_line(self.line())


@dataclass
class Scan:
    """What :func:`scan` found."""

    files: dict[str, Path] = field(default_factory=dict)
    """Workspace-relative path -> absolute path of every memory file, sorted by path."""
    skipped: list[Skipped] = field(default_factory=list)


@dataclass(frozen=True)
class MemoryText:
    """A memory file's text as read."""

    text: str
    encoding: str
    """``utf-8``, or ``cp1252``/``latin-1`` for a legacy 8-bit file (rewrites save it as UTF-8)."""
    mtime: float
    size: int


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _too_big(size: int, max_bytes: int) -> str:
    return f"{size:,} bytes is over memory.max_file_bytes ({max_bytes:,})"


def _unreadable(st: os.stat_result, max_bytes: int) -> str | None:
    """Why an entry (its ``lstat``) is not a memory file to read, or ``None`` if it is one."""
    if stat.S_ISLNK(st.st_mode):
        return LINK
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file ({_kind(st.st_mode)})"
    if st.st_nlink > 1:
        return HARD_LINK
    if st.st_size > max_bytes:
        return _too_big(st.st_size, max_bytes)
    return None


CONTROL_IN_NAME: Final = "a control character in its name"


NOT_UTF8_NAME: Final = "a name that is not valid UTF-8"


def control_in_name(name: str) -> bool:
    """Whether a file or folder name holds a control character (C0, DEL or C1): such a name is never
    read as memory, and ``memory add --file`` refuses to write one."""
    return any(c < " " or "\x7f" <= c <= "\x9f" for c in name)


def name_flaw(name: str) -> str | None:
    """Why a file or folder name is never read as memory (and ``memory add --file`` refuses it): a
    control character, or bytes that are not UTF-8 (``os`` gives them as lone surrogates, which no
    index, hash or output can encode); ``None`` for a good name."""
    if control_in_name(name):
        return CONTROL_IN_NAME
    return None if storable(name) else NOT_UTF8_NAME


def scan(workspace: Path, max_bytes: int) -> Scan:
    """Every memory file of a workspace (``MEMORY.md``, ``memory/**/*.md``) and what was skipped.

    Hidden entries (a name starting with ``.``) are ignored silently, as are files not ending in
    ``.md``; symbolic links, special files, folders deeper than :data:`MAX_DEPTH`, names holding a
    control character or bytes that are not UTF-8 (:func:`name_flaw`) and files over ``max_bytes``
    are skipped and listed.
    Nothing is opened: only ``lstat``/``scandir``.
    """
    out = Scan()
    link = paths.linked_part(workspace)
    if link is not None:  # a workspace that is a link would index another agent's (or any) folder
        out.skipped.append(Skipped(".", f"{link.name} is {LINK}"))
        return out
    try:
        st = os.lstat(workspace / MEMORY_FILE)
    except OSError:
        st = None
    if st is not None:
        why = _unreadable(st, max_bytes)
        if why is None:
            out.files[MEMORY_FILE] = workspace / MEMORY_FILE
        else:
            out.skipped.append(Skipped(MEMORY_FILE, why))
    try:
        st = os.lstat(workspace / MEMORY_DIR)
    except OSError:
        return out
    if stat.S_ISLNK(st.st_mode):
        out.skipped.append(Skipped(MEMORY_DIR, LINK))
        return out
    if not stat.S_ISDIR(st.st_mode):
        return out
    stack: list[tuple[str, int]] = [(MEMORY_DIR, 0)]
    found: dict[str, Path] = {}
    while stack:
        rel, depth = stack.pop()
        try:
            with os.scandir(workspace / rel) as it:
                entries = list(it)
        except OSError as e:
            out.skipped.append(Skipped(rel, f"cannot be listed ({e.strerror or e})"))
            continue
        for ent in entries:
            if ent.name.startswith("."):
                continue
            sub = f"{rel}/{ent.name}"
            flaw = name_flaw(ent.name)
            if flaw is not None:  # `memory add --file` refuses such a name: never read either
                if ent.name.endswith(".md") or ent.is_dir(follow_symlinks=False):
                    out.skipped.append(Skipped(clean_text(sub), flaw))  # shown with U+FFFD for the bytes
                continue
            try:
                if ent.is_symlink():
                    if ent.name.endswith(".md") or ent.is_dir():
                        out.skipped.append(Skipped(sub, LINK))
                    continue
                if ent.is_dir(follow_symlinks=False):
                    if depth + 1 > MAX_DEPTH:
                        out.skipped.append(Skipped(sub, f"too deep (more than {MAX_DEPTH} folders under memory/)"))
                    else:
                        stack.append((sub, depth + 1))
                    continue
                if not ent.name.endswith(".md"):
                    continue
                est = ent.stat(follow_symlinks=False)
            except OSError as e:
                out.skipped.append(Skipped(sub, f"cannot be read ({e.strerror or e})"))
                continue
            why = _unreadable(est, max_bytes)
            if why is None:
                found[sub] = workspace / sub
            else:
                out.skipped.append(Skipped(sub, why))
    out.files.update(sorted(found.items()))
    out.skipped.sort(key=lambda s: s.path)
    return out


def _open_inside(workspace: Path, rel: str) -> int:
    """An fd of ``workspace/rel`` opened without following a link at any component below the
    workspace (``O_NOFOLLOW`` on each; ``O_NONBLOCK`` so a FIFO cannot hang the open).

    Raises:
        FileNotFoundError: when the file (or a folder on its way) does not exist.
        SkipFile: for a link or a non-folder on the way.
    """
    parts = rel.split("/")
    link = paths.linked_part(workspace)
    if link is not None:
        raise SkipFile(f"{link.name}/ is {LINK}")
    # getattr on the os module: O_NOFOLLOW and O_DIRECTORY do not exist on every platform (Windows)
    flags = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(workspace, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0))
    try:
        for part in parts[:-1]:
            try:
                nfd = os.open(part, flags | getattr(os, "O_DIRECTORY", 0), dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise SkipFile(f"{part}/ is {LINK if e.errno == errno.ELOOP else 'not a folder'}") from None
                raise
            os.close(fd)
            fd = nfd
        try:
            return os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise SkipFile(LINK) from None
            raise
    finally:
        os.close(fd)


def decode(data: bytes) -> tuple[str, str]:
    """``(text, encoding)`` of a memory file's bytes.

    UTF-8 first; a file that is not UTF-8 is taken as Windows-1252 (Latin-1 where that fails),
    the usual legacy encoding of hand-written notes.

    Raises:
        SkipFile: for binary data (a NUL byte, or too many control characters).
    """
    if b"\x00" in data:
        raise SkipFile("binary (it contains NUL bytes)")
    try:
        text, enc = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        try:
            text, enc = data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:
            text, enc = data.decode("latin-1"), "latin-1"
    if text:
        controls = sum(1 for c in text if (ord(c) < 32 and c not in "\t\n\r\f") or 0x7F <= ord(c) < 0xA0)
        if controls > MEMORY_BINARY_CONTROL_RATIO * len(text):
            raise SkipFile(f"binary ({controls * 100 // len(text)}% control characters)")
    return text.removeprefix("\ufeff"), enc


def read_text(workspace: Path, rel: str, max_bytes: int) -> MemoryText:
    """Read one memory file safely (see the module docstring).

    Raises:
        FileNotFoundError: when it does not exist.
        SkipFile: when it is a link, not a regular file, over ``max_bytes``, binary or unreadable.
    """
    try:
        fd = _open_inside(workspace, rel)
    except (FileNotFoundError, SkipFile):
        raise
    except OSError as e:
        raise SkipFile(f"cannot be read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkipFile(f"not a regular file ({_kind(st.st_mode)})")
        if st.st_nlink > 1:  # another name of the same file may be anywhere on this filesystem
            raise SkipFile(HARD_LINK)
        if st.st_size > max_bytes:
            raise SkipFile(_too_big(st.st_size, max_bytes))
        chunks: list[bytes] = []
        got = 0
        while got <= max_bytes:
            b = os.read(fd, min(1 << 20, max_bytes + 1 - got))
            if not b:
                break
            chunks.append(b)
            got += len(b)
        if got > max_bytes:  # grew since the fstat
            raise SkipFile(_too_big(got, max_bytes))
    except OSError as e:
        raise SkipFile(f"cannot be read ({e.strerror or e})") from None
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    text, enc = decode(b"".join(chunks))
    return MemoryText(text, enc, st.st_mtime, st.st_size)


def problems(workspace: Path, max_bytes: int) -> list[Skipped]:
    """Every entry of the workspace that is not indexed, reading each file (for ``doctor``)."""
    found = scan(workspace, max_bytes)
    out = list(found.skipped)
    for rel in found.files:
        try:
            read_text(workspace, rel, max_bytes)
        except FileNotFoundError:
            continue
        except SkipFile as e:
            out.append(Skipped(rel, str(e)))
    return sorted(out, key=lambda s: s.path)


def read_tombstones(workspace: Path) -> set[str]:
    """The keys in a workspace's :data:`TOMBSTONES` file (none when it is missing or unreadable)."""
    f = workspace / TOMBSTONES
    try:
        return set(json.loads(f.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return set()


def write_tombstones(workspace: Path, keys: set[str]) -> None:
    """Replace a workspace's :data:`TOMBSTONES` file (atomically) with ``keys``."""
    atomic_write_text(workspace / TOMBSTONES, json.dumps(sorted(keys)))
