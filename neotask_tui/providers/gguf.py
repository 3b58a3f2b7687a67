"""A GGUF model's own chat format and tokenizer: how a local prompt is rendered and counted.

A GGUF file carries its chat template (metadata ``tokenizer.chat_template``, Jinja, the one the
model was trained with: ChatML for SmolLM2/Qwen, ``<|start_header_id|>`` for Llama 3,
``<start_of_turn>`` for Gemma). :class:`ChatFormat` renders messages with it in a sandboxed Jinja
environment (the settings llama-cpp-python's ``Jinja2ChatFormatter`` and Transformers use), and
falls back to ChatML when a file has no template or its template cannot render our messages.

Special tokens: the template is rendered with each message's content replaced by a placeholder.
Only the template's own text may produce special tokens; every content is tokenized with special
parsing off, so ``<|im_start|>system`` or ``<|eot_id|>`` typed, recalled or returned by a tool
stays plain text. Template text next to content is tokenized together with it, so for ordinary
text the tokens equal tokenizing the rendered prompt as a whole.

:func:`vocab` loads only the tokenizer of a GGUF (``vocab_only``: ~0.2 s for the bundled model,
no weights): the engine counts a local model's tokens exactly with it before the model loads.
"""

from __future__ import annotations

import atexit
import functools
import logging
import re
import threading
from collections.abc import Sequence
from typing import Any

from neotask_tui.providers.base import ChatMessage

log = logging.getLogger(__name__)

DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
"""The system turn ChatML gets when there is none (SmolLM2's template adds the same)."""
IM_START, IM_END = "<|im_start|>", "<|im_end|>"
CHATML_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\n" + DEFAULT_SYSTEM + "<|im_end|>\\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""The fallback: ChatML, as SmolLM2's own template spells it."""
_HOLE = "\ue000{}\ue001"
_HOLE_RE = re.compile("\ue000(\\d+)\ue001")


def turns(messages: Sequence[ChatMessage]) -> list[tuple[str, str]]:
    """(role, content) per turn: tool results become user turns and tool calls text (the local
    models here have no tool-calling format)."""
    out: list[tuple[str, str]] = []
    for m in messages:
        role, content = m.role, m.content
        if role == "tool":
            role, content = "user", f"Tool result ({m.name or m.tool_call_id or 'tool'}):\n{content}"
        elif role == "assistant" and m.tool_calls:
            calls = "\n".join(f"[called {c.name} with {c.arguments}]" for c in m.tool_calls)
            content = f"{content}\n{calls}" if content else calls
        out.append((role, content))
    return out


def _fold(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """For templates that refuse a system role or require alternation: the system text goes into
    the first user turn and consecutive turns of one role are joined."""
    system = "\n\n".join(c for r, c in items if r == "system")
    rest = [(r, c) for r, c in items if r != "system"]
    if system:
        if rest and rest[0][0] == "user":
            rest[0] = ("user", f"{system}\n\n{rest[0][1]}")
        else:
            rest.insert(0, ("user", system))
    out: list[tuple[str, str]] = []
    for role, content in rest:
        if out and out[-1][0] == role:
            out[-1] = (role, f"{out[-1][1]}\n\n{content}")
        else:
            out.append((role, content))
    return out


class _KeepStdio:
    """Stand-in for ``llama_cpp._utils.suppress_stdout_stderr`` that leaves stdio alone.

    With ``verbose=False`` llama-cpp-python ``dup2``s /dev/null over file descriptors 1 and 2 while
    it loads a model. That is process-wide: done from our loader thread it would swallow whatever
    the TUI (or a CLI) writes meanwhile. llama.cpp's own logging already goes through the Python
    log callback that ``verbose=False`` silences, so the redirect buys nothing for us.
    """

    def __init__(self, disable: bool = True) -> None:
        self.disable = disable

    def __enter__(self) -> _KeepStdio:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None


def keep_stdio() -> None:
    """Keep llama-cpp-python from redirecting the process's stdout/stderr while it loads."""
    import llama_cpp._internals as internals
    import llama_cpp.llama as llama_mod

    for mod in (internals, llama_mod):
        if getattr(mod, "suppress_stdout_stderr", None) is not None:
            setattr(mod, "suppress_stdout_stderr", _KeepStdio)  # noqa: B010


class _VocabOnly:
    """A GGUF's tokenizer without its weights or a context: the part of ``llama_cpp.Llama`` that
    :class:`ChatFormat` uses (a ``Llama(vocab_only=True)`` still makes a context and logs over the
    terminal about it)."""

    def __init__(self, path: str) -> None:
        import llama_cpp
        from llama_cpp._internals import LlamaModel

        keep_stdio()
        logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)  # no log over the TUI
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model_path = path
        self._model = LlamaModel(path_model=path, params=params, verbose=False)
        self.metadata: dict[str, str] = self._model.metadata()

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        # LlamaModel.tokenize sizes its buffer by the training context, 0 without weights, and so
        # tokenizes everything twice; a token is at least one byte (plus BOS and a space prefix).
        import llama_cpp

        size = len(text) + 16
        buf = (llama_cpp.llama_token * size)()
        n = llama_cpp.llama_tokenize(self._model.vocab, text, len(text), buf, size, add_bos, special)
        if n < 0:
            size = -n
            buf = (llama_cpp.llama_token * size)()
            n = llama_cpp.llama_tokenize(self._model.vocab, text, len(text), buf, size, add_bos, special)
            if n < 0:
                raise RuntimeError(f"llama.cpp could not tokenize {len(text)} bytes")
        return list(buf[:n])

    def detokenize(self, tokens: list[int], special: bool = False) -> bytes:
        return bytes(self._model.detokenize(tokens, special=special))

    def token_bos(self) -> int:
        return int(self._model.token_bos())

    def token_eos(self) -> int:
        return int(self._model.token_eos())

    def close(self) -> None:
        self._model.close()


