"""Bad settings and a bad home are one-line errors naming where; nothing runs on a silent default.

Also: the daily reset fires once per boundary even when the wall clock jumps back and forward, and
the plain REPL's history file is private.
"""

from __future__ import annotations

import os
import stat
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from neotask_tui.config import ConfigError, load_settings, parse_int
from tests.doubles import Clock
from tests.faults.helpers import KEY, cli

pytestmark = pytest.mark.promise("config_and_home")


def _write_config(home: Path, text: str) -> Path:
    cfg = home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text)
    return cfg


# ------------------------------------------------------------------------------------ int fields
@pytest.mark.parametrize(("section", "key", "value", "integral"), [
    ("session", "daily_reset_hour", "4.7", 5),
    ("session", "idle_reset_minutes", "30.5", 30),
    ("context", "window_tokens", "8192.25", 8192),
    ("provider", "max_tokens", "512.9", 512),
    ("memory", "recall_k", "6.1", 6),
    ("session", "cleanup_days", "inf", 3),
])
def test_a_toml_float_for_an_int_field_is_refused_not_truncated(
    neotask_home: Path, monkeypatch: pytest.MonkeyPatch, section: str, key: str, value: str, integral: int
) -> None:
    monkeypatch.delenv(f"NEOTASK_{section.upper()}_{key.upper()}", raising=False)
    cfg = _write_config(neotask_home, f"[{section}]\n{key} = {value}\n")
    with pytest.raises(ConfigError) as exc:
        load_settings()
    msg = str(exc.value)
    assert "\n" not in msg and f"{section}.{key}" in msg and f"{cfg}:2" in msg, msg
    assert "integer" in msg
    # An integral float (5.0) is the integer it spells.
    _write_config(neotask_home, f"[{section}]\n{key} = {integral}.0\n")
    got = getattr(getattr(load_settings(), section), key)
    assert got == integral and type(got) is int


@pytest.mark.parametrize(("section", "key", "value"), [
    ("session", "daily_reset_hour", '"5"'),
    ("memory", "recall_k", "'6'"),
    ("memory", "enabled", '"false"'),
    ("provider", "probe_ollama", '"no"'),
])
def test_a_quoted_number_or_boolean_in_toml_is_refused(
    neotask_home: Path, monkeypatch: pytest.MonkeyPatch, section: str, key: str, value: str
) -> None:
    """TOML has typed values: a string where a number or a boolean belongs is a mistake to name,
    not to guess at (env values are text and are parsed)."""
    monkeypatch.delenv(f"NEOTASK_{section.upper()}_{key.upper()}", raising=False)
    cfg = _write_config(neotask_home, f"[{section}]\n{key} = {value}\n")
    with pytest.raises(ConfigError) as exc:
        load_settings()
    msg = str(exc.value)
    assert "\n" not in msg and f"{section}.{key}" in msg and f"{cfg}:2" in msg and "without quotes" in msg, msg


