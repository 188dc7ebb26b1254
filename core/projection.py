"""The provider view of a stream, and why anything is missing from it.

Order, as RFD 098 requires: resolve request links and exclude unresolved
events (closed over tool pairs) on the raw stream; then project compaction
overlays; then keep only what providers see (``chat_request``,
``chat_response``, ``tool_call_request``, ``tool_call_response``). The core
renders nothing: the diagnostics are data for the shell to show.
"""

from dataclasses import dataclass

from .compaction import SummaryRun, apply_compactions
from .entries import Entry
from .exclusion import ExclusionDiagnostic, exclude_unresolved
from .payloads import PROVIDER_VISIBLE_TYPES, Payload
from .stream import ConversationStream
from .turns import turn_indices


@dataclass(frozen=True, slots=True)
class ViewEvent:
    """One event a provider sees. ``synthetic`` events (summary stand-ins) have ephemeral IDs."""

    event_id: str
    payload: Payload
    turn: int
    synthetic: bool = False
    summary_run: SummaryRun | None = None


@dataclass(frozen=True, slots=True)
class ProviderView:
    """The events a provider sees, in order, with their turns; ``runs`` marks the synthetic ones by position."""

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
    """The provider view plus one diagnostic per unresolved request link that left events out."""

    view: ProviderView
    diagnostics: tuple[ExclusionDiagnostic, ...]


def project(stream: ConversationStream) -> Projection:
    """What a provider would be sent for this stream, and the diagnostics to show before sending it."""
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
