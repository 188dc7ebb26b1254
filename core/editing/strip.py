"""``strip``: a conversation as a JP release older than RFD 097, 098 and 126 writes it.

Such a JP refuses a ``turn_start`` with keys it does not know, so a user who
ran a writing command needs the way back: every key those RFDs add is removed
(``event_id``, ``request_id``, a turn's ``summary`` and turnmark's
``summary_source`` provenance), and nothing else changes. A conversation
turnmark upgraded from the legacy format stays in the current format, which
that JP reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from turnmark.core.stream.codec import write_entry
from turnmark.core.stream.json_document import encode_document
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.payloads import TurnStart
from turnmark.core.stream.turn_facts import SOURCE_KEY
from turnmark.core.text.wording import counted

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

ADDED_KEYS = ("event_id", "request_id")


def _stripped(item: JsonObject) -> JsonObject:
    out = {key: value for key, value in item.items() if key not in ADDED_KEYS}
    if out.get("type") != "turn_start":
        return out
    out.pop("summary", None)
    metadata = out.get("metadata")
    if isinstance(metadata, dict) and SOURCE_KEY in metadata:
        rest = {key: value for key, value in metadata.items() if key != SOURCE_KEY}
        if rest:
            out["metadata"] = rest
        else:
            del out["metadata"]
    return out


def stripped_events(stream: ConversationStream) -> bytes:
    """The ``events.json`` bytes of ``stream`` without any key RFD 097, 098 or 126 adds."""
    items = [_stripped(write_entry(entry)) for entry in stream.entries]
    head = stream.legacy_head
    return encode_document([head, *items] if head is not None else items)


def stripped_counts(stream: ConversationStream) -> dict[str, int]:
    """What ``strip`` removes: stored ``event_id`` and ``request_id`` keys, and turn summaries."""
    return {
        "event_id": sum(1 for entry in stream.entries if not entry.transient_id),
        "request_id": sum(1 for entry in stream.entries if entry.request_id is not None),
        "summary": sum(1 for e in stream.entries if isinstance(e.payload, TurnStart) and e.payload.summary is not None),
    }


def stripped_text(counts: dict[str, int]) -> str:
    """``21 event_ids, 17 request_ids and 2 turn summaries`` (what is there of them).

    >>> stripped_text({"event_id": 21, "request_id": 17, "summary": 1})
    '21 event_ids, 17 request_ids and 1 turn summary'
    """
    nouns = {
        "event_id": ("event_id", None),
        "request_id": ("request_id", None),
        "summary": ("turn summary", "turn summaries"),
    }
    parts = [counted(counts[key], *nouns[key]) for key in nouns if counts.get(key)]
    return " and ".join([", ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else "".join(parts) or "nothing"
