"""The stream-entry wrapper: identity (RFD 097) and request link (RFD 098) around a payload."""

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from .json_value import Json
from .payloads import Payload

IdOrigin: TypeAlias = Literal["file", "assigned", "repaired", "inserted"]
"""Where an entry's ``event_id`` came from.

``file``: read from disk. ``assigned``: the entry had none (or an empty one) and
got one at load. ``repaired``: it duplicated an earlier entry's ID and got a
new one at load. ``inserted``: the entry was added in memory. Every origin but
``file`` is transient until the stream is saved.
"""


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


NO_LAYOUT = Layout()


@dataclass(frozen=True, slots=True)
class Entry:
    """One element of ``events.json``."""

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
