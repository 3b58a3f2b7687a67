"""Session rules: a negated directive no other kind claims ("Please do not use any paid tools.",
"не используй платные сервисы") becomes a ``constraints`` entry of the session.

The statement must *be* a directive, not describe something: it starts (after "please", "also",
"and"...) with a prohibition or a negated imperative — "do not", "don't", "never", "no", "stop",
"avoid", "must not", "let's not", "I don't want", "we don't", "without", "hands off", "refrain from",
"stay away from", "leave … alone", "under no circumstances", "make sure nobody", "nobody may / should
…", "hold off on", "better not", "not a single", "it is forbidden to", "I'd prefer you didn't", "не",
"никогда не", "ничего не", "лучше не", "никто не должен / не смеет …", "никому не разрешено …",
"больше не", "под никаким предлогом не", "нельзя", "запрещено", "давай не", "мы не", "перестань",
"прекрати", "хватит", "без" (a typographic apostrophe, "Don’t", is one too) — and
:func:`~.constraints.constraint_kind` calls it a negation, so chatter ("don't worry", "I don't know",
"can't wait", "без проблем") and descriptions that merely contain a prohibition word ("It avoids the
crash", "the tests do not pass", "he stopped using emojis", "без эмодзи текст выглядит лучше") are
not rules. An instruction that holds until something happens or while it lasts ("keep the replica
read-only until the migration finishes", "пока идёт миграция, держи реплику только на чтение",
:func:`~.constraints.is_until_rule`) is a session rule too, its condition in its text; so is a "do not"
asked in the conditional ("I'd prefer you didn't rename the tables"), which the classifier reads as a
preference of the conversation. Everything
else is classified as :func:`~.classifier.classify` does.
"""

from __future__ import annotations

import re
from dataclasses import replace

from neotask_tui.engine.language.classifier import Classification, session_rule
from neotask_tui.engine.language.classifier import classify_each as classify_each_statement
from neotask_tui.engine.language.constraints import (
    KEEP_OFF_IMPERATIVE,
    MAKE_SURE,
    NOBODY,
    NOBODY_MAY,
    RU_NO_CIRCUMSTANCES,
    RU_NOBODY,
    constraint_kind,
    core,
    is_until_rule,
)

_FILLER = re.compile(r"^\s*(?:(?:please|kindly|also|and|so|but|ok(?:ay)?|пожалуйста|и|а|но|также|ещё|еще)\b[\s,]*)+",
                     re.I)
_DIRECTIVE_NEGATION = re.compile(
    r"^(?:do not|don'?t|dont|never|no|stop|avoid|must not|mustn'?t|should not|shouldn'?t|"
    r"(?:you|we) (?:must not|mustn'?t|should not|shouldn'?t|cannot|can'?t|do not|don'?t|never)|"
    r"let'?s not|let us not|i (?:do not|don'?t) want|"
    r"не|никогда не|больше не|нельзя|запрещено|давай(?:те)? не|мы не|ты не|вы не|ни в коем случае"
    r"|(?:" + RU_NO_CIRCUMSTANCES + r"),?\s+не"
    r"|under no circumstances?|" + MAKE_SURE + NOBODY + "|" + NOBODY_MAY + "|" + RU_NOBODY +
    r"|without|no more|перестань|перестаньте|прекрати|прекратите|хватит|без"
    # "ничего не удаляй", "лучше не трогай миграции", "better not touch it", "not a single deploy on sunday",
    # "it is forbidden to merge without review", "I'd prefer you didn't rename the tables"
    r"|(?:ничего|никого|никому|ничем|никуда|нигде) не|лучше не|(?:you(?:'d| had) )?better not|not (?:a single|one)"
    r"|it(?:'s| is) (?:forbidden|prohibited|not allowed|not permitted) to|(?:i|we)(?:'d| would) (?:prefer|rather)"
    # "ни одного деплоя в воскресенье", "nothing gets deleted without my permission", "hold off upgrading
    # postgres", "пожалуй, не стоит трогать кэш", "you are not allowed to merge without review"
    r"|ни (?:одного|одной|единого|единой)|nothing|hold off|пожалуй,? не"
    r"|you(?:'re| are) not (?:allowed|permitted) to)\b",
    re.I,
)
_BANNED_AT_END = re.compile(
    r"^(?!(?:i|we|he|she|they|it|that|this|there|you|my|his|her|their|our|я|мы|он|она|они|это|там)\b)"
    r"[a-zа-яё]+\b.{0,80}?\s(?:(?:is|are)\s+(?:strictly\s+|absolutely\s+)?(?:forbidden"
    r"|prohibited|banned|not\s+allowed|not\s+permitted)|(?:строго\s+)?(?:запрещено|запрещается|нельзя|недопустимо))"
    r"\s*[.!]*$",
    re.I,
)
"""A ban stated after what it bans: "merging without review is forbidden", "deleting anything without my
permission is not allowed", "мержить без ревью запрещено", "удалять что-либо без моего разрешения нельзя"."""
_APOS = re.compile(r"[’‘`´]")

