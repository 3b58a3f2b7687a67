"""Every tuned constant of the engine and memory, in one place, each a documented ``Final``.

A *tuned* constant is a number chosen by measurement (a weight, a share, a floor, a cap picked on a
bench), as opposed to a user setting (those are in :mod:`neotask_tui.config`, with ranges) or a
fact (a wire-protocol limit, a file format). Each entry says what it does and how it was chosen;
the figures that chose it are in ``CHANGELOG.md`` next to the change that set it. Changing one is
a behaviour change: the benches in ``bench/`` must be rerun and quoted.

Sections follow the layers (text, memory, engine parts). This module imports nothing of ours.
"""

from __future__ import annotations

from typing import Final

# ---------------------------------------------------------------------------------------------
# text: tokens, lexical terms, BM25
# ---------------------------------------------------------------------------------------------

BM25_K1: Final = 1.2
"""BM25 term-frequency saturation (:mod:`neotask_tui.text.bm25`, both indexes): LanceDB's native
FTS value, which the in-process scores match."""
BM25_B: Final = 0.75
"""BM25 length normalisation (both indexes): LanceDB's native FTS value."""
WRAPPED_LINE_CHARS: Final = 30
"""A line at least this long that ends without punctuation, followed by a line starting with a
lower-case letter, was wrapped inside a sentence (:mod:`neotask_tui.text.wraps`); a shorter one is an
item of a list typed without bullets ("fix tests\nupdate docs", "update the docs\nbump the
version"). A prose line wrapped by a terminal or an editor is longer; a list item rarely is."""

# ---------------------------------------------------------------------------------------------
# memory: indexing, hybrid search, fusion, recall floors
# ---------------------------------------------------------------------------------------------
MEMORY_CHUNK_TOKENS: Final = 400
"""Default ``memory.chunk_tokens``: the most tokens (cl100k) a memory chunk holds. A hard bound: a
line longer than this is cut at spaces, a word longer than this (a pasted blob, a run of Han text
or emoji without spaces) is cut between characters, each piece counted, so no chunk of a 200k-
character line exceeds it (it did by 23% for Han text, 12% for emoji, when pieces were cut by
characters)."""

MEMORY_CHUNK_OVERLAP: Final = 80
"""Default ``memory.chunk_overlap``: tokens of a full chunk's last lines repeated at the start of the
next one."""


# -- memory.search.hybrid: the defaults of RankParams (see its fields for what each does) --------

MEMORY_RANK_DENSE_WEIGHT: Final = 0.4
"""Weight of the normalised dense (cosine) score in the fusion; chosen on LoCoMo dev, see CHANGELOG."""
MEMORY_RANK_LEXICAL_WEIGHT: Final = 0.6
"""Weight of the normalised BM25 score in the fusion; chosen on LoCoMo dev, see CHANGELOG."""
MEMORY_RANK_CTX_BOOST: Final = 0.5
"""BM25 weight of a row's neighbouring-context terms (``ctx``) relative to its own terms; chosen with
:data:`MEMORY_RANK_GROUP_WEIGHT` on LoCoMo dev (R@5 0.659 with 0.3, 0.672 with 0.5)."""
MEMORY_RANK_PRF_WEIGHT: Final = 0.3
"""Weight of the pseudo-relevance-feedback centroid in the second dense pass (when PRF is on)."""
MEMORY_RANK_GROUP_WEIGHT: Final = 0.3
"""Weight of the coarse score (BM25 of the hit's whole session or file); chosen on LoCoMo dev,
categories 1-4 (R@5 0.631 -> 0.659 with ``ctx_boost`` 0.3)."""
MEMORY_RANK_DATE_WEIGHT: Final = 0.4
"""Weight of "dated within a period the query names"; chosen on LoCoMo dev, see CHANGELOG."""
MEMORY_RANK_SENDER_WEIGHT: Final = 0.3
"""Weight of "the message's sender is named in the query"; chosen on LoCoMo dev, see CHANGELOG."""
MEMORY_RANK_SIGNAL_GATE: Final = 0.15
"""Content score (weighted dense + lexical) up to which the group, date and sender signals are scaled
down; chosen on LoCoMo dev, see CHANGELOG."""
MEMORY_RANK_SEM_WEIGHT: Final = 0.6
"""BM25 weight (times the cosine) of expansion words close in meaning to the query's words; chosen on
LoCoMo dev, see CHANGELOG."""
MEMORY_RANK_SEM_K: Final = 3
"""Expansion words per query word."""
MEMORY_RANK_SEM_MIN: Final = 0.6
"""Minimum cosine of an expansion word."""

