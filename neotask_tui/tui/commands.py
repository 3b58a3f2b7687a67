"""Command-palette provider: every slash command is also reachable from Ctrl+P."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from neotask_tui.tui.messages import PaletteCommandChosen

if TYPE_CHECKING:
    from neotask_tui.commands import Command


class SlashCommandProvider(Provider):
    """Lists ``/commands`` with their help; commands needing arguments prefill the prompt."""

    def _commands(self) -> list[Command]:
        from neotask_tui.commands import load_all  # the registry loads when the palette opens

        return sorted(load_all().values(), key=lambda c: c.name)

    def _run(self, name: str) -> None:
        self.app.post_message(PaletteCommandChosen(name))

    async def discover(self) -> Hits:
        for c in self._commands():
            yield DiscoveryHit(f"/{c.name}", partial(self._run, c.name), help=f"{c.usage} — {c.help}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for c in self._commands():
            title = f"/{c.name}"
            score = max(matcher.match(title), matcher.match(f"{c.name} {c.help}") * 0.8)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._run, c.name),
                          help=f"{c.usage} — {c.help}")
