"""Streamed answers read as ``ChatPart`` values: server-sent events, and each API's chunks.

Lines in, parts out, as they arrive. A protocol error (an error event, a line
that is not JSON, a refusal, an answer that ends too soon) is an ``error``
part, the last one; an answer the token limit cut off has a ``stop`` part
saying ``length``.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from turnmark.core.stream.json_value import JsonObject, storable

PartKind: TypeAlias = Literal["text", "reasoning", "tool_call", "stop", "error"]
CUT_OFF = "length"


@dataclass(frozen=True, slots=True)
class ChatPart:
    """A piece of a streamed answer: ``text``, ``reasoning``, a complete ``tool_call``, ``stop`` or ``error``.

    ``stop`` carries why the answer ended, in OpenAI's words: ``length`` (``CUT_OFF``) when the token
    limit cut it off; ``error`` carries what went wrong.
    """

    kind: PartKind
    text: str = ""
    call_id: str = ""
    name: str = ""
    arguments: JsonObject = field(default_factory=dict)


def sse_data(lines: Iterable[str]) -> Iterator[tuple[str, Any] | ChatPart]:
    """Server-sent events as ``(event name, parsed data)``; ``[DONE]`` ends them, and so does an ``error``
    part for data that is not JSON.

    >>> list(sse_data(["event: ping", "data: {}", "", "data: [1]", "data: [DONE]", "data: {}"]))
    [('ping', {}), ('message', [1])]
    >>> list(sse_data(["data: {", "data: {}"]))
    [ChatPart(kind='error', text="a streamed event is not JSON: '{'", call_id='', name='', arguments={})]
    """
    event = "message"
    for line in lines:
        if line.startswith("event:"):
            event = line[len("event:") :].strip()
        elif line.startswith("data:"):
            data = line[len("data:") :].strip()
            if data == "[DONE]":
                return
            try:
                yield event, storable(json.loads(data))
            except (ValueError, RecursionError):
                yield ChatPart("error", f"a streamed event is not JSON: {data[:80]!r}")
                return
            event = "message"


def openai_parts(lines: Iterable[str], provider: str) -> Iterator[ChatPart]:
    """Chat-completions chunks: text and reasoning deltas, tool calls assembled from their indexed fragments
    (at the end, by index); errors and refusals name ``provider``.

    >>> chunks = ['data: {"choices": [{"delta": {"content": "Hi"}, "finish_reason": "length"}]}']
    >>> [(part.kind, part.text) for part in openai_parts(chunks, "openai")]
    [('stop', 'length'), ('text', 'Hi')]
    """
    calls: dict[int, dict[str, str]] = {}
    for item in sse_data(lines):
        if isinstance(item, ChatPart):
            yield item
            return
        _, data = item
        if isinstance(data, dict) and data.get("error"):
            error = data["error"]
            yield ChatPart("error", f"{provider}: {error.get('message', error) if isinstance(error, dict) else error}")
            return
        for choice in data.get("choices", []) if isinstance(data, dict) else []:
            if choice.get("finish_reason"):
                yield ChatPart("stop", str(choice["finish_reason"]))
            delta = choice.get("delta") or choice.get("message") or {}
            if delta.get("refusal"):
                yield ChatPart("error", f"{provider}: the model refused: {delta['refusal']}")
                return
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


def anthropic_parts(lines: Iterable[str]) -> Iterator[ChatPart]:
    """Messages events: text and thinking deltas, each tool call once its input JSON is complete; an answer
    without ``message_stop`` ends in an error.

    >>> events = ["event: message_delta", 'data: {"delta": {"stop_reason": "max_tokens"}}']
    >>> [(part.kind, part.text) for part in anthropic_parts(events)]
    [('stop', 'length'), ('error', 'anthropic: the answer ended before message_stop')]
    """
    blocks: dict[int, dict[str, str]] = {}
    stopped = False
    for item in sse_data(lines):
        if isinstance(item, ChatPart):
            yield item
            return
        event, data = item
        if not isinstance(data, dict):
            continue
        if event == "error" or data.get("type") == "error":
            error = data.get("error", {})
            yield ChatPart("error", f"anthropic: {error.get('message', 'error') if isinstance(error, dict) else error}")
            return
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
        yield ChatPart("error", "anthropic: the answer ended before message_stop")


def ollama_parts(lines: Iterable[str]) -> Iterator[ChatPart]:
    """``/api/chat`` NDJSON: text, thinking and tool calls (named ``{name}_{n}``); an answer that ends before
    ``done``, or a line that is not JSON, ends in an error.

    >>> lines = ['{"message": {"content": "Hi"}}', '{"done": true, "done_reason": "length"}']
    >>> [(part.kind, part.text) for part in ollama_parts(lines)]
    [('text', 'Hi'), ('stop', 'length')]
    """
    calls = 0
    done = False
    for line in lines:
        if not line.strip():
            continue
        try:
            chunk = storable(json.loads(line))
        except (ValueError, RecursionError):
            yield ChatPart("error", f"ollama sent a line that is not JSON: {line[:80]!r}")
            return
        if not isinstance(chunk, dict):
            continue
        if chunk.get("error"):
            yield ChatPart("error", f"ollama: {chunk['error']}")
            return
        done = done or chunk.get("done") is True
        if chunk.get("done") is True and chunk.get("done_reason"):
            yield ChatPart("stop", str(chunk["done_reason"]))
        message = chunk.get("message") or {}
        if message.get("thinking"):
            yield ChatPart("reasoning", str(message["thinking"]))
        if message.get("content"):
            yield ChatPart("text", str(message["content"]))
        for call in message.get("tool_calls") or []:
            function = call.get("function", {}) if isinstance(call, dict) else {}
            name = str(function.get("name", "tool"))
            arguments = function.get("arguments")
            yield ChatPart(
                "tool_call",
                call_id=f"{name}_{calls}",
                name=name,
                arguments=arguments if isinstance(arguments, dict) else {},
            )
            calls += 1
    if not done:
        yield ChatPart("error", "ollama: the answer ended before it was done")


def answer_text(parts: Iterable[ChatPart]) -> str | None:
    """The text of a structured answer; ``None`` as soon as a ``stop`` part says the token limit cut it off.

    >>> answer_text([ChatPart("text", '{"a": '), ChatPart("text", "1}"), ChatPart("stop", "stop")])
    '{"a": 1}'
    >>> answer_text([ChatPart("text", '{"a": '), ChatPart("stop", CUT_OFF)]) is None
    True
    """
    text: list[str] = []
    for part in parts:
        if part.kind == "text":
            text.append(part.text)
        elif part.kind == "stop" and part.text == CUT_OFF:
            return None
    return "".join(text)


def parse_arguments(text: str) -> JsonObject:
    """Tool-call arguments streamed as JSON text (an unparsable remainder is kept as ``{"raw": ...}``).

    >>> parse_arguments('{"path": "a.py"}'), parse_arguments('{"path": '), parse_arguments("[1]")
    ({'path': 'a.py'}, {'raw': '{"path": '}, {'value': [1]})
    """
    try:
        value = storable(json.loads(text or "{}"))
    except (ValueError, RecursionError):
        return {"raw": text}
    return value if isinstance(value, dict) else {"value": value}