# -- memory.search.hybrid: normalisation and decay inside the fusion -----------------------------

MEMORY_DENSE_BASE_CAP: Final = 0.2
"""The dense floor (for each chunk the mean cosine of the query against every *other* visible chunk:
how similar an unrelated chunk is; 0 for a pool of one) is clamped to ``[0, MEMORY_DENSE_BASE_CAP]``
so tiny pools stay sane."""
MEMORY_DENSE_SPAN_FLOOR: Final = 0.4
"""The dense score is ``(cos - base) / max(best - base, MEMORY_DENSE_SPAN_FLOOR)``: a best match that is
itself weak does not get full marks."""
MEMORY_DECAY_FLOOR: Final = 0.5
"""With time decay on, a fused score is scaled by ``MEMORY_DECAY_FLOOR + (1 - MEMORY_DECAY_FLOOR) * decay``: an old
chunk keeps at least this share of its score."""

# -- memory.search.dates --------------------------------------------------------------------------

MEMORY_DATE_SLACK_DAYS: Final = 14.0
"""Days after the end of a period the query names that still count as in it (a message usually
reports something that happened a little earlier: "we went camping last week")."""

# -- memory.service: recall and forget ------------------------------------------------------------

MEMORY_RECALL_MMR_LAMBDA: Final = 0.7
"""MMR trade-off of auto-recall (1 = relevance only), so recalled passages are not near-duplicates."""
MEMORY_RECALL_MIN_COSINE: Final = 0.3
"""Auto-recall's relevance floor on the embedding side: a passage enters the context only when its
cosine to the message is at least this, or it holds most of the message's terms (see
:func:`neotask_tui.memory.search.relevance.relevant`). Fused scores are normalised per query (the best
passage of an unrelated query still scores near 1), so the floor is on the raw cosine. On the bundled
all-MiniLM-L6-v2, a passage about something else scores about -0.15..0.25 against a question and one
that answers it 0.4..0.7 (spot checks of hand-written pairs, not a benchmark fit). Each model's cosine is
first measured from the message's own mean cosine to unrelated reference text
(:func:`neotask_tui.memory.search.relevance.floor_similarity`), so unrelated text scores about 0 on
every model and for every message, as it does on MiniLM; a passage holding one of the message's words
may also clear it on the model-average calibration (``ModelSpec.cos_offset``, e.g. 0.72 for
multilingual-e5-small). On ``bench/multilingual_data.json`` plus the hygiene bench's probes (75
related pairs, 350 unrelated, EN/RU/UK/DE/ES, some across languages), at this floor: related pairs
0.84 both ways, unrelated 0.057 with the model-average offset alone, 0.003 measured from the
message's baseline alone (the value was kept, not refitted)."""
EMBED_ENGLISH_MODEL_WEIGHT: Final = 0.5
"""The bundled embedding is a pair (``memory.index.models.PAIR``): all-MiniLM-L6-v2, English-only,
and multilingual-e5-small. A query's similarity is the weighted sum of both models' calibrated
cosines; MiniLM's weight is this times the share of the query's letters that are ASCII (an English
question: both models equally; a Russian one: e5 alone, MiniLM's cosines of Cyrillic text being
noise). Equal weights, not fitted: they are what "both models agree" means."""
MEMORY_FORGET_CANDIDATES: Final = 20
"""``forget QUERY`` looks through this many best hits for the first passage with a statement that holds
every word of the query (a passage matched only by meaning, or holding some of the words, is passed
over: what a forget cuts is gone for good)."""

MEMORY_STATEMENT_CACHE_LINES: Final = 4096
"""File-passage lines whose vectors auto-recall keeps per embedding model and process (the oldest go
first): a line in another script than the message is judged by itself
(``MemoryService._judge_by_statement``), and a turn meets the same ``MEMORY.md`` lines again. A line's
vector is about 3 KB on the bundled pair, so the cache stays near 12 MB."""


# -- memory.files ---------------------------------------------------------------------------------

MEMORY_BINARY_CONTROL_RATIO: Final = 0.10
"""A file whose text is more than this share of control characters (other than tab, newline, CR,
form feed) is binary; so is any file with a NUL byte."""

