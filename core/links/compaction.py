"""Compaction projection exactly as JP's code does it (jp-format §7.4-7.5).

For every turn and each policy kind (summary, reasoning, tool calls) the
covering overlay with the latest ``timestamp`` wins, ties going to the later
entry. A contiguous run of turns resolving to the same summary is replaced by
one synthetic turn (``turn_start``, ``[Summary of previous conversation]``
request, the summary as the answer), stamped with the run's first event's
time. Elsewhere reasoning is stripped and tool calls omitted or stripped
(``arguments`` emptied, output replaced by ``[compacted] <name>: success``).
Overlays are consumed; config deltas and unknown entries pass through.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from turnmark.core.stream.entries import Entry
from turnmark.core.stream.payloads import (
    CONVERSATION_EVENT_TYPES,
    ChatRequest,
    ChatResponse,
    Compaction,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    ToolCallsPolicy,
    TurnStart,
)
from turnmark.core.stream.timestamps import sort_key
from turnmark.core.stream.turns import turn_indices

SUMMARY_REQUEST = "[Summary of previous conversation]"

PolicyKind = Literal["summary", "reasoning", "tool_calls"]
_EVENT_TYPES = frozenset(CONVERSATION_EVENT_TYPES)


@dataclass(frozen=True, slots=True)
class SummaryRun:
    """The turns one injected summary stands for (the run it actually collapses)."""

    from_turn: int
    to_turn: int
    text: str


@dataclass(frozen=True, slots=True)
class CompactedView:
    """The entries after compaction, each with its turn; ``runs`` marks the synthetic summary entries.

    Raw entries are shared with the stream (a stripped one is a new entry with the same ID), so
    projecting a long conversation allocates little beyond the lists.
    """

    entries: tuple[Entry, ...]
    turns: tuple[int, ...]
    runs: dict[int, SummaryRun]


def _has(compaction: Compaction, kind: PolicyKind) -> bool:
    if kind == "summary":
        return compaction.summary is not None
    if kind == "reasoning":
        return compaction.reasoning_strip
    return compaction.tool_calls is not None


def _winners(compactions: list[tuple[int, Compaction]], max_turn: int, kind: PolicyKind) -> list[Compaction | None]:
    """Per turn, the covering compaction with that policy and the latest timestamp (ties: later in the stream)."""
    ranked = sorted(
        ((sort_key(c.timestamp), order, c) for order, c in compactions if _has(c, kind)),
        key=lambda item: (item[0], item[1]),
    )
    winners: list[Compaction | None] = [None] * (max_turn + 1)
    for _, _, compaction in ranked:
        for turn in range(compaction.from_turn, min(compaction.to_turn, max_turn) + 1):
            winners[turn] = compaction
    return winners


def _summary_identity(compaction: Compaction | None) -> tuple[str, int, int, str] | None:
    if compaction is None or compaction.summary is None:
        return None
    return compaction.summary, compaction.from_turn, compaction.to_turn, compaction.timestamp


def _summary_runs(winners: list[Compaction | None]) -> dict[int, SummaryRun]:
    """Injection turn → the run of turns that resolve to the same summary from there on."""
    runs: dict[int, SummaryRun] = {}
    start: int | None = None
    for turn in range(len(winners) + 1):
        identity = _summary_identity(winners[turn]) if turn < len(winners) else None
        previous = _summary_identity(winners[turn - 1]) if turn > 0 else None
        if start is not None and identity != previous:
            opened = winners[start]
            runs[start] = SummaryRun(start, turn - 1, opened.summary or "" if opened else "")
            start = None
        if identity is not None and identity != previous:
            start = turn
    return runs


def _tool_names(entries: Sequence[Entry]) -> dict[str, str]:
    names: dict[str, str] = {}
    for entry in entries:
        if isinstance(entry.payload, ToolCallRequest):
            names[entry.payload.id] = entry.payload.name
    return names


def _strip_tools(entry: Entry, policy: ToolCallsPolicy, names: dict[str, str]) -> Entry | None:
    payload = entry.payload
    kind = type(payload)
    if kind is not ToolCallRequest and kind is not ToolCallResponse:
        return entry
    if policy.policy == "omit":
        return None
    if isinstance(payload, ToolCallRequest) and policy.request:
        stripped: Payload = ToolCallRequest(payload.timestamp, payload.id, payload.name, {}, payload.metadata)
    elif isinstance(payload, ToolCallResponse) and policy.response:
        outcome = "error" if payload.is_error else "success"
        content = f"[compacted] {names.get(payload.id, 'unknown')}: {outcome}"
        stripped = ToolCallResponse(payload.timestamp, payload.id, content, payload.is_error, payload.metadata)
    else:
        return entry
    return Entry(entry.event_id, stripped, entry.request_id, entry.id_origin, entry.layout)


def _synthetic(run: SummaryRun, timestamp: str, stored: frozenset[str]) -> list[Entry]:
    """The stand-in turn for ``run``; its ephemeral IDs are none of the ``stored`` ones (a hand edit may have
    written anything), so a view never shows one ID twice."""
    mark = "~"
    while any(f"{mark}summary{run.from_turn}.{part}" in stored for part in ("turn", "request", "answer")):
        mark += "~"
    ids = tuple(f"{mark}summary{run.from_turn}.{part}" for part in ("turn", "request", "answer"))
    payloads: tuple[Payload, ...] = (
        TurnStart(timestamp),
        ChatRequest(timestamp, SUMMARY_REQUEST),
        ChatResponse(timestamp, "message", run.text),
    )
    return [Entry(event_id, payload, None, "inserted") for event_id, payload in zip(ids, payloads, strict=True)]


def apply_compactions(
    entries: Sequence[Entry], indices: Sequence[int] | None = None, dropped: frozenset[int] = frozenset()
) -> CompactedView:
    """The compacted view of ``entries`` (overlays consumed; nothing else is removed unless a policy says so).

    ``indices`` are the entries' turn numbers when the caller has them. ``dropped`` are positions to
    leave out (excluded events): they still count as the events of their turn, so a summary over
    them is injected all the same, and the turns overlays cover never shift.
    """
    indices = turn_indices(entries) if indices is None else indices
    compactions = [(order, e.payload) for order, e in enumerate(entries) if isinstance(e.payload, Compaction)]
    if not compactions:
        kept_positions = [position for position in range(len(entries)) if position not in dropped]
        return CompactedView(tuple(entries[p] for p in kept_positions), tuple(indices[p] for p in kept_positions), {})
    max_turn = max(indices, default=0)
    summaries = _winners(compactions, max_turn, "summary")
    reasoning = _winners(compactions, max_turn, "reasoning")
    tools = [c.tool_calls if c else None for c in _winners(compactions, max_turn, "tool_calls")]
    runs = _summary_runs(summaries)
    run_of = {turn: run for run in runs.values() for turn in range(run.from_turn, run.to_turn + 1)}
    names = _tool_names(entries) if any(policy and policy.response for policy in tools) else {}
    kept: list[Entry] = []
    turns: list[int] = []
    synthetic: dict[int, SummaryRun] = {}
    injected: set[int] = set()
    stored = frozenset(entry.event_id for entry in entries) if runs else frozenset()
    for position, (entry, turn) in enumerate(zip(entries, indices, strict=True)):
        payload = entry.payload
        kind = type(payload)
        if kind is Compaction:
            continue
        if kind not in _EVENT_TYPES:
            kept.append(entry)
            turns.append(turn)
            continue
        run = run_of.get(turn)
        if run is not None:
            if run.from_turn not in injected:
                injected.add(run.from_turn)
                for stand_in in _synthetic(run, getattr(payload, "timestamp", ""), stored):
                    synthetic[len(kept)] = run
                    kept.append(stand_in)
                    turns.append(run.from_turn)
            continue
        if position in dropped:
            continue
        if kind is ChatResponse and reasoning[turn] is not None and payload.variant == "reasoning":  # type: ignore[union-attr]
            continue
        policy = tools[turn]
        stripped = _strip_tools(entry, policy, names) if policy else entry
        if stripped is not None:
            kept.append(stripped)
            turns.append(turn)
    return CompactedView(tuple(kept), tuple(turns), synthetic)


@dataclass(frozen=True, slots=True)
class TurnOverlay:
    """What the winning compaction overlays do to one turn: the summary run it is part of, stripped reasoning,
    the tool-call policy."""

    run: SummaryRun | None
    reasoning_stripped: bool
    tool_calls: ToolCallsPolicy | None


def turn_overlays(entries: Sequence[Entry], indices: Sequence[int] | None = None) -> dict[int, TurnOverlay]:
    """Per turn an overlay covers, what the model is sent of it instead (the same winners ``apply_compactions`` picks).

    >>> from turnmark.core import ChatRequest, ChatResponse, Compaction, ConversationStream, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Where are locks kept?")).push(ChatResponse(ts, "message", "Here."))
    >>> stream = stream.push(Compaction.new(ts, 0, 0, summary="Locks are kept here.", reasoning_strip=True))
    >>> turn_overlays(stream.entries)
    {0: TurnOverlay(run=SummaryRun(from_turn=0, to_turn=0, text='Locks are kept here.'), reasoning_stripped=True, \
tool_calls=None)}
    """
    indices = turn_indices(entries) if indices is None else indices
    compactions = [(order, e.payload) for order, e in enumerate(entries) if isinstance(e.payload, Compaction)]
    if not compactions:
        return {}
    max_turn = max(indices, default=0)
    runs = _summary_runs(_winners(compactions, max_turn, "summary"))
    run_of = {turn: run for run in runs.values() for turn in range(run.from_turn, run.to_turn + 1)}
    reasoning = _winners(compactions, max_turn, "reasoning")
    tools = _winners(compactions, max_turn, "tool_calls")
    overlays = {
        turn: TurnOverlay(run_of.get(turn), reasoning[turn] is not None, tool.tool_calls if tool else None)
        for turn, tool in enumerate(tools)
    }
    return {turn: overlay for turn, overlay in overlays.items() if overlay != TurnOverlay(None, False, None)}
