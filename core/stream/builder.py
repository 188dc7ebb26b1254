"""The turn builder: buffered events for the current turn, validated all or nothing (jp-format §4.3)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Generic

from returns.result import Failure, Result, Success

from turnmark.core.errors import BuildErrorKind, TurnBuildError
from turnmark.core.stream.editable import S
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.payloads import (
    InquiryRequest,
    InquiryResponse,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
    is_conversation_event,
)

_ERROR_KINDS: dict[str, tuple[BuildErrorKind, BuildErrorKind]] = {
    "tool": ("orphaned_tool_call_response", "duplicate_tool_call_response"),
    "inquiry": ("orphaned_inquiry_response", "duplicate_inquiry_response"),
}


@dataclass(frozen=True, slots=True)
class TurnBuilder(Generic[S]):
    """Events added to the current turn, appended by ``build()`` only if all of them are valid.

    A ``turn_start`` given to ``add`` is dropped (a builder never opens a turn)
    and counted in ``dropped_turn_starts``.
    """

    stream: S
    buffered: tuple[Payload, ...] = ()
    dropped_turn_starts: int = 0

    def add(self, payload: Payload | Entry) -> TurnBuilder[S]:
        event = payload.payload if isinstance(payload, Entry) else payload
        if isinstance(event, TurnStart):
            return replace(self, dropped_turn_starts=self.dropped_turn_starts + 1)
        return replace(self, buffered=(*self.buffered, event))

    def _scope(self) -> list[Payload]:
        entries = self.stream.entries
        start = 0
        for index in range(len(entries) - 1, -1, -1):
            if isinstance(entries[index].payload, TurnStart):
                start = index
                break
        return [entry.payload for entry in entries[start:] if is_conversation_event(entry.payload)]

    def validate(self) -> TurnBuildError | None:
        """Count-aware and turn-scoped: each response needs an unanswered request with its ``id`` in this turn."""
        requests: Counter[tuple[str, str]] = Counter()
        responses: Counter[tuple[str, str]] = Counter()
        scope = self._scope()
        for offset, payload in enumerate([*scope, *self.buffered]):
            position = offset - len(scope)
            match payload:
                case ToolCallRequest(id=call_id):
                    requests["tool", call_id] += 1
                case InquiryRequest(id=inquiry_id):
                    requests["inquiry", inquiry_id] += 1
                case ToolCallResponse(id=call_id) | InquiryResponse(id=call_id):
                    family = "tool" if isinstance(payload, ToolCallResponse) else "inquiry"
                    key = (family, call_id)
                    if position >= 0:
                        orphaned, duplicate = _ERROR_KINDS[family]
                        if requests[key] == 0:
                            return TurnBuildError(orphaned, call_id, position)
                        if responses[key] >= requests[key]:
                            return TurnBuildError(duplicate, call_id, position)
                    responses[key] += 1
        return None

    def build(self) -> Result[S, TurnBuildError]:
        """Append the buffered events (opening a turn first if the stream has no ``turn_start`` at all)."""
        error = self.validate()
        if error is not None:
            return Failure(error)
        if not self.buffered:
            return Success(self.stream)
        stream = self.stream
        if not any(isinstance(entry.payload, TurnStart) for entry in stream.entries):
            stream = stream.push(TurnStart(_timestamp_of(self.buffered[0])))
        return Success(stream.extend(self.buffered))


def _timestamp_of(payload: Payload) -> str:
    timestamp = getattr(payload, "timestamp", None)
    return timestamp if isinstance(timestamp, str) else "1970-01-01 00:00:00.0"
