"""What ``turns`` reports about each turn: its summary or fallback, who wrote it, why catch-up gave up on it.

The shape is the documented ``turns --format json`` row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.quick_init import quick_init
from turnmark.core.stream.turn_facts import TurnFacts
from turnmark.core.text.summary_text import normalize_summary

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream
    from turnmark.core.stream.turns import Turn

LabelSource = Literal["summary", "fallback"]


@quick_init
@dataclass(frozen=True, slots=True)
class TurnRow:
    """One line of ``turnmark turns``.

    ``summary`` is the stored text as written; ``label`` is what to show: the
    summary made safe for one terminal line, or the fallback when the turn has
    no (non-blank) summary.
    """

    index: int
    id: str | None
    id_transient: bool
    summary: str | None
    fallback: str | None
    requests: int
    events: int
    source: str | None = None
    """Who wrote the stored summary (a model ID, ``user`` or ``builtin/extractive``), when recorded."""
    failure: str | None = None
    """Why catch-up no longer asks for this turn's summary (its answers failed too often)."""

    @property
    def label(self) -> str | None:
        shown = normalize_summary(self.summary) if self.summary is not None else None
        return shown if shown is not None else self.fallback

    @property
    def label_source(self) -> LabelSource | None:
        if shows_summary(self.summary):
            return "summary"
        return "fallback" if self.fallback is not None else None

    def to_json(self) -> JsonObject:
        return {
            "index": self.index,
            "id": self.id,
            "id_transient": self.id_transient,
            "summary": self.summary,
            "fallback": self.fallback,
            "label": self.label,
            "label_source": self.label_source,
            "summary_source": self.source,
            "summary_failure": self.failure,
            "requests": self.requests,
            "events": self.events,
        }


def shows_summary(summary: str | None) -> bool:
    """A turn with this stored summary is labelled by it (not by its fallback)."""
    return summary is not None and normalize_summary(summary) is not None


def summarized_turns(stream: ConversationStream) -> tuple[int, int]:
    """How many turns ``stream`` has and how many of them are labelled by their summary (the ``turns`` and
    ``summarized_turns`` of ``conversations``), without making their rows.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix it")).push(ChatResponse(ts, "message", "Done."))
    >>> summarized_turns(stream), summarized_turns(stream.set_turn_summary("e000001", "Fix it").unwrap())
    ((1, 0), (1, 1))
    """
    turns = stream.turns()
    return len(turns), sum(1 for turn in turns if shows_summary(turn.summary()))


def turn_row(turn: Turn, failure: str | None = None) -> TurnRow:
    return row_of(turn.facts(), failure)


def row_of(facts: TurnFacts, failure: str | None = None) -> TurnRow:
    """A turn's row from its facts (the light reader's, or a ``Turn``'s)."""
    return TurnRow(
        facts.index,
        facts.id,
        facts.id_transient,
        facts.summary,
        facts.fallback,
        facts.requests,
        facts.events,
        facts.source,
        failure,
    )
