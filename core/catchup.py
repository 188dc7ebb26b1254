"""Catch-up (RFD 126): which turns need a summary, the request for them, and writing the answers back.

Only completed turns with no summary are candidates (``upgrade`` also takes
turns labelled by ``builtin/extractive`` once a real model is configured); a
summary set by the user is never replaced. Results are written by turn ID
after checking each turn's fingerprint against the one the model was shown:
a turn that is gone or changed meanwhile keeps no summary and is retried on
the next run. Every written summary records who wrote it in the
``turn_start``'s ``metadata`` (``summary_source``: a model ID, ``user`` or
``builtin/extractive``).
"""

import json
from dataclasses import dataclass, replace

from returns.result import Failure, Result, Success

from .extractive import extractive_summary
from .fingerprint import fingerprint
from .models import EXTRACTIVE
from .packing import Candidate, Packing, estimate_tokens, pack, request_budget
from .payloads import ChatRequest, ChatResponse, ToolCallRequest, ToolCallResponse, TurnStart, is_conversation_event
from .stream import ConversationStream, TurnSummaryError
from .summary_request import PROMPT_TOKENS
from .transcript import excluded_ids, transcript
from .turns import Turn

SOURCE_KEY = "summary_source"
USER = "user"


def summary_source(turn: Turn) -> str | None:
    """Who wrote the turn's summary, as recorded in its ``turn_start`` metadata."""
    start = turn.start
    if start is None or not isinstance(start.payload, TurnStart):
        return None
    source = (start.payload.metadata or {}).get(SOURCE_KEY)
    return source if isinstance(source, str) else None


def turn_is_complete(turn: Turn) -> bool:
    """The turn ended: its last event is an answer (not reasoning) and every tool call has its result."""
    pending: dict[str, int] = {}
    last = None
    for entry in turn.events():
        payload = entry.payload
        if isinstance(payload, ToolCallRequest):
            pending[payload.id] = pending.get(payload.id, 0) + 1
        elif isinstance(payload, ToolCallResponse) and pending.get(payload.id):
            pending[payload.id] -= 1
        if not isinstance(payload, TurnStart):
            last = payload
    answered = isinstance(last, ChatResponse) and last.variant != "reasoning"
    return answered and not any(pending.values())


def needs_turn_start(stream: ConversationStream) -> bool:
    """The first turn has requests but no ``turn_start`` to hold its summary (older conversations)."""
    turns = stream.turns()
    return bool(turns) and turns[0].start is None and bool(turns[0].requests())


def prepare(stream: ConversationStream) -> ConversationStream:
    """Give the first turn the ``turn_start`` it lacks, so every turn can be labelled.

    The ``turn_start`` is JP's (``normalize_turn_starts``: the time of the first
    request), placed before the first conversation event rather than before the
    first request, so that events preceding the request stay in turn 0 and no
    turn index (nor any compaction overlay's turn range) moves. Its ID is
    derived (not drawn), so every preparation of the same file gives the same turn ID.
    """
    if not needs_turn_start(stream):
        return stream
    entries = stream.entries
    first_event = next(i for i, entry in enumerate(entries) if is_conversation_event(entry.payload))
    request = next(entry.payload for entry in entries if isinstance(entry.payload, ChatRequest))
    inserted = stream.insert(first_event, (TurnStart(request.timestamp),))
    return inserted.with_derived_id(first_event)


def candidates(
    stream: ConversationStream, *, last_turn_may_be_open: bool, upgrade: bool = False
) -> tuple[Candidate, ...]:
    """Completed turns that need a summary, with their transcripts, sizes and fingerprints."""
    turns = stream.turns()
    excluded = excluded_ids(stream)
    found: list[Candidate] = []
    for position, turn in enumerate(turns):
        turn_id = turn.id()
        if turn_id is None or not turn.requests():
            continue
        if position == len(turns) - 1 and (last_turn_may_be_open or not turn_is_complete(turn)):
            continue
        stored, source = turn.summary(), summary_source(turn)
        if stored is not None and not (upgrade and source == EXTRACTIVE):
            continue
        text = transcript(turn, excluded)
        found.append(Candidate(turn_id, turn.index, text, estimate_tokens(text), fingerprint(turn, excluded)))
    return tuple(found)


def plan(candidates: tuple[Candidate, ...], context_window: int | None, batch_size: int) -> Packing:
    """The next request's turns, packed within the model's budget."""
    return pack(candidates, request_budget(context_window, PROMPT_TOKENS, batch_size), batch_size)


def extractive_answer(stream: ConversationStream, turn_ids: tuple[str, ...]) -> str:
    """What ``builtin/extractive`` answers for these turns, in the shape a model answers in."""
    by_id = {turn.id(): turn for turn in stream.turns()}
    excluded = excluded_ids(stream)
    summaries = {
        turn_id: extractive_summary(by_id[turn_id], excluded) or "" for turn_id in turn_ids if turn_id in by_id
    }
    return json.dumps({"summaries": summaries}, ensure_ascii=False)


def label(
    stream: ConversationStream, turn_id: str, text: str, source: str
) -> Result[ConversationStream, TurnSummaryError]:
    """Store a summary and who wrote it."""
    stored = stream.set_turn_summary(turn_id, text)
    if isinstance(stored, Failure):
        return stored
    return Success(_with_source(stored.unwrap(), turn_id, source))


def unlabel(stream: ConversationStream, turn_id: str) -> Result[ConversationStream, TurnSummaryError]:
    """Remove a summary and its provenance."""
    return stream.clear_turn_summary(turn_id).map(lambda cleared: _with_source(cleared, turn_id, None))


def _with_source(stream: ConversationStream, turn_id: str, source: str | None) -> ConversationStream:
    position = stream.find(turn_id)
    assert position is not None
    entry = stream.entries[position]
    payload = entry.payload
    assert isinstance(payload, TurnStart)
    metadata = {key: value for key, value in (payload.metadata or {}).items() if key != SOURCE_KEY}
    if source is not None:
        metadata[SOURCE_KEY] = source
    if metadata == (payload.metadata or {}):
        return stream
    updated = replace(payload, metadata=metadata or None)
    return replace(stream, entries=stream.entries.set(position, replace(entry, payload=updated)))


@dataclass(frozen=True, slots=True)
class Applied:
    """The stream with the summaries written, and why any result was not written."""

    stream: ConversationStream
    written: tuple[str, ...]
    dropped: dict[str, str]


def apply_summaries(
    stream: ConversationStream,
    summaries: dict[str, str],
    fingerprints: dict[str, str],
    source: str,
    *,
    upgrade: bool = False,
) -> Applied:
    """Write each summary whose turn still exists unchanged and still wants one."""
    turns = {turn.id(): turn for turn in stream.turns() if turn.id() is not None}
    excluded = excluded_ids(stream)
    written: list[str] = []
    dropped: dict[str, str] = {}
    for turn_id, text in summaries.items():
        turn = turns.get(turn_id)
        if turn is None:
            dropped[turn_id] = "the turn is gone"
            continue
        if fingerprint(turn, excluded) != fingerprints.get(turn_id):
            dropped[turn_id] = "the turn changed while its summary was written"
            continue
        current = summary_source(turn)
        if turn.summary() is not None and not (upgrade and current == EXTRACTIVE):
            dropped[turn_id] = "the turn got a summary meanwhile" if current != USER else "the user's summary is kept"
            continue
        labelled = label(stream, turn_id, text, source)
        if isinstance(labelled, Failure):
            dropped[turn_id] = labelled.failure().describe()
            continue
        stream = labelled.unwrap()
        written.append(turn_id)
    return Applied(stream, tuple(written), dropped)
