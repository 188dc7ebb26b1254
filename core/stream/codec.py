"""Reading and writing ``events.json`` entries exactly as JP does, without losing a byte.

An unchanged entry is written back with its original key order and any keys
its kind does not define; a changed entry keeps that order for the keys it
still has. ``event_id`` comes first and ``request_id`` second when they are
new. JSON is pretty-printed with two spaces and a trailing newline, like
``serde_json::to_vec_pretty`` (msgspec formats floats the same way).
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from turnmark.core.errors import InvalidEntry
from turnmark.core.stream.entries import Entry, IdOrigin, Layout
from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.stream.kinds import LINKABLE_TAGS, RawIds, wrapper_ids
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    Compaction,
    ConfigDelta,
    InquiryRequest,
    InquiryResponse,
    Payload,
    ResponseVariant,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
    Unknown,
)
from turnmark.core.stream.quick_init import quick_init
from turnmark.core.stream.storage_encoding import decode_leaves, decode_string, encode_leaves, encode_string
from turnmark.core.stream.timestamps import is_timestamp

WRAPPER_KEYS = ("event_id", "request_id")


@quick_init
@dataclass(frozen=True, slots=True)
class ReadEntry:
    """An entry as read, before the stream settles its ``event_id``."""

    written_id: str | None
    request_id: str | None
    payload: Payload
    layout: Layout

    def settled(self, event_id: str, origin: IdOrigin) -> Entry:
        """The entry with the ID the stream settled (``event_ids.plan_loaded_ids``); a derived ID stands in for
        an ``event_id`` that is not a string (kept as written until repaired)."""
        if origin == "assigned" and self.layout.raw and self.layout.raw[0][0] == "event_id":
            origin = "stand_in"
        return Entry(event_id, self.payload, self.request_id, origin, self.layout)


# Reading entries ----------------------------------------------------------------------------------


def _type_name(value: Json) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


_NOTHING_KEPT: frozenset[str] = frozenset()
_PLAIN_LAYOUTS: dict[tuple[str, ...], Layout] = {}
SHARED_LAYOUTS = 4096
"""How many key orders have one ``Layout`` shared by every entry written that way (a long file has a few)."""


def _plain_layout(keys: tuple[str, ...]) -> Layout:
    """The layout of an entry with only its kind's keys, shared by the entries written in the same order."""
    layout = _PLAIN_LAYOUTS.get(keys)
    if layout is None:
        layout = Layout(keys)
        if len(_PLAIN_LAYOUTS) < SHARED_LAYOUTS:
            _PLAIN_LAYOUTS[keys] = layout
    return layout