class TemplateError(ValueError):
    """The chat template failed to render the messages."""


@functools.lru_cache(maxsize=16)
def _compile(template: str) -> Any:
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])

    def strftime_now(fmt: str) -> str:  # Llama 3.x templates date their system turn with it
        from datetime import datetime

        return datetime.now().strftime(fmt)

    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(template)


class ChatFormat:
    """Renders and tokenizes chat messages the way one GGUF model expects.

    Args:
        llm: A ``llama_cpp.Llama`` (or the tokenizer alone, see :func:`vocab`).
        template: A chat template to use instead of the file's own (None: the file's).
    """

    def __init__(self, llm: Any, template: str | None = None) -> None:
        self._llm = llm
        self.name = f"gguf:{getattr(llm, 'model_path', '')}"
        """Keys count caches: one per GGUF file."""
        self.exact = True
        """Counts are the model's own (a :class:`~neotask_tui.text.tokens.TokenCounter`)."""
        meta: dict[str, str] = dict(getattr(llm, "metadata", {}) or {})
        own = template if template is not None else meta.get("tokenizer.chat_template") or ""
        self.template = own or CHATML_TEMPLATE
        self.source = "gguf" if own else "chatml-fallback"
        """``gguf`` (the file's own template) or ``chatml-fallback`` (the file has none)."""
        self.bos_text = self._piece(llm.token_bos())
        self.eos_text = self._piece(llm.token_eos())
        self._special: dict[int, bool] = {}
        self._trim: dict[str, bool] = {}
        self._lock = threading.Lock()  # a llama.cpp vocab is used from several threads

    def _piece(self, token: int) -> str:
        if token < 0:
            return ""
        return bytes(self._llm.detokenize([token], special=True)).decode("utf-8", "replace")

    def _render_items(self, items: list[tuple[str, str]], template: str) -> str:
        msgs = [{"role": r, "content": c} for r, c in items]
        try:
            return str(_compile(template).render(
                messages=msgs, add_generation_prompt=True, bos_token=self.bos_text, eos_token=self.eos_text,
            ))
        except TemplateError:
            raise
        except Exception as e:  # a template bug (undefined filter, bad syntax) is a template error
            raise TemplateError(str(e)) from None

    def _render_holes(self, messages: Sequence[ChatMessage]) -> tuple[str, list[str]]:
        """The prompt with each content replaced by a numbered placeholder, and the contents.

        Tried in order: the messages as they are; folded (system text into the first user turn,
        one turn per role change) for templates that refuse a system role or demand alternation;
        ChatML. A form counts only if every content comes out once, in order.
        """
        items = turns(messages)
        forms = [(items, self.template)]
        folded = _fold(items)
        if folded != items:
            forms.append((folded, self.template))
        if self.template != CHATML_TEMPLATE:
            forms.append((items, CHATML_TEMPLATE))
        for form, template in forms:
            holes = [(r, _HOLE.format(i)) for i, (r, _) in enumerate(form)]
            try:
                text = self._render_items(holes, template)
            except TemplateError as e:
                log.info("chat template refused the messages (%s); trying the next form", e)
                continue
            if [int(i) for i in _HOLE_RE.findall(text)] == list(range(len(form))):
                trim = self._trims(template)
                return text, [c.strip() if trim else c for _, c in form]
            log.info("chat template did not keep every message in order; trying the next form")
        raise TemplateError("no chat template could render these messages")

    def _trims(self, template: str) -> bool:
        """Whether ``template`` trims each content (Gemma's and Llama 3's ``| trim``): then the
        contents put back into the placeholders are trimmed too."""
        known = self._trim.get(template)
        if known is None:
            probe = f" {_HOLE.format(0)} "
            try:
                text = self._render_items([("user", probe)], template)
                known = probe not in text and _HOLE.format(0) in text
            except TemplateError:
                known = False
            self._trim[template] = known
        return known

    def render(self, messages: Sequence[ChatMessage]) -> str:
        """The prompt as text, ending with the assistant's turn (for display, benches and tests)."""
        text, contents = self._render_holes(messages)
        return _HOLE_RE.sub(lambda m: contents[int(m.group(1))], text)

    def _is_special(self, token: int) -> bool:
        known = self._special.get(token)
        if known is None:
            raw = bytes(self._llm.detokenize([token], special=True))
            known = list(self._llm.tokenize(raw, add_bos=False, special=False)) != [token]
            self._special[token] = known
        return known

    def plain(self, text: str | bytes) -> list[int]:
        """Tokens of ``text`` with special-token parsing off."""
        raw = text.encode("utf-8", "replace") if isinstance(text, str) else text
        if not raw:
            return []
        with self._lock:
            return list(self._llm.tokenize(raw, add_bos=False, special=False))

    def prompt_tokens(self, messages: Sequence[ChatMessage]) -> list[int]:
        """The prompt's tokens: the template's special tokens as such, every content as text."""
        text, contents = self._render_holes(messages)
        out: list[int] = []
        if not text.startswith(self.bos_text) or not self.bos_text:
            with self._lock:
                out += list(self._llm.tokenize(b"", add_bos=True, special=True))  # BOS if the model wants one
        pending = bytearray()
        at = 0
        for m in [*_HOLE_RE.finditer(text), None]:
            chunk = text[at:m.start() if m else len(text)]
            if chunk:
                with self._lock:
                    toks = list(self._llm.tokenize(chunk.encode("utf-8"), add_bos=False, special=True))
                for tok in toks:
                    if self._is_special(tok):
                        out += self.plain(bytes(pending))
                        pending.clear()
                        out.append(tok)
                    else:
                        pending += bytes(self._llm.detokenize([tok]))
            if m is None:
                break
            pending += contents[int(m.group(1))].encode("utf-8", "replace")
            at = m.end()
        out += self.plain(bytes(pending))
        return out

    def count(self, text: str) -> int:
        """Exact token count of ``text`` as content."""
        return len(self.plain(text))

    def count_prompt(self, messages: Sequence[ChatMessage]) -> int:
        """Exact token count of the whole prompt for ``messages``."""
        return len(self.prompt_tokens(messages))

    def close(self) -> None:
        """Free the tokenizer (only for a format that owns its ``vocab_only`` model)."""
        with self._lock:
            self._llm.close()


_vocab_lock = threading.Lock()
_vocabs: dict[str, ChatFormat] = {}


def _close_vocabs() -> None:
    # Freed before the interpreter tears llama_cpp down (its __del__ then fails noisily).
    with _vocab_lock:
        for fmt in _vocabs.values():
            fmt.close()
        _vocabs.clear()


def vocab(path: str) -> ChatFormat:
    """The chat format of the GGUF at ``path`` with only its tokenizer loaded (cached per path).

    Raises:
        ValueError: the file cannot be read as a GGUF.
    """
    with _vocab_lock:
        fmt = _vocabs.get(path)
        if fmt is None:
            if not _vocabs:
                atexit.register(_close_vocabs)
            fmt = _vocabs[path] = ChatFormat(_VocabOnly(path))
        return fmt
