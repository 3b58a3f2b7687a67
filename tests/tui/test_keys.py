"""The app by keyboard alone: the focus cycle, the panels' keys, scrolling, the prompt's keys, and
the layout on small terminals (issue #17, items 1 and 5). Keys go through ``pilot.press`` (the
bindings), never through the actions directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events
from textual.widget import Widget
from textual.widgets import OptionList

from neotask_tui.engine.events import RecallReceipt
from neotask_tui.engine.facade import Engine
from neotask_tui.tui.app import NeotaskApp
from neotask_tui.tui.screens.context import ContextScreen
from neotask_tui.tui.screens.modals import InputModal, TextModal
from neotask_tui.tui.widgets.prompt import Prompt
from neotask_tui.tui.widgets.side import RecallSidebar
from neotask_tui.tui.widgets.transcript import MessageView, Transcript
from tests.tui.support import SIZE, wait_for

RECALLED = [RecallReceipt(id="m1", text="User prefers Textual for terminal UIs.", source="MEMORY.md:3-4",
                          score=0.82, scope="user")]


def _region(app: NeotaskApp) -> str | None:
    """Which region of the main screen has focus (by the widgets' ids, nothing of the app's)."""
    focused = app.focused
    ids = {node.id for node in focused.ancestors_with_self} if focused is not None else set()
    return next((name for name in ("prompt", "state", "recall", "transcript") if name in ids), None)


async def _regions_after(pilot: Any, app: NeotaskApp, key: str, times: int) -> list[str | None]:
    """The focused region after each of ``times`` presses of ``key``."""
    seen: list[str | None] = []
    for _ in range(times):
        await pilot.press(key)
        await pilot.pause()
        seen.append(_region(app))
    return seen


def _long_session(engine: Engine, n: int = 80) -> None:
    sid = engine.current_record(engine.default_key()).session_id
    engine.store.append_many(sid, [("message", {"role": "user" if i % 2 == 0 else "assistant",
                                                "content": f"message {i}\n\nwith a second paragraph"})
                                   for i in range(n)])


async def _ready(pilot: Any, app: NeotaskApp) -> None:
    await wait_for(pilot, app.ready.is_set, "engine")
    await pilot.pause()


async def test_f6_cycles_every_region_from_any_widget_and_shift_f6_goes_back(
        app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        assert _region(app) == "prompt"
        # On main the prompt's TextArea took F6 (select line): focus never left the prompt.
        assert await _regions_after(pilot, app, "f6", 4) == ["state", "recall", "transcript", "prompt"]
        assert await _regions_after(pilot, app, "shift+f6", 4) == ["transcript", "recall", "state", "prompt"]


async def test_text_typed_in_the_same_read_as_f6_lands_in_the_prompt(app_factory: Callable[..., NeotaskApp]) -> None:
    """A terminal read can hold F6 and the keys after it (a fast typist, a paste, tmux send-keys): they
    are queued together, so the focus must move before the next key is handled, not in a callback
    queued behind them (the newcomer walk lost "/help" to the transcript this way)."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        assert await _regions_after(pilot, app, "f6", 3) == ["state", "recall", "transcript"]
        app.post_message(events.Key("f6", None))
        for ch in "/help":
            app.post_message(events.Key("slash" if ch == "/" else ch, ch))
        await pilot.pause()
        assert _region(app) == "prompt"
        assert app.query_one(Prompt).text == "/help"


async def test_the_panels_keys_work_once_f6_reaches_them(app_factory: Callable[..., NeotaskApp],
                                                          engine: Engine) -> None:
    key = engine.default_key()
    await engine.state.set_goal(key, "ship the keyboard fixes")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        await wait_for(pilot, lambda: app.view.state.entries, "the state entry")
        app.main.query_one(RecallSidebar).show("keys", RECALLED)
        await pilot.press("f6")  # the state panel
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, InputModal), "the edit modal")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, InputModal), "the modal closed")
        assert _region(app) == "state"
        await pilot.press("f6")  # the recall sidebar
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal), "the recalled passage")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TextModal), "the passage closed")
        assert _region(app) == "recall"


