"""Ollama: ``POST /api/chat`` (NDJSON stream, schema in ``format``), context window from ``GET /api/tags``."""

from __future__ import annotations

import json
from collections.abc import Callable

from turnmark.core.models import ModelSpec
from turnmark.core.summary_request import SummaryRequest

from .llm_http import Http, HttpSettings, ModelError, sampling

DEFAULT_BASE_URL = "http://localhost:11434"


class OllamaProvider:
    def __init__(self, model: ModelSpec, base_url: str, settings: HttpSettings) -> None:
        self.model = model
        self.http = Http(base_url, {}, settings)

    def context_window(self) -> int | None:
        listing = self.http.get_json("/api/tags")
        for entry in listing.get("models", []) if isinstance(listing, dict) else []:
            if isinstance(entry, dict) and self.model.name in (entry.get("name"), entry.get("model")):
                details = entry.get("details") or {}
                length = details.get("context_length") if isinstance(details, dict) else None
                return length if isinstance(length, int) and length > 0 else None
        return None

    def complete(self, request: SummaryRequest, should_stop: Callable[[], bool] = lambda: False) -> str:
        options = {"num_ctx": request.context_window, "num_predict": request.answer_tokens}
        options.update(sampling(self.model.parameters))
        body = {
            "model": self.model.name,
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}],
            "format": request.schema,
            "options": options,
            "stream": True,
        }
        parts: list[str] = []
        done = False
        for line in self.http.stream_lines("/api/chat", body, should_stop):
            if not line.strip():
                continue
            try:
                chunk = json.loads(line)
            except (ValueError, RecursionError):
                raise ModelError(f"ollama sent a line that is not JSON: {line[:80]!r}") from None
            if isinstance(chunk, dict) and chunk.get("error"):
                raise ModelError(f"ollama: {chunk['error']}")
            message = chunk.get("message") if isinstance(chunk, dict) else None
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                parts.append(message["content"])
            done = done or (isinstance(chunk, dict) and chunk.get("done") is True)
        if not done:
            raise ModelError("ollama: the answer ended before it was done")
        return "".join(parts)
