"""Word vectors of the indexed vocabulary, for semantic query expansion on the BM25 side.

BM25 only matches the query's own words: "what pets does Nate have?" never reaches "this is Max,
our new dog". Each distinct content word of the indexed text (stemmed as :mod:`.lexical` stems it,
one surface form kept per stem) is embedded once with the same model as the chunks. At query time
each content word of the query is compared with that vocabulary and its nearest words (cosine at
least ``min_sim``) join the BM25 query with a weight proportional to their similarity — terms that
occur in none of the rows the caller may see are skipped, so one agent's vocabulary never shapes
another agent's results.

The vectors are a cache derived from the indexed text: a file per embedding model (``.npz``,
written atomically), filled as rows are indexed and pruned to the live vocabulary, so a forgotten
chunk's words do not stay behind. Losing or damaging it costs only re-embedding the vocabulary.

New words are appended to a log beside it (``<file>.log``, one JSON line per word, fsynced) rather
than rewriting the whole file on every indexing batch — a watcher reindexing one edited note would
otherwise rewrite megabytes for one new word. The log is folded into the file when it grows past a
quarter of it, and on every prune. The file carries a generation token and the log's first line
names the generation it extends: a log left behind by a crash between a rewrite and the log's
removal is ignored, so a pruned word can never come back from it. A torn last line is skipped.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from neotask_tui.memory.search.relevance import calibrated, similarity
from neotask_tui.storage.atomic import append_durable, atomic_write_bytes
from neotask_tui.text import lexical

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

MIN_LEN = 3
"""Shorter words are not embedded (their vectors are noise)."""
LOG_MIN = 2000
"""The log is folded into the file once it holds this many words and a quarter of the file's."""


class TextEmbedder(Protocol):
    """What the vocabulary needs of the embedding model (:class:`~..index.embedder.Embedder`)."""

    def embed(self, texts: Sequence[str], *, batch_size: int = ...) -> npt.NDArray[np.float32]:
        """A ``(len(texts), dim)`` float32 array of unit vectors."""
        ...


def content_words(text: str) -> Iterable[str]:
    """Alphabetic, non-stopword words of at least :data:`MIN_LEN` letters."""
    for w in lexical.words(text):
        if len(w) >= MIN_LEN and w.isalpha() and w not in lexical.STOPWORDS:
            yield w


