"""The provider view of a stream, and why anything is missing from it.

Order, as RFD 098 requires: resolve request links and exclude unresolved
events (closed over tool pairs) on the raw stream; then project compaction
overlays; then keep only what providers see (``chat_request``,
``chat_response``, ``tool_call_request``, ``tool_call_response``). The core
renders nothing: the diagnostics are data for the shell to show.
"""

from dataclasses import dataclass

from .compaction import ProjectedEntry, SummaryRun, apply_compactions
from .entries import Entry
from .exclusion import ExclusionDiagnostic, exclude_unresolved
from .payloads import PROVIDER_VISIBLE_TYPES, Payload
from .stream import ConversationStream


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
    events: tuple[ViewEvent, ...]


@dataclass(frozen=True, slots=True)
class Projection:
    """The provider view plus one diagnostic per unresolved request link that left events out."""

    view: ProviderView
    diagnostics: tuple[ExclusionDiagnostic, ...]


def _visible(item: ProjectedEntry) -> bool:
    return isinstance(item.entry.payload, PROVIDER_VISIBLE_TYPES)


def project(stream: ConversationStream) -> Projection:
    """What a provider would be sent for this stream, and the diagnostics to show before sending it."""
    entries = stream.entries
    exclusion = exclude_unresolved(entries, stream.duplicated_ids)
    kept: list[Entry] = [entry for position, entry in enumerate(entries) if position not in exclusion.positions]
    events = tuple(
        ViewEvent(item.entry.event_id, item.entry.payload, item.turn, item.synthetic, item.summary_run)
        for item in apply_compactions(kept)
        if _visible(item)
    )
    return Projection(ProviderView(events), exclusion.diagnostics)
