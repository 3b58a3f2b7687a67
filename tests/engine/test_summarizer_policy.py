"""Which summarizer compaction uses: the model's capability from the model table, never a wait for
a reply that would be thrown away."""

from __future__ import annotations

import pytest

from neotask_tui import paths
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.models import ModelTableError, lookup_model, model_table, override_file
from neotask_tui.providers.scripted import ScriptedProvider
from tests.engine.compaction_support import KEY, chat, make_settings, ticking_clock

SUMMARY = "## Goal\n- fix the CSV importer [e:2]\n## Constraints\n- Do not use Redis. [e:2]"


def write_override(text: str) -> None:
    path = override_file()
    paths.ensure_dir(path.parent)
    path.write_text(text, encoding="utf-8")


def test_the_bundled_model_is_marked_as_not_writing_summaries() -> None:
    assert lookup_model("local", "smollm2-135m-instruct").summaries is False
    assert lookup_model("openai", "gpt-4o").summaries is True
    assert lookup_model("openai", "some-unknown-model").summaries is True  # unknown: ask, with the timeout


def test_summaries_must_be_a_boolean() -> None:
    write_override('[models."smollm2-135m-instruct"]\nsummaries = "no"\n')
    with pytest.raises(ModelTableError, match="summaries: expected true or false"):
        model_table()


async def test_a_model_that_cannot_summarize_is_not_asked() -> None:
    """The scripted provider stands in for the bundled model: the extractive summary is used at
    once, the model gets no summary request, and the result says which summarizer and why."""
    prov = ScriptedProvider(model="smollm2-135m-instruct")
    eng = Engine(make_settings(), provider=prov, clock=ticking_clock())
    try:
        await chat(eng)
        prov.queue(SUMMARY)
        res = await eng.compact(KEY)
        assert prov.pending == 1  # never asked
        assert res.model == "extractive" and not res.fallback and res.fallback_reason is None
        assert res.summarizer_note is not None and "smollm2-135m-instruct cannot write" in res.summarizer_note
        assert "Do not use Redis" in res.summary
        record = next(e for e in eng.events(KEY) if e.type == "compaction")
        assert record.data["summarizer_note"] == res.summarizer_note
    finally:
        await eng.aclose()


async def test_the_review_says_which_summarizer_wrote_it() -> None:
    from neotask_tui.commands import dispatch

    prov = ScriptedProvider(model="smollm2-135m-instruct")
    eng = Engine(make_settings(), provider=prov, clock=ticking_clock())
    try:
        await chat(eng)
        r = await dispatch(eng, KEY, "/compact")
        assert "summary by extractive (smollm2-135m-instruct cannot write a usable summary" in r.text
    finally:
        await eng.aclose()


async def test_a_model_table_override_lets_the_model_summarize() -> None:
    write_override('[models."smollm2-135m-instruct"]\nsummaries = true\n')
    prov = ScriptedProvider(model="smollm2-135m-instruct")
    eng = Engine(make_settings(), provider=prov, clock=ticking_clock())
    try:
        await chat(eng)
        prov.queue(SUMMARY)
        res = await eng.compact(KEY)
        assert prov.pending == 0
        assert res.model == "smollm2-135m-instruct" and res.summarizer_note is None
    finally:
        await eng.aclose()


async def test_the_bundled_model_is_not_even_loaded_to_compact() -> None:
    """With the bundled model chosen and not loaded yet, F5 / /compact answer without loading it."""
    s = make_settings()
    s.provider.name = "local"
    eng = Engine(s, clock=ticking_clock())
    try:
        for i in range(8):
            await eng.append(KEY, "message", {"role": "user" if i % 2 == 0 else "assistant",
                                              "content": f"Message {i}: do not touch src/app_{i}.py."})
        res = await eng.compact(KEY, preview=True)
        assert eng.provider is None
        assert res.model == "extractive" and not res.fallback and res.summarizer_note
    finally:
        await eng.aclose()
