"""The recall reserve and the raw window a compaction keeps are shares of the usable window.

The shipped defaults must make sense for every window (a 4k local model and a 200k remote one),
explicit token counts in a user's config keep working, and doctor accepts the new settings.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from neotask_tui import paths
from neotask_tui.cli.doctor import run_doctor
from neotask_tui.config import ConfigError, Settings, load_settings
from neotask_tui.engine.context.budget import keep_recent, recall_reserve
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.tuning import KEEP_RECENT_MAX_TOKENS, RECALL_MAX_TOKENS
from tests.doubles import Clock, scripted

KEY = "agent:main:tui:default"


def settings_for(window: int) -> Settings:
    s = Settings()
    s.memory.enabled = False
    s.session.daily_reset_hour = -1
    s.context.window_tokens = window
    return s


@pytest.mark.parametrize("window", [4096 + 512, 8192, 16384 + 512, 128_000, 200_000])
def test_shipped_defaults_are_shares_of_the_usable_window_within_caps(window: int) -> None:
    s = settings_for(window)
    usable = window - s.context.reply_reserve_tokens
    assert recall_reserve(s, window) == min(usable // 2, RECALL_MAX_TOKENS)
    assert keep_recent(s, window) == min(int(usable * 0.15), KEEP_RECENT_MAX_TOKENS)
    # The two never take the whole window: the summary, the system prompt and growth keep room.
    assert recall_reserve(s, window) + keep_recent(s, window) <= 0.65 * usable


def test_floors_never_take_a_tiny_window() -> None:
    s = settings_for(1024)  # 512 usable
    assert keep_recent(s, 1024) == 128  # the 300-token floor, but never more than a quarter
    s.memory.recall_share = 0.01
    assert recall_reserve(s, 1024) == 128
    s.memory.recall_share = 0.0
    assert recall_reserve(s, 1024) == 0  # a share of 0 turns the reserve off


def test_explicit_token_settings_still_win_whatever_the_window() -> None:
    s = settings_for(200_000)
    s.memory.recall_budget_tokens = 800
    s.compaction.keep_recent_tokens = 1500
    assert (recall_reserve(s, 200_000), keep_recent(s, 200_000)) == (800, 1500)


def _clock() -> Clock:
    return Clock(datetime(2025, 3, 1, 10, 0, 1, tzinfo=UTC), auto_tick=timedelta(seconds=1))


async def _kept_tokens(s: Settings) -> int:
    eng = Engine(s, provider=ScriptedProvider(), clock=_clock())
    eng.compactor.use_model = False  # the extractive summary: no reply to script
    try:
        for i in range(40):
            scripted(eng).queue(f"Reply {i}: " + "noted and understood, carrying on with the work " * 3)
            async for _ in eng.send(f"Message {i}: " + "here is some more detail about the importer " * 3, KEY):
                pass
        res = await eng.compact(KEY)
        kept = [e for e in eng.events(KEY) if e.id in set(res.kept_ids)]
        return sum(eng.count_event(e) for e in kept)
    finally:
        await eng.aclose()


async def test_compaction_keeps_a_share_of_a_small_window() -> None:
    # A 4k window kept 1500 raw tokens before (37% of it, a compaction every few turns); now 15%.
    s = settings_for(4096 + 512)
    s.compaction.enabled = False
    scripted_reply_cost = 60
    kept = await _kept_tokens(s)
    assert keep_recent(s, 4096 + 512) - 2 * scripted_reply_cost <= kept <= keep_recent(s, 4096 + 512) == 614


async def test_compaction_honours_an_explicit_keep_recent_tokens() -> None:
    s = settings_for(4096 + 512)
    s.compaction.enabled = False
    s.compaction.keep_recent_tokens = 200
    assert 0 < await _kept_tokens(s) <= 200


def test_new_settings_load_from_config_and_env_with_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = paths.config_file()
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("[memory]\nrecall_share = 0.4\n\n[compaction]\nkeep_recent_share = 0.2\n", encoding="utf-8")
    s = load_settings(env={})
    assert (s.memory.recall_share, s.compaction.keep_recent_share) == (0.4, 0.2)
    assert load_settings(env={"NEOTASK_MEMORY_RECALL_SHARE": "0.3"}).memory.recall_share == 0.3
    with pytest.raises(ConfigError, match=r"env NEOTASK_MEMORY_RECALL_SHARE: memory.recall_share: must be between"):
        load_settings(env={"NEOTASK_MEMORY_RECALL_SHARE": "1.5"})
    with pytest.raises(ConfigError, match=r"config.toml:2: memory.recall_share: .* at most 0.9"):
        load_settings(env={"NEOTASK_COMPACTION_KEEP_RECENT_SHARE": "0.6"})
    # doctor accepts the new settings (and reports a bad one as a config problem).
    monkeypatch.setenv("NEOTASK_PROVIDER", "scripted")
    assert not [p for p in run_doctor()["problems"] if p.startswith("config:")]
    cfg.write_text("[memory]\nrecall_share = 2\n", encoding="utf-8")
    assert [p for p in run_doctor()["problems"] if "memory.recall_share" in p]


async def test_the_tool_definitions_count_against_the_window() -> None:
    # Red team 33, finding 3: the ~785 tokens of tool definitions sent with every call were left out of
    # the budget, the fill and the compaction trigger: at a 2,048-token window the gauge said 75% while
    # the request was about 2,800 tokens.
    s = settings_for(2048)
    eng = Engine(s, provider=ScriptedProvider(), clock=_clock())
    eng.compactor.use_model = False
    try:
        tools = eng.tool_tokens()
        assert tools > 0  # the scripted provider takes tools, as the remote ones do
        ctx = await eng.preview(KEY)
        assert ctx.tool_tokens == tools
        assert ctx.ledger.window == 2048 - tools
        assert ctx.ledger.budget == 2048 - tools - s.context.reply_reserve_tokens
        for i in range(12):
            scripted(eng).queue(f"Reply {i}: " + "noted, carrying on " * 10)
            async for _ in eng.send(f"note {i}: " + "alpha beta gamma delta " * 25, KEY):
                pass
            ctx = await eng.preview(KEY)
            # what a call sends — its messages and the tools — and the reply reserve fit the model's window
            assert ctx.ledger.total + tools + s.context.reply_reserve_tokens <= 2048
        assert eng.current_record(KEY).compaction_count > 0
    finally:
        await eng.aclose()
