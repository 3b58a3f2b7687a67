"""README promise (Secrets), second red-team round: asides between the cue word and the value, more
prose and command-line shapes, more cue words, cue words broken up by wraps or look-alikes, wrapped
values, and false-positive guards for ordinary prose and code."""

from __future__ import annotations

import json

import pytest

from neotask_tui.engine.facade import Engine
from neotask_tui.text.secrets import redact_secrets
from tests.faults.helpers import KEY, run_turn

PW = "Zebra9" + "Quokka1"  # built at runtime: no literal credential in the repository
HUNTER = "hunter2" + "hunter2"
SEED = ("abandon ability able about above absent absorb abstract absurd abuse access accident")


def _hidden(text: str, secret: str) -> str:
    out = redact_secrets(text)
    assert secret not in out, out
    assert "[REDACTED:" in out, out
    return out


@pytest.mark.parametrize("text", [
    f"password (don't tell anyone): {HUNTER}",
    f"пароль (никому не говори): {HUNTER}",
    f"my password — don't share — is {HUNTER}",
])
def test_an_aside_between_cue_and_value_is_skipped(text: str) -> None:
    out = _hidden(text, HUNTER)
    assert "tell anyone" in out or "никому не говори" in out or "don't share" in out  # the aside stays


@pytest.mark.parametrize("text", [
    f"My password? It's {PW}.",
    f"my password, by the way, is {PW}",
    f"The root password, which I set yesterday, is {PW}",
    f"пароль, кстати, {PW}",
    f"пароль такой: {PW}",
    f"пароль — это {PW}",
    f"Пароль? {PW}",
])
def test_prose_shapes(text: str) -> None:
    _hidden(text, PW)


@pytest.mark.parametrize("text", [
    f"docker login -u bob -p {PW}",
    f"podman login registry.example.com --username bob --password {PW}",
    f"htpasswd -b file bob {PW}",
    f"htpasswd -nbB bob {PW}",
])
def test_command_lines(text: str) -> None:
    out = _hidden(text, PW)
    assert "bob" in out


@pytest.mark.parametrize(("text", "secret"), [
    (f"мнемоника: {SEED}", SEED),
    ("my pin number is 4921", "4921"),
    ("the code for the door is 4921", "4921"),
    ("door code: 4921", "4921"),
    (f"wifi key: {PW}", PW),
    (f"the secret is {PW}", PW),
    ("security answer: Fluffy1999", "Fluffy1999"),
    # "login with admin / V": a user / password pair after a login word, like "login: admin / V"; the
    # slash form asks for a password-looking value, so "login with admin / please" stays prose
    (f"login with admin / {PW}", PW),
])
def test_cue_words(text: str, secret: str) -> None:
    _hidden(text, secret)


@pytest.mark.parametrize("cue", [
    "pass\nword", "pa\nssword", "pass-\nword", "passw\r\nord", "pass\u2028word", "p a s s w o r d",
    "p@ssword", "passw0rd", "pa55word", "пар0ль", "пар\nоль",
    "p\u0430ss\nword", "\uff50\uff41ss\nword", "pa$$w0rd", "PASS\nWORD",  # look-alikes and a wrap at once
])
def test_a_broken_cue_word_still_counts(cue: str) -> None:
    out = _hidden(f"{cue}: {PW}", PW)
    assert out.startswith(cue)  # the cue word itself is kept as written


@pytest.mark.parametrize(("text", "half"), [
    ("my password is Zebra9\nQuokka1", "Quokka1"),
    ("my password is hunter2hun-\nter2", "ter2"),
    ("log in with password Zebra9\nQuokka1", "Quokka1"),
    ("the pass is Zebra9\nQuokka1", "Quokka1"),
    ("PASSWORD=hunter2hun-\nter2", "ter2"),
])
def test_a_wrapped_value_is_redacted_whole(text: str, half: str) -> None:
    out = redact_secrets(text)
    assert half not in out, out


@pytest.mark.parametrize("rest", ["and more words here", "Thanks!", "```", "2. next item"])
def test_the_next_line_after_a_value_is_not_taken_for_its_rest(rest: str) -> None:
    assert redact_secrets(f"my password is Zebra9\n{rest}") == f"my password is [REDACTED:password]\n{rest}"


