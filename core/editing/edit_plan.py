"""D21's edit session as values (Phases 2-4): the plan and its files, the plan parsed back, validation, and the
rebuilt stream under RFD 126's consumer contract.

``render_session`` gives the ``CONVERSATION`` plan (one line per event file,
grouped under ``# Turn N (<turn id>): <summary>`` headers, a turn without a
stored summary showing its fallback after ``~``) and every event file. After
each file name, a ``#`` comment says what the event is (``core/stream/previews``:
a request's first line, a tool call's name and telling argument, a result's
status and size), cut at a word so the line fits ``PLAN_COLUMNS``; the parser
ignores it, so plain line operations (delete, move, ``:g/fs_read_file/d``) are
all an edit needs, and an edited comment changes nothing.
``rebuild`` reads them back: a file whose text did not change stands for its
original entry exactly; a changed file is parsed and keeps its entry's
``event_id`` and ``request_id``; a new file becomes a new entry with a fresh ID,
linked to the request before it in its turn (RFD 098). A request starts a turn
(D21), except that requests which were in one turn and still follow each other
stay in it. A turn whose events are exactly those of an original turn keeps
that turn's ``turn_start`` entry (ID, summary, provenance); any other turn
keeps the ``turn_start`` of its first request's turn (of its first event's turn,
when it has no request) with the summary cleared, or gets a new one. What an
edit drops that no deleted line stood for (``dropped_unsaid``) is for the shell
to name and confirm. An edit that changes nothing gives back the stream itself.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from returns.result import Failure, Result, Success

from turnmark.core.editing.edit_files import as_read_back, parse_event, render_events
from turnmark.core.links.exclusion import tool_pairs
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.entries import Entry
from turnmark.core.stream.event_ids import fresh_id
from turnmark.core.stream.payloads import (
    ChatRequest,
    Compaction,
    InquiryRequest,
    InquiryResponse,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
    is_conversation_event,
    is_linkable,
)
from turnmark.core.stream.previews import compaction_line, event_line
from turnmark.core.stream.sanitize import INTERRUPTED
from turnmark.core.stream.turn_facts import SOURCE_KEY
from turnmark.core.stream.turns import turn_indices
from turnmark.core.text.summary_text import cut_to_width, one_line, width

PLAN_NAME = "CONVERSATION"
HEADER = """# Conversation Edit Plan
# - Delete  lines to remove events.
# - Reorder lines to reorder events.
# - Edit    event contents in the corresponding files.
# - Add     a file (and its line) to insert an event.
# The text after "#" on a line says what the event is; it is ignored.
"""
PLAN_COLUMNS = 100
COMMENT = "  # "
FALLBACK_MARK = "~ "
ABORT_HINT = "# Fix the errors above and save, or clear this file to abort."


@dataclass(frozen=True, slots=True)
class EditSession:
    """The plan and the files as written, and which original entry each file stands for."""

    plan: str
    files: dict[str, str]
    positions: dict[str, int]


def _turn_header(index: int, turn_id: str | None, summary: str | None, fallback: str | None) -> str:
    """``# Turn 2 (<turn id>): <summary>``, on one line whatever the ID and the summary hold."""
    if turn_id is None:
        return f"# Turn {index}"
    label = one_line(summary) if summary is not None else (FALLBACK_MARK + one_line(fallback) if fallback else None)
    return f"# Turn {index} ({one_line(turn_id)})" + (f": {label}" if label else "")


