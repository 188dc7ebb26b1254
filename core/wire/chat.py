"""Request bodies for the three chat APIs turnmark speaks, built from a provider view.

Pure functions: view (and a little config) in, the JSON body out. Ollama's
``/api/chat``, OpenAI-compatible ``/v1/chat/completions`` (OpenAI, llama.cpp,
OpenRouter) and Anthropic's ``/v1/messages``.
"""

import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Literal, TypeAlias

from turnmark.core.links.projection import ProviderView
from turnmark.core.stream.config import lookup
from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.wire.messages import Message, Part, Text, Thinking, ToolResult, ToolUse, provider_messages
from turnmark.core.wire.models import resolve_id

WireApi: TypeAlias = Literal["ollama", "openai", "anthropic"]
WIRE_APIS: dict[str, WireApi] = {
    "ollama": "ollama",
    "openai": "openai",
    "llamacpp": "openai",
    "openrouter": "openai",
    "anthropic": "anthropic",
}
"""The API each provider speaks (llama.cpp and OpenRouter are OpenAI-compatible)."""
DEFAULT_MAX_TOKENS = 4096
EMPTY_ERROR = "(the tool failed without output)"


def _text(message: Message) -> str:
    return "\n\n".join(part.text for part in message.parts if isinstance(part, Text))


