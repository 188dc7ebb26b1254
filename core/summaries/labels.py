"""A turn's summary as stored: the first turn's ``turn_start`` that holds it, a summary set or cleared with
who wrote it (RFD 126).

Every stored summary records its author in the ``turn_start``'s ``metadata``
(``summary_source``: a model ID, ``user`` or ``builtin/extractive``); catch-up
never replaces a summary whose source is ``user``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from returns.result import Failure, Result, Success

from turnmark.core.errors import TurnSummaryError
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.payloads import ChatRequest, TurnStart, is_conversation_event
from turnmark.core.stream.turn_facts import SOURCE_KEY
from turnmark.core.text.summary_text import normalize_summary

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


def needs_turn_start(stream: ConversationStream) -> bool:
    """The first turn has requests but no ``turn_start`` to hold its summary (older conversations).

    Only the first turn is read: the entries before the first ``turn_start``.
    """
    for entry in stream.entries:
        if isinstance(entry.payload, TurnStart):
            return False
        if isinstance(entry.payload, ChatRequest):
            return True
    return False


def ensure_first_turn_start(stream: ConversationStream) -> ConversationStream:
    """Give the first turn the ``turn_start`` it lacks, so every turn can be labelled.

    The ``turn_start`` is JP's (``normalize_turn_starts``: the time of the first
    request), placed before the first conversation event rather than before the
    first request, so that events preceding the request stay in turn 0 and no
    turn index (nor any compaction overlay's turn range) moves. Its ID is
    derived (not drawn), so every preparation of the same file gives the same turn ID.

    >>> from turnmark.core import ConversationStream, ensure_first_turn_start, sequential_ids
    >>> events = b'[{"type": "chat_request", "timestamp": "2026-01-02 10:00:00.0", "content": "Hi"}]'
    >>> old = ConversationStream.from_json(events, b"{}", new_id=sequential_ids(), conversation="jp-c17800000010")
    >>> old.unwrap().turns()[0].id() is None
    True
    >>> prepared = ensure_first_turn_start(old.unwrap())
    >>> [entry.type_tag for entry in prepared.entries], prepared.turns()[0].id()
    (['turn_start', 'chat_request'], 'vrm25nf')
    """
    if not needs_turn_start(stream):
        return stream
    entries = stream.entries
    first_event = next(i for i, entry in enumerate(entries) if is_conversation_event(entry.payload))
    request = next(entry.payload for entry in entries if isinstance(entry.payload, ChatRequest))
    inserted = stream.insert(first_event, (TurnStart(request.timestamp),))
    return inserted.with_derived_id(first_event)


def label_turn(
    stream: ConversationStream, turn_id: str, text: str, source: str
) -> Result[ConversationStream, TurnSummaryError]:
    """Store a summary (normalized to one line) and who wrote it (``source``: a model ID, ``user``, ...).

    This is what ``turnmark summary set`` does (with ``source="user"``, after
    ``ensure_first_turn_start``); catch-up never replaces a summary whose source is ``user``.

    >>> from turnmark.core import ChatRequest, ConversationStream, label_turn, sequential_ids, summary_source
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest("2026-01-02 10:00:00.0", "Fix the build"))
    >>> turn = label_turn(stream, "e000001", "Fixed   the\\nbuild", "user").unwrap().turns()[0]
    >>> turn.summary(), summary_source(turn)
    ('Fixed the build', 'user')
    >>> label_turn(stream, "e000002", "Not a turn", "user").failure().describe()
    "no turn_start with event_id 'e000002'"
    """
    stored = stream.set_turn_summary(turn_id, text)
    if isinstance(stored, Failure):
        return stored
    return Success(_with_source(stored.unwrap(), turn_id, source))


def label_turns(
    stream: ConversationStream, texts: Mapping[str, str], source: str
) -> tuple[ConversationStream, dict[str, TurnSummaryError]]:
    """``label_turn`` for many turns in one pass over the stream (catch-up writes thousands at once); the
    labelled stream and the turns not labelled, with why.

    >>> from turnmark.core import ChatRequest, ConversationStream, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids()).start_turn(ChatRequest(ts, "Fix the build"))
    >>> stream = stream.start_turn(ChatRequest(ts, "Add a test"))
    >>> labelled, failed = label_turns(stream, {"e000001": "Build fixed", "e000003": " ", "e000009": "x"}, "user")
    >>> [turn.summary() for turn in labelled.turns()], {turn_id: e.reason for turn_id, e in failed.items()}
    (['Build fixed', None], {'e000003': 'blank_summary', 'e000009': 'unknown_turn'})
    >>> labelled == label_turn(stream, "e000001", "Build fixed", "user").unwrap()
    True
    """
    positions: dict[str, int] = {}
    for index, entry in enumerate(stream.entries):
        if isinstance(entry.payload, TurnStart) and entry.event_id in texts:
            positions.setdefault(entry.event_id, index)
    failed: dict[str, TurnSummaryError] = {}
    entries = stream.entries.evolver()
    for turn_id, text in texts.items():
        position = positions.get(turn_id)
        summary = normalize_summary(text)
        if position is None or summary is None:
            failed[turn_id] = TurnSummaryError("unknown_turn" if position is None else "blank_summary", turn_id)
            continue
        entry = entries[position]
        payload = entry.payload
        assert isinstance(payload, TurnStart)
        updated = replace(payload, summary=summary, metadata=_sourced(payload.metadata, source))
        if updated != payload:
            entries[position] = replace(entry, payload=updated)
    if not entries.is_dirty():
        return stream, failed
    return replace(stream, entries=entries.persistent()), failed


def unlabel_turn(stream: ConversationStream, turn_id: str) -> Result[ConversationStream, TurnSummaryError]:
    """Remove a summary and its provenance (``turnmark summary clear``).

    >>> from turnmark.core import ChatRequest, ConversationStream, label_turn, sequential_ids, unlabel_turn
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest("2026-01-02 10:00:00.0", "Fix the build"))
    >>> labelled = label_turn(stream, "e000001", "Build fixed", "user").unwrap()
    >>> cleared = unlabel_turn(labelled, "e000001").unwrap()
    >>> cleared.turns()[0].summary(), cleared.turns()[0].start.payload.metadata, cleared == stream
    (None, None, True)
    """
    return stream.clear_turn_summary(turn_id).map(lambda cleared: _with_source(cleared, turn_id, None))


def _with_source(stream: ConversationStream, turn_id: str, source: str | None) -> ConversationStream:
    position = stream.find(turn_id)
    assert position is not None
    entry = stream.entries[position]
    payload = entry.payload
    assert isinstance(payload, TurnStart)
    metadata = _sourced(payload.metadata, source)
    if metadata == payload.metadata:
        return stream
    updated = replace(payload, metadata=metadata)
    return replace(stream, entries=stream.entries.set(position, replace(entry, payload=updated)))


def _sourced(metadata: JsonObject | None, source: str | None) -> JsonObject | None:
    """A ``turn_start``'s ``metadata`` naming ``source`` as the summary's author (``None``: no author); the
    same object when nothing changes."""
    kept = {key: value for key, value in (metadata or {}).items() if key != SOURCE_KEY}
    if source is not None:
        kept[SOURCE_KEY] = source
    if kept == (metadata or {}):
        return metadata
    return kept or None