def render_session(stream: ConversationStream) -> EditSession:
    """The ``CONVERSATION`` plan and one file per entry (``turn_start`` entries are the plan's turn headers)."""
    entries = stream.entries
    width = max(3, len(str(len(entries))))
    order: list[tuple[str | None, int]] = []
    for turn in stream.turns():
        order.append((_turn_header(turn.index, turn.id(), turn.summary(), turn.fallback_summary()), -1))
        order += [
            (None, p) for p, e in zip(turn.positions, turn.entries, strict=True) if not isinstance(e.payload, TurnStart)
        ]
    listed = {position for _, position in order}
    order += [(None, p) for p, e in enumerate(entries) if p not in listed and not isinstance(e.payload, TurnStart)]
    positions_in_order = [position for header, position in order if header is None]
    rendered = render_events([entries[position].payload for position in positions_in_order])
    names = {
        position: f"{number:0{width}d}-{file.suffix}"
        for number, (position, file) in enumerate(zip(positions_in_order, rendered, strict=True))
    }
    files = {names[position]: file.text for position, file in zip(positions_in_order, rendered, strict=True)}
    previews: dict[int, str] = {}
    calls: dict[str, str] = {}
    for position in positions_in_order:
        payload = entries[position].payload
        previews[position] = event_line(payload, calls)
        if isinstance(payload, ToolCallRequest):
            calls[payload.id] = previews[position]
    lines = [HEADER.rstrip("\n")]
    for header, position in order:
        lines += ["", header] if header is not None else [_plan_line(names[position], previews[position])]
    return EditSession("\n".join(lines) + "\n", files, {name: position for position, name in names.items()})


def _plan_line(name: str, preview: str) -> str:
    """``003-tool-call-fs_read_file.md  # fs_read_file src/lib.rs``, at most ``PLAN_COLUMNS`` wide."""
    room = PLAN_COLUMNS - width(name) - len(COMMENT)
    return f"{name}{COMMENT}{cut_to_width(one_line(preview), max(room, 12))}" if preview else name


_TRAILING_COMMENT = re.compile(r"\s+#.*$")


