"""Small model servers on loopback that speak the real protocols, for provider and catch-up tests.

One server answers Ollama (``/api/chat``, ``/api/tags``), OpenAI-compatible
(``/v1/chat/completions``, ``/api/v1/chat/completions``, ``/props``,
``/api/v1/models``) and Anthropic (``/v1/messages``, ``/v1/models/<id>``),
each streamed the way that API streams. Tests queue behaviours: an answer
(by default, one summary per requested turn), an HTTP status, raw content,
a delay, or a protocol-level error.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[dict[str, Any]], str]


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


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    """When the server sent the last byte of its answer (``time.monotonic``)."""


class ModelServer:
    """A threaded HTTP server on 127.0.0.1; use as a context manager."""

    def __init__(self, context_window: int = 32_768) -> None:
        self.queue: deque[Behaviour] = deque()
        self.received: list[Received] = []
        self.context_window = context_window
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return None

            def do_GET(self) -> None:
                server.received.append(Received("GET", self.path, dict(self.headers), None))
                window = server.context_window
                if self.path == "/api/tags":
                    payload: Any = {"models": [{"name": "llama3.2:3b", "details": {"context_length": window}}]}
                elif self.path == "/props":
                    payload = {"default_generation_settings": {"n_ctx": window}}
                elif self.path.endswith("/models"):
                    payload = {"data": [{"id": "small-model", "context_length": window}]}
                elif self.path.startswith("/v1/models/"):
                    payload = {"id": self.path.rsplit("/", 1)[-1], "max_input_tokens": window}
                else:
                    self._send(404, b'{"error": "not found"}')
                    return
                self._send(200, json.dumps(payload).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                received = Received("POST", self.path, dict(self.headers), body)
                server.received.append(received)
                behaviour = server.queue.popleft() if server.queue else Behaviour()
                if behaviour.delay:
                    time.sleep(behaviour.delay)
                if behaviour.status != 200:
                    self._send(behaviour.status, behaviour.error_body(dict(self.headers)), behaviour.headers)
                    return
                content = behaviour.content(body)
                if behaviour.raw_stream is not None:
                    chunks: Iterator[str] = iter([behaviour.raw_stream.decode()])
                elif self.path == "/api/chat":
                    chunks = _ollama(content, behaviour.protocol_error, behaviour.cut_off)
                elif self.path.endswith("/chat/completions"):
                    chunks = _openai(content, behaviour.protocol_error, behaviour.cut_off)
                elif self.path == "/v1/messages":
                    chunks = _anthropic(content, behaviour.protocol_error, behaviour.cut_off)
                else:
                    self._send(404, b'{"error": "not found"}')
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                pause = behaviour.chunk_delay(body)
                for chunk in chunks:
                    if pause:
                        time.sleep(pause)
                    data = chunk.encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                received.finished = time.monotonic()

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                return None  # a client that gave up (timeout, size cap) is expected here

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def posts(self) -> list[Received]:
        return [request for request in self.received if request.method == "POST"]


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
