"""Which provider answers, and why — without importing any SDK.

Order when the user did not choose: config (``provider.name``, or a ``base_url``) → env keys
(``OPENAI_API_KEY``, then ``ANTHROPIC_API_KEY``; ``OPENAI_BASE_URL`` alone also counts) → Ollama
answering on localhost → the bundled local model. The reason is a sentence shown by ``neotask
doctor`` and the status bar.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from neotask_tui.config import PROVIDER_NAMES, ConfigError

if TYPE_CHECKING:
    from neotask_tui.config import Settings
    from neotask_tui.providers.base import Provider

PROVIDERS = PROVIDER_NAMES
DEFAULT_OLLAMA = "http://127.0.0.1:11434"
DEFAULT_OLLAMA_MODEL = "llama3.2"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"
LOCAL_MODEL = "smollm2-135m-instruct"
PROBE_TIMEOUT = 0.5


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """The chosen provider and why.

    Attributes:
        name: ``local``, ``openai``, ``anthropic``, ``ollama`` or ``scripted``.
        model: Model name (``smollm2-135m-instruct`` or a GGUF file stem for local).
        base_url: Server URL for remote providers; None for local/scripted or the vendor default.
        reason: A human sentence saying why this provider was chosen.
        api_key_env: The env var the key came from (never the key itself), if any.
    """

    name: str
    model: str
    base_url: str | None
    reason: str
    api_key_env: str | None = None


KEY_NOT_MODEL = "that looks like an API key, not a model name; nothing stored"
"""What a model (or provider) name that :func:`looks_like_key` gets instead of being used; the
value itself is never echoed."""
KEY_NOT_COMMAND = "that looks like an API key, not a command; nothing stored"
"""What a slash command whose name :func:`looks_like_key` gets (a key pasted after "/")."""
KEY_IN_SESSION_KEY = ("that session key holds an API key or another secret (it would be stored as it is); "
                      "choose another chat id; nothing stored")
"""What a new session key that :func:`looks_like_key` finds a secret in gets (never echoed)."""
WHERE_KEYS_GO = "a key goes in OPENAI_API_KEY, ANTHROPIC_API_KEY or provider.api_key"


def configured_keys(settings: Settings, env: Mapping[str, str] | None = None) -> list[str]:
    """The API keys this configuration may send (``provider.api_key``, ``OPENAI_API_KEY``,
    ``ANTHROPIC_API_KEY``); values shorter than the mask's window are not keys (``"ollama"``)."""
    from neotask_tui.providers._sdk import KEY_WINDOW

    env = os.environ if env is None else env
    found = (settings.provider.api_key, env.get("OPENAI_API_KEY", ""), env.get("ANTHROPIC_API_KEY", ""))
    return [k.strip() for k in found if len(k.strip()) >= KEY_WINDOW]


def without_configured_keys(text: str, settings: Settings, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every configured API key (:func:`configured_keys`) masked ``[REDACTED:api_key]``,
    read as the provider masks a reply (any :data:`~neotask_tui.providers._sdk.KEY_WINDOW` characters
    of it in a row, another case, look-alike letters, hyphens or spaces added). Applied to what you
    type before it is stored: the key is a secret whatever the text around it."""
    from neotask_tui.providers._sdk import without_keys

    return without_keys(text, configured_keys(settings, env))


def looks_like_key(text: str, settings: Settings, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``text``, typed as a model or provider name, is a secret: one the redactor finds
    (an API key or token of a known format, a long random token), or part of a configured key
    (:data:`~neotask_tui.providers._sdk.KEY_WINDOW` characters of it in a row)."""
    from neotask_tui.providers._sdk import holds_key
    from neotask_tui.text.secrets import has_secrets

    text = text.strip()
    return bool(text) and (has_secrets(text) or holds_key(text, configured_keys(settings, env)))


def model_setting_problem(settings: Settings, env: Mapping[str, str] | None = None) -> str | None:
    """Why the configured ``provider.model`` cannot be used (it looks like an API key), naming where
    it was set and never the value; ``None`` when it is a name (or empty)."""
    from neotask_tui.config import setting_source

    env = os.environ if env is None else env
    if not settings.provider.model or not looks_like_key(settings.provider.model, settings, env):
        return None
    return (f"{setting_source('provider', 'model', env)}: provider.model: that looks like an API key, not a "
            f"model name; nothing was sent or stored ({WHERE_KEYS_GO})")


def check_model_setting(settings: Settings, env: Mapping[str, str] | None = None) -> None:
    """Refuse a configured ``provider.model`` that looks like an API key (see :func:`model_setting_problem`).

    Raises:
        ConfigError: one line naming where it was set, without the value.
    """
    problem = model_setting_problem(settings, env)
    if problem is not None:
        raise ConfigError(problem)


def ollama_base(env: Mapping[str, str]) -> str:
    """Ollama's root URL from ``OLLAMA_HOST`` (``host``, ``host:port`` or a URL), else the default."""
    host = env.get("OLLAMA_HOST", "").strip()
    if not host:
        return DEFAULT_OLLAMA
    if "://" not in host:
        host = "http://" + host
    parts = urlsplit(host)
    hostname = parts.hostname or "127.0.0.1"
    if hostname in ("0.0.0.0", "::"):  # a server bind address: clients reach it on loopback
        hostname = "127.0.0.1"
    if ":" in hostname:
        hostname = f"[{hostname}]"
    port = parts.port or 11434
    return f"{parts.scheme or 'http'}://{hostname}:{port}{parts.path.rstrip('/')}"


def probe_ollama(base: str, timeout: float = PROBE_TIMEOUT) -> list[str] | None:
    """Ask Ollama for its models (``GET /api/tags``); None if nothing answers like Ollama.

    Only loopback hosts are probed (never the network); proxies are bypassed.
    """
    parts = urlsplit(base)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1") or parts.scheme != "http":
        return None
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        conn.request("GET", parts.path.rstrip("/") + "/api/tags")
        resp = conn.getresponse()
        if resp.status != 200:
            return None
        data = json.loads(resp.read(1_000_000))
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, list):
            return None
        return [str(m.get("name") or m.get("model")) for m in models if isinstance(m, dict)]
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def _local_choice(settings: Settings, reason: str) -> ProviderChoice:
    path = settings.provider.local_model_path
    model = settings.provider.model or (os.path.splitext(os.path.basename(path))[0].lower() if path else LOCAL_MODEL)
    return ProviderChoice("local", model, None, reason)


