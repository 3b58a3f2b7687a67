"""Model table: context window and prices per model, shipped and user-overridable.

The shipped table is ``neotask_tui/data/models.toml``; the user's ``<config dir>/models.toml`` (same
layout) is merged over it field by field, by model name. Prices of remote models come from the
``genai-prices`` package (:mod:`neotask_tui.providers.prices`: bundled data, its own match rules,
tiers and cache prices); the table's prices are for what it does not list (models that run
locally: free) and the user's own. Unknown models never get a made-up price: :func:`cost_usd`
returns None ("cost unknown") unless the model runs locally, where it is 0.
"""

from __future__ import annotations

import functools
import logging
import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from neotask_tui import paths
from neotask_tui.config import DEFAULT_CONTEXT_WINDOW
from neotask_tui.providers.base import Usage
from neotask_tui.providers.prices import PROVIDER_IDS, ListedPrice, call_cost, listed_price

log = logging.getLogger(__name__)

FREE_PROVIDERS = frozenset({"local", "ollama"})
"""Providers that run on the user's machine: every token costs 0."""
STAND_IN_PROVIDERS = frozenset({"scripted"})
"""Providers that stand in for any model (the testing aid): priced like the model they name, and
never billed for a model the table does not list."""
_PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")
_FIELDS = frozenset({"provider", "context_window", "summaries", *_PRICE_FIELDS})
_BOUNDARY = "-:@_"


class ModelTableError(ValueError):
    """A model table file is invalid; the one-line message names the file and the entry."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What we know about one model.

    Attributes:
        name: The model name as asked for.
        provider: The provider that serves it.
        context_window: Context window in tokens.
        input: USD per million uncached input tokens (None = unknown).
        output: USD per million output tokens (None = unknown).
        cache_read: USD per million tokens read from the prompt cache (None = unknown).
        cache_write: USD per million tokens written to the prompt cache (None = unknown).
        known: Whether the model was found in the table under this provider (prices apply).
        entry: The table entry that matched (e.g. ``gpt-4o`` for ``gpt-4o-2024-08-06``), or None.
        summaries: Whether the model writes a usable compaction summary (table field
            ``summaries``, default true). False where it was measured not to (``bench/summarizer.py``):
            compaction then uses the extractive summary without asking the model.
        listed: The model as genai-prices lists it (None when it does not, or the provider runs
            locally). When set and :attr:`priced_by` is ``"genai-prices"``, :func:`cost_usd`
            applies its tiers and cache prices; the four price fields show its first tier.
        priced_by: Where the prices come from: ``"genai-prices"``, ``"table"`` (the shipped table
            or the user's override file) or None (unknown).
    """

    name: str
    provider: str
    context_window: int
    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None
    known: bool = False
    entry: str | None = None
    summaries: bool = True
    listed: ListedPrice | None = None
    priced_by: str | None = None


def _validate(where: str, table: Any, *, partial: bool) -> dict[str, dict[str, Any]]:
    if not isinstance(table, dict):
        raise ModelTableError(f"{where}: expected tables like [models.\"name\"]")
    models = table.get("models", {})
    extra = set(table) - {"models"}
    if extra:
        raise ModelTableError(f"{where}: unknown top-level key {sorted(extra)[0]!r} (expected [models.\"name\"])")
    if not isinstance(models, dict):
        raise ModelTableError(f"{where}: 'models' must be a table")
    out: dict[str, dict[str, Any]] = {}
    for name, entry in models.items():
        if not isinstance(entry, dict):
            raise ModelTableError(f"{where}: models.{name} must be a table")
        for key, value in entry.items():
            at = f"{where}: models.\"{name}\".{key}"
            if key not in _FIELDS:
                raise ModelTableError(f"{at}: unknown field (expected one of {', '.join(sorted(_FIELDS))})")
            if key == "provider" and not (isinstance(value, str) and value):
                raise ModelTableError(f"{at}: expected a provider name")
            if key == "summaries" and not isinstance(value, bool):
                raise ModelTableError(f"{at}: expected true or false")
            if key == "context_window" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ModelTableError(f"{at}: expected a positive integer")
            if key in _PRICE_FIELDS and (
                isinstance(value, bool) or not isinstance(value, int | float) or value < 0
                or not math.isfinite(value)
            ):
                raise ModelTableError(f"{at}: expected a price >= 0 (USD per million tokens)")
        if not partial and ("provider" not in entry or "context_window" not in entry):
            raise ModelTableError(f"{where}: models.\"{name}\" needs provider and context_window")
        out[name.lower()] = dict(entry)
    return out


