"""Orphaned tool halves: a tool call with no result in its turn, or a result with no call.

``check`` reports them and ``repair`` asks what to do with them, from this one list. A half whose
``request_id`` does not resolve is not listed: that link is the problem to decide first (it is
reported, and repaired, as a link).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from turnmark.core.links.exclusion import tool_pairs
from turnmark.core.links.resolution import unresolved_links
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.payloads import ToolCallRequest, ToolCallResponse


@dataclass(frozen=True, slots=True)
class OrphanedToolHalf:
    """One half of a tool call without its other half (``position`` in the stream as read)."""

    position: int
    event_id: str
    type_tag: str
    tool_id: str
    name: str | None
    """The tool's name (a call); ``None`` for a result, which does not carry it."""

    @property
    def why(self) -> str:
        if self.type_tag == ToolCallRequest.type_tag:
            return f"tool call '{self.tool_id}' ({self.name}) has no result in its turn"
        return f"tool result '{self.tool_id}' has no call in its turn"


def orphaned_tool_halves(entries: Sequence[Entry], duplicated_ids: frozenset[str]) -> tuple[OrphanedToolHalf, ...]:
    """Every tool call without a result and result without a call in its turn, in stream order.

    >>> from turnmark.core import ChatRequest, ConversationStream, ToolCallRequest, ToolCallResponse, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Check it"))
    >>> stream = stream.extend([ToolCallRequest(ts, "call_1", "cargo_check"),
    ...                         ToolCallResponse(ts, "call_2", "ok", False)])
    >>> [half.why for half in orphaned_tool_halves(stream.entries, stream.duplicated_ids)]
    ["tool call 'call_1' (cargo_check) has no result in its turn", "tool result 'call_2' has no call in its turn"]
    """
    partners = tool_pairs(entries)
    broken = {link.index for link in unresolved_links(entries, duplicated_ids)}
    halves: list[OrphanedToolHalf] = []
    for position, entry in enumerate(entries):
        payload = entry.payload
        if position in partners or position in broken:
            continue
        if isinstance(payload, ToolCallRequest):
            halves.append(OrphanedToolHalf(position, entry.event_id, entry.type_tag, payload.id, payload.name))
        elif isinstance(payload, ToolCallResponse):
            halves.append(OrphanedToolHalf(position, entry.event_id, entry.type_tag, payload.id, None))
    return tuple(halves)
