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

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from turnmark.core.links.exclusion import excluded_ids
from turnmark.core.stream.turns import Turn, summary_source
from turnmark.core.summaries.fingerprint import transcript_fingerprint, turn_fingerprint
from turnmark.core.summaries.labels import ensure_first_turn_start, label_turns
from turnmark.core.summaries.packing import Candidate, Packing, estimate_tokens, pack, request_budget
from turnmark.core.summaries.sources import EXTRACTIVE, USER
from turnmark.core.summaries.transcript import MAX_MESSAGE_CHARS, turn_transcript
from turnmark.core.summaries.waiting import Waiting, waiting_in, wanting

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


def turn_is_complete(turn: Turn) -> bool:
    """The turn ended: its last event is an answer (not reasoning) and every tool call has its result."""
    return turn.facts().complete


def summary_candidates(
    stream: ConversationStream,
    *,
    last_turn_may_be_open: bool,
    upgrade: bool = False,
    max_message_chars: int = MAX_MESSAGE_CHARS,
) -> tuple[Candidate, ...]:
    """Completed turns that need a summary, with their transcripts, sizes and fingerprints.

    A turn that already has a summary is left alone, and so is the last turn while it is
    unfinished (or always, with ``last_turn_may_be_open``: a query is still adding to it).
    ``max_message_chars`` is ``conversation.turn_summary.transcript.max_message_chars``
    (see ``transcript``). ``stream`` is the one catch-up plans from (``catchup_stream``): a first
    turn without its ``turn_start`` has no ID to hold a summary and is not a candidate here.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids, summary_candidates
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build")).push(ChatResponse(ts, "message", "Fixed."))
    >>> stream = stream.start_turn(ChatRequest(ts, "Add a test")).push(ChatResponse(ts, "message", "Added."))
    >>> stream = stream.start_turn(ChatRequest(ts, "And the docs?"))
    >>> [(c.turn_id, c.index, c.tokens) for c in summary_candidates(stream, last_turn_may_be_open=False)]
    [('e000001', 0, 30), ('e000004', 1, 29)]
    >>> stream = stream.set_turn_summary("e000001", "Build fixed").unwrap()
    >>> [c.turn_id for c in summary_candidates(stream, last_turn_may_be_open=False)]
    ['e000004']
    """
    excluded = excluded_ids(stream)
    found: list[Candidate] = []
    for turn_id, turn in _wanting(stream.turns(), last_turn_may_be_open=last_turn_may_be_open, upgrade=upgrade):
        text = turn_transcript(turn, excluded, max_message_chars)
        shown = transcript_fingerprint(text, turn, excluded)
        found.append(Candidate(turn_id, turn.index, text, estimate_tokens(text), shown))
    return tuple(found)


def catchup_stream(stream: ConversationStream) -> ConversationStream:
    """The stream catch-up plans from and writes to: the conversation as read, its first turn given the
    ``turn_start`` it lacks (``ensure_first_turn_start``: a legacy conversation's turns get an ID)."""
    return ensure_first_turn_start(stream)


def wants_summaries(stream: ConversationStream, *, last_turn_may_be_open: bool, upgrade: bool = False) -> bool:
    """Whether ``summary_candidates`` finds a turn (no transcript is made)."""
    return any(_wanting(stream.turns(), last_turn_may_be_open=last_turn_may_be_open, upgrade=upgrade))


def _wanting(turns: Sequence[Turn], *, last_turn_may_be_open: bool, upgrade: bool) -> Iterator[tuple[str, Turn]]:
    """``wanting`` on the turns themselves."""
    for position in wanting(
        [turn.facts() for turn in turns], last_turn_may_be_open=last_turn_may_be_open, upgrade=upgrade
    ):
        turn_id = turns[position].id()
        assert turn_id is not None
        yield turn_id, turns[position]


def waiting(stream: ConversationStream) -> Waiting:
    """What ``summary_candidates`` would find in the conversation as read, counted (no transcript is made).

    Counted by the same rule on the same stream catch-up plans from (``catchup_stream``), so a conversation
    this calls idle is one a catch-up would find nothing in, legacy ones included.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build")).push(ChatResponse(ts, "message", "Fixed."))
    >>> waiting(stream)
    Waiting(before_last=0, last=True, extractive=0)
    >>> waiting(stream.set_turn_summary("e000001", "Build fixed").unwrap()).may_need_summaries(upgrade=True)
    False
    """
    return waiting_in([turn.facts() for turn in catchup_stream(stream).turns()])


