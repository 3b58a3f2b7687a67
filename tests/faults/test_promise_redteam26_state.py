"""README promises red team 26 broke: session state kept a password the index redacted; the configured API
key echoed with invisible characters, a line break, full-width letters or another case."""

from __future__ import annotations

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.engine.language.rules import classify
from tests.faults.helpers import KEY, run_turn

VALUE = "Kestrel-" + "Blue-77"  # built at runtime: no literal credential in the repository


@pytest.mark.parametrize("text", [
    f"The password I use everywhere is {VALUE}",
    f"My goal is to rotate the password I use everywhere is {VALUE} today",
])
def test_a_state_value_cut_from_a_sentence_keeps_its_secret_redacted(text: str) -> None:
    # F2: "selected_entity: everywhere is Kestrel-Blue-77": the value cut out of the sentence had lost the cue
    # word ("password") that makes the rest a secret.
    # (Session 23: the first is no pick at all now, "I use" there is a relative clause: see
    # test_promise_leftovers23.)
    out = classify(text)
    assert out or text.startswith("The password I use"), text
    for c in out:
        assert VALUE not in c.text and VALUE not in (c.value or ""), c
        assert "[REDACTED:password]" in (c.value or c.text)


async def test_the_session_state_never_holds_the_password(engine: Engine) -> None:
    told = await run_turn(engine, f"The password I use everywhere is {VALUE}", KEY)
    assert engine.state is not None
    view = repr(engine.state.get(KEY))
    assert VALUE not in view, view[max(0, view.find(VALUE) - 400):view.find(VALUE) + 40]
    from neotask_tui.engine.events import Notice

    notices = [e.text for e in told if isinstance(e, Notice)]
    assert VALUE not in repr(notices)


async def test_inbox_list_all_says_what_became_of_each_entry(engine: Engine) -> None:
    # F7: `inbox list --all` said "3 waiting for approval" and showed a withdrawn entry like a pending one.
    from neotask_tui.commands.state import describe_inbox

    assert engine.state is not None
    await run_turn(engine, "My favourite editor is Helix.", KEY)
    [e async for e in engine.edit_last("My home city is Lisbon.", KEY)]
    shown = describe_inbox(await engine.state.inbox_list("main", None))
    assert "1 waiting for approval, 1 decided" in shown, shown
    assert "**withdrawn**" in shown and shown.count("**withdrawn**") == 1, shown
