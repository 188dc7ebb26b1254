"""llama.cpp's server: OpenAI-compatible, its context window from ``GET /props``."""

from __future__ import annotations

from turnmark.core.wire.context_windows import llamacpp_context_window
from turnmark.shell.providers.openai import OpenAICompatibleProvider


class LlamaCppProvider(OpenAICompatibleProvider):
    def context_window(self) -> int | None:
        return llamacpp_context_window(self.http.get_json("/props"))
