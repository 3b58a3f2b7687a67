"""Model table: context windows, prices, user overrides, unknown models."""

from __future__ import annotations

from pathlib import Path

import pytest

from neotask_tui import paths
from neotask_tui.providers.base import Usage
from neotask_tui.providers.models import (
    DEFAULT_CONTEXT_WINDOW,
    ModelTableError,
    cost_usd,
    lookup_model,
    model_table,
    override_file,
)


def write_override(text: str) -> Path:
    path = override_file()
    paths.ensure_dir(path.parent)
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_table_is_complete() -> None:
    table = model_table()
    for name in ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3-mini", "claude-3-5-sonnet", "claude-sonnet-4",
                 "llama3.2", "qwen2.5", "mistral", "smollm2-135m-instruct"):
        assert name in table, name
    for name, entry in table.items():
        assert entry["context_window"] > 0, name
        if entry["provider"] in ("openai", "anthropic"):  # priced by genai-prices, not by us
            assert not {"input", "output", "cache_read", "cache_write"} & entry.keys(), name
            info = lookup_model(entry["provider"], name)
            assert info.priced_by == "genai-prices" and info.input and info.output, name
        else:
            assert {"input", "output", "cache_read", "cache_write"} <= entry.keys(), name


def test_known_model_prices_and_window() -> None:
    info = lookup_model("openai", "gpt-4o")
    assert info.known and info.context_window == 128_000
    assert (info.input, info.output, info.cache_read) == (2.5, 10.0, 1.25)


def test_dated_and_tagged_names_resolve_to_the_base_entry() -> None:
    assert lookup_model("openai", "gpt-4o-2024-08-06").entry == "gpt-4o"
    assert lookup_model("openai", "gpt-4o-mini-2024-07-18").entry == "gpt-4o-mini"
    assert lookup_model("anthropic", "claude-3-5-sonnet-20241022").entry == "claude-3-5-sonnet"
    assert lookup_model("anthropic", "claude-sonnet-4-5-20250929").entry == "claude-sonnet-4-5"
    assert lookup_model("ollama", "llama3.2:3b").entry == "llama3.2"
    assert lookup_model("ollama", "qwen2.5-coder:7b").entry == "qwen2.5-coder"
    gpt4 = lookup_model("openai", "gpt-4")  # not a prefix match of "gpt-4o": genai-prices' own entry
    assert gpt4.entry == "gpt-4" and gpt4.input == 30.0 and gpt4.context_window == 8192


def test_cost_uses_all_four_prices() -> None:
    info = lookup_model("anthropic", "claude-3-5-sonnet")
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=2_000_000,
                  cache_write_tokens=400_000)
    assert cost_usd(usage, info) == pytest.approx(3.0 + 1.5 + 0.6 + 1.5)


def test_openai_cached_tokens_are_cheaper() -> None:
    info = lookup_model("openai", "gpt-4o-mini")
    plain = cost_usd(Usage(input_tokens=10_000, output_tokens=0), info)
    cached = cost_usd(Usage(input_tokens=0, cache_read_tokens=10_000), info)
    assert plain is not None and cached is not None and cached < plain


def test_unknown_model_has_no_cost_and_a_conservative_window() -> None:
    info = lookup_model("openai", "my-finetune-xyz")
    assert not info.known
    assert info.context_window == DEFAULT_CONTEXT_WINDOW == 8192
    assert (info.input, info.output, info.cache_read, info.cache_write) == (None, None, None, None)
    assert cost_usd(Usage(input_tokens=10, output_tokens=5), info) is None
    assert cost_usd(Usage(), info) is None


def test_model_under_another_provider_keeps_window_but_not_prices() -> None:
    info = lookup_model("openai", "llama3.2")  # e.g. served by vLLM through the OpenAI API
    assert info.context_window == 4096 and not info.known
    assert cost_usd(Usage(input_tokens=10), info) is None


def test_local_and_ollama_are_free_even_when_unknown() -> None:
    assert cost_usd(Usage(input_tokens=500, output_tokens=50), lookup_model("local", "smollm2-135m-instruct")) == 0.0
    assert lookup_model("local", "smollm2-135m-instruct").context_window == 8192
    assert cost_usd(Usage(input_tokens=500, output_tokens=50), lookup_model("local", "some-gguf")) == 0.0
    assert cost_usd(Usage(input_tokens=500), lookup_model("ollama", "brand-new-model:7b")) == 0.0


def test_override_file_merges_field_by_field_and_adds_models() -> None:
    write_override(
        '[models."gpt-4o"]\ninput = 1.0\n\n'
        '[models."my-model"]\nprovider = "openai"\ncontext_window = 32000\ninput = 0.5\noutput = 1.5\n'
    )
    gpt = lookup_model("openai", "gpt-4o")
    assert (gpt.input, gpt.output, gpt.context_window) == (1.0, 10.0, 128_000)
    mine = lookup_model("openai", "my-model")
    assert mine.known and mine.context_window == 32_000
    assert cost_usd(Usage(input_tokens=1_000_000, output_tokens=1_000_000), mine) == pytest.approx(2.0)
    # Prices not given are unknown, so tokens in that category make the cost unknown.
    assert cost_usd(Usage(input_tokens=10, cache_read_tokens=10), mine) is None