@pytest.mark.parametrize("text", [
    "Forgot password? Click here to reset it.",
    "What is your password? I don't remember mine.",
    "The password, username, and email fields are required.",
    "Password, email, phone2 fields",
    "the password (see the vault) is stored elsewhere",
    "my password — the one I use everywhere — is weak",
    "I need to pass\nword lists to the function",
    "the code for the door is on the fridge",
    "pin number is required",
    "docker login -u bob --password-stdin",
    "docker login -u bob -p $REGISTRY_PASSWORD",
    "htpasswd -c /etc/nginx/.htpasswd bob",
    "security answer: not set",
    "login with admin / please",
    "wifi key: see the router",
    "DB_PASSWORD=abc123\nAPI_URL=http://localhost:8000",
    "DB_PASSWORD=abc123\nDEBUG_1",
    "мнемоника — это способ запоминания",
    "пароль, который я забыл, надо сбросить",
    "Пароль? Не помню.",
    "пароль такой же, как раньше",
    "The password, which is hashed, is stored in the db",
    "def check(password, user):\n    return password == user.pw",
    "passwords, tokens, keys: all go to the vault",
    "пароль — это важно",
    "пароль — это то, что нельзя никому говорить",
    "Пароль? Спроси у админа",
    "My password? Forgot it again.",
    "my password — the same as before — is fine",
    "пароль, кстати, сменили",
    "the door code is on the fridge",
])
def test_ordinary_prose_and_code_are_left_alone(text: str) -> None:
    out = redact_secrets(text)
    if text.startswith("DB_PASSWORD"):
        assert out.split("\n")[1] == text.split("\n")[1], out  # the next line is not the value
    else:
        assert out == text


# -- a secret split across turns -----------------------------------------------------------------
OLD = "Yak4" + "Wombat88-old"
ANNOUNCE = "I'm going to tell you my NAS admin password in the next message."


@pytest.mark.parametrize(("context", "text", "secret"), [
    (ANNOUNCE, PW, PW),
    ("And the old one was:", OLD, OLD),
    ("Мой пароль от роутера пришлю следующим сообщением.", PW, PW),
    (None, f"I'm going to tell you my NAS password now.\n{PW}", PW),
])
def test_a_value_announced_by_the_message_before_is_redacted(context: str | None, text: str, secret: str) -> None:
    out = redact_secrets(text, context=context)
    assert secret not in out and "[REDACTED:password]" in out, out
    assert redact_secrets(PW) == PW  # without the announcement a lone token is just a token


@pytest.mark.parametrize(("context", "text"), [
    ("Run this:", "make-test2"),
    ("Let's talk about the weather.", PW),
    ("the password module is:", "my_module"),
    ("password:", "hello world how are you"),
    ("My password is", "wrong."),
    (None, "def check_password(x):\n    return_value2"),
    (None, "Which file has the password check?\nsrc/auth/login.py"),
])
def test_an_unannounced_or_ordinary_next_message_is_left_alone(context: str | None, text: str) -> None:
    assert redact_secrets(text, context=context) == text


async def test_a_password_sent_after_its_announcement_stays_out_of_the_summary(engine: Engine) -> None:
    await run_turn(engine, "Please help me set up backups for the NAS at nas.local.", KEY)
    await run_turn(engine, ANNOUNCE, KEY)
    await run_turn(engine, PW, KEY)
    await run_turn(engine, "And the old one was:", KEY)
    await run_turn(engine, OLD, KEY)
    for i in range(5):
        await run_turn(engine, f"step {i}: " + "filler text " * 200, KEY)
    r = await engine.compact(KEY)  # type: ignore[attr-defined]
    stored = [e.data for e in engine.events(KEY) if e.type == "compaction"]
    assert stored, "nothing was compacted"
    blob = json.dumps(stored) + r.summary + json.dumps(r.sections) + json.dumps(r.repaired)
    assert PW not in blob and OLD not in blob, blob
    assert "nas.local" in r.summary


# -- a secret in a memory file's name ------------------------------------------------------------
GH = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"


def test_a_location_redacts_the_file_name_and_keeps_its_suffix() -> None:
    from neotask_tui.text.secrets import redact_path

    assert redact_path(f"memory/{GH}.md:1-3") == "memory/[REDACTED:github_token].md:1-3"
    assert redact_path(f"memory/password is {PW}.md:2-4") == "memory/password is [REDACTED:password].md:2-4"
    for plain in ("memory/2024-05-01-notes.md:1-4", "MEMORY.md:10-12", "transcripts/s-1#e:3-4",
                  "memory/project_alpha_v2.md:1-1"):
        assert redact_path(plain) == plain


