"""Provider selection: config → env keys → Ollama on localhost → bundled local model."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from neotask_tui.config import ConfigError, Settings
from neotask_tui.providers import build_provider, choose_provider
from neotask_tui.providers.base import ChatMessage, Provider
from neotask_tui.providers.selection import ollama_base, probe_ollama
from tests.protocol_servers import OpenAIServer, Reply, ReplyUsage, collect, refused_url


def settings(**provider: Any) -> Settings:
    s = Settings()
    s.provider.probe_ollama = False
    for k, v in provider.items():
        setattr(s.provider, k, v)
    return s


@contextmanager
def fake_ollama(models: list[str]) -> Iterator[str]:
    """A stdlib server answering ``GET /api/tags`` like Ollama."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path != "/api/tags":
                self.send_error(404)
                return
            body = json.dumps({"models": [{"name": m, "model": m} for m in models]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_nothing_configured_picks_local_with_a_reason() -> None:
    c = choose_provider(settings(), env={})
    assert (c.name, c.model, c.base_url) == ("local", "smollm2-135m-instruct", None)
    assert "bundled local model" in c.reason


def test_openai_key_wins_over_anthropic_key() -> None:
    c = choose_provider(settings(), env={"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "sk-2"})
    assert c.name == "openai" and c.api_key_env == "OPENAI_API_KEY"
    assert "OPENAI_API_KEY" in c.reason and "sk-1" not in c.reason


def test_anthropic_key_alone() -> None:
    c = choose_provider(settings(), env={"ANTHROPIC_API_KEY": "sk-2"})
    assert c.name == "anthropic" and c.model.startswith("claude")


def test_openai_base_url_env_alone_selects_compatible_server() -> None:
    c = choose_provider(settings(), env={"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"})
    assert c.name == "openai" and c.base_url == "http://127.0.0.1:8000/v1"


def test_config_beats_env() -> None:
    c = choose_provider(settings(name="local"), env={"OPENAI_API_KEY": "sk"})
    assert c.name == "local" and "configuration" in c.reason
    c = choose_provider(settings(name="anthropic", model="claude-opus-4-1"), env={"OPENAI_API_KEY": "sk"})
    assert (c.name, c.model) == ("anthropic", "claude-opus-4-1")


def test_env_from_process_is_used_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
    assert choose_provider(settings()).name == "anthropic"


def test_unknown_provider_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown provider 'gemini'"):
        choose_provider(settings(name="gemini"), env={})


def test_custom_local_gguf_uses_its_file_name_as_model() -> None:
    c = choose_provider(settings(name="local", local_model_path="/models/Qwen2.5-0.5B-Instruct.Q4.gguf"), env={})
    assert c.model == "qwen2.5-0.5b-instruct.q4"


def test_ollama_on_localhost_is_chosen_when_probing() -> None:
    with fake_ollama(["qwen2.5:0.5b", "llama3.2:latest"]) as host:
        env = {"OLLAMA_HOST": host}
        c = choose_provider(settings(probe_ollama=True), env=env)
    assert c.name == "ollama"
    assert c.model == "qwen2.5:0.5b"
    assert c.base_url == f"http://{host}/v1"
    assert "Ollama answers" in c.reason


def test_ollama_prefers_the_default_model_when_pulled() -> None:
    with fake_ollama(["qwen2.5:0.5b", "llama3.2"]) as host:
        c = choose_provider(settings(probe_ollama=True), env={"OLLAMA_HOST": host})
    assert c.model == "llama3.2"


def test_ollama_without_models_falls_back_to_local() -> None:
    with fake_ollama([]) as host:
        c = choose_provider(settings(probe_ollama=True), env={"OLLAMA_HOST": host})
    assert c.name == "local" and "no models pulled" in c.reason


def test_no_ollama_falls_back_to_local() -> None:
    host = refused_url("").removeprefix("http://")
    c = choose_provider(settings(probe_ollama=True), env={"OLLAMA_HOST": host})
    assert c.name == "local"
    assert c.reason == "no API key and no Ollama on localhost: using the bundled local model"


def test_probe_is_skipped_when_disabled() -> None:
    with fake_ollama(["llama3.2"]) as host:
        c = choose_provider(settings(probe_ollama=False), env={"OLLAMA_HOST": host})
    assert c.name == "local" and "probe off" in c.reason


def test_probe_never_leaves_loopback() -> None:
    assert probe_ollama("http://192.0.2.1:11434") is None


@pytest.mark.parametrize(("raw", "expected"), [
    ("", "http://127.0.0.1:11434"),
    ("0.0.0.0", "http://127.0.0.1:11434"),
    ("127.0.0.1:9999", "http://127.0.0.1:9999"),
    ("http://localhost:11435/", "http://localhost:11435"),
])
def test_ollama_host_forms(raw: str, expected: str) -> None:
    assert ollama_base({"OLLAMA_HOST": raw} if raw else {}) == expected


def test_build_local_does_not_load_the_model() -> None:
    s = settings()
    p = build_provider(choose_provider(s, env={}), s)
    assert isinstance(p, Provider)
    assert (p.name, p.model) == ("local", "smollm2-135m-instruct")
    assert p.loaded is False  # type: ignore[attr-defined]


def test_build_scripted_uses_the_leads_provider() -> None:
    s = settings(name="scripted")
    p = build_provider(choose_provider(s, env={}), s)
    assert p.name == "scripted"


def test_build_ollama_points_the_openai_client_at_v1() -> None:
    s = settings(name="ollama", model="qwen2.5")
    p = build_provider(choose_provider(s, env={"OLLAMA_HOST": "127.0.0.1:12345"}), s)
    assert (p.name, p.model, p.base_url) == ("ollama", "qwen2.5", "http://127.0.0.1:12345/v1")  # type: ignore[attr-defined]


async def test_configured_openai_compatible_server_end_to_end() -> None:
    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["hi"], usage=ReplyUsage(input=3, output=1)))
        s = settings(base_url=srv.base_url, model="local-model")
        choice = choose_provider(s, env={})
        p = build_provider(choice, s, env={})
        got = await collect(p.stream([ChatMessage("user", "hello")]))
        await p.aclose()
    assert choice.name == "openai" and got.text == "hi" and got.end.usage.input_tokens == 3
    assert srv.requests[0]["model"] == "local-model"
    assert srv.requests[0]["max_tokens"] == s.provider.max_tokens


def test_choosing_and_building_imports_no_sdk() -> None:
    code = (
        "import sys\n"
        "from neotask_tui.config import Settings\n"
        "from neotask_tui.providers import choose_provider, build_provider\n"
        "s = Settings(); s.provider.probe_ollama = False\n"
        "for env in ({}, {'OPENAI_API_KEY': 'k'}, {'ANTHROPIC_API_KEY': 'k'}):\n"
        "    build_provider(choose_provider(s, env=env), s, env=env)\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'llama_cpp', 'tiktoken') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
