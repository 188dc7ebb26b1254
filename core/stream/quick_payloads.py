"""Payloads made from the light reader's quick structs, as ``codec.read_entry`` makes them from decoded objects.

``show`` of a file read lazily needs each entry's payload, not its layout (how it is written back): made here
from the struct the quick read already decoded, an entry is not decoded twice. Only the quick read's structs of
the event kinds are made here (``payload_of`` gives ``None`` for any other element: the caller reads it the long
way); msgspec and ``light._quick_tags`` checked them as the full reader checks its entries, so each is made
without a check. ``tests/agreement/test_light_reader.py`` holds every payload equal to the full load's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.light import (
    Element,
    _ChatRequest,
    _ChatResponse,
    _InquiryRequest,
    _InquiryResponse,
    _ToolCallRequest,
    _ToolCallResponse,
    _TurnStart,
    _variant,
)
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
from turnmark.core.stream.storage_encoding import decode_leaves, decode_string

_UNSET: Any = msgspec.UNSET
_decode = msgspec.json.decode


def _or_none(value: Any) -> Any:
    return None if value is _UNSET else value


def _decoded(value: JsonObject | Any) -> Any:
    """A value of leaves JP stores encoded (metadata, arguments), decoded; ``None`` when not written."""
    return None if value is _UNSET else decode_leaves(value, set())


def _turn_start(entry: _TurnStart) -> Payload:
    return TurnStart(entry.timestamp, _or_none(entry.summary), _decoded(entry.metadata))


def _chat_request(entry: _ChatRequest) -> Payload:
    metadata = _decoded(entry.metadata)
    return ChatRequest(entry.timestamp, entry.content, _or_none(entry.schema), _or_none(entry.author), metadata)


def _chat_response(entry: _ChatResponse) -> Payload:
    variant = _variant(entry)
    return ChatResponse(entry.timestamp, variant, _decode(getattr(entry, variant)), _decoded(entry.metadata))


def _tool_call_request(entry: _ToolCallRequest) -> Payload:
    return ToolCallRequest(entry.timestamp, entry.id, entry.name, _decoded(entry.arguments), _decoded(entry.metadata))


def _tool_call_response(entry: _ToolCallResponse) -> Payload:
    stored: str = _decode(entry.content)
    metadata = _decoded(entry.metadata)
    return ToolCallResponse.read(entry.timestamp, entry.id, stored, entry.is_error, metadata, decode=decode_string)


def _inquiry_request(entry: _InquiryRequest) -> Payload:
    return InquiryRequest(entry.timestamp, entry.id, entry.source, entry.question, _decoded(entry.metadata))


def _inquiry_response(entry: _InquiryResponse) -> Payload:
    return InquiryResponse(entry.timestamp, entry.id, _decode(entry.answer), _decoded(entry.metadata))


_MAKERS: dict[type, Callable[[Any], Payload]] = {
    _TurnStart: _turn_start,
    _ChatRequest: _chat_request,
    _ChatResponse: _chat_response,
    _ToolCallRequest: _tool_call_request,
    _ToolCallResponse: _tool_call_response,
    _InquiryRequest: _inquiry_request,
    _InquiryResponse: _inquiry_response,
}


def payload_of(element: Element) -> Payload | None:
    """The payload the full reader reads of the element, when it is a quick struct of an event kind; else
    ``None`` (a ``config_delta``, whose payload keeps its keys' order, or an element read by ``_Entry``)."""
    make = _MAKERS.get(type(element))
    return make(element) if make is not None else None