async def test_page_keys_in_the_prompt_scroll_the_transcript(app_factory: Callable[..., NeotaskApp],
                                                             engine: Engine) -> None:
    _long_session(engine)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        transcript = app.main.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y,
                       "the transcript at its end")
        bottom = transcript.scroll_y
        await pilot.press("pageup")
        await wait_for(pilot, lambda: transcript.scroll_y < bottom, "a page up")
        assert _region(app) == "prompt"  # the prompt keeps focus
        paged = transcript.scroll_y
        await pilot.press("ctrl+down")
        await wait_for(pilot, lambda: transcript.scroll_y > paged, "a few lines down")
        await pilot.press("pagedown", "pagedown")
        await wait_for(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, "back at the end")
        await pilot.press("ctrl+up")
        await wait_for(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y, "a few lines up")


async def test_page_keys_scroll_the_transcript_when_it_has_focus(app_factory: Callable[..., NeotaskApp],
                                                                 engine: Engine) -> None:
    _long_session(engine)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        transcript = app.main.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.max_scroll_y > 0, "a long transcript")
        await pilot.press("shift+f6")  # prompt → transcript, backwards
        assert _region(app) == "transcript"
        bottom = transcript.scroll_y
        await pilot.press("pageup")
        await wait_for(pilot, lambda: transcript.scroll_y < bottom, "a page up")
        # Home reaches the top of what is mounted; reaching it mounts the previous page above (the
        # view keeps its place), so a long session takes one Home per page.
        for _ in range(20):
            await pilot.press("home")
            await pilot.pause(0.3)
            if transcript.scroll_y == 0 and transcript.entries and transcript.query(MessageView).first().entry is \
                    transcript.entries[0]:
                break
        assert transcript.scroll_y == 0
        assert transcript.query(MessageView).first().entry is transcript.entries[0]


async def test_the_context_screen_scrolls_by_keyboard(app_factory: Callable[..., NeotaskApp],
                                                      engine: Engine) -> None:
    _long_session(engine, 40)
    app = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot, app)
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen), "the context screen")
        await pilot.pause()
        messages = app.screen.query_one("#context-messages", Widget)
        assert messages.max_scroll_y > 0
        await pilot.press("pagedown")
        # On main the ledger table had focus and took the key: the messages never moved.
        await wait_for(pilot, lambda: messages.scroll_y > 0, "the messages scrolled")
        await pilot.press("end")
        await wait_for(pilot, lambda: messages.scroll_y == messages.max_scroll_y, "the end")


