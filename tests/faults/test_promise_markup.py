"""Promise: text from a user, a model, a file or the config is never read as Rich or Textual markup,
and a link never hides its target. A ``[/dim]`` in an inbox candidate, a file name, a state value,
a slash command's arguments or a data-dir path shows as typed (no MarkupError, no style, no
``[@click=…]`` action, no OSC 8 hyperlink); a Markdown link in a reply shows where it points; log
records reach stderr inert.

The CLI runs as a subprocess with colours forced (so Rich would emit OSC 8 if a link were made);
the TUI through Pilot (what the screen shows, read from the SVG export).
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.faults.helpers import KEY, cli
from tests.tui.support import wait_for

pytestmark = pytest.mark.promise("markup")

HOSTILE: dict[str, str] = {
    "close-dim": "[/dim]",
    "close-x": "[/x]",
    "link": "[link=http://evil.example/l]x[/link]",
    "bold-red": "[bold red]",
    "click": "[@click=app.quit]x[/]",
    "on-red": "[on red]",
    "variable": "[$accent]v",
    "backslash": "\\[b]",
    "open": "[",
    "close": "]",
    "double": "[[",
    "emoji": ":smile:",
    "md-link": "[your bank](https://evil.example/phish)",
    "md-image": "![pic](https://evil.example/i.png)",
    "autolink": "<https://evil.example/auto>",
}
IDS = list(HOSTILE)
MARKDOWN_SYNTAX = {"md-link", "md-image", "autolink", "backslash"}
"""Cases that are Markdown themselves: on a Markdown path they render as Markdown (targets shown)."""
MD_SHOWN = {
    "md-link": "your bank (https://evil.example/phish)",
    "md-image": "🌆 pic (https://evil.example/i.png)",
    "autolink": "https://evil.example/auto (https://evil.example/auto)",
    "backslash": "[b]",
}
"""How a Markdown path shows those: rendered, every target visible (a Markdown escape is Markdown)."""
URL = re.compile(r"https?://[^\s)\]>]+")
SGR = re.compile(r"\x1b\[[0-9;]*m")
OSC8 = "\x1b]8;"
COLOUR = {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLORTERM": "truecolor", "COLUMNS": "200"}


def marked(i: int, payload: str) -> str:
    return f"zzs{i:02d} {payload} zze{i:02d}"


def plain(out: str) -> str:
    """The text a terminal shows (SGR colours removed; an OSC 8 stays, to be found)."""
    return SGR.sub("", out)


def assert_shown(out: str, case: str, *, markdown: bool = False) -> None:
    """No hyperlink, no traceback; the case shown as typed (or, for Markdown syntax on a Markdown
    path, every target it names shown)."""
    assert OSC8 not in out, f"a hyperlink (OSC 8) reaches the terminal: {out!r}"
    assert "Traceback" not in out and "MarkupError" not in out, out
    text, payload = plain(out), HOSTILE[case]
    if markdown and case in MARKDOWN_SYNTAX:
        for url in URL.findall(payload):
            assert url in text, f"link target {url} hidden in {text!r}"
    else:
        assert payload in text, f"{payload!r} not shown as typed in {text!r}"


def env_for(root: Path, **extra: str) -> dict[str, str]:
    return {"NEOTASK_HOME": str(root / "home"), "NEOTASK_PROVIDER": "scripted",
            "NEOTASK_SCRIPT": str(root / "script.jsonl"), "NEOTASK_PROVIDER_PROBE_OLLAMA": "false",
            "NEOTASK_SESSION_DAILY_RESET_HOUR": "-1", "NEOTASK_MEMORY_ENABLED": "false",
            "HF_HUB_OFFLINE": "1", **COLOUR, **extra}


# ------------------------------------------------------------------------------------ REPL (finding 4)
@pytest.mark.parametrize("case", IDS)
def test_repl_slash_commands_with_markup_arguments(tmp_path: Path, case: str) -> None:
    """Garbage arguments are an inline error shown as typed; a value set is shown as typed."""
    h = HOSTILE[case]
    (tmp_path / "script.jsonl").write_text(json.dumps({"text": f"reply {h} end"}) + "\n", encoding="utf-8")
    lines = [f"/event {h}", f"/forget {h}", f"/inbox accept {h}", f"/state set {h} {h}",
             f"/state set note {h}", "/state", f"hello {h}", "/quit"]
    p = cli("chat", "--plain", env=env_for(tmp_path), stdin="\n".join(lines) + "\n")
    assert p.returncode == 0, p.stderr
    out = p.stdout + p.stderr
    assert "Traceback" not in out and "MarkupError" not in out, out
    assert OSC8 not in out
    text = plain(p.stdout)  # (the prompt echoes each line: the value set is what is checked)
    if case in MD_SHOWN:  # rendered as Markdown (every target shown)
        assert text.count(MD_SHOWN[case]) >= 1, text
    else:
        assert f"note = {h}" in text and f"reply {h} end" in text, text


# ------------------------------------------------------------------------ CLI state audit (finding 5)
async def _seed_expired_state(values: list[str]) -> None:
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    engine = Engine(load_settings(), provider=ScriptedProvider())
    try:
        for i, v in enumerate(values):
            await engine.state.set(KEY, f"step_{i:02d}", f"step {v} done", source="model", until_event="ev")
        await engine.state.fire_event(KEY, "ev")
    finally:
        await engine.aclose()


@pytest.fixture(scope="module")
def state_out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("markup-state")
    env = env_for(root)
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        (root / "script.jsonl").write_text(json.dumps({"text": "ok"}) + "\n", encoding="utf-8")
        assert cli("send", "--session", KEY, "hi", env=env).returncode == 0
        asyncio.run(_seed_expired_state(list(HOSTILE.values())))
    out = {}
    for name, args in {"audit": ("state", KEY, "--audit"), "state": ("state", KEY)}.items():
        p = cli(*args, env=env)
        out[name] = p.stdout + p.stderr if p.returncode == 0 else f"Traceback rc={p.returncode}\n{p.stderr}"
    return out


@pytest.mark.parametrize("case", IDS)
def test_state_audit_shows_values_as_typed(state_out: dict[str, str], case: str) -> None:
    assert_shown(state_out["audit"], case)


@pytest.mark.parametrize("case", IDS)
def test_state_view_never_links(state_out: dict[str, str], case: str) -> None:
    assert_shown(state_out["state"], case, markdown=True)


# ------------------------------------------------------------------ CLI file names, paths (finding 6)
SLASH_FREE = [c for c in IDS if "/" not in HOSTILE[c] and "\\" not in HOSTILE[c]]
"""Cases that can be one file name (a backslash is refused in memory file names)."""
FILE_CASES = [*SLASH_FREE, "close-x"]


@pytest.mark.parametrize("case", FILE_CASES)
def test_memory_add_shows_the_file_name_as_typed(tmp_path: Path, case: str) -> None:
    h = HOSTILE[case]
    name = f"memory/{h}.md"
    p = cli("memory", "add", "a note", "--file", name, env=env_for(tmp_path, NEOTASK_MEMORY_ENABLED="true"))
    assert p.returncode == 0, p.stderr
    assert_shown(p.stdout + p.stderr, case)
    assert name in plain(p.stdout)


@pytest.mark.parametrize("case", [c for c in IDS if "/" not in HOSTILE[c]])
def test_doctor_shows_an_orphan_name_as_typed(tmp_path: Path, case: str) -> None:
    env = env_for(tmp_path)
    (tmp_path / "script.jsonl").write_text(json.dumps({"text": "ok"}) + "\n", encoding="utf-8")
    assert cli("send", "--session", KEY, "hi", env=env).returncode == 0
    sessions = tmp_path / "home" / "data" / "sessions"
    live = next(sessions.glob("*.jsonl"))
    (sessions / f"{HOSTILE[case]}.jsonl").write_bytes(live.read_bytes())
    p = cli("doctor", env=env)
    assert p.returncode == 1, p.stderr  # problems found, reported — not a crash
    assert_shown(p.stdout + p.stderr, case)
    assert f"orphaned live transcript {HOSTILE[case]}.jsonl" in plain(p.stdout)


@pytest.mark.parametrize("case", [c for c in IDS if "//" not in HOSTILE[c]])
def test_doctor_with_markup_in_the_home_path(tmp_path: Path, case: str) -> None:
    home = tmp_path / f"home{HOSTILE[case]}x"
    p = cli("doctor", env=env_for(tmp_path, NEOTASK_HOME=str(home)))
    assert p.returncode in (0, 1), p.stderr
    assert_shown(p.stdout + p.stderr, case)


# ---------------------------------------------------------------------- links in replies (finding 7)
LINKS = {
    "md-link": ("See [your bank](https://evil.example/phish)", "https://evil.example/phish"),
    "md-image": ("look ![pic](https://evil.example/i.png)", "https://evil.example/i.png"),
    "linked-image": ("[![pic](https://evil.example/i.png)](https://evil.example/to)", "https://evil.example/to"),
    "titled": ('[docs](https://evil.example/t "Official docs")', "https://evil.example/t"),
    "reference": ("[home][r]\n\n[r]: https://evil.example/ref", "https://evil.example/ref"),
    "autolink": ("<https://evil.example/auto>", "https://evil.example/auto"),
    "code-text": ("[`pip install x`](https://evil.example/code)", "https://evil.example/code"),
}


@pytest.fixture(scope="module")
def link_out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("markup-links")
    env = env_for(root)
    reply = "**links**\n\n" + "\n\n".join(f"zz{name} {md}" for name, (md, _) in LINKS.items())  # ** : rendered
    (root / "script.jsonl").write_text(json.dumps({"text": reply}) + "\n", encoding="utf-8")
    out: dict[str, str] = {}
    p = cli("chat", "--plain", env=env, stdin="hello\n/quit\n")
    out["repl"] = p.stdout + p.stderr
    p = cli("transcript", KEY, env=env)
    out["transcript"] = p.stdout + p.stderr
    return out


@pytest.mark.parametrize(("case", "path"), [(c, p) for c in LINKS for p in ("repl", "transcript")])
def test_cli_links_show_their_target(link_out: dict[str, str], case: str, path: str) -> None:
    out = link_out[path]
    assert OSC8 not in out, f"hidden hyperlink: {out!r}"
    assert LINKS[case][1] in plain(out)


@pytest.mark.parametrize("case", IDS)
def test_rich_markdown_helper_never_links(case: str) -> None:
    """What every plain Markdown path prints through (replies, transcripts, state, inbox, compaction)."""
    import io

    from neotask_tui.text.console import InertConsole, markdown

    buf = io.StringIO()
    InertConsole(file=buf, force_terminal=True, color_system="truecolor", width=200).print(
        markdown(f"a {HOSTILE[case]} b"))
    assert_shown(buf.getvalue(), case, markdown=True)


@pytest.mark.parametrize(("reply", "shown"), [
    ("see [your bank](http://evil.example\x1b) now", "see your bank (http://evil.example␛) now"),
    ("[x](<http://a.example/\x1b[31m>)", "x (http://a.example/␛[31m)"),
], ids=["md-link", "csi-in-path"])
def test_rich_markdown_shows_a_target_holding_a_control_as_written(reply: str, shown: str) -> None:
    """Red team 39: the target was IDNA-encoded (``http://evil.xn--example-ws3d``) or percent-encoded
    (``%E2%90%9B``) around the control made visible: now it is shown as written."""
    import io

    from neotask_tui.text.console import InertConsole, markdown

    buf = io.StringIO()
    InertConsole(file=buf, color_system=None, width=200).print(markdown(reply))
    assert buf.getvalue().strip() == shown


# ----------------------------------------------------------------------------- logging (finding 8)
def test_log_records_reach_stderr_inert(tmp_path: Path) -> None:
    cfg = tmp_path / "home" / "config"
    cfg.mkdir(parents=True)
    uri = str(tmp_path / "db") + "\x1b]0;T\x07"
    (cfg / "config.toml").write_text(f"[memory]\ndb_uri = {json.dumps(uri)}\n", encoding="utf-8")
    p = cli("memory", "add", "hello", env=env_for(tmp_path, NEOTASK_MEMORY_ENABLED="true"))
    out = p.stdout + p.stderr
    assert "\x1b" not in out and "\x07" not in out, repr(out)
    assert "␛]0;T␇" in out, repr(out)


# ------------------------------------------------------------------------- TUI (findings 1, 3, 7)
async def _run_tui(root: Path) -> dict[str, Any]:
    from neotask_tui.config import Settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.engine.state.inbox import Candidate
    from neotask_tui.providers.scripted import ScriptedProvider
    from neotask_tui.tui.app import make_app

    s = Settings()
    s.memory.enabled = False
    s.provider.name = "scripted"
    s.context.window_tokens = 32768
    provider = ScriptedProvider()
    values = [marked(i, h) for i, h in enumerate(HOSTILE.values())]
    provider.queue({"text": "", "tool_calls": [
        {"id": f"c{i}", "name": "propose_memory", "arguments": {"text": f"I prefer {v} tabs", "scope": "user"}}
        for i, v in enumerate(values[:2])]})
    provider.queue({"text": "\n\n".join(values) + "\n\n" + "\n\n".join(md for md, _ in LINKS.values())})
    engine = Engine(s, provider=provider)
    for i, v in enumerate(values):
        await engine.state.set(KEY, f"note_{i:02d}", v, source="model")
        await engine.state.inbox_add("main", Candidate(text=v, scope="user", reason=f"why {i}", origin="model",
                                                       key=KEY))
    app = make_app(s, engine=engine, key=KEY)
    shots: dict[str, Any] = {}

    try:
        async with app.run_test(size=(200, 400), notifications=True) as pilot:
            await wait_for(pilot, app.ready.is_set)
            app.main.query_one("#prompt-input").text = "hi"  # type: ignore[attr-defined]
            await pilot.press("enter")
            await wait_for(pilot, lambda: provider.pending == 0 and not app.streaming)
            await pilot.pause(0.3)
            for v in values:
                app.notify(f"memory/{v}.md is not indexed", title=v, timeout=60)
            await pilot.pause(0.3)
            shots["main"] = app.export_screenshot()
            from textual.widgets._toast import Toast

            shots["toasts"] = "\n".join(_plain(t.render()) for t in app.screen.query(Toast))
            app.clear_notifications()
            await pilot.press("ctrl+b")
            await pilot.pause(0.5)
            shots["inbox"] = app.export_screenshot()
            shots["running"] = app.is_running
    except Exception as e:  # a crash is what the promise forbids: every case fails with it
        shots["crash"] = f"{type(e).__name__}: {e}"
    await engine.aclose()
    return shots


def _plain(visual: Any) -> str:
    return str(getattr(visual, "plain", visual))


def screen_text(svg: str) -> str:
    """The screen's text, one space for any run of blanks, wraps and panel borders."""
    shown = html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")
    return re.sub(r"[\s▏█]+", " ", shown)


@pytest.fixture(scope="module")
def tui(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("markup-tui")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEOTASK_HOME", str(root / "home"))
        mp.setenv("NEOTASK_SESSION_DAILY_RESET_HOUR", "-1")
        return asyncio.run(_run_tui(root))


@pytest.mark.parametrize("case", IDS)
def test_tui_never_reads_text_as_markup(tui: dict[str, Any], case: str) -> None:
    assert "crash" not in tui, tui.get("crash")
    i, h = IDS.index(case), HOSTILE[case]
    main, shown = screen_text(tui["main"]), marked(i, h)
    # The reply (Markdown: rendered, every target visible), the state panel, each notification.
    assert case in MARKDOWN_SYNTAX or main.count(shown) >= 2, f"{case}: reply not shown as typed"
    for url in URL.findall(h):
        assert url in main, f"{case}: link target hidden"
    assert f"note_{i:02d} {shown}" in main, f"{case}: state value not shown as typed"
    toasts = tui["toasts"].splitlines()
    assert shown in toasts, f"{case}: notification title not shown as typed"
    assert f"memory/{shown}.md is not indexed" in toasts, f"{case}: notification not shown as typed"
    assert shown in screen_text(tui["inbox"]), f"{case}: inbox cell not shown as typed"
    assert "\x1b]8;" not in tui["main"] + tui["inbox"]


def test_tui_click_markup_runs_nothing(tui: dict[str, Any]) -> None:
    assert tui.get("running") is True  # ``[@click=app.quit]`` in shown text never became an action


@pytest.mark.parametrize("case", list(LINKS))
def test_tui_links_show_their_target(tui: dict[str, Any], case: str) -> None:
    assert "crash" not in tui, tui.get("crash")
    assert LINKS[case][1] in screen_text(tui["main"])