class TermVectors:
    """``stem -> unit vector`` of the vocabulary, persisted in ``path``.

    Args:
        path: The cache file (``.npz``).
        embedder: The embedding model (``embed(texts, batch_size=...) -> (n, dim) float32``).
        offsets: The model's cosine of unrelated text, one per model of a pair
            (``ModelSpec.offsets``; see :func:`~.relevance.similarity`).
    """

    def __init__(self, path: Path, embedder: TextEmbedder, offsets: Sequence[float] = (0.0,)) -> None:
        self.path = path
        self.embedder = embedder
        self.offsets = tuple(offsets)
        """The model's cosine of unrelated text: similarities are calibrated (see
        :func:`~.relevance.calibrated`) before ``min_sim`` applies."""
        self._lock = threading.RLock()
        self.stems: list[str] = []
        self.surface: list[str] = []
        self.index: dict[str, int] = {}
        self._mat: npt.NDArray[np.float32] | None = None
        self._matT: npt.NDArray[np.float32] | None = None
        self._matT_of: object = None
        self._queries: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._near: OrderedDict[str, list[tuple[str, float]]] = OrderedDict()
        self._near_of: object = None
        self.log_path = path.with_name(path.name + ".log")
        self._gen = ""
        self._logged = 0  # words in the log of this generation
        self._load()

    # -- persistence ----------------------------------------------------------------------------

    def _load(self) -> None:
        import numpy as np

        if not self.path.exists():
            return
        try:
            with np.load(self.path, allow_pickle=False) as z:
                stems = [str(s) for s in z["stems"]]
                surface = [str(s) for s in z["surface"]]
                mat = np.asarray(z["vectors"], dtype=np.float32)
                gen = str(z["gen"]) if "gen" in z.files else ""
            if len(stems) != len(surface) or mat.shape[0] != len(stems):
                raise ValueError("inconsistent arrays")
        except Exception as e:  # a damaged cache is rebuilt, never fatal
            log.warning("memory: word-vector cache %s unreadable (%s); it will be rebuilt", self.path, e)
            return
        self.stems, self.surface, self._mat, self._gen = stems, surface, mat, gen
        self.index = {s: i for i, s in enumerate(stems)}
        self._replay_log()

    def _replay_log(self) -> None:
        """Apply the log's words when it extends this file's generation (a torn tail is skipped)."""
        import numpy as np

        try:
            raw_log = self.log_path.read_bytes()
        except OSError:
            return
        lines = raw_log.split(b"\n")
        try:
            head = json.loads(lines[0])
        except ValueError:
            return
        if not isinstance(head, dict) or head.get("gen") != self._gen or not self._gen:
            return  # a stale log (the file was rewritten after it): never resurrect pruned words
        dim = self._mat.shape[1] if self._mat is not None and self._mat.ndim == 2 else None
        add_v = []
        for raw in lines[1:]:
            try:
                rec = json.loads(raw)
                vec = np.frombuffer(base64.b64decode(rec["v"]), dtype=np.float32)
                st, w = str(rec["s"]), str(rec["w"])
            except (ValueError, KeyError, TypeError):
                continue  # torn or damaged line
            if (dim is not None and vec.shape[0] != dim) or st in self.index:
                continue
            dim = vec.shape[0]
            self.index[st] = len(self.stems)
            self.stems.append(st)
            self.surface.append(w)
            add_v.append(vec)
        if add_v:
            vecs = np.stack(add_v)
            self._mat = vecs if self._mat is None or len(self._mat) == 0 else np.vstack([self._mat, vecs])
        self._logged = len(add_v)
        if not raw_log.endswith(b"\n"):  # torn by a crash: the next append would glue onto it
            try:
                self._save()
            except OSError as e:
                log.warning("memory: could not rewrite %s (%s)", self.path, e)

    def _save(self) -> None:
        """Rewrite the file (new generation) with every word, then drop the log it now contains."""
        import numpy as np

        buf = io.BytesIO()
        mat = self._mat if self._mat is not None else np.zeros((0, 0), dtype=np.float32)
        gen = secrets.token_hex(8)
        np.savez(buf, stems=np.asarray(self.stems, dtype=str), surface=np.asarray(self.surface, dtype=str),
                 vectors=mat, gen=np.asarray(gen))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self.path, buf.getvalue())
        self._gen, self._logged = gen, 0
        try:
            self.log_path.unlink(missing_ok=True)
        except OSError as e:  # harmless: a log of an older generation is ignored at load
            log.warning("memory: could not remove %s (%s)", self.log_path, e)

    def _append(self, words: list[tuple[str, str]], vecs: npt.NDArray[np.float32]) -> None:
        """Log new words (or fold everything into the file when the log has grown large)."""
        if not self._gen or not self.path.exists() or self._logged + len(words) >= max(LOG_MIN, len(self.stems) // 4):
            self._save()
            return
        lines = [] if self._logged and self.log_path.exists() else [json.dumps({"gen": self._gen})]
        lines += [json.dumps({"s": st, "w": w, "v": base64.b64encode(v.tobytes()).decode("ascii")})
                  for (st, w), v in zip(words, vecs, strict=True)]
        data = ("\n".join(lines) + "\n").encode("ascii")
        if len(lines) > len(words):  # a fresh log: write it whole, replacing any stale one
            atomic_write_bytes(self.log_path, data)
        else:
            append_durable(self.log_path, data)
        self._logged += len(words)

    def _transposed(self, mat: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        import numpy as np

        got = self._matT
        if got is None or got.shape[1] != mat.shape[0] or self._matT_of is not mat:
            got = np.ascontiguousarray(mat.T)
            with self._lock:
                self._matT, self._matT_of = got, mat
        return got

    def __len__(self) -> int:
        return len(self.stems)

    # -- updates --------------------------------------------------------------------------------

    def add_texts(self, texts: Sequence[str]) -> int:
        """Embed the content words of ``texts`` not seen before; returns how many were added."""
        import numpy as np

        with self._lock:
            new: dict[str, str] = {}
            for t in texts:
                for w in content_words(t):
                    st = lexical.stem(w)
                    if st not in self.index and st not in new:
                        new[st] = w
            if not new:
                return 0
            words = list(new.values())
            vecs = np.asarray(self.embedder.embed(words, batch_size=256), dtype=np.float32)
            mat = vecs if self._mat is None or len(self._mat) == 0 else np.vstack([self._mat, vecs])
            for st, w in new.items():
                self.index[st] = len(self.stems)
                self.stems.append(st)
                self.surface.append(w)
            self._mat = mat
            self._append(list(new.items()), vecs)
            return len(new)

    def prune(self, live: Iterable[str]) -> int:
        """Keep only the stems in ``live`` (the indexed vocabulary); returns how many were dropped."""
        import numpy as np

        with self._lock:
            keep_set = set(live)
            keep = [i for i, s in enumerate(self.stems) if s in keep_set]
            dropped = len(self.stems) - len(keep)
            if dropped == 0:
                return 0
            self.stems = [self.stems[i] for i in keep]
            self.surface = [self.surface[i] for i in keep]
            self._mat = self._mat[np.asarray(keep, dtype=np.int64)] if self._mat is not None and keep else None
            self.index = {s: i for i, s in enumerate(self.stems)}
            self._save()
            return dropped

    # -- queries --------------------------------------------------------------------------------

    def unknown_words(self, query: str) -> list[str]:
        """Content words of ``query`` without a cached vector: embed them together with the query
        (:meth:`remember`) to save a model call. The query's own word forms are embedded (not the
        indexed form of the same stem: "pets" is closer to "dog" than "pet" is)."""
        with self._lock:
            return [w for w in dict.fromkeys(content_words(query)) if w not in self._queries and self._own(w) is None]

    def _own(self, word: str) -> int | None:
        """Row of ``word`` when it was indexed in exactly this form (its vector is the embedding of
        this very word, so nothing needs embedding); caller holds the lock."""
        i = self.index.get(lexical.stem(word))
        return i if i is not None and self.surface[i] == word and self._mat is not None and i < len(self._mat) else None

    def remember(self, words: Sequence[str], vectors: Iterable[npt.ArrayLike]) -> None:
        """Cache query-word vectors embedded elsewhere (bounded LRU)."""
        import numpy as np

        with self._lock:
            for w, v in zip(words, vectors, strict=True):
                self._queries[w] = np.asarray(v, dtype=np.float32)
            while len(self._queries) > 4096:
                self._queries.popitem(last=False)

    def _query_vectors(self, words: list[str]) -> npt.NDArray[np.float32]:
        """A vector per word: cached, or embedded now."""
        import numpy as np

        with self._lock:
            missing = [w for w in words if w not in self._queries and self._own(w) is None]
        if missing:
            self.remember(missing, self.embedder.embed(missing))
        with self._lock:
            out = []
            for w in words:
                i = self._own(w)
                out.append(self._mat[i] if i is not None and self._mat is not None else self._queries[w])
            return np.asarray(out, dtype=np.float32)

    def expand(
        self, query: str, *, exclude: set[str], k: int, min_sim: float,
        usable: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """Nearest vocabulary stems of each content word of ``query``.

        Args:
            query: The query text.
            exclude: Stems not to return (the query's own terms).
            k: At most this many stems per query word.
            min_sim: Minimum cosine.
            usable: Optional ``stem -> bool`` (e.g. "occurs in a visible row").

        Returns:
            ``(stem, cosine)`` pairs, best first per word, each stem once.
        """
        import numpy as np

        words = list(dict.fromkeys(content_words(query)))
        with self._lock:
            mat, stems = self._mat, self.stems
            if self._near_of is not mat:  # the vocabulary changed: neighbour lists are stale
                self._near.clear()
                self._near_of = mat
            todo = [w for w in words if w not in self._near]
        if not words or mat is None or len(stems) == 0:
            return []
        n_cand = min(len(stems), k * 4 + 8)
        if todo:
            qv = self._query_vectors(todo)
            # einsum over the transposed, contiguous matrix: single-threaded and ~1 ms at 5k words;
            # a BLAS product measured 24 ms on this busy 2-core machine (thread wake-ups).
            if len(self.offsets) == 1:
                sims = calibrated(np.einsum("qd,dv->qv", qv, self._transposed(mat)), self.offsets[0])
            else:  # a pair of models: each part's cosine calibrated, then weighted
                sims = similarity(mat, qv, self.offsets)
            with self._lock:
                for w, row in zip(todo, sims, strict=True):
                    cand = np.argpartition(-row, n_cand - 1)[:n_cand] if n_cand < len(row) else np.arange(len(row))
                    cand = cand[np.argsort(-row[cand], kind="stable")]
                    self._near[w] = [(stems[int(i)], float(row[i])) for i in cand]
                while len(self._near) > 4096:
                    self._near.popitem(last=False)
        with self._lock:
            near = [self._near.get(w, []) for w in words]
        out: list[tuple[str, float]] = []
        seen = set(exclude)
        for cands in near:  # cached per word until the vocabulary changes (topics recur in a chat)
            got = 0
            for st, sim in cands[:n_cand]:
                if sim < min_sim or got >= k:
                    break
                if st in seen or (usable is not None and not usable(st)):
                    continue
                seen.add(st)
                out.append((st, sim))
                got += 1
        return out