GH_MIXED = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
"""A GitHub token in mixed case: high-entropy enough that, with the folder before it, it read as one run."""


def test_a_location_keeps_the_folder_of_a_secret_file_name() -> None:
    # Red team 31, finding 16: "memory/ghp_<mixed case>.md" was shown "[REDACTED:high_entropy].md" (the
    # folder swallowed, the kind wrong) while "memory/pass=….md" kept its folder.
    from neotask_tui.text.secrets import redact_path

    assert redact_path(f"memory/{GH_MIXED}.md:1-3") == "memory/[REDACTED:github_token].md:1-3"
    assert redact_path(f"memory/{GH_MIXED}\x01.md") == "memory/[REDACTED:github_token]\x01.md"
    assert redact_path("memory/pass=Hunter2Secret!x.md:2-2") == "memory/pass=[REDACTED:password].md:2-2"
    assert redact_path(f"notes/{GH_MIXED}/a.md") == "notes/[REDACTED:github_token]/a.md"
    split = "memory/Zq7Xw3Rt9Lm2/Np5Vb8Kc4Hd6Jf1Gs0Ty.md"  # a secret across a "/" is still masked whole
    assert "Zq7Xw3Rt9Lm2" not in redact_path(split) and "Np5Vb8Kc4Hd6Jf1Gs0Ty" not in redact_path(split)


@pytest.mark.usefixtures("memory_on")
def test_a_secret_file_name_shows_its_folder_and_still_reads_back(data_dir: object) -> None:
    from neotask_tui import paths
    from neotask_tui.config import load_settings
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.memory.tools import handle_tool

    ws = paths.workspace_dir("main")
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / f"{GH_MIXED}.md").write_text("The deploy runs from the ci box on Fridays.\n", encoding="utf-8")
    (ws / "memory" / "pass=Hunter2Secret!x.md").write_text("The nas backup runs at night.\n", encoding="utf-8")
    svc = MemoryService(load_settings().memory)
    try:
        svc.reindex("main")
        found = handle_tool(svc, "main", "memory_search", {"query": "deploy ci box Fridays nas backup night"})
        assert found is not None
        sources = sorted(h["source"] for h in json.loads(found))
        got = sorted(str(handle_tool(svc, "main", "memory_get", {"path": s})) for s in sources)
    finally:
        svc.close()
    assert sources == ["memory/[REDACTED:github_token].md:1-1", "memory/pass=[REDACTED:password].md:1-1"]
    assert got == ["The deploy runs from the ci box on Fridays.", "The nas backup runs at night."]


@pytest.fixture
def memory_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOTASK_MEMORY_ENABLED", "true")


@pytest.mark.usefixtures("memory_on")
def test_a_secret_in_a_memory_file_name_is_not_shown(data_dir: object) -> None:
    from neotask_tui import paths
    from neotask_tui.config import load_settings
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.memory.tools import handle_tool

    ws = paths.workspace_dir("main")
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / f"{GH}.md").write_text("The deploy runs from the ci box on Fridays.\n", encoding="utf-8")
    (ws / "memory" / f"password is {PW}.md").write_text("The nas backup runs at night.\n", encoding="utf-8")
    svc = MemoryService(load_settings().memory)
    try:
        svc.reindex("main")
        hits = svc.search("deploy ci box Fridays nas backup night", agent_id="main", k=5)
        found = handle_tool(svc, "main", "memory_search", {"query": "deploy ci box Fridays nas backup night"})
        assert found is not None
        sources = [h["source"] for h in json.loads(found)]
        got = [handle_tool(svc, "main", "memory_get", {"path": s}) for s in sources]
    finally:
        svc.close()
    shown = json.dumps([h.to_dict() for h in hits]) + " ".join(h.location for h in hits) + found
    assert len(hits) == 2 and len(sources) == 2
    assert GH not in shown and PW not in shown, shown
    assert "memory/[REDACTED:github_token].md:1-1" in sources
    # the redacted location the model was given still reads the file it names
    assert sorted(str(g) for g in got) == ["The deploy runs from the ci box on Fridays.",
                                           "The nas backup runs at night."]


