"""The codec: lossless round trips, JP's variant rules, legacy format, and bad input as typed errors."""

from dataclasses import replace
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO, corpus_conversations
from tests.support.streams import TS, load, raw, request, stream_of
from turnmark.core.errors import InvalidEntry
from turnmark.core.stream.codec import read_entry, read_payload
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.kinds import EVENT_TAGS, wrapper_ids
from turnmark.core.stream.payloads import (
    ChatResponse,
    Compaction,
    ConfigDelta,
    ToolCallRequest,
    ToolCallResponse,
    Unknown,
)


def encode(value: object) -> bytes:
    return msgspec.json.format(msgspec.json.encode(value), indent=2) + b"\n"


def test_unknown_kinds_round_trip_verbatim_with_their_event_id_extracted() -> None:
    entry = {"type": "future_kind", "timestamp": TS, "event_id": "u1", "metadata": {"x": "not base64!"}, "z": [1]}
    stream = load([entry])
    assert stream.entries[0].event_id == "u1"
    assert stream.entries[0].payload == Unknown(
        {"type": "future_kind", "timestamp": TS, "metadata": {"x": "not base64!"}, "z": [1]}
    )
    assert raw(stream) == [entry]
    assert list(raw(stream)[0]) == list(entry)


def test_an_added_event_id_goes_first_on_an_unknown_entry() -> None:
    assert list(raw(load([{"type": "future_kind", "timestamp": TS}]))[0]) == ["event_id", "type", "timestamp"]


def test_extra_keys_on_known_kinds_are_kept_in_place() -> None:
    entry = {"timestamp": TS, "note": "mine", "type": "chat_request", "content": "x", "event_id": "r1"}
    stream = load([entry])
    assert raw(stream) == [entry]
    assert list(raw(stream)[0]) == list(entry)


def test_chat_response_variants_follow_jps_order_and_keep_the_loser() -> None:
    stream = load(
        [
            {"timestamp": TS, "type": "chat_response", "reasoning": "r", "message": "m"},
            {"timestamp": TS, "type": "chat_response", "message": 5, "data": 1},
            {"timestamp": TS, "type": "chat_response", "data": None},
        ]
    )
    payloads = [entry.payload for entry in stream.entries]
    assert payloads == [
        ChatResponse(TS, "message", "m"),
        ChatResponse(TS, "data", 1),
        ChatResponse(TS, "data", None),
    ]
    assert raw(stream)[0]["reasoning"] == "r"
    assert raw(stream)[1]["message"] == 5


def test_tool_fields_are_decoded_in_memory_and_encoded_on_disk() -> None:
    stream = load(
        [
            {
                "timestamp": TS,
                "type": "tool_call_request",
                "id": "c",
                "name": "n",
                "arguments": {"path": "YS5ycw==", "n": 2},
            },
            {"timestamp": TS, "type": "tool_call_response", "id": "c", "content": "hello world", "is_error": False},
        ]
    )
    assert stream.entries[0].payload == ToolCallRequest(TS, "c", "n", {"path": "a.rs", "n": 2})
    assert stream.entries[1].payload == ToolCallResponse(TS, "c", "hello world", False)
    assert raw(stream)[1]["content"] == "hello world", "an unchanged plaintext value is written as it was read"
    changed = stream.with_entries(
        [stream.entries[0], replace(stream.entries[1], payload=ToolCallResponse(TS, "c", "hello there", False))]
    )
    assert raw(changed)[1]["content"] == "aGVsbG8gdGhlcmU=", "a changed value is encoded as JP encodes it"


def test_strings_that_are_not_canonical_base64_are_written_back_exactly_as_read() -> None:
    entries = [
        {
            "event_id": "a000001",
            "timestamp": TS,
            "type": "tool_call_request",
            "id": "c",
            "name": "n",
            "arguments": {"url": "aHR0cHM6Ly9leGFtcGxlLmNvbS8_cT0-", "raw": "/w=="},
            "metadata": {"note": "PDw_Pz4-"},
        },
        {
            "event_id": "a000002",
            "timestamp": TS,
            "type": "tool_call_response",
            "id": "c",
            "content": "PDw_Pz4-Pz8_",
            "is_error": False,
            "metadata": {"bytes": "/w==", "plain": "typed by hand"},
        },
    ]
    assert raw(load(entries)) == entries


def test_timestamps_keep_their_exact_text() -> None:
    stamps = ["2026-04-10 17:04:20.531233001", "2023-01-01 00:00:00.0", "2026-04-10 17:04:20", "2023-01-01T00:00:00Z"]
    stream = load([{"timestamp": s, "type": "turn_start"} for s in stamps])
    assert [entry["timestamp"] for entry in raw(stream)] == stamps


def test_config_deltas_never_fail_and_stay_as_written() -> None:
    entries: list[dict[str, object]] = [
        {"type": "config_delta", "timestamp": "garbage", "delta": 5},
        {"type": "config_delta", "timestamp": TS},
    ]
    stream = load(entries)
    assert [entry.payload for entry in stream.entries] == [ConfigDelta(e) for e in entries]


