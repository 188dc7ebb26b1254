"""Small model servers on loopback that speak the real protocols, for provider, catch-up and hostile tests.

Both answer Ollama (``/api/chat``, ``/api/tags``), OpenAI-compatible (``/v1/chat/completions``,
``/api/v1/chat/completions``, ``/props``, ``/api/v1/models``) and Anthropic (``/v1/messages``,
``/v1/models/<id>``), each streamed the way that API streams, and log every request.
``ModelServer`` plays queued behaviours: an answer (by default, one summary per requested turn),
an HTTP status, raw content, a delay, or a protocol-level error. ``EchoServer`` fails every request
with the reply a probe scripts, built from the credential the request carried.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self, cast

Answer = Callable[[dict[str, Any]], str]
Encoder = Callable[[str, str | None, bool], Iterator[str]]
NOT_FOUND = b'{"error": "not found"}'


def requested_ids(body: dict[str, Any]) -> list[str]:
    """The turn IDs a summary request asks for (from its schema, wherever the API puts it)."""
    schema = (
        body.get("format")
        or body.get("response_format", {}).get("json_schema", {}).get("schema")
        or body.get("response_format", {}).get("schema")
        or body.get("output_config", {}).get("format", {}).get("schema")
    )
    return list(schema["properties"]["summaries"]["required"])


def summaries_for(body: dict[str, Any]) -> str:
    """One summary per requested turn; a plain chat request (no schema) gets a plain answer."""
    try:
        ids = requested_ids(body)
    except (KeyError, TypeError, AttributeError):
        return "A plain answer."
    return json.dumps({"summaries": {turn_id: f"Summary of {turn_id}" for turn_id in ids}})


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    """When the server sent the last byte of its answer (``time.monotonic``)."""


class Exchange(BaseHTTPRequestHandler):
    """One request, logged and handed to the ``LoopbackServer`` that owns the socket."""

    protocol_version = "HTTP/1.1"

    @property
    def owner(self) -> LoopbackServer:
        return cast("_Server", self.server).owner

    def log_message(self, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        received = Received("GET", self.path, dict(self.headers), None)
        self.owner.received.append(received)
        self.owner.get(self, received)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        received = Received("POST", self.path, dict(self.headers), body)
        self.owner.received.append(received)
        self.owner.post(self, received)

    def send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        """A whole JSON answer."""
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def stream(self, chunks: Iterator[str], pause: float = 0.0) -> None:
        """An event stream in HTTP chunks, ``pause`` seconds before each."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for chunk in chunks:
            if pause:
                time.sleep(pause)
            data = chunk.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class NoDelayExchange(Exchange):
    disable_nagle_algorithm = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: LoopbackServer) -> None:
        self.owner = owner
        self.handlers: list[tuple[threading.Thread, socket.socket]] = []
        super().__init__(("127.0.0.1", 0), owner.exchange)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(target=self.process_request_thread, args=(request, client_address), daemon=True)
        self.handlers.append((thread, request))
        thread.start()

    def close_handlers(self) -> None:
        """End every exchange still open (a client that keeps its connection for the next request): no thread of
        this server outlives it (a test that forks needs a process with one thread)."""
        for _, request in self.handlers:
            with contextlib.suppress(OSError):
                request.shutdown(socket.SHUT_RDWR)
        for thread, _ in self.handlers:
            thread.join(timeout=10)

    def handle_error(self, request: object, client_address: object) -> None:
        return None  # a client that gave up (timeout, size cap) is expected here


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 that answers context-window lookups; use as a context manager.

    Subclasses answer ``POST`` requests; any other path gets a 404.
    """

    exchange: ClassVar[type[Exchange]] = Exchange

    def __init__(self, context_window: int = 32_768) -> None:
        self.received: list[Received] = []
        self.context_window = context_window
        self._server = _Server(self)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._server.close_handlers()

    def posts(self) -> list[Received]:
        return [request for request in self.received if request.method == "POST"]

    def open_connections(self, settle: float = 2.0) -> int:
        """How many clients still hold a connection to this server, once those closing have had ``settle``
        seconds to do so (an exchange ends when its client closes the connection)."""
        deadline = time.monotonic() + settle
        while True:
            alive = sum(thread.is_alive() for thread, _ in self._server.handlers)
            if not alive or time.monotonic() > deadline:
                return alive
            time.sleep(0.02)

    def window(self, path: str) -> Any:
        """What a context-window lookup at ``path`` answers, or ``None`` for another path."""
        if path == "/api/tags":
            return {"models": [{"name": "llama3.2:3b", "details": {"context_length": self.context_window}}]}
        if path == "/props":
            return {"default_generation_settings": {"n_ctx": self.context_window}}
        if path.endswith("/models"):
            return {"data": [{"id": "small-model", "context_length": self.context_window}]}
        if path.startswith("/v1/models/"):
            return {"id": path.rsplit("/", 1)[-1], "max_input_tokens": self.context_window}
        return None

    def get(self, exchange: Exchange, received: Received) -> None:
        payload = self.window(received.path)
        if payload is None:
            exchange.send(404, NOT_FOUND)
        else:
            exchange.send(200, json.dumps(payload).encode())

    def post(self, exchange: Exchange, received: Received) -> None:
        exchange.send(404, NOT_FOUND)


@dataclass
class Behaviour:
    status: int = 200
    content: Answer = summaries_for
    delay: float = 0.0
    protocol_error: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    error_body: Callable[[dict[str, str]], bytes] = lambda headers: b'{"error": {"message": "scripted failure"}}'
    raw_stream: bytes | None = None
    chunk_delay: Callable[[dict[str, Any]], float] = lambda body: 0.0
    cut_off: bool = False
    """End the answer as the token limit does (finish_reason length, stop_reason max_tokens, done_reason length)."""


class ModelServer(LoopbackServer):
    """Answers each ``POST`` with the next queued ``Behaviour`` (a default one when the queue is empty)."""

    def __init__(self, context_window: int = 32_768) -> None:
        super().__init__(context_window)
        self.queue: deque[Behaviour] = deque()

    def post(self, exchange: Exchange, received: Received) -> None:
        behaviour = self.queue.popleft() if self.queue else Behaviour()
        if behaviour.delay:
            time.sleep(behaviour.delay)
        if behaviour.status != 200:
            exchange.send(behaviour.status, behaviour.error_body(received.headers), behaviour.headers)
            return
        body = received.body or {}
        content = behaviour.content(body)
        encode = _encoder(received.path)
        if behaviour.raw_stream is not None:
            chunks: Iterator[str] = iter([behaviour.raw_stream.decode()])
        elif encode is not None:
            chunks = encode(content, behaviour.protocol_error, behaviour.cut_off)
        else:
            exchange.send(404, NOT_FOUND)
            return
        exchange.stream(chunks, behaviour.chunk_delay(body))
        received.finished = time.monotonic()


def _nothing(credential: str) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Reply:
    """What every request gets: ``status`` with ``body`` and ``headers``, or (``stream``) an error event
    carrying ``body`` as its message after a partial answer."""

    status: int
    body: Callable[[str], str]
    headers: Callable[[str], dict[str, str]] = _nothing
    stream: bool = False


@dataclass
class Seen:
    credentials: list[str] = field(default_factory=list)


def credential_of(headers: Any) -> str:
    """The key a request carried (``x-api-key`` or ``Authorization: Bearer``), as sent ("" when none)."""
    key = headers.get("x-api-key")
    if key:
        return str(key)
    authorization = str(headers.get("authorization") or "")
    return authorization.removeprefix("Bearer ").strip()


class EchoServer(LoopbackServer):
    """Fails every request with ``reply``, built from the key it carried; context-window lookups
    answer normally unless the reply is an HTTP error, which they get too."""

    exchange = NoDelayExchange

    def __init__(self) -> None:
        super().__init__()
        self.reply = Reply(500, lambda credential: "{}")
        self.seen = Seen()

    def get(self, exchange: Exchange, received: Received) -> None:
        if self.reply.stream or self.window(received.path) is None:
            super().get(exchange, received)
        else:
            self._fail(exchange, credential_of(exchange.headers))

    def post(self, exchange: Exchange, received: Received) -> None:
        credential = credential_of(exchange.headers)
        self.seen.credentials.append(credential)
        self._fail(exchange, credential)

    def _fail(self, exchange: Exchange, credential: str) -> None:
        reply = self.reply
        body = reply.body(credential)
        if reply.stream:
            events = (_encoder(exchange.path) or _anthropic)("par", body, False)
            exchange.send(200, "".join(events).encode(), reply.headers(credential))
        else:
            exchange.send(reply.status, body.encode(), reply.headers(credential))


def _encoder(path: str) -> Encoder | None:
    if path == "/api/chat":
        return _ollama
    if path.endswith("/chat/completions"):
        return _openai
    if path == "/v1/messages":
        return _anthropic
    return None


def _pieces(text: str) -> list[str]:
    return [text[i : i + 7] for i in range(0, len(text), 7)] or [""]


def _ollama(content: str, error: str | None, cut_off: bool = False) -> Iterator[str]:
    for piece in _pieces(content):
        yield json.dumps({"model": "m", "message": {"role": "assistant", "content": piece}, "done": False}) + "\n"
    if error:
        yield json.dumps({"error": error}) + "\n"
        return
    final = {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True}
    yield json.dumps({**final, "done_reason": "length" if cut_off else "stop"}) + "\n"


def _openai(content: str, error: str | None, cut_off: bool = False) -> Iterator[str]:
    for piece in _pieces(content):
        yield "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": piece}}]}) + "\n\n"
    if error:
        yield "data: " + json.dumps({"error": {"message": error}}) + "\n\n"
    finish = {"index": 0, "delta": {}, "finish_reason": "length" if cut_off else "stop"}
    yield "data: " + json.dumps({"choices": [finish]}) + "\n\n"
    yield "data: [DONE]\n\n"


def _anthropic(content: str, error: str | None, cut_off: bool = False) -> Iterator[str]:
    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    yield event("message_start", {"type": "message_start", "message": {"id": "msg_1", "content": []}})
    yield event(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    for piece in _pieces(content):
        yield event(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
        )
    if error:
        yield event("error", {"type": "error", "error": {"type": "overloaded_error", "message": error}})
        return
    yield event("content_block_stop", {"type": "content_block_stop", "index": 0})
    reason = "max_tokens" if cut_off else "end_turn"
    yield event("message_delta", {"type": "message_delta", "delta": {"stop_reason": reason}})
    yield event("message_stop", {"type": "message_stop"})
