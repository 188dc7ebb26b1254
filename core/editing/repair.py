"""Repairs for what ``check`` finds (RFD 097 ambiguity, RFD 098 Future Work's relink tool).

A plan is computed from a stream as read: the fixes that follow from the
stream alone, and the problems that need a person's decision (``repair -i``),
each with its choices, the safest first.

1. An answer whose ``request_id`` names an ID several entries carried (a copied
   request) is relinked to the copy that is a ``chat_request`` of its own turn
   before it, when exactly one such copy exists.
2. An answer whose link does not resolve (the request was deleted, or the ID
   names something that is not a request) is relinked to its turn's only
   ``chat_request`` before it; with several, or none, the user chooses:
   relink, unlink (the event becomes visible, unlinked) or delete.
3. A tool result with no call in its turn, or a call with no result, is an
   orphan (``core.links.orphans``, the list ``check`` reports): the user
   chooses to delete it (or, for a call, to answer it with the error result
   JP's ``sanitize`` writes).
4. ``backfill`` (asked for explicitly, never implied): in a turn with exactly
   one ``chat_request``, answering events with no ``request_id`` are linked to it.
5. Odd wrapper fields (``check``'s ``odd_fields``): an ``event_id`` that is not a string
   gets the ID that stands in for it (``give_id``); a ``request_id`` read as absent (null,
   or on a kind that never links) is removed (``drop_key``). An answer whose ``request_id``
   is not an ID is an unresolved link (2).

Every turn whose events change loses its summary (RFD 126 freshness).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from returns.result import Success

from turnmark.core.links.check import ODD_READINGS, odd_reading
from turnmark.core.links.orphans import orphaned_tool_halves
from turnmark.core.links.resolution import REASON_TEXT, resolve_links
from turnmark.core.stream.codec import WRAPPER_KEYS
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.json_document import json_text
from turnmark.core.stream.json_value import Json
from turnmark.core.stream.payloads import ChatRequest, ToolCallRequest, ToolCallResponse, TurnStart, is_linkable
from turnmark.core.stream.sanitize import INTERRUPTED
from turnmark.core.stream.turns import turn_indices
from turnmark.core.summaries.labels import unlabel_turn

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

FixKind = Literal["relink", "unlink", "delete", "answer_call", "backfill", "give_id", "drop_key"]


_TIDYING = ("give_id", "drop_key")
"""Fixes that change how a field is written, not what a turn holds: they keep its summary."""


@dataclass(frozen=True, slots=True)
class Fix:
    """One change to one entry (``position`` in the stream as read)."""

    kind: FixKind
    position: int
    event_id: str
    type_tag: str
    why: str
    request_id: str | None = None
    """The new ``request_id`` (relink, backfill)."""

    def what(self) -> str:
        """What changes, in a few words."""
        match self.kind:
            case "relink" | "backfill":
                return f"set request_id to {self.request_id}"
            case "unlink":
                return "remove request_id (the event becomes unlinked, and visible)"
            case "delete":
                return "delete the entry"
            case "give_id":
                return f"write event_id {self.event_id} (the ID that stands in for it)"
            case "drop_key":
                return "remove the request_id key (it is read as absent)"
            case _:
                return "answer the call with the error result JP writes for an interrupted call"


@dataclass(frozen=True, slots=True)
class Problem:
    """A problem a person must decide: the choices, the safest first."""

    position: int
    event_id: str
    type_tag: str
    why: str
    choices: tuple[Fix, ...]


@dataclass(frozen=True, slots=True)
class RepairPlan:
    fixes: tuple[Fix, ...]
    problems: tuple[Problem, ...]
    backfill_left: int = 0
    """Turns ``backfill`` left alone because they hold several requests."""


def _requests_before(entries: Sequence[Entry], turns: Sequence[int], position: int) -> list[int]:
    return [p for p in range(position) if turns[p] == turns[position] and isinstance(entries[p].payload, ChatRequest)]


def _fix(kind: FixKind, entries: Sequence[Entry], position: int, why: str, request_id: str | None = None) -> Fix:
    entry = entries[position]
    return Fix(kind, position, entry.event_id, entry.type_tag, why, request_id)


def _link_choices(entries: Sequence[Entry], position: int, targets: list[int], why: str) -> tuple[Fix, ...]:
    relinks = [_fix("relink", entries, position, why, entries[t].event_id) for t in targets]
    return (*relinks, _fix("unlink", entries, position, why), _fix("delete", entries, position, why))


def _ambiguous(stream: ConversationStream, turns: Sequence[int]) -> tuple[list[Fix], list[Problem]]:
    entries = stream.entries
    fixes: list[Fix] = []
    problems: list[Problem] = []
    repaired = dict(stream.id_repairs)
    for link in stream.ambiguous_links():
        position, duplicated = link.index, link.request_id
        copies = [p for p, e in enumerate(entries) if e.event_id == duplicated or repaired.get(p) == duplicated]
        mine = [p for p in _requests_before(entries, turns, position) if p in copies]
        why = f"request_id '{duplicated}' named an ID {len(copies)} entries carried (a copied entry)"
        if len(mine) == 1:
            fixes.append(
                _fix("relink", entries, position, why + "; one is the request of this turn", entries[mine[0]].event_id)
            )
        else:
            problems.append(
                Problem(
                    position,
                    link.event_id,
                    entries[position].type_tag,
                    why,
                    _link_choices(entries, position, mine, why),
                )
            )
    return fixes, problems


def _unresolved(stream: ConversationStream, turns: Sequence[int]) -> tuple[list[Fix], list[Problem]]:
    entries = stream.entries
    fixes: list[Fix] = []
    problems: list[Problem] = []
    for link in resolve_links(entries, stream.duplicated_ids):
        position = link.index
        payload = entries[position].payload
        if link.state != "unresolved" or link.reason == "duplicated_target" or not is_linkable(payload):
            continue
        assert link.reason is not None
        why = f"request_id {_shown(link.shown)} does not resolve ({link.reason}: {REASON_TEXT[link.reason]})"
        targets = _requests_before(entries, turns, position)
        if len(targets) == 1:
            fixes.append(
                _fix("relink", entries, position, why + "; the turn has one request", entries[targets[0]].event_id)
            )
        else:
            problems.append(
                Problem(position, link.event_id, payload.type_tag, why, _link_choices(entries, position, targets, why))
            )
    return fixes, problems


def _shown(value: Json) -> str:
    return f"'{value}'" if isinstance(value, str) and value else json_text(value)


def _odd_fields(stream: ConversationStream) -> list[Fix]:
    """The fixes of the odd wrapper fields read as absent or standing in (``odd_reading``)."""
    entries = stream.entries
    fixes: list[Fix] = []
    for position, entry in enumerate(entries):
        if not entry.layout.raw:
            continue
        for key in WRAPPER_KEYS:
            reading = odd_reading(entry, key)
            if reading in ("stand_in", "absent", "ignored"):
                why = f"{key} {json_text(entry.written(key)[1])}: {ODD_READINGS[reading][0]}"
                fixes.append(_fix("give_id" if reading == "stand_in" else "drop_key", entries, position, why))
    return fixes


def _orphans(stream: ConversationStream) -> list[Problem]:
    entries = stream.entries
    problems: list[Problem] = []
    for half in orphaned_tool_halves(entries, stream.duplicated_ids):
        choices: tuple[Fix, ...] = (_fix("delete", entries, half.position, half.why),)
        if half.type_tag == ToolCallRequest.type_tag:
            choices = (_fix("answer_call", entries, half.position, half.why), *choices)
        problems.append(Problem(half.position, half.event_id, half.type_tag, half.why, choices))
    return problems


def _backfill(entries: Sequence[Entry], turns: Sequence[int]) -> tuple[list[Fix], int]:
    fixes: list[Fix] = []
    left: set[int] = set()
    requests: dict[int, list[int]] = {}
    for position, entry in enumerate(entries):
        if isinstance(entry.payload, ChatRequest):
            requests.setdefault(turns[position], []).append(position)
    for position, entry in enumerate(entries):
        if entry.request_id is not None or not is_linkable(entry.payload):
            continue
        mine = requests.get(turns[position], [])
        if len(mine) > 1:
            left.add(turns[position])
        elif mine and mine[0] < position:
            why = "written before request links; its turn has one request (--backfill)"
            fixes.append(_fix("backfill", entries, position, why, entries[mine[0]].event_id))
    return fixes, len(left)


def plan_repairs(stream: ConversationStream, *, backfill: bool = False) -> RepairPlan:
    """What ``repair`` would do to ``stream`` (as read: positions are those of ``stream.entries``)."""
    entries = stream.entries
    turns = turn_indices(entries)
    fixes, problems = _ambiguous(stream, turns)
    more_fixes, more_problems = _unresolved(stream, turns)
    fixes += more_fixes
    problems += more_problems
    problems += _orphans(stream)
    decided = {fix.position for fix in fixes} | {problem.position for problem in problems}
    left = 0
    if backfill:
        filled, left = _backfill(entries, turns)
        fixes += [fix for fix in filled if fix.position not in decided]
        decided |= {fix.position for fix in filled}
    fixes += [fix for fix in _odd_fields(stream) if fix.kind == "give_id" or fix.position not in decided]
    return RepairPlan(
        tuple(sorted(fixes, key=lambda f: f.position)), tuple(sorted(problems, key=lambda p: p.position)), left
    )


def apply_repairs(stream: ConversationStream, fixes: Sequence[Fix]) -> ConversationStream:
    """``stream`` with ``fixes`` made, the summaries of the turns they touch cleared, and the ambiguity of every
    duplicated ID whose links were all decided lifted (so the stream saves)."""
    if not fixes:
        return stream
    entries = list(stream.entries)
    turns = turn_indices(entries)
    changed_turns = {turns[fix.position] for fix in fixes if fix.kind not in _TIDYING}
    turn_ids = [
        entry.event_id
        for position, entry in enumerate(entries)
        if isinstance(entry.payload, TurnStart) and turns[position] in changed_turns
    ]
    decided = {fix.event_id for fix in fixes}
    for fix in fixes:
        if fix.kind in ("relink", "backfill"):
            entries[fix.position] = replace(entries[fix.position], request_id=fix.request_id).without_raw("request_id")
        elif fix.kind in ("unlink", "drop_key"):
            entries[fix.position] = replace(entries[fix.position], request_id=None).without_raw("request_id")
        elif fix.kind == "give_id":
            entries[fix.position] = entries[fix.position].without_raw("event_id")
    repaired = stream.with_entries(entries)
    for fix in sorted(fixes, key=lambda f: f.position, reverse=True):
        if fix.kind == "delete":
            kept = [entry for position, entry in enumerate(repaired.entries) if position != fix.position]
            repaired = repaired.with_entries(kept)
        elif fix.kind == "answer_call":
            call = repaired.entries[fix.position].payload
            assert isinstance(call, ToolCallRequest)
            repaired = repaired.insert(
                fix.position + 1, (ToolCallResponse(call.timestamp, call.id, INTERRUPTED, True),)
            )
    for turn_id in turn_ids:
        cleared = unlabel_turn(repaired, turn_id)
        if isinstance(cleared, Success):
            repaired = cleared.unwrap()
    still = frozenset(
        duplicated
        for duplicated in stream.duplicated_ids
        if any(e.request_id == duplicated and e.event_id not in decided for e in repaired.entries)
    )
    return replace(repaired, duplicated_ids=still)


@dataclass(frozen=True, slots=True)
class Backfill:
    """What ``edit -i`` offers before the plan opens on a conversation whose answers carry no request link:
    the backfill's fixes alone (nothing else ``repair`` would do), and what they leave and clear."""

    fixes: tuple[Fix, ...]
    unlinked: int
    """Answers that carry no request link (as ``check`` counts them), linked by the fixes or not."""
    turns_left: int
    """Turns with several requests, whose unlinked answers stay unlinked."""
    summaries_cleared: int
    """Summaries of the turns the fixes touch (cleared, as for every repair)."""

    @property
    def answers(self) -> int:
        return len(self.fixes)


