"""Test doubles shared by the whole suite (not a test module: pytest collects nothing here).

``Clock`` is the one engine clock the tests pass as ``Engine(..., clock=...)``; the ``clock`` fixture in
``tests/conftest.py`` hands one out. ``scripted(eng)`` is the engine's scripted provider, on which tests
queue replies.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from neotask_tui.config import Settings
from neotask_tui.engine.facade import Engine
from neotask_tui.providers.scripted import ScriptedProvider

#: Where the ``clock`` fixture starts unless a conftest or module overrides ``clock_start`` (the state tests
#: assert timestamps relative to it).
DEFAULT_START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


class Clock:
    """An engine clock that only the test moves.

    Two behaviours, chosen when it is made:

    - frozen (the default): every reading returns ``now`` until the test calls ``advance(...)`` or
      ``set(...)``; ``set`` may also move it backwards (an NTP fix, a jump in the wall clock).
    - auto-tick (opt in with ``auto_tick=timedelta(...)``): every reading returns ``now`` and then moves
      ``now`` on by ``auto_tick``, so consecutive readings are strictly increasing without the test
      stepping time by hand. ``advance``/``set`` still work on top of that.
    """

    def __init__(self, start: datetime, *, auto_tick: timedelta | None = None) -> None:
        self.now = start
        self.auto_tick = auto_tick

    def __call__(self) -> datetime:
        t = self.now
        if self.auto_tick is not None:
            self.now = t + self.auto_tick
        return t

    def advance(self, **kw: float) -> None:
        """Move time forward by ``timedelta(**kw)``."""
        self.now += timedelta(**kw)

    def set(self, t: datetime) -> None:
        """Jump to ``t`` (forwards or backwards)."""
        self.now = t


def scripted(eng: Engine) -> ScriptedProvider:
    """The engine's provider, which must be the scripted one (tests queue its replies)."""
    prov = eng.provider
    assert isinstance(prov, ScriptedProvider)
    return prov


def plain_settings() -> Settings:
    """Settings of the REPL and command tests: memory off (no embedder), the scripted provider, an
    8k window."""
    s = Settings()
    s.memory.enabled = False
    s.provider.name = "scripted"
    s.context.window_tokens = 8192
    return s


async def drive_repl(engine: Engine, keys: str, width: int) -> str:
    """Run the plain REPL on ``engine`` with ``keys`` typed into it (a pipe, no terminal) and return
    what it printed, at ``width`` columns; the REPL must exit with 0."""
    import io

    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from rich.console import Console

    from neotask_tui.repl import Repl

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    with create_pipe_input() as inp, create_app_session(input=inp, output=DummyOutput()):
        inp.send_text(keys)
        repl = Repl(engine, engine.default_key(), console=console, input=inp, output=DummyOutput())
        assert await repl.run() == 0
    return buf.getvalue()