_IDIOM = re.compile(r"^(?:never (?:mind|again|ever)|no (?:problem|worries|way|idea|thanks)|не за что|без проблем)"
                    r"[\s.!,…]*$", re.I)
"""A negation that states no rule ("Never again.", "No worries!")."""
_TRAILING_PLEASE = re.compile(r",?\s*(?:please|pls|пожалуйста)$", re.I)


def rule_of(statement: str) -> str | None:
    """The rule a negated directive states ("Please do not use any paid tools." → "do not use any
    paid tools"), or ``None`` when the statement is not one."""
    text = _FILLER.sub("", statement.strip())
    plain = _APOS.sub("'", text)  # "Don’t touch the cache layer": a typographic apostrophe is one too
    if (not (_DIRECTIVE_NEGATION.match(plain) or KEEP_OFF_IMPERATIVE.match(plain) or _BANNED_AT_END.match(plain))
            or constraint_kind(text) != "negation" or _IDIOM.match(text)):
        return None
    return _TRAILING_PLEASE.sub("", core(text).rstrip(" .!…")) or None


_UNTIL_REASON = "an instruction that holds until something happens: a rule for this session, with its condition"


def _fallback(statement: str) -> Classification | None:
    rule = rule_of(statement)
    return session_rule(statement, rule) if rule else None


def _until(statement: str) -> Classification | None:
    """A whole statement that is an instruction holding until something happens ("keep the replica
    read-only until the migration finishes"): a session rule, its condition in its text."""
    c = session_rule(statement, statement) if is_until_rule(statement) else None
    return replace(c, reason=_UNTIL_REASON) if c is not None else None


def _until_rule(c: Classification | None) -> Classification | None:
    """A temporary preference that is an instruction holding while something lasts ("пока идёт
    миграция, держи реплику только на чтение": "пока" there is "while", not "for now") is a rule with
    its condition: the preference would keep "идёт миграция, держи реплику…", its "while" lost (one
    that keeps its condition, "answer briefly until the release", stays a preference)."""
    if (c is None or c.kind != "temporary_preference" or c.ttl or c.until_event or c.period or c.value == c.text
            or not is_until_rule(c.text)):
        return c
    return replace(c, kind="session_rule", field="constraints", value=c.text, reason=_UNTIL_REASON)


def _polite_rule(c: Classification | None) -> Classification | None:
    """A preference in the conditional that is a "do not" for the assistant ("I'd prefer you didn't
    rename the tables") is a rule of the session, like the "do not" it stands for; one limited to a
    period ("today I'd prefer you didn't …") stays a preference of that period."""
    if (c is None or c.kind != "temporary_preference" or c.ttl or c.until_event or c.period or c.value != c.text
            or not _SOFT_PREF_LEAD.match(c.text)):
        return c
    rule = rule_of(c.text)
    if rule is None:
        return c
    return replace(c, kind="session_rule", field="constraints", value=rule,
                   reason="a \"do not\" asked politely: a rule for this session")


_SOFT_PREF_LEAD = re.compile(r"^(?:i|we)(?:'d|’d| would)\b", re.I)


def classify(text: str) -> list[Classification]:
    """Every explicit statement of a user message: :func:`~.classifier.classify`'s kinds, then
    session rules for the negated directives and the instructions that hold until something happens
    none of them claims."""
    return [c for c in classify_each(text) if c is not None]


def classify_each(text: str) -> list[Classification | None]:
    """:func:`classify`, one entry per statement (``None``: the statement means nothing for memory)."""
    return [_polite_rule(_until_rule(c)) for c in classify_each_statement(text, _fallback, _until)]
