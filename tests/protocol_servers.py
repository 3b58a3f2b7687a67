"""Local HTTP servers speaking the real OpenAI and Anthropic streaming wire protocols, with faults.

Reusable by any test: start a server as a context manager, queue scripted replies, point a provider
at ``server.base_url``, then inspect ``server.requests`` (the JSON bodies received)::

    with OpenAIServer() as srv:
        srv.queue(Reply(chunks=["Hel", "lo"], usage=ReplyUsage(input=10, output=2, cache_read=4)))
        srv.queue(Reply.status(429, headers={"Retry-After": "1"}))
        provider = OpenAICompatProvider(base_url=srv.base_url, api_key="k", model="gpt-4o")

Each request pops the next reply; with an empty queue the server answers 500 "no scripted reply".
Responses use HTTP/1.1 chunked transfer encoding like real servers, so a "cut" stream (the socket
closed without the terminating chunk) is seen by the client as a broken body, not a clean end.

Faults (``Reply.fault``): ``hang`` (never answer: client timeout), ``stall`` (send the chunks, then
go silent), ``endless`` (repeat the last chunk until the client closes the connection, then set
``client_gone``), ``malformed`` (send the chunks, then an SSE event whose data is not JSON), ``cut``
(send the chunks, then drop the connection), ``error_event`` (send the chunks, then an error event as
the real APIs do when they fail mid-stream). :func:`refused_url` gives a URL whose port is closed.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ReplyUsage:
    """Usage numbers a scripted reply reports (mapped to each protocol's field names).

    ``input`` is the uncached prompt part; OpenAI's ``prompt_tokens`` is sent as
    ``input + cache_read`` with ``prompt_tokens_details.cached_tokens = cache_read``.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


@dataclass
class ScriptedToolCall:
    """A tool call the server streams (``arguments`` is sent in ``pieces`` fragments)."""

    name: str
    arguments: dict[str, Any] | str
    id: str = "call_1"
    pieces: int = 3

    def fragments(self) -> list[str]:
        raw = self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)
        step = max(1, -(-len(raw) // self.pieces))
        return [raw[i : i + step] for i in range(0, len(raw), step)] or [""]


@dataclass
class Reply:
    """One scripted response."""

    chunks: list[str] = field(default_factory=list)
    tool_calls: list[ScriptedToolCall] = field(default_factory=list)
    usage: ReplyUsage | None = field(default_factory=ReplyUsage)
    stop_reason: str | None = None
    status_code: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    fault: str | None = None  # None | "hang" | "stall" | "endless" | "malformed" | "cut" | "error_event"

    @classmethod
    def status(cls, code: int, *, headers: dict[str, str] | None = None, message: str = "",
               error_type: str = "", code_name: str = "") -> Reply:
        """An HTTP error response (the body shape is filled in per protocol)."""
        return cls(status_code=code, headers=headers or {},
                   error={"message": message or f"error {code}", "type": error_type, "code": code_name})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        owner = self.server.owner
        owner.requests.append(body)
        owner.request_headers.append({k.lower(): v for k, v in self.headers.items()})
        owner.paths.append(self.path)
        try:
            reply = owner.replies.get_nowait()
        except queue.Empty:
            reply = Reply.status(500, message="no scripted reply")
        if reply.fault == "hang":
            owner.closing.wait()
            self.close_connection = True
            return
        if reply.status_code != 200:
            payload = json.dumps(owner.error_body(reply)).encode()
            self.send_response(reply.status_code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        events = owner.events(reply, body)
        for ev in events:
            self._chunk(ev)
        if reply.fault == "endless":  # keep streaming the last chunk until the client hangs up
            try:
                while not owner.closing.wait(0.02):
                    self._chunk(events[-1])
            except OSError:
                owner.client_gone.set()
            self.close_connection = True
            return
        if reply.fault == "stall":
            owner.closing.wait()
            self.close_connection = True
            return
        if reply.fault == "malformed":
            self._chunk(owner.malformed_event())
        if reply.fault == "error_event":
            self._chunk(owner.error_event())
        if reply.fault == "cut":
            self.close_connection = True
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.fault is None:
            for ev in owner.closing_events(reply, body):
                self._chunk(ev)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ProtocolServer


class ProtocolServer:
    """Base: a threaded local HTTP server with a queue of scripted replies.

    Attributes:
        requests: JSON bodies received, in order.
        request_headers: Headers of each request (lower-case names).
        paths: Request paths, in order.
    """

    def __init__(self) -> None:
        self.replies: queue.Queue[Reply] = queue.Queue()
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.closing = threading.Event()
        self.client_gone = threading.Event()
        """Set when a client closed an ``endless`` stream (the server's write failed)."""
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def queue(self, *replies: Reply) -> None:
        """Add replies served to the next requests, in order."""
        for r in replies:
            self.replies.put(r)

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ProtocolServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.closing.set()
        assert self._httpd is not None and self._thread is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # Protocol-specific parts.
    def error_body(self, reply: Reply) -> dict[str, Any]:
        raise NotImplementedError

    def events(self, reply: Reply, request: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def closing_events(self, reply: Reply, request: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def malformed_event(self) -> str:
        return 'data: {"id": "chatcmpl-x", "choices": [{"delta": {"content": "broken\n\n'

    def error_event(self) -> str:
        return _sse({"error": {"message": "The server had an error while processing your request.",
                               "type": "server_error", "code": None}})


def _sse(data: dict[str, Any] | str, event: str | None = None) -> str:
    body = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "") + f"data: {body}\n\n"


class OpenAIServer(ProtocolServer):
    """Speaks ``POST /v1/chat/completions`` with ``stream: true`` (SSE ``chat.completion.chunk``).

    The usage chunk (``choices: []``) is only sent when the request asked for it with
    ``stream_options.include_usage``, as OpenAI does.
    """

    @property
    def base_url(self) -> str:
        """Pass this as the OpenAI ``base_url``."""
        return self.root_url + "/v1"

    def __enter__(self) -> OpenAIServer:
        super().__enter__()
        return self

    def error_body(self, reply: Reply) -> dict[str, Any]:
        e = reply.error or {}
        return {"error": {"message": e.get("message", ""), "type": e.get("type") or "invalid_request_error",
                          "param": None, "code": e.get("code") or None}}

    @staticmethod
    def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "m",
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    def events(self, reply: Reply, request: dict[str, Any]) -> list[str]:
        out = [_sse(self._chunk({"role": "assistant", "content": ""}))]
        out += [_sse(self._chunk({"content": c})) for c in reply.chunks]
        for i, call in enumerate(reply.tool_calls):
            first = {"index": i, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
            out.append(_sse(self._chunk({"tool_calls": [first]})))
            for frag in call.fragments():
                out.append(_sse(self._chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]})))
        return out

    def closing_events(self, reply: Reply, request: dict[str, Any]) -> list[str]:
        finish = reply.stop_reason or ("tool_calls" if reply.tool_calls else "stop")
        out = [_sse(self._chunk({}, finish))]
        wants_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        if reply.usage is not None and wants_usage:
            u = reply.usage
            prompt = u.input + u.cache_read
            out.append(_sse({
                "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "m",
                "choices": [],
                "usage": {"prompt_tokens": prompt, "completion_tokens": u.output, "total_tokens": prompt + u.output,
                          "prompt_tokens_details": {"cached_tokens": u.cache_read, "audio_tokens": 0},
                          "completion_tokens_details": {"reasoning_tokens": 0}},
            }))
        out.append(_sse("[DONE]"))
        return out


class AnthropicServer(ProtocolServer):
    """Speaks ``POST /v1/messages`` with ``stream: true`` (``message_start`` … ``message_stop``)."""

    @property
    def base_url(self) -> str:
        """Pass this as the Anthropic ``base_url`` (the SDK appends ``/v1/messages``)."""
        return self.root_url

    def __enter__(self) -> AnthropicServer:
        super().__enter__()
        return self

    def error_body(self, reply: Reply) -> dict[str, Any]:
        e = reply.error or {}
        default = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error",
                   404: "not_found_error", 529: "overloaded_error"}.get(reply.status_code, "api_error")
        if 400 <= reply.status_code < 500 and reply.status_code not in (401, 403, 404, 429):
            default = "invalid_request_error"
        return {"type": "error", "error": {"type": e.get("type") or default, "message": e.get("message", "")}}

    def events(self, reply: Reply, request: dict[str, Any]) -> list[str]:
        u = reply.usage or ReplyUsage()
        start_usage = {"input_tokens": u.input, "cache_creation_input_tokens": u.cache_write,
                       "cache_read_input_tokens": u.cache_read, "output_tokens": 1}
        out = [_sse({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": request.get("model", "m"),
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}}, "message_start")]
        index = 0
        if reply.chunks:
            out.append(_sse({"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}, "content_block_start"))
            out.append(_sse({"type": "ping"}, "ping"))
            for c in reply.chunks:
                out.append(_sse({"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": c}}, "content_block_delta"))
            out.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
            index = 1
        for call in reply.tool_calls:
            out.append(_sse({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": call.id, "name": call.name, "input": {}}}, "content_block_start"))
            for frag in call.fragments():
                out.append(_sse({"type": "content_block_delta", "index": index,
                                 "delta": {"type": "input_json_delta", "partial_json": frag}}, "content_block_delta"))
            out.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
            index += 1
        return out

    def closing_events(self, reply: Reply, request: dict[str, Any]) -> list[str]:
        u = reply.usage or ReplyUsage()
        stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
        return [
            _sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                  "usage": {"output_tokens": u.output}}, "message_delta"),
            _sse({"type": "message_stop"}, "message_stop"),
        ]

    def malformed_event(self) -> str:
        return 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {\n\n'

    def error_event(self) -> str:
        return _sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error")


def refused_url(path: str = "/v1") -> str:
    """A loopback URL nothing listens on (connection refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}{path}"


@dataclass
class Collected:
    """What a provider stream produced: events, the text so far, and the error it ended with."""

    events: list[Any]
    error: Any = None

    @property
    def text(self) -> str:
        return "".join(getattr(e, "text", "") for e in self.events if type(e).__name__ == "TextDelta")

    @property
    def end(self) -> Any:
        ends = [e for e in self.events if type(e).__name__ == "StreamEnd"]
        return ends[-1] if ends else None


async def collect(stream: Any) -> Collected:
    """Drain a provider stream, keeping the partial output when it raises ``ProviderError``."""
    from neotask_tui.providers.base import ProviderError

    out = Collected(events=[])
    try:
        async for ev in stream:
            out.events.append(ev)
    except ProviderError as e:
        out.error = e
    return out