class _Reader:
    """Reads the known fields of one entry and remembers which keys it consumed."""

    __slots__ = ("consumed", "index", "kept", "obj", "output", "tag")

    def __init__(self, obj: JsonObject, index: int, tag: str) -> None:
        self.obj = obj
        self.index = index
        self.tag = tag
        self.consumed: list[str] = ["timestamp", "type"]
        self.kept: set[str] | None = None
        self.output: str | None = None

    def keeping(self) -> set[str]:
        """The strings read as written so far (made on first use: most entries have none to keep)."""
        if self.kept is None:
            self.kept = set()
        return self.kept

    def fail(self, message: str) -> InvalidEntry:
        return InvalidEntry(message, self.index, self.tag)

    def timestamp(self) -> str:
        value = self.obj.get("timestamp")
        if type(value) is not str or not is_timestamp(value):
            raise self.fail(f'"timestamp" must be a timestamp like "2026-04-10 17:04:20.531233", found {value!r}')
        return value

    def _get(self, key: str, kind: type, expected: str, required: bool) -> Any:
        obj = self.obj
        if key not in obj:
            if required:
                raise self.fail(f'missing "{key}"')
            return None
        value = obj[key]
        if value is None and not required:
            return None  # an explicit null is kept as an extra key, so it survives a save
        if type(value) is not kind:
            raise self.fail(f'"{key}" must be {expected}, found {_type_name(value)}')
        self.consumed.append(key)
        return value

    def string(self, key: str) -> str:
        value: str = self._get(key, str, "a string", True)
        return value

    def optional_string(self, key: str) -> str | None:
        value: str | None = self._get(key, str, "a string", False)
        return value

    def boolean(self, key: str) -> bool:
        value: bool = self._get(key, bool, "a boolean", True)
        return value

    def object(self, key: str) -> JsonObject:
        value: JsonObject = self._get(key, dict, "an object", True)
        return value

    def optional_object(self, key: str) -> JsonObject | None:
        value: JsonObject | None = self._get(key, dict, "an object", False)
        return value

    def any(self, key: str) -> Json:
        if key not in self.obj:
            raise self.fail(f'missing "{key}"')
        self.consumed.append(key)
        return self.obj[key]

    def metadata(self) -> JsonObject | None:
        obj = self.obj
        if "metadata" not in obj:
            return None
        value = obj["metadata"]
        if type(value) is not dict:
            raise self.fail(f'"metadata" must be an object, found {_type_name(value)}')
        self.consumed.append("metadata")
        decoded: JsonObject = decode_leaves(value, self.keeping())
        return decoded

    def layout(self, wrapper_keys: int) -> Layout:
        obj = self.obj
        kept = frozenset(self.kept) if self.kept else _NOTHING_KEPT
        output = self.output
        if len(obj) == len(self.consumed) + wrapper_keys:
            if not kept and output is None:
                return _plain_layout(tuple(obj))
            return Layout(_plain_layout(tuple(obj)).keys, kept=kept, output=output)
        consumed = {*self.consumed, *WRAPPER_KEYS}
        extra = tuple((key, value) for key, value in obj.items() if key not in consumed)
        return Layout(tuple(obj), extra, kept, output)


def _turn_start(f: _Reader) -> Payload:
    return TurnStart(f.timestamp(), f.optional_string("summary"), f.metadata())


def _chat_request(f: _Reader) -> Payload:
    return ChatRequest(
        f.timestamp(), f.string("content"), f.optional_object("schema"), f.optional_string("author"), f.metadata()
    )


def _chat_response(f: _Reader) -> Payload:
    timestamp = f.timestamp()
    obj = f.obj
    variant: ResponseVariant
    if type(obj.get("message")) is str:
        variant = "message"
    elif type(obj.get("reasoning")) is str:
        variant = "reasoning"
    elif "data" in obj:
        variant = "data"
    else:
        for key in ("message", "reasoning"):
            if key in obj:
                raise f.fail(f'"{key}" must be a string, found {_type_name(obj[key])}')
        raise f.fail('needs one of "message", "reasoning" or "data"')
    return ChatResponse(timestamp, variant, f.any(variant), f.metadata())


def _tool_call_request(f: _Reader) -> Payload:
    timestamp, call_id, name = f.timestamp(), f.string("id"), f.string("name")
    if "arguments" in f.obj and f.obj["arguments"] is None:
        raise f.fail('"arguments" must be an object, found null')
    arguments = f.optional_object("arguments")
    return ToolCallRequest(
        timestamp, call_id, name, None if arguments is None else decode_leaves(arguments, f.keeping()), f.metadata()
    )


def _tool_call_response(f: _Reader) -> Payload:
    timestamp, call_id = f.timestamp(), f.string("id")
    stored = f.output = f.string("content")
    return ToolCallResponse.read(timestamp, call_id, stored, f.boolean("is_error"), f.metadata(), decode=decode_string)


def _inquiry_request(f: _Reader) -> Payload:
    timestamp, inquiry_id = f.timestamp(), f.string("id")
    source, question = f.object("source"), f.object("question")
    if type(question.get("text")) is not str:
        raise f.fail('"question.text" must be a string')
    return InquiryRequest(timestamp, inquiry_id, source, question, f.metadata())


def _inquiry_response(f: _Reader) -> Payload:
    return InquiryResponse(f.timestamp(), f.string("id"), f.any("answer"), f.metadata())


