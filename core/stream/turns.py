"""Turns exactly as JP defines them (jp-format §4.2).

Walking the conversation events only: a ``turn_start`` opens a new turn only
when the current turn already holds an event, so a leading ``turn_start``
opens turn 0 and events before the first ``turn_start`` form an implicit turn
0. Global entries (config deltas, compactions, unknown entries) belong to the
turn that is current where they stand and never open one.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from turnmark.core.stream.entries import Entry
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
    is_conversation_event,
)
from turnmark.core.stream.turn_facts import SOURCE_KEY, Step, TurnFacts, steps_complete
from turnmark.core.text.summary_text import mechanical_summary


def turn_indices(entries: Sequence[Entry]) -> list[int]:
    """The turn index of every entry, in stream order (shared by turns, compaction and retain)."""
    return turn_numbers(
        (is_conversation_event(entry.payload), isinstance(entry.payload, TurnStart)) for entry in entries
    )


def turn_numbers(kinds: Iterable[tuple[bool, bool]]) -> list[int]:
    """The turn index of each entry from ``(is a conversation event, is a turn_start)``: JP's rule, one place."""
    indices: list[int] = []
    index = 0
    current_has_event = False
    for is_event, is_start in kinds:
        if is_event:
            if is_start and current_has_event:
                index += 1
            current_has_event = True
        indices.append(index)
    return indices


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn: its index and the stream positions and entries that belong to it.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build\\nIt fails on CI."))
    >>> stream = stream.push(ChatResponse(ts, "message", "Fixed."))
    >>> stream = stream.start_turn(ChatRequest(ts, "continue")).push(ChatResponse(ts, "message", "Done."))
    >>> stream = stream.set_turn_summary("e000001", "Fixed the CI build").unwrap()
    >>> for turn in stream.turns():
    ...     print(turn.index, turn.id(), turn.summary(), turn.fallback_summary(), len(turn.events()))
    0 e000001 Fixed the CI build Fix the build 3
    1 e000004 None continue 3
    """

    index: int
    positions: tuple[int, ...]
    entries: tuple[Entry, ...]
    _facts: list[TurnFacts] = field(default_factory=list, init=False, compare=False, repr=False)
    """``facts()`` once worked out (a turn is immutable)."""

    @property
    def start(self) -> Entry | None:
        """The turn's leading ``turn_start`` entry; ``None`` for an implicit turn 0."""
        for entry in self.entries:
            if is_conversation_event(entry.payload):
                return entry if isinstance(entry.payload, TurnStart) else None
        return None

    def id(self) -> str | None:
        """The ``event_id`` of the turn's ``turn_start``: the turn's identity."""
        start = self.start
        return start.event_id if start else None

    def summary(self) -> str | None:
        """The turn summary stored on the ``turn_start``, if any."""
        start = self.start
        if start is None:
            return None
        payload = start.payload
        return payload.summary if isinstance(payload, TurnStart) else None

    def events(self) -> tuple[Entry, ...]:
        """The conversation events of the turn (global entries left out)."""
        return tuple(entry for entry in self.entries if is_conversation_event(entry.payload))

    def requests(self) -> tuple[Entry, ...]:
        return tuple(entry for entry in self.entries if isinstance(entry.payload, ChatRequest))

    def fallback_summary(self) -> str | None:
        """First non-empty line of the turn's first request, on one line, at most 72 characters."""
        for entry in self.entries:
            if isinstance(entry.payload, ChatRequest):
                return mechanical_summary(entry.payload.content)
        return None

    def facts(self) -> TurnFacts:
        """The turn's facts, in one pass over its entries (once)."""
        if not self._facts:
            self._facts.append(self._worked_out())
        return self._facts[0]

    def _worked_out(self) -> TurnFacts:
        start: Entry | None = None
        requests = events = 0
        fallback: str | None = None
        steps: list[Step] = []
        for entry in self.entries:
            payload = entry.payload
            if not is_conversation_event(payload):
                continue
            if not events and isinstance(payload, TurnStart):
                start = entry
            events += 1
            tool_id = None
            if isinstance(payload, ChatRequest):
                if not requests:
                    fallback = mechanical_summary(payload.content)
                requests += 1
            elif isinstance(payload, ToolCallRequest | ToolCallResponse):
                tool_id = payload.id
            reasoning = isinstance(payload, ChatResponse) and payload.variant == "reasoning"
            steps.append((payload.type_tag, tool_id, reasoning))
        head = start.payload if start is not None else None
        summary = head.summary if isinstance(head, TurnStart) else None
        source = (head.metadata or {}).get(SOURCE_KEY) if isinstance(head, TurnStart) else None
        return TurnFacts(
            self.index,
            start.event_id if start is not None else None,
            start.transient_id if start is not None else False,
            summary,
            source if isinstance(source, str) else None,
            fallback,
            requests,
            events,
            steps_complete(steps),
        )


