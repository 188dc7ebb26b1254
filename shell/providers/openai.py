"""OpenAI-compatible chat completions (OpenAI, OpenRouter; llama.cpp in its own module): SSE."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from turnmark.core.wire.answers import ChatPart, openai_parts
from turnmark.core.wire.context_windows import listed_context_window, openai_context_window
from turnmark.shell.providers.base import Provider


class OpenAICompatibleProvider(Provider):
    @property
    def prefix(self) -> str:
        return "/api/v1" if self.model.provider == "openrouter" else "/v1"

    @property
    def path(self) -> str:
        return f"{self.prefix}/chat/completions"

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if self.model.provider == "openrouter":
            headers["X-Title"] = "turnmark"
        return headers

    def parts(self, lines: Iterable[str]) -> Iterator[ChatPart]:
        return openai_parts(lines, self.model.provider)

    def context_window(self) -> int | None:
        if self.model.provider == "openai":
            return openai_context_window(self.model.name)
        return listed_context_window(self.http.get_json(f"{self.prefix}/models"), self.model.name)
