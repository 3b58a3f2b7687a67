"""Red team 29, findings 6 and 8: undecodable bytes in a memory write, and error wording.

README, *Hostile input*: "invalid UTF-8 and lone surrogates … (always an inline error, never a
crash)"; *Searching*: a ``--since`` span "reaching before year 1 is a one-line error"; *Attach*:
"Files inside Neotask's data dir are refused, links into it too".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from neotask_tui.errors import UserError
from tests.faults.helpers import cli

BAD = "\udced\udca0\udc80"
"""What Python makes of the argv bytes ``\\xed\\xa0\\x80`` (an encoded lone surrogate): three lone
surrogates; a subprocess argument holding them is those bytes again."""
SHOWN = "\ufffd\ufffd\ufffd"
MEMORY = {"NEOTASK_PROVIDER": "scripted", "NEOTASK_MEMORY_ENABLED": "true"}


def one_line_error(r: Any) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


# ----------------------------------------------------------------------------------- finding 6
@pytest.mark.promise("cli_errors")
def test_memory_add_and_remember_store_undecodable_bytes_as_replacement_characters(data_dir: Path) -> None:
    # They failed with "'utf-8' codec can't encode characters in position 56-58: surrogates not allowed".
    r = cli("memory", "add", f"note {BAD} x", env=MEMORY)
    assert r.returncode == 0, r.stderr
    r = cli("send", f"/remember other {BAD} y", env=MEMORY)
    assert r.returncode == 0, r.stderr
    text = (data_dir / "agents" / "main" / "MEMORY.md").read_text(encoding="utf-8")
    assert f"note {SHOWN} x" in text and f"other {SHOWN} y" in text
    for args in (("memory", "search", f"note {BAD}"), ("send", f"/recall note {BAD}")):
        r = cli(*args, env=MEMORY)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-400:]
        assert f"note {SHOWN} x" in r.stdout
    r = cli("memory", "forget", f"zzz {BAD}", env=MEMORY)  # matches nothing: an inline error, no codec error
    one_line_error(r)
    assert "codec" not in r.stderr and f"zzz {SHOWN}" in r.stderr



@pytest.mark.promise("cli_errors")
def test_inbox_edit_stores_undecodable_bytes_as_replacement_characters(data_dir: Path) -> None:
    # Red team 31, finding 9: `inbox edit 1 x<bytes>y` died with a UnicodeEncodeError traceback, and
    # `/inbox edit` answered with the raw codec error; /goal, /remember … stored U+FFFD for them.
    env = {"NEOTASK_PROVIDER": "scripted"}
    assert cli("send", "Remember: I live in Berlin", env=env).returncode == 0

    def text() -> str:
        r = cli("inbox", "list", "--json", env=env)
        assert r.returncode == 0, r.stderr
        (entry,) = json.loads(r.stdout)
        return str(entry["text"])

    r = cli("inbox", "edit", "1", f"x{BAD}\udcffy", env=env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-400:]
    assert text() == f"x{SHOWN}\ufffdy"
    r = cli("send", f"/inbox edit 1 I live in {BAD} Berlin", env=env)
    assert r.returncode == 0 and "codec" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert text() == f"I live in {SHOWN} Berlin"

@pytest.mark.promise("cli_errors")
def test_a_memory_file_name_that_is_not_utf8_is_refused_and_never_read(data_dir: Path) -> None:
    # `memory add --file memory/c<bytes>.md` wrote the file, then failed; every later memory search
    # (and `forget`) then died on that name with a UnicodeEncodeError traceback.
    r = cli("memory", "add", "a note", "--file", f"memory/c{BAD}.md", env=MEMORY)
    one_line_error(r)
    assert "not valid UTF-8" in r.stderr
    r = cli("memory", "add", "a note", "--scope", f"s{BAD}", env=MEMORY)
    one_line_error(r)
    memory = data_dir / "agents" / "main" / "memory"
    assert not memory.exists() or not list(memory.iterdir())
    memory.mkdir(parents=True, exist_ok=True)  # one made by another program
    (memory / f"b{BAD}.md").write_text("# notes\n\nthe kiwi crate is in the shed\n", encoding="utf-8")
    (memory / "good.md").write_text("# notes\n\nthe kiwi basket is in the kitchen\n", encoding="utf-8")
    r = cli("memory", "search", "kiwi", env=MEMORY)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-400:]
    assert "kitchen" in r.stdout and "shed" not in r.stdout
    r = cli("doctor", env=MEMORY)
    assert f"memory/b{SHOWN}.md is not indexed: a name that is not valid UTF-8" in r.stdout + r.stderr


# ----------------------------------------------------------------------------------- finding 8
@pytest.mark.promise("cli_errors")
@pytest.mark.parametrize("since", ["9999999w", "99999999999999999999d", "9" * 5000 + "m"])
def test_a_span_before_year_1_says_so(since: str) -> None:
    from neotask_tui.storage.search import parse_since

    with pytest.raises(UserError, match="reaches back before year 1"):
        parse_since(since)


def test_since_year_1_is_accepted_where_it_is_year_1() -> None:
    from datetime import UTC, timedelta, timezone

    from neotask_tui.storage.search import parse_since

    assert parse_since("0001-01-01", tz=UTC) == "0001-01-01T00:00:00.000000"
    assert parse_since("0001-01-01", tz=timezone(timedelta(hours=-5))) == "0001-01-01T05:00:00.000000"
    # local midnight east of UTC is year 0 in UTC: before every stored time (red team 30, finding 10)
    assert parse_since("0001-01-01", tz=timezone(timedelta(hours=3))) == "0001-01-01T00:00:00.000000"
    # before year 1000 the bound is still 4-digit ISO, so it compares with the stored times
    assert parse_since("0999-06-01T00:00:00+00:00") == "0999-06-01T00:00:00.000000"


@pytest.mark.promise("cli_errors")
def test_since_year_1_finds_everything_from_the_command_line(data_dir: Path) -> None:
    assert cli("send", "hello kiwi", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    for since in ("0001-01-01", "0999-06-01"):
        r = cli("search", "kiwi", "--since", since, "--json", env={"TZ": "UTC"})
        assert r.returncode == 0, r.stderr
        assert '"line": "hello kiwi"' in r.stdout, (since, r.stdout)
    r = cli("search", "kiwi", "--since", "9999999w")
    one_line_error(r)
    assert "reaches back before year 1" in r.stderr


@pytest.mark.promise("cli_errors")
def test_a_data_dir_file_named_with_dotdot_is_refused_without_a_link(data_dir: Path, tmp_path: Path) -> None:
    assert cli("send", "hello", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    named = f"{data_dir}/../data/sessions/sessions.json"
    r = cli("send", "look", "--file", named, env={"NEOTASK_PROVIDER": "scripted"})
    one_line_error(r)
    assert "is inside Neotask's data dir: " in r.stderr and "through the link" not in r.stderr, r.stderr
    (tmp_path / "to-data").symlink_to(data_dir)  # through a link it still says so
    r = cli("send", "look", "--file", str(tmp_path / "to-data" / "sessions" / "sessions.json"),
            env={"NEOTASK_PROVIDER": "scripted"})
    one_line_error(r)
    assert f"(through the link to {data_dir.resolve()}/sessions/sessions.json)" in r.stderr, r.stderr
