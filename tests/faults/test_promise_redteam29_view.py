"""Red team 29, finding 3: a transcript is shown as stored. README: "the transcript keeps every
line", text "shows as typed", "Escape sequences are inert on every display path … shown with the
controls made visible (``␛`` …)".

``neotask transcript`` rendered messages as Markdown with Rich: an image moved to the front of its
line and the words that then overflowed the width were lost ("iota kappa lambda mu nu xi omicron"
at 80 columns), ``&lt;b&gt;`` showed as ``<b>`` and ``&#x1b;`` as ``�`` (also in an attached
file's fence), ``<b>`` was dropped. The Markdown still rendered elsewhere (the REPL, the app) keeps
every word and shows entities and HTML as typed.
"""

from __future__ import annotations

import asyncio
import html
import io
import json
import re
from pathlib import Path

import pytest

from tests.faults.helpers import KEY, cli
from tests.tui.support import wait_for

pytestmark = pytest.mark.promise("terminal")

SCRIPTED = {"NEOTASK_PROVIDER": "scripted", "NEOTASK_SESSION_DAILY_RESET_HOUR": "-1", "COLUMNS": "80"}
WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
         "tau upsilon phi chi psi omega ![pic](https://img.example/p.png) ONE TWO THREE FOUR FIVE SIX "
         "SEVEN EIGHT NINE TEN ELEVEN TWELVE")
ENTITIES = "in HTML write &#x1b; or &#27; or &lt;b&gt; and <b>bold</b> and \\x1b"
ESC = "raw \x1b]0;PWN\x07 title"


def one_line(text: str) -> str:
    """The words of ``text`` as one line (a terminal or a renderer wraps at its width)."""
    return " ".join(text.split())


def send(tmp_path: Path, text: str, *args: str) -> None:
    """One turn whose reply is ``text`` again (the echo would cut it at 200 characters)."""
    (tmp_path / "script.jsonl").write_text(json.dumps({"text": text}) + "\n", encoding="utf-8")
    r = cli("send", text, *args, env={**SCRIPTED, "NEOTASK_SCRIPT": str(tmp_path / "script.jsonl")})
    assert r.returncode == 0, r.stderr


@pytest.fixture
def transcript_out(neotask_home: Path, tmp_path: Path) -> str:
    (tmp_path / "notes.txt").write_text("fenced &#x1b;]0;PWN&#x7; and &lt;i&gt;\n", encoding="utf-8")
    send(tmp_path, WORDS)
    send(tmp_path, ENTITIES, "--file", str(tmp_path / "notes.txt"))
    send(tmp_path, ESC)
    r = cli("transcript", KEY, env=SCRIPTED)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_transcript_shows_every_word_where_it_was_typed(transcript_out: str) -> None:
    shown = one_line(transcript_out)
    assert shown.count(WORDS) == 2  # the message and the reply, each as stored
    assert "🌆" not in shown


def test_transcript_shows_entities_and_html_as_stored(transcript_out: str) -> None:
    assert transcript_out.count(f"\n{ENTITIES}\n") == 2
    assert "fenced &#x1b;]0;PWN&#x7; and &lt;i&gt;" in transcript_out  # the attached file, in its fence
    assert "�" not in transcript_out


def test_transcript_shows_controls_made_visible(transcript_out: str) -> None:
    assert transcript_out.count("raw ␛]0;PWN␇ title") == 2
    assert "\x1b" not in transcript_out and "\x07" not in transcript_out


def test_the_markdown_export_holds_the_text_as_stored(neotask_home: Path, tmp_path: Path) -> None:
    for text in (WORDS, ENTITIES):
        send(tmp_path, text)
    out = tmp_path / "t.md"
    r = cli("transcript", KEY, "--format", "md", "--output", str(out), env=SCRIPTED)
    assert r.returncode == 0, r.stderr
    body = out.read_text(encoding="utf-8")
    for text in (WORDS, ENTITIES):
        assert body.count(f"\n{text}\n") == 2


# --------------------------------------------------------------- Markdown rendered for the plain REPL
def _rich(text: str, width: int = 80) -> str:
    from neotask_tui.text.console import InertConsole, markdown

    buf = io.StringIO()
    InertConsole(file=buf, width=width).print(markdown(text))
    return buf.getvalue()


def test_rich_markdown_keeps_every_word_and_shows_an_image_where_it_stands() -> None:
    shown = one_line(_rich(WORDS))
    assert shown == WORDS.replace("![pic](https://img.example/p.png)", "🌆 pic (https://img.example/p.png)")


def test_rich_markdown_shows_entities_and_html_as_typed() -> None:
    assert one_line(_rich(ENTITIES)) == ENTITIES
    assert one_line(_rich("<div>\nblock html\n</div>\n\n**bold** &amp;")) == "<div> block html </div> bold &amp;"


def test_the_repl_shows_a_rendered_reply_with_its_words(tmp_path: Path) -> None:
    reply = f"**rendered**\n\n{WORDS}\n\n{ENTITIES}"  # ** : the REPL renders it after the raw stream
    (tmp_path / "script.jsonl").write_text(json.dumps({"text": reply}) + "\n", encoding="utf-8")
    env = {**SCRIPTED, "NEOTASK_HOME": str(tmp_path / "home"), "NEOTASK_SCRIPT": str(tmp_path / "script.jsonl")}
    r = cli("chat", "--plain", env=env, stdin="hello\n/quit\n")
    assert r.returncode == 0, r.stderr
    rendered = one_line(r.stdout.split("rendered", 1)[1].split("─" * 10)[-1])  # after the rule
    assert WORDS.replace("![pic](https://img.example/p.png)", "🌆 pic (https://img.example/p.png)") in rendered
    assert ENTITIES in rendered and "�" not in r.stdout


# ------------------------------------------------------------------------------------------- the app
async def _app_reply(root: Path, reply: str) -> str:
    from neotask_tui.config import Settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider
    from neotask_tui.tui.app import make_app

    s = Settings()
    s.memory.enabled = False
    s.provider.name = "scripted"
    s.context.window_tokens = 32768
    provider = ScriptedProvider()
    provider.queue({"text": reply})
    engine = Engine(s, provider=provider)
    app = make_app(s, engine=engine, key=KEY)

    try:
        async with app.run_test(size=(80, 60)) as pilot:
            await wait_for(pilot, app.ready.is_set)
            app.main.query_one("#prompt-input").text = "hi"  # type: ignore[attr-defined]
            await pilot.press("enter")
            await wait_for(pilot, lambda: provider.pending == 0 and not app.streaming)
            await pilot.pause(0.3)
            svg = app.export_screenshot()
    finally:
        await engine.aclose()
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ").replace("█", " ").split())


def test_the_app_shows_a_reply_s_entities_and_html_as_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOTASK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NEOTASK_SESSION_DAILY_RESET_HOUR", "-1")
    shown = asyncio.run(_app_reply(tmp_path, f"{WORDS}\n\n{ENTITIES}"))
    assert ENTITIES in shown and "�" not in shown
    assert WORDS.replace("![pic](https://img.example/p.png)", "🖼 pic (https://img.example/p.png)") in shown
