"""Request-link resolution (RFD 098): every entry is unlinked, resolved or unresolved.

A link is never repaired by position and never backfilled: an entry without a
``request_id`` is *unlinked* (legacy events, kinds that never link); one whose
``request_id`` does not bind is *unresolved*, for one of three reasons.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from .entries import Entry
from .payloads import ChatRequest

LinkState: TypeAlias = Literal["unlinked", "resolved", "unresolved"]
UnresolvedReason: TypeAlias = Literal["missing_target", "wrong_kind", "duplicated_target"]

REASON_TEXT: dict[str, str] = {
    "missing_target": "no entry has this event_id; was the request deleted?",
    "wrong_kind": "the entry with this event_id is not a chat_request",
    "duplicated_target": "more than one entry had this event_id in the file, so the target is ambiguous",
}


@dataclass(frozen=True, slots=True)
class Link:
    """The resolution of one entry's request link."""

    index: int
    event_id: str
    state: LinkState
    request_id: str | None = None
    reason: UnresolvedReason | None = None
    target_type: str | None = None


def resolve_links(entries: Sequence[Entry], duplicated_ids: frozenset[str]) -> tuple[Link, ...]:
    """Resolve every entry's ``request_id`` against the stream as it stands."""
    kinds = {entry.event_id: entry.type_tag for entry in entries}
    links: list[Link] = []
    for index, entry in enumerate(entries):
        target = entry.request_id
        if target is None:
            links.append(Link(index, entry.event_id, "unlinked"))
        elif target in duplicated_ids:
            links.append(Link(index, entry.event_id, "unresolved", target, "duplicated_target", kinds.get(target)))
        elif target not in kinds:
            links.append(Link(index, entry.event_id, "unresolved", target, "missing_target"))
        elif kinds[target] != ChatRequest.type_tag:
            links.append(Link(index, entry.event_id, "unresolved", target, "wrong_kind", kinds[target]))
        else:
            links.append(Link(index, entry.event_id, "resolved", target, None, kinds[target]))
    return tuple(links)


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