@functools.lru_cache(maxsize=1)
def _builtin() -> dict[str, dict[str, Any]]:
    text = (resources.files("neotask_tui") / "data" / "models.toml").read_text(encoding="utf-8")
    return _validate("neotask_tui/data/models.toml", tomllib.loads(text), partial=False)


def override_file() -> Path:
    """The user's model table override: ``<config dir>/models.toml``."""
    return paths.config_dir() / "models.toml"


@functools.lru_cache(maxsize=8)
def _merged(path: str, stamp: tuple[int, int]) -> dict[str, dict[str, Any]]:
    table = {k: dict(v) for k, v in _builtin().items()}
    if stamp == (0, 0):
        return table
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ModelTableError(f"{p}: not valid UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ModelTableError(f"{p}: {e}") from None
    except OSError as e:
        raise ModelTableError(f"{p}: cannot read ({e.strerror})") from None
    for name, entry in _validate(str(p), raw, partial=True).items():
        if name not in table and ("provider" not in entry or "context_window" not in entry):
            raise ModelTableError(f"{p}: new model \"{name}\" needs provider and context_window")
        table.setdefault(name, {}).update(entry)
    return table


def model_table() -> dict[str, dict[str, Any]]:
    """The merged table (shipped + user override), keyed by lower-case model name.

    Raises:
        ModelTableError: the override file is invalid (message names the file).
    """
    p = override_file()
    try:
        st = p.stat()
        stamp = (st.st_mtime_ns, st.st_size or 1)
    except OSError:
        stamp = (0, 0)
    return _merged(str(p), stamp)


def _find(table: dict[str, dict[str, Any]], model: str) -> str | None:
    """Exact name, else the longest listed name that is a prefix ending at a boundary."""
    candidates = [model]
    if "/" in model:  # OpenRouter-style "vendor/model"
        candidates.append(model.rsplit("/", 1)[1])
    for name in list(candidates):  # a fine-tune ("ft:gpt-4o-mini-2024-07-18:org::id") has its base's window
        if name.startswith("ft:") and len(name) > 3:
            candidates.append(name[3:].split(":", 1)[0])
    for name in candidates:
        if name in table:
            return name
        best = None
        for key in table:
            if name.startswith(key) and name[len(key)] in _BOUNDARY and (best is None or len(key) > len(best)):
                best = key
        if best is not None:
            return best
    return None


def _listed(provider: str, model: str) -> ListedPrice | None:
    """genai-prices' entry for ``model`` under our ``provider`` (any provider for a stand-in)."""
    if provider in FREE_PROVIDERS:
        return None
    if provider in STAND_IN_PROVIDERS:
        gp_provider = None
    elif provider in PROVIDER_IDS:
        gp_provider = PROVIDER_IDS[provider]
    else:
        return None
    found = listed_price(gp_provider, model)
    if found is None and "/" in model:  # OpenRouter-style "vendor/model"
        found = listed_price(gp_provider, model.rsplit("/", 1)[1])
    return found


def lookup_model(provider: str, model: str) -> ModelInfo:
    """Look up a model's context window and prices.

    Args:
        provider: The provider name (``openai``, ``anthropic``, ``ollama``, ``local``, ``scripted``).
        model: The model name; dated and tagged variants resolve to the listed base name for the
            context window, and by genai-prices' own match rules for prices.

    Returns:
        A :class:`ModelInfo`. Unknown models get ``known=False``, a conservative
        :data:`DEFAULT_CONTEXT_WINDOW` and no prices (0 for providers that run locally). A model
        listed under a different provider (e.g. a Llama served by vLLM through ``openai``) keeps
        its context window but not its prices. Prices the table gives for the matched entry (the
        user's override) win over genai-prices when the entry is the model genai-prices found, or
        when genai-prices does not list it; a prefix match never lends its prices to a different
        model (``o1-pro`` is not ``o1``).

    Raises:
        ModelTableError: the user's override file is invalid.
    """
    table = model_table()
    name = model.strip().lower()
    key = _find(table, name)
    free = provider in FREE_PROVIDERS
    listed = _listed(provider, name)
    entry = table[key] if key is not None else {}
    same = key is not None and (entry.get("provider") == provider or provider in STAND_IN_PROVIDERS)
    exact = key is not None and (key == name or ("/" in name and key == name.rsplit("/", 1)[1]))
    own = {f: float(entry[f]) for f in _PRICE_FIELDS if f in entry} if same else {}
    if own and listed is not None and not exact and key != listed.model_id:
        own = {}  # the prefix matched another model than the one genai-prices found
    prices: dict[str, float | None]
    priced_by: str | None
    if free:
        prices, priced_by = dict.fromkeys(_PRICE_FIELDS, 0.0), "table"
    elif listed is not None:
        base = {"input": listed.input, "output": listed.output,
                # no cache price: genai-prices bills those tokens as input
                "cache_read": listed.cache_read if listed.cache_read is not None else listed.input,
                "cache_write": listed.cache_write if listed.cache_write is not None else listed.input}
        prices = {f: own.get(f, base[f]) for f in _PRICE_FIELDS}
        priced_by = "table" if own else "genai-prices"
    elif same:
        prices = {f: own.get(f) for f in _PRICE_FIELDS}
        priced_by = "table" if own else None
    elif key is None and provider in STAND_IN_PROVIDERS:
        prices, priced_by = dict.fromkeys(_PRICE_FIELDS, 0.0), "table"  # never billed for an unknown model
    else:
        prices, priced_by = dict.fromkeys(_PRICE_FIELDS, None), None
    if exact or (key is not None and (listed is None or free or not listed.context_window)):
        window = int(entry.get("context_window", DEFAULT_CONTEXT_WINDOW))
    elif listed is not None and listed.context_window:
        window = listed.context_window
    else:
        window = DEFAULT_CONTEXT_WINDOW
    return ModelInfo(
        name=model,
        provider=provider,
        context_window=window,
        input=prices["input"],
        output=prices["output"],
        cache_read=prices["cache_read"],
        cache_write=prices["cache_write"],
        known=same or listed is not None,
        entry=key if key is not None else (listed.model_id if listed is not None else None),
        summaries=bool(entry.get("summaries", True)),  # a property of the model, whoever serves it
        listed=listed,
        priced_by=priced_by,
    )


def cost_usd(usage: Usage, info: ModelInfo) -> float | None:
    """Cost of one call in USD.

    Args:
        usage: Token usage; ``input_tokens`` are uncached input tokens, cache reads and writes are
            priced separately.
        info: The model's entry from :func:`lookup_model`.

    Returns:
        The cost, ``0.0`` for local models, or None when a needed price is unknown (shown as
        "cost unknown", never a guess). A model priced by genai-prices gets its tiered and cache
        prices applied exactly.
    """
    if info.priced_by == "genai-prices" and info.listed is not None:
        try:
            return call_cost(usage, info.listed)
        except LookupError as e:  # never lose a paid reply over its price: "cost unknown"
            log.warning("no price for %s (%s): cost unknown", info.listed.name or info.listed.model_id, e)
            return None
    total = 0.0
    for count, price in (
        (usage.input_tokens, info.input),
        (usage.output_tokens, info.output),
        (usage.cache_read_tokens, info.cache_read),
        (usage.cache_write_tokens, info.cache_write),
    ):
        if count <= 0:
            continue
        if price is None:
            return None
        total += count * price / 1_000_000
    if info.input is None and info.output is None and total == 0.0:
        return None  # no tokens and no prices: still unknown, not "free"
    return total
