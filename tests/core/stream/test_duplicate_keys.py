"""Load's one-pass duplicate-key check agrees with the slow reader that keeps every pair."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.duplicate_keys import (
    DuplicateKey,
    KeysWrittenTwice,
    duplicate_keys,
    found_at_load,
    key_count,
    key_ends,
    keys_written,
)
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_document import decode_entries, decode_entry
from turnmark.core.stream.payloads import ChatRequest

TEXT = st.text(alphabet='ab":\\ é\n{}', max_size=8)
SPACE = st.sampled_from(["", " ", "\n  ", "\t", "\r\n"])


def fast(events: bytes) -> tuple[DuplicateKey, ...]:
    raws = decode_entries(events, "events.json")
    assert raws is not None
    keys = [key_count(decode_entry(raw, events, "events.json")) for raw in raws]
    return found_at_load(events, key_ends(events), raws, keys)


@st.composite
def written(draw: st.DrawFn, depth: int = 0) -> str:
    """A JSON value as text, objects with keys that may repeat, laid out with any whitespace."""
    kind = draw(st.sampled_from(["string", "number", "object", "array"] if depth < 3 else ["string", "number"]))
    if kind == "string":
        text, ascii_only, quote = draw(TEXT), draw(st.booleans()), draw(st.sampled_from(['\\"', "\\u0022"]))
        return '"' + "".join(quote if c == '"' else json.dumps(c, ensure_ascii=ascii_only)[1:-1] for c in text) + '"'
    if kind == "number":
        return str(draw(st.integers(-5, 5)))
    if kind == "array":
        return "[" + ",".join(draw(st.lists(written(depth + 1), max_size=3))) + "]"
    return written_object(draw, depth)


def written_object(draw: st.DrawFn, depth: int) -> str:
    pairs = draw(st.lists(st.tuples(st.sampled_from(["a", "b", 'k":', "a\\"]), written(depth + 1)), max_size=4))
    return (
        "{"
        + ",".join(f"{draw(SPACE)}{json.dumps(key)}{draw(SPACE)}:{draw(SPACE)}{value}" for key, value in pairs)
        + "}"
    )


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    entries = [written_object(draw, 0) for _ in range(draw(st.integers(0, 4)))]
    return ("[" + ",\n".join(entries) + "]").encode()


@settings(max_examples=400, deadline=None)
@given(documents())
def test_the_fast_path_finds_exactly_what_the_slow_reader_finds(events: bytes) -> None:
    assert fast(events) == duplicate_keys(events)


def test_strings_that_look_like_keys_are_read_again_and_are_not_keys() -> None:
    events = b'[{"type": "x", "content": "{\\"a\\": 1, \\"a\\": 2}"}, {"b": 1, "c": {"b": 2, "b" : 3}}]'
    assert key_ends(events) > 6
    assert fast(events) == duplicate_keys(events) == (DuplicateKey(1, "b", "c"),)


@pytest.mark.parametrize("count_keys", [True, False])
def test_a_loaded_stream_carries_the_keys_written_twice(count_keys: bool) -> None:
    """Counted as the file is read or not (a read that never saves: ``find``'s), the keys are found when asked."""
    events = (
        b'[{"type": "config_delta", "timestamp": "2026-01-02 10:00:00.0", "delta": {}},\n'
        b' {"type": "chat_request", "timestamp": "2026-01-02 10:00:01.0", "content": "a", "content": "b"}]'
    )
    read = ConversationStream.read_json(events, None, count_keys=count_keys).unwrap()
    stream = ConversationStream.from_read(read, new_id=sequential_ids())
    assert stream.doubled_keys == duplicate_keys(events) == (DuplicateKey(1, "content", "(top)"),)
    payload = stream.entries[0].payload
    assert isinstance(payload, ChatRequest)
    assert payload.content == "b"


@settings(max_examples=300, deadline=None)
@given(documents())
def test_the_key_ends_less_the_escaped_quotes_are_never_fewer_than_the_keys_written(events: bytes) -> None:
    raws = decode_entries(events, "events.json")
    assert raws is not None
    keys = sum(key_count(decode_entry(raw, events, "events.json")) for raw in raws)
    assert keys_written(events, key_ends(events)) >= keys + len(duplicate_keys(events))


@settings(max_examples=400, deadline=None)
@given(documents())
def test_keys_counted_at_load_find_what_the_slow_reader_finds(events: bytes) -> None:
    """Issue 40: a small file's keys are counted as it is read, and its bytes decoded again only when the
    counts differ; the keys found are the slow reader's, and the long way's (nothing counted)."""
    keys = sum(key_count(value) for value in json.loads(events))
    assert KeysWrittenTwice.later(events, keys).found() == duplicate_keys(events)
    assert KeysWrittenTwice.later(events).found() == duplicate_keys(events)
