"""Prices of remote models from the ``genai-prices`` package (its bundled data, never fetched).

``genai-prices`` (MIT, maintained by Pydantic) ships a snapshot of the providers' price lists with
explicit match rules per model (``o1-pro`` is its own model, not ``o1`` with a suffix), tiered
prices (Claude Sonnet 4/4.5 above 200k prompt tokens) and cache read/write prices. Its optional
auto-update (``genai_prices.UpdatePrices``) downloads a newer snapshot in a background thread; we
never start it, so every price comes from the installed package (upgrade it to get new prices).

Usage fields differ: our :class:`~neotask_tui.providers.base.Usage` counts ``input_tokens`` as
*uncached* input, while genai-prices' ``input_tokens`` is every prompt token *including* cache reads
and writes (it subtracts them before applying the input price). :func:`call_cost` maps one to the
other. A model genai-prices does not list has no price here (None: "cost unknown", never a guess).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from neotask_tui.providers.base import Usage

PROVIDER_IDS = {"openai": "openai", "anthropic": "anthropic"}
"""Our provider names → genai-prices provider ids. Providers not listed (local, ollama) are free;
a stand-in provider (``scripted``) is priced like whichever provider lists the model."""


@dataclass(frozen=True, slots=True)
class ListedPrice:
    """A model as genai-prices lists it.

    Attributes:
        model_id: genai-prices' model id (``o1-pro`` for ``o1-pro-2025-03-19``).
        provider_id: genai-prices' provider id.
        input: USD per million uncached input tokens (the base tier).
        output: USD per million output tokens (the base tier).
        cache_read: USD per million cache-read tokens, or None when the model has no cache price
            (genai-prices then bills them as input).
        cache_write: USD per million cache-write tokens, or None (billed as input).
        tiered: Whether any price rises with the prompt size (then :func:`call_cost` is exact and
            the four fields above are the first tier only).
        context_window: The context window genai-prices lists, or None.
        name: The name genai-prices matched (``ft:gpt-4o-mini-2024-07-18:org::id``): what
            :func:`call_cost` asks it again. Its id is no name its match rules know for every model
            (``ft:gpt-4o-mini`` matches nothing: red team 27 F1).
    """

    model_id: str
    provider_id: str
    input: float | None
    output: float | None
    cache_read: float | None
    cache_write: float | None
    tiered: bool
    context_window: int | None
    name: str = ""


def _base(price: Any) -> tuple[float | None, bool]:
    if price is None:
        return None, False
    if isinstance(price, Decimal | int | float):
        return float(price), False
    return float(price.base), True  # TieredPrices


def _calc(usage: Any, model: str, provider: str | None) -> Any:
    import genai_prices  # lazy: ~1 s the first time (callers run off the event loop)

    return genai_prices.calc_price(usage, model, provider_id=provider)


@functools.lru_cache(maxsize=256)
def listed_price(provider: str | None, model: str) -> ListedPrice | None:
    """The listed prices of ``model`` at ``provider`` (a genai-prices provider id, or None for the
    provider whose match rules claim the model), or None when genai-prices does not list it."""
    from genai_prices import Usage as GpUsage

    try:
        calc = _calc(GpUsage(input_tokens=0, output_tokens=0), model, provider)
    except LookupError:
        return None
    prov, info, mp = calc.provider, calc.model, calc.model_price
    fields = {k: _base(getattr(mp, k, None)) for k in ("input_mtok", "output_mtok", "cache_read_mtok",
                                                          "cache_write_mtok")}
    return ListedPrice(
        model_id=str(info.id), provider_id=str(prov.id),
        input=fields["input_mtok"][0], output=fields["output_mtok"][0],
        cache_read=fields["cache_read_mtok"][0], cache_write=fields["cache_write_mtok"][0],
        tiered=any(t for _, t in fields.values()),
        context_window=int(info.context_window) if info.context_window else None, name=model,
    )


def call_cost(usage: Usage, listed: ListedPrice) -> float:
    """Cost of one call in USD, with the model's tiers and cache prices applied by genai-prices.

    Args:
        usage: Our usage (``input_tokens`` uncached); mapped to genai-prices' convention here.
        listed: The model from :func:`listed_price`.
    """
    from genai_prices import Usage as GpUsage

    gp = GpUsage(
        input_tokens=usage.prompt_tokens,  # genai-prices: all prompt tokens, cache included
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        output_tokens=usage.output_tokens,
    )
    return float(_calc(gp, listed.name or listed.model_id, listed.provider_id).total_price)
