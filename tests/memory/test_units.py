"""Pure units: chunking, lexical normalisation, redaction, offline embedder, import cost."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import datetime

import pytest

from neotask_tui.memory.index.chunking import approx_tokens, chunk_markdown, format_entry, parse_blocks
from neotask_tui.text import lexical
from neotask_tui.text.secrets import redact


def test_chunks_respect_headings_and_sizes() -> None:
    body = "\n\n".join("\n".join(f"Paragraph {i} line {j} has words" for j in range(4)) for i in range(10))
    doc = f"# Top\n\nIntro line.\n\n## Section A\n\n{body}\n\n## Section B\n\nShort.\n"
    chunks = chunk_markdown(doc, size=60, overlap=10, count=approx_tokens)
    assert len(chunks) > 3
    assert all(approx_tokens(c.text) <= 60 + 10 for c in chunks)
    assert chunks[0].heading == "Top"
    assert chunks[-1].heading == "Top > Section B" and "Short." in chunks[-1].text
    # a heading starts a chunk; ranges are ordered and 1-based
    assert any(c.text.startswith("## Section A") for c in chunks)
    for c in chunks:
        assert 1 <= c.line_start <= c.own_start <= c.line_end
    # overlap: some chunk starts before its own lines (carried from the previous one)
    assert any(c.line_start < c.own_start for c in chunks)


def test_entries_are_blocks_with_source_and_scope() -> None:
    when = datetime(2025, 6, 1, 14, 3)
    doc = "# Memory\n\n" + format_entry("line one\nline two", when=when, source="user", scope=None)
    doc += format_entry("from inbox", when=when, source="inbox", scope="project:x")
    blocks = [b for b in parse_blocks(doc) if b.kind == "entry"]
    assert [len(b.lines) for b in blocks] == [2, 1]
    assert blocks[1].source == "inbox" and blocks[1].scope == "project:x"
    chunks = chunk_markdown(doc, size=400, overlap=80, count=approx_tokens)
    assert [(c.source, c.scope) for c in chunks] == [("memory", None), ("inbox", "project:x")]
    assert chunks[0].ts == when.timestamp()
    assert "[user]" not in chunks[0].embed_text() and "line two" in chunks[0].embed_text()


def test_huge_line_is_split() -> None:
    chunks = chunk_markdown("word " * 500, size=50, overlap=0, count=approx_tokens)
    assert len(chunks) >= 9 and all(c.line_start == 1 for c in chunks)


@pytest.mark.parametrize("alphabet", [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/",  # a pasted base64 blob
    "".join(chr(c) for c in range(0x4E00, 0x4E00 + 3000)),  # Han: two to three tokens a character
    "".join(chr(c) for c in range(0x1F600, 0x1F650)),  # emoji: several tokens each
])
def test_a_200k_character_line_without_spaces_is_cut_into_token_bounded_chunks(alphabet: str) -> None:
    import random

    from neotask_tui.memory.index.chunking import token_counter
    from neotask_tui.tuning import MEMORY_CHUNK_TOKENS

    rng = random.Random(7)
    line = "".join(rng.choice(alphabet) for _ in range(200_000))
    count = token_counter()
    chunks = chunk_markdown(f"# Paste\n\n{line}\n", count=count)
    sizes = [count(c.text) for c in chunks]
    assert max(sizes) <= MEMORY_CHUNK_TOKENS
    assert len(chunks) >= count(line) // MEMORY_CHUNK_TOKENS
    pieces = [c.text.removeprefix("# Paste").lstrip("\n") for c in chunks]
    assert "".join(pieces) == line  # nothing lost or repeated


def test_lexical_normalisation() -> None:
    assert lexical.terms("The cats were running to Caroline's meetings") == ["cat", "run", "carolin", "meet"]
    plural = lexical.terms("Пользователи предпочитают тёмные темы")
    assert plural == lexical.terms("пользователь предпочитает тёмную тему")
    assert lexical.terms("и в на the of") == []


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0kLmN",
        "sk-ant-api03-" + "x" * 30,
        "ghp_" + "a" * 36,
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-1234567890-abcdefghij",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "Zq8Xr4Lm2Np7Vt5Kw9Hb3Jc6Yd1Fg0Se",
    ],
)
def test_redaction_masks_common_secret_formats(secret: str) -> None:
    out, n = redact(f"here it is: {secret} ok")
    assert secret not in out and n >= 1
    assert out.startswith("here it is:") and out.endswith("ok")


def test_redaction_of_assignments_keeps_plain_text() -> None:
    out, n = redact("password=hunter2 and api_key: 'abc123def'")
    assert "hunter2" not in out and "abc123def" not in out and n >= 2
    plain = "I deployed version 2.3.1 of the parser on Friday; see docs/setup-guide.md"
    assert redact(plain) == (plain, 0)


def test_offline_embedder_loads_with_sockets_blocked(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise OSError("network disabled in tests")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    from neotask_tui.memory.index.embedder import Embedder

    emb = Embedder()
    v = emb.embed(["green tea", "зелёный чай", "green tea"])
    assert v.shape == (3, 768)  # the bundled pair: MiniLM's 384 and e5's 384
    assert float(v[0] @ v[2]) > 0.999
    assert abs(float((v[0] ** 2).sum()) - 1.0) < 1e-4


def test_memory_package_import_is_cheap() -> None:
    code = (
        "import sys; import neotask_tui.memory as m; "
        "heavy = [x for x in ('lancedb', 'fastembed', 'onnxruntime', 'pyarrow', 'numpy') if x in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