def _explicit(settings: Settings, env: Mapping[str, str]) -> ProviderChoice:
    p = settings.provider
    name = p.name.strip().lower()
    why = f"provider.name = {name!r} in the configuration"
    if name == "local":
        return _local_choice(settings, why)
    if name == "scripted":
        return ProviderChoice("scripted", p.model or "scripted", None, why + " (testing aid)")
    if name == "openai":
        base = p.base_url or env.get("OPENAI_BASE_URL") or None
        key_env = None if p.api_key else ("OPENAI_API_KEY" if env.get("OPENAI_API_KEY") else None)
        return ProviderChoice("openai", p.model or DEFAULT_OPENAI_MODEL, base, why, key_env)
    if name == "anthropic":
        base = p.base_url or env.get("ANTHROPIC_BASE_URL") or None
        key_env = None if p.api_key else ("ANTHROPIC_API_KEY" if env.get("ANTHROPIC_API_KEY") else None)
        return ProviderChoice("anthropic", p.model or DEFAULT_ANTHROPIC_MODEL, base, why, key_env)
    if name == "ollama":
        base = p.base_url or ollama_base(env) + "/v1"
        return ProviderChoice("ollama", p.model or DEFAULT_OLLAMA_MODEL, base, why)
    raise ConfigError(f"provider.name: unknown provider {p.name!r} (expected one of {', '.join(PROVIDERS)})")


BUILT_FIRST = frozenset({"scripted"})
"""Providers whose building is cheap and checks their configuration (a script file): the engine
builds them before a turn stores anything, so a bad configuration is a one-line error."""


def builds_first(settings: Settings) -> bool:
    """Whether the configured provider is built before a turn stores anything (see
    :data:`BUILT_FIRST`); read from ``provider.name`` alone, so nothing is probed."""
    return settings.provider.name.strip().lower() in BUILT_FIRST