def plan_summaries(candidates: tuple[Candidate, ...], context_window: int | None, batch_size: int) -> Packing:
    """The next request's turns, packed within the model's budget.

    ``context_window`` is the model's (``None``: 8,192 tokens); ``batch_size`` is
    ``conversation.turn_summary.generate.batch_size``. Newest turns go first.

    >>> from turnmark.core import (ChatRequest, ChatResponse, ConversationStream, plan_summaries,
    ...     sequential_ids, summary_candidates)
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build")).push(ChatResponse(ts, "message", "Fixed."))
    >>> stream = stream.start_turn(ChatRequest(ts, "Add a test")).push(ChatResponse(ts, "message", "Added."))
    >>> packing = plan_summaries(summary_candidates(stream, last_turn_may_be_open=False), None, 1)
    >>> [c.turn_id for c in packing.packed], [(c.turn_id, why) for c, why in packing.left_out], packing.budget
    (['e000004'], [('e000001', 'batch_full')], 6806)
    """
    from turnmark.core.summaries.request import PROMPT_TOKENS  # the prompt's module, only where one is planned

    return pack(candidates, request_budget(context_window, PROMPT_TOKENS, batch_size), batch_size)


def extractive_answer(
    stream: ConversationStream,
    turn_ids: tuple[str, ...],
    labels: Mapping[str, str] | None = None,
    known: Collection[str] | None = None,
) -> str:
    """What ``builtin/extractive`` answers for these turns, in the shape a model answers in.

    The offline summarizer (``core/extractive.py``): an instruction is labelled by itself, a short
    follow-up by what the turn did. ``labels`` and ``known`` (the stream's turn IDs), when given, are
    the stream's, made once for all the batches of a catch-up.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, extractive_answer, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build")).push(ChatResponse(ts, "message", "Fixed."))
    >>> stream = stream.start_turn(ChatRequest(ts, "continue"))
    >>> stream = stream.push(ChatResponse(ts, "message", "Added a test for the parser. It passes."))
    >>> extractive_answer(stream, ("e000001", "e000004"))
    '{"summaries": {"e000001": "Fix the build", "e000004": "Add a test for the parser"}}'
    """
    from turnmark.core.summaries.extractive import extractive_labels  # the labeller, only where it answers

    if labels is None or known is None:
        turns = stream.turns()
        labels = extractive_labels(turns, excluded_ids(stream)) if labels is None else labels
        known = turn_ids_of(turns) if known is None else known
    summaries = {turn_id: labels.get(turn_id, "") for turn_id in turn_ids if turn_id in known}
    return json.dumps({"summaries": summaries}, ensure_ascii=False)


def turn_ids_of(turns: Sequence[Turn]) -> frozenset[str]:
    """The IDs of the turns that have one (every turn but an implicit turn 0)."""
    return frozenset(turn_id for turn in turns if (turn_id := turn.id()) is not None)


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
    max_message_chars: int = MAX_MESSAGE_CHARS,
) -> Applied:
    """Write each summary whose turn still exists unchanged and still wants one.

    ``fingerprints`` are the candidates' (what the model was shown), taken with the same
    ``max_message_chars``: a turn that changed since keeps no summary, and ``dropped`` says why.

    >>> from turnmark.core import (ChatRequest, ChatResponse, ConversationStream, apply_summaries,
    ...     sequential_ids, summary_candidates)
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build")).push(ChatResponse(ts, "message", "Fixed."))
    >>> stream = stream.start_turn(ChatRequest(ts, "Add a test")).push(ChatResponse(ts, "message", "Added."))
    >>> shown = {c.turn_id: c.fingerprint for c in summary_candidates(stream, last_turn_may_be_open=False)}
    >>> stream = stream.push(ChatResponse(ts, "message", "And one more."))  # the last turn changes meanwhile
    >>> answer = {"e000001": "Build fixed", "e000004": "Test added"}
    >>> applied = apply_summaries(stream, answer, shown, "ollama/qwen3:4b")
    >>> applied.written, applied.dropped
    (('e000001',), {'e000004': 'the turn changed while its summary was written'})
    >>> [turn.summary() for turn in applied.stream.turns()]
    ['Build fixed', None]
    """
    turns = {turn_id: turn for turn in stream.turns() if (turn_id := turn.id()) is not None and turn_id in summaries}
    excluded = excluded_ids(stream)
    wanted: dict[str, str] = {}
    dropped: dict[str, str] = {}
    for turn_id, text in summaries.items():
        turn = turns.get(turn_id)
        if turn is None:
            dropped[turn_id] = "the turn is gone"
            continue
        if turn_fingerprint(turn, excluded, max_message_chars) != fingerprints.get(turn_id):
            dropped[turn_id] = "the turn changed while its summary was written"
            continue
        current = summary_source(turn)
        if turn.summary() is not None and not (upgrade and current == EXTRACTIVE):
            dropped[turn_id] = "the turn got a summary meanwhile" if current != USER else "the user's summary is kept"
            continue
        wanted[turn_id] = text
    labelled, failed = label_turns(stream, wanted, source)
    dropped.update({turn_id: failure.describe() for turn_id, failure in failed.items()})
    written = tuple(turn_id for turn_id in wanted if turn_id not in failed)
    return Applied(labelled, written, {turn_id: dropped[turn_id] for turn_id in summaries if turn_id in dropped})
