"""One line that says what an event is: what ``project`` lists, what ``show`` says of a tool call, and
the comment after each file name in ``edit -i``'s plan.

A request, answer or reasoning is its first non-empty line; a tool call is its name and its telling
argument (a path, a pattern, a command: the first of ``TELLING_KEYS`` it has); a tool result is its
status and size (``ok, 2.1 KiB`` / ``error: …``) with the call it answers; a config delta its keys;
a compaction its range and what it does. Every line is sanitized (``one_line``); cutting it to a
width is the caller's choice.
"""

import json
from collections.abc import Mapping

from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    Compaction,
    ConfigDelta,
    InquiryRequest,
    InquiryResponse,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
    Unknown,
)
from turnmark.core.text.summary_text import one_line, truncate
from turnmark.core.text.wording import byte_size, turn_range

TELLING_KEYS = (
    "path",
    "file_path",
    "file",
    "filename",
    "command",
    "cmd",
    "query",
    "pattern",
    "url",
    "package",
    "prefix",
)
"""The arguments that say what a tool call was about, in the order they are looked for."""
LINE_SCAN = 240
"""At most this many characters of a line are read for its preview (a minified document is one line)."""
ERROR_CHARS = 48
CONFIG_DEPTH = 3


def first_line(text: str) -> str:
    """The first line with something visible in it, on one clean line (at most ``LINE_SCAN`` characters read).

    >>> first_line("\\n  \\n# Fix the \\x1b[31mbuild\\x1b[0m\\nmore")
    '# Fix the build'
    """
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = one_line(text[start : min(end, start + LINE_SCAN)])
        if line:
            return line
        start = end + 1
    return ""


def compact_json(value: Json) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def telling_argument(arguments: JsonObject | None) -> str | None:
    """The argument that says what a call was about, on one line; ``None`` when no argument is a string.

    >>> telling_argument({"recursive": True, "path": "src/lib.rs"}), telling_argument({"n": 1})
    ('src/lib.rs', None)
    """
    arguments = arguments or {}
    values = [arguments[key] for key in TELLING_KEYS if isinstance(arguments.get(key), str)]
    values = values or [value for value in arguments.values() if isinstance(value, str)]
    return one_line(str(values[0])[:LINE_SCAN]) if values else None


def tool_call_line(name: str, arguments: JsonObject | None) -> str:
    """``fs_read_file src/lib.rs``; the arguments as compact JSON when none tells.

    >>> tool_call_line("fs_read_file", {"path": "src/lib.rs"}), tool_call_line("count", {"n": 1})
    ('fs_read_file src/lib.rs', 'count {"n": 1}')
    """
    target = telling_argument(arguments)
    shown = target if target is not None else (one_line(compact_json(arguments)[:LINE_SCAN]) if arguments else None)
    return " ".join(part for part in (one_line(name), shown) if part)


def result_status(result: ToolCallResponse) -> str:
    """``ok, 2.1 KiB`` or ``error: <its first line>``.

    >>> ts = "2026-01-02 10:00:00.0"
    >>> result_status(ToolCallResponse(ts, "c1", "x" * 2150, False))
    'ok, 2.1 KiB'
    >>> result_status(ToolCallResponse(ts, "c1", "\\nNo such file: src/x.rs\\n", True))
    'error: No such file: src/x.rs'
    """
    if not result.is_error:
        return f"ok, {byte_size(utf8_length(result.content))}"
    line = first_line(result.content)
    return f"error: {truncate(line, ERROR_CHARS)}" if line else f"error, {byte_size(len(result.content))}"


def utf8_length(text: str) -> int:
    """The length of ``text`` in UTF-8, without encoding an ASCII text."""
    return len(text) if text.isascii() else len(text.encode("utf-8", errors="surrogatepass"))


def config_keys(delta: Json) -> list[str]:
    """The dotted keys a config delta sets, at most ``CONFIG_DEPTH`` deep.

    >>> config_keys({"assistant": {"model": {"id": {"provider": "x", "name": "y"}}}, "style": {"code": 1}})
    ['assistant.model.id', 'style.code']
    """

    def keys(value: Json, prefix: str, depth: int) -> list[str]:
        if not isinstance(value, dict) or not value or depth == 0:
            return [prefix] if prefix else []
        return [
            key
            for name, inner in value.items()
            for key in keys(inner, f"{prefix}.{name}" if prefix else name, depth - 1)
        ]

    return keys(delta, "", CONFIG_DEPTH)


def compaction_line(overlay: Compaction) -> str:
    """``turns 0-1, reasoning stripped, summary: The user asked …``."""
    parts = [turn_range(overlay.from_turn, overlay.to_turn)]
    if overlay.reasoning_strip:
        parts.append("reasoning stripped")
    policy = overlay.tool_calls
    if policy is not None and policy.policy == "omit":
        parts.append("tool calls omitted")
    elif policy is not None and policy.stripped:
        parts.append(f"tool call {policy.stripped} stripped")
    if overlay.summary is not None:
        parts.append(f"summary: {first_line(overlay.summary)}")
    return ", ".join(parts)


def provider_preview(payload: Payload) -> tuple[str, str]:
    """What ``project`` lists of an event the model is sent: its kind and its text (the whole arguments of a
    tool call, as the model gets them)."""
    if isinstance(payload, ChatRequest):
        return "request", payload.content
    if isinstance(payload, ChatResponse):
        value = payload.value if isinstance(payload.value, str) else compact_json(payload.value)
        return payload.variant, value
    if isinstance(payload, ToolCallRequest):
        return "tool_call", f"{payload.name} {json.dumps(payload.arguments or {}, ensure_ascii=False)}"
    if isinstance(payload, ToolCallResponse):
        return ("tool_error" if payload.is_error else "tool_result"), payload.content
    return payload.type_tag, ""


def event_line(payload: Payload, calls: Mapping[str, str]) -> str:
    """One line that says what the event is; ``calls`` are the lines of the stream's tool calls by their ID
    (a result names its call).

    >>> ts = "2026-01-02 10:00:00.0"
    >>> call = ToolCallRequest(ts, "c1", "fs_read_file", {"path": "src/lib.rs"})
    >>> event_line(ChatRequest(ts, "\\nFix the build\\nplease"), {}), event_line(call, {})
    ('Fix the build', 'fs_read_file src/lib.rs')
    >>> event_line(ToolCallResponse(ts, "c1", "fn main() {}", False), {"c1": event_line(call, {})})
    'ok, 12 B · fs_read_file src/lib.rs'
    """
    match payload:
        case ChatRequest(content=content):
            return first_line(content)
        case ChatResponse(value=str(text)):
            return first_line(text)
        case ChatResponse(value=value):
            return one_line(compact_json(value))
        case ToolCallRequest(name=name, arguments=arguments):
            return tool_call_line(name, arguments)
        case ToolCallResponse(id=call_id):
            call = calls.get(call_id)
            status = result_status(payload)
            return f"{status} · {call}" if call else status
        case InquiryRequest(question=question):
            asked = question.get("text")
            return first_line(asked) if isinstance(asked, str) else one_line(compact_json(question))
        case InquiryResponse(answer=answer):
            return one_line(compact_json(answer))
        case ConfigDelta(delta=delta):
            keys = config_keys(delta)
            return "sets " + ", ".join(keys) if keys else "no change"
        case Compaction():
            return compaction_line(payload)
        case TurnStart(summary=summary):
            return first_line(summary or "")
        case Unknown():
            return one_line(payload.type_tag)
    return ""