def test_override_changes_are_picked_up() -> None:
    write_override('[models."gpt-4o"]\ncontext_window = 1000\n')
    assert lookup_model("openai", "gpt-4o").context_window == 1000
    write_override('[models."gpt-4o"]\ncontext_window = 2000\n\n# edited\n')
    assert lookup_model("openai", "gpt-4o").context_window == 2000


@pytest.mark.parametrize("text", [
    '[models."gpt-4o"\ninput = 1',                       # TOML syntax
    '[models."gpt-4o"]\ninput = "cheap"\n',             # wrong type
    '[models."gpt-4o"]\nprice = 1.0\n',                 # unknown field
    '[models."gpt-4o"]\ncontext_window = -5\n',         # bad window
    '[models."new-model"]\ninput = 1.0\n',              # new model without provider/window
    '[gpt-4o]\ninput = 1.0\n',                          # wrong layout
])
def test_bad_override_is_a_one_line_error_naming_the_file(text: str) -> None:
    path = write_override(text)
    with pytest.raises(ModelTableError) as err:
        lookup_model("openai", "gpt-4o")
    msg = str(err.value)
    assert str(path) in msg and "\n" not in msg
    assert isinstance(err.value, ValueError)


# ---------------------------------------------------------------- prices from genai-prices (#20)
M = 1_000_000


@pytest.mark.parametrize(("model", "inp", "out"), [
    ("o1-pro", 150.0, 600.0),                 # the old prefix fallback priced it as o1 ($15/$60)
    ("o1-pro-2025-03-19", 150.0, 600.0),
    ("gpt-5-pro", 15.0, 120.0),               # not gpt-5 ($1.25/$10)
    ("o3-pro", 20.0, 80.0),                   # not o3 ($2/$8)
    ("o4-mini-deep-research", 2.0, 8.0),      # not o4-mini ($1.10/$4.40)
    ("o1", 15.0, 60.0),
])
def test_pro_and_research_models_are_not_priced_as_their_prefix(model: str, inp: float, out: float) -> None:
    info = lookup_model("openai", model)
    assert info.known and info.priced_by == "genai-prices"
    assert (info.input, info.output) == (inp, out)
    assert cost_usd(Usage(input_tokens=M, output_tokens=M), info) == pytest.approx(inp + out)


def test_ordinary_models_and_their_cache_prices() -> None:
    gpt = lookup_model("openai", "gpt-4o-2024-08-06")
    # Our input_tokens are uncached; genai-prices counts cache reads inside its input tokens.
    usage = Usage(input_tokens=500_000, cache_read_tokens=500_000, output_tokens=100_000)
    assert cost_usd(usage, gpt) == pytest.approx(0.5 * 2.5 + 0.5 * 1.25 + 0.1 * 10.0)
    haiku = lookup_model("anthropic", "claude-haiku-4-5-20251001")
    usage = Usage(input_tokens=100_000, cache_read_tokens=200_000, cache_write_tokens=40_000, output_tokens=10_000)
    assert cost_usd(usage, haiku) == pytest.approx(0.1 * 1.0 + 0.2 * 0.10 + 0.04 * 1.25 + 0.01 * 5.0)


def test_tiered_price_applies_above_the_threshold() -> None:
    info = lookup_model("anthropic", "claude-sonnet-4-5-20250929")
    assert info.listed is not None and info.listed.tiered
    small = cost_usd(Usage(input_tokens=100_000, output_tokens=M), info)
    large = cost_usd(Usage(input_tokens=M, output_tokens=M), info)
    assert small == pytest.approx(0.1 * 3.0 + 15.0)
    assert large == pytest.approx(6.0 + 22.5)  # above 200k prompt tokens: $6 in / $22.50 out


def test_unknown_remote_model_still_says_cost_unknown() -> None:
    for provider in ("openai", "anthropic"):
        info = lookup_model(provider, "acme-frontier-9000")
        assert not info.known and info.priced_by is None and info.listed is None
        assert cost_usd(Usage(input_tokens=10, output_tokens=5), info) is None
    # A model another provider lists is not priced at this one.
    assert cost_usd(Usage(input_tokens=10), lookup_model("anthropic", "gpt-4o")) is None


def test_override_prices_win_but_never_through_a_prefix() -> None:
    write_override('[models."o1"]\ninput = 1.0\noutput = 2.0\n')
    assert lookup_model("openai", "o1").input == 1.0
    assert lookup_model("openai", "o1-2024-12-17").input == 1.0   # genai-prices: the same model
    pro = lookup_model("openai", "o1-pro")                       # a different model: its own price
    assert (pro.input, pro.priced_by) == (150.0, "genai-prices")


def test_prices_never_touch_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a price lookup opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    from neotask_tui.providers import prices

    prices.listed_price.cache_clear()
    info = lookup_model("openai", "gpt-4.1-mini")
    assert cost_usd(Usage(input_tokens=M), info) == pytest.approx(0.4)
    from genai_prices import data_snapshot

    assert data_snapshot.get_snapshot().from_auto_update is False  # the bundled snapshot
