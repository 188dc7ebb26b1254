"""A loopback model server that fails with whatever reply the probe scripts, echoing the key it was sent.

It speaks just enough of Ollama (``/api/chat``, ``/api/tags``), OpenAI (``/v1/chat/completions``)
and Anthropic (``/v1/messages``, ``/v1/models/<id>``) for turnmark to reach the error: an HTTP
error status with a body and headers built from the credential the request carried
(``x-api-key`` or ``Authorization: Bearer``), or a 200 stream that ends in that API's error event.
Context-window lookups answer normally unless the reply is an HTTP error, which they get too.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Build = Callable[[str], str]


def _nothing(credential: str) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Reply:
    """What every request gets: ``status`` with ``body`` and ``headers``, or (``stream``) an error event."""

    status: int
    body: Build
    headers: Callable[[str], dict[str, str]] = _nothing
    stream: bool = False


@dataclass
class Seen:
    credentials: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def credential_of(headers: Any) -> str:
    """The key a request carried, as the provider sent it ("" when none)."""
    key = headers.get("x-api-key")
    if key:
        return str(key)
    authorization = str(headers.get("authorization") or "")
    return authorization.removeprefix("Bearer ").strip()


def _error_event(path: str, message: str) -> bytes:
    if path == "/api/chat":
        started = {"model": "m", "message": {"role": "assistant", "content": "par"}, "done": False}
        return (json.dumps(started) + "\n" + json.dumps({"error": message}) + "\n").encode()
    if path.endswith("/chat/completions"):
        chunk = {"choices": [{"index": 0, "delta": {"content": "par"}}]}
        return f"data: {json.dumps(chunk)}\n\ndata: {json.dumps({'error': {'message': message}})}\n\n".encode()
    start = {"type": "message_start", "message": {"id": "msg_1", "content": []}}
    error = {"type": "error", "error": {"type": "authentication_error", "message": message}}
    return f"event: message_start\ndata: {json.dumps(start)}\n\nevent: error\ndata: {json.dumps(error)}\n\n".encode()


def _window(path: str) -> Any:
    if path == "/api/tags":
        return {"models": [{"name": "llama3.2:3b", "details": {"context_length": 32_768}}]}
    if path.startswith("/v1/models/"):
        return {"id": path.rsplit("/", 1)[-1], "max_input_tokens": 32_768}
    if path.endswith("/models"):
        return {"data": []}
    return None


class EchoServer:
    """A threaded HTTP server on 127.0.0.1 answering every request with ``reply``; a context manager."""

    def __init__(self) -> None:
        self.reply = Reply(500, lambda credential: "{}")
        self.seen = Seen()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                return None

            def do_GET(self) -> None:
                credential = credential_of(self.headers)
                server.seen.paths.append(self.path)
                reply = server.reply
                window = _window(self.path)
                if reply.stream or window is None:
                    self._send(200 if window is not None else 404, json.dumps(window).encode(), {})
                    return
                self._send(reply.status, reply.body(credential).encode(), reply.headers(credential))

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                credential = credential_of(self.headers)
                server.seen.credentials.append(credential)
                server.seen.paths.append(self.path)
                reply = server.reply
                if not reply.stream:
                    self._send(reply.status, reply.body(credential).encode(), reply.headers(credential))
                    return
                self._send(200, _error_event(self.path, reply.body(credential)), reply.headers(credential))

            def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                return None

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> EchoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
