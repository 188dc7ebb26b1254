"""The kinds of JP's entries as reading a file needs them: the seven conversation events, the answers that link
to a request (RFD 098), and how an entry's wrapper IDs read (RFD 097/098's letter).

Nothing here builds an entry (``payloads`` holds the kinds, ``codec`` reads them), so the light reader reads a
file without loading either; ``tests/core/stream/test_kinds.py`` holds these tags to the payloads' own.
"""

from typing import cast

import msgspec

from turnmark.core.stream.json_value import Json

EVENT_TAGS = (
    "turn_start",
    "chat_request",
    "chat_response",
    "tool_call_request",
    "tool_call_response",
    "inquiry_request",
    "inquiry_response",
)
"""The conversation events, the kinds that make up turns (jp-format §4.2)."""
REQUEST_TAG = "chat_request"
"""The kind an answer's ``request_id`` must name."""
LINKABLE_TAGS = frozenset(
    ("chat_response", "tool_call_request", "tool_call_response", "inquiry_request", "inquiry_response")
)
"""The answering kinds, which carry a request link (RFD 098)."""

NOT_AN_ID = ""
"""The ``request_id`` of a linkable entry whose file value is present but binds nothing (empty, or not a
string): no entry ever has this ``event_id``, so the link is unresolved (``not_an_id``)."""

RawIds = tuple[tuple[str, Json], ...]


def wrapper_ids(written_id: object, request_id: object, tag: str) -> tuple[str | None, str | None, RawIds]:
    """An entry's written ``event_id`` and ``request_id`` (``msgspec.UNSET``: absent) as RFD 097/098 read them,
    and the odd values as written (``Layout.raw``); the full reader and the light reader both read them so.

    A missing or empty ``event_id`` is assigned at load (``None`` here); one that is not a string is odd: a
    derived ID stands in for it. A ``request_id`` that is null, or on a kind that never links, reads as
    absent; an empty or non-string one on an answer binds nothing (``NOT_AN_ID``). Nothing is refused.
    """
    raw: RawIds = ()
    identifier = written_id if isinstance(written_id, str) and written_id else None
    if not isinstance(written_id, str) and written_id is not msgspec.UNSET:
        raw = (("event_id", cast(Json, written_id)),)
    if request_id is msgspec.UNSET:
        return identifier, None, raw
    if tag in LINKABLE_TAGS and isinstance(request_id, str) and request_id:
        return identifier, request_id, raw
    reading = NOT_AN_ID if tag in LINKABLE_TAGS and request_id is not None else None
    return identifier, reading, (*raw, ("request_id", cast(Json, request_id)))
