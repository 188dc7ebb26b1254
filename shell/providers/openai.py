"""OpenAI-compatible chat completions (OpenAI, llama.cpp, OpenRouter): ``response_format`` json_schema, SSE."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from turnmark.core.summaries.request import SummaryRequest
from turnmark.core.wire.models import ModelSpec
from turnmark.core.wire.parameters import answer_limit, reasoning_fields
from turnmark.shell.errors import ModelError
from turnmark.shell.providers.http import Http
from turnmark.shell.providers.protocol import ChatPart, answer_text, parse_arguments, sampling, sse_data
from turnmark.shell.settings import HttpSettings

DEFAULTS = {
    "openai": ("https://api.openai.com", "/v1", "OPENAI_API_KEY"),
    "llamacpp": ("http://127.0.0.1:8080", "/v1", None),
    "openrouter": ("https://openrouter.ai", "/api/v1", "OPENROUTER_API_KEY"),
}

OPENAI_CONTEXT_WINDOWS = {
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    "gpt-5-nano": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "o4-mini": 200_000,
    "o3": 200_000,
}
"""OpenAI does not report context windows; like JP, turnmark keeps a table (unknown models: none)."""


def response_format(provider: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The structured-output request: OpenAI's ``json_schema``; for llama.cpp ``json_object`` with a ``schema``,
    the one shape both llama.cpp's own server and llama-cpp-python's accept."""
    if provider == "llamacpp":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "structured_output", "schema": schema, "strict": True}}


class OpenAICompatibleProvider:
    def __init__(self, model: ModelSpec, base_url: str, api_key: str | None, settings: HttpSettings) -> None:
        self.model = model
        _, self.prefix, _ = DEFAULTS[model.provider]
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if model.provider == "openrouter":
            headers["X-Title"] = "turnmark"
        self.http = Http(base_url, headers, settings, secret=api_key)

    @property
    def endpoint(self) -> str:
        return self.http.base_url

    def __repr__(self) -> str:
        return f"OpenAICompatibleProvider({self.model.id!r})"

    def context_window(self) -> int | None:
        if self.model.provider == "openai":
            return OPENAI_CONTEXT_WINDOWS.get(self.model.name)
        if self.model.provider == "llamacpp":
            props = self.http.get_json("/props")
            settings = props.get("default_generation_settings", {}) if isinstance(props, dict) else {}
            size = settings.get("n_ctx") if isinstance(settings, dict) else None
            return size if isinstance(size, int) and size > 0 else None
        listing = self.http.get_json(f"{self.prefix}/models")
        for entry in listing.get("data", []) if isinstance(listing, dict) else []:
            if isinstance(entry, dict) and entry.get("id") == self.model.name:
                top = entry.get("top_provider") or {}
                size = (top.get("context_length") if isinstance(top, dict) else None) or entry.get("context_length")
                return size if isinstance(size, int) and size > 0 else None
        return None

    def complete(self, request: SummaryRequest, should_stop: Callable[[], bool] = lambda: False) -> str:
        body: dict[str, object] = {
            "model": self.model.name,
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}],
            "response_format": response_format(self.model.provider, request.schema),
            "stream": True,
        }
        limit = "max_completion_tokens" if self.model.provider == "openai" else "max_tokens"
        body[limit] = answer_limit(self.model.parameters, request.answer_tokens)
        body.update(sampling(self.model.parameters))
        body.update(reasoning_fields(self.model.provider, self.model.name, self.model.parameters))
        return answer_text(self.chat(body, should_stop), self.model.provider)

    def chat(self, body: dict[str, Any], should_stop: Callable[[], bool] = lambda: False) -> Iterator[ChatPart]:
        """Stream a chat answer: text deltas, and tool calls assembled from their indexed fragments."""
        calls: dict[int, dict[str, str]] = {}
        for _, data in sse_data(self.http.stream_lines(f"{self.prefix}/chat/completions", body, should_stop)):
            if isinstance(data, dict) and data.get("error"):
                error = data["error"]
                raise ModelError(
                    f"{self.model.provider}: {error.get('message', error) if isinstance(error, dict) else error}"
                )
            for choice in data.get("choices", []) if isinstance(data, dict) else []:
                if choice.get("finish_reason"):
                    yield ChatPart("stop", str(choice["finish_reason"]))
                delta = choice.get("delta") or choice.get("message") or {}
                if delta.get("refusal"):
                    raise ModelError(f"{self.model.provider}: the model refused: {delta['refusal']}")
                if delta.get("reasoning_content"):
                    yield ChatPart("reasoning", str(delta["reasoning_content"]))
                if delta.get("content"):
                    yield ChatPart("text", str(delta["content"]))
                for fragment in delta.get("tool_calls") or []:
                    slot = calls.setdefault(int(fragment.get("index", 0)), {"id": "", "name": "", "arguments": ""})
                    function = fragment.get("function") or {}
                    slot["id"] = fragment.get("id") or slot["id"]
                    slot["name"] = function.get("name") or slot["name"]
                    slot["arguments"] += function.get("arguments") or ""
        for index in sorted(calls):
            call = calls[index]
            yield ChatPart(
                "tool_call",
                call_id=call["id"] or f"call_{index}",
                name=call["name"] or "tool",
                arguments=parse_arguments(call["arguments"]),
            )
