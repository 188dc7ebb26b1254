"""What ``turnmark show`` shows of a conversation, whatever the format: the reader's view as plain data.

The decisions every format shares: which turns (``--turn``, ``--last``, ``--turns``); what each
event shows (reasoning only when asked, tool calls at the ``--tools`` level, a call and its result
as one item); why an event is left out of what the model sees (RFD 098, closed over tool pairs);
what the compaction overlays send the model instead of a turn; the anchors ``turn-<id>`` and
``event-<id>``; where long tool output is cut; the fence that holds a code block. Text is kept as
written here: each format escapes it for its medium.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from returns.result import Failure, Result, Success

from turnmark.core.errors import TurnSelectionError
from turnmark.core.links.compaction import SummaryRun, TurnOverlay, turn_overlays
from turnmark.core.links.exclusion import exclude_unresolved, paired_payloads
from turnmark.core.links.reasons import count_unresolved
from turnmark.core.links.resolution import REASON_TEXT
from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.stream.light import LazyTurns, LightTurn
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    InquiryRequest,
    InquiryResponse,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
)
from turnmark.core.stream.previews import telling_argument
from turnmark.core.stream.quick_init import quick_init
from turnmark.core.stream.turn_facts import TurnFacts
from turnmark.core.stream.turns import NamedTurn, NamedTurnT, Turn, find_turn, turn_indices
from turnmark.core.summaries.turn_rows import LabelSource, row_of
from turnmark.core.text.indented_json import indented
from turnmark.core.text.summary_text import one_line, truncate
from turnmark.core.text.wording import byte_size, turn_range

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

ToolDetail = Literal["none", "names", "args", "full"]
"""How much of a tool call is shown: nothing; one line (name, telling argument, status, output size);
the arguments too; the output too (cut at ``OUTPUT_CHARS``)."""
TOOL_DETAILS: tuple[ToolDetail, ...] = ("none", "names", "args", "full")
EventKind = Literal["request", "message", "reasoning", "data", "tool", "inquiry"]

_TITLES: dict[EventKind, str] = {
    "request": "Request",
    "message": "Answer",
    "reasoning": "Reasoning",
    "data": "Data",
    "tool": "Tool call",
    "inquiry": "Asked",
}
OUTPUT_CHARS = 4_000
"""Tool output longer than this is cut where a reader's format shows it (JSON keeps it whole)."""
TARGET_CHARS = 60


@dataclass(frozen=True, slots=True)
class ShowOptions:
    reasoning: bool = False
    tools: ToolDetail = "full"


@dataclass(frozen=True, slots=True)
class TurnSelection:
    """Which turns to show: one (``turn``: ID or number), the last ``last``, or a ``span`` ``A-B``; else all."""

    turn: str | None = None
    last: int | None = None
    span: str | None = None


@dataclass(frozen=True, slots=True)
class ExclusionMark:
    """Why an event is left out of what the model sees (RFD 098)."""

    request_id: Json
    reason: str
    by_closure: bool

    @property
    def text(self) -> str:
        """``left out of what the model sees: request_id 'gone000' does not resolve (missing_target: …)``."""
        why = f"request_id {self.request_id!r} does not resolve ({self.reason}: {REASON_TEXT.get(self.reason, '')})"
        if self.by_closure:
            return f"left out of what the model sees with the other half of its tool call: {why}"
        return f"left out of what the model sees: {why}"

    def to_json(self) -> JsonObject:
        return {"request_id": self.request_id, "reason": self.reason, "by_closure": self.by_closure}


@quick_init
@dataclass(frozen=True, slots=True)
class ShownTool:
    """A tool call with its result; ``output`` is ``None`` while the call has no result."""

    call_id: str
    name: str
    arguments: JsonObject
    output: str | None
    is_error: bool
    result_event_id: str | None

    @property
    def status(self) -> Literal["ok", "error", "pending"]:
        return "pending" if self.output is None else "error" if self.is_error else "ok"

    @property
    def target(self) -> str | None:
        """The telling argument (a path, a command…): one line, at most ``TARGET_CHARS`` characters."""
        target = telling_argument(self.arguments)
        return truncate(target, TARGET_CHARS) if target is not None else None

    @property
    def output_size(self) -> str | None:
        return None if self.output is None else byte_size(len(self.output.encode("utf-8")))

    @property
    def call(self) -> str:
        """The tool's name and its telling argument."""
        return " ".join(part for part in (self.name, self.target) if part)

    @property
    def outcome(self) -> str:
        """``✓ 2.1 KiB``, ``✗ error 312 B`` or ``… no result``."""
        mark = {"ok": "✓", "error": "✗ error", "pending": "… no result"}[self.status]
        return " ".join(part for part in (mark, self.output_size) if part)

    @property
    def line(self) -> str:
        """``fs_read_file crates/jp_storage/src/lib.rs ✓ 2.1 KiB``."""
        return f"{self.call} {self.outcome}"