def test_compactions_are_validated_and_kept() -> None:
    entry = {
        "type": "compaction",
        "timestamp": TS,
        "from_turn": 0,
        "to_turn": 5,
        "reasoning": "strip",
        "tool_calls": {"response": True, "policy": "strip", "request": False},
        "extra": 1,
    }
    payload = load([entry]).entries[0].payload
    assert isinstance(payload, Compaction)
    assert (payload.from_turn, payload.to_turn, payload.reasoning_strip) == (0, 5, True)
    assert payload.tool_calls is not None
    assert payload.tool_calls.response
    assert not payload.tool_calls.request
    assert raw(load([entry]))[0] == {"event_id": load([entry]).entries[0].event_id, **entry}


def test_a_legacy_file_round_trips_with_its_head_and_upgrades_to_the_current_format() -> None:
    entries = [
        {"type": "config_delta", "timestamp": TS, "delta": {"assistant": {"model": {"id": "google"}}}},
        {"event_id": "r1", "timestamp": TS, "type": "chat_request", "content": "x"},
    ]
    data = encode(entries)
    stream = ConversationStream.from_json(data, None, new_id=sequential_ids()).unwrap()
    assert stream.is_legacy
    assert stream.to_json() == data
    assert stream.file_index(0) == 1
    current = stream.upgraded()
    assert not current.is_legacy
    assert current.base_config_json() == encode({"assistant": {"model": {"id": "google"}}})
    assert current.to_json() == encode(entries[1:])


def test_a_flat_legacy_head_keeps_its_config_on_upgrade() -> None:
    data = encode([{"type": "config_delta", "timestamp": TS, "assistant": {"x": 1}}])
    stream = ConversationStream.from_json(data, None, new_id=sequential_ids()).unwrap()
    assert stream.upgraded().base_config == {"assistant": {"x": 1}}


def error_for(data: bytes, base_config: bytes | None = b"{}") -> str:
    return ConversationStream.from_json(data, base_config, new_id=sequential_ids()).failure().describe()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'[{"type": "turn_start",', "line 1, column 24: the JSON ends early (truncated file?)"),
        (b'[\n  {"type": }\n]', "line 2, column 12: invalid JSON: invalid character"),
        (b'["\xff"]', "line 1, column 3: invalid UTF-8"),
        (b'{"type": "turn_start"}', "top level: events.json must be a JSON array of entries"),
        (b'["x"]', "entry 0: must be a JSON object, found a string"),
        (b'[{"timestamp": "2026-01-01 00:00:00.0"}]', 'entry 0: missing "type"'),
        (b'[{"type": "chat_request", "content": "x"}]', 'entry 0 (chat_request): missing "timestamp"'),
        (b'[{"type": "future"}]', 'entry 0 (future): missing "timestamp"'),
        (b'[{"type": "turn_start", "timestamp": 5}]', 'entry 0 (turn_start): "timestamp" must be a timestamp'),
        (
            b'[{"type": "turn_start", "timestamp": "yesterday"}]',
            'entry 0 (turn_start): "timestamp" must be a timestamp',
        ),
        (
            b'[{"type": "chat_request", "timestamp": "2026-01-01 00:00:00.0", "content": 3}]',
            'entry 0 (chat_request): "content" must be a string, found a number',
        ),
        (
            b'[{"type": "tool_call_response", "timestamp": "2026-01-01 00:00:00.0", "id": "c", "content": "x"}]',
            'entry 0 (tool_call_response): missing "is_error"',
        ),
        (
            b'[{"type": "tool_call_response", "timestamp": "2026-01-01 00:00:00.0", '
            b'"id": "c", "content": "x", "is_error": "no"}]',
            'entry 0 (tool_call_response): "is_error" must be a boolean, found a string',
        ),
        (
            b'[{"type": "tool_call_request", "timestamp": "2026-01-01 00:00:00.0", '
            b'"id": "c", "name": "n", "arguments": null}]',
            'entry 0 (tool_call_request): "arguments" must be an object, found null',
        ),
        (
            b'[{"type": "chat_response", "timestamp": "2026-01-01 00:00:00.0"}]',
            'entry 0 (chat_response): needs one of "message", "reasoning" or "data"',
        ),
        (
            b'[{"type": "chat_response", "timestamp": "2026-01-01 00:00:00.0", "message": 5}]',
            'entry 0 (chat_response): "message" must be a string, found a number',
        ),
        (
            b'[{"type": "turn_start", "timestamp": "2026-01-01 00:00:00.0", "metadata": null}]',
            'entry 0 (turn_start): "metadata" must be an object, found null',
        ),
        (
            b'[{"type": "turn_start", "timestamp": "2026-01-01 00:00:00.0", "summary": 3}]',
            'entry 0 (turn_start): "summary" must be a string, found a number',
        ),
        (
            b'[{"type": "compaction", "timestamp": "2026-01-01 00:00:00.0", "from_turn": -1, "to_turn": 2}]',
            'entry 0 (compaction): "from_turn" must be a non-negative integer',
        ),
        (
            b'[{"type": "compaction", "timestamp": "2026-01-01 00:00:00.0", '
            b'"from_turn": 0, "to_turn": 2, "reasoning": "keep"}]',
            'entry 0 (compaction): "reasoning" must be "strip"',
        ),
        (
            b'[{"type": "compaction", "timestamp": "2026-01-01 00:00:00.0", '
            b'"from_turn": 0, "to_turn": 2, "tool_calls": {"policy": "strip"}}]',
            'entry 0 (compaction): "tool_calls" must be',
        ),
    ],
)
def test_bad_input_is_a_typed_error_naming_the_place(data: bytes, message: str) -> None:
    assert error_for(data).startswith(message)


