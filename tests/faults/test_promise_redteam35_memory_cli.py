"""Red team 35, finding 6: ``neotask memory search`` and ``neotask memory reindex`` index archived sessions.

Archived transcripts (sessions ended by ``sessions new``, a reset or a compaction) were indexed only
by a ``send``'s recall: ``memory search`` with the lock free said "no matching memories" for a line
of an archived session, ``memory reindex`` indexed "0 file(s)", and ``context --message`` kept
saying "1 archived session not indexed yet" until the next ``send``. Both now index them as a send
does (:func:`neotask_tui.memory.archived.index_archived`: redacted, forgotten messages left out,
``memory.include_transcripts`` honoured), ``search`` only while it holds the data-dir lock.
Real subprocesses of the CLI, the scripted provider, the bundled embedder and LanceDB.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.faults.helpers import cli, derived_files_containing, lock_holder

KEY = "agent:main:tui:a"
ENV = {"NEOTASK_PROVIDER": "scripted", "NEOTASK_MEMORY_ENABLED": "true"}
LINE = "My cat is named Pixel and she likes boxes."
NOT_INDEXED = "1 archived session not indexed yet"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token: redacted wherever it is indexed


def _archive_a_session(*lines: str) -> None:
    """Send ``lines`` in the session of :data:`KEY`, then end it (``sessions new`` archives it)."""
    for line in lines:
        r = cli("-s", KEY, "send", line, env=ENV)
        assert r.returncode == 0, r.stderr
    r = cli("sessions", "new", KEY, env=ENV)
    assert r.returncode == 0, r.stderr


def _search(query: str) -> list[dict[str, Any]]:
    r = cli("memory", "search", query, "--json", env=ENV)
    assert r.returncode == 0, r.stderr
    hits: list[dict[str, Any]] = json.loads(r.stdout)
    return hits


def _preview_note() -> str:
    r = cli("context", KEY, "--message", "what is my cat called?", env=ENV)
    assert r.returncode == 0, r.stderr
    return r.stdout + r.stderr


def test_memory_search_indexes_archived_sessions_when_the_lock_is_free(data_dir: Path) -> None:
    _archive_a_session(LINE)
    assert NOT_INDEXED in _preview_note()
    with lock_holder():  # beside the app: the index as the holder keeps it (none yet), nothing written
        assert _search("cat named Pixel") == []
    assert not (data_dir / "memory-transcripts.json").exists() and not (data_dir / "lancedb").exists()
    hits = _search("cat named Pixel")
    mine = [h for h in hits if h["speaker"] == "user"]
    assert [h["text"] for h in mine] == [LINE] and mine[0]["kind"] == "history"
    assert NOT_INDEXED not in _preview_note()
    r = cli("memory", "search", "cat named Pixel", env=ENV)  # the text form, as the repro ran it
    assert r.returncode == 0 and "no matching memories" not in r.stdout and "Pixel" in r.stdout


def test_memory_reindex_indexes_archived_sessions_redacted_and_counts_them(data_dir: Path) -> None:
    _archive_a_session(LINE, f"The deploy bot pushes with {TOKEN} every night.")
    off = cli("memory", "reindex", "--json", env={**ENV, "NEOTASK_MEMORY_INCLUDE_TRANSCRIPTS": "false"})
    assert off.returncode == 0, off.stderr
    assert json.loads(off.stdout)["sessions_indexed"] == 0  # memory.include_transcripts = false: left alone
    assert not (data_dir / "memory-transcripts.json").exists()
    r = cli("memory", "reindex", "--json", env=ENV)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sessions_indexed"] == 1
    assert NOT_INDEXED not in _preview_note()
    r = cli("memory", "reindex", env=ENV)  # indexed once: the manifest remembers it
    assert r.returncode == 0, r.stderr
    assert "0 archived session(s) indexed" in r.stdout
    hits = _search("deploy bot pushes every night")
    pushed = [h["text"] for h in hits if "deploy bot" in h["text"]]
    assert pushed and all("[REDACTED:" in t and TOKEN not in t for t in pushed)
    assert derived_files_containing(data_dir / "lancedb", [TOKEN.encode()]) == []
    assert LINE in [h["text"] for h in _search("cat named Pixel") if h["speaker"] == "user"]
