"""The provider view of a stream, and why anything is missing from it.

Order, as RFD 098 requires: resolve request links and exclude unresolved
events (closed over tool pairs) on the raw stream; then project compaction
overlays; then keep only what providers see (``chat_request``,
``chat_response``, ``tool_call_request``, ``tool_call_response``). The core
renders nothing: the diagnostics are data for the shell to show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from turnmark.core.links.compaction import SummaryRun, apply_compactions
from turnmark.core.links.exclusion import ExclusionDiagnostic, exclude_unresolved
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.payloads import PROVIDER_VISIBLE_TYPES, Payload
from turnmark.core.stream.turns import turn_indices

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


@dataclass(frozen=True, slots=True)
class ViewEvent:
    """One event a provider sees. ``synthetic`` events (summary stand-ins) have ephemeral IDs.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, project, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Fix the build"))
    >>> stream = stream.extend([ChatResponse(ts, "reasoning", "Hmm."), ChatResponse(ts, "message", "Fixed.")])
    >>> event = project(stream).view.events[-1]
    >>> event.turn, event.event_id, event.payload.message, event.synthetic
    (0, 'e000004', 'Fixed.', False)
    """

    event_id: str
    payload: Payload
    turn: int
    synthetic: bool = False
    summary_run: SummaryRun | None = None


@dataclass(frozen=True, slots=True)
class ProviderView:
    """The events a provider sees, in order, with their turns; ``runs`` marks the synthetic ones by position.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, project, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Fix the build"))
    >>> view = project(stream.push(ChatResponse(ts, "message", "Fixed."))).view
    >>> [entry.type_tag for entry in view.entries], view.turns, view.runs
    (['chat_request', 'chat_response'], (0, 0), {})
    """

    entries: tuple[Entry, ...]
    turns: tuple[int, ...]
    runs: dict[int, SummaryRun]

    @property
    def events(self) -> tuple[ViewEvent, ...]:
        return tuple(
            ViewEvent(entry.event_id, entry.payload, turn, position in self.runs, self.runs.get(position))
            for position, (entry, turn) in enumerate(zip(self.entries, self.turns, strict=True))
        )


@dataclass(frozen=True, slots=True)
class Projection:
    """The provider view plus one diagnostic per unresolved request link that left events out.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, project, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Fix the build"))
    >>> projection = project(stream.push(ChatResponse(ts, "message", "Fixed.")))
    >>> len(projection.view.entries), projection.diagnostics
    (2, ())
    """

    view: ProviderView
    diagnostics: tuple[ExclusionDiagnostic, ...]


def project(stream: ConversationStream) -> Projection:
    """What a provider would be sent for this stream, and the diagnostics to show before sending it.

    Events whose request link does not resolve are left out first (with the other half
    of a tool call), then compaction overlays apply, then only requests, answers and
    tool calls remain. Here a hand edit deleted the first turn's request:

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, project, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build")).push(ChatResponse(ts, "message", "Fixed."))
    >>> stream = stream.start_turn(ChatRequest(ts, "Add a test")).push(ChatResponse(ts, "message", "Added."))
    >>> edited = stream.with_entries([entry for entry in stream.entries if entry.event_id != "e000002"])
    >>> projection = project(edited)
    >>> [(event.turn, event.payload.type_tag, event.event_id) for event in projection.view.events]
    [(1, 'chat_request', 'e000005'), (1, 'chat_response', 'e000006')]
    >>> [(d.request_id, d.reason, [e.event_id for e in d.excluded]) for d in projection.diagnostics]
    [('e000002', 'missing_target', ['e000003'])]
    """
    entries = stream.entries
    indices = turn_indices(entries)
    exclusion = exclude_unresolved(entries, stream.duplicated_ids, indices)
    compacted = apply_compactions(entries, indices, exclusion.positions)
    visible = [i for i, entry in enumerate(compacted.entries) if isinstance(entry.payload, PROVIDER_VISIBLE_TYPES)]
    view = ProviderView(
        tuple(compacted.entries[i] for i in visible),
        tuple(compacted.turns[i] for i in visible),
        {new: compacted.runs[old] for new, old in enumerate(visible) if old in compacted.runs},
    )
    return Projection(view, exclusion.diagnostics)
