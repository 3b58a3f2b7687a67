"""Exact token counts for the local model (#20): the engine counts with the GGUF's own tokenizer
through its own chat template, so the context total is the prompt the model reads."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from neotask_tui.config import Settings
from neotask_tui.engine import events as ev
from neotask_tui.engine.facade import Engine
from neotask_tui.providers import gguf
from neotask_tui.providers.local import LocalProvider, bundled_model_path
from neotask_tui.providers.scripted import ScriptedProvider
from neotask_tui.text import tokens

KEY = "agent:main:tui:default"


def _settings() -> Settings:
    s = Settings()
    s.memory.enabled = False
    return s


async def test_local_counts_are_the_gguf_tokenizers_and_labelled_exact() -> None:
    engine = Engine(_settings(), provider=LocalProvider(n_ctx=2048), tz=ZoneInfo("UTC"))
    try:
        vocab = gguf.vocab(str(bundled_model_path()))
        text = "Привет! straße — counting with the model's own tokenizer."
        assert engine.count_text(text) == vocab.count(text) != tokens.count_text(text)
        assert engine.counts_exact()
        ctx = await engine.build(KEY, "What did we decide about the cache?")
        assert ctx.ledger.source == "exact"
        assert ctx.ledger.total == len(vocab.prompt_tokens(ctx.messages))
        assert ctx.ledger.fill == round(ctx.ledger.total / ctx.ledger.window, 4)
    finally:
        await engine.aclose()


async def test_remote_counts_stay_estimates_with_the_models_encoding() -> None:
    engine = Engine(_settings(), provider=ScriptedProvider(model="gpt-4o"), tz=ZoneInfo("UTC"))
    try:
        ru = "Привет, как дела? Это пример текста на русском языке."
        assert engine.count_text(ru) == tokens.counter("openai", "gpt-4o").count(ru) == 13
        assert not engine.counts_exact()
        assert (await engine.build(KEY, "hi")).ledger.source == "estimated"
    finally:
        await engine.aclose()


@pytest.mark.model
async def test_the_exact_total_is_what_the_model_reads() -> None:
    prov = LocalProvider(n_ctx=2048, temperature=0.0, seed=1, max_tokens=2)
    engine = Engine(_settings(), provider=prov, tz=ZoneInfo("UTC"))
    try:
        await prov.load()
        ctx = await engine.build(KEY, "Say hi.")
        assert ctx.ledger.total == len(prov.prompt_tokens(ctx.messages))
        out = [e async for e in engine.send("Say hi.", KEY)]
        done = next(e for e in out if isinstance(e, ev.TurnDone))
        assert done.usage.input_tokens == done.ledger.total  # reported by llama.cpp == our count
    finally:
        await engine.aclose()