async def test_text_typed_right_after_ctrl_j_lands_on_the_new_line(app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        prompt = app.main.query_one(Prompt)
        # A terminal delivers the keys in one burst; pilot.press would wait for each to be handled.
        for key, char in (("a", "a"), ("b", "b"), ("ctrl+j", None), ("c", "c"), ("d", "d")):
            app.post_message(events.Key(key, char))
        await wait_for(pilot, lambda: "d" in prompt.text, "the typed text")
        assert prompt.text == "ab\ncd"


async def test_ctrl_j_remapped_still_inserts_in_order(app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory(bindings={"prompt_newline": "ctrl+t"})
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        prompt = app.main.query_one(Prompt)
        for key, char in (("x", "x"), ("ctrl+t", None), ("y", "y")):
            app.post_message(events.Key(key, char))
        await wait_for(pilot, lambda: "y" in prompt.text, "the typed text")
        assert prompt.text == "x\ny"


# ----------------------------------------------------------------------------------- small terminals

def _width(app: NeotaskApp, selector: str) -> int:
    return app.main.query_one(selector, Widget).region.width


async def test_hiding_both_panels_gives_the_transcript_the_full_width(app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory()
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(pilot, app)
        assert _width(app, "#transcript") == 100  # beside the 40-column side column
        await pilot.press("f2", "f3")
        await pilot.pause()
        # On main the empty side column kept its 40 columns.
        assert _width(app, "#transcript") == 140
        await pilot.press("f6")
        assert _region(app) == "transcript"  # hidden panels are skipped
        await pilot.press("f3")
        await pilot.pause()
        assert _width(app, "#transcript") == 100 and app.view.recall.region.width > 0


async def test_on_a_small_terminal_the_panels_open_over_a_full_width_transcript(
        app_factory: Callable[..., NeotaskApp]) -> None:
    for size in ((80, 24), (60, 20)):
        app = app_factory()
        async with app.run_test(size=size) as pilot:
            await _ready(pilot, app)
            # On main the transcript was 38 columns wide at 80×24 and 18 at 60×20.
            assert _width(app, "#transcript") == size[0]
            assert app.view.state.region.width == 0 and app.view.recall.region.width == 0
            await pilot.press("f2")
            await pilot.pause()
            assert app.view.state.region.width > 0 and app.view.recall.region.width == 0
            assert _width(app, "#transcript") == size[0]  # over it, not beside it
            # Opened, not focused (red team 23, H1: "fine" typed after F3 forgot the recalled memory line
            # with its "f", and "ok, done" after F2 cleared the goal): what is typed goes to the prompt.
            assert _region(app) == "prompt"
            await pilot.press("d", "o", "n", "e")
            await pilot.pause()
            assert app.main.query_one(Prompt).text == "done"
            app.main.query_one(Prompt).text = ""
            await pilot.press("escape")
            await pilot.pause()
            assert app.view.state.region.width == 0 and _region(app) == "prompt"
            await pilot.press("f6")
            await pilot.pause()
            assert _region(app) == "state" and app.view.state.region.width > 0
            await pilot.press("f6")
            await pilot.pause()
            assert _region(app) == "recall" and app.view.recall.region.width > 0
            assert app.view.state.region.width == 0
            await pilot.press("f6")
            await pilot.pause()
            assert _region(app) == "transcript" and app.view.recall.region.width == 0
            await pilot.press("f3", "f3")
            await pilot.pause()
            assert app.view.recall.region.width == 0


def _footer_keys(app: NeotaskApp) -> list[Widget]:
    from textual.widgets import Footer

    return [w for w in app.main.query_one(Footer).children if w.display]


def _footer_text(app: NeotaskApp) -> str:
    return " ".join(str(w.render()) for w in _footer_keys(app))


def _footer_fits(app: NeotaskApp, width: int) -> bool:
    # outer_size is the laid-out size: a key pushed past the edge still counts (its region is clipped).
    return sum(w.outer_size.width for w in _footer_keys(app)) <= width


async def test_the_footer_names_the_keys_that_matter_and_fits(app_factory: Callable[..., NeotaskApp]) -> None:
    for size in ((140, 40), (120, 30), (100, 30), (80, 24), (60, 20)):
        app = app_factory()
        async with app.run_test(size=size) as pilot:
            await _ready(pilot, app)
            await pilot.pause()
            text = _footer_text(app)
            assert _footer_fits(app, size[0]), (size, text)
            for key in ("f1", "f6", "^q", "^p"):
                assert key in text, (size, text)
            if size[0] >= 80:
                for key in ("f4", "f5", "^o", "^n"):
                    assert key in text, (size, text)
            for panel_keys in ("e Edit", "o Open"):  # the state panel, then the recall sidebar
                await pilot.press("f6")
                await pilot.pause()
                await pilot.pause()
                text = _footer_text(app)
                assert text.startswith(panel_keys) and "f6" in text, (size, text)
                assert _footer_fits(app, size[0]), (size, text)


async def test_the_focus_cycle_reaches_a_list_with_items(app_factory: Callable[..., NeotaskApp]) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        app.main.query_one(RecallSidebar).show("keys", RECALLED)
        await pilot.press("f6", "f6")
        assert isinstance(app.focused, OptionList) and app.focused.id == "recall-list"


async def test_a_long_paste_is_folded_with_a_keyboard_toggle(app_factory: Callable[..., NeotaskApp]) -> None:
    from textual.widgets import Collapsible



    paste = "\n".join(f"line {i} of the log" for i in range(1500))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        app.main.query_one(Prompt).text = paste
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.streaming and [v for v in app.query(MessageView)
                                                               if v.entry.kind == "assistant"], "the reply")
        await pilot.pause()
        view = next(v for v in app.query(MessageView) if v.entry.kind == "user")
        assert view.entry.text == paste  # the entry (and the transcript) keep every line
        # On main all 1,500 lines were shown.
        assert view.outer_size.height < 20
        fold = view.query_one(Collapsible)
        assert "1,500 lines" in str(fold.title) and fold.collapsed
        await pilot.press("shift+tab")  # from the prompt, back to the newest message (the reply; c copies it)
        assert isinstance(app.focused, MessageView) and app.focused.entry.kind == "assistant"
        await pilot.press("shift+tab")  # then the paste's toggle
        assert app.focused is not None and fold in app.focused.ancestors
        await pilot.press("enter")
        await wait_for(pilot, lambda: not fold.collapsed and view.outer_size.height >= 1500, "the whole paste")
        await pilot.press("enter")
        await wait_for(pilot, lambda: fold.collapsed and view.outer_size.height < 20, "folded again")


async def test_a_command_typed_fast_and_entered_runs_as_typed(app_factory: Callable[..., NeotaskApp]) -> None:


    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        await pilot.press("slash")  # the suggestions show every command
        await wait_for(pilot, lambda: app.main.query_one(Prompt).suggesting, "the suggestions")
        # The rest in one burst, as a terminal delivers typing: on main Enter completed with the list
        # still for "/" (its first command), not "/help".
        before = len([v for v in app.query(MessageView) if v.entry.kind == "command"])  # the welcome
        for ch in "theme":
            app.post_message(events.Key(ch, ch))
        app.post_message(events.Key("enter", "\r"))
        await wait_for(pilot, lambda: len([v for v in app.query(MessageView) if v.entry.kind == "command"]) > before,
                       "the command's output")
        views = [v for v in app.query(MessageView) if v.entry.kind == "command"]
        assert views[-1].entry.title == "/theme"


async def test_the_compaction_review_and_a_transcript_view_scroll_by_keyboard(
        app_factory: Callable[..., NeotaskApp], engine: Engine) -> None:
    from neotask_tui.tui.screens.compact_review import CompactReviewScreen
    from neotask_tui.tui.screens.sessions import TranscriptScreen

    _long_session(engine, 60)
    app = app_factory()
    async with app.run_test(size=(80, 16)) as pilot:  # short enough that the review's text overflows
        await _ready(pilot, app)
        await pilot.press("f5")
        await wait_for(pilot, lambda: isinstance(app.screen, CompactReviewScreen), "the review", limit=120)
        await pilot.pause()
        body = app.screen.query_one("#review-body", Widget)
        assert body.max_scroll_y > 0
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: body.scroll_y > 0, "the review scrolled")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CompactReviewScreen), "the review closed")
        sid = engine.current_record(engine.default_key()).session_id
        await app.push_screen(TranscriptScreen(engine, sid))
        await pilot.pause()
        view = app.screen.query_one(Transcript)
        await wait_for(pilot, lambda: view.max_scroll_y > 0 and view.scroll_y == view.max_scroll_y, "the transcript")
        await pilot.press("pageup")
        await wait_for(pilot, lambda: view.scroll_y < view.max_scroll_y, "the transcript scrolled")
