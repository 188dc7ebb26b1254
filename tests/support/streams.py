"""Small builders for core tests: payloads with readable defaults and streams made from them."""

from __future__ import annotations

import msgspec

from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import IdSource, sequential_ids
from turnmark.core.stream.json_value import Json
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    InquiryRequest,
    InquiryResponse,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
)

TS = "2026-01-02 10:00:00.0"


def turn(summary: str | None = None) -> TurnStart:
    return TurnStart(TS, summary)


def request(content: str = "do it") -> ChatRequest:
    return ChatRequest(TS, content)


def message(text: str = "done") -> ChatResponse:
    return ChatResponse(TS, "message", text)


def reasoning(text: str = "thinking") -> ChatResponse:
    return ChatResponse(TS, "reasoning", text)


def call(call_id: str = "call_1", name: str = "fs_read_file") -> ToolCallRequest:
    return ToolCallRequest(TS, call_id, name, {"path": "src/lib.rs"})


def result(call_id: str = "call_1", content: str = "ok", is_error: bool = False) -> ToolCallResponse:
    return ToolCallResponse(TS, call_id, content, is_error)


def ask(inquiry_id: str = "call_1.apply_changes") -> InquiryRequest:
    return InquiryRequest(
        TS,
        inquiry_id,
        {"source": "tool", "name": "fs_modify_file"},
        {"text": "Apply?", "answer_type": {"type": "boolean"}},
    )


def answer(inquiry_id: str = "call_1.apply_changes") -> InquiryResponse:
    return InquiryResponse(TS, inquiry_id, True)


def stream_of(*payloads: Payload, new_id: IdSource | None = None) -> ConversationStream:
    """A current-format stream with ``payloads`` appended through ``extend`` (so stamped)."""
    return ConversationStream.empty({}, new_id=new_id or sequential_ids()).extend(payloads)


def load(entries: list[Json], new_id: IdSource | None = None) -> ConversationStream:
    """Load raw entry objects as a current-format ``events.json``; fails the test on a load error."""
    data = msgspec.json.format(msgspec.json.encode(entries), indent=2) + b"\n"
    return ConversationStream.from_json(data, b"{}\n", new_id=new_id or sequential_ids()).unwrap()


def raw(stream: ConversationStream) -> list[Json]:
    """The entries as they would be written, decoded back to JSON values."""
    decoded: list[Json] = msgspec.json.decode(stream.to_json())
    return decoded