@quick_init
@dataclass(frozen=True, slots=True)
class ShownEvent:
    """One item of a turn. ``text`` is a request's, answer's or reasoning's text, structured data as JSON,
    or an inquiry's question; ``tool`` is set for a tool call, ``answer`` for an inquiry."""

    event_id: str
    kind: EventKind
    timestamp: str
    text: str = ""
    tool: ShownTool | None = None
    answer: Json = None
    excluded: ExclusionMark | None = None

    @property
    def anchor(self) -> str:
        return anchor("event", self.event_id)

    @property
    def title(self) -> str:
        """``Request``, ``Answer``, ``Reasoning``, ``Data``, ``Tool call`` or ``Asked``."""
        return _TITLES[self.kind]

    def to_json(self, tools: ToolDetail) -> JsonObject:
        shown: JsonObject = {"event_id": self.event_id, "anchor": self.anchor, "type": self.kind}
        shown["timestamp"] = self.timestamp
        if self.tool is None:
            shown["content"] = self.text
        else:
            tool = self.tool
            shown["tool"] = {
                "name": tool.name,
                "call_id": tool.call_id,
                "target": tool.target,
                "status": tool.status,
                "arguments": tool.arguments if tools in ("args", "full") else None,
                "output": tool.output if tools == "full" else None,
                "output_bytes": None if tool.output is None else len(tool.output.encode("utf-8")),
                "result_event_id": tool.result_event_id,
            }
        if self.kind == "inquiry":
            shown["answer"] = self.answer
        shown["excluded"] = self.excluded.to_json() if self.excluded else None
        return shown


@quick_init
@dataclass(frozen=True, slots=True)
class ShownTurn:
    index: int
    id: str | None
    timestamp: str | None
    label: str | None
    label_source: LabelSource | None
    events: tuple[ShownEvent, ...]
    overlay: TurnOverlay | None = None

    @property
    def anchor(self) -> str:
        return anchor("turn", self.id) if self.id is not None else f"turn-{self.index}"

    @property
    def heading(self) -> str:
        """``Turn 3 (p8q2r4b) · 2026-03-05 14:02 · <label>``."""
        parts = [f"Turn {self.index}" + (f" ({self.id})" if self.id else "")]
        parts += [part for part in (minute(self.timestamp) if self.timestamp else None, self.label) if part]
        return " · ".join(parts)

    @property
    def summary_run(self) -> SummaryRun | None:
        """The compaction summary the model is sent instead of this turn, on the first turn of its run only."""
        run = self.overlay.run if self.overlay else None
        return run if run is not None and run.from_turn == self.index else None

    @property
    def notes(self) -> tuple[str, ...]:
        """What the compaction overlays send the model of this turn, one sentence each."""
        overlay = self.overlay
        if overlay is None:
            return ()
        notes = []
        if overlay.run is not None:
            run = overlay.run
            turns = turn_range(run.from_turn, run.to_turn)
            notes.append(f"compacted: the model is sent {turns} as one summary, not as written here")
        if overlay.reasoning_stripped:
            notes.append("compacted: the model is not sent this turn's reasoning")
        policy = overlay.tool_calls
        if policy is not None and policy.policy == "omit":
            notes.append("compacted: the model is not sent this turn's tool calls")
        elif policy is not None and policy.stripped:
            notes.append(f"compacted: the model is not sent the {policy.stripped} of this turn's tool calls")
        return tuple(notes)

    def to_json(self, tools: ToolDetail) -> JsonObject:
        run = self.overlay.run if self.overlay else None
        return {
            "index": self.index,
            "id": self.id,
            "anchor": self.anchor,
            "timestamp": self.timestamp,
            "label": self.label,
            "label_source": self.label_source,
            "compaction": {
                "summary_of_turns": [run.from_turn, run.to_turn] if run else None,
                "summary": run.text if run else None,
                "notes": list(self.notes),
            }
            if self.overlay
            else None,
            "events": [event.to_json(tools) for event in self.events],
        }