def choose_provider(settings: Settings, env: Mapping[str, str] | None = None) -> ProviderChoice:
    """Decide which provider answers.

    Args:
        settings: Loaded settings (``provider.*``).
        env: Environment to read keys from; defaults to ``os.environ``.

    Returns:
        The :class:`ProviderChoice`, with a human ``reason``.

    Raises:
        ConfigError: ``provider.name`` names no known provider, or ``provider.model`` looks like an
            API key (:func:`check_model_setting`).
    """
    env = os.environ if env is None else env
    check_model_setting(settings, env)
    p = settings.provider
    if p.name.strip():
        return _explicit(settings, env)
    if p.base_url:
        return ProviderChoice("openai", p.model or DEFAULT_OPENAI_MODEL, p.base_url,
                              f"provider.base_url = {p.base_url} in the configuration")
    if env.get("OPENAI_API_KEY"):
        base = env.get("OPENAI_BASE_URL") or None
        return ProviderChoice("openai", p.model or DEFAULT_OPENAI_MODEL, base,
                              "OPENAI_API_KEY is set", "OPENAI_API_KEY")
    if env.get("ANTHROPIC_API_KEY"):
        return ProviderChoice("anthropic", p.model or DEFAULT_ANTHROPIC_MODEL, env.get("ANTHROPIC_BASE_URL") or None,
                              "ANTHROPIC_API_KEY is set", "ANTHROPIC_API_KEY")
    if env.get("OPENAI_BASE_URL"):
        return ProviderChoice("openai", p.model or DEFAULT_OPENAI_MODEL, env["OPENAI_BASE_URL"],
                              f"OPENAI_BASE_URL is set ({env['OPENAI_BASE_URL']})")
    if not p.probe_ollama:
        return _local_choice(settings, "no API key, Ollama probe off: using the bundled local model")
    base = ollama_base(env)
    models = probe_ollama(base)
    if models:
        model = p.model if p.model else (DEFAULT_OLLAMA_MODEL if DEFAULT_OLLAMA_MODEL in models else models[0])
        return ProviderChoice("ollama", model, base + "/v1", f"no API key; Ollama answers at {base}")
    if models is not None:
        return _local_choice(settings, f"no API key; Ollama at {base} has no models pulled: "
                                       "using the bundled local model")
    return _local_choice(settings, "no API key and no Ollama on localhost: using the bundled local model")


@dataclass(frozen=True, slots=True)
class ModelOption:
    """A provider ``/model NAME`` can switch to, and whether what it needs is configured.

    Attributes:
        name: What ``/model`` takes (``local``, ``openai``, ``anthropic``, ``ollama``).
        model: The model it would use (the configured one, else its default).
        ready: The user configured what it needs (a key, a URL, a file); the bundled model always is.
        detail: Where it comes from, or what to configure for it (never a key).
    """

    name: str
    model: str
    ready: bool
    detail: str


SWITCHABLE = ("local", "openai", "anthropic", "ollama")
"""The providers ``/model NAME`` offers (every other one is only chosen by the configuration)."""


def is_bundled(name: str, model: str, settings: Settings) -> bool:
    """Whether provider ``name`` with ``model`` is the bundled demo model (not a GGUF of the user's)."""
    return name == "local" and model == LOCAL_MODEL and not settings.provider.local_model_path


def _own(settings: Settings, name: str) -> bool:
    """Whether the configured ``provider.*`` (key, URL, model) belongs to provider ``name``."""
    p = settings.provider
    configured = p.name.strip().lower()
    return configured == name or (not configured and name == "openai" and bool(p.base_url))


def model_options(settings: Settings, env: Mapping[str, str] | None = None, *,
                  ollama_models: list[str] | None = None) -> list[ModelOption]:
    """What ``/model`` lists: each switchable provider with the model it would use and what it needs.

    Only what the user configured is used; nothing is downloaded or contacted here (``ollama_models``
    is what a loopback probe found, if the caller probed).
    """
    env = os.environ if env is None else env
    p = settings.provider
    out: list[ModelOption] = []
    local = _local_choice(settings, "")
    if p.local_model_path:
        out.append(ModelOption("local", local.model, True, f"your GGUF file {p.local_model_path} (offline)"))
    else:
        out.append(ModelOption("local", LOCAL_MODEL, True,
                               "bundled SmolLM2-135M-Instruct: a small offline demo, no key; it invents facts"))
    own_openai = _own(settings, "openai")
    key = (own_openai and p.api_key) or env.get("OPENAI_API_KEY")
    url = (own_openai and p.base_url) or env.get("OPENAI_BASE_URL")
    model = (p.model if own_openai and p.model else "") or DEFAULT_OPENAI_MODEL
    if key or url:
        where = f"server {url}" if url else "api.openai.com"
        src = "provider.api_key" if own_openai and p.api_key else "OPENAI_API_KEY" if key else "no key"
        out.append(ModelOption("openai", model, True, f"{where} ({src})"))
    else:
        out.append(ModelOption("openai", model, False, "set OPENAI_API_KEY, or provider.base_url (any "
                               "OpenAI-compatible URL) in config.toml"))
    own_anthropic = _own(settings, "anthropic")
    model = (p.model if own_anthropic and p.model else "") or DEFAULT_ANTHROPIC_MODEL
    if (own_anthropic and p.api_key) or env.get("ANTHROPIC_API_KEY"):
        src = "provider.api_key" if own_anthropic and p.api_key else "ANTHROPIC_API_KEY"
        out.append(ModelOption("anthropic", model, True, f"Anthropic API ({src})"))
    else:
        out.append(ModelOption("anthropic", model, False, "set ANTHROPIC_API_KEY"))
    own_ollama = _own(settings, "ollama")
    base = (own_ollama and p.base_url) or ollama_base(env)
    model = (p.model if own_ollama and p.model else "") or (
        DEFAULT_OLLAMA_MODEL if not ollama_models or DEFAULT_OLLAMA_MODEL in ollama_models else ollama_models[0])
    if ollama_models:
        out.append(ModelOption("ollama", model, True, f"answers at {base}; models: {', '.join(ollama_models[:8])}"))
    else:
        out.append(ModelOption("ollama", model, own_ollama, f"Ollama at {base} (run `ollama serve` and pull a model)"))
    return out