EXCHANGE_GAP_SECONDS: Final = 6 * 3600
"""A message written after this long a silence opens a new exchange: it is not a reply to the message
before it, so the transcript index embeds it alone, not with that message as its context
(:func:`~neotask_tui.memory.index.indexer.exchange_start`). The first message of the next day's
chat ("Hey! Guess what, I started a yoga class") carries the news; yesterday's "Bye, take care!" is
not what it answers. Six hours: longer than a pause within one conversation, shorter than a night;
chosen by that argument, not fitted."""

# ---------------------------------------------------------------------------------------------
# engine.context: budget shares of the context sections
# ---------------------------------------------------------------------------------------------

# The usable window (the model's window less ``context.reply_reserve_tokens``) is split between
# what came last (the rolling summary and the raw recent messages) and what the message is about
# (recall); the shares themselves are user settings (``memory.recall_share``,
# ``compaction.keep_recent_share``), these bound them so one default fits a 4k and a 200k window.
# See :mod:`neotask_tui.engine.context.budget`.

RECALL_MIN_TOKENS: Final = 300
"""Floor of the recall reserve (about three recalled passages), for windows so small that the share
gives less; never more than a quarter of the usable window."""
RECALL_MAX_TOKENS: Final = 16_000
"""Cap of the recall reserve: at 128k-200k windows half the window would quote 64k-100k tokens of
old turns in every call (cost and latency per call), while past a few hundred quoted turns more
recall adds mostly weaker matches. Above the cap the raw history keeps the room, and recall still
takes whatever the history leaves free."""
KEEP_RECENT_MIN_TOKENS: Final = 300
"""Floor of the raw window a compaction keeps: the last exchange or two survive verbatim even in
a tiny window (never more than a quarter of the usable window)."""
KEEP_RECENT_MAX_TOKENS: Final = 8_000
"""Cap of that raw window: dozens of recent exchanges verbatim; older raw turns are better served
by recall (chosen by relevance), and a smaller kept window leaves more growth before the next
compaction."""

STATE_BLOCK_SHARE: Final = 0.1
"""Most of the usable window the session-state block may take in a call
(:func:`~neotask_tui.engine.context.budget.state_budget`); past it the block carries the rules
first, then the goal and step, the temporary preferences and the rest, newest first, and says how
many entries it left out (``/state`` lists them). Argued, not fitted: the state is a digest of what
holds now, like the rolling summary, and gets the summary's share (:data:`SUMMARY_SHARE`); with
recall's half and the raw window a compaction keeps (15%), a quarter is left for the system prompt
and the message. A stated state — a goal, a step, a dozen rules and preferences — is a few hundred
tokens, under the share of a 4k window; only a paste restating hundreds of distinct statements
reaches it (red team 29: 556 entries, 9,469 tokens, more than the window)."""
STATE_BLOCK_MIN_TOKENS: Final = 200
"""Floor of that share for very small windows (a goal and a few rules); never more than a quarter
of the usable window."""
STATE_BLOCK_MAX_TOKENS: Final = 4_000
"""Cap of that share: about 200 one-line entries, far more than anyone states in a session; at a
200k window a tenth (20k tokens) of pasted statements would be sent, and paid for, with every call."""

# ---------------------------------------------------------------------------------------------
# engine.compaction: the guard, summary shares, the compactor
# ---------------------------------------------------------------------------------------------