@dataclass(frozen=True, slots=True)
class ShownConversation:
    """The chosen turns of a conversation as shown; ``conversation`` is its identity (``id``, ``title`` …)."""

    conversation: JsonObject
    turns: tuple[ShownTurn, ...]
    total_turns: int
    options: ShowOptions

    @property
    def title(self) -> str:
        title = self.conversation.get("title")
        return str(title) if title else str(self.conversation.get("id", "conversation"))

    @property
    def scope(self) -> str:
        """``4 turns`` or ``turns 2-3 of 4``."""
        return scope_of([turn.index for turn in self.turns], self.total_turns)

    @property
    def heads(self) -> tuple[ShownTurn, ...]:
        """The turns as the contents list them (here the turns themselves)."""
        return self.turns

    def to_json(self) -> JsonObject:
        """``show --format json``: the documented shape."""
        return {
            "conversation": self.conversation,
            "total_turns": self.total_turns,
            "options": {"reasoning": self.options.reasoning, "tools": self.options.tools},
            "turns": [turn.to_json(self.options.tools) for turn in self.turns],
        }


def scope_of(indices: Sequence[int], total: int) -> str:
    """What part of a conversation is shown: ``4 turns``, ``turn 2 of 4``, ``turns 2-3 of 4``."""
    if len(indices) == total:
        return f"{total} turn" + ("" if total == 1 else "s")
    if len(indices) == 1:
        return f"turn {indices[0]} of {total}"
    if not indices:
        return f"no turn of {total}"
    return f"turns {indices[0]}-{indices[-1]} of {total}"


@dataclass(frozen=True, slots=True)
class ShownStream:
    """The chosen turns of a conversation, made one at a time as they are written (``turns`` is read once);
    the rest as ``ShownConversation``."""

    conversation: JsonObject
    indices: tuple[int, ...]
    """The chosen turns' numbers."""
    made_heads: Callable[[], tuple[ShownTurn, ...]]
    """Makes ``heads`` (once): only the formats with a table of contents ask for it."""
    turns: Iterator[ShownTurn]
    total_turns: int
    options: ShowOptions
    blocks: Callable[[int, int], Iterator[ShownTurn]] | None = None
    """The chosen turns from the ``a``-th to before the ``b``-th, made apart from the others (``None``: only in
    order, through ``turns``): a block may be made in another process."""

    @property
    def heads(self) -> tuple[ShownTurn, ...]:
        """The chosen turns without their events (what a table of contents lists), made before any turn."""
        return self.made_heads()

    @property
    def title(self) -> str:
        title = self.conversation.get("title")
        return str(title) if title else str(self.conversation.get("id", "conversation"))

    @property
    def scope(self) -> str:
        return scope_of(self.indices, self.total_turns)


def streamed(
    conversation: JsonObject,
    chosen: Sequence[NamedTurn],
    *,
    heads: Callable[[], tuple[ShownTurn, ...]],
    turns: Iterator[ShownTurn],
    total_turns: int,
    options: ShowOptions,
    blocks: Callable[[int, int], Iterator[ShownTurn]] | None = None,
) -> ShownStream:
    """A ``ShownStream`` of the ``chosen`` turns whose heads are made at most once, when first asked for."""
    indices = tuple(turn.index for turn in chosen)
    return ShownStream(conversation, indices, functools.cache(heads), turns, total_turns, options, blocks)


@dataclass(frozen=True, slots=True)
class Document:
    """A format's document of a view, in pieces: ``head``, one chunk per chosen turn (``turn(shown, n)`` of the
    ``n``-th chosen turn, made from that turn alone), then ``tail``; with ``once`` the whole ends in exactly one
    line feed (``ending_once``)."""

    head: str
    turn: Callable[[ShownTurn, int], str]
    tail: str = ""
    once: bool = False

    def chunks(self, turns: Iterable[ShownTurn]) -> Iterator[str]:
        """The document of ``turns`` (the chosen ones, in order), a chunk at a time."""
        return self.around(self.turn(turn, ordinal) for ordinal, turn in enumerate(turns))

    def around(self, turn_chunks: Iterable[str]) -> Iterator[str]:
        """The document around its turns' chunks, made by ``turn`` (here or elsewhere)."""
        chunks = itertools.chain((self.head,), turn_chunks, (self.tail,))
        return ending_once(chunks) if self.once else chunks

    def prepared(self, prepare: Callable[[str], str]) -> Document:
        """The same document with each chunk passed through ``prepare`` (made safe for its medium): a function of
        each chunk alone, that keeps its line feeds, so the pieces and the whole agree."""
        turn = self.turn
        return Document(
            prepare(self.head), lambda shown, ordinal: prepare(turn(shown, ordinal)), prepare(self.tail), self.once
        )


