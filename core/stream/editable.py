"""What the turn builder and ``sanitize`` need of a stream: they take a ``ConversationStream`` without importing it,
so the import arrow runs one way (the stream's ``turn_builder()`` and ``sanitize()`` delegate to them)."""

from collections.abc import Iterable, Sequence
from typing import Protocol, Self, TypeVar

from pyrsistent import PVector

from turnmark.core.stream.entries import Entry
from turnmark.core.stream.payloads import Payload


class EditableStream(Protocol):
    @property
    def entries(self) -> PVector[Entry]: ...

    def insert(self, position: int, payloads: Iterable[Payload | Entry]) -> Self: ...

    def push(self, payload: Payload | Entry) -> Self: ...

    def extend(self, payloads: Iterable[Payload | Entry]) -> Self: ...

    def with_entries(self, entries: Sequence[Entry]) -> Self: ...

    def trim_trailing_empty_turn(self) -> Self: ...


S = TypeVar("S", bound=EditableStream)