def _validate_compaction(f: _Reader) -> None:
    f.timestamp()
    for key in ("from_turn", "to_turn"):
        value = f.obj.get(key)
        if type(value) is not int or value < 0:
            raise f.fail(f'"{key}" must be a non-negative integer, found {value!r}')
    summary = f.obj.get("summary")
    if summary is not None and not (isinstance(summary, dict) and isinstance(summary.get("summary"), str)):
        raise f.fail('"summary" must be {"summary": "<text>"}')
    reasoning = f.obj.get("reasoning")
    if reasoning is not None and reasoning != "strip":
        raise f.fail(f'"reasoning" must be "strip", found {reasoning!r}')
    policy = f.obj.get("tool_calls")
    if policy is not None:
        valid_strip = (
            isinstance(policy, dict)
            and policy.get("policy") == "strip"
            and isinstance(policy.get("request"), bool)
            and isinstance(policy.get("response"), bool)
        )
        valid_omit = isinstance(policy, dict) and policy.get("policy") == "omit"
        if not (valid_strip or valid_omit):
            raise f.fail(
                '"tool_calls" must be {"policy": "omit"} or {"policy": "strip", "request": bool, "response": bool}'
            )


_EVENT_READERS: dict[str, Callable[[_Reader], Payload]] = {
    "turn_start": _turn_start,
    "chat_request": _chat_request,
    "chat_response": _chat_response,
    "tool_call_request": _tool_call_request,
    "tool_call_response": _tool_call_response,
    "inquiry_request": _inquiry_request,
    "inquiry_response": _inquiry_response,
}


def _wrapper_ids(obj: JsonObject, tag: str) -> tuple[str | None, str | None, RawIds]:
    return wrapper_ids(obj.get("event_id", msgspec.UNSET), obj.get("request_id", msgspec.UNSET), tag)


def read_entry(obj: Json, index: int) -> ReadEntry:
    """Read one element of the events array."""
    if type(obj) is not dict:
        raise InvalidEntry(f"must be a JSON object, found {_type_name(obj)}", index)
    if "type" not in obj:
        raise InvalidEntry('missing "type"', index)
    raw_tag = obj["type"]
    tag = raw_tag if type(raw_tag) is str else ""
    if "timestamp" not in obj:
        raise InvalidEntry('missing "timestamp"', index, tag or None)
    reader = _EVENT_READERS.get(tag)
    if reader is not None:
        written_id = obj.get("event_id")
        request_id = obj.get("request_id")
        raw: tuple[tuple[str, Json], ...] = ()
        wrappers = ("event_id" in obj) + ("request_id" in obj)
        plain = type(written_id) is str and written_id
        if wrappers and (
            not plain
            or not (
                (type(request_id) is str and request_id and tag in LINKABLE_TAGS)
                or (request_id is None and "request_id" not in obj)
            )
        ):
            written_id, request_id, raw = _wrapper_ids(obj, tag)
        fields = _Reader(obj, index, tag)
        payload = reader(fields)
        layout = fields.layout(wrappers)
        return ReadEntry(written_id, request_id, payload, replace(layout, raw=raw) if raw else layout)
    written_id, request_id, raw = _wrapper_ids(obj, tag)
    if tag not in ("compaction", "config_delta"):
        rest = {k: v for k, v in obj.items() if k != "event_id"}
        odd_id = tuple(item for item in raw if item[0] == "event_id")
        return ReadEntry(written_id, None, Unknown(rest), Layout(tuple(obj), raw=odd_id))
    rest = {k: v for k, v in obj.items() if k not in WRAPPER_KEYS}
    layout = Layout(tuple(obj), raw=raw)
    if tag == "compaction":
        _validate_compaction(_Reader(obj, index, tag))
        return ReadEntry(written_id, request_id, Compaction(rest), layout)
    return ReadEntry(written_id, request_id, ConfigDelta(rest), layout)


def read_payload(obj: Json) -> Payload:
    """Read a new payload from JSON; any ``event_id`` or ``request_id`` on it is ignored (the stream owns both)."""
    return read_entry(obj, 0).payload


# Writing entries ----------------------------------------------------------------------------------


