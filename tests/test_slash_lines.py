"""How the front ends read what was typed: a slash command, or a message (``commands.split_line``)."""

from __future__ import annotations

import pytest

from neotask_tui.commands import parse, split_line


@pytest.mark.parametrize(("text", "command", "message"), [
    ("/remember the host", "/remember the host", "/remember the host"),
    ("  /state set x 1 \n", "/state set x 1", "  /state set x 1 \n"),
    ("/remember a\nsecond line", "/remember a\nsecond line", "/remember a\nsecond line"),
    ("//usr/bin is slow", None, "/usr/bin is slow"),
    ("  //usr/bin\nis slow ", None, "  /usr/bin\nis slow "),  # one slash dropped, nothing else
    ("///", None, "//"),
    ("hello /there", None, "hello /there"),
    ("a\n/not a command", None, "a\n/not a command"),
    ("   ", None, "   "),
])
def test_a_slash_is_a_command_and_two_are_a_message_that_starts_with_one(
        text: str, command: str | None, message: str) -> None:
    assert split_line(text) == (command, message)
    assert (parse(text) is None) == (command is None)  # the registry reads a line the same way
