"""Anthropic ``POST /v1/messages`` (SSE), structured output in ``output_config``; ``GET /v1/models/{id}``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from turnmark.core.wire.answers import ChatPart, anthropic_parts
from turnmark.core.wire.context_windows import anthropic_context_window
from turnmark.shell.providers.base import Provider

VERSION = "2023-06-01"


class AnthropicProvider(Provider):
    path = "/v1/messages"

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"x-api-key": api_key or "", "anthropic-version": VERSION}

    def parts(self, lines: Iterable[str]) -> Iterator[ChatPart]:
        return anthropic_parts(lines)

    def context_window(self) -> int | None:
        return anthropic_context_window(self.http.get_json(f"/v1/models/{self.model.name}"))