def _output(content: str, layout: Layout) -> str:
    """A changed tool response's output: as read when it was read as written and its text is unchanged."""
    read = layout.output
    if read is not None and content == read and decode_string(read) is read:
        return read
    return encode_string(content, layout.kept)


def _event_fields(payload: Payload, layout: Layout) -> JsonObject:
    kept = layout.kept
    match payload:
        case TurnStart(timestamp, summary, metadata):
            out: JsonObject = {"timestamp": timestamp, "type": "turn_start"}
            if summary is not None:
                out["summary"] = summary
        case ChatRequest(timestamp, content, schema, author, metadata):
            out = {"timestamp": timestamp, "type": "chat_request", "content": content}
            if schema is not None:
                out["schema"] = schema
            if author is not None:
                out["author"] = author
        case ChatResponse(timestamp, variant, value, metadata):
            out = {"timestamp": timestamp, "type": "chat_response", variant: value}
        case ToolCallRequest(timestamp, call_id, name, arguments, metadata):
            out = {"timestamp": timestamp, "type": "tool_call_request", "id": call_id, "name": name}
            if arguments is not None:
                out["arguments"] = encode_leaves(arguments, kept)
        case ToolCallResponse(timestamp=timestamp, id=call_id, is_error=is_error, metadata=metadata):
            stored = payload.stored
            out = {
                "timestamp": timestamp,
                "type": "tool_call_response",
                "id": call_id,
                "content": stored if stored is not None else _output(payload.content, layout),
                "is_error": is_error,
            }
        case InquiryRequest(timestamp, inquiry_id, source, question, metadata):
            out = {
                "timestamp": timestamp,
                "type": "inquiry_request",
                "id": inquiry_id,
                "source": source,
                "question": question,
            }
        case InquiryResponse(timestamp, inquiry_id, answer, metadata):
            out = {"timestamp": timestamp, "type": "inquiry_response", "id": inquiry_id, "answer": answer}
        case _:
            raise TypeError(f"not a conversation event: {payload!r}")
    if metadata is not None:
        out["metadata"] = encode_leaves(metadata, kept)
    return out


def write_entry(entry: Entry) -> JsonObject:
    """The JSON object for one entry, in its original key order where it has one."""
    out: JsonObject = {"event_id": entry.event_id}
    if entry.request_id:
        out["request_id"] = entry.request_id
    if entry.layout.raw:
        for key in WRAPPER_KEYS:
            odd, value = entry.written(key)
            if odd:
                out[key] = value
    payload = entry.payload
    if isinstance(payload, ConfigDelta | Compaction):
        out.update((key, value) for key, value in payload.fields.items() if key not in WRAPPER_KEYS)
    elif isinstance(payload, Unknown):
        out.update((key, value) for key, value in payload.fields.items() if key != "event_id")
    else:
        out.update(_event_fields(payload, entry.layout))
        for key, value in entry.layout.extra:
            out.setdefault(key, value)
    original = entry.layout.keys
    if not original or tuple(out) == original:
        return out
    return _in_original_order(out, original)


def _in_original_order(out: JsonObject, original: tuple[str, ...]) -> JsonObject:
    """Keep the original order; new wrapper keys go first, other new keys before ``metadata`` (or last)."""
    keys = tuple(out)
    order = _ORDERS.get((keys, original))
    if order is None:
        order = _order(keys, original)
        if len(_ORDERS) < SHARED_LAYOUTS:
            _ORDERS[keys, original] = order
    return out if order == keys else {key: out[key] for key in order}


_ORDERS: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]] = {}
"""The order of each pair of key orders (written now, as read) met so far: a long file has a few."""


def _order(keys: tuple[str, ...], original: tuple[str, ...]) -> tuple[str, ...]:
    known = set(original)
    new_keys = [key for key in keys if key not in known]
    front = [key for key in WRAPPER_KEYS if key in new_keys]
    added = [key for key in new_keys if key not in front]
    order = front
    for key in original:
        if key == "metadata":
            order += [new for new in added if new != "metadata"]
            added = [new for new in added if new == "metadata"]
        if key in keys:
            order.append(key)
    return tuple(order + added)
