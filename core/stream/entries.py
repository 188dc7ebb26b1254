"""The stream-entry wrapper: identity (RFD 097) and request link (RFD 098) around a payload."""

from dataclasses import dataclass, field, replace
from typing import Literal, TypeAlias

from turnmark.core.stream.json_value import Json
from turnmark.core.stream.kinds import NOT_AN_ID
from turnmark.core.stream.payloads import Payload, is_linkable
from turnmark.core.stream.quick_init import quick_init

IdOrigin: TypeAlias = Literal["file", "assigned", "repaired", "inserted", "stand_in"]
"""Where an entry's ``event_id`` came from.

``file``: read from disk. ``assigned``: the entry had none (or an empty one) and
got one at load. ``repaired``: it duplicated an earlier entry's ID and got a
new one at load. ``inserted``: the entry was added in memory. ``stand_in``: the
file's ``event_id`` is not a string (RFD 097: no usable ID); a derived ID stands
in for it in memory, and saves write the value as read until ``repair`` gives
the entry its ID. Every origin but ``file`` is transient until the stream is saved.
"""


@quick_init
@dataclass(frozen=True, slots=True)
class Layout:
    """How a loaded entry was written, so an unchanged entry is written back the same way.

    ``keys`` is the entry's original key order (empty for entries made in
    memory); ``extra`` holds keys the payload kind does not define, kept
    verbatim in their place.
    """

    keys: tuple[str, ...] = field(default=(), compare=False)
    extra: tuple[tuple[str, Json], ...] = ()
    kept: frozenset[str] = field(default=frozenset(), compare=False)
    """Encoded strings read exactly as written (not canonical base64): written back as read while unchanged."""
    output: str | None = field(default=None, compare=False)
    """A tool's output as the file stored it: written back as read while the text is unchanged when it was
    not canonical base64 (the ``kept`` rule for an output, decided only if the payload changed)."""
    raw: tuple[tuple[str, Json], ...] = ()
    """Wrapper keys whose value is not read as an ID, as written (RFD 097/098's reading of odd input):
    ``event_id`` not a string; ``request_id`` null, empty, not a string, or on a kind that never links.
    Written back as read while the entry keeps the reading load made of them (``written_wrapper``)."""


NO_LAYOUT = Layout()


@quick_init
@dataclass(frozen=True, slots=True)
class Entry:
    """One element of ``events.json``: its ``event_id``, its payload and its ``request_id``.

    An entry read without an ``event_id`` gets one derived from the entry itself (the
    same on every load, and the one the next save writes); ``transient_id`` says so:

    >>> from turnmark.core import ChatRequest, ConversationStream, sequential_ids
    >>> events = b'''[
    ...   {"type": "turn_start", "timestamp": "2026-01-02 10:00:00.0"},
    ...   {"event_id": "r1aaaaa", "type": "chat_request", "timestamp": "2026-01-02 10:00:01.0", "content": "Hi"}
    ... ]'''
    >>> stream = ConversationStream.from_json(events, b"{}", new_id=sequential_ids(), conversation="jp-c17800000010")
    >>> start, request = stream.unwrap().entries
    >>> start.event_id, start.id_origin, start.transient_id
    ('vrm25nf', 'assigned', True)
    >>> request.event_id, request.transient_id, isinstance(request.payload, ChatRequest), request.payload.content
    ('r1aaaaa', False, True, 'Hi')
    """

    event_id: str
    payload: Payload
    request_id: str | None = None
    id_origin: IdOrigin = field(default="file", compare=False)
    layout: Layout = NO_LAYOUT

    @property
    def transient_id(self) -> bool:
        """True when the ``event_id`` exists only in memory so far (changes on every load until saved)."""
        return self.id_origin != "file"

    @property
    def type_tag(self) -> str:
        return self.payload.type_tag

    def written(self, key: str) -> tuple[bool, Json]:
        """``(True, value)`` when the file's ``key`` is an odd value still read as load read it."""
        for raw_key, value in self.layout.raw:
            if raw_key == key:
                return (True, value) if self._reads_as_loaded(key, value) else (False, None)
        return False, None

    def _reads_as_loaded(self, key: str, value: Json) -> bool:
        if key == "event_id":
            return self.id_origin == "stand_in"
        return self.request_id == unusable_link_reading(self.payload, value)

    def without_raw(self, key: str) -> "Entry":
        """This entry with the odd ``key`` as read dropped (a repair writes its own value, or none)."""
        kept = tuple(item for item in self.layout.raw if item[0] != key)
        origin: IdOrigin = "assigned" if key == "event_id" and self.id_origin == "stand_in" else self.id_origin
        return replace(self, layout=replace(self.layout, raw=kept), id_origin=origin)


def unusable_link_reading(payload: Payload, written: Json) -> str | None:
    """What a ``request_id`` that is not a usable link reads as (RFD 098): null, or any value on a kind that
    never links, is absent (unlinked); an empty or non-string value on an answer binds nothing."""
    if written is None or not is_linkable(payload):
        return None
    return NOT_AN_ID
