"""A session-state value stored under a secret's name is redacted before it is stored or sent
(red team, session 7: ``/state set db_password Hunter2!v`` kept the value in clear, in
``neotask state --json`` and in the state block of every call)."""

from __future__ import annotations

from pathlib import Path

import pytest

from neotask_tui.commands import dispatch
from neotask_tui.engine.facade import Engine
from tests.faults.helpers import KEY

pytestmark = pytest.mark.promise("secrets")

VALUE = "Hunter2!v"


@pytest.mark.parametrize("field", ["db_password", "api_key", "stripe_secret", "DB-PASSWORD", "wifi.passphrase"])
async def test_a_value_under_a_secrets_name_never_reaches_disk_or_the_model(
        engine: Engine, data_dir: Path, field: str) -> None:
    res = await dispatch(engine, KEY, f"/state set {field} {VALUE}")
    assert not res.error, res.text
    assert VALUE not in res.text
    ctx = await engine.preview(KEY, "hello")
    assert all(VALUE not in m.content for m in ctx.messages)
    assert "[REDACTED:" in engine.state.block(KEY)
    assert [p for p in data_dir.rglob("*") if p.is_file() and VALUE.encode() in p.read_bytes()] == []


@pytest.mark.parametrize("field", ["goal", "primary_key", "constraints"])
async def test_a_plain_name_keeps_its_value(engine: Engine, field: str) -> None:
    await dispatch(engine, KEY, f"/state set {field} {VALUE}")
    assert VALUE in engine.state.block(KEY)