_TOOL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _unique_tool_ids(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Tool call IDs as the APIs require them: unique in the request and ``[A-Za-z0-9_-]``.

    JP keeps provider IDs as written, and they repeat (Gemini's ``fs_modify_file_0``) or may be
    edited by hand; a repeated or malformed ID is renamed here, with its result renamed to match
    (a result always sits in the message right after its call).
    """
    seen: set[str] = set()
    renamed: list[Message] = []
    pending: dict[str, list[str]] = {}
    for message in messages:
        parts: list[Part] = []
        for part in message.parts:
            if isinstance(part, ToolUse):
                new = part.id
                if new in seen or not _TOOL_ID.fullmatch(new):
                    new = f"toolu_turnmark_{len(seen)}"
                seen.add(new)
                pending.setdefault(part.id, []).append(new)
                parts.append(replace(part, id=new))
            elif isinstance(part, ToolResult) and pending.get(part.id):
                parts.append(replace(part, id=pending[part.id].pop(0)))
            else:
                parts.append(part)
        renamed.append(replace(message, parts=tuple(parts)))
    return tuple(renamed)


def _without_trailing_space(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Anthropic refuses a final assistant message whose text ends in white space."""
    if not messages or messages[-1].role != "assistant":
        return messages
    last = messages[-1]
    parts = list(last.parts)
    final = parts[-1] if parts else None
    if isinstance(final, Text):
        parts.pop()
        parts += [Text(final.text.rstrip())] if final.text.strip() else []
    return (*messages[:-1], replace(last, parts=tuple(parts))) if parts else messages[:-1]


def anthropic_body(view: ProviderView, model: str, *, system: str | None, max_tokens: int) -> JsonObject:
    """``/v1/messages``: alternating roles, user first, results right after their calls, signed thinking only."""
    messages: list[JsonObject] = []
    prepared = _without_trailing_space(_unique_tool_ids(provider_messages(view, thinking="signed", user_first=True)))
    for message in prepared:
        content: list[JsonObject] = []
        for part in message.parts:
            if isinstance(part, Text):
                content.append({"type": "text", "text": part.text})
            elif isinstance(part, Thinking):
                if part.redacted:
                    content.append({"type": "redacted_thinking", "data": part.redacted})
                else:
                    content.append({"type": "thinking", "thinking": part.text, "signature": part.signature})
            elif isinstance(part, ToolUse):
                content.append({"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments})
            else:
                block: JsonObject = {"type": "tool_result", "tool_use_id": part.id, "content": part.content}
                if part.is_error:
                    block["is_error"] = True
                    block["content"] = part.content or EMPTY_ERROR
                content.append(block)
        messages.append({"role": message.role, "content": content})
    body: JsonObject = {"model": model, "max_tokens": max_tokens}
    if system:
        body["system"] = system
    body["messages"] = messages
    body["stream"] = True
    return body


def _user_turn(message: Message, tool_message: Callable[[ToolResult], JsonObject]) -> list[JsonObject]:
    """A user message for the chat-style APIs: each tool result as its own ``tool`` message, then the text."""
    out = [tool_message(part) for part in message.parts if isinstance(part, ToolResult)]
    text = _text(message)
    if text:
        out.append({"role": "user", "content": text})
    return out


def openai_body(view: ProviderView, model: str, *, system: str | None) -> JsonObject:
    """``/v1/chat/completions``: tool results as ``tool`` messages right after the call; reasoning is not sent."""
    messages: list[JsonObject] = [{"role": "system", "content": system}] if system else []
    for message in _unique_tool_ids(provider_messages(view, thinking="none", user_first=False)):
        if message.role == "user":
            messages += _user_turn(message, lambda r: {"role": "tool", "tool_call_id": r.id, "content": r.content})
            continue
        calls = [
            {
                "id": part.id,
                "type": "function",
                "function": {"name": part.name, "arguments": json.dumps(part.arguments, ensure_ascii=False)},
            }
            for part in message.parts
            if isinstance(part, ToolUse)
        ]
        assistant: JsonObject = {"role": "assistant", "content": _text(message) or None}
        if calls:
            assistant["tool_calls"] = calls
        messages.append(assistant)
    return {"model": model, "messages": messages, "stream": True}


def ollama_body(view: ProviderView, model: str, *, system: str | None) -> JsonObject:
    """``/api/chat``: tool results as ``tool`` messages naming the tool; reasoning goes back as ``thinking``."""
    messages: list[JsonObject] = [{"role": "system", "content": system}] if system else []
    for message in provider_messages(view, thinking="all", user_first=False):
        if message.role == "user":
            messages += _user_turn(message, lambda r: {"role": "tool", "tool_name": r.name, "content": r.content})
            continue
        assistant: JsonObject = {"role": "assistant", "content": _text(message)}
        thinking = "\n\n".join(part.text for part in message.parts if isinstance(part, Thinking) and part.text)
        if thinking:
            assistant["thinking"] = thinking
        calls = [
            {"function": {"name": part.name, "arguments": part.arguments}}
            for part in message.parts
            if isinstance(part, ToolUse)
        ]
        if calls:
            assistant["tool_calls"] = calls
        messages.append(assistant)
    return {"model": model, "messages": messages, "stream": True}


def model_name(model_id: Json) -> str | None:
    """The name part of a JP model ID (``{provider, name}`` or ``provider/name``), or an alias as written."""
    if isinstance(model_id, dict) and isinstance(model_id.get("name"), str):
        return str(model_id["name"])
    if isinstance(model_id, str) and model_id.strip():
        return model_id.split("/", 1)[1].strip() if "/" in model_id else model_id.strip()
    return None


def assistant_model_name(config: JsonObject) -> str | None:
    """The assistant model's name, through ``providers.llm.aliases`` (as written when it cannot be resolved)."""
    configured = lookup(config, "assistant.model.id")
    resolved = resolve_id(configured, lookup(config, "providers.llm.aliases"))
    return resolved.map(lambda pair: pair[1]).value_or(None) or model_name(configured)


def request_body(view: ProviderView, api: WireApi, config: JsonObject, model: str | None = None) -> JsonObject:
    """The body ``api`` would receive for this view, with the model, system prompt and limits from ``config``.

    ``query`` and ``project --provider`` both build their body here, from the effective configuration.
    """
    name = model or assistant_model_name(config) or "unset"
    prompt = lookup(config, "assistant.system_prompt")
    system = prompt if isinstance(prompt, str) and prompt.strip() else None
    if api == "anthropic":
        max_tokens = lookup(config, "assistant.model.parameters.max_tokens")
        valid = isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0
        limit = max_tokens if valid else DEFAULT_MAX_TOKENS
        return anthropic_body(view, name, system=system, max_tokens=limit)
    if api == "openai":
        return openai_body(view, name, system=system)
    return ollama_body(view, name, system=system)
