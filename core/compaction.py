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
from dataclasses import dataclass, replace
from typing import Literal

from .entries import Entry
from .payloads import (
    ChatRequest,
    ChatResponse,
    Compaction,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    ToolCallsPolicy,
    TurnStart,
    is_conversation_event,
)
from .timestamps import sort_key
from .turns import turn_indices

SUMMARY_REQUEST = "[Summary of previous conversation]"

PolicyKind = Literal["summary", "reasoning", "tool_calls"]


@dataclass(frozen=True, slots=True)
class SummaryRun:
    """The turns one injected summary stands for (the run it actually collapses)."""

    from_turn: int
    to_turn: int
    text: str


@dataclass(frozen=True, slots=True)
class ProjectedEntry:
    """An entry of the compacted view: a raw entry (possibly stripped) or a synthetic one."""

    entry: Entry
    turn: int
    synthetic: bool = False
    summary_run: SummaryRun | None = None


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
    if not isinstance(payload, ToolCallRequest | ToolCallResponse):
        return entry
    if policy.policy == "omit":
        return None
    if isinstance(payload, ToolCallRequest) and policy.request:
        return replace(entry, payload=replace(payload, arguments={}))
    if isinstance(payload, ToolCallResponse) and policy.response:
        outcome = "error" if payload.is_error else "success"
        content = f"[compacted] {names.get(payload.id, 'unknown')}: {outcome}"
        return replace(entry, payload=replace(payload, content=content))
    return entry


def _synthetic(run: SummaryRun, timestamp: str, turn: int) -> list[ProjectedEntry]:
    ids = (f"~summary{run.from_turn}.turn", f"~summary{run.from_turn}.request", f"~summary{run.from_turn}.answer")
    payloads: tuple[Payload, ...] = (
        TurnStart(timestamp),
        ChatRequest(timestamp, SUMMARY_REQUEST),
        ChatResponse(timestamp, "message", run.text),
    )
    return [
        ProjectedEntry(Entry(event_id, payload, None, "inserted"), turn, True, run)
        for event_id, payload in zip(ids, payloads, strict=True)
    ]


def apply_compactions(entries: Sequence[Entry]) -> list[ProjectedEntry]:
    """The compacted view of ``entries`` (overlays consumed; nothing else is removed unless a policy says so)."""
    indices = turn_indices(entries)
    compactions = [(order, e.payload) for order, e in enumerate(entries) if isinstance(e.payload, Compaction)]
    if not compactions:
        return [ProjectedEntry(entry, turn) for entry, turn in zip(entries, indices, strict=True)]
    max_turn = max(indices, default=0)
    summaries = _winners(compactions, max_turn, "summary")
    reasoning = _winners(compactions, max_turn, "reasoning")
    tools = _winners(compactions, max_turn, "tool_calls")
    runs = _summary_runs(summaries)
    names = _tool_names(entries)
    injected: set[int] = set()
    view: list[ProjectedEntry] = []
    for entry, turn in zip(entries, indices, strict=True):
        payload = entry.payload
        if isinstance(payload, Compaction):
            continue
        if not is_conversation_event(payload):
            view.append(ProjectedEntry(entry, turn))
            continue
        if summaries[turn] is not None:
            if turn in runs and turn not in injected:
                injected.add(turn)
                view.extend(_synthetic(runs[turn], getattr(payload, "timestamp", ""), turn))
            continue
        if reasoning[turn] is not None and isinstance(payload, ChatResponse) and payload.variant == "reasoning":
            continue
        policy = tools[turn]
        kept = _strip_tools(entry, policy.tool_calls, names) if policy and policy.tool_calls else entry
        if kept is not None:
            view.append(ProjectedEntry(kept, turn))
    return view
