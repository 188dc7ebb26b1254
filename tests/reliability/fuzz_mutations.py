"""Deterministic mutations of conversation files for the fuzz probe.

Every mutation is a function of a ``random.Random`` and the file's bytes, so a
case seed reproduces the same bytes. Structural mutations parse the file,
change one place and write it back with ``dump``, which can splice raw JSON
text (``Raw``) and objects with repeated keys (``Pairs``) that no JSON library
writes: ``NaN``, lone surrogates such as ``"\\ud800"``, numbers with thousands
of digits, nesting thousands deep.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EVENTS = "events.json"
BASE_CONFIG = "base_config.json"
METADATA = "metadata.json"


@dataclass(frozen=True)
class Raw:
    """JSON text spliced in as is."""

    text: str


@dataclass(frozen=True)
class Pairs:
    """An object whose keys may repeat."""

    items: tuple[tuple[str, Any], ...]


def dump(value: Any, indent: int = 0) -> str:
    """JP's layout (two-space indent), with ``Raw`` and ``Pairs`` written verbatim."""
    pad, inner = "  " * indent, "  " * (indent + 1)
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        value = Pairs(tuple(value.items()))
    if isinstance(value, Pairs):
        if not value.items:
            return "{}"
        body = ",\n".join(f"{inner}{_key(key)}: {dump(item, indent + 1)}" for key, item in value.items)
        return "{\n" + body + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + dump(item, indent + 1) for item in value) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def _key(key: str | Raw) -> str:
    return key.text if isinstance(key, Raw) else json.dumps(key, ensure_ascii=False)


def encode(value: Any) -> bytes:
    return (dump(value) + "\n").encode("utf-8", "surrogatepass")


# Places in a parsed document --------------------------------------------------------------------

Place = tuple[Any, Any]
"""A container and a key (list index or object key) naming one value in it."""

INTERESTING = (
    "type",
    "event_id",
    "request_id",
    "timestamp",
    "content",
    "message",
    "reasoning",
    "arguments",
    "summary",
    "metadata",
    "is_error",
    "id",
    "name",
    "title",
    "last_activated_at",
    "delta",
    "data",
)


def places(document: Any) -> list[Place]:
    """Every (container, key) pair in the document, in document order."""
    found: list[Place] = []
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                found.append((node, key))
                if isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                found.append((node, index))
                if isinstance(value, dict | list):
                    stack.append(value)
    return found


def pick_place(rng: random.Random, document: Any) -> Place | None:
    """A random place, half the time one whose key matters to turnmark."""
    everywhere = places(document)
    if not everywhere:
        return None
    if rng.random() < 0.5:
        keyed = [place for place in everywhere if place[1] in INTERESTING]
        if keyed:
            return rng.choice(keyed)
    return rng.choice(everywhere)


def pick_object(rng: random.Random, document: Any) -> dict[str, Any] | None:
    objects = [container[key] for container, key in places(document) if isinstance(container[key], dict)]
    if isinstance(document, dict):
        objects.append(document)
    return rng.choice(objects) if objects else None


def pick_entry(rng: random.Random, document: Any) -> dict[str, Any] | None:
    if isinstance(document, list):
        entries = [entry for entry in document if isinstance(entry, dict)]
        return rng.choice(entries) if entries else None
    return document if isinstance(document, dict) else None


# Values ---------------------------------------------------------------------------------------

