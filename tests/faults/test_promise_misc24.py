"""Red-team findings fixed on branch misc24: an API key typed as the model name, hard-linked
transcripts and what `doctor` says `--fix` will change, and what `neotask send` prints around a reply."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.helpers import cli as neotask

_WORDS = " ".join(f"word{i}" for i in range(60))
"""About 130 tokens: two such messages in a 600-token window start a compaction at the third turn."""


@pytest.mark.promise("cli_errors")
def test_send_says_an_auto_compaction_in_one_line_not_a_dict(neotask_home: Path) -> None:
    # `neotask send` printed "[Compacted] {'key': ..., 'repaired': [...], 'kind': 'Compacted'}".
    env = {"NEOTASK_PROVIDER": "scripted", "NEOTASK_CONTEXT_WINDOW_TOKENS": "600",
           "NEOTASK_CONTEXT_REPLY_RESERVE_TOKENS": "100", "NEOTASK_COMPACTION_MIN_MESSAGES": "2"}
    for text in (f"first {_WORDS}", f"second {_WORDS}"):
        assert neotask("send", text, env=env).returncode == 0
    r = neotask("send", "third", env=env)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("compacted ")]
    assert len(lines) == 1, r.stderr
    assert "{" not in r.stderr and "'kind'" not in r.stderr, r.stderr
    assert " tokens" in lines[0] and "--undo" in lines[0], lines[0]


@pytest.mark.promise("honest_counters")
def test_a_slash_command_through_send_leaves_no_counters_caught_up_line(neotask_home: Path) -> None:
    # After `neotask send "/pref ..."` (a state event, no usage, newer than the index's activity time) the
    # next command said "token counters caught up with the transcript for 1 session(s)": nothing was.
    env = {"NEOTASK_PROVIDER": "scripted"}
    assert neotask("send", "hello", env=env).returncode == 0
    assert neotask("send", "/pref answer briefly", env=env).returncode == 0
    r = neotask("send", "and now?", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert "caught up" not in r.stdout + r.stderr, r.stdout + r.stderr
