"""The light reader: what listing, ``turns``, catch-up's planning and ``show`` need of ``events.json``, in one pass.

It decodes each entry into a struct of only the fields those facts come from; the big ones (messages, tool
outputs) stay undecoded views of the bytes, checked only for their JSON type (a value left undecoded that is not
a string is decoded once to check it). A file of JP's common kinds, each entry with only its kind's keys, is read
quickly: one struct per kind (``_Kind``), so msgspec checks what each kind requires, the rest checked in bulk
(``_quick_tags``); any other file, or one the quick read does not vouch for, is read entry by entry (``_Entry``),
which decides, held equal by test. It reads odd fields exactly as the full reader does
(``kinds.wrapper_ids``: RFD 097/098's letter) and settles IDs with the same plan (``event_ids.plan_loaded_ids``),
and it checks what the full reader checks, so a file the full reader refuses is not read here: ``read_light``
gives ``None`` and the caller takes the long way for the error. So does a file it could read only differently
(metadata or arguments nested deeper than ``DEEPEST``, a key of one kind typed as another kind's). The one
exception, for speed: the text of a string it skips is not looked at, so a message that is not UTF-8 is read
here (the facts need none of it); ``read_lazily``, whose turns are decoded later, checks the whole file first.
Its results equal the full load's (``tests/agreement``): the turns' facts (``turn_facts.TurnFacts``), the request
links to resolve, and what a legacy file lacks; ``read_lazily`` gives each turn's entries as the full load
makes them, read when asked (``show``).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
from msgspec import UnsetType

from turnmark.core.stream.event_ids import UNSETTLED, derived_id, entry_origins, plan_loaded_ids
from turnmark.core.stream.kinds import EVENT_TAGS, LINKABLE_TAGS, wrapper_ids
from turnmark.core.stream.storage_encoding import decode_string
from turnmark.core.stream.timestamps import COMMON_TIMESTAMP, is_timestamp
from turnmark.core.stream.turn_facts import SOURCE_KEY, Step, TurnFacts, steps_complete
from turnmark.core.text.summary_text import mechanical_summary

if TYPE_CHECKING:
    from turnmark.core.stream.entries import IdOrigin
    from turnmark.core.stream.payloads import Payload, ResponseVariant
    from turnmark.core.stream.turns import Turn

UNSET: Any = msgspec.UNSET
NONE = msgspec.Raw()
EVENTS = frozenset(EVENT_TAGS)
KNOWN = EVENTS | {"compaction", "config_delta"}
"""The kinds whose ``request_id`` is a wrapper field (an unknown kind keeps it verbatim among its fields)."""


class _Entry(msgspec.Struct, forbid_unknown_fields=True):
    """One element of ``events.json``, as far as the facts need it.

    Small fields are typed as the full reader requires them of the kinds that have them, so msgspec checks
    them; a valid file whose other kinds carry such a key with another type (a ``name`` that is a number on a
    ``config_delta``) is refused here and read the long way: slower, never different. A key this struct does
    not name (an unknown kind's, a hand edit's) is read by ``_AnyEntry`` and its value checked apart.
    """

    type: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    event_id: Any = UNSET
    request_id: Any = UNSET
    summary: Any = UNSET
    id: str | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    content: msgspec.Raw = NONE
    schema: dict[str, Any] | UnsetType | None = UNSET
    author: str | UnsetType | None = UNSET
    message: msgspec.Raw = NONE
    reasoning: msgspec.Raw = NONE
    data: msgspec.Raw = NONE
    name: str | UnsetType = UNSET
    arguments: dict[str, Any] | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
    source: dict[str, Any] | UnsetType = UNSET
    question: dict[str, Any] | UnsetType = UNSET
    answer: msgspec.Raw = NONE
    from_turn: Any = UNSET
    to_turn: Any = UNSET
    tool_calls: Any = UNSET
    delta: msgspec.Raw = NONE


class _AnyEntry(_Entry, forbid_unknown_fields=False):
    """An ``_Entry`` of a file with keys ``_Entry`` does not name (skipped here; ``_entries`` checks them)."""


class _Kind(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, kw_only=True):
    """An element of the common kinds, with only its kind's keys, typed as ``_Entry`` types them or narrower (what
    msgspec then checks, ``_quick_tags`` need not): the quick read of a file. An element of another kind, with
    another key, or a narrower type refused, and the file is read by ``_Entry`` instead: slower, never different
    (``tests/agreement/test_light_reader.py`` holds both ways equal). Its fields are ``_Entry``'s of the same
    name, but for a request's ``content``, decoded."""

    type: ClassVar[str]
    timestamp: str
    event_id: Any = UNSET
    request_id: Any = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET


class _TurnStart(_Kind, tag="turn_start"):
    type = "turn_start"
    summary: str | UnsetType | None = UNSET


class _ChatRequest(_Kind, tag="chat_request"):
    type = "chat_request"
    content: str
    author: str | UnsetType | None = UNSET
    schema: dict[str, Any] | UnsetType | None = UNSET


class _ChatResponse(_Kind, tag="chat_response"):
    type = "chat_response"
    message: msgspec.Raw = NONE
    reasoning: msgspec.Raw = NONE
    data: msgspec.Raw = NONE


class _ToolCallRequest(_Kind, tag="tool_call_request"):
    type = "tool_call_request"
    id: str
    name: str
    arguments: dict[str, Any] | UnsetType = UNSET


class _ToolCallResponse(_Kind, tag="tool_call_response"):
    type = "tool_call_response"
    id: str
    is_error: bool
    content: msgspec.Raw


class _InquiryRequest(_Kind, tag="inquiry_request"):
    type = "inquiry_request"
    id: str
    source: dict[str, Any]
    question: dict[str, Any]


class _InquiryResponse(_Kind, tag="inquiry_response"):
    type = "inquiry_response"
    id: str
    answer: msgspec.Raw


class _ConfigDelta(_Kind, tag="config_delta"):
    type = "config_delta"
    delta: msgspec.Raw = NONE


_KINDS = msgspec.json.Decoder(
    list[
        _TurnStart
        | _ChatRequest
        | _ChatResponse
        | _ToolCallRequest
        | _ToolCallResponse
        | _InquiryRequest
        | _InquiryResponse
        | _ConfigDelta
    ]
)
Element = Any
"""An element as read: an ``_Entry``, or a ``_Kind`` of the quick read (the same fields its kind has)."""


_ENTRIES = msgspec.json.Decoder(list[_Entry])
_ANY_ENTRIES = msgspec.json.Decoder(list[_AnyEntry])
_KEYS = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
_NAMED = frozenset(_Entry.__struct_fields__)
_ELEMENTS = msgspec.json.Decoder(list[msgspec.Raw])
_ANY = msgspec.json.Decoder()
_QUOTE = ord('"')


class _Refused(Exception):
    """The full reader refuses this file: the caller reads it the long way for the error."""


_REFUSALS = (_Refused, msgspec.MsgspecError, RecursionError, IndexError, AttributeError)
"""What reading a file the light reader leaves to the long way raises."""


def _string(raw: msgspec.Raw) -> bool:
    """The value is a JSON string (by its first byte)."""
    return len(raw) > 0 and memoryview(raw)[0] == _QUOTE


def _check(condition: bool) -> None:
    if not condition:
        raise _Refused


def _turn_start(entry: _Entry) -> None:
    _check(entry.summary is UNSET or entry.summary is None or type(entry.summary) is str)


def _chat_request(entry: _Entry) -> None:
    _check(_string(entry.content))


def _chat_response(entry: _Entry) -> None:
    message, reasoning, data = entry.message, entry.reasoning, entry.data
    if message is NONE or not _string(message):
        _check(_string(reasoning) or data is not NONE)
        _check(_read_as_written(message))
    _check((reasoning is NONE or _read_as_written(reasoning)) and (data is NONE or _read_as_written(data)))