SURROGATES = ("\\ud800", "\\udfff", "\\udc00", "\\udc00\\ud800", "\\ud83d", "x\\ud800y", "\\ud800\\u0000")
INVALID_UTF8 = (
    b"\xff",
    b"\xfe",
    b"\xc3\x28",
    b"\xa0\xa1",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xc0\xaf",
)
HOSTILE_TEXT = (
    "",
    " ",
    "\u0000",
    "\u001b[31mred\u001b[0m",
    "\u001b]0;title\u0007",
    "line one\nline two\r\nthree",
    "\u202eevil\u202c",
    "\u2028\u2029",
    "\x85\x9b",
    "../../etc/passwd",
    "ü" * 5,
    "😀" * 3,
    '<turn id="x">',
    "</request></turn>",
    "&amp;",
)
WRONG_TYPES: tuple[Any, ...] = (None, True, False, 0, -1, 1.5, "", "text", [], {}, [None], {"": None})
UNKNOWN_KINDS: tuple[Any, ...] = (
    "tool_call_progress",
    "",
    "TURN_START",
    " turn_start",
    "turn_start\u0000",
    "config_delta",
    "compaction",
    "unknown",
    5,
    None,
    ["chat_request"],
    {"type": "chat_request"},
)


def huge_number(rng: random.Random) -> Raw:
    choice = rng.randrange(9)
    if choice == 0:
        return Raw("1" + "0" * rng.choice((20, 310, 4301, 20_000)))
    if choice == 1:
        return Raw("-" + "9" * rng.choice((19, 20, 400, 5000)))
    if choice == 2:
        return Raw(rng.choice(("1e999999", "-1e999999", "1e-999999", "1.7976931348623159e308")))
    if choice == 3:
        return Raw("0." + "0" * 5000 + "1")
    if choice == 4:
        return Raw(rng.choice(("-0", "-0.0", "0e0", "1E+2")))
    if choice == 5:
        return Raw(str(2**63) if rng.random() < 0.5 else str(-(2**63) - 1))
    if choice == 6:
        return Raw(str(2**64))
    if choice == 7:
        return Raw("1." + "9" * 10_000)
    return Raw(str(rng.randrange(-(10**30), 10**30)))


def non_finite(rng: random.Random) -> Raw:
    return Raw(rng.choice(("NaN", "Infinity", "-Infinity", "nan", "inf")))


def surrogate_string(rng: random.Random, base: str = "") -> Raw:
    text = json.dumps(base, ensure_ascii=True)[1:-1]
    cut = rng.randrange(len(text) + 1)
    while 0 < cut < len(text) and text[cut - 1] == "\\":
        cut -= 1
    return Raw('"' + text[:cut] + rng.choice(SURROGATES) + text[cut:] + '"')


def deep(rng: random.Random) -> Raw:
    depth = rng.choice((64, 200, 1_000, 5_000, 100_000))
    if rng.random() < 0.5:
        return Raw("[" * depth + "]" * depth)
    return Raw('{"a":' * depth + "null" + "}" * depth)


def long_text(rng: random.Random) -> str:
    unit = rng.choice(("a", "word ", "ü", "\u001b[1m", "<", "\n"))
    return unit * rng.choice((4_001, 70_000, 1_000_000))


def hostile_value(rng: random.Random, current: Any) -> Any:
    """Some value that is wrong in a way this probe cares about."""
    kind = rng.randrange(8)
    if kind == 0:
        return non_finite(rng)
    if kind == 1:
        return surrogate_string(rng, current if isinstance(current, str) else "x")
    if kind == 2:
        return deep(rng)
    if kind == 3:
        return huge_number(rng)
    if kind == 4:
        return rng.choice(WRONG_TYPES)
    if kind == 5:
        return rng.choice(HOSTILE_TEXT)
    if kind == 6:
        return long_text(rng)
    return rng.choice(UNKNOWN_KINDS)


# Byte mutations --------------------------------------------------------------------------------

Mutation = Callable[[random.Random, bytes], tuple[bytes, str]]


def flip_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    if not data:
        return b"\xff", "flip in an empty file"
    buffer = bytearray(data)
    count = rng.choice((1, 1, 2, 4, 16))
    at = [rng.randrange(len(buffer)) for _ in range(count)]
    for position in at:
        buffer[position] ^= rng.randrange(1, 256)
    return bytes(buffer), f"flip {count} byte(s) at {at[:4]}"


def truncate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    cut = rng.randrange(len(data) + 1)
    return data[:cut], f"truncate to {cut} of {len(data)} bytes"