def ending_once(chunks: Iterable[str]) -> Iterator[str]:
    """``chunks`` as a document that ends in exactly one line feed (``"".join(chunks).rstrip("\\n") + "\\n"``),
    written as they come: the line feeds that end a chunk wait until another chunk follows."""
    held = ""
    for chunk in chunks:
        body = chunk.rstrip("\n")
        if body:
            yield held + body
            held = chunk[len(body) :]
        else:
            held += chunk
    yield "\n"


def json_chunks(view: ShownStream) -> Iterator[str]:
    """``show --format json`` as ``indented(ShownConversation.to_json())`` writes it, one turn at a time (the
    document is never held whole)."""
    return json_document(view).chunks(view.turns)


def json_document(view: ShownStream) -> Document:
    """``json_chunks``'s ``Document``."""
    head = {
        "conversation": view.conversation,
        "total_turns": view.total_turns,
        "options": {"reasoning": view.options.reasoning, "tools": view.options.tools},
    }
    text = indented(head)
    tools = view.options.tools

    def turn(shown: ShownTurn, ordinal: int) -> str:
        return ("" if ordinal == 0 else ",\n    ") + indented(shown.to_json(tools)).replace("\n", "\n    ")

    if not view.indices:
        return Document(text[:-2] + ',\n  "turns": []\n}', turn)
    return Document(text[:-2] + ',\n  "turns": [\n    ', turn, "\n  ]\n}")


_ANCHOR_SAFE = re.compile(r"[^a-z0-9]")


def anchor(kind: str, identifier: str) -> str:
    """``turn-<id>`` or ``event-<id>``; any character but a-z and 0-9 of a hand-edited ID as ``_<hex>_``.

    >>> anchor("event", "k3m9x2a"), anchor("event", 'x"><b>')
    ('event-k3m9x2a', 'event-x_22__3e__3c_b_3e_')
    """
    return f"{kind}-" + _ANCHOR_SAFE.sub(lambda match: f"_{ord(match.group()):x}_", identifier)


_MINUTE = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})")


def minute(timestamp: str) -> str:
    """A timestamp to the minute (``2026-03-05 14:02``); anything else one line, as written."""
    match = _MINUTE.match(timestamp)
    return f"{match.group(1)} {match.group(2)}" if match else truncate(one_line(timestamp), 40)


def fence(text: str, char: str = "`") -> str:
    """A code fence longer than any run of ``char`` in ``text`` (at least three), so the text cannot close it.

    >>> fence("no ticks"), fence("a ```` b")
    ('```', '`````')
    """
    if char * 3 not in text:
        return char * 3
    longest = max(len(run) for run in re.findall(re.escape(char) + "+", text))
    return char * max(3, longest + 1)


def cut(text: str, limit: int = OUTPUT_CHARS) -> tuple[str, str | None]:
    """``text`` up to ``limit`` characters (at a line end when one is near) and what the cut says, if any.

    >>> cut("short")
    ('short', None)
    >>> cut("line one\\nline two\\nline three", 20)
    ('line one\\nline two', 'cut: 11 more characters (1 more line) not shown')
    """
    if len(text) <= limit:
        return text, None
    head = text[:limit]
    line_end = head.rfind("\n")
    if line_end >= limit * 3 // 4:
        head = head[:line_end]
    rest = text[len(head) :]
    lines = rest.count("\n")
    more = f" ({lines} more line{'s' if lines != 1 else ''})" if lines else ""
    return head, f"cut: {len(rest):,} more characters{more} not shown"


