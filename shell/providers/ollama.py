"""Ollama: ``POST /api/chat`` (NDJSON stream, schema in ``format``), context window from ``GET /api/tags``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from turnmark.core.summaries.request import SummaryRequest
from turnmark.core.wire.models import ModelSpec
from turnmark.core.wire.parameters import answer_limit, reasoning_fields
from turnmark.shell.errors import ModelError
from turnmark.shell.providers.http import Http
from turnmark.shell.providers.protocol import ChatPart, answer_text, sampling
from turnmark.shell.settings import HttpSettings

DEFAULT_BASE_URL = "http://localhost:11434"


class OllamaProvider:
    def __init__(self, model: ModelSpec, base_url: str, settings: HttpSettings) -> None:
        self.model = model
        self.http = Http(base_url, {}, settings)

    @property
    def endpoint(self) -> str:
        return self.http.base_url

    def context_window(self) -> int | None:
        listing = self.http.get_json("/api/tags")
        for entry in listing.get("models", []) if isinstance(listing, dict) else []:
            if isinstance(entry, dict) and self.model.name in (entry.get("name"), entry.get("model")):
                details = entry.get("details") or {}
                length = details.get("context_length") if isinstance(details, dict) else None
                return length if isinstance(length, int) and length > 0 else None
        return None

    def complete(self, request: SummaryRequest, should_stop: Callable[[], bool] = lambda: False) -> str:
        limit = answer_limit(self.model.parameters, request.answer_tokens)
        options = {"num_ctx": request.context_window, "num_predict": limit}
        options.update(sampling(self.model.parameters))
        body = {
            "model": self.model.name,
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}],
            "format": request.schema,
            "options": options,
            "stream": True,
            **reasoning_fields("ollama", self.model.name, self.model.parameters),
        }
        return answer_text(self.chat(body, should_stop), "ollama")

    def chat(self, body: dict[str, Any], should_stop: Callable[[], bool] = lambda: False) -> Iterator[ChatPart]:
        """Stream an answer (NDJSON): text, thinking, tool calls; an answer that ends before ``done`` fails."""
        calls = 0
        done = False
        for line in self.http.stream_lines("/api/chat", body, should_stop):
            if not line.strip():
                continue
            try:
                chunk = json.loads(line)
            except (ValueError, RecursionError):
                raise ModelError(f"ollama sent a line that is not JSON: {line[:80]!r}") from None
            if not isinstance(chunk, dict):
                continue
            if chunk.get("error"):
                raise ModelError(f"ollama: {chunk['error']}")
            done = done or chunk.get("done") is True
            if chunk.get("done") is True and chunk.get("done_reason"):
                yield ChatPart("stop", str(chunk["done_reason"]))
            message = chunk.get("message") or {}
            if message.get("thinking"):
                yield ChatPart("reasoning", str(message["thinking"]))
            if message.get("content"):
                yield ChatPart("text", str(message["content"]))
            for call in message.get("tool_calls") or []:
                function = call.get("function", {}) if isinstance(call, dict) else {}
                name = str(function.get("name", "tool"))
                arguments = function.get("arguments")
                yield ChatPart(
                    "tool_call",
                    call_id=f"{name}_{calls}",
                    name=name,
                    arguments=arguments if isinstance(arguments, dict) else {},
                )
                calls += 1
        if not done:
            raise ModelError("ollama: the answer ended before it was done")
