"""Red team 32, finding 8: ``search --limit 5.0`` (and ``/search … --limit 5.0``) was refused, while
every other integer flag (``--k 5.0``, ``--days 30.0``) reads "digits and a point" as README says
("an integer in the environment or a CLI flag is digits and a point, no exponent")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neotask_tui.commands.search import parse_limit
from tests.faults.helpers import cli as neotask

_SCRIPTED = {"NEOTASK_PROVIDER": "scripted"}


@pytest.mark.parametrize(("text", "n"), [("5", 5), ("5.0", 5), ("05.00", 5), ("500", 500), ("+3", 3)])
def test_limit_reads_a_typed_integer_as_every_integer_flag_does(text: str, n: int) -> None:
    assert parse_limit(text) == n


@pytest.mark.parametrize("text", ["0", "501", "4.7", "5e0", "five", "", "-1", "9" * 5000])
def test_limit_refuses_what_is_no_whole_number_in_range(text: str) -> None:
    with pytest.raises(ValueError, match="--limit takes a whole number from 1 to 500"):
        parse_limit(text)


@pytest.mark.promise("cli_errors")
def test_search_limit_5_0_is_5_in_the_cli_and_the_slash_command(neotask_home: Path) -> None:
    assert neotask("send", "zulu one", env=_SCRIPTED).returncode == 0
    r = neotask("search", "zulu", "--limit", "5.0", "--json", env=_SCRIPTED)
    assert r.returncode == 0 and json.loads(r.stdout)["hits"], r.stderr
    r = neotask("send", "/search zulu --limit 5.0", env=_SCRIPTED)
    assert r.returncode == 0 and "--limit" not in r.stderr, r.stderr
    r = neotask("search", "zulu", "--limit", "4.7", env=_SCRIPTED)
    assert r.returncode == 2 and "--limit takes a whole number from 1 to 500, not '4.7'" in r.stderr, r.stderr