SUMMARY_MAX_TOKENS: Final = 1500
"""Reply budget asked of the model for one summary (:mod:`neotask_tui.engine.compaction.compactor`)."""
SUMMARY_PROMPT_SHARE: Final = 0.6
"""Share of the model window a summarization prompt's events may take (rolling chunks beyond)."""
SUMMARY_CHUNK_MIN_TOKENS: Final = 512
"""Floor of a summarization chunk (tokens of events), however small the window."""
SUMMARY_SHARE: Final = 0.1
"""Soft cap of an extractive summary: this share of the usable window (and no more than the raw
recent window, ``compaction.keep_recent_tokens``). Required lines (identifiers, negated constraints)
may exceed it; the rest of the window goes to the raw recent messages and to recalled history,
which quotes the compacted turns themselves."""
SUMMARY_MIN_TOKENS: Final = 200
"""Floor of that cap for very small windows."""
GUARD_CONSTRAINT_COVERAGE: Final = 0.7
"""The guard counts a constraint as covered by a summary line sharing this share of its content
words (:mod:`neotask_tui.engine.compaction.guard`)."""
GUARD_ITEM_COVERAGE: Final = 0.6
"""The same share for the other items (decisions, asks, questions, assumptions)."""
GUARD_INVERSION_OVERLAP: Final = 0.7
"""A summary line without a negation that shares this share of a negated constraint's content words
(and is at most twice as long) restates it inverted ("use Redis" for "never use Redis"): removed."""
GUARD_RESTATED_SHARE: Final = 0.8
"""A summary line without a constraint's marker whose content words are at least this share of the
constraint's own (and cover half of them) restates part of it without its negation, condition or
period ("disable auth" for "only for the demo, disable auth"): removed. Set on ``tests/engine/
drift_cases.py``."""
MAX_TOOL_IDENTIFIERS: Final = 12
"""At most this many identifiers from one tool result (its first ones) are kept in a summary: a
tool's output is facts, but a listing of 500 paths is data the archived transcript keeps."""
MAX_PROGRESS_ITEMS: Final = 6
"""The summary must keep the latest this many reports of work done or still to do (older ones may
be trimmed to the budget; they stay in the archived transcript)."""

# ---------------------------------------------------------------------------------------------
# engine.recall: memory recall and recall of compacted-away turns
# ---------------------------------------------------------------------------------------------

ARCHIVE_MEMORY_FEEDBACK_DOCS: Final = 10
"""Pseudo-relevance feedback for the memory service's search of the archived transcripts (its
``RankParams.prf_docs``, off in its own defaults; :mod:`neotask_tui.engine.recall.lineage`): the query
vector moves toward its ten best hits for a second dense pass. Recall of compacted-away turns fills
the window with some sixty turns, so it wants depth: a list question ("what activities does Melanie
do?") finds the first few of its answers by their words, the rest only near those. LoCoMo dev,
context bench (4k budget, question-only reruns): answerability 0.900 → 0.907, 5 feedback docs 0.904,
20 0.905; a heavier centroid (0.5) 0.897. The top ten barely move (memory recall R@5 0.740 → 0.737,
R@10 0.817 → 0.818), so the user-facing search keeps it off."""
ARCHIVE_MEMORY_HIT_TOKENS: Final = 12
"""Hits asked of that search: one per this many tokens of the turns' budget (a short turn's cost)..."""
ARCHIVE_MEMORY_MIN_HITS: Final = 20
"""...and at least this many."""
ARCHIVE_FEEDBACK_SEEDS: Final = 5
"""The lineage's own ranking (:class:`~neotask_tui.engine.recall.archive.ArchiveRecall`): best turns
of the first round that seed its lexical pseudo-relevance-feedback round."""
ARCHIVE_FEEDBACK_TERMS: Final = 8
"""Terms that feedback round adds to the query (the seeds' most distinctive ones)."""
ARCHIVE_FEEDBACK_WEIGHT: Final = 0.5
"""Weight of an added feedback term (a query term weighs 1)."""
ARCHIVE_FEEDBACK_MAX_SHARE: Final = 50
"""A feedback term must be rarer than in about one turn out of this many (``idf > ln(1 + N / 50)``)."""
ARCHIVE_OWN_TERM_MAX_SHARE: Final = 0.1
"""Recall of this conversation's own compacted turns: a word of the message found in at most this
share of the turns is *distinctive* (a name, a place, an object), and a turn that holds one clears the
relevance floor. A word in more than one turn in ten is the conversation's background (its people,
its subject) and says nothing about which turn is meant. Chosen by that argument, not fitted; the
floor for other sessions' turns and memory is unchanged."""
ARCHIVE_OWN_OUTLIER_Z: Final = 1.0
"""Recall of this conversation's own compacted turns, once a turn has cleared the absolute floor (the
message is about something said earlier): a turn whose cosine to the message is this many standard
deviations above the mean over all the compacted turns clears it too. One standard deviation is the
conventional "stands out from the background", chosen by that argument, not fitted (see the CHANGELOG
for its effect on the LoCoMo dev set); the gate stays the absolute floor, so a message about nothing
said earlier still recalls nothing. The same threshold sets apart, among the memory search's best hits
for the message, a turn whose content score (dense + BM25, without the who/when/where signals) stands
out (``LineageRecall.augment``)."""
RECALL_TIME_STEP_SECONDS: Final = 3600
"""A recalled turn written this long after the last time its fence showed (the day's first line
carries the date and time, later ones only an id) shows its own time of day: within an hour, a
line read at the time above it is close enough; beyond, "deployed at 9, broke at 5" would read as
one moment. Costs about four tokens per such line."""
ARCHIVE_RRF_K: Final = 60
"""Reciprocal-rank fusion constant of the archive rankings (``1 / (k + rank)``; the usual 60)."""
ARCHIVE_RRF_DEPTH: Final = 400
"""Entries of each ranking that reciprocal-rank fusion reads."""

