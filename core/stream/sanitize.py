"""``sanitize``: JP's seven ordered stream repairs (jp-format §4.8).

1. drop conversation events before the first ``chat_request`` (``turn_start`` entries kept);
2. remove tool responses whose ``id`` matches no tool request anywhere;
3. insert ``Tool call was interrupted.`` right after each tool request that no
   response anywhere answers (with the request's timestamp);
4. remove inquiry responses whose ``id`` matches no inquiry request anywhere;
5. remove inquiry requests that no response answers;
6. trim one trailing empty turn;
7. normalize the leading ``turn_start`` entries: keep only the last one before the first
   request, and insert one before the first request when there is none.

``request_id`` is neither read nor rewritten here (RFD 098); the synthetic
entries get fresh IDs and are stamped like any insertion. Every
``turn_start`` that stays keeps its ID and summary. One deliberate difference:
JP inserts another ``turn_start`` on every run into a stream that starts with
one but has no request; here such a stream is left alone.
"""

from collections.abc import Callable
from typing import TypeVar

from turnmark.core.stream.editable import S
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.payloads import (
    ChatRequest,
    InquiryRequest,
    InquiryResponse,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
    is_conversation_event,
)
from turnmark.core.stream.timestamps import EPOCH

INTERRUPTED = "Tool call was interrupted."


def _keep(stream: S, keep: Callable[[Entry], bool]) -> S:
    kept = [entry for entry in stream.entries if keep(entry)]
    return stream if len(kept) == len(stream.entries) else stream.with_entries(kept)


def drop_leading_non_user_events(stream: S) -> S:
    first_request = next((i for i, entry in enumerate(stream.entries) if isinstance(entry.payload, ChatRequest)), None)
    if first_request is None:
        return stream
    kept = [
        entry
        for i, entry in enumerate(stream.entries)
        if i >= first_request or not is_conversation_event(entry.payload) or isinstance(entry.payload, TurnStart)
    ]
    return stream.with_entries(kept) if len(kept) != len(stream.entries) else stream


_Paired = TypeVar("_Paired", ToolCallRequest, ToolCallResponse, InquiryRequest, InquiryResponse)


def _ids_of(stream: S, kind: type[_Paired]) -> set[str]:
    return {entry.payload.id for entry in stream.entries if isinstance(entry.payload, kind)}


def remove_orphaned_tool_call_responses(stream: S) -> S:
    requested = _ids_of(stream, ToolCallRequest)
    return _keep(stream, lambda e: not (isinstance(e.payload, ToolCallResponse) and e.payload.id not in requested))


def sanitize_orphaned_tool_calls(stream: S) -> S:
    """Insert a synthetic error response directly after every unanswered tool request."""
    answered = _ids_of(stream, ToolCallResponse)
    position = 0
    while position < len(stream.entries):
        payload = stream.entries[position].payload
        if isinstance(payload, ToolCallRequest) and payload.id not in answered:
            synthetic = ToolCallResponse(payload.timestamp, payload.id, INTERRUPTED, True)
            stream = stream.insert(position + 1, (synthetic,))
            position += 1
        position += 1
    return stream


def remove_orphaned_inquiry_responses(stream: S) -> S:
    asked = _ids_of(stream, InquiryRequest)
    return _keep(stream, lambda e: not (isinstance(e.payload, InquiryResponse) and e.payload.id not in asked))


def remove_orphaned_inquiry_requests(stream: S) -> S:
    answered = _ids_of(stream, InquiryResponse)
    return _keep(stream, lambda e: not (isinstance(e.payload, InquiryRequest) and e.payload.id not in answered))


def normalize_turn_starts(stream: S) -> S:
    entries = list(stream.entries)
    events = [i for i, entry in enumerate(entries) if is_conversation_event(entry.payload)]
    if all(isinstance(entries[i].payload, TurnStart) for i in events):
        return stream
    first_request = next((i for i in events if isinstance(entries[i].payload, ChatRequest)), None)
    if first_request is None:
        if isinstance(entries[events[0]].payload, TurnStart):
            return stream
        payload = entries[0].payload
        timestamp = getattr(payload, "timestamp", None) if is_conversation_event(payload) else None
        return stream.insert(0, (TurnStart(timestamp if isinstance(timestamp, str) else EPOCH),))
    leading = [i for i in events if i < first_request and isinstance(entries[i].payload, TurnStart)]
    if len(leading) > 1:
        dropped = set(leading[:-1])
        stream = stream.with_entries([entry for i, entry in enumerate(entries) if i not in dropped])
        first_request -= len(dropped)
    if leading:
        return stream
    request = stream.entries[first_request].payload
    assert isinstance(request, ChatRequest)
    return stream.insert(first_request, (TurnStart(request.timestamp),))


def _trim_trailing_empty_turn(stream: S) -> S:
    return stream.trim_trailing_empty_turn()


def sanitize(stream: S) -> S:
    """Apply the seven repairs in JP's order."""
    for repair in (
        drop_leading_non_user_events,
        remove_orphaned_tool_call_responses,
        sanitize_orphaned_tool_calls,
        remove_orphaned_inquiry_responses,
        remove_orphaned_inquiry_requests,
        _trim_trailing_empty_turn,
        normalize_turn_starts,
    ):
        stream = repair(stream)
    return stream
