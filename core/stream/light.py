"""The light reader: what listing, ``turns`` and catch-up's planning need of ``events.json``, in one pass.

It decodes each entry into a struct of only the fields those facts come from; the big ones (messages, tool
arguments and outputs) stay undecoded views of the bytes, checked only for their JSON type. It reads odd
fields exactly as the full reader does (``codec.wrapper_ids``: RFD 097/098's letter) and settles IDs with the
same plan (``event_ids.plan_loaded_ids``), and it checks everything the full reader checks, so a file the
full reader refuses is never read here: ``read_light`` gives ``None`` and the caller takes the long way for
the error. Its results equal the full load's (``tests/agreement``): the turns' facts
(``turns.TurnFacts``), the request links to resolve, and what a legacy file lacks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from turnmark.core.stream.codec import EVENT_TAGS, wrapper_ids
from turnmark.core.stream.entries import IdOrigin
from turnmark.core.stream.event_ids import derived_id, entry_origins, plan_loaded_ids
from turnmark.core.stream.storage_encoding import decode_string
from turnmark.core.stream.timestamps import is_timestamp
from turnmark.core.stream.turns import SOURCE_KEY, TurnFacts, steps_complete, turn_numbers
from turnmark.core.text.summary_text import mechanical_summary

UNSET: Any = msgspec.UNSET
NONE = msgspec.Raw()
EVENTS = frozenset(EVENT_TAGS)


class _Entry(msgspec.Struct):
    """One element of ``events.json``, as far as the facts need it (unknown keys are skipped)."""

    type: Any = UNSET
    timestamp: Any = UNSET
    event_id: Any = UNSET
    request_id: Any = UNSET
    summary: Any = UNSET
    id: Any = UNSET
    metadata: msgspec.Raw = NONE
    content: msgspec.Raw = NONE
    schema: msgspec.Raw = NONE
    author: msgspec.Raw = NONE
    message: msgspec.Raw = NONE
    reasoning: msgspec.Raw = NONE
    data: msgspec.Raw = NONE
    name: msgspec.Raw = NONE
    arguments: msgspec.Raw = NONE
    is_error: msgspec.Raw = NONE
    source: msgspec.Raw = NONE
    question: msgspec.Raw = NONE
    answer: msgspec.Raw = NONE
    from_turn: Any = UNSET
    to_turn: Any = UNSET
    tool_calls: Any = UNSET
    delta: msgspec.Raw = NONE


_ENTRIES = msgspec.json.Decoder(list[_Entry])
_ANY = msgspec.json.Decoder()


class _Refused(Exception):
    """The full reader refuses this file: the caller reads it the long way for the error."""


def _kind(raw: msgspec.Raw) -> str:
    """The JSON type of a value by its first byte: ``"`` a string, ``{`` an object, ``n`` null, ``t``/``f`` a
    boolean (``""``: absent)."""
    return chr(memoryview(raw)[0]) if len(raw) else ""


def _string(raw: msgspec.Raw) -> bool:
    return _kind(raw) == '"'


def _optional(raw: msgspec.Raw, first: str) -> bool:
    """Absent, null, or of the type ``first`` names (the full reader's optional fields)."""
    return _kind(raw) in ("", "n", first)


def _check(condition: bool) -> None:
    if not condition:
        raise _Refused


def _id_string(value: Any) -> bool:
    return type(value) is str


def _metadata(entry: _Entry) -> None:
    _check(_kind(entry.metadata) in ("", "{"))


def _turn_start(entry: _Entry) -> None:
    _check(entry.summary is UNSET or entry.summary is None or type(entry.summary) is str)
    _metadata(entry)


def _chat_request(entry: _Entry) -> None:
    _check(_string(entry.content) and _optional(entry.schema, "{") and _optional(entry.author, '"'))
    _metadata(entry)


def _chat_response(entry: _Entry) -> None:
    _check(_string(entry.message) or _string(entry.reasoning) or bool(len(entry.data)))
    _metadata(entry)


def _tool_call_request(entry: _Entry) -> None:
    _check(_id_string(entry.id) and _string(entry.name) and _kind(entry.arguments) in ("", "{"))
    _metadata(entry)


def _tool_call_response(entry: _Entry) -> None:
    _check(_id_string(entry.id) and _string(entry.content) and _kind(entry.is_error) in ("t", "f"))
    _metadata(entry)


def _inquiry_request(entry: _Entry) -> None:
    _check(_id_string(entry.id) and _kind(entry.source) == "{" and _kind(entry.question) == "{")
    question = _ANY.decode(entry.question)
    _check(type(question.get("text")) is str)
    _metadata(entry)


def _inquiry_response(entry: _Entry) -> None:
    _check(_id_string(entry.id) and bool(len(entry.answer)))
    _metadata(entry)


def _compaction(entry: _Entry) -> None:
    for value in (entry.from_turn, entry.to_turn):
        _check(type(value) is int and value >= 0)
    summary = entry.summary
    _check(summary in (UNSET, None) or (isinstance(summary, dict) and isinstance(summary.get("summary"), str)))
    reasoning = _ANY.decode(entry.reasoning) if len(entry.reasoning) else None
    _check(reasoning is None or reasoning == "strip")
    policy = entry.tool_calls
    if policy not in (UNSET, None):
        _check(isinstance(policy, dict))
        strip = policy.get("policy") == "strip" and all(
            isinstance(policy.get(key), bool) for key in ("request", "response")
        )
        _check(strip or policy.get("policy") == "omit")


_CHECKS: dict[str, Callable[[_Entry], None]] = {
    "turn_start": _turn_start,
    "chat_request": _chat_request,
    "chat_response": _chat_response,
    "tool_call_request": _tool_call_request,
    "tool_call_response": _tool_call_response,
    "inquiry_request": _inquiry_request,
    "inquiry_response": _inquiry_response,
    "compaction": _compaction,
}


@dataclass(frozen=True, slots=True)
class LightStream:
    """What the light reader found: the format, the entries' count, the turns' facts and the request links.

    ``links`` holds ``(event_id, type, request_id)`` per entry, as ``resolution.count_unresolved`` takes them;
    ``first_turn_start`` is the ID catch-up gives the first turn when it has no ``turn_start``
    (``labels.ensure_first_turn_start``), else ``None``.
    """

    legacy: bool
    entries: int
    turns: tuple[TurnFacts, ...]
    links: tuple[tuple[str, str, str | None], ...]
    duplicated_ids: frozenset[str]
    first_turn_start: str | None


def _elements(events: bytes, base_config: bytes | None) -> tuple[list[_Entry], bool]:
    """The entries after a legacy head (or an interrupted upgrade's), and whether the file is legacy."""
    entries = _ENTRIES.decode(events)
    if base_config is not None:
        base = _ANY.decode(base_config)
        _check(isinstance(base, dict))
        first = entries[0] if entries else None
        unfinished = (
            first is not None
            and first.type == "config_delta"
            and first.event_id is UNSET
            and bool(base)
            and len(first.delta) > 0
            and _ANY.decode(first.delta) == base
        )
        return (entries[1:] if unfinished else entries), unfinished
    _check(bool(entries) and entries[0].type == "config_delta" and entries[0].timestamp is not UNSET)
    return entries[1:], True


def read_light(events: bytes, base_config: bytes | None, conversation: str = "") -> LightStream | None:
    """The facts of ``events.json`` (and ``base_config.json``; ``None``: the legacy format), or ``None`` when the
    full reader would refuse the file (read it that way for the error)."""
    try:
        return _read(events, base_config, conversation)
    except (_Refused, msgspec.MsgspecError, RecursionError, IndexError, AttributeError):
        return None


def _read(events: bytes, base_config: bytes | None, conversation: str) -> LightStream:
    entries, legacy = _elements(events, base_config)
    tags: list[str] = []
    written: list[str | None] = []
    links: list[str | None] = []
    odd: set[str] = set()
    stand_ins: set[int] = set()
    for position, entry in enumerate(entries):
        _check(entry.type is not UNSET and entry.timestamp is not UNSET)
        tag = entry.type if type(entry.type) is str else ""
        check = _CHECKS.get(tag)
        if check is not None:
            _check(type(entry.timestamp) is str and is_timestamp(entry.timestamp))
            check(entry)
        event = tag in EVENTS
        kind = tag if event or tag in ("compaction", "config_delta") else "unknown"
        written_id, request_id, raw = wrapper_ids(entry.event_id, entry.request_id if kind != "unknown" else UNSET, tag)
        tags.append(tag)
        written.append(written_id)
        links.append(request_id)
        for key, value in raw:
            if key == "event_id":
                stand_ins.add(position)
            elif isinstance(value, str) and value:
                odd.add(value)
    reserved = {link for link in links if link is not None} | odd
    complete = all(written) and len(set(written)) == len(written)
    identities = _identities(entries, tags)
    origins = [] if complete else entry_origins(conversation, identities)
    plan = plan_loaded_ids(written, origins, reserved=reserved)
    origin_of: list[IdOrigin] = [
        "stand_in" if origin == "assigned" and position in stand_ins else origin
        for position, origin in enumerate(plan.origins)
    ]
    turns = _turns(entries, tags, plan.ids, origin_of)
    first = _first_turn_start(entries, tags, identities, set(plan.ids) | reserved, conversation)
    triples = tuple(zip(plan.ids, tags, links, strict=True))
    return LightStream(legacy, len(entries), turns, triples, plan.duplicated, first)


def _identities(entries: list[_Entry], tags: list[str]) -> list[tuple[str, str]]:
    """What each entry's derived ID is made from: its timestamp as written (a string), and its kind."""
    return [
        (entry.timestamp if type(entry.timestamp) is str else "", tag) for entry, tag in zip(entries, tags, strict=True)
    ]


def _turns(
    entries: list[_Entry], tags: list[str], ids: tuple[str, ...], origins: list[IdOrigin]
) -> tuple[TurnFacts, ...]:
    """The facts of each turn, grouped by JP's rule (``turns.turn_numbers``)."""
    if not any(tag in EVENTS for tag in tags):
        return ()
    numbers = turn_numbers((tag in EVENTS, tag == "turn_start") for tag in tags)
    turns: list[TurnFacts] = []
    start = 0
    for position in range(1, len(tags) + 1):
        if position == len(tags) or numbers[position] != numbers[start]:
            turns.append(_turn(numbers[start], range(start, position), entries, tags, ids=ids, origins=origins))
            start = position
    return tuple(turns)


def _turn(
    index: int, span: range, entries: list[_Entry], tags: list[str], *, ids: tuple[str, ...], origins: list[IdOrigin]
) -> TurnFacts:
    members = [position for position in span if tags[position] in EVENTS]
    head = members[0] if members and tags[members[0]] == "turn_start" else None
    summary = source = None
    if head is not None:
        start = entries[head]
        summary = start.summary if type(start.summary) is str else None
        source = _source(start.metadata)
    requests = [position for position in span if tags[position] == "chat_request"]
    fallback = mechanical_summary(_ANY.decode(entries[requests[0]].content)) if requests else None
    steps = [_step(entries[position], tags[position]) for position in members]
    return TurnFacts(
        index,
        ids[head] if head is not None else None,
        origins[head] != "file" if head is not None else False,
        summary,
        source,
        fallback,
        len(requests),
        len(members),
        steps_complete(steps),
    )


def _source(metadata: msgspec.Raw) -> str | None:
    if _kind(metadata) != "{":
        return None
    source = _ANY.decode(metadata).get(SOURCE_KEY)
    return decode_string(source) if isinstance(source, str) else None


def _step(entry: _Entry, tag: str) -> tuple[str, str | None, bool]:
    tool_id = entry.id if tag in ("tool_call_request", "tool_call_response") else None
    reasoning = tag == "chat_response" and not _string(entry.message) and _string(entry.reasoning)
    return tag, tool_id, reasoning


def _first_turn_start(
    entries: list[_Entry], tags: list[str], identities: list[tuple[str, str]], taken: set[str], conversation: str
) -> str | None:
    """The ID ``ensure_first_turn_start`` gives the first turn when a request comes before any ``turn_start``."""
    request = next((p for p, tag in enumerate(tags) if tag in ("turn_start", "chat_request")), None)
    if request is None or tags[request] != "chat_request":
        return None
    first_event = next(p for p, tag in enumerate(tags) if tag in EVENTS)
    inserted = (entries[request].timestamp, "turn_start")
    origin = entry_origins(conversation, [*identities[:first_event], inserted])[-1]
    attempt = 0
    while (identifier := derived_id(origin, attempt)) in taken:
        attempt += 1
    return identifier
