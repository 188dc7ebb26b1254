"""The provider view as role-tagged messages, in a shape every chat API accepts.

Exclusion can leave two requests next to each other or a turn without its
answer, and raw streams can hold half a tool call. This module turns the view
into alternating user/assistant messages (same-role neighbours merged, tool
results first in their user message) in which every tool call is answered in
the very next message and every tool result answers a call in the message
before it; unpaired halves are dropped, since every API rejects them.
"""

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from turnmark.core.links.projection import ProviderView
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.payloads import ChatRequest, ChatResponse, ToolCallRequest, ToolCallResponse

Role: TypeAlias = Literal["user", "assistant"]
ThinkingMode: TypeAlias = Literal["signed", "all", "none"]


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Thinking:
    """Reasoning; ``signature``/``redacted`` carry Anthropic's opaque data from the event's metadata."""

    text: str
    signature: str | None = None
    redacted: str | None = None


@dataclass(frozen=True, slots=True)
class ToolUse:
    id: str
    name: str
    arguments: JsonObject


@dataclass(frozen=True, slots=True)
class ToolResult:
    id: str
    name: str
    content: str
    is_error: bool


Part: TypeAlias = Text | Thinking | ToolUse | ToolResult


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    parts: tuple[Part, ...]


def _metadata_string(metadata: JsonObject | None, key: str) -> str | None:
    value = (metadata or {}).get(key)
    return value if isinstance(value, str) else None


def _parts(view: ProviderView, thinking: ThinkingMode) -> list[tuple[Role, Part]]:
    names: dict[str, str] = {}
    parts: list[tuple[Role, Part]] = []
    for entry in view.entries:
        payload = entry.payload
        if isinstance(payload, ChatRequest):
            parts.append(("user", Text(payload.content)))
        elif isinstance(payload, ChatResponse):
            if payload.variant == "message":
                parts.append(("assistant", Text(payload.value)))
            elif payload.variant == "data":
                parts.append(("assistant", Text(json.dumps(payload.value, ensure_ascii=False))))
            else:
                signature = _metadata_string(payload.metadata, "anthropic_thinking_signature")
                redacted = _metadata_string(payload.metadata, "anthropic_redacted_thinking")
                if thinking == "all" or (thinking == "signed" and (signature or redacted)):
                    parts.append(("assistant", Thinking(payload.value, signature, redacted)))
        elif isinstance(payload, ToolCallRequest):
            names[payload.id] = payload.name
            parts.append(("assistant", ToolUse(payload.id, payload.name, payload.arguments or {})))
        elif isinstance(payload, ToolCallResponse):
            name = names.get(payload.id, "unknown")
            parts.append(("user", ToolResult(payload.id, name, payload.content, payload.is_error)))
    return [(role, part) for role, part in parts if not (isinstance(part, Text) and not part.text.strip())]


def _group(parts: Iterable[tuple[Role, Part]]) -> list[Message]:
    messages: list[Message] = []
    for role, part in parts:
        if messages and messages[-1].role == role:
            messages[-1] = replace(messages[-1], parts=(*messages[-1].parts, part))
        else:
            messages.append(Message(role, (part,)))
    return [_results_first(message) for message in messages]


def _results_first(message: Message) -> Message:
    if message.role != "user":
        return message
    results = tuple(part for part in message.parts if isinstance(part, ToolResult))
    rest = tuple(part for part in message.parts if not isinstance(part, ToolResult))
    return replace(message, parts=results + rest)


def _paired(messages: list[Message]) -> list[tuple[Role, Part]]:
    """Every part, minus tool calls not answered in the next message and results not answering the previous one."""
    kept: list[tuple[Role, Part]] = []
    for index, message in enumerate(messages):
        following = messages[index + 1] if index + 1 < len(messages) else None
        previous = messages[index - 1] if index > 0 else None
        answered = Counter(p.id for p in following.parts if isinstance(p, ToolResult)) if following else Counter()
        asked = Counter(p.id for p in previous.parts if isinstance(p, ToolUse)) if previous else Counter()
        for part in message.parts:
            if isinstance(part, ToolUse):
                if answered[part.id] <= 0:
                    continue
                answered[part.id] -= 1
            elif isinstance(part, ToolResult):
                if message.role != "user" or asked[part.id] <= 0:
                    continue
                asked[part.id] -= 1
            kept.append((message.role, part))
    return kept


def _settle(messages: list[Message]) -> list[Message]:
    """Drop unpaired tool halves until none is left (a drop can empty a message and join its neighbours)."""
    while True:
        repaired = _group(_paired(messages))
        if repaired == messages:
            return messages
        messages = repaired


def provider_messages(view: ProviderView, *, thinking: ThinkingMode, user_first: bool) -> tuple[Message, ...]:
    """Alternating messages with complete tool pairs; ``user_first`` drops anything before the first user turn."""
    messages = _settle(_group(_parts(view, thinking)))
    while user_first and messages and messages[0].role != "user":
        messages = _settle(messages[1:])
    return tuple(messages)
