"""Red team 39: a reply holding a raw OSC 8 hyperlink (``ESC ]8;;http://evil.example ESC \\ link …``)
was shown with ``(http://evil.xn--example-ws3d)`` after it: the ESC, made visible (``␛``), was read as
part of the host, which markdown-it IDNA-encoded into a name that appears nowhere in the text. A link
target that holds a control character is shown as written, the control visible, and is no link; any
other target is shown as before."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest
from markdown_it.token import Token

from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.text.terminal import inert
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.widgets.markdown import parser
from neotask_tui.tui.widgets.prompt import Prompt
from neotask_tui.tui.widgets.transcript import MessageView
from tests.tui.support import SIZE, wait_for

OSC8 = "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"


def _inline(markdown: str) -> tuple[str, list[str]]:
    """The text the app shows for a reply's first paragraph, and the targets it links to."""
    block = next(t for t in parser().parse(inert(markdown)) if t.type == "inline")
    children: list[Token] = block.children or []
    shown = "".join(t.content for t in children if t.type in ("text", "code_inline"))
    return shown, [str(t.attrs.get("href", "")) for t in children if t.type == "link_open"]


@pytest.mark.parametrize(("reply", "shown"), [
    (OSC8, "␛]8;;http://evil.example␛\\link␛]8;;␛\\"),
    ("see [your bank](http://evil.example\x1b) now", "see your bank (http://evil.example␛) now"),
    ("[x](<http://a.example/\x1b[31m>)", "x (http://a.example/␛[31m)"),
    ("<http://evil.example\x07>", "http://evil.example␇"),
    ("[x](http://a.example\x9b)", "x (http://a.example\\x9b)"),
], ids=["osc8", "md-link", "csi-in-path", "autolink", "c1"])
def test_a_target_holding_a_control_is_shown_as_written_and_not_linked(reply: str, shown: str) -> None:
    text, links = _inline(reply)
    assert text == shown and links == []
    assert "xn--" not in text and "%E2%90" not in text


def test_other_targets_are_linked_and_shown_as_before() -> None:
    assert _inline("see [your bank](https://evil.example/phish)") == (
        "see your bank (https://evil.example/phish)", ["https://evil.example/phish"])
    assert _inline("go to https://ok.example/a now") == ("go to https://ok.example/a now", ["https://ok.example/a"])


async def test_the_transcript_shows_a_raw_hyperlink_visibly_without_a_made_up_host(
        app_factory: Callable[..., NeotaskApp], provider: ScriptedProvider) -> None:
    provider.queue(f"Click {OSC8} please")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, "engine")
        app.query_one(Prompt).text = "a link?"
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(v.entry.kind == "assistant" for v in app.query(MessageView))
                       and not app.streaming, "the reply")
        await pilot.pause()
        svg = app.export_screenshot()
    screen = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " "))
    assert "Click ␛]8;;http://evil.example␛\\link␛]8;;␛\\ please" in screen
    assert "xn--" not in screen and "\x1b]8;" not in svg