def choose_named(settings: Settings, name: str, model: str | None = None,
                 env: Mapping[str, str] | None = None) -> tuple[ProviderChoice, Settings]:
    """The choice for ``/model NAME [MODEL]`` and the settings to build it with.

    The configured key, URL and model are kept only for the provider they were configured for.

    Raises:
        ConfigError: ``name`` is not switchable, what it needs is not configured, or ``name`` or
            ``model`` looks like an API key (:data:`KEY_NOT_MODEL`: the value is not echoed).
    """
    env = os.environ if env is None else env
    if any(looks_like_key(v, settings, env) for v in (name, model or "")):
        raise ConfigError(f"{KEY_NOT_MODEL} ({WHERE_KEYS_GO})")
    name = name.strip().lower()
    if name not in SWITCHABLE:
        raise ConfigError(f"unknown provider {name[:40]!r} (choose one of {', '.join(SWITCHABLE)})")
    option = next(o for o in model_options(settings, env) if o.name == name)
    if not option.ready and name in ("openai", "anthropic"):
        raise ConfigError(f"{name} is not configured: {option.detail}")
    p = settings.provider
    own = _own(settings, name)
    path = p.local_model_path
    if name == "local" and model:
        # The local provider answers with a file, not a name: MODEL must be the bundled model or a
        # GGUF file (a bare name would be shown as the model while the bundled one answered).
        candidate = os.path.expanduser(model)
        if model.lower() == LOCAL_MODEL:
            model, path = LOCAL_MODEL, ""
        elif candidate.lower().endswith(".gguf") and os.path.isfile(candidate):
            path, model = candidate, os.path.splitext(os.path.basename(candidate))[0].lower()
        else:
            raise ConfigError(f"local answers with the bundled {LOCAL_MODEL} or a GGUF file: {model[:80]!r} is "
                              "neither (give the path of a .gguf file)")
    provider = dataclasses.replace(
        p, name=name, model=model or (p.model if own else ""),
        api_key=p.api_key if own else "", base_url=p.base_url if own else "", local_model_path=path)
    chosen = dataclasses.replace(settings, provider=provider)
    choice = _explicit(chosen, env)
    return dataclasses.replace(choice, reason=f"/model {name} in this run (config.toml keeps "
                                              f"{p.name.strip() or 'the automatic choice'} for the next start)"), chosen


def build_provider(choice: ProviderChoice, settings: Settings, env: Mapping[str, str] | None = None) -> Provider:
    """Instantiate the chosen provider; SDKs and llama.cpp are imported lazily.

    Nothing slow happens here: remote clients connect on the first call, and the local model
    loads on :meth:`LocalProvider.load` (or the first call).

    Args:
        choice: From :func:`choose_provider`.
        settings: Loaded settings.
        env: Environment to read keys from; defaults to ``os.environ``.

    Returns:
        An object implementing :class:`~neotask_tui.providers.base.Provider`.
    """
    env = os.environ if env is None else env
    p = settings.provider
    if choice.name == "local":
        from neotask_tui.providers.local import LocalProvider

        return LocalProvider.from_settings(settings, model=choice.model)
    if choice.name == "scripted":
        from neotask_tui.providers.scripted import ScriptedProvider

        return ScriptedProvider.from_settings(settings)  # type: ignore[no-any-return,unused-ignore]
    if choice.name in ("openai", "ollama"):
        from neotask_tui.providers.openai_compat import OpenAICompatProvider

        key = p.api_key or env.get("OPENAI_API_KEY") or None
        if choice.name == "ollama":
            key = p.api_key or "ollama"
        return OpenAICompatProvider.from_settings(
            settings, name=choice.name, model=choice.model, base_url=choice.base_url, api_key=key
        )
    if choice.name == "anthropic":
        from neotask_tui.providers.anthropic import AnthropicProvider

        return AnthropicProvider.from_settings(
            settings, model=choice.model, base_url=choice.base_url,
            api_key=p.api_key or env.get("ANTHROPIC_API_KEY") or None,
        )
    raise ConfigError(f"provider.name: unknown provider {choice.name!r} (expected one of {', '.join(PROVIDERS)})")