def select_turns(
    turns: Sequence[NamedTurnT], selection: TurnSelection
) -> Result[tuple[NamedTurnT, ...], TurnSelectionError]:
    """The turns a selection names, in order.

    >>> from turnmark.core import ChatRequest, ConversationStream, sequential_ids
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> for text in ("one", "two", "three"):
    ...     stream = stream.start_turn(ChatRequest("2026-01-02 10:00:00.0", text))
    >>> turns = stream.turns()
    >>> [t.index for t in select_turns(turns, TurnSelection(last=2)).unwrap()]
    [1, 2]
    >>> [t.index for t in select_turns(turns, TurnSelection(span="e000001-1")).unwrap()]
    [0, 1]
    >>> select_turns(turns, TurnSelection(span="2-0")).failure().describe()
    "--turns 2-0: turn '2' comes after turn '0'"
    """
    if selection.turn is not None:
        found = find_turn(turns, selection.turn)
        return Success((found,)) if found is not None else Failure(_no_turn(selection.turn))
    if selection.last is not None:
        if selection.last < 1:
            return Failure(TurnSelectionError(f"--last must be 1 or more, not {selection.last}"))
        return Success(tuple(turns[-selection.last :]))
    if selection.span is not None:
        first, dash, last = selection.span.partition("-")
        if not dash:
            return Failure(TurnSelectionError(f"--turns {selection.span}: give two turns as A-B (IDs or numbers)"))
        start, end = find_turn(turns, first.strip()), find_turn(turns, last.strip())
        if start is None or end is None:
            return Failure(_no_turn(first if start is None else last))
        if start.index > end.index:
            return Failure(TurnSelectionError(f"--turns {selection.span}: turn {first!r} comes after turn {last!r}"))
        return Success(tuple(turns[start.index : end.index + 1]))
    return Success(tuple(turns))


def _no_turn(wanted: str) -> TurnSelectionError:
    return TurnSelectionError(
        f"no turn {wanted!r} (give a turn's event_id or its number, as 'turnmark turns' shows them)"
    )


def turn_heads(turns: Sequence[Turn]) -> tuple[ShownTurn, ...]:
    """Each chosen turn as shown, without its events: its index, ID, time and label (a contents line)."""
    return tuple(_head(turn.facts(), turn_time(turn)) for turn in turns)


def lazy_heads(lazy: LazyTurns, turns: Sequence[LightTurn]) -> tuple[ShownTurn, ...]:
    """``turn_heads`` of a file read lazily."""
    return tuple(_head(lazy.facts(turn), turn.time) for turn in turns)


def _head(facts: TurnFacts, time: str | None) -> ShownTurn:
    row = row_of(facts)
    return ShownTurn(facts.index, facts.id, time, row.label, row.label_source, ())


def show_turns(stream: ConversationStream, turns: Sequence[Turn], options: ShowOptions) -> tuple[ShownTurn, ...]:
    """Each chosen turn as shown."""
    return tuple(shown_turns(stream, turns, options))


def shown_turns(stream: ConversationStream, turns: Sequence[Turn], options: ShowOptions) -> Iterator[ShownTurn]:
    """Each of ``turns`` (turns of ``stream``) as shown with ``options``."""
    entries = stream.entries
    indices = turn_indices(entries)
    excluded = {
        event.position: ExclusionMark(diagnostic.request_id, diagnostic.reason, event.by_closure)
        for diagnostic in exclude_unresolved(entries, stream.duplicated_ids, indices).diagnostics
        for event in diagnostic.excluded
    }
    read = (
        (
            turn.index,
            turn.id(),
            turn.positions,
            [entry.event_id for entry in turn.entries],
            [entry.payload for entry in turn.entries],
            turn.facts(),
        )
        for turn in turns
    )
    return _shown(read, options, excluded, turn_overlays(entries, indices))


def plainly_shown(lazy: LazyTurns) -> bool:
    """Nothing in the file is left out of what the model sees and no compaction overlays a turn: each turn is
    then shown from its own entries alone (``shown_lazily``)."""
    light = lazy.stream
    return not lazy.compactions and not count_unresolved(light.links, light.duplicated_ids)


def shown_lazily(lazy: LazyTurns, turns: Iterable[LightTurn], options: ShowOptions) -> Iterator[ShownTurn]:
    """``shown_turns`` of a file read lazily, each turn's payloads made as it is shown; only for a file shown
    ``plainly_shown`` (else the whole stream is needed for what is left out and the overlays)."""
    read = (
        (turn.index, turn.id(), turn.span, lazy.event_ids(turn), lazy.payloads(turn), lazy.facts(turn))
        for turn in turns
    )
    return _shown(read, options, {}, {})


