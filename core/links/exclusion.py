"""Exclusion of unresolved-linked events (RFD 098), closed over immediate tool pairs.

Runs on the raw stream, before compaction projection. An event whose
``request_id`` does not resolve is left out of what the model sees; when
either half of a ``tool_call_request``/``tool_call_response`` pair is left
out, so is the other, so the view never holds half a tool call. Pairs match
by payload ``id`` within a turn, first unanswered request first, so a reused
ID pairs count by count. ``turn_start`` and ``chat_request`` are never
excluded; inquiry events need no closure (no provider ever sees them). Raw
history is not touched: the result names positions to leave out.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from turnmark.core.links.reasons import UnresolvedReason
from turnmark.core.links.resolution import unresolved_links
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.json_value import Json
from turnmark.core.stream.payloads import (
    ChatRequest,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
    is_conversation_event,
)
from turnmark.core.stream.turns import turn_indices

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

_NEVER_EXCLUDED = (TurnStart, ChatRequest)


@dataclass(frozen=True, slots=True)
class ExcludedEvent:
    """One event left out; ``by_closure`` when only its tool-pair partner's link was unresolved."""

    position: int
    event_id: str
    type_tag: str
    by_closure: bool = False


@dataclass(frozen=True, slots=True)
class ExclusionDiagnostic:
    """The events left out because of one unresolved ``request_id``, and why it does not resolve.

    ``excluded`` lists each event left out: its position in the stream, ``event_id``,
    ``type_tag``, and ``by_closure`` when only the other half of its tool call was unresolved.

    >>> from dataclasses import replace
    >>> from turnmark.core import (ChatRequest, ConversationStream, ToolCallRequest, ToolCallResponse,
    ...     project, sequential_ids)
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Check it"))
    >>> stream = stream.extend([ToolCallRequest(ts, "call_1", "cargo_check"),
    ...                         ToolCallResponse(ts, "call_1", "ok", False)])
    >>> entries = list(stream.entries)
    >>> entries[3] = replace(entries[3], request_id="gone000")
    >>> (diagnostic,) = project(stream.with_entries(entries)).diagnostics
    >>> diagnostic.request_id, diagnostic.reason
    ('gone000', 'missing_target')
    >>> [(event.position, event.event_id, event.type_tag, event.by_closure) for event in diagnostic.excluded]
    [(2, 'e000003', 'tool_call_request', True), (3, 'e000004', 'tool_call_response', False)]
    """

    request_id: Json
    """The ``request_id`` as the entries carry it: an ID, or the value as written when it is not one."""
    reason: UnresolvedReason
    excluded: tuple[ExcludedEvent, ...]


@dataclass(frozen=True, slots=True)
class Exclusion:
    positions: frozenset[int]
    diagnostics: tuple[ExclusionDiagnostic, ...]


def tool_pairs(entries: Sequence[Entry], indices: Sequence[int] | None = None) -> dict[int, int]:
    """Each tool call's position mapped to its result's, and back: by ``id``, per turn, count-aware."""
    turns = turn_indices(entries) if indices is None else indices
    return paired_payloads([entry.payload for entry in entries], turns)


def paired_payloads(payloads: Sequence[Payload], turns: Sequence[int]) -> dict[int, int]:
    """``tool_pairs`` of the payloads of entries in ``turns``."""
    partner: dict[int, int] = {}
    pending: dict[tuple[int, str], deque[int]] = defaultdict(deque)
    for position, (payload, turn) in enumerate(zip(payloads, turns, strict=True)):
        if isinstance(payload, ToolCallRequest):
            pending[turn, payload.id].append(position)
        elif isinstance(payload, ToolCallResponse):
            waiting = pending.get((turn, payload.id))
            if waiting:
                call = waiting.popleft()
                partner[call] = position
                partner[position] = call
    return partner


def _pairs_in_turns(
    entries: Sequence[Entry], indices: Sequence[int] | None, positions: Iterable[int]
) -> dict[int, int]:
    """``tool_pairs`` for just the turns that hold ``positions`` (pairs never cross a turn)."""
    turns = turn_indices(entries) if indices is None else indices
    wanted = {turns[position] for position in positions}
    first = min(position for position, turn in enumerate(turns) if turn in wanted) if wanted else 0
    span = [position for position in range(first, len(entries)) if turns[position] in wanted]
    local = tool_pairs([entries[p] for p in span], [turns[p] for p in span])
    return {span[a]: span[b] for a, b in local.items()}


def exclude_unresolved(
    entries: Sequence[Entry], duplicated_ids: frozenset[str], indices: Sequence[int] | None = None
) -> Exclusion:
    """The positions to leave out of the provider view, and a diagnostic per unresolved ``request_id``."""
    direct: dict[int, tuple[str, UnresolvedReason]] = {}
    shown: dict[tuple[str, UnresolvedReason], Json] = {}
    for link in unresolved_links(entries, duplicated_ids):
        payload = entries[link.index].payload
        if not is_conversation_event(payload) or isinstance(payload, _NEVER_EXCLUDED):
            continue
        if link.request_id is not None and link.reason is not None:
            key = link.request_id if link.reason != "not_an_id" else repr(link.written)
            direct[link.index] = (key, link.reason)
            shown[key, link.reason] = link.shown
    if not direct:
        return Exclusion(frozenset(), ())
    partners = _pairs_in_turns(entries, indices, direct.keys())
    cause = dict(direct)
    closure: set[int] = set()
    for position, why in direct.items():
        partner = partners.get(position)
        if partner is not None and partner not in direct:
            closure.add(partner)
            cause[partner] = why
    groups: dict[tuple[str, UnresolvedReason], list[ExcludedEvent]] = {}
    for position in sorted(cause):
        entry = entries[position]
        event = ExcludedEvent(position, entry.event_id, entry.type_tag, position in closure)
        groups.setdefault(cause[position], []).append(event)
    diagnostics = tuple(ExclusionDiagnostic(shown[group], group[1], tuple(events)) for group, events in groups.items())
    return Exclusion(frozenset(cause), diagnostics)


def excluded_ids(stream: ConversationStream) -> frozenset[str]:
    """The ``event_id`` of every event RFD 098 leaves out of what a model sees (exclusion, closed over tool pairs).

    Here a hand edit pointed a tool result at a request that is not there: the result
    is left out, and so is its call (the other half of the pair):

    >>> from dataclasses import replace
    >>> from turnmark.core import (ChatRequest, ChatResponse, ConversationStream, ToolCallRequest,
    ...     ToolCallResponse, excluded_ids, sequential_ids)
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Check it"))
    >>> stream = stream.extend([ToolCallRequest(ts, "call_1", "cargo_check"),
    ...                         ToolCallResponse(ts, "call_1", "ok", False),
    ...                         ChatResponse(ts, "message", "It builds.")])
    >>> entries = list(stream.entries)
    >>> entries[3] = replace(entries[3], request_id="gone000")
    >>> sorted(excluded_ids(stream.with_entries(entries))), excluded_ids(stream)
    (['e000003', 'e000004'], frozenset())
    """
    entries = stream.entries
    positions = exclude_unresolved(entries, stream.duplicated_ids).positions
    return frozenset(entries[position].event_id for position in positions)
