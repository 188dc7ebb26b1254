"""``fork``: a new conversation from some or all turns of one (jp-format §4.7, plus what JP's fork lacks).

The turns kept are all of them, the first or last N, or every turn up to and
including one ("fork from here"). Kept turns keep their entries as they are:
``turn_start`` IDs and summaries, event IDs (unique per stream) and links.
Config deltas of earlier dropped turns are kept too (not those after the last
kept turn), so the fork's configuration is the one its turns were written under. Unlike JP's fork, a compaction overlay
whose turn range lies wholly inside the kept turns is kept (re-indexed); the
others are dropped and named. JP's ``sanitize`` runs last, as in JP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from turnmark.core.stream.entries import Entry
from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.stream.payloads import Compaction, ConfigDelta
from turnmark.core.stream.sanitize import sanitize
from turnmark.core.stream.turns import Turn, turn_indices

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


@dataclass(frozen=True, slots=True)
class Fork:
    stream: ConversationStream
    kept_turns: tuple[int, ...]
    dropped_overlays: tuple[str, ...]
    """The ``event_id`` of every compaction overlay left behind (its range reaches a dropped turn)."""


def kept_turns(stream: ConversationStream, *, first: int | None, last: int | None, until: int | None) -> range:
    """The turn indices a fork keeps (one contiguous range)."""
    count = len(stream.turns())
    if until is not None:
        return range(min(until + 1, count))
    if first is not None:
        return range(min(first, count))
    if last is not None:
        return range(max(count - last, 0), count)
    return range(count)


def fork_stream(stream: ConversationStream, keep: range) -> Fork:
    entries = stream.entries
    turns = turn_indices(entries)
    offset = keep.start
    end = max((position for position, turn in enumerate(turns) if turn in keep), default=-1)
    kept: list[Entry] = []
    dropped: list[str] = []
    for position, entry in enumerate(entries):
        payload = entry.payload
        if isinstance(payload, Compaction):
            if payload.from_turn in keep and payload.to_turn in keep:
                fields = {
                    **payload.fields,
                    "from_turn": payload.from_turn - offset,
                    "to_turn": payload.to_turn - offset,
                }
                kept.append(Entry(entry.event_id, Compaction(fields), entry.request_id, entry.id_origin, entry.layout))
            else:
                dropped.append(entry.event_id)
        elif (isinstance(payload, ConfigDelta) and position <= end) or turns[position] in keep:
            kept.append(entry)
    trimmed = stream.with_entries(kept)
    forked = sanitize(trimmed)
    shift = _turns_lost_in_front(trimmed, forked)
    if shift:
        forked, lost = _shifted_overlays(forked, shift)
        dropped += lost
    return Fork(forked, tuple(keep), tuple(dropped))


def _turns_lost_in_front(before: ConversationStream, after: ConversationStream) -> int:
    """How many leading turns ``sanitize`` removed (a first turn with no request, say)."""
    first = next((turn.id() for turn in after.turns() if turn.id() is not None), None)
    for turn in before.turns():
        if turn.id() == first:
            return turn.index - next(t.index for t in after.turns() if t.id() == first)
    return 0


def _shifted_overlays(stream: ConversationStream, shift: int) -> tuple[ConversationStream, list[str]]:
    kept: list[Entry] = []
    dropped: list[str] = []
    for entry in stream.entries:
        payload = entry.payload
        if isinstance(payload, Compaction):
            if payload.from_turn - shift < 0:
                dropped.append(entry.event_id)
                continue
            fields = {**payload.fields, "from_turn": payload.from_turn - shift, "to_turn": payload.to_turn - shift}
            kept.append(Entry(entry.event_id, Compaction(fields), entry.request_id, entry.id_origin, entry.layout))
        else:
            kept.append(entry)
    return stream.with_entries(kept), dropped


def cut_at(turns: tuple[Turn, ...], keep: range) -> str | None:
    """The turn a fork was cut at: the last one kept when later turns were left, else the first one kept."""
    if keep and keep.stop < len(turns):
        return turns[keep.stop - 1].id()
    if keep and keep.start > 0:
        return turns[keep.start].id()
    return None


def fork_metadata(source: Json, parent: str, cut: str | None, now: str, title: str | None = None) -> JsonObject:
    """The fork's ``metadata.json``: the source's cloned as JP clones it (``last_activated_at`` now, no
    ``expires_at``), plus its lineage (``forked_from``); ``title`` replaces the source's.

    >>> fork_metadata({"title": "Fix the build", "expires_at": "x"}, "jp-c1", "a1", "now", "Try another way")
    {'title': 'Try another way', 'last_activated_at': 'now', 'forked_from': {'conversation': 'jp-c1', 'turn': 'a1'}}
    """
    cloned = {key: value for key, value in source.items() if key != "expires_at"} if isinstance(source, dict) else {}
    if title is not None:
        cloned["title"] = title
    return {**cloned, "last_activated_at": now, "forked_from": {"conversation": parent, "turn": cut}}