def mechanical_turn_summary(turn: Turn) -> str | None:
    """RFD 126's name for ``Turn.fallback_summary``: what to show until a summary is stored.

    >>> from turnmark.core import ChatRequest, ConversationStream, mechanical_turn_summary, sequential_ids
    >>> text = "\\n  Rename every   `Foo` to `Bar` in the crate, " + "then " * 20
    >>> request = ChatRequest("2026-01-02 10:00:00.0", text)
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(request)
    >>> mechanical_turn_summary(stream.turns()[0])
    'Rename every `Foo` to `Bar` in the crate, then then then then then then…'
    """
    return turn.fallback_summary()


def split_turns(entries: Sequence[Entry]) -> tuple[Turn, ...]:
    """Group a stream's entries into turns; a stream without conversation events has none."""
    if not any(is_conversation_event(entry.payload) for entry in entries):
        return ()
    turns: list[Turn] = []
    current, start = 0, 0
    members: list[Entry] = []
    for position, (entry, index) in enumerate(zip(entries, turn_indices(entries), strict=True)):
        if index != current:
            turns.append(Turn(current, tuple(range(start, position)), tuple(members)))
            current, start, members = index, position, []
        members.append(entry)
    turns.append(Turn(current, tuple(range(start, start + len(members))), tuple(members)))
    return tuple(turns)


class NamedTurn(Protocol):
    """A turn as a user names it: by its number or its ID (a ``Turn``, or the light reader's ``LightTurn``)."""

    @property
    def index(self) -> int: ...

    def id(self) -> str | None: ...


NamedTurnT = TypeVar("NamedTurnT", bound=NamedTurn)


def find_turn(turns: Sequence[NamedTurnT], wanted: str) -> NamedTurnT | None:
    """A turn as a user names it: its ``turn_start`` event_id, or its number as ``turnmark turns`` counts them.

    >>> from turnmark.core import ChatRequest, ConversationStream, find_turn, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build")).start_turn(ChatRequest(ts, "Now the tests"))
    >>> find_turn(stream.turns(), "e000003").fallback_summary(), find_turn(stream.turns(), "0").id()
    ('Now the tests', 'e000001')
    >>> find_turn(stream.turns(), "7") is None
    True
    """
    for turn in turns:
        if turn.id() == wanted:
            return turn
    if wanted.isdecimal() and wanted.isascii() and int(wanted) < len(turns):
        return turns[int(wanted)]
    return None


def summary_source(turn: Turn) -> str | None:
    """Who wrote the turn's summary, as recorded in its ``turn_start`` metadata.

    A model ID, ``user`` or ``builtin/extractive``; ``None`` when nothing is recorded.

    >>> from turnmark.core import ChatRequest, ConversationStream, label_turn, sequential_ids, summary_source
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest("2026-01-02 10:00:00.0", "Fix the build"))
    >>> summary_source(stream.turns()[0]) is None
    True
    >>> stream = label_turn(stream, "e000001", "Build fixed", "ollama/qwen3:4b").unwrap()
    >>> summary_source(stream.turns()[0])
    'ollama/qwen3:4b'
    """
    start = turn.start
    if start is None or not isinstance(start.payload, TurnStart):
        return None
    source = (start.payload.metadata or {}).get(SOURCE_KEY)
    return source if isinstance(source, str) else None