@pytest.mark.parametrize("value", ["true", "false"])
def test_a_toml_boolean_for_an_integer_is_quoted_as_written(
    neotask_home: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    # Red team 32 (cosmetic): `daily_reset_hour = true` said "expected an integer, got True".
    monkeypatch.delenv("NEOTASK_SESSION_DAILY_RESET_HOUR", raising=False)
    _write_config(neotask_home, f"[session]\ndaily_reset_hour = {value}\n")
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert str(exc.value).endswith(f"expected an integer, got {value}"), exc.value


# ---------------------------------------------------------------------------------------- ranges
OUT_OF_RANGE: list[tuple[str, str, str]] = [
    ("session", "idle_reset_minutes", "99999999999999999999"),
    ("session", "idle_reset_minutes", "1000000000000"),
    ("session", "cleanup_days", "99999999999"),
    ("context", "reply_reserve_tokens", "-1"),
    ("context", "reply_reserve_tokens", "100000000000"),
    ("context", "max_message_tokens", "0"),
    ("context", "max_message_tokens", "-50"),
    ("context", "tool_result_max_tokens", "0"),
    ("context", "window_tokens", "100000000000"),
    ("context", "window_tokens", "10"),
    ("provider", "max_tokens", "0"),
    ("provider", "max_tokens", "-5"),
    ("provider", "max_tokens", "100000000000"),
    ("provider", "timeout_seconds", "0"),
    ("provider", "timeout_seconds", "-1"),
    ("provider", "timeout_seconds", "inf"),
    ("provider", "timeout_seconds", "nan"),
    ("provider", "max_retries", "-1"),
    ("provider", "max_retries", "1000"),
    ("provider", "local_context", "0"),
    ("provider", "local_threads", "-2"),
    ("compaction", "timeout_seconds", "0"),
    ("compaction", "timeout_seconds", "nan"),
    ("compaction", "keep_recent_tokens", "-1"),
    ("compaction", "rebuild_every", "-1"),
    ("memory", "recall_k", "0"),
    ("memory", "recall_k", "-3"),
    ("memory", "recall_k", "100000"),
    ("memory", "recall_budget_tokens", "-1"),
    ("memory", "min_score", "nan"),
    ("memory", "chunk_tokens", "100000000"),
]


@pytest.mark.parametrize(("section", "key", "value"), OUT_OF_RANGE,
                         ids=[f"{s}.{k}={v[:12]}" for s, k, v in OUT_OF_RANGE])
def test_out_of_range_env_values_are_named(monkeypatch: pytest.MonkeyPatch, section: str, key: str,
                                           value: str) -> None:
    var = f"NEOTASK_{section.upper()}_{key.upper()}"
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as exc:
        load_settings()
    msg = str(exc.value)
    assert "\n" not in msg and var in msg and f"{section}.{key}" in msg, msg


@pytest.mark.parametrize(("section", "key", "value"), OUT_OF_RANGE[3:12],
                         ids=[f"{s}.{k}={v[:12]}" for s, k, v in OUT_OF_RANGE[3:12]])
def test_out_of_range_file_values_name_file_and_line(neotask_home: Path, section: str, key: str,
                                                     value: str) -> None:
    cfg = _write_config(neotask_home, f"# comment\n[{section}]\n{key} = {value}\n")
    with pytest.raises(ConfigError) as exc:
        load_settings()
    msg = str(exc.value)
    assert "\n" not in msg and f"{cfg}:3" in msg and f"{section}.{key}" in msg, msg


def test_reply_reserve_must_leave_room_in_an_explicit_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOTASK_CONTEXT_WINDOW_TOKENS", "2048")
    monkeypatch.setenv("NEOTASK_CONTEXT_REPLY_RESERVE_TOKENS", "4096")
    with pytest.raises(ConfigError, match="reply_reserve_tokens"):
        load_settings()


def test_a_huge_idle_reset_is_a_one_line_cli_error_not_a_traceback(data_dir: Path) -> None:
    assert cli("send", "first", env={"NEOTASK_PROVIDER": "scripted"}).returncode == 0
    r = cli("send", "second", env={"NEOTASK_PROVIDER": "scripted",
                                   "NEOTASK_SESSION_IDLE_RESET_MINUTES": "99999999999999"})
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "NEOTASK_SESSION_IDLE_RESET_MINUTES" in r.stderr and "session.idle_reset_minutes" in r.stderr


# ----------------------------------------------------------------------------------- NEOTASK_HOME
def _home_cases(tmp_path: Path) -> dict[str, Path]:
    f = tmp_path / "a-file"
    f.write_text("not a directory\n")
    return {
        "file": f,
        "under-a-file": f / "home",
        # Read-only even for root: nothing can be created under /proc.
        "read-only": Path("/proc/self/neotask-home"),
    }


@pytest.mark.parametrize("case", ["file", "under-a-file", "read-only"])
def test_a_bad_neotask_home_is_a_one_line_error_and_doctor_reports_it(tmp_path: Path, case: str) -> None:
    home = _home_cases(tmp_path)[case]
    env = {"NEOTASK_HOME": str(home), "NEOTASK_PROVIDER": "scripted"}
    for argv in (("send", "hello"), ("sessions", "new", KEY), ("memory", "add", "x")):
        r = cli(*argv, env={**env, "NEOTASK_MEMORY_ENABLED": "true"})
        assert r.returncode == 2, (argv, r.returncode, r.stderr[-400:])
        line = r.stderr.strip()
        assert "\n" not in line and "NEOTASK_HOME" in line and str(home) in line, (argv, line)
    d = cli("doctor", "--json", env=env)
    assert d.returncode == 1 and "Traceback" not in d.stderr, d.stderr
    import json

    report = json.loads(d.stdout)
    assert not report["clean"] and any("NEOTASK_HOME" in p for p in report["problems"]), report


# ----------------------------------------------------------------------- daily reset, clock jumps
@pytest.mark.promise("reset_once")
async def test_a_clock_jumping_back_and_forward_does_not_reset_twice(neotask_home: Path) -> None:
    from neotask_tui.config import Settings
    from neotask_tui.engine.events import SessionReset
    from neotask_tui.engine.facade import Engine
    from neotask_tui.providers.scripted import ScriptedProvider

    tz = ZoneInfo("Europe/Berlin")
    s = Settings()
    s.memory.enabled = False
    s.session.daily_reset_hour = 4
    clock = Clock(datetime(2026, 6, 10, 10, 0, tzinfo=tz))
    eng = Engine(s, provider=ScriptedProvider(), clock=clock, tz=tz)
    try:
        async def turn(text: str) -> list[object]:
            return [e async for e in eng.send(text, KEY)]

        await turn("morning of the 10th")
        clock.set(datetime(2026, 6, 11, 9, 0, tzinfo=tz))          # past the 04:00 boundary: one reset
        assert sum(isinstance(e, SessionReset) for e in await turn("the 11th")) == 1
        sid = eng.current_record(KEY).session_id
        clock.set(datetime(2026, 6, 10, 23, 0, tzinfo=tz))         # NTP fixes a fast clock: back 10 h
        assert not any(isinstance(e, SessionReset) for e in await turn("clock went back"))
        clock.set(datetime(2026, 6, 11, 9, 30, tzinfo=tz))         # and forward again
        evs = await turn("clock is right again")
        assert not any(isinstance(e, SessionReset) for e in evs)
        assert eng.current_record(KEY).session_id == sid
        clock.set(datetime(2026, 6, 12, 4, 0, tzinfo=tz) + timedelta(minutes=1))  # the next real boundary
        assert sum(isinstance(e, SessionReset) for e in await turn("the 12th")) == 1
    finally:
        await eng.aclose()


# ---------------------------------------------------------------------------------- REPL history
def test_the_plain_repl_history_file_is_private(neotask_home: Path) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from neotask_tui.config import Settings
    from neotask_tui.engine.facade import Engine
    from neotask_tui.paths import history_file
    from neotask_tui.providers.scripted import ScriptedProvider
    from neotask_tui.repl import Repl

    old = os.umask(0o022)
    try:
        s = Settings()
        s.memory.enabled = False
        eng = Engine(s, provider=ScriptedProvider())
        try:
            with create_pipe_input() as inp:
                repl = Repl(eng, KEY, input=inp, output=DummyOutput())
                repl.session.history.append_string("my secret plans")
        finally:
            eng.close()
    finally:
        os.umask(old)
    mode = stat.S_IMODE(history_file().stat().st_mode)
    assert mode == 0o600, oct(mode)
    assert "my secret plans" in history_file().read_text()



# ------------------------------------------------------------- env numbers are ASCII, as in TOML
@pytest.mark.parametrize(("value", "want"), [("5.0", 5), ("5", 5), (" 7 ", 7), ("+9", 9)])
def test_an_integral_env_value_is_the_integer_it_spells_as_in_toml(monkeypatch: pytest.MonkeyPatch, value: str,
                                                                   want: int) -> None:
    monkeypatch.setenv("NEOTASK_SESSION_CLEANUP_DAYS", value)
    got = load_settings().session.cleanup_days
    assert got == want and type(got) is int


@pytest.mark.parametrize("value", ["5_0", "1_000", "٥", "５", "२", "4.7", "0x10", "inf", "nan", "9" * 5000, "", "5 0"],
                         ids=["underscore", "underscore-thousands", "arabic-indic", "fullwidth", "devanagari",
                              "fraction", "hex", "inf", "nan", "5000-digits", "empty", "space"])
def test_an_env_integer_is_ascii_digits_only(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("NEOTASK_SESSION_CLEANUP_DAYS", value)
    with pytest.raises(ConfigError) as exc:
        load_settings()
    msg = str(exc.value)
    assert "\n" not in msg and "NEOTASK_SESSION_CLEANUP_DAYS" in msg and "session.cleanup_days" in msg, msg
    assert len(msg) < 300


# Red team 29: "4.9999999999999999" was read as a float (5.0) and then found integral. Whether a
# number is an integer is decided on what was written, in the environment and in config.toml.
NEARLY_INTEGRAL = ["4.9999999999999999", "5.00000000000000001", "4.99999999999999999999e0"]


@pytest.mark.parametrize("value", NEARLY_INTEGRAL)
def test_an_env_integer_setting_refuses_a_decimal_that_only_rounds_to_one(
        monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("NEOTASK_SESSION_DAILY_RESET_HOUR", value)
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert str(exc.value) == (f"env NEOTASK_SESSION_DAILY_RESET_HOUR: session.daily_reset_hour: expected an "
                              f"integer, got '{value}'")
    with pytest.raises(ValueError, match="expected an integer"):  # a CLI flag (`--days`) reads it the same way
        parse_int(value)


@pytest.mark.parametrize("value", NEARLY_INTEGRAL)
def test_a_toml_integer_setting_refuses_a_float_that_only_rounds_to_one(
        neotask_home: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.delenv("NEOTASK_SESSION_DAILY_RESET_HOUR", raising=False)
    cfg = _write_config(neotask_home, f"[session]\ndaily_reset_hour = {value}\n")
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert str(exc.value) == f"{cfg}:2: session.daily_reset_hour: expected an integer, got {value}"


@pytest.mark.parametrize(("value", "want"), [("5.00", 5), ("50e-1", 5), ("0.5e1", 5), ("5e0", 5), ("1_0.0", 10),
                                            ("-1.000", -1)])
def test_a_decimal_that_is_exactly_an_integer_is_that_integer(
        neotask_home: Path, monkeypatch: pytest.MonkeyPatch, value: str, want: int) -> None:
    monkeypatch.delenv("NEOTASK_SESSION_DAILY_RESET_HOUR", raising=False)
    _write_config(neotask_home, f"[session]\ndaily_reset_hour = {value}\n")
    got = load_settings().session.daily_reset_hour
    assert got == want and type(got) is int
    if "_" not in value and "e" not in value:  # TOML's separator and exponent; an env value is digits and a point
        monkeypatch.setenv("NEOTASK_SESSION_DAILY_RESET_HOUR", value)
        assert load_settings().session.daily_reset_hour == want


# Red team 30, finding 7: NEOTASK_SESSION_DAILY_RESET_HOUR=5e0 and `--k 1e1` were read as 5 and 10. An
# integer typed as text (an env var, a CLI flag) is ASCII digits and a point, as the README says; a
# config.toml float (5e0, typed by TOML) is still read on its digits (the test above).
EXPONENTS = ["5e0", "50e-1", "0.5e1", "5E0", "5.0e0", "1e1", "4.9999999999999999e0"]


@pytest.mark.parametrize("value", EXPONENTS)
def test_an_env_or_flag_integer_refuses_an_exponent(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("NEOTASK_SESSION_DAILY_RESET_HOUR", value)
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert str(exc.value) == (f"env NEOTASK_SESSION_DAILY_RESET_HOUR: session.daily_reset_hour: expected an "
                              f"integer, got '{value}'")
    with pytest.raises(ValueError, match=f"^expected an integer, got '{value}'$"):
        parse_int(value)


def test_a_range_error_quotes_the_value_as_written(neotask_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # NEOTASK_COMPACTION_THRESHOLD=1e-400 was refused with "got 0.0": the float it underflowed to.
    monkeypatch.setenv("NEOTASK_COMPACTION_THRESHOLD", "1e-400")
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert str(exc.value) == ("env NEOTASK_COMPACTION_THRESHOLD: compaction.threshold: must be between 0.05 and 1, "
                              "got '1e-400'")
    monkeypatch.delenv("NEOTASK_COMPACTION_THRESHOLD")
    cfg = _write_config(neotask_home, "[compaction]\nthreshold = 1e-400\n")
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert str(exc.value) == f"{cfg}:2: compaction.threshold: must be between 0.05 and 1, got 1e-400"


@pytest.mark.parametrize("value", ["1_0.5", "٥", "١.٥", "５.0", "1.5_0", "0x1p3"])
def test_an_env_float_is_an_ascii_decimal(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("NEOTASK_PROVIDER_TIMEOUT_SECONDS", value)
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert "NEOTASK_PROVIDER_TIMEOUT_SECONDS" in str(exc.value)


@pytest.mark.parametrize(("value", "want"), [("1.5", 1.5), ("2e1", 20.0), (".5", 0.5), ("30", 30.0)])
def test_ascii_env_floats_are_read(monkeypatch: pytest.MonkeyPatch, value: str, want: float) -> None:
    monkeypatch.setenv("NEOTASK_PROVIDER_TIMEOUT_SECONDS", value)
    assert load_settings().provider.timeout_seconds == want


def test_a_toml_integer_of_5000_digits_is_a_config_error(neotask_home: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEOTASK_SESSION_CLEANUP_DAYS", raising=False)
    cfg = _write_config(neotask_home, "[session]\ncleanup_days = " + "9" * 5000 + "\n")
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert str(cfg) in str(exc.value) and "\n" not in str(exc.value)


# ------------------------------------------------------- dotted keys and inline tables name the line
@pytest.mark.parametrize(("text", "line"), [
    ("# top\nsession.daily_reset_hour = 99\n", 2),
    ('# x\n\n"session"."daily_reset_hour" = 99\n', 3),
    ("# a\n# b\nsession = {daily_reset_hour = 99}\n", 3),
    ("session = { idle_reset_minutes = 5, daily_reset_hour = 99 }\n", 1),
    ("[context]\nwindow_tokens = 0\n\n[session] # the session table\nidle_reset_minutes = 5\n"
     "daily_reset_hour = 99\n", 6),
    ('[session]\n"daily_reset_hour" = 99\n', 2),
])
def test_a_dotted_or_inline_bad_value_names_file_and_line(neotask_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                          text: str, line: int) -> None:
    monkeypatch.delenv("NEOTASK_SESSION_DAILY_RESET_HOUR", raising=False)
    cfg = _write_config(neotask_home, text)
    with pytest.raises(ConfigError) as exc:
        load_settings()
    msg = str(exc.value)
    assert f"{cfg}:{line}:" in msg and "session.daily_reset_hour" in msg, msg


@pytest.mark.parametrize(("text", "line"), [
    ("# x\nsession.bogus = 1\n", 2),
    ("\nsession = {bogus = 1}\n", 2),
    ("session = {cleanup_days = 4.5}\n", 1),
    ("# x\ntitle = 1\n", 2),
    ("[session]\ncleanup_days = 3\n[sesion]\nidle_reset_minutes = 1\n", 3),
])
def test_unknown_or_bad_dotted_keys_name_the_line(neotask_home: Path, text: str, line: int) -> None:
    cfg = _write_config(neotask_home, text)
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert f"{cfg}:{line}:" in str(exc.value), str(exc.value)


# --------------------------------------------------------------- doctor on an unusable NEOTASK_HOME
@pytest.mark.parametrize("case", ["file", "under-a-file", "symlink-loop"])
@pytest.mark.parametrize("flags", [(), ("--json",), ("--fix",), ("--fix", "--json")])
def test_doctor_on_an_unusable_home_reports_and_exits_1_cleanly(tmp_path: Path, case: str,
                                                                flags: tuple[str, ...]) -> None:
    if case == "symlink-loop":
        a, b = tmp_path / "loop-a", tmp_path / "loop-b"
        a.symlink_to(b)
        b.symlink_to(a)
        home = a
    else:
        home = _home_cases(tmp_path)[case]
    d = cli("doctor", *flags, env={"NEOTASK_HOME": str(home), "NEOTASK_PROVIDER": "scripted"})
    assert d.returncode == 1 and "Traceback" not in d.stderr and not d.stderr.strip(), d.stderr[-600:]
    if "--json" in flags:
        import json

        report = json.loads(d.stdout)
        assert not report["clean"] and any("NEOTASK_HOME" in p for p in report["problems"]), report
    else:
        assert "NEOTASK_HOME" in d.stdout and "✗" in d.stdout, d.stdout


@pytest.mark.parametrize(("var", "value", "named"), [
    ("NEOTASK_CONTEXT_WINDOW_TOKENS", "500", "context.reply_reserve_tokens"),
    ("NEOTASK_COMPACTION_KEEP_RECENT_SHARE", "0.5", "memory.recall_share"),
])
def test_a_check_between_two_settings_names_the_variable_that_set_one(
        monkeypatch: pytest.MonkeyPatch, neotask_home: Path, var: str, value: str, named: str) -> None:
    # Red team 35: NEOTASK_CONTEXT_WINDOW_TOKENS=500 (under the default reply reserve) was blamed on
    # "config/config.toml:?", a file that does not exist.
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as exc:
        load_settings()
    msg = str(exc.value)
    assert msg.startswith(f"env {var}: {named}:"), msg
    assert "config.toml" not in msg