def test_a_legacy_file_must_start_with_its_base_config() -> None:
    assert error_for(b"[]", None).startswith("entry 0: without base_config.json")
    assert error_for(b'[{"type": "turn_start", "timestamp": "2026-01-01 00:00:00.0"}]', None).startswith("entry 0:")


def test_legacy_entry_indices_count_the_head() -> None:
    data = encode([{"type": "config_delta", "timestamp": TS, "delta": {}}, {"type": "turn_start"}])
    assert error_for(data, None) == 'entry 1 (turn_start): missing "timestamp"'


def test_a_bad_base_config_is_named() -> None:
    failure = ConversationStream.from_json(b"[]", b"[1,", new_id=sequential_ids()).failure()
    assert failure.document == "base_config.json"
    assert ConversationStream.from_json(b"[]", b"[]", new_id=sequential_ids()).failure().document == "base_config.json"


def test_floats_and_big_integers_are_written_like_serde_json() -> None:
    entry = {"type": "future", "timestamp": TS, "values": [1e-7, 1.5, 1e16, 18446744073709551615, -0.0]}
    assert b"1e-7" in load([entry]).to_json()
    assert raw(load([entry]))[0]["values"][3] == 18446744073709551615


def test_a_new_payload_read_from_json_drops_the_ids_it_was_given() -> None:
    payload = read_payload(
        {"event_id": "theirs1", "request_id": "theirs2", "timestamp": TS, "type": "chat_response", "message": "m"}
    )
    stream = stream_of(request()).push(payload)
    assert stream.entries[1].event_id != "theirs1"
    assert stream.entries[1].request_id == stream.entries[0].event_id


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    deep = b'[{"type": "inquiry_response", "timestamp": "2026-01-01 00:00:00.0", "id": "q", "answer": ' + b"[" * 5000
    deep += b"]" * 5000 + b"}]"
    assert "nested too deeply" in error_for(deep)


WRAPPER_VALUES: list[object] = [msgspec.UNSET, None, "", "e1", 5, 0, [], {}, True, ["e1"]]
"""What a hand edit may leave in ``event_id`` or ``request_id`` (``UNSET``: no key)."""


def wrapper_reading(obj: dict[str, Any]) -> tuple[object, object]:
    """``read_entry``'s reading of the wrapper IDs, and the long way's (``wrapper_ids`` on whatever is there)."""
    read = read_entry(obj, 0)
    tag = obj["type"] if isinstance(obj["type"], str) else ""
    return (read.written_id, read.request_id, read.layout.raw), wrapper_ids(
        obj.get("event_id", msgspec.UNSET), obj.get("request_id", msgspec.UNSET), tag
    )


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(["turn_start", "chat_request", "chat_response", "tool_call_request", "tool_call_response"]),
    event_id=st.sampled_from(WRAPPER_VALUES),
    request_id=st.sampled_from(WRAPPER_VALUES),
)
def test_the_wrapper_ids_read_as_the_rule_reads_them(kind: str, event_id: object, request_id: object) -> None:
    """``read_entry``'s quick ways (plain IDs; no wrapper keys at all, JP's older files) give what
    ``wrapper_ids`` gives, whatever a hand edit left there (RFD 097/098's letter)."""
    bodies: dict[str, dict[str, object]] = {
        "turn_start": {},
        "chat_request": {"content": "Fix it"},
        "chat_response": {"message": "Done."},
        "tool_call_request": {"id": "c1", "name": "fs_read_file", "arguments": {}},
        "tool_call_response": {"id": "c1", "content": "b2s=", "is_error": False},
    }
    obj: dict[str, Any] = {"type": kind, "timestamp": TS, **bodies[kind]}
    for key, value in (("event_id", event_id), ("request_id", request_id)):
        if value is not msgspec.UNSET:
            obj[key] = value
    fast, rule = wrapper_reading(obj)
    assert fast == rule


def test_every_stored_entry_reads_its_wrapper_ids_as_the_rule_does() -> None:
    """The same on every element of every fixture and corpus conversation (legacy and current)."""
    read = 0
    stored = [*REPO.glob("fixtures/*/.jp/conversations/*/events.json")]
    for path in [*stored, *(folder / "events.json" for folder in corpus_conversations())]:
        elements = msgspec.json.decode(path.read_bytes())
        for obj in elements if isinstance(elements, list) else []:
            if isinstance(obj, dict) and obj.get("type") in EVENT_TAGS and "timestamp" in obj:
                try:
                    fast, rule = wrapper_reading(obj)
                except InvalidEntry:
                    continue
                assert fast == rule, (path, obj.get("type"))
                read += 1
    assert read > 100