def _tool_call_request(entry: _Entry) -> None:
    _check(
        entry.id is not UNSET and entry.name is not UNSET and (entry.arguments is UNSET or _shallow(entry.arguments))
    )


def _tool_call_response(entry: _Entry) -> None:
    _check(entry.id is not UNSET and entry.is_error is not UNSET and _string(entry.content))


def _inquiry_request(entry: _Entry) -> None:
    question = entry.question
    _check(entry.id is not UNSET and entry.source is not UNSET and question is not UNSET)
    _check(type(question.get("text")) is str)  # type: ignore[union-attr]


def _inquiry_response(entry: _Entry) -> None:
    _check(entry.id is not UNSET and len(entry.answer) > 0 and _read_as_written(entry.answer))


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

    ``links`` holds ``(event_id, type, request_id)`` per entry, as ``reasons.count_unresolved`` takes them;
    ``first_turn_start`` is the ID catch-up gives the first turn when it has no ``turn_start``
    (``labels.ensure_first_turn_start``), else ``None``.
    """

    legacy: bool
    entries: int
    turns: tuple[TurnFacts, ...]
    links: tuple[tuple[str, str, str | None], ...]
    duplicated_ids: frozenset[str]
    first_turn_start: str | None


_CONTAINERS = frozenset((dict, list))
DEEPEST = 100
"""The deepest an entry's metadata or tool arguments may nest here (far beyond any real file's): reading an entry
walks them in Python (``codec.read_entry``), whose recursion limit is nearer where ``show`` reads a turn as it
writes it (``LazyTurns.turn``) than where a load does. A file with deeper ones is read the long way, which says
whether it can be read. (msgspec's own limit on nesting, met only some 900 levels deep, is met the same way
wherever it is, save by a few levels: a turn that cannot be read as it is shown ends ``show`` with the full
reader's error.)"""


def _shallow(value: object) -> bool:
    """``value`` holds no container more than ``DEEPEST`` deep."""
    if type(value) is dict and _CONTAINERS.isdisjoint(map(type, value.values())):
        return True
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > DEEPEST:
            return False
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
    return True


def _read_as_written(raw: msgspec.Raw) -> bool:
    """A value left undecoded is one the full reader reads: a string (its escapes are checked as it is skipped;
    its text is not looked at), or a value that decodes (its numbers in range)."""
    if not raw or memoryview(raw)[0] == _QUOTE:
        return True
    try:
        _ANY.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        return False
    return True


def _entries(events: bytes) -> tuple[list[Element], list[str] | None]:
    """The elements of ``events.json`` as the light reader reads them, and their kinds when they are checked
    already (the quick read: ``_quick_tags``; a file it cannot read, a request's text not UTF-8 among them, is
    read by ``_Entry``); else ``_settle`` checks each as it reads it, the values of keys ``_Entry`` does not name
    checked here. ``_Refused`` where the full reader could refuse what is left undecoded
    (a number out of range). The text of the strings it skips is not looked at: the facts need none of it
    (``read_lazily``, whose turns are decoded later, checks it)."""
    try:
        kinds: list[Element] = _KINDS.decode(events)
    except msgspec.DecodeError:
        pass
    else:
        tags = _quick_tags(kinds)
        if tags is not None:
            return kinds, tags
    try:
        return _ENTRIES.decode(events), None
    except msgspec.ValidationError:
        entries: list[Element] = list(_ANY_ENTRIES.decode(events))
    for element in _KEYS.decode(events):
        for key, value in element.items():
            _check(key in _NAMED or _read_as_written(value))
    return entries, None


def _config_delta(entry: _ConfigDelta) -> None:
    _check(_read_as_written(entry.delta))


def _quick_tool_call_request(entry: _ToolCallRequest) -> None:
    _check(entry.arguments is UNSET or _shallow(entry.arguments))


def _quick_tool_call_response(entry: _ToolCallResponse) -> None:
    _check(_string(entry.content))


_QUICK_CHECKS: dict[type[_Kind], Callable[[Any], None]] = {
    _ChatResponse: _chat_response,
    _ToolCallRequest: _quick_tool_call_request,
    _ToolCallResponse: _quick_tool_call_response,
    _InquiryRequest: _inquiry_request,
    _InquiryResponse: _inquiry_response,
    _ConfigDelta: _config_delta,
}
"""What ``_settle`` checks of an element that msgspec did not, per kind of the quick read (a tool call's ``id``,
``name`` and ``is_error`` are there, its kind's struct requires them; ``_every_value`` of a ``config_delta``: it has
no other undecoded value and no arguments); metadata is checked for every kind."""


def _quick_tags(elements: list[_Kind]) -> list[str] | None:
    """The kinds of the quick read's elements, each checked as ``_settle`` checks an ``_Entry`` (in bulk: its
    timestamp when it is an event's, its values), or ``None`` when one is not as the checks want (the file is
    then read by ``_Entry``, which says whether it is refused)."""
    checks = _QUICK_CHECKS.get
    try:
        for element in elements:
            check = checks(type(element))
            if check is not None:
                check(element)
        _check(all(_shallow(metadata) for element in elements if (metadata := element.metadata)))
        stamps = [element.timestamp for element in elements]
        if not all(map(COMMON_TIMESTAMP.fullmatch, stamps)):
            events = (stamp for stamp, element in zip(stamps, elements, strict=True) if element.type in _CHECKS)
            _check(all(map(is_timestamp, events)))
    except _Refused:
        return None
    return [element.type for element in elements]


_UNDECODED = ("content", "message", "reasoning", "data", "answer", "delta")
"""The fields of ``_Entry`` left undecoded (``msgspec.Raw``); the others msgspec decodes, numbers checked."""
_OWN = {
    "chat_request": ("content",),
    "chat_response": ("message", "reasoning", "data"),
    "tool_call_response": ("content",),
    "inquiry_response": ("answer",),
}
"""Per event kind, the undecoded fields its check reads (``_CHECKS``)."""
_FOREIGN = {
    tag: (attrgetter(*others), tuple(NONE for _ in others))
    for tag in EVENT_TAGS
    if (others := [name for name in _UNDECODED if name not in _OWN.get(tag, ())])
}
"""Per event kind, the getter of the undecoded fields it does not have, and what it gives when none is there."""


def _every_value(entry: Element) -> None:
    """Every value of ``entry`` is one the full reader reads: each undecoded one (``_read_as_written``), and its
    metadata and arguments ``_shallow``. What ``_settle`` asks of an entry with an undecoded field its kind does
    not have (its own are read by its check), or of a kind without a check."""
    for name in _UNDECODED:
        _check(_read_as_written(getattr(entry, name, NONE)))
    _check(_shallow(entry.metadata) and _shallow(getattr(entry, "arguments", UNSET)))


def _elements(entries: list[Element], base_config: bytes | None) -> tuple[list[Element], bool]:
    """The entries after a legacy head (or an interrupted upgrade's: each read as ``_every_value`` reads an
    entry), and whether the file is legacy."""
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
        if unfinished:
            _every_value(entries[0])
        return (entries[1:] if unfinished else entries), unfinished
    _check(bool(entries) and entries[0].type == "config_delta" and entries[0].timestamp is not UNSET)
    _every_value(entries[0])
    return entries[1:], True


def read_light(
    events: bytes, base_config: bytes | None, conversation: str = "", *, ids: bool = True
) -> LightStream | None:
    """The facts of ``events.json`` (and ``base_config.json``; ``None``: the legacy format), or ``None`` when the
    full reader would refuse the file (read it that way for the error).

    Without ``ids`` an entry JP wrote no ID for (or a later copy of one) gets ``UNSETTLED`` instead of the ID a
    load derives, and so does ``first_turn_start``: what needs only whether a turn has an ID, and the links and
    their problems, is the same (the listing's counts); the IDs themselves are not."""
    try:
        return _read(events, base_config, conversation, ids)
    except _REFUSALS:
        return None


def _utf8(data: bytes) -> bool:
    """``data`` is UTF-8 throughout, as msgspec requires of every string it decodes (a ``msgspec.Raw`` field
    is never decoded, and only its escapes are checked); looked at a slice at a time, never copied whole."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(view), _SLICE):
            decoder.decode(view[start : start + _SLICE])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


_SLICE = 1 << 20


def _read(events: bytes, base_config: bytes | None, conversation: str, ids: bool) -> LightStream:
    read, tags = _entries(events)
    entries, legacy = _elements(read, base_config)
    return _settle(entries, legacy, conversation, ids, tags=_after_head(tags, entries)).stream


def _after_head(tags: list[str] | None, entries: list[Element]) -> list[str] | None:
    """The checked kinds of ``entries``, the elements left after ``_elements`` took a legacy head."""
    return None if tags is None else tags[len(tags) - len(entries) :]


@dataclass(frozen=True, slots=True)
class _Settled:
    """A light read's facts, with the settled IDs, their origins and each turn's span of entries."""

    stream: LightStream
    ids: tuple[str, ...]
    origins: tuple[IdOrigin, ...]
    """As the plan gave them (``ReadEntry.settled`` makes the stand-ins, as the full load does)."""
    origin_of: tuple[IdOrigin, ...]
    """With the stand-ins (what a turn's facts say of its ID)."""
    spans: tuple[range, ...]
    tags: list[str]


def _plain(event_ids: list[Any], request_ids: list[Any], tags: list[str]) -> bool:
    """Every ``event_id`` is a non-empty string, and every ``request_id`` absent or a non-empty string on a kind
    that links (JP's own writing: ``_written_ids`` then reads each as it is written)."""
    return (
        set(map(type, event_ids)) == {str}
        and "" not in event_ids
        and set(map(type, request_ids)) <= {str, UnsetType}
        and "" not in request_ids
        and all(tag in LINKABLE_TAGS for tag, linked in zip(tags, request_ids, strict=True) if linked is not UNSET)
    )


def _checked_tags(entries: list[_Entry]) -> list[str]:
    """The kinds of ``entries``, each checked as the full reader checks it, or ``_Refused``."""
    tags: list[str] = []
    checks, foreigners, common = _CHECKS.get, _FOREIGN.get, COMMON_TIMESTAMP.fullmatch
    for entry in entries:
        tag, timestamp = entry.type, entry.timestamp
        if type(tag) is not str or type(timestamp) is not str:
            raise _Refused
        check = checks(tag)
        if check is not None:
            if common(timestamp) is None and not is_timestamp(timestamp):
                raise _Refused
            check(entry)
        foreign = foreigners(tag)
        if foreign is None or foreign[0](entry) != foreign[1]:
            _every_value(entry)
        elif entry.metadata:
            _check(_shallow(entry.metadata))
        tags.append(tag)
    return tags


def _written_ids(
    entries: list[Element], tags: list[str]
) -> tuple[list[str | None], list[str | None], set[int], set[str]]:
    """Each entry's written ``event_id`` and request link as ``kinds.wrapper_ids`` reads them, the positions
    whose ``event_id`` a derived one stands in for, and the odd ``request_id`` values (every ID taken)."""
    event_ids = [entry.event_id for entry in entries]
    request_ids = [entry.request_id for entry in entries]
    if event_ids.count(UNSET) == len(entries) and request_ids.count(UNSET) == len(entries):
        return [None] * len(entries), [None] * len(entries), set(), set()
    if _plain(event_ids, request_ids, tags):
        return event_ids, [None if request_id is UNSET else request_id for request_id in request_ids], set(), set()
    written: list[str | None] = []
    links: list[str | None] = []
    stand_ins: set[int] = set()
    odd: set[str] = set()
    for position, (tag, event_id, request_id) in enumerate(zip(tags, event_ids, request_ids, strict=True)):
        if event_id is UNSET and request_id is UNSET:
            written.append(None)
            links.append(None)
            continue
        if (
            type(event_id) is str
            and event_id
            and (request_id is UNSET or (tag in LINKABLE_TAGS and type(request_id) is str and request_id))
        ):
            written.append(event_id)
            links.append(None if request_id is UNSET else request_id)
            continue
        linked = request_id if tag in KNOWN else UNSET
        written_id, reading, raw = wrapper_ids(event_id, linked, tag)
        written.append(written_id)
        links.append(reading)
        for key, value in raw:
            if key == "event_id":
                stand_ins.add(position)
            elif isinstance(value, str) and value:
                odd.add(value)
    return written, links, stand_ins, odd


def _settle(
    entries: list[Element],
    legacy: bool,
    conversation: str,
    ids: bool,
    *,
    facts: bool = True,
    tags: list[str] | None = None,
) -> _Settled:
    """The light read's facts of ``entries`` (whose kinds are ``tags`` when they are checked already); without
    ``facts`` its turns left out (``LazyTurns`` works each out when it is asked for)."""
    if tags is None:
        tags = _checked_tags(entries)
    written, links, stand_ins, odd = _written_ids(entries, tags)
    if ids:
        reserved = {link for link in links if link is not None} | odd
        complete = all(written) and len(set(written)) == len(written)
        identities = _identities(entries, tags) if not complete or _request_first(tags) else []
        origins = [] if complete else entry_origins(conversation, identities)
        plan = plan_loaded_ids(written, origins, reserved=reserved)
        first = _first_turn_start(tags, identities, plan.ids, reserved, conversation)
    else:
        plan = plan_loaded_ids(written, [], derive=False)
        first = UNSETTLED if _request_first(tags) else None
    origin_of: Sequence[IdOrigin] = (
        [
            "stand_in" if origin == "assigned" and position in stand_ins else origin
            for position, origin in enumerate(plan.origins)
        ]
        if stand_ins
        else plan.origins
    )
    spans = _spans(tags)
    turns = (
        tuple(_turn(number, span, entries, tags, ids=plan.ids, origins=origin_of) for number, span in enumerate(spans))
        if facts
        else ()
    )
    triples = tuple(zip(plan.ids, tags, links, strict=True))
    stream = LightStream(legacy, len(entries), turns, triples, plan.duplicated, first)
    return _Settled(stream, plan.ids, plan.origins, tuple(origin_of), spans, tags)


@dataclass(frozen=True, slots=True)
class LightTurn:
    """A turn as the light reader found it: its number, the positions of its entries, its ID and when it began
    (the first of its entries' timestamps, as written)."""

    index: int
    span: range
    turn_id: str | None
    time: str

    def id(self) -> str | None:
        return self.turn_id


@dataclass(frozen=True, slots=True)
class LazyTurns:
    """A file read lightly, each turn's facts, payloads and entries worked out only when asked, as
    the light read and the full load make them.

    It holds the file's bytes and the light reader's structs instead of every entry's objects: what ``show``
    needs to write the first turns of a long conversation at the cost of the light read. A turn's payloads
    (what ``show`` shows) are made from the structs; its entries (with how each is written) are read again from
    the bytes.
    """

    stream: LightStream
    """The light read's facts, without its turns' (``facts``)."""
    turns: tuple[LightTurn, ...]
    compactions: int
    _events: bytes
    _entries: list[Element]
    _tags: list[str]
    _offset: int
    _settled: _Settled
    _facts: dict[int, TurnFacts] = field(default_factory=dict)
    _raw: list[list[msgspec.Raw]] = field(default_factory=list)

    def _element(self, position: int) -> Any:
        """The entry at ``position`` decoded as the full reader decodes it (the file's elements split once, when
        first asked for: a file whose turns are all made from the quick read's structs is not split)."""
        if not self._raw:
            self._raw.append(_ELEMENTS.decode(self._events))
        return _ANY.decode(self._raw[0][position + self._offset])

    def facts(self, turn: LightTurn) -> TurnFacts:
        """The turn's facts, equal to ``read_light``'s (worked out once)."""
        found = self._facts.get(turn.index)
        if found is None:
            settled = self._settled
            found = _turn(turn.index, turn.span, self._entries, self._tags, ids=settled.ids, origins=settled.origin_of)
            self._facts[turn.index] = found
        return found

    def turn(self, turn: LightTurn) -> Turn:
        """The turn with its entries, equal to the full load's (``ConversationStream.turns``)."""
        from turnmark.core.stream.codec import read_entry  # the full reader, only where a turn is shown
        from turnmark.core.stream.turns import Turn

        offset, ids, origins = self._offset, self._settled.ids, self._settled.origins
        entries = tuple(
            read_entry(self._element(position), position + offset).settled(ids[position], origins[position])
            for position in turn.span
        )
        return Turn(turn.index, tuple(turn.span), entries)

    def event_ids(self, turn: LightTurn) -> tuple[str, ...]:
        """The ``event_id`` of each of the turn's entries, as the full load settles them."""
        span = turn.span
        return self._settled.ids[span.start : span.stop]

    def payloads(self, turn: LightTurn) -> list[Payload]:
        """The payload of each of the turn's entries, equal to the full load's: made from the quick read's struct
        (``quick_payloads``), else read as ``turn`` reads the entry."""
        from turnmark.core.stream.quick_payloads import payload_of

        made = [payload_of(self._entries[position]) for position in turn.span]
        if None not in made:
            return made  # type: ignore[return-value]
        from turnmark.core.stream.codec import read_entry

        offset = self._offset
        return [
            payload if payload is not None else read_entry(self._element(position), position + offset).payload
            for position, payload in zip(turn.span, made, strict=True)
        ]


def read_lazily(events: bytes, base_config: bytes | None, conversation: str = "") -> LazyTurns | None:
    """``read_light`` with each turn's facts and entries left to work out when asked (``LazyTurns``); ``None``
    when the full reader would refuse the file."""
    try:
        _check(_utf8(events))
        read, tags = _entries(events)
        entries, legacy = _elements(read, base_config)
        settled = _settle(entries, legacy, conversation, ids=True, facts=False, tags=_after_head(tags, entries))
    except _REFUSALS:
        return None
    offset = len(read) - len(entries)
    tags, ids = settled.tags, settled.ids
    turns = tuple(
        LightTurn(number, span, _head(span, tags, ids), str(entries[span.start].timestamp))
        for number, span in enumerate(settled.spans)
    )
    return LazyTurns(settled.stream, turns, tags.count("compaction"), events, entries, tags, offset, settled)


def _head(span: range, tags: list[str], ids: tuple[str, ...]) -> str | None:
    """The ID of the turn's ``turn_start``: its first event when that is one (global entries may come before)."""
    first = next(position for position in span if tags[position] in EVENTS)
    return ids[first] if tags[first] == "turn_start" else None


def _request_first(tags: list[str]) -> bool:
    """A request comes before any ``turn_start`` (catch-up then gives the first turn one)."""
    request = next((p for p, tag in enumerate(tags) if tag in ("turn_start", "chat_request")), None)
    return request is not None and tags[request] == "chat_request"


def _identities(entries: list[Element], tags: list[str]) -> list[tuple[str, str]]:
    """What each entry's derived ID is made from: its timestamp as written (a string), and its kind."""
    return [
        (entry.timestamp if type(entry.timestamp) is str else "", tag) for entry, tag in zip(entries, tags, strict=True)
    ]


def _spans(tags: list[str]) -> tuple[range, ...]:
    """The entries of each turn, grouped by JP's rule (``turns.turn_numbers``); none without an event.

    Once an event has come, every turn holds one (it opens with a ``turn_start``): each later ``turn_start``
    opens the next turn, and the first turn begins at the file's start."""
    first = next((position for position, tag in enumerate(tags) if tag in EVENTS), None)
    if first is None:
        return ()
    bounds = [0, *(position for position, tag in enumerate(tags[first + 1 :], first + 1) if tag == "turn_start")]
    bounds.append(len(tags))
    return tuple(map(range, bounds[:-1], bounds[1:]))


def _variant(entry: Element) -> ResponseVariant:
    """A checked answer's variant as the full reader decides it (``codec.read_entry``): ``message`` when its message
    is a string, else ``reasoning`` when its reasoning is, else ``data``."""
    if _string(entry.message):
        return "message"
    return "reasoning" if _string(entry.reasoning) else "data"


_TOOL_TAGS = frozenset(("tool_call_request", "tool_call_response"))


def _turn(
    index: int,
    span: range,
    entries: list[Element],
    tags: list[str],
    *,
    ids: tuple[str, ...],
    origins: Sequence[IdOrigin],
) -> TurnFacts:
    """The turn's facts; each event's step as completeness reads it (``turn_facts.Step``)."""
    start, stop = span.start, span.stop
    kinds = tags[start:stop]
    steps: list[Step] = [
        (tag, entry.id if type(entry.id) is str else None, False)
        if tag in _TOOL_TAGS
        else (tag, None, tag == "chat_response" and _variant(entry) == "reasoning")
        for tag, entry in zip(kinds, entries[start:stop], strict=True)
        if tag in EVENTS
    ]
    head = start + kinds.index("turn_start") if steps and steps[0][0] == "turn_start" else None
    requests = kinds.count("chat_request")
    first_request = entries[start + kinds.index("chat_request")] if requests else None
    summary = source = None
    if head is not None:
        opening = entries[head]
        summary = opening.summary if type(opening.summary) is str else None
        source = _source(opening.metadata)
    fallback = mechanical_summary(_request_text(first_request.content)) if first_request is not None else None
    return TurnFacts(
        index,
        ids[head] if head is not None else None,
        origins[head] != "file" if head is not None else False,
        summary,
        source,
        fallback,
        requests,
        len(steps),
        steps_complete(steps),
    )


def _request_text(content: str | msgspec.Raw) -> str:
    """A request's text: the quick read decoded it; an ``_Entry`` holds it undecoded (a JSON string)."""
    return content if type(content) is str else str(_ANY.decode(content))


def _source(metadata: dict[str, Any] | UnsetType) -> str | None:
    source = metadata.get(SOURCE_KEY) if isinstance(metadata, dict) else None
    return decode_string(source) if isinstance(source, str) else None


def _first_turn_start(
    tags: list[str], identities: list[tuple[str, str]], ids: tuple[str, ...], reserved: set[str], conversation: str
) -> str | None:
    """The ID ``ensure_first_turn_start`` gives the first turn when a request comes before any ``turn_start``
    (none of the entries' ``ids`` nor a ``reserved`` one: each attempt looked for, the IDs not gathered in a set)."""
    if not _request_first(tags):
        return None
    request = next(p for p, tag in enumerate(tags) if tag == "chat_request")
    first_event = next(p for p, tag in enumerate(tags) if tag in EVENTS)
    inserted = (identities[request][0], "turn_start")
    origin = entry_origins(conversation, [*identities[:first_event], inserted])[-1]
    attempt = 0
    while (identifier := derived_id(origin, attempt)) in reserved or identifier in ids:
        attempt += 1
    return identifier
