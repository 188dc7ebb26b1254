"""Ollama: ``POST /api/chat`` (NDJSON stream, schema in ``format``), context window from ``GET /api/tags``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from turnmark.core.wire.answers import ChatPart, ollama_parts
from turnmark.core.wire.context_windows import ollama_context_window
from turnmark.shell.providers.base import Provider


class OllamaProvider(Provider):
    path = "/api/chat"

    def parts(self, lines: Iterable[str]) -> Iterator[ChatPart]:
        return ollama_parts(lines)

    def context_window(self) -> int | None:
        return ollama_context_window(self.http.get_json("/api/tags"), self.model.name)
