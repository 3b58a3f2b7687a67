"""One agent never sees another's state or memory: agent ids map to folders injectively.

The collision classes that used to share a folder (a trailing dot, ``@``/``+``/``_`` variants,
case, look-alikes, empty and dot ids, long ids) are enumerated; distinct ids must give distinct
folders, also on a case-insensitive filesystem, and the mapping must round-trip. Path-like session
ids are refused.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.errors import UserError
from neotask_tui.storage.keys import parse_key
from tests.faults.helpers import KEY, cli

pytestmark = pytest.mark.promise("isolation")

MEMORY_ON = {"NEOTASK_MEMORY_ENABLED": "true", "NEOTASK_MEMORY_WATCH": "false",
             "NEOTASK_PROVIDER": "scripted"}

COLLISION_CLASSES: list[list[str]] = [
    ["alice", "alice.", ".alice", "alice..", "alice_", "alice-"],    # trailing/leading dots and friends
    ["team@x", "team+x", "team_x", "team.x", "team-x", "team x", "team/x", "team%40x"],
    ["alice", "Alice", "ALICE", "aLiCe"],                              # case (macOS, Windows)
    ["a", "\u0430", "\uff41", "\u0251"],                              # Latin a, Cyrillic a, fullwidth a, alpha
    ["caf\u00e9", "cafe\u0301", "cafe"],                               # NFC vs NFD vs plain
    [".", "..", "...", "_", "-", "%", "%2e", "%2E"],                  # dot ids and escape look-alikes
    ["x" * 64, "x" * 63 + "X", "x" * 63 + "."],                       # long ids
    ["main", "main\n", "main ", "main\x00", "main/", "main\\"],       # control and separators
]


def _all_ids() -> list[str]:
    return sorted({i for cls in COLLISION_CLASSES for i in cls})


def test_distinct_agent_ids_get_distinct_folders_that_round_trip() -> None:
    folders: dict[str, str] = {}
    for agent in _all_ids():
        f = paths.agent_folder(agent)
        assert f not in ("", ".", "..") and "/" not in f and "\\" not in f and "\x00" not in f, (agent, f)
        assert len(f.encode()) <= 255, agent
        assert f == unicodedata.normalize("NFC", f) == unicodedata.normalize("NFD", f)  # ASCII: no normaliser bites
        assert paths.agent_id_from_folder(f) == agent
        prev = folders.setdefault(f.casefold(), agent)
        assert prev == agent, f"{prev!r} and {agent!r} share the folder {f!r}"
        assert paths.workspace_dir(agent).name == f and paths.workspace_dir(agent).parent.name == "agents"


def test_plain_ids_keep_their_old_folder_so_existing_memory_stays_put() -> None:
    for agent in ("main", "work", "team-x", "a1", "2024-notes"):
        assert paths.agent_folder(agent) == agent


def test_the_empty_id_and_an_id_too_long_for_a_folder_are_refused() -> None:
    with pytest.raises(ValueError):
        paths.agent_folder("")
    with pytest.raises(ValueError):
        paths.agent_folder("\u4e00" * 200)  # 600 UTF-8 bytes: no single folder name can hold it
    for name in ("Alice", "%4", "%zz", "%2E", "a%", "caf%c3", "x/y", ""):
        with pytest.raises(ValueError):
            paths.agent_id_from_folder(name)


@pytest.mark.parametrize("key", [
    f"{KEY}\n", "agent:main\n:tui:default", "agent:main:tui\n:default",
])
def test_session_keys_are_matched_in_full(key: str) -> None:
    with pytest.raises(UserError):
        parse_key(key)


def test_other_names_are_matched_in_full_too() -> None:
    from neotask_tui.engine.state.model import valid_field
    from neotask_tui.tui.themes import ThemeError, parse_theme

    assert valid_field("deadline") and not valid_field("deadline\n")
    parse_theme({"name": "dusk", "colors": {"primary": "#336699"}})
    with pytest.raises(ThemeError):
        parse_theme({"name": "dusk\n", "colors": {"primary": "#336699"}})


@pytest.mark.parametrize("agent", ["main\n", "alice.\n", "", "ali ce", "../main", "a" * 65])
def test_cli_agent_option_is_validated_like_a_key(agent: str) -> None:
    r = cli("inbox", "list", "--agent", agent, env={"NEOTASK_PROVIDER": "scripted"})
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "agent" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_colliding_agents_keep_separate_memory_end_to_end(data_dir: Path) -> None:
    for agent, fact in (("team@x", "the team at x deploys on fridays"),
                        ("team_x", "the underscore team never deploys"),
                        ("alice.", "alice-dot likes tea"),
                        ("alice", "plain alice likes coffee")):
        r = cli("memory", "add", fact, "--agent", agent, env=MEMORY_ON)
        assert r.returncode == 0, r.stderr
    folders = sorted(p.name for p in (data_dir / "agents").iterdir())
    assert len(folders) == 4 and "alice" in folders
    for agent, own, other in (("team@x", "fridays", "underscore"), ("team_x", "underscore", "fridays"),
                              ("alice.", "tea", "coffee"), ("alice", "coffee", "tea")):
        r = cli("memory", "search", "who deploys and what do they drink", "--agent", agent, "--json",
                "--k", "10", env=MEMORY_ON)
        assert r.returncode == 0, r.stderr
        texts = " ".join(h["text"] for h in json.loads(r.stdout))
        assert own in texts and other not in texts, (agent, texts)


def test_a_legacy_folder_moves_once_to_the_new_name_and_the_user_is_told(data_dir: Path) -> None:
    # Before the injective mapping, 'My.Agent' lived in agents/My.Agent and 'alice.' in agents/alice.
    legacy = data_dir / "agents" / "My.Agent"
    legacy.mkdir(parents=True)
    (legacy / "MEMORY.md").write_text("# Memory\n\n- the legacy fact about zebras\n", encoding="utf-8")
    plain = data_dir / "agents" / "alice"
    plain.mkdir()
    (plain / "MEMORY.md").write_text("# Memory\n\n- alice's own fact\n", encoding="utf-8")

    r = cli("memory", "add", "a new fact about lions", "--agent", "My.Agent", env=MEMORY_ON)
    assert r.returncode == 0, r.stderr
    assert "My.Agent" in r.stderr and paths.agent_folder("My.Agent") in r.stderr  # told what moved where
    new = data_dir / "agents" / paths.agent_folder("My.Agent")
    text = (new / "MEMORY.md").read_text(encoding="utf-8")
    assert "zebras" in text and "lions" in text and not legacy.exists()

    again = cli("memory", "add", "one more", "--agent", "My.Agent", env=MEMORY_ON)
    assert again.returncode == 0 and "moved" not in again.stderr  # once

    # 'alice.' used to share agents/alice with 'alice': that folder is alice's and stays hers.
    r = cli("memory", "add", "dot fact", "--agent", "alice.", env=MEMORY_ON)
    assert r.returncode == 0, r.stderr
    assert "alice's own fact" in (plain / "MEMORY.md").read_text(encoding="utf-8")
    assert "dot fact" not in (plain / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("sid", ["../archive/20250101-000000-00000000", "../sessions/x", "/etc/passwd",
                                 "20250101-000000-00000000/../../x", "a.b", "x\n"])
def test_path_like_session_ids_are_refused(data_dir: Path, sid: str) -> None:
    assert cli("send", "hello", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    sessions = json.loads(cli("sessions", "list", "--json").stdout)
    live = sessions[0]["session_id"]
    # Make a real archived transcript that a path-like id could reach.
    assert cli("sessions", "new", KEY).returncode == 0
    assert (data_dir / "archive" / f"{live}.jsonl").exists()
    probe = sid.replace("20250101-000000-00000000", live)
    for argv in (("sessions", "restore", probe), ("transcript", probe)):
        r = cli(*argv)
        assert r.returncode == 2, (argv, r.returncode, r.stdout[:200], r.stderr)
        assert "session id" in r.stderr and "Traceback" not in r.stderr


def test_memory_commands_use_the_agent_of_the_session_option(data_dir: Path) -> None:
    """``neotask -s agent:other:… memory add`` writes the other agent's memory, not general.agent's
    (red team, session 7: -s was silently ignored by the memory commands)."""
    r = cli("-s", "agent:other:tui:x", "memory", "add", "the other agent keeps bluebirds", env=MEMORY_ON)
    assert r.returncode == 0, r.stderr
    main_md = data_dir / "agents" / "main" / "MEMORY.md"
    assert not main_md.exists() or "bluebirds" not in main_md.read_text(encoding="utf-8")
    assert "bluebirds" in (data_dir / "agents" / "other" / "MEMORY.md").read_text(encoding="utf-8")
    r = cli("-s", "agent:main:tui:x", "memory", "search", "bluebirds", "--json", env=MEMORY_ON)
    assert r.returncode == 0, r.stderr
    assert "bluebirds" not in r.stdout
    r = cli("-s", "agent:other:tui:x", "memory", "search", "bluebirds", "--json", "--agent", "main", env=MEMORY_ON)
    assert r.returncode == 0 and "bluebirds" not in r.stdout, "--agent wins over -s"


def test_a_workspace_that_is_a_link_to_another_agent_is_not_followed(data_dir: Path) -> None:
    """agents/eve -> agents/main would let agent eve search and write main's memory."""
    env = dict(MEMORY_ON)
    r = cli("memory", "add", "qzxmainonly4411 the main agent's private note", "--agent", "main", env=env)
    assert r.returncode == 0, r.stderr
    main_ws = paths.workspace_dir("main")
    paths.workspace_dir("eve").symlink_to(main_ws, target_is_directory=True)
    before = (main_ws / "MEMORY.md").read_bytes()
    r = cli("memory", "search", "private note", "--agent", "eve", "--json", env=env)
    assert "qzxmainonly4411" not in r.stdout
    r = cli("memory", "add", "eve writes here", "--agent", "eve", env=env)
    assert r.returncode == 2 and "symbolic link" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert (main_ws / "MEMORY.md").read_bytes() == before
    # The inbox is not written through the link either (eve's candidate would land in main's inbox).
    r = cli("-s", "agent:eve:tui:x", "send", "remember that I always prefer green tea", env=env)
    assert r.returncode == 0, r.stderr
    assert not (main_ws / "inbox.json").exists()
    assert json.loads(cli("inbox", "list", "--json", "--agent", "main", env=env).stdout) == []
    skipped = json.loads(cli("doctor", "--json", env=env).stdout)["memory_skipped"]
    assert any(line.startswith(f"{paths.agent_folder('eve')} is not indexed") for line in skipped), skipped


def test_a_sessions_folder_that_is_a_link_is_refused(data_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "sessions").symlink_to(elsewhere, target_is_directory=True)
    for argv in (("send", "hello"), ("sessions", "list")):
        r = cli(*argv, env={"NEOTASK_PROVIDER": "scripted"})
        assert r.returncode == 2 and "symbolic link" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert list(elsewhere.iterdir()) == []
