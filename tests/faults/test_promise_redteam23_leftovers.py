"""README promises red team 23 left open: a wrapped password value with words after it on its line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import KEY, run_turn

MARBLE = "Marble-" + "Otter-52"  # built at runtime: no literal credential in the repository
ZEBRA = "Zebra9" + "-x7Q"


@pytest.mark.parametrize(("text", "secret"), [
    (f"the password stays\n{MARBLE} until Monday", MARBLE),
    (f"the password remains\n{MARBLE}.", MARBLE),
    (f"пароль остаётся\n{MARBLE} до понедельника", MARBLE),
    (f"my password is\n{ZEBRA} until Friday", ZEBRA),
    (f"password:\n{ZEBRA} (do not share)", ZEBRA),
])
def test_a_wrapped_value_with_words_after_it_is_redacted(text: str, secret: str) -> None:
    out = redact_secrets(text)
    assert secret not in out and "[REDACTED:password]" in out, out
    assert out.split("\n")[1].endswith(text.split("\n")[1][len(secret):]), out  # the words after it stay


@pytest.mark.parametrize("text", [
    "password:\nhello world how are you",
    "the password stays\nthe same as before",
    "The password stays\nin the vault until Monday",
    "password:\nUse the vault CLI",
    "password was\nchanged yesterday by Dana",
])
def test_a_next_sentence_after_a_wrapped_cue_is_left_alone(text: str) -> None:
    assert redact_secrets(text) == text


async def test_a_wrapped_password_stays_out_of_the_search_index(engine: Engine, data_dir: Path) -> None:
    await run_turn(engine, f"the password stays\n{MARBLE} until Monday", KEY)
    rows = []
    for db in data_dir.rglob("*.sqlite3"):
        con = sqlite3.connect(db)
        try:
            for (name,) in con.execute("select name from sqlite_master where type='table'"):
                rows += [repr(r) for r in con.execute(f'select * from "{name}"')]
        finally:
            con.close()
    blob = "\n".join(rows)
    assert "until Monday" in blob  # the message was indexed
    assert MARBLE not in blob
