"""What model calls share without needing an HTTP client: settings, errors, answer pieces, SSE parsing.

Kept apart from ``llm_http`` so commands that never call a model never import httpx.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from turnmark.shell.errors import ModelError, ModelTruncated


def sse_data(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """Server-sent events as ``(event name, parsed data)``; ``[DONE]`` ends the stream."""
    event = "message"
    for line in lines:
        if line.startswith("event:"):
            event = line[len("event:") :].strip()
        elif line.startswith("data:"):
            data = line[len("data:") :].strip()
            if data == "[DONE]":
                return
            try:
                yield event, json.loads(data)
            except (ValueError, RecursionError):
                raise ModelError(f"a streamed event is not JSON: {data[:80]!r}") from None
            event = "message"


def sampling(parameters: dict[str, Any]) -> dict[str, Any]:
    """The sampling parameters every API understands, from JP's ``parameters``.

    Reasoning is left at each model's own default: the resolved default (low
    effort, excluded) asks for no visible reasoning, and a request naming
    reasoning options fails on models that have none.
    """
    return {
        key: parameters[key]
        for key in ("temperature", "top_p")
        if isinstance(parameters.get(key), int | float) and not isinstance(parameters.get(key), bool)
    }


@dataclass(frozen=True, slots=True)
class ChatPart:
    """A piece of a streamed answer: ``text``, ``reasoning``, a complete ``tool_call``, or ``stop``.

    ``stop`` carries why the answer ended, in OpenAI's words: ``length`` when the token limit cut it off.
    """

    kind: str
    text: str = ""
    call_id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)


CUT_OFF = "length"


def answer_text(parts: Iterator[ChatPart], provider: str) -> str:
    """The text of a structured answer; ``ModelTruncated`` when the token limit cut it off."""
    text: list[str] = []
    for part in parts:
        if part.kind == "text":
            text.append(part.text)
        elif part.kind == "stop" and part.text == CUT_OFF:
            raise ModelTruncated(f"{provider}: the answer was cut off by the token limit")
    return "".join(text)


def parse_arguments(text: str) -> dict[str, Any]:
    """Tool-call arguments streamed as JSON text (an unparsable remainder is kept as ``{"raw": ...}``)."""
    try:
        value = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return {"raw": text}
    return value if isinstance(value, dict) else {"value": value}