def parse_plan(plan: str) -> list[tuple[int, str]]:
    """The event files the plan lists, with their line numbers (comments, a ``#`` comment after a file name
    and blank lines ignored)."""
    return [
        (number, _TRAILING_COMMENT.sub("", line).strip())
        for number, line in enumerate(plan.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def annotate(plan: str, errors: Sequence[str]) -> str:
    """The plan with the errors at its top (earlier error lines removed), as D21 shows them.

    The errors' ``(line N)`` count lines of ``plan``; they are moved to where those lines end up.
    """
    lines = plan.splitlines()
    removed = 0
    while removed < len(lines) and (lines[removed].startswith("# ERROR:") or lines[removed] in ("#", ABORT_HINT, "")):
        removed += 1
    kept = lines[removed:]
    head = [f"# ERROR: {error}" for error in errors] + ["#", ABORT_HINT, ""]
    shift = len(head) - removed

    def moved(match: re.Match[str]) -> str:
        return f"(line {int(match.group(1)) + shift})"

    head[: len(errors)] = [_LINE.sub(moved, line) for line in head[: len(errors)]]
    return "\n".join(head + kept) + "\n"


_LINE = re.compile(r"\(line (\d+)\)")


@dataclass(frozen=True, slots=True)
class _Item:
    line: int
    name: str
    """The event file the plan line names: what an error calls the event."""
    payload: Payload
    original: Entry | None
    position: int | None
    """The original entry's position, for an entry whose file is unchanged or edited."""
    unchanged: bool


def _items(
    stream: ConversationStream, session: EditSession, listed: list[tuple[int, str]], files: dict[str, str], now: str
) -> tuple[list[_Item], list[str]]:
    items: list[_Item] = []
    errors: list[str] = []
    seen: set[str] = set()
    for line, name in listed:
        if name in seen:
            errors.append(f"{name} is listed twice (line {line})")
            continue
        seen.add(name)
        text = files.get(name)
        if text is None:
            errors.append(f"no file {name} (line {line})")
            continue
        position = session.positions.get(name)
        if position is not None and text == session.files[name]:
            original = stream.entries[position]
            items.append(_Item(line, name, original.payload, original, position, True))
            continue
        parsed = parse_event(name, text, now)
        if isinstance(parsed, Failure):
            errors.append(f"{parsed.failure()} (line {line})")
            continue
        edited = stream.entries[position] if position is not None else None
        payload = parsed.unwrap()
        if edited is not None:
            payload = _with_original_metadata(payload, edited.payload)
        items.append(_Item(line, name, payload, edited, position, False))
    return items, errors


def _with_original_metadata(payload: Payload, original: Payload) -> Payload:
    """An edited event keeps its original metadata, with its JSON types, when the frontmatter left it as it was."""
    before = getattr(original, "metadata", None)
    after = getattr(payload, "metadata", None)
    if before is not None and after is not None and after == as_read_back(before) and hasattr(payload, "metadata"):
        return replace(payload, metadata=before)
    return payload


def _validate(items: list[_Item], stream: ConversationStream) -> list[str]:
    """D21's rules 1, 2, 3 and 5 (rule 4, a call with no result, is fixed, not refused)."""
    errors: list[str] = []
    events = [item for item in items if is_conversation_event(item.payload)]
    if not any(isinstance(item.payload, ChatRequest) for item in events):
        errors.append("the plan has no request: keep at least one request, or clear the file to abort")
    calls: dict[str, list[_Item]] = {}
    asked: set[str] = set()
    for item in events:
        if isinstance(item.payload, ToolCallRequest):
            calls.setdefault(item.payload.id, []).append(item)
        elif isinstance(item.payload, InquiryRequest):
            asked.add(item.payload.id)
    original_order = [
        p
        for p, e in enumerate(stream.entries)
        if is_conversation_event(e.payload) and not isinstance(e.payload, TurnStart)
    ]
    adjacent = set(pairwise(original_order))
    previous: _Item | None = None
    for item in events:
        payload = item.payload
        if isinstance(payload, ToolCallResponse):
            called = calls.get(payload.id)
            if not called:
                errors.append(f"tool result {_at(item)} has no tool call in the plan (its call's line was deleted?)")
            elif min(call.line for call in called) > item.line:
                call = min(called, key=lambda c: c.line)
                errors.append(f"tool result {_at(item)} comes before its tool call {_at(call)}")
        elif isinstance(payload, InquiryResponse) and payload.id not in asked:
            errors.append(f"inquiry response {_at(item)} has no inquiry request in the plan")
        elif (
            isinstance(payload, ChatRequest)
            and previous is not None
            and isinstance(previous.payload, ChatRequest)
            and (previous.position, item.position) not in adjacent
        ):
            errors.append(f"request {_at(item)} follows the request {_at(previous)} with no answer between")
        if not isinstance(payload, TurnStart):
            previous = item
    return errors


def _at(item: _Item) -> str:
    """``009-tool-result-fs_grep_files.md (line 14)``: an event as the plan shows it."""
    return f"{item.name} (line {item.line})"


def _groups(items: list[_Item], turns: Sequence[int]) -> list[list[_Item]]:
    """The rebuilt turns: a request opens one, unless it follows a request of its own original turn."""
    groups: list[list[_Item]] = []
    last_event: _Item | None = None
    for item in items:
        payload = item.payload
        opens = isinstance(payload, ChatRequest) and not (
            last_event is not None
            and item.position is not None
            and last_event.position is not None
            and turns[last_event.position] == turns[item.position]
        )
        if not groups or (opens and any(is_conversation_event(i.payload) for i in groups[-1])):
            groups.append(_trailing_globals_of(groups[-1], item, turns) if groups else [])
        groups[-1].append(item)
        if is_conversation_event(payload):
            last_event = item
    return groups


def _trailing_globals_of(previous: list[_Item], request: _Item, turns: Sequence[int]) -> list[_Item]:
    """The global entries (config deltas, compactions) at the end of ``previous`` that were in ``request``'s turn:
    they stay after its ``turn_start``, where they were."""
    if request.position is None:
        return []
    moved: list[_Item] = []
    while (
        previous
        and not is_conversation_event(previous[-1].payload)
        and previous[-1].position is not None
        and turns[previous[-1].position] == turns[request.position]
    ):
        moved.insert(0, previous.pop())
    return moved


def rebuild(
    stream: ConversationStream, session: EditSession, plan: str, files: dict[str, str], now: str
) -> Result[ConversationStream | None, tuple[str, ...]]:
    """The stream the edited plan and files describe; ``None`` for an empty plan (abort); errors to annotate."""
    listed = parse_plan(plan)
    if not listed:
        return Success(None)
    original_names = [name for name, _ in sorted(session.positions.items(), key=lambda pair: pair[1])]
    if [name for _, name in listed] == original_names and all(files.get(n) == session.files[n] for n in original_names):
        return Success(stream)
    items, errors = _items(stream, session, listed, files, now)
    errors += _validate(items, stream)
    if errors:
        return Failure(tuple(errors))
    rebuilt = _assemble(stream, items, now)
    problem = _split_tool_pair(rebuilt, items) or _loads_again(rebuilt, items)
    return Failure((problem,)) if problem else Success(rebuilt)


def _item_of(entry: Entry, items: list[_Item]) -> _Item | None:
    """The plan line a rebuilt entry came from (its payload is that line's, unchanged or parsed)."""
    return next((item for item in items if item.payload is entry.payload), None)


def _split_tool_pair(stream: ConversationStream, items: list[_Item]) -> str | None:
    """A tool result that ended up in another turn than its call (a request moved between them)."""
    partners = tool_pairs(stream.entries)
    calls = {entry.payload.id: entry for entry in stream.entries if isinstance(entry.payload, ToolCallRequest)}
    for position, entry in enumerate(stream.entries):
        payload = entry.payload
        if isinstance(payload, ToolCallResponse) and position not in partners and payload.id in calls:
            result, call = _item_of(entry, items), _item_of(calls[payload.id], items)
            named = f" {_at(result)}" if result else ""
            its_call = f" {_at(call)}" if call else ""
            return f"tool result{named} is no longer in the turn of its tool call{its_call} (a request is between them)"
    return None


def _loads_again(stream: ConversationStream, items: list[_Item]) -> str | None:
    """Why the rebuilt stream would not load again (the codec's rules: timestamps, compaction fields, ...), naming
    the event file when the problem is in one entry."""
    base = stream.base_config_json()
    reloaded = ConversationStream.from_json(stream.to_json(), base, new_id=stream.new_id)
    if not isinstance(reloaded, Failure):
        return None
    error = reloaded.failure()
    index = error.index
    item = _item_of(stream.entries[index], items) if index is not None and index < len(stream.entries) else None
    if item is not None:
        return f"the result would not load: {_at(item)}: {error.message}"
    return f"the result would not load: {error.describe()}"


def _assemble(stream: ConversationStream, items: list[_Item], now: str) -> ConversationStream:
    entries = stream.entries
    turns = turn_indices(entries)
    starts = {turns[p]: entry for p, entry in enumerate(entries) if isinstance(entry.payload, TurnStart)}
    original_events: dict[int, list[int]] = {turn: [] for turn in set(turns)}
    for position, entry in enumerate(entries):
        if is_conversation_event(entry.payload) and not isinstance(entry.payload, TurnStart):
            original_events[turns[position]].append(position)
    taken = set(stream.taken)
    used_starts: set[str] = set()

    def new_id() -> str:
        identifier = fresh_id(stream.new_id, taken.__contains__)
        taken.add(identifier)
        return identifier

    start_turn = {entry.event_id: turn for turn, entry in starts.items()}
    moved: dict[int, int] = {}
    rebuilt: list[Entry] = []
    last_of_turn: dict[int, int] = {}
    for number, group in enumerate(_groups(items, turns)):
        start = _turn_start(
            group, turns, starts, original_events, used=used_starts, new_id=new_id, now=now, first_turn=number == 0
        )
        if start is not None:
            rebuilt.append(start)
        elif number == 0:
            moved[0] = 0
        active: str | None = None
        for item in group:
            entry = _entry(item, active, new_id)
            rebuilt.append(entry)
            if item.position is not None:
                last_of_turn[turns[item.position]] = len(rebuilt) - 1
            if isinstance(entry.payload, ChatRequest):
                active = entry.event_id
            if isinstance(entry.payload, ToolCallRequest) and not _answered(entry.payload.id, group):
                result = ToolCallResponse(entry.payload.timestamp, entry.payload.id, INTERRUPTED, True)
                rebuilt.append(Entry(new_id(), result, active, "inserted"))
    rebuilt = _with_empty_turns(rebuilt, starts, original_events, used_starts, last_of_turn)
    new_turns = turn_indices(rebuilt)
    moved.update({start_turn[e.event_id]: new_turns[i] for i, e in enumerate(rebuilt) if e.event_id in start_turn})
    untouched = {item.original.event_id for item in items if item.unchanged and item.original is not None}
    return stream.with_entries(_overlays_followed(rebuilt, moved, untouched))


def _with_empty_turns(
    rebuilt: list[Entry],
    starts: dict[int, Entry],
    original_events: dict[int, list[int]],
    used: set[str],
    last_of_turn: dict[int, int],
) -> list[Entry]:
    """Turns with no events (an aborted query) have no line in the plan; they stay, after the turn before them."""
    insertions: list[tuple[int, int, Entry]] = []
    for turn, start in starts.items():
        if original_events.get(turn) or start.event_id in used:
            continue
        previous = max((t for t in range(turn) if t in last_of_turn), default=None)
        insertions.append((0 if previous is None else last_of_turn[previous] + 1, turn, start))
    for index, _, start in sorted(insertions, key=lambda insertion: insertion[:2], reverse=True):
        rebuilt.insert(index, start)
    return rebuilt


def _overlays_followed(entries: list[Entry], moved: dict[int, int], untouched: set[str]) -> list[Entry]:
    """Compaction overlays the user did not edit follow their turns: re-indexed when every turn of their range
    is still there and they lie next to each other (in any order), dropped otherwise (never pointing at other
    turns); ``dropped_unsaid`` names what is dropped."""
    kept: list[Entry] = []
    for entry in entries:
        payload = entry.payload
        if isinstance(payload, Compaction) and entry.event_id in untouched:
            span = _followed_span(payload, moved)
            if span is None:
                continue
            fields = {**payload.fields, "from_turn": span[0], "to_turn": span[1]}
            kept.append(replace(entry, payload=Compaction(fields)))
        else:
            kept.append(entry)
    return kept


def _followed_span(overlay: Compaction, moved: dict[int, int]) -> tuple[int, int] | None:
    """Where the overlay's turns went, as a range; ``None`` when one is gone or others lie between them."""
    span = sorted(moved.get(turn, -1) for turn in range(overlay.from_turn, overlay.to_turn + 1))
    if span[0] < 0 or span != list(range(span[0], span[0] + len(span))):
        return None
    return span[0], span[-1]


@dataclass(frozen=True, slots=True)
class Dropped:
    """An entry an edit drops though the user deleted no line of it: a compaction overlay whose turns no
    longer lie together, or the ``turn_start`` (ID, summary) of a turn whose request went while its other
    events stayed."""

    event_id: str
    type: str
    why: str

    @property
    def line(self) -> str:
        return f"{self.type} {self.event_id}: {self.why}"

    def to_json(self) -> dict[str, str]:
        return {"event_id": self.event_id, "type": self.type, "why": self.why}


def dropped_unsaid(
    stream: ConversationStream, session: EditSession, plan: str, edited: ConversationStream
) -> tuple[Dropped, ...]:
    """What ``edited`` (rebuilt from ``plan``) leaves out of ``stream`` that the user did not delete a line of."""
    entries = stream.entries
    turns = turn_indices(entries)
    kept = {entry.event_id for entry in edited.entries}
    listed = {name for _, name in parse_plan(plan)}
    deleted = {position for name, position in session.positions.items() if name not in listed}
    staying = {
        turns[position]
        for name, position in session.positions.items()
        if name in listed and is_conversation_event(entries[position].payload)
    }
    start_turn = {entry.event_id: turns[p] for p, entry in enumerate(entries) if isinstance(entry.payload, TurnStart)}
    moved = {start_turn[entry.event_id] for entry in edited.entries if entry.event_id in start_turn}
    dropped: list[Dropped] = []
    for position, entry in enumerate(entries):
        payload = entry.payload
        if entry.event_id in kept or position in deleted:
            continue
        if isinstance(payload, Compaction):
            gone = [turn for turn in range(payload.from_turn, payload.to_turn + 1) if turn not in moved]
            why = (
                f"turn {gone[0]} of its range is gone or part of another turn"
                if gone
                else "its turns no longer lie next to each other"
            )
            dropped.append(
                Dropped(entry.event_id, "compaction", f"{cut_to_width(compaction_line(payload), 60)} ({why})")
            )
        elif isinstance(payload, TurnStart) and turns[position] in staying:
            summary = f", summary {one_line(payload.summary)!r}" if payload.summary else ""
            why = f"turn {turns[position]}'s start{summary}: no turn of the edit begins with its request"
            why += ", so its events joined another turn"
            dropped.append(Dropped(entry.event_id, "turn_start", why))
    return tuple(dropped)


def _answered(call_id: str, group: list[_Item]) -> bool:
    return any(isinstance(item.payload, ToolCallResponse) and item.payload.id == call_id for item in group)


def _entry(item: _Item, active: str | None, new_id: Callable[[], str]) -> Entry:
    if item.original is not None:
        return item.original if item.unchanged else replace(item.original, payload=item.payload)
    link = active if is_linkable(item.payload) else None
    return Entry(new_id(), item.payload, link, "inserted")


def _turn_start(
    group: list[_Item],
    turns: Sequence[int],
    starts: dict[int, Entry],
    original_events: dict[int, list[int]],
    *,
    used: set[str],
    new_id: Callable[[], str],
    now: str,
    first_turn: bool,
) -> Entry | None:
    events = [item for item in group if is_conversation_event(item.payload)]
    positions = [item.position for item in events]
    first = events[0] if events else None
    home = turns[first.position] if first is not None and first.position is not None else None
    original = starts.get(home) if home is not None else None
    if home is not None and positions == original_events.get(home) and all(item.unchanged for item in events):
        if original is None and first_turn:
            return None
        if original is not None:
            used.add(original.event_id)
            return original
    request = next((item for item in events if isinstance(item.payload, ChatRequest)), None)
    owner_turn = turns[request.position] if request is not None and request.position is not None else home
    owner = starts.get(owner_turn) if owner_turn is not None else None
    if owner is not None and owner.event_id not in used:
        used.add(owner.event_id)
        payload = owner.payload
        assert isinstance(payload, TurnStart)
        metadata = {k: v for k, v in (payload.metadata or {}).items() if k != SOURCE_KEY} or None
        return replace(owner, payload=replace(payload, summary=None, metadata=metadata))
    stamp = request.payload.timestamp if request is not None and isinstance(request.payload, ChatRequest) else now
    return Entry(new_id(), TurnStart(stamp), None, "inserted")


@dataclass(frozen=True, slots=True)
class EditChanges:
    """What a saved edit did beyond the turns it leaves: entries gone and new, turn summaries it cleared."""

    dropped: int
    added: int
    summaries_cleared: int

    def describe(self) -> str:
        """``2 entries dropped, 1 summary cleared`` (empty when nothing of that kind changed)."""
        parts = [
            f"{count} {noun if count == 1 else plural} {verb}"
            for count, noun, plural, verb in (
                (self.dropped, "entry", "entries", "dropped"),
                (self.added, "entry", "entries", "added"),
                (self.summaries_cleared, "summary", "summaries", "cleared"),
            )
            if count
        ]
        return ", ".join(parts)

    def to_json(self) -> dict[str, int]:
        return {"dropped": self.dropped, "added": self.added, "summaries_cleared": self.summaries_cleared}


def edit_changes(before: ConversationStream, after: ConversationStream) -> EditChanges:
    """Entries of ``before`` not in ``after`` (by event ID), the reverse, and turns whose summary went.

    >>> from turnmark.core import ChatRequest, ChatResponse, ConversationStream, sequential_ids
    >>> ts = "2026-01-02 10:00:00.0"
    >>> def made(summary):
    ...     stream = ConversationStream.empty({}, new_id=sequential_ids())
    ...     stream = stream.start_turn(ChatRequest(ts, "Fix it")).push(ChatResponse(ts, "message", "Done."))
    ...     return stream.set_turn_summary("e000001", summary).unwrap() if summary else stream
    >>> edit_changes(made("Fix it"), made(None).start_turn(ChatRequest(ts, "And now?"))).describe()
    '2 entries added, 1 summary cleared'
    """
    kept = {entry.event_id for entry in after.entries}
    had = {entry.event_id for entry in before.entries}
    summaries = {turn.id(): turn.summary() for turn in after.turns()}
    cleared = sum(
        1
        for turn in before.turns()
        if turn.summary() is not None and turn.id() in summaries and summaries[turn.id()] is None
    )
    return EditChanges(len(had - kept), len(kept - had), cleared)
