"""Request-link resolution (RFD 098): every entry is unlinked, resolved or unresolved.

A link is never repaired by position and never backfilled: an entry without a
``request_id`` is *unlinked* (legacy events, kinds that never link); one whose
``request_id`` does not bind is *unresolved*, for one of three reasons.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from turnmark.core.links.reasons import UnresolvedReason, unresolved_reason
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.json_value import Json
from turnmark.core.stream.payloads import ChatRequest, is_linkable

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

LinkState: TypeAlias = Literal["unlinked", "resolved", "unresolved"]

REASON_TEXT: dict[str, str] = {
    "missing_target": "no entry has this event_id; was the request deleted?",
    "wrong_kind": "the entry with this event_id is not a chat_request",
    "duplicated_target": "more than one entry had this event_id in the file, so the target is ambiguous",
    "not_an_id": "the value is not an event ID (IDs are non-empty strings), so it names no request",
}


@dataclass(frozen=True, slots=True)
class Link:
    """The resolution of one entry's request link.

    ``state`` is ``unlinked`` (no ``request_id``), ``resolved`` or ``unresolved``; an
    unresolved link has a ``reason``, an ``UnresolvedReason``, and ``target_type`` names
    what the ``request_id`` points at when that is not a request:

    >>> from dataclasses import replace
    >>> from typing import get_args
    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, UnresolvedReason, resolve_links
    >>> from turnmark.core import sequential_ids
    >>> get_args(UnresolvedReason)
    ('missing_target', 'wrong_kind', 'duplicated_target', 'not_an_id')
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Fix the build"))
    >>> stream = stream.push(ChatResponse(ts, "message", "Fixed."))
    >>> answer = stream.entries[2]
    >>> edited = stream.with_entries([*stream.entries[:2], replace(answer, request_id="e000001")])
    >>> link = resolve_links(edited.entries, edited.duplicated_ids)[2]
    >>> link.state, link.request_id, link.reason, link.target_type
    ('unresolved', 'e000001', 'wrong_kind', 'turn_start')
    """

    index: int
    event_id: str
    state: LinkState
    request_id: str | None = None
    reason: UnresolvedReason | None = None
    target_type: str | None = None
    written: Json = None
    """The ``request_id`` as the file has it when it is not an ID (``not_an_id``): what to show."""

    @property
    def shown(self) -> Json:
        """The ``request_id`` to show: as written when it is not an ID."""
        return self.written if self.reason == "not_an_id" else self.request_id


def _resolve(index: int, entry: Entry, kinds: dict[str, str], duplicated_ids: frozenset[str]) -> Link:
    target = entry.request_id
    if target is None or not is_linkable(entry.payload):
        return Link(index, entry.event_id, "unlinked")
    reason = unresolved_reason(target, kinds, duplicated_ids)
    if reason is None:
        return Link(index, entry.event_id, "resolved", target, None, kinds[target])
    written = entry.written("request_id")[1] if reason == "not_an_id" else None
    return Link(index, entry.event_id, "unresolved", target, reason, kinds.get(target), written)


def link_problems(stream: ConversationStream) -> tuple[int, int]:
    """How many request links are unresolved and how many event IDs more than one entry has: the counts
    ``check_report`` gives, without the rest of the report (what ``conversations`` lists).

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> link_problems(stream.start_turn(ChatRequest(ts, "Fix it")).push(ChatResponse(ts, "message", "Done.")))
    (0, 0)
    """
    links = resolve_links(stream.entries, stream.duplicated_ids)
    return sum(1 for link in links if link.state == "unresolved"), len(stream.duplicated_ids)


def resolve_links(entries: Sequence[Entry], duplicated_ids: frozenset[str]) -> tuple[Link, ...]:
    """Resolve every entry's ``request_id`` against the stream as it stands.

    A link is never guessed from position: an answer whose request was deleted by hand
    is unresolved, with the reason.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, resolve_links, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build")).push(ChatResponse(ts, "message", "Fixed."))
    >>> stream = stream.start_turn(ChatRequest(ts, "Add a test")).push(ChatResponse(ts, "message", "Added."))
    >>> edited = stream.with_entries([entry for entry in stream.entries if entry.event_id != "e000002"])
    >>> for link in resolve_links(edited.entries, edited.duplicated_ids):
    ...     print(link.index, link.event_id, link.state, link.request_id, link.reason)
    0 e000001 unlinked None None
    1 e000003 unresolved e000002 missing_target
    2 e000004 unlinked None None
    3 e000005 unlinked None None
    4 e000006 resolved e000005 None
    """
    kinds = {entry.event_id: entry.type_tag for entry in entries}
    return tuple(_resolve(index, entry, kinds, duplicated_ids) for index, entry in enumerate(entries))


def unresolved_links(entries: Sequence[Entry], duplicated_ids: frozenset[str]) -> tuple[Link, ...]:
    """Only the links that do not resolve: the projection's hot path.

    A link to the newest request seen so far (what stamping writes) resolves without a lookup;
    only the others are checked against the whole stream.
    """
    suspects: list[tuple[int, Entry]] = []
    newest_request = None
    for index, entry in enumerate(entries):
        if isinstance(entry.payload, ChatRequest):
            newest_request = entry.event_id
        target = entry.request_id
        if target is None or (target is newest_request and not duplicated_ids):
            continue
        if (target != newest_request or target in duplicated_ids) and is_linkable(entry.payload):
            suspects.append((index, entry))
    if not suspects:
        return ()
    targets = {entry.request_id for _, entry in suspects}
    kinds = {entry.event_id: entry.type_tag for entry in entries if entry.event_id in targets}
    resolved = (_resolve(index, entry, kinds, duplicated_ids) for index, entry in suspects)
    return tuple(link for link in resolved if link.state == "unresolved")


@dataclass(frozen=True, slots=True)
class LinkCounts:
    linked: int
    resolved: int
    unlinked: int
    unresolved: int
    by_reason: dict[str, int]


def count_links(links: Sequence[Link]) -> LinkCounts:
    states = Counter(link.state for link in links)
    reasons = Counter(link.reason for link in links if link.reason is not None)
    return LinkCounts(
        linked=states["resolved"] + states["unresolved"],
        resolved=states["resolved"],
        unlinked=states["unlinked"],
        unresolved=states["unresolved"],
        by_reason={reason: reasons[reason] for reason in sorted(reasons)},
    )
