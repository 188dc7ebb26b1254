"""A conversation's facts: what ``conversations`` lists, ``turns`` shows and ``summarize --all`` plans from.

Two ways to the same value: ``facts_of`` from a loaded stream (the long way) and ``light_facts`` from the
file's bytes through the light reader (``core/stream/light.py``), which decodes only what these facts need;
``tests/agreement`` holds them equal on every fixture, corpus and generated conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from turnmark.core.links.reasons import count_unresolved
from turnmark.core.stream.light import read_light
from turnmark.core.stream.turn_facts import TurnFacts
from turnmark.core.summaries.turn_rows import TurnRow, row_of, shows_summary
from turnmark.core.summaries.waiting import Waiting, waiting_in

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


@dataclass(frozen=True, slots=True)
class ConversationFacts:
    """The format, the entries' count, each turn's facts, the link problems, and the ID catch-up gives a first
    turn that has no ``turn_start`` (``None``: it has one, or there is no request before one)."""

    legacy: bool
    entries: int
    turns: tuple[TurnFacts, ...]
    unresolved_links: int
    duplicated_ids: int
    first_turn_start: str | None = None

    def catchup_turns(self) -> tuple[TurnFacts, ...]:
        """The turns as catch-up plans from them (``catchup_stream``: the first one given its ``turn_start``)."""
        if self.first_turn_start is None or not self.turns:
            return self.turns
        first = self.turns[0]
        given = replace(first, id=self.first_turn_start, id_transient=True, events=first.events + 1)
        return (given, *self.turns[1:])

    @property
    def waiting(self) -> Waiting:
        return waiting_in(self.catchup_turns())

    @property
    def summarized(self) -> tuple[int, int]:
        """How many turns there are, and how many are labelled by their summary."""
        return len(self.turns), sum(1 for turn in self.turns if shows_summary(turn.summary))

    def rows(self) -> tuple[TurnRow, ...]:
        """``turns``' rows (without failure notes: those need the transcripts, the long way)."""
        return tuple(row_of(turn) for turn in self.turns)


def facts_of(stream: ConversationStream) -> ConversationFacts:
    """The facts of a loaded stream (the long way): the first turn's ID is the one catch-up gives it
    (``catchup.catchup_stream``: ``ensure_first_turn_start``)."""
    from turnmark.core.links.resolution import link_problems  # the long way's modules, only when it is taken
    from turnmark.core.summaries.labels import ensure_first_turn_start, needs_turn_start

    unresolved, duplicated = link_problems(stream)
    first = ensure_first_turn_start(stream).turns()[0].id() if needs_turn_start(stream) else None
    turns = tuple(turn.facts() for turn in stream.turns())
    return ConversationFacts(stream.is_legacy, len(stream.entries), turns, unresolved, duplicated, first)


def light_facts(
    events: bytes, base_config: bytes | None, conversation: str = "", *, ids: bool = True
) -> ConversationFacts | None:
    """The facts of ``events.json`` (and ``base_config.json``) read lightly, or ``None`` when the file cannot be
    read (the long way says why). Without ``ids`` the turns' IDs are not settled (``read_light``): the counts,
    ``waiting`` and ``summarized`` are the same, the IDs are not.

    >>> events = b'''[{"event_id": "t1aaaaa", "type": "turn_start", "timestamp": "2026-01-02 10:00:00.0"},
    ...   {"event_id": "c1aaaaa", "type": "chat_request", "timestamp": "2026-01-02 10:00:01.0", "content": "Fix it"},
    ...   {"event_id": "m1aaaaa", "request_id": null, "type": "chat_response", "timestamp": "2026-01-02 10:00:02.0",
    ...    "message": "Done."}]'''
    >>> facts = light_facts(events, b"{}")
    >>> [(turn.id, turn.fallback, turn.complete) for turn in facts.turns], facts.waiting
    ([('t1aaaaa', 'Fix it', True)], Waiting(before_last=0, last=True, extractive=0))
    >>> light_facts(b"[{", b"{}") is None
    True
    """
    light = read_light(events, base_config, conversation, ids=ids)
    if light is None:
        return None
    unresolved = count_unresolved(light.links, light.duplicated_ids)
    return ConversationFacts(
        light.legacy, light.entries, light.turns, unresolved, len(light.duplicated_ids), light.first_turn_start
    )
