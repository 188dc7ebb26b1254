"""``retain`` and JP's turn windows (jp-format §4.5-4.6).

``retain`` keeps every config delta and unknown entry, keeps the conversation
events ``keep`` accepts, and keeps a compaction only when it ends before the
first turn that lost an event (positional ranges after it may have shifted).
A turn that loses events but keeps its ``turn_start`` had its content changed,
so its summary is cleared (RFD 126's consumer contract); whole turns kept or
dropped by the windows keep their ``turn_start`` and summary as they are.

The windows count ``turn_start`` events, not §4.2 turns: events before the
first ``turn_start`` (an implicit turn 0) are outside every window.
"""

from collections.abc import Callable
from dataclasses import replace

from .entries import Entry
from .payloads import Compaction, TurnStart, is_conversation_event
from .stream import ConversationStream
from .turns import turn_indices


def retain(stream: ConversationStream, keep: Callable[[Entry], bool]) -> ConversationStream:
    """Keep the conversation events ``keep`` accepts (global entries always, compactions per §4.5)."""
    return _retain(stream, lambda _position, entry: keep(entry))


def _retain(stream: ConversationStream, keep: Callable[[int, Entry], bool]) -> ConversationStream:
    entries = list(stream.entries)
    indices = turn_indices(entries)
    kept_events = {
        position
        for position, entry in enumerate(entries)
        if is_conversation_event(entry.payload) and keep(position, entry)
    }
    removed_turns = {
        index
        for position, (entry, index) in enumerate(zip(entries, indices, strict=True))
        if is_conversation_event(entry.payload) and position not in kept_events
    }
    if not removed_turns:
        return stream
    threshold = min(removed_turns)
    kept: list[Entry] = []
    for position, (entry, index) in enumerate(zip(entries, indices, strict=True)):
        payload = entry.payload
        if isinstance(payload, Compaction):
            if payload.to_turn < threshold:
                kept.append(entry)
        elif not is_conversation_event(payload) or position in kept_events:
            if isinstance(payload, TurnStart) and payload.summary is not None and index in removed_turns:
                kept.append(replace(entry, payload=replace(payload, summary=None)))
            else:
                kept.append(entry)
    return stream.with_entries(kept)


def _turn_start_groups(stream: ConversationStream) -> list[int]:
    """For each entry, the number of ``turn_start`` events at or before it (0 = before the first)."""
    groups: list[int] = []
    count = 0
    for entry in stream.entries:
        if isinstance(entry.payload, TurnStart):
            count += 1
        groups.append(count)
    return groups


def _turn_start_count(stream: ConversationStream) -> int:
    return sum(1 for entry in stream.entries if isinstance(entry.payload, TurnStart))


def _keep_groups(stream: ConversationStream, wanted: Callable[[int], bool]) -> ConversationStream:
    groups = _turn_start_groups(stream)
    return _retain(stream, lambda position, _entry: wanted(groups[position]))


def retain_last_turns(stream: ConversationStream, n: int) -> ConversationStream:
    """Keep the last ``n`` ``turn_start`` groups; ``n == 0`` removes every conversation event."""
    count = _turn_start_count(stream)
    if n and count <= n:
        return stream
    return _keep_groups(stream, lambda group: n > 0 and group >= count - n + 1)


def retain_first_turns(stream: ConversationStream, n: int) -> ConversationStream:
    """Keep the first ``n`` ``turn_start`` groups; ``n == 0`` removes every conversation event."""
    count = _turn_start_count(stream)
    if n and count <= n:
        return stream
    return _keep_groups(stream, lambda group: 1 <= group <= n)


def retain_first_and_last_turns(stream: ConversationStream, first: int, last: int) -> ConversationStream:
    """Keep the first ``first`` and the last ``last`` groups (nothing at all without a ``turn_start``)."""
    count = _turn_start_count(stream)
    if count > 0 and first + last >= count:
        return stream
    return _keep_groups(stream, lambda group: 1 <= group <= first or (last > 0 and group >= max(count - last + 1, 1)))
