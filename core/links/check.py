"""What ``check`` (and ``conversations``) report about a stream's IDs and request links, and the JSON of a
projection, as plain data.

The shapes here are the documented ``--format json`` output; the shell only
adds where the conversation lives and renders text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from turnmark.core.links.exclusion import ExclusionDiagnostic, exclude_unresolved
from turnmark.core.links.orphans import orphaned_tool_halves
from turnmark.core.links.projection import Projection, ViewEvent
from turnmark.core.links.resolution import count_links, resolve_links
from turnmark.core.stream.codec import WRAPPER_KEYS
from turnmark.core.stream.duplicate_keys import DuplicateKey
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.event_ids import well_formed
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    is_linkable,
)

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Everything ``check`` says about one stream."""

    entries: int
    events: int
    transient_ids: int
    links: JsonObject
    unresolved: tuple[JsonObject, ...]
    duplicated_ids: tuple[JsonObject, ...]
    save_blocked_by: tuple[JsonObject, ...]
    duplicated_keys: tuple[JsonObject, ...] = ()
    exclusions: tuple[JsonObject, ...] = ()
    malformed_ids: tuple[JsonObject, ...] = ()
    """IDs not in RFD 097's form (a warning: they still work, but were not written by JP or turnmark)."""
    orphaned_tool_halves: tuple[JsonObject, ...] = ()
    """Tool calls with no result and results with no call, as ``repair`` finds them."""
    odd_fields: tuple[JsonObject, ...] = ()
    """Wrapper fields read by RFD 097/098's letter rather than as written (``odd_fields``)."""

    @property
    def ok(self) -> bool:
        blocking = (self.unresolved, self.save_blocked_by, self.duplicated_keys, self.orphaned_tool_halves)
        return not any(blocking) and not any(item["reading"] == "stand_in" for item in self.odd_fields)

    def to_json(self) -> JsonObject:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "events": self.events,
            "transient_ids": self.transient_ids,
            "links": self.links,
            "unresolved": list(self.unresolved),
            "duplicated_ids": list(self.duplicated_ids),
            "save_blocked_by": list(self.save_blocked_by),
            "duplicated_keys": list(self.duplicated_keys),
            "exclusions": list(self.exclusions),
            "malformed_ids": list(self.malformed_ids),
            "orphaned_tool_halves": list(self.orphaned_tool_halves),
            "odd_fields": list(self.odd_fields),
        }


ODD_READINGS: dict[str, tuple[str, str]] = {
    "stand_in": (
        "not a string, so not an ID: a transient one stands in for it, and saves keep the value as written",
        "give the entry an event_id",
    ),
    "absent": ("null reads as no request_id: the entry is unlinked", "remove the key"),
    "ignored": ("this kind never links (RFD 098): the value is ignored", "remove the key"),
    "unresolved": (
        "not an event ID, so it names no request: the entry is left out of what the model sees",
        "link it to its request, or remove the key",
    ),
}
"""Each reading of an odd wrapper field: what it means, and the fix (``turnmark repair`` offers each)."""


def odd_reading(entry: Entry, key: str) -> str | None:
    """How RFD 097/098 read the entry's odd ``key`` (an ``ODD_READINGS`` key), or ``None`` when it is not odd."""
    odd, value = entry.written(key)
    if not odd:
        return None
    if key == "event_id":
        return "stand_in"
    if value is None:
        return "absent"
    return "unresolved" if is_linkable(entry.payload) else "ignored"


def odd_fields(stream: ConversationStream) -> tuple[JsonObject, ...]:
    """Every odd wrapper field of ``stream``: where, the value as written, how it is read and the fix.

    >>> from turnmark.core import ConversationStream, sequential_ids
    >>> events = b'[{"event_id": 7, "request_id": null, "type": "turn_start", "timestamp": "2026-01-02 10:00:00.0"}]'
    >>> stream = ConversationStream.from_json(events, b"{}", new_id=sequential_ids()).unwrap()
    >>> [(item["index"], item["key"], item["value"], item["reading"]) for item in odd_fields(stream)]
    [(0, 'event_id', 7, 'stand_in'), (0, 'request_id', None, 'absent')]
    """
    found: list[JsonObject] = []
    for position, entry in enumerate(stream.entries):
        if not entry.layout.raw:
            continue
        for key in WRAPPER_KEYS:
            reading = odd_reading(entry, key)
            if reading is None:
                continue
            meaning, fix = ODD_READINGS[reading]
            found.append(
                {
                    "index": stream.file_index(position),
                    "event_id": entry.event_id,
                    "type": entry.type_tag,
                    "key": key,
                    "value": entry.written(key)[1],
                    "reading": reading,
                    "meaning": meaning,
                    "fix": fix,
                }
            )
    return tuple(found)


