"""Anthropic ``POST /v1/messages`` (SSE), structured output in ``output_config``; ``GET /v1/models/{id}``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from turnmark.core.summaries.request import SummaryRequest
from turnmark.core.wire.models import ModelSpec
from turnmark.core.wire.parameters import answer_limit, reasoning_fields
from turnmark.shell.errors import ModelError
from turnmark.shell.providers.http import Http
from turnmark.shell.providers.protocol import CUT_OFF, ChatPart, answer_text, parse_arguments, sampling, sse_data
from turnmark.shell.settings import HttpSettings

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_KEY_ENV = "ANTHROPIC_API_KEY"
VERSION = "2023-06-01"
MIN_TOKENS = 256


class AnthropicProvider:
    def __init__(self, model: ModelSpec, base_url: str, api_key: str, settings: HttpSettings) -> None:
        self.model = model
        headers = {"x-api-key": api_key, "anthropic-version": VERSION}
        self.http = Http(base_url, headers, settings, secret=api_key)

    @property
    def endpoint(self) -> str:
        return self.http.base_url

    def __repr__(self) -> str:
        return f"AnthropicProvider({self.model.id!r})"

    def context_window(self) -> int | None:
        details = self.http.get_json(f"/v1/models/{self.model.name}")
        size = details.get("max_input_tokens") if isinstance(details, dict) else None
        return size if isinstance(size, int) and size > 0 else None

    def complete(self, request: SummaryRequest, should_stop: Callable[[], bool] = lambda: False) -> str:
        thinking = reasoning_fields("anthropic", self.model.name, self.model.parameters)
        budget = thinking.get("thinking", {}).get("budget_tokens", 0) if thinking else 0
        body: dict[str, object] = {
            "model": self.model.name,
            "max_tokens": max(answer_limit(self.model.parameters, request.answer_tokens), MIN_TOKENS) + budget,
            "system": request.system,
            "messages": [{"role": "user", "content": request.user}],
            "output_config": {"format": {"type": "json_schema", "schema": request.schema}},
            "stream": True,
        }
        if not budget:
            body.update(sampling(self.model.parameters))
        body.update(thinking)
        return answer_text(self.chat(body, should_stop), "anthropic")

    def chat(self, body: dict[str, Any], should_stop: Callable[[], bool] = lambda: False) -> Iterator[ChatPart]:
        """Stream a chat answer: text and thinking deltas, tool calls once their input JSON is complete."""
        blocks: dict[int, dict[str, str]] = {}
        stopped = False
        for event, data in sse_data(self.http.stream_lines("/v1/messages", body, should_stop)):
            if not isinstance(data, dict):
                continue
            if event == "error" or data.get("type") == "error":
                error = data.get("error", {})
                raise ModelError(f"anthropic: {error.get('message', 'error') if isinstance(error, dict) else error}")
            stopped = stopped or event == "message_stop"
            reason = (data.get("delta") or {}).get("stop_reason") if event == "message_delta" else None
            if reason:
                yield ChatPart("stop", CUT_OFF if reason == "max_tokens" else str(reason))
            index = int(data.get("index", 0))
            if event == "content_block_start":
                block = data.get("content_block") or {}
                blocks[index] = {
                    "type": str(block.get("type")),
                    "id": str(block.get("id", "")),
                    "name": str(block.get("name", "")),
                    "json": "",
                }
            elif event == "content_block_delta":
                delta = data.get("delta") or {}
                if delta.get("type") == "text_delta":
                    yield ChatPart("text", str(delta.get("text", "")))
                elif delta.get("type") == "thinking_delta":
                    yield ChatPart("reasoning", str(delta.get("thinking", "")))
                elif delta.get("type") == "input_json_delta" and index in blocks:
                    blocks[index]["json"] += str(delta.get("partial_json", ""))
            elif event == "content_block_stop" and blocks.get(index, {}).get("type") == "tool_use":
                block = blocks.pop(index)
                yield ChatPart(
                    "tool_call", call_id=block["id"], name=block["name"], arguments=parse_arguments(block["json"])
                )
        if not stopped:
            raise ModelError("anthropic: the answer ended before message_stop")
