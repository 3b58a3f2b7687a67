"""Red team 5 (README "Secrets": security answers and Wi-Fi keys after a cue word are redacted in
every path): a security answer after a bare "is", and a Wi-Fi key named only "key" after the
network's name, were kept as typed. Each test failed on the code it was written against; the
prose tests beside them keep ordinary sentences about answers and keys readable."""

from __future__ import annotations

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.text.secrets import find_secrets, redact_secrets
from tests.faults.helpers import KEY, run_turn

pytestmark = pytest.mark.promise("secrets")


@pytest.mark.parametrize(("text", "value"), [
    ("my security answer is Fluffy", "Fluffy"),
    ("My security answer was Fluffy.", "Fluffy"),
    ("the answer to my security question is Fluffy", "Fluffy"),
    ("The answer to the security question for my bank is Fluffy, by the way", "Fluffy"),
    ("my secret answer is fluffy bunny", "fluffy bunny"),
    ("Security question answer is Pumpkin", "Pumpkin"),
    ("my memorable word is Marmalade", "Marmalade"),
    ("мой ответ на секретный вопрос — Пушистик", "Пушистик"),
    ("ответ на контрольный вопрос это Пушистик", "Пушистик"),
    ("Мой ответ на секретный вопрос банка — Барсик.", "Барсик"),
])
def test_a_security_answer_after_a_bare_link_is_redacted(text: str, value: str) -> None:
    """README: 'security answers … after a cue word' are redacted. After a bare "is" ("my security
    answer is Fluffy", "the answer to my security question is Fluffy") the answer was kept: only a
    symbol separator ("answer: …", "— …") counted."""
    red = redact_secrets(text)
    assert value not in red, red
    assert "[REDACTED:" in red, red


@pytest.mark.parametrize(("text", "value"), [
    ("wifi is CafeNet, key: V3ryS3cret", "V3ryS3cret"),
    ("WiFi: CafeNet, key V3ryS3cret", "V3ryS3cret"),
    ("SSID CafeNet, key is V3ryS3cret", "V3ryS3cret"),
    ("the network is CafeNet and the key is V3ryS3cret", "V3ryS3cret"),
    ("Wi-Fi CafeNet / psk: V3ryS3cret", "V3ryS3cret"),
    ("Wifi: CafeNet\nKey: V3ryS3cret", "V3ryS3cret"),
    ("hotspot CafeNet, key: sunshine-lemon", "sunshine-lemon"),
    ("вайфай CafeNet, ключ V3ryS3cret", "V3ryS3cret"),
])
def test_a_wifi_key_named_only_key_after_the_network_is_redacted(text: str, value: str) -> None:
    """README: 'Wi-Fi keys … after a cue word'. "wifi is CafeNet, key: V3ryS3cret" kept the key: a
    bare "key" counted only glued to "wifi" ("wifi key: …")."""
    red = redact_secrets(text)
    assert value not in red, red
    assert "CafeNet" in red, red  # the network's name is not the secret


@pytest.mark.parametrize("text", [
    "the answer is 42",
    "The answer is Fluffy",  # no security question named: an answer, not a credential
    "my key point is clarity",
    "The key is to stay calm.",
    "key: value pairs are stored in a dict",
    "my security answer is stored in the vault",
    "the security answer is case sensitive",
    "the answer to my security question is the name of my first pet",
    "my security answer is wrong",
    "What is the answer to my security question?",
    "ответ на секретный вопрос не задан",
    "The wifi is slow, the key point is to restart the router.",
    "wifi is CafeNet, key: see the sticker",
    "wifi router, key: the one on the label",
])
def test_prose_about_answers_and_keys_is_not_redacted(text: str) -> None:
    assert find_secrets(text) == [], redact_secrets(text)


def test_a_security_answer_announced_in_the_message_before_is_redacted() -> None:
    """README: 'A password sent on its own right after a message announcing it … is redacted too.'
    The announcement rule knew passwords, secrets and PINs only, and asked the value to look like a
    password; a security answer is a plain word."""
    said = redact_secrets("Fluffy", context="I'll send you my security answer in the next message.")
    assert "Fluffy" not in said, said
    said = redact_secrets("Remember: Пушистик", context="Сейчас пришлю ответ на секретный вопрос.")
    assert "Пушистик" not in said, said
    assert redact_secrets("Fluffy", context="My cat is cute.") == "Fluffy"  # nothing announced
    assert redact_secrets("Fluffy") == "Fluffy"


@pytest.mark.parametrize(("text", "value"), [
    ("Remember: my security answer is Fluffy.", "Fluffy"),
    ("Запомни: wifi CafeNet, key: V3ryS3cret", "V3ryS3cret"),
])
async def test_the_inbox_and_state_never_hold_the_answer_or_key(engine: Engine, text: str, value: str) -> None:
    """README: secrets are redacted in the promotion inbox and session state."""
    await run_turn(engine, text, KEY)
    entries = await engine.state.inbox_list("main")
    assert entries, "the request to remember proposes something"
    assert all(value not in e.text for e in entries), [e.text for e in entries]
    view = engine.state.get(KEY)
    assert all(value not in str(e.value) for e in view.active), [e.value for e in view.active]


@pytest.mark.parametrize(("text", "value"), [
    ("The wifi password, remember: Tr0ub4dor&3x", "Tr0ub4dor&3x"),
    ("my security answer, remember: Fluffy", "Fluffy"),
    ("Пароль от почты, запомни: Tr0ub4dor&3x", "Tr0ub4dor&3x"),
])
def test_a_value_announced_by_a_cue_and_a_request_to_remember_on_one_line_is_redacted(text: str, value: str) -> None:
    """README: 'A password sent on its own right after a message announcing it … is redacted too'.
    The same announcement inside one line ("The wifi password, remember: V") kept the value: the
    announced-value rule read a request to remember only at the start of the value's own line."""
    red = redact_secrets(text)
    assert value not in red and red.endswith("[REDACTED:password]"), red


def test_a_remark_after_a_cue_and_remember_is_kept() -> None:
    assert find_secrets("The password policy, remember: rotate monthly") == []