_TurnRead = tuple[int, str | None, Sequence[int], Sequence[str], Sequence[Payload], TurnFacts]
"""What a turn is shown from: its number and ID, its entries' positions in the stream, their ``event_id`` and
payloads, and its facts."""


def _shown(
    turns: Iterable[_TurnRead],
    options: ShowOptions,
    excluded: dict[int, ExclusionMark],
    overlays: dict[int, TurnOverlay],
) -> Iterator[ShownTurn]:
    for index, turn_id, positions, ids, payloads, facts in turns:
        row = row_of(facts)
        answers = {p.id: p.answer for p in payloads if isinstance(p, InquiryResponse)}
        partners = {} if options.tools == "none" else paired_payloads(payloads, (index,) * len(payloads))
        events: list[ShownEvent] = []
        for local in range(len(payloads)):
            event = _shown_event(local, ids, payloads, partners, answers=answers, options=options)
            if event is not None:
                mark = _mark(excluded, positions, local, partners) if excluded else None
                events.append(replace(event, excluded=mark) if mark is not None else event)
        yield ShownTurn(
            index, turn_id, _first_time(payloads), row.label, row.label_source, tuple(events), overlays.get(index)
        )


def _mark(
    excluded: dict[int, ExclusionMark], positions: Sequence[int], local: int, partners: dict[int, int]
) -> ExclusionMark | None:
    """Why the turn's ``local``-th event, or the other half of its tool call, is left out (by stream position)."""
    partner = partners.get(local)
    return excluded.get(positions[local]) or (excluded.get(positions[partner]) if partner is not None else None)


def turn_time(turn: Turn) -> str | None:
    """When the turn happened: the first timestamp of its entries, as written."""
    return _first_time([entry.payload for entry in turn.entries])


def _first_time(payloads: Sequence[Payload]) -> str | None:
    for payload in payloads:
        stamp = getattr(payload, "timestamp", None)
        if isinstance(stamp, str):
            return stamp
    return None


def _shown_event(
    local: int,
    ids: Sequence[str],
    payloads: Sequence[Payload],
    partners: dict[int, int],
    *,
    answers: dict[str, Json],
    options: ShowOptions,
) -> ShownEvent | None:
    """The turn's ``local``-th event as shown (``partners``: its tool pairs, by place in the turn)."""
    event_id, payload = ids[local], payloads[local]
    if isinstance(payload, ChatRequest):
        return ShownEvent(event_id, "request", payload.timestamp, payload.content)
    if isinstance(payload, ChatResponse):
        if payload.variant == "reasoning" and not options.reasoning:
            return None
        value = payload.value
        if payload.variant == "data" or not isinstance(value, str):
            return ShownEvent(event_id, "data", payload.timestamp, indented(value))
        return ShownEvent(event_id, payload.variant, payload.timestamp, value)
    if options.tools == "none":
        return None
    if isinstance(payload, ToolCallRequest):
        partner = partners.get(local)
        result = payloads[partner] if partner is not None else None
        output = result if isinstance(result, ToolCallResponse) else None
        tool = ShownTool(
            payload.id,
            payload.name,
            payload.arguments or {},
            output.content if output else None,
            output.is_error if output else False,
            ids[partner] if partner is not None else None,
        )
        return ShownEvent(event_id, "tool", payload.timestamp, tool=tool)
    if isinstance(payload, ToolCallResponse) and local not in partners:
        tool = ShownTool(payload.id, "(result without its call)", {}, payload.content, payload.is_error, event_id)
        return ShownEvent(event_id, "tool", payload.timestamp, tool=tool)
    if isinstance(payload, InquiryRequest):
        question = payload.question.get("text")
        text = question if isinstance(question, str) else json.dumps(payload.question, ensure_ascii=False)
        return ShownEvent(event_id, "inquiry", payload.timestamp, text, answer=answers.get(payload.id))
    return None


def answer_text(answer: Json) -> str:
    """An inquiry's answer in words: ``yes``, ``no``, the text, or JSON."""
    if answer is True:
        return "yes"
    if answer is False:
        return "no"
    if answer is None:
        return "(no answer)"
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
