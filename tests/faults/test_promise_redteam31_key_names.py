"""Red team 31, findings 2 and 8: the configured API key (a secret with certainty: "any 16 of its
characters in a row … reads `[REDACTED:api_key]`, wherever it is shown").

- 2: 20 of its characters used as a *name* (``/event NAME``, ``/state set FIELD value``,
  ``--until-event NAME``) were accepted, written to the transcript, shown by ``state`` and sent in the
  state block; a name in a known credential format was refused. A name holding the configured key is
  refused the same way now, without repeating it.
- 8: a command's reply or error that repeats what was typed (``/event NAME``, ``/file PATH``) showed
  the key unmasked (the app's echo line too: ``tests/tui/test_model_key.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neotask_tui.commands import dispatch
from tests.faults.helpers import KEY
from tests.faults.helpers import cli as neotask

CONFIGURED = "sk-proj-Zq7Xw3Rt9Lm2Np5Vb8Kc4Hd6Jf1Gs0Ty"
"""The report's configured key (``OPENAI_API_KEY``)."""
PART = CONFIGURED[6:26]
"""20 of its characters in a row, of no known credential format on their own."""


def _leaks(text: str) -> bool:
    """Whether ``text`` holds 16 characters in a row of :data:`PART` (the mask's window), case ignored."""
    return any(PART[i:i + 16].lower() in text.lower() for i in range(len(PART) - 15))


@pytest.mark.promise("secrets")
@pytest.mark.parametrize(("line", "why"), [
    (f"/event {PART}", "looks like a credential"),
    (f"/state set {PART} value1", "looks like a credential"),
    (f"/state set custom_field v --until-event {PART}", "looks like a credential"),
    (f"/pref brief --until-event {PART}", "looks like a credential"),
    (f"/state clear {PART}", "looks like a credential"),
    # a value: masked where it was typed, so it is no "EVENT + 7d" any more
    (f"/state set expires_at {PART} + 7d", "bad expiry '[REDACTED:api_key] + 7d'"),
], ids=["event", "state-set-field", "state-set-until-event", "pref-until-event", "state-clear", "expiry-event"])
async def test_a_name_holding_the_configured_key_is_refused_without_repeating_it(
        line: str, why: str, neotask_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neotask_tui.config import load_settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    monkeypatch.setenv("OPENAI_API_KEY", CONFIGURED)
    engine = Engine(load_settings(), provider=ScriptedProvider())
    try:
        key = engine.default_key()
        assert not (await dispatch(engine, key, "/goal ship it")).error  # a session with a state
        res = await dispatch(engine, key, line)
        state = json.dumps(engine.state.get(key).to_dict())
    finally:
        await engine.aclose()
    assert res.error and why in res.text, res.text
    stored = [p.read_text("utf-8", "replace") for p in (neotask_home / "data").rglob("*") if p.is_file()]
    assert not _leaks(res.text) and not _leaks(state) and not any(map(_leaks, stored)), (res.text, state)


@pytest.mark.promise("secrets")
def test_the_cli_prints_a_command_s_reply_and_error_with_the_configured_key_masked(
        neotask_home: Path, tmp_path: Path) -> None:
    env = {"NEOTASK_PROVIDER": "scripted", "OPENAI_API_KEY": CONFIGURED}
    r = neotask("send", f"/file {PART}", env=env)  # no such file: the error names the path
    assert r.returncode != 0 and "no file" in r.stderr , r.stderr
    assert not _leaks(r.stdout + r.stderr), r.stderr
    r = neotask("send", f"/event {PART}", env=env)
    assert "looks like a credential" in r.stderr and not _leaks(r.stdout + r.stderr), r.stderr
    r = neotask("send", f"/goal rotate {PART}", env=env)
    assert r.returncode == 0 and "[REDACTED:api_key]" in r.stdout and not _leaks(r.stdout + r.stderr), r.stdout
    state = neotask("state", KEY, "--json", env=env)
    assert not _leaks(state.stdout), state.stdout