@pytest.mark.usefixtures("memory_on")
def test_a_password_announced_in_the_message_before_is_not_indexed(data_dir: object) -> None:
    from neotask_tui.config import load_settings
    from neotask_tui.memory.service import MemoryService
    from neotask_tui.storage.events import Event

    texts = [("user", "Help me back up the NAS."), ("assistant", "Sure."), ("user", ANNOUNCE),
             ("assistant", "Go ahead."), ("user", PW), ("user", "And the old one was:"), ("user", OLD)]
    events = [Event("session", 1, None, "2026-01-01T10:00:00+00:00", {})]
    for i, (role, text) in enumerate(texts, start=2):
        events.append(Event("message", i, i - 1, f"2026-01-01T10:00:{i:02d}+00:00", {"role": role, "content": text}))
    svc = MemoryService(load_settings().memory)
    try:
        svc.index_transcript("main", "s1", events, "agent:main")
        rows = svc.store.rows_where("session_id = 's1'", ["text", "etext", "ctx"])
    finally:
        svc.close()
    blob = json.dumps(rows)
    assert rows and "back up the NAS" in blob
    assert PW not in blob and OLD not in blob, blob


async def test_a_password_announced_before_is_kept_out_of_state_and_inbox(engine: Engine, data_dir: object) -> None:
    from pathlib import Path

    from tests.faults.helpers import derived_files_containing

    await run_turn(engine, ANNOUNCE, KEY)
    await run_turn(engine, f"{PW}\nRemember that I always want answers in English.", KEY)
    assert derived_files_containing(Path(str(data_dir)), [PW.encode()]) == []


@pytest.mark.usefixtures("memory_on")
def test_forget_receipts_do_not_show_a_secret_in_the_file_name(data_dir: object) -> None:
    """/forget and `memory forget --json` name the file the way recall receipts do (redacted)."""
    from neotask_tui import paths
    from neotask_tui.commands.memory import describe_forget
    from neotask_tui.config import load_settings
    from neotask_tui.memory.service import MemoryService

    ws = paths.workspace_dir("main")
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / f"{GH}.md").write_text("The deploy runs from the ci box on Fridays.\n", encoding="utf-8")
    svc = MemoryService(load_settings().memory)
    try:
        svc.reindex("main")
        rec = svc.forget("main", "ci box Fridays")
    finally:
        svc.close()
    assert rec.removed_lines and rec.path.endswith(f"{GH}.md")  # the real file was edited
    shown = describe_forget(rec) + rec.summary + json.dumps(rec.to_dict())
    assert GH not in shown, shown
    assert "memory/[REDACTED:github_token].md" in shown


def test_a_reply_quoting_an_announced_password_is_redacted_in_the_memory_index() -> None:
    """Red team 23, H3: "My password is in the next message." then "Zebra!Quartz#77": the user's message
    was redacted, but the assistant's reply quoting it stayed verbatim in the memory index (the
    full-text index redacted it), so `memory search` and recall showed it."""
    from neotask_tui.memory.index.indexer import redacted_messages
    from neotask_tui.storage.events import Event

    said = ["My password is in the next message.", "Zebra!Quartz#77", "Got it: Zebra!Quartz#77 is noted."]
    events = [Event("message", i + 1, i, f"2026-01-01T10:00:0{i}+00:00",
                    {"role": "assistant" if i == 2 else "user", "content": t}) for i, t in enumerate(said)]
    texts = [text for _, _, text, _ in redacted_messages(events)]
    assert not [t for t in texts if "Zebra!Quartz#77" in t], texts
    assert texts[2] == "Got it: [REDACTED:password] is noted."


@pytest.mark.parametrize(("text", "secret"), [
    ("The password for the admin panel, which Dana set yesterday, is Blue-Falcon-81.", "Blue-Falcon-81"),
    ("Remember: the PIN for the office door, which I forgot, is 7731.", "7731"),
    ("The PIN for the office door is 7731.", "7731"),
])
def test_a_password_after_a_longer_aside_is_redacted(text: str, secret: str) -> None:
    """Red team 23, H2: a password or PIN named with a qualifier of several words and an aside was
    found verbatim by `search`, listed as an identifier in the summary and accepted into MEMORY.md."""
    assert secret not in redact_secrets(text), redact_secrets(text)
