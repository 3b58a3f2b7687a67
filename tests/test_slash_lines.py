"""How the front ends read what was typed: a slash command or a message (``commands.split_line``), and
the command a dispatched line named."""

from __future__ import annotations

import pytest

from neotask_tui.commands import dispatch, parse, split_line
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from tests.doubles import plain_settings

KEY = "agent:main:tui:default"


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


@pytest.mark.parametrize(("line", "name", "error"), [
    ("  /HELP ", "help", False),
    ("/help one two", "help", True),  # a usage error still names its command
    ("/no-such-command --x", "no-such-command", True),
    ("//help", None, True),  # not a command
])
async def test_the_result_names_the_command_the_line_named(line: str, name: str | None, error: bool) -> None:
    engine = Engine(plain_settings(), provider=ScriptedProvider())
    try:
        res = await dispatch(engine, KEY, line)
    finally:
        await engine.aclose()
    assert (res.command, res.error) == (name, error)
