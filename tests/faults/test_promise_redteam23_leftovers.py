"""README promises red team 23 left open: a wrapped password value with words after it on its line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import KEY, run_turn, sqlite_rows_text

MARBLE = "Marble-" + "Otter-52"  # built at runtime: no literal credential in the repository
ZEBRA = "Zebra9" + "-x7Q"


@pytest.mark.parametrize(("text", "secret"), [
    (f"the password stays\n{MARBLE} until Monday", MARBLE),
    (f"the password remains\n{MARBLE}.", MARBLE),
    (f"пароль остаётся\n{MARBLE} до понедельника", MARBLE),
    (f"my password is\n{ZEBRA} until Friday", ZEBRA),
    (f"password:\n{ZEBRA} (do not share)", ZEBRA),
])
def test_a_wrapped_value_with_words_after_it_is_redacted(text: str, secret: str) -> None:
    out = redact_secrets(text)
    assert secret not in out and "[REDACTED:password]" in out, out
    assert out.split("\n")[1].endswith(text.split("\n")[1][len(secret):]), out  # the words after it stay


@pytest.mark.parametrize("text", [
    "password:\nhello world how are you",
    "the password stays\nthe same as before",
    "The password stays\nin the vault until Monday",
    "password:\nUse the vault CLI",
    "password was\nchanged yesterday by Dana",
])
def test_a_next_sentence_after_a_wrapped_cue_is_left_alone(text: str) -> None:
    assert redact_secrets(text) == text


async def test_a_wrapped_password_stays_out_of_the_search_index(engine: Engine, data_dir: Path) -> None:
    await run_turn(engine, f"the password stays\n{MARBLE} until Monday", KEY)
    blob = sqlite_rows_text(data_dir)
    assert "until Monday" in blob  # the message was indexed
    assert MARBLE not in blob


# -- L2: a skipped memory file is reported once, across processes, and also beside a background job --
EVIL = "evil\x1b]0;pwned\x07.md"


def _memory(monkeypatch: pytest.MonkeyPatch) -> Any:
    from neotask_tui.config import load_settings
    from neotask_tui.memory.service import MemoryService

    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")
    return MemoryService(load_settings().memory)


def _workspace(svc: Any, bad: str) -> Path:
    """The main agent's workspace with a good note and a file named ``bad``."""
    ws: Path = svc.workspace("main")
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "ok.md").write_text("The espresso machine needs descaling every second Friday.\n")
    (ws / "memory" / bad).write_text("hidden\n")
    return ws


def _told(svc: Any) -> str:
    return "\n".join(svc.take_notices())


def test_a_skipped_file_is_reported_once_not_once_per_process(monkeypatch: pytest.MonkeyPatch,
                                                             neotask_home: Path) -> None:
    first = _memory(monkeypatch)
    try:
        ws = _workspace(first, EVIL)
        first.recall("espresso descaling", agent_id="main", budget_tokens=800, k=3)
        assert "control character" in _told(first)
    finally:
        first.close()
    second = _memory(monkeypatch)  # the next `neotask send`: a new process, a new service
    try:
        second.recall("espresso descaling", agent_id="main", budget_tokens=800, k=3)
        assert "control character" not in _told(second)
        (ws / "memory" / EVIL).unlink()
        second.recall("espresso descaling", agent_id="main", budget_tokens=800, k=3)
    finally:
        second.close()
    (ws / "memory" / EVIL).write_text("hidden again\n")  # fine in between: a relapse is told again
    third = _memory(monkeypatch)
    try:
        third.recall("espresso descaling", agent_id="main", budget_tokens=800, k=3)
        assert "control character" in _told(third)
    finally:
        third.close()


@pytest.mark.timeout(180)
def test_a_skipped_file_is_reported_while_a_big_file_indexes_in_the_background(
        monkeypatch: pytest.MonkeyPatch, neotask_home: Path) -> None:
    from neotask_tui.memory.service import TURN_INLINE_BYTES

    s = _memory(monkeypatch)
    try:
        ws = _workspace(s, EVIL)
        para = "paragraph {i} about the warehouse inventory and its shelving.\n\n"
        (ws / "memory" / "big.md").write_text("".join(para.format(i=i) for i in range(1500)))
        assert (ws / "memory" / "big.md").stat().st_size > TURN_INLINE_BYTES
        s.recall("espresso descaling", agent_id="main", budget_tokens=800, k=3)
        told = _told(s)
        assert "background" in told and "control character" in told, told
        s.wait_for_index()
        assert "control character" not in _told(s)  # told once
    finally:
        s.close()


def test_a_secret_in_a_skipped_files_name_is_redacted_in_the_notice_and_doctor(
        monkeypatch: pytest.MonkeyPatch, neotask_home: Path) -> None:
    # Red team 25, F7: "memory/my password is SkipPw55.md" (binary) was named as is in the skip notice and doctor.
    from neotask_tui.cli.doctor import run_doctor

    value = "Skip" + "Pw55"
    s = _memory(monkeypatch)
    try:
        ws = s.workspace("main")
        (ws / "memory").mkdir(parents=True)
        (ws / "memory" / "ok.md").write_text("The espresso machine needs descaling every second Friday.\n")
        (ws / "memory" / f"my password is {value}.md").write_bytes(b"\0" * 500)
        s.recall("espresso descaling", agent_id="main", budget_tokens=800, k=3)
        told = _told(s)
    finally:
        s.close()
    assert "is not indexed" in told and value not in told and "[REDACTED:password].md" in told, told
    report = run_doctor()
    assert report["memory_skipped"] and value not in "\n".join(report["memory_skipped"])
    for p in neotask_home.rglob("*"):
        if p.is_file() and "agents" not in p.parts:
            assert value.encode() not in p.read_bytes(), p


async def test_an_inbox_candidate_of_an_edited_away_message_is_withdrawn(engine: Engine) -> None:
    # Red team 23 (observed): "never use semicolons", then /edit "what time is it": the candidate stayed pending,
    # one `inbox accept` away from long-term memory, though the user had taken the words back.
    from neotask_tui.engine.events import Notice

    assert engine.state is not None
    await run_turn(engine, "Never use semicolons in my scripts.", KEY)
    (cand,) = await engine.state.inbox_list("main")
    told = [e async for e in engine.edit_last("What time is it?", KEY)]
    assert await engine.state.inbox_list("main") == []
    (entry,) = [e for e in await engine.state.inbox_list("main", None) if e.n == cand.n]
    assert entry.status == "withdrawn"
    assert any(isinstance(e, Notice) and f"#{cand.n} withdrawn" in e.text for e in told)
    await run_turn(engine, "Never use semicolons in my scripts.", KEY)  # said again: proposed again
    assert [e.text for e in await engine.state.inbox_list("main")] == [cand.text]
