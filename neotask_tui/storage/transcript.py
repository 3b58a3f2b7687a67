"""Append-only JSONL transcripts.

One file per session id. Lines are only ever appended (each append is fsynced before it returns).
At load, a torn trailing line (a crash mid-append) or a corrupt line anywhere is detected, copied to
a quarantine side file and reported; every good line survives. A torn *tail* is also cut from the
transcript (after it has been saved to quarantine) so the next append starts on a clean line.
"""

from __future__ import annotations

import gc
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from neotask_tui import paths
from neotask_tui.errors import StorageError
from neotask_tui.storage.atomic import append_durable
from neotask_tui.storage.events import Event, now_iso
from neotask_tui.text.clean import clean_text


@dataclass(slots=True)
class LoadIssue:
    """A line that could not be loaded (and where it was quarantined)."""

    line_no: int
    reason: str
    quarantined_to: str
    tail: bool


@dataclass(slots=True)
class LoadedTranscript:
    """The result of reading a transcript."""

    path: Path
    events: list[Event] = field(default_factory=list)
    issues: list[LoadIssue] = field(default_factory=list)

    @property
    def header(self) -> Event | None:
        """The ``session`` header event, if present."""
        if self.events and self.events[0].type == "session":
            return self.events[0]
        return None

    @property
    def last_id(self) -> int:
        """Highest event id (0 for an empty transcript)."""
        return max((e.id for e in self.events), default=0)


def _quarantine(path: Path, raw: bytes, line_no: int, reason: str) -> Path:
    qdir = paths.quarantine_target()  # UserError when quarantine/ is a link: the caller keeps the line
    qpath = qdir / f"{path.stem}.quarantine.jsonl"
    record = {
        "source": str(path),
        "line_no": line_no,
        "reason": reason,
        "at": now_iso(),
        "raw": raw.decode("utf-8", errors="backslashreplace"),
    }
    append_durable(qpath, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
    return qpath


def read_transcript(path: Path, *, repair: bool = True) -> LoadedTranscript:
    """Load all good events from ``path``.

    Args:
        path: The JSONL file.
        repair: Quarantine bad lines and truncate a torn tail (False = report only, touch nothing;
            used by read-only commands and ``doctor`` without ``--fix``).
    """
    out = LoadedTranscript(path=path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return out
    if not data:
        return out
    # Parsing allocates many small objects that all survive; the cyclic GC would rescan them over and
    # over (quadratic in practice on 100k lines), so it is paused while parsing.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        _parse_into(out, path, data, repair)
    finally:
        if gc_was_enabled:
            gc.enable()
    return out


def _parse_into(out: LoadedTranscript, path: Path, data: bytes, repair: bool) -> None:
    lines = data.split(b"\n")
    torn_tail = lines[-1] != b""
    if not torn_tail:
        lines.pop()
    loads = json.loads
    from_dict = Event.from_dict
    seen_q: set[int] = set()
    refused = paths.quarantine_problem() if repair else None
    if repair:
        seen_q = _already_quarantined(path)
    for i, raw in enumerate(lines):
        is_tail = torn_tail and i == len(lines) - 1
        if not raw.strip():
            continue
        try:
            ev = from_dict(loads(raw))
        # RecursionError: a deeply nested line must not make the whole transcript unreadable (tests/faults).
        except (ValueError, UnicodeDecodeError, TypeError, RecursionError) as e:
            reason = "torn trailing line (incomplete write)" if is_tail else f"corrupt line: {e}"[:200]
            qp = ""
            if refused is not None:  # quarantine/ is a link: nothing is copied through it
                reason = f"{reason}; {refused}"
            elif repair and (i + 1) not in seen_q:
                qp = str(_quarantine(path, raw, i + 1, reason))
            elif repair:
                qp = str(paths.quarantine_dir() / f"{path.stem}.quarantine.jsonl")
            out.issues.append(LoadIssue(line_no=i + 1, reason=reason, quarantined_to=qp, tail=is_tail))
            continue
        if is_tail:
            # Valid JSON but no newline: the write completed except for "\n". Keep it and finish it.
            out.events.append(ev)
            if repair:
                append_durable(path, b"\n")
            continue
        out.events.append(ev)
    if repair and torn_tail and out.issues and out.issues[-1].tail and refused is not None:
        # Not saved anywhere, so not cut: the torn line is ended instead (the next append starts on
        # a clean line) and stays in the transcript as a corrupt line until quarantine/ is usable.
        append_durable(path, b"\n")
    elif repair and torn_tail and out.issues and out.issues[-1].tail:
        cut = len(data) - len(lines[-1])
        with open(path, "r+b") as f:
            f.truncate(cut)
            f.flush()
            os.fsync(f.fileno())


def _already_quarantined(path: Path) -> set[int]:
    """Line numbers of ``path`` already copied to quarantine (so repeat loads don't duplicate)."""
    qpath = paths.quarantine_dir() / f"{path.stem}.quarantine.jsonl"
    if paths.linked_part(qpath) is not None or not qpath.exists():  # a link is not read through
        return set()
    out: set[int] = set()
    for line in qpath.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("source") == str(path) and "torn" not in str(rec.get("reason")):
            out.add(int(rec.get("line_no", -1)))
    return out


def read_header(path: Path) -> Event | None:
    """Read only the first line (the session header) — cheap, for listings and index rebuilds."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError:
        return None
    try:
        ev = Event.from_dict(json.loads(first))
    except (ValueError, UnicodeDecodeError, TypeError, RecursionError):
        return None
    return ev if ev.type == "session" else None


def read_last_event(path: Path, max_bytes: int = 65536) -> Event | None:
    """Best-effort last complete event (for last-activity during index rebuilds)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            f.seek(max(0, size - max_bytes))
            chunk = f.read()
    except OSError:
        return None
    for raw in reversed(chunk.split(b"\n")):
        if not raw.strip():
            continue
        try:
            return Event.from_dict(json.loads(raw))
        except (ValueError, UnicodeDecodeError, TypeError, RecursionError):
            continue
    return None


def append_events(path: Path, events: list[Event]) -> None:
    """Append events durably (one write + fsync)."""
    append_durable(path, _encode_lines(events))


def _encode_lines(events: list[Event]) -> bytes:
    """The JSONL bytes of ``events`` (fault-suite fix, see tests/faults/hostile_cases.py).

    Lone surrogates (e.g. an emoji's surrogate pair split across two streamed JSON chunks, or a
    model's tool-call key) would make ``encode("utf-8")`` fail after the reply streamed: valid pairs are
    rejoined and lone halves become U+FFFD. An event that cannot be serialised at all (nested deeper
    than the JSON encoder allows) is a :class:`StorageError`; nothing is written.
    """
    try:
        text = "".join(e.to_line() for e in events)
    except (RecursionError, ValueError, TypeError) as err:
        raise StorageError(f"could not store an event ({type(err).__name__}: {str(err)[:120]}); "
                           "nothing was written") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return clean_text(text).encode("utf-8")