def backfill_offer(stream: ConversationStream) -> Backfill:
    """The backfill ``repair --backfill --apply`` would make on ``stream``, without its other fixes.

    >>> from turnmark.core import ConversationStream, sequential_ids
    >>> ts = '"timestamp": "2026-01-02 10:00:00.0"'
    >>> events = f'[{{"type": "turn_start", {ts}}}, {{"type": "chat_request", {ts}, "content": "Fix it"}}, '
    >>> events += f'{{"type": "chat_response", {ts}, "message": "Done."}}]'
    >>> stream = ConversationStream.from_json(events.encode(), b"{}", new_id=sequential_ids()).unwrap()
    >>> offer = backfill_offer(stream)
    >>> offer.answers, offer.unlinked, offer.turns_left, offer.summaries_cleared
    (1, 1, 0, 0)
    >>> backfill_offer(apply_repairs(stream, offer.fixes)).answers
    0
    """
    plan = plan_repairs(stream, backfill=True)
    fixes = tuple(fix for fix in plan.fixes if fix.kind == "backfill")
    turns = turn_indices(stream.entries)
    touched = {turns[fix.position] for fix in fixes}
    summaries = sum(1 for turn in stream.turns() if turn.index in touched and turn.summary() is not None)
    unlinked = sum(1 for entry in stream.entries if entry.request_id is None and is_linkable(entry.payload))
    return Backfill(fixes, unlinked, plan.backfill_left, summaries)