def _malformed_ids(stream: ConversationStream) -> tuple[JsonObject, ...]:
    """IDs not in RFD 097's form: strings a hand wrote, and ``event_id`` values that are not strings."""
    found: list[JsonObject] = []
    for position, entry in enumerate(stream.entries):
        odd, written = entry.written("event_id")
        if odd:
            found.append({"index": stream.file_index(position), "key": "event_id", "value": written})
        values = () if odd else (("event_id", entry.event_id),)
        for key, value in (*values, ("request_id", entry.request_id)):
            if value and not well_formed(value):
                found.append({"index": stream.file_index(position), "key": key, "value": value})
    return tuple(found)


def check_report(stream: ConversationStream, doubled: tuple[DuplicateKey, ...] = ()) -> CheckReport:
    """Link states, duplicated IDs, save blockers and orphaned tool halves; every ``index`` is the entry's place in
    ``events.json``.

    ``doubled`` are the keys written twice in the file (``duplicate_keys``), which also block saving.
    """
    entries = stream.entries
    at = stream.file_index
    links = resolve_links(entries, stream.duplicated_ids)
    counts = count_links(links)
    unresolved = tuple(
        {
            "index": at(link.index),
            "event_id": link.event_id,
            "type": entries[link.index].type_tag,
            "request_id": link.shown,
            "reason": link.reason,
            "target_type": link.target_type,
        }
        for link in links
        if link.state == "unresolved"
    )
    duplicated = tuple(
        {
            "event_id": identifier,
            "entries": sorted(
                [at(index) for index, entry in enumerate(entries) if entry.event_id == identifier]
                + [at(index) for index, written in stream.id_repairs if written == identifier]
            ),
        }
        for identifier in sorted(stream.duplicated_ids)
    )
    blocked = tuple(
        {"index": at(link.index), "event_id": link.event_id, "request_id": link.request_id}
        for link in stream.ambiguous_links()
    )
    return CheckReport(
        entries=len(entries),
        events=len(stream),
        transient_ids=sum(1 for entry in entries if entry.transient_id),
        links={
            "linked": counts.linked,
            "resolved": counts.resolved,
            "unlinked": counts.unlinked,
            "unlinked_answers": sum(
                1 for link in links if link.state == "unlinked" and is_linkable(entries[link.index].payload)
            ),
            "unresolved": counts.unresolved,
            "unresolved_by_reason": counts.by_reason,
        },
        unresolved=unresolved,
        duplicated_ids=duplicated,
        save_blocked_by=blocked,
        duplicated_keys=tuple({"index": key.index, "key": key.key, "path": key.path} for key in doubled),
        exclusions=tuple(
            diagnostic_json(diagnostic, at)
            for diagnostic in exclude_unresolved(entries, stream.duplicated_ids).diagnostics
        ),
        malformed_ids=_malformed_ids(stream),
        orphaned_tool_halves=tuple(
            {
                "index": at(half.position),
                "event_id": half.event_id,
                "type": half.type_tag,
                "tool_id": half.tool_id,
                "name": half.name,
                "why": half.why,
            }
            for half in orphaned_tool_halves(entries, stream.duplicated_ids)
        ),
        odd_fields=odd_fields(stream),
    )


def _payload_json(payload: Payload) -> JsonObject:
    match payload:
        case ChatRequest(content=content):
            return {"content": content}
        case ChatResponse(variant=variant, value=value):
            return {"variant": variant, variant: value}
        case ToolCallRequest(id=call_id, name=name, arguments=arguments):
            return {"id": call_id, "name": name, "arguments": arguments or {}}
        case ToolCallResponse(id=call_id, content=content, is_error=is_error):
            return {"id": call_id, "content": content, "is_error": is_error}
    return {}


def diagnostic_json(diagnostic: ExclusionDiagnostic, file_index: Callable[[int], int]) -> JsonObject:
    return {
        "request_id": diagnostic.request_id,
        "reason": diagnostic.reason,
        "excluded": [
            {
                "index": file_index(event.position),
                "event_id": event.event_id,
                "type": event.type_tag,
                "by_closure": event.by_closure,
            }
            for event in diagnostic.excluded
        ],
    }


def view_event_json(event: ViewEvent) -> JsonObject:
    run = event.summary_run
    return {
        "turn": event.turn,
        "type": event.payload.type_tag,
        "event_id": event.event_id,
        "synthetic": event.synthetic,
        "summary_of_turns": [run.from_turn, run.to_turn] if run else None,
        **_payload_json(event.payload),
    }


def projection_json(projection: Projection, file_index: Callable[[int], int]) -> JsonObject:
    """``project --format json``: the provider view's events and the exclusion diagnostics."""
    return {
        "events": [view_event_json(event) for event in projection.view.events],
        "diagnostics": [diagnostic_json(diagnostic, file_index) for diagnostic in projection.diagnostics],
    }
