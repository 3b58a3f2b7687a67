"""Red team 32, finding 5: the configured API key given as a CLI argument was printed back in full
(`search`, `memory forget`, `sessions restore`/`show`/`fork --at`, the `--since`/`--k`/`--days`
errors, a mistyped ``NEOTASK_*`` variable's name in `doctor`), while the same input as a slash
command read ``[REDACTED:api_key]``. README: "Configured API keys are never written to … output …
wherever it is shown". Every line a subcommand prints goes out masked now (``cli.output.MaskedStream``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.helpers import KEY
from tests.faults.helpers import cli as neotask

CONFIGURED = "sk-proj-Zq7Xw3Rt9Lm2Np5Vb8Kc4Hd6Jf1Gs0Ty"
"""The report's configured key (``OPENAI_API_KEY``)."""
PART = CONFIGURED[8:28]
"""20 of its characters in a row (the report's ``${OPENAI_API_KEY:8:20}``)."""
_ENV = {"NEOTASK_PROVIDER": "scripted", "OPENAI_API_KEY": CONFIGURED, "NEOTASK_MEMORY_ENABLED": "true"}


def _leaks(text: str) -> bool:
    """Whether ``text`` holds 16 characters in a row of :data:`PART` (the mask's window), case ignored."""
    return any(PART[i:i + 16].lower() in text.lower() for i in range(len(PART) - 15))


@pytest.mark.promise("secrets")
def test_a_key_given_as_a_cli_argument_is_never_printed_back(neotask_home: Path) -> None:
    assert neotask("send", "hello", env=_ENV).returncode == 0
    cases = [
        (("memory", "forget", CONFIGURED), 2, "nothing in memory holds every word of '[REDACTED:api_key]'"),
        (("search", CONFIGURED), 0, "no message matches [REDACTED:api_key]"),
        (("sessions", "restore", CONFIGURED), 2, "no transcript for session '[REDACTED:api_key]'"),
        (("memory", "search", "x", "--k", CONFIGURED), 2, "expected an integer, got '[REDACTED:api_key]'"),
        (("sessions", "fork", KEY, "--at", f"e:{PART}"), 2, "e:[REDACTED:api_key]"),
        (("search", "x", "--since", PART), 2, "not '[REDACTED:api_key]'"),
        (("sessions", "show", f"agent:main:tui:{PART}"), 2, "agent:main:tui:[REDACTED:api_key]"),
        (("sessions", "archive", "--days", PART), 2, "got '[REDACTED:api_key]'"),
    ]
    for argv, code, said in cases:
        r = neotask(*argv, env=_ENV)
        assert r.returncode == code and said in r.stdout + r.stderr, (argv, r.stdout, r.stderr)
        assert not _leaks(r.stdout + r.stderr) and "Zq7Xw3Rt9Lm2Np5Vb8Kc" not in r.stdout + r.stderr, argv
    r = neotask("search", CONFIGURED, "--json", env=_ENV)
    assert json.loads(r.stdout)["query"] == "[REDACTED:api_key]" and not _leaks(r.stdout), r.stdout


@pytest.mark.promise("secrets")
def test_doctor_masks_the_key_in_a_mistyped_variable_s_name(neotask_home: Path) -> None:
    assert neotask("send", "hello", env=_ENV).returncode == 0
    env = {**_ENV, f"NEOTASK_X_{PART}": "1"}
    for argv in (("doctor",), ("doctor", "--json")):
        r = neotask(*argv, env=env)
        assert "env NEOTASK_X_[REDACTED:api_key]: read by nothing" in r.stdout, r.stdout
        assert not _leaks(r.stdout + r.stderr), r.stdout


def test_a_masked_stream_masks_each_write_and_passes_the_rest_through() -> None:
    import io

    from neotask_tui.cli.output import MaskedStream

    buf = io.StringIO()
    s = MaskedStream(buf, [CONFIGURED])
    assert s.write(f"no message matches {PART}\n") == len(PART) + 20
    s.flush()
    assert buf.getvalue() == "no message matches [REDACTED:api_key]\n" and s.getvalue() == buf.getvalue()