# ---------------------------------------------------------------------------------------------
# engine.state and engine.session: state, inbox, the turn runner
# ---------------------------------------------------------------------------------------------

MAX_TOOL_ROUNDS: Final = 6
"""Model calls one turn may make while the model keeps calling tools; the last round's reply is
stored even when it asks for more (a model looping on tools must not hold the turn forever)."""


STATE_RECENTLY_EXPIRED_MINUTES: Final = 10
"""How long an expired session-state entry is still listed (struck through, under "expired or
cleared") in ``/state`` and the state panel, so a user sees what just ended and why; after that it
is only in the audit (``/state audit``). Long enough to notice, short enough not to clutter."""


STATE_CLASSIFY_MAX_CHARS: Final = 20_000
"""Only this much of a user message is classified (a huge paste is data, not statements).

Chosen by the fault suite (``tests/faults/hostile_cases.py``, 10 MB paste): classifying the whole
paste took ~60 s on the event loop and froze the UI; the head of a message is where goals and
preferences are stated."""

INBOX_PROPOSAL_MAX_CHARS: Final = 500
"""The longest statement the classifier proposes for the inbox (after "Remember: …", an "always"
rule, a stated fact); a longer one is not proposed and the turn says so. A memory is a sentence or
two: a pasted page after "Remember:" (red team 5: a 6,000-character message proposed whole) is data,
and a run-on sentence this long is not read as one fact. 500 characters is about 100 words, above
every proposal in the test suites (the longest is under 200)."""

STATE_CLASSIFY_THREAD_CHARS: Final = 2000
"""A user message longer than this (after the cap above) is classified in a worker thread, off the
event loop; a shorter one inline (a thread hop costs more than classifying it). Set with the cap."""

# ---------------------------------------------------------------------------------------------
# tui: layout of the main screen
# ---------------------------------------------------------------------------------------------

SIDE_COLUMN_MIN_WIDTH: Final = 100
"""Below this many terminal columns the side panels (state, recall) leave the layout and open over
the transcript on demand (F2, F3, F6): a 40-column side column beside the transcript left 40 columns
for the conversation at 80 wide and 20 at 60. At 100 the transcript keeps 60."""
FOOTER_MEDIUM_WIDTH: Final = 70
"""From this width the footer adds the session keys (context, compact, sessions, new) to the
essential ones (help, focus, quit, the palette and the focused panel's keys); at
:data:`SIDE_COLUMN_MIN_WIDTH` it adds the panel toggles. Chosen so no footer key is cut at 60 and 80
columns (the snapshots at 60×20 and 80×24 show it)."""
FOOTER_FULL_WIDTH: Final = 120
"""From this width the footer shows every key, the inbox's too (all of them take 105 columns)."""
ATTACH_MAX_BYTES: Final = 64 * 1024
"""Bytes of a file ``/file`` or ``@path`` attaches; a larger file is cut at the last line break
before this and the notice says how much of it went in. 64 KiB is about 16k tokens of code or
English: an eighth of a 128k window, so the sliding window keeps room for the conversation."""

GAUGE_NEAR_COMPACTION: Final = 0.9
"""The gauge says "nearing compaction" once the context without recall is at this share of the size
at which automatic compaction fires (``Ledger.compaction_at``), and "compaction due" at it."""

PASTE_FOLD_LINES: Final = 40
"""A message of yours with more lines than this is shown folded in the transcript: its first
:data:`PASTE_PREVIEW_LINES` lines and a "show" toggle (a 1,500-line paste filled the transcript)."""
PASTE_FOLD_CHARS: Final = 6000
"""A message of yours longer than this many characters is folded the same way (a long one-line paste)."""
PASTE_PREVIEW_LINES: Final = 6
"""Lines of a folded message shown before the toggle."""
PASTE_PREVIEW_CHARS: Final = 600
"""At most this many characters of a folded message are shown before the toggle."""