def invalid_utf8(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    bad = rng.choice(INVALID_UTF8)
    starts = [index + 3 for index in range(len(data)) if data[index : index + 3] == b': "']
    position = rng.choice(starts) if starts and rng.random() < 0.8 else rng.randrange(len(data) + 1)
    return data[:position] + bad + data[position:], f"insert {bad!r} at {position}"


def splice_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    kind = rng.randrange(6)
    if kind == 0 and data:
        start = rng.randrange(len(data))
        end = min(len(data), start + rng.choice((1, 10, 100, 1000)))
        return data[:start] + data[end:], f"delete bytes {start}..{end}"
    if kind == 1 and data:
        start = rng.randrange(len(data))
        end = min(len(data), start + rng.choice((10, 100, 1000)))
        at = rng.randrange(len(data) + 1)
        return data[:at] + data[start:end] + data[at:], f"copy bytes {start}..{end} to {at}"
    if kind == 2:
        return b"\xef\xbb\xbf" + data, "UTF-8 byte order mark"
    if kind == 3:
        tail = rng.choice((b"x", b"]", b"}", b",", b"\x00", b"[]", b"\n\n  \t"))
        return data + tail, f"trailing {tail!r}"
    if kind == 4:
        whole = rng.choice((b"", b" ", b"null", b"{}", b"[]", b'"x"', b"[[]]", b"[null]", b"0", b"[{}]", b"\x00"))
        return whole, f"whole file {whole!r}"
    noise = bytes(rng.randrange(256) for _ in range(rng.choice((1, 8, 64))))
    at = rng.randrange(len(data) + 1)
    return data[:at] + noise + data[at:], f"insert {len(noise)} random bytes at {at}"


# Structural mutations --------------------------------------------------------------------------


def _parsed(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


def replace_value(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    document = _parsed(data)
    place = pick_place(rng, document)
    if place is None:
        return encode(hostile_value(rng, None)), "whole document replaced"
    container, key = place
    value = hostile_value(rng, container[key])
    container[key] = value
    return encode(document), f"{key!r} = {_show(value)}"


def specific_value(maker: Callable[[random.Random, Any], Any], label: str) -> Mutation:
    def mutate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
        document = _parsed(data)
        place = pick_place(rng, document)
        if place is None:
            return encode(maker(rng, None)), f"{label}: whole document"
        container, key = place
        value = maker(rng, container[key])
        container[key] = value
        return encode(document), f"{label}: {key!r} = {_show(value)}"

    return mutate


def surrogate_key(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    document = _parsed(data)
    target = pick_object(rng, document)
    if target is None:
        return surrogate_string(rng, "x").text.encode(), "whole document is a string with a lone surrogate"
    key = rng.choice(list(target)) if target else "k"
    value = target.pop(key, None)
    target[Raw(surrogate_string(rng, key).text)] = value  # type: ignore[index]
    return encode(document), f"key {key!r} gets a lone surrogate"


def duplicate_key(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    document = _parsed(data)
    target = pick_entry(rng, document) if rng.random() < 0.7 else pick_object(rng, document)
    if not target:
        return data, "no object to give a duplicate key"
    items = list(target.items())
    key, value = rng.choice(items)
    other = rng.choice((value, hostile_value(rng, value), rng.choice(WRONG_TYPES), "changed"))
    position = rng.randrange(len(items) + 1)
    items.insert(position, (key, other))
    replacement = Pairs(tuple(items))
    _replace_object(document, target, replacement)
    return encode(replacement if document is target else document), f"duplicate key {key!r} = {_show(other)}"


def _replace_object(document: Any, target: dict[str, Any], replacement: Pairs) -> None:
    for container, key in places(document):
        if container[key] is target:
            container[key] = replacement
            return


def hostile_text(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A string value replaced by escapes, controls, markup or a long text: still valid JSON of the right type."""
    document = _parsed(data)
    strings = [(container, key) for container, key in places(document) if isinstance(container[key], str)]
    if not strings:
        return replace_value(rng, data)
    container, key = rng.choice(strings)
    value = rng.choice(HOSTILE_TEXT) if rng.random() < 0.7 else long_text(rng)
    if rng.random() < 0.5:
        value = container[key] + value
    container[key] = value
    return encode(document), f"{key!r} = {_show(value)}"


def wrong_type(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    document = _parsed(data)
    place = pick_place(rng, document)
    if place is None:
        return b"[]\n", "no place"
    container, key = place
    value = rng.choice(WRONG_TYPES)
    container[key] = value
    return encode(document), f"{key!r} = {value!r}"


def unknown_kind(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    document = _parsed(data)
    if not isinstance(document, list) or not document:
        return replace_value(rng, data)
    kind = rng.choice(UNKNOWN_KINDS)
    if rng.random() < 0.5:
        entry = pick_entry(rng, document)
        if entry is not None:
            entry["type"] = kind
            return encode(document), f"an entry's type = {kind!r}"
    made = {"timestamp": "2026-07-01 10:00:00.0", "type": kind, "payload": {"x": 1}}
    if rng.random() < 0.5:
        made["event_id"] = rng.choice(("zzzzzzz", "", "\u001b"))
    position = rng.randrange(len(document) + 1)
    document.insert(position, made)
    return encode(document), f"entry of type {kind!r} inserted at {position}"


def reshape_entries(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    document = _parsed(data)
    if not isinstance(document, list) or not document:
        return replace_value(rng, data)
    kind = rng.randrange(5)
    at = rng.randrange(len(document))
    if kind == 0:
        document.insert(rng.randrange(len(document) + 1), json.loads(json.dumps(document[at])))
        return encode(document), f"entry {at} copied"
    if kind == 1:
        del document[at]
        return encode(document), f"entry {at} deleted"
    if kind == 2:
        entry = document.pop(at)
        to = rng.randrange(len(document) + 1)
        document.insert(to, entry)
        return encode(document), f"entry {at} moved to {to}"
    if kind == 3:
        rng.shuffle(document)
        return encode(document), "entries shuffled"
    entry = document[at]
    if isinstance(entry, dict) and entry:
        key = rng.choice(list(entry))
        del entry[key]
        return encode(document), f"entry {at}: key {key!r} removed"
    return encode(document), "nothing to remove"


def link_chaos(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    document = _parsed(data)
    entries = [entry for entry in document if isinstance(entry, dict)] if isinstance(document, list) else []
    if not entries:
        return replace_value(rng, data)
    entry = rng.choice(entries)
    key = rng.choice(("event_id", "request_id"))
    others = [other.get("event_id") for other in entries if isinstance(other.get("event_id"), str)]
    choices: list[Any] = ["", "a" * 10_000, "zzzzzzz", "ABCDEFG", "\u001b[2J", "../x", rng.choice(WRONG_TYPES)]
    if others:
        choices.append(rng.choice(others))
    value = rng.choice(choices)
    entry[key] = value
    return encode(document), f"{key} = {_show(value)}"


def base64_chaos(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    document = _parsed(data)
    targets = [
        (container, key)
        for container, key in places(document)
        if key in ("arguments", "content", "metadata") and isinstance(container, dict)
    ]
    if not targets:
        return replace_value(rng, data)
    container, key = rng.choice(targets)
    value = rng.choice(
        (
            "!!!not base64!!!",
            "////",
            "gA==",
            "7aCA",
            "G1sybUo=",
            "AA==",
            "=" * 4,
            {"path": "gIGC"},
            {"x": ["AA==", {"y": "////"}]},
            "4oCu",
        )
    )
    container[key] = value
    return encode(document), f"{key} = {value!r}"


CONFIG_KEYS = (
    ("conversation", "turn_summary", "generate", "batch_size"),
    ("conversation", "turn_summary", "generate", "auto"),
    ("conversation", "turn_summary", "generate", "model"),
    ("conversation", "turn_summary", "generate", "model", "id"),
    ("conversation", "title", "generate", "model", "id"),
    ("assistant", "model", "id"),
    ("assistant", "model", "parameters"),
    ("providers", "llm", "aliases"),
    ("conversation", "turn_summary"),
)
LOCAL_MODELS = ("builtin/extractive", "ollama/x", "builtin/other", "nope", "a/b/c", "/", "ollama/", "")


def config_chaos(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A configuration key turnmark reads, set to something odd (only loopback or offline models)."""
    document = _parsed(data)
    if not isinstance(document, dict):
        document = {}
    path = rng.choice(CONFIG_KEYS)
    node = document
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    if path[-1] == "aliases":
        value: Any = rng.choice(
            (
                {"a": "b", "b": "a"},
                {"builtin/extractive": "ollama/x"},
                {"x": rng.choice(LOCAL_MODELS)},
                [1, 2],
                "aliases",
            )
        )
    elif path[-1] == "id":
        value = rng.choice((*LOCAL_MODELS, 5, None, surrogate_string(rng, "ollama/x"), "ollama/" + "m" * 10_000))
    else:
        value = hostile_value(rng, None) if rng.random() < 0.5 else rng.choice(WRONG_TYPES)
    node[path[-1]] = value
    return encode(document), f"config {'.'.join(path)} = {_show(value)}"


def _show(value: Any) -> str:
    text = value.text if isinstance(value, Raw) else repr(value)
    return text if len(text) <= 60 else f"{text[:40]}…({len(text)} chars)"


BYTE_MUTATIONS: dict[str, Mutation] = {
    "flip": flip_bytes,
    "truncate": truncate,
    "invalid_utf8": invalid_utf8,
    "splice": splice_bytes,
}
STRUCTURAL_MUTATIONS: dict[str, Mutation] = {
    "hostile_value": replace_value,
    "nan": specific_value(lambda rng, current: non_finite(rng), "nan"),
    "lone_surrogate": specific_value(
        lambda rng, current: surrogate_string(rng, current if isinstance(current, str) else "x"), "surrogate"
    ),
    "surrogate_key": surrogate_key,
    "deep_nesting": specific_value(lambda rng, current: deep(rng), "deep"),
    "huge_number": specific_value(lambda rng, current: huge_number(rng), "huge"),
    "duplicate_key": duplicate_key,
    "hostile_text": hostile_text,
    "wrong_type": wrong_type,
    "unknown_kind": unknown_kind,
    "reshape": reshape_entries,
    "links": link_chaos,
    "base64": base64_chaos,
    "config": config_chaos,
}
FOR_FILE: dict[str, tuple[str, ...]] = {
    EVENTS: (
        *(name for name in STRUCTURAL_MUTATIONS if name != "config"),
        *("hostile_text", "reshape", "links", "unknown_kind", "duplicate_key", "base64"),
    ),
    BASE_CONFIG: ("hostile_value", "nan", "lone_surrogate", "deep_nesting", "huge_number", "duplicate_key", "config"),
    METADATA: (
        *("hostile_value", "nan", "lone_surrogate", "surrogate_key", "huge_number", "duplicate_key", "wrong_type"),
        *("hostile_text", "hostile_text"),
    ),
}
"""The structural mutations for each file; the ones that keep it readable are listed twice for events."""


def mutate(rng: random.Random, name: str, data: bytes) -> tuple[bytes, list[str]]:
    """Apply one to three mutations to the file ``name``; return the bytes and what was done."""
    done: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        structural = FOR_FILE[name]
        try:
            _parsed(data)
            parses = True
        except (ValueError, RecursionError):
            parses = False
        if parses and rng.random() < 0.75:
            label = rng.choice(structural)
            mutation = STRUCTURAL_MUTATIONS[label]
        else:
            label = rng.choice(list(BYTE_MUTATIONS))
            mutation = BYTE_MUTATIONS[label]
        data, description = mutation(rng, data)
        done.append(f"{label}: {description}")
    return data, done
