"""Model providers: the :class:`~neotask_tui.providers.base.Provider` Protocol and its implementations.

This package stays import-cheap (the TUI must paint first): SDKs and llama.cpp are imported only
when a provider is built or first used. ``choose_provider``/``build_provider``/``ProviderChoice``
are re-exported lazily from :mod:`neotask_tui.providers.selection`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neotask_tui.providers.selection import ProviderChoice, build_provider, choose_provider

__all__ = ["ProviderChoice", "build_provider", "choose_provider"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from neotask_tui.providers import selection

        return getattr(selection, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