# ---------------------------------------------------------------------------------------------
# providers.local: cancelling the bundled model (bench/stop.py)
# ---------------------------------------------------------------------------------------------

LOCAL_PREFILL_CHUNK_TOKENS: Final = 256
"""Prompt tokens the local provider evaluates between two checks of the stop flag (llama.cpp's
abort callback also stops a chunk part-way). Smaller chunks notice a cancel sooner without the
callback but read the prompt more slowly; ``bench/stop.py`` measures cancel → worker finished."""

CLOSE_SETTLE_SECONDS: Final = 30.0
"""How long closing the engine waits for an inbox decision still being written in a worker thread
(an accept embeds the new memory: seconds, not minutes); past it the close goes on and the accept
is finished by accepting again (it never writes a duplicate)."""
LOCAL_CLOSE_WAIT_SECONDS: Final = 5.0
"""How long closing waits for a cancelled local generation to let go of the model before the
model is left to the process exit (a quit never waits longer, and says it is finishing)."""
HANGUP_CHECK_SECONDS: Final = 1.0
"""How often the app looks whether its terminal is gone (hung up with no SIGHUP reaching the app: the
signal ignored, as under ``nohup``); it then quits as Ctrl+Q does, instead of reading end-of-file
from the dead terminal forever (tui/hangup.py)."""
HANGUP_EXIT_SECONDS: Final = 30.0
"""How long the app may take to quit once its terminal is gone before the process is ended anyway
(the quit waits at most LOCAL_CLOSE_WAIT_SECONDS for a reply to stop and CLOSE_SETTLE_SECONDS for an
inbox write; the event loop may instead be stuck writing to the dead terminal)."""

# ---------------------------------------------------------------------------------------------
# storage.search: the full-text index over every transcript (bench/search.py)
# ---------------------------------------------------------------------------------------------

SEARCH_MESSAGE_MAX_CHARS: Final = 65536
"""At most this many characters of one message are indexed for search: its first three quarters
and its last quarter (a 10 MB paste is stored whole but must not stall the turn that indexes it;
the redactor is linear, about 1 s per MB here). Words in the middle of a bigger paste are not found."""
SEARCH_DEFAULT_LIMIT: Final = 20
"""Hits ``neotask search`` and ``/search`` show unless told otherwise (``--limit``)."""
SEARCH_LIMIT_MAX: Final = 500
"""The most hits one search returns (``--limit``; the sessions browser's content search reads this
many and shows each session's best)."""
SESSIONS_CONTENT_SEARCH_DELAY: Final = 0.3
"""Seconds without typing before the sessions browser searches message text (a keystroke restarts it)."""
SEARCH_LINE_CHARS: Final = 160
"""The matching line shown for a hit is cut to about this many characters around its first match."""
SEARCH_QUERY_MAX_TERMS: Final = 64
"""At most this many distinct words and phrases of a search query are matched (the first ones; a
repeated word counts once). Each is one more AND term of one FTS5 expression, whose evaluation grows
faster than linearly with them: a pasted 200 KB query of 100k words took 3.7-7.6 s (bench/search_query_terms.py);
past the cap the search says it left the rest out."""
SEARCH_QUERY_MAX_WORDS: Final = 4096
"""At most this many words of a search query are read (repeats included; a phrase counts its words),
so building the expression from a pasted 10 MB query costs what a short one does; past it the search
says it left the rest out."""

__all__ = ["Final"]

# ---------------------------------------------------------------------------------------------
# commands: what the slash commands show
# ---------------------------------------------------------------------------------------------

RECALL_SHOWN_LINES: Final = 4
"""Lines of each ``/recall`` hit shown: the ones holding most of the query's terms, in passage
order (the first lines when none does). A readability choice, not measured."""

EXPORT_NAME_TRIES: Final = 1000
"""The most names a default ``/export`` tries in ``exports/`` (``<session>.md``, then
``<session>-2.md`` …) before it says the folder is full of them; an existing file is never replaced.
A bound, not measured: a thousand exports of one session is far past any real use."""
EXPORT_DATA_DIR_DEPTH: Final = 3
"""How deep below the data dir the folders are that an export target is compared with by identity
(``st_dev``/``st_ino``), so a second view of one of them (a bind mount) is still refused: deep
enough for ``sessions/`` and ``agents/<name>/memory``; a bound on the folders listed, not measured."""

