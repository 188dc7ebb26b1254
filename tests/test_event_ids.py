"""RFD 097: event IDs (Phase 1), stream-assigned IDs (Phase 2) and load-time repair (Phase 3)."""

import re

import pytest

from turnmark.core.event_ids import (
    IdSourceExhausted,
    fresh_id,
    from_list,
    ids_from_random_bytes,
    plan_loaded_ids,
    sequential_ids,
)
from turnmark.core.payloads import ChatRequest, TurnStart

from .streams import TS, load, message, raw, request, stream_of


def test_generated_ids_follow_the_convention_and_differ() -> None:
    source = ids_from_random_bytes(__import__("os").urandom)
    first, second = source(), source()
    assert re.fullmatch(r"[0-9a-z]{7}", first)
    assert first != second


def test_generation_rejects_biased_bytes() -> None:
    source = ids_from_random_bytes(lambda n: bytes([255, 252, 0, 35, 36, 71, 1, 2, 3, 4, 5, 6, 7, 8]), batch=14)
    assert source() == "0z0z123"
    assert source() == "456780z", "the rest of the batch is used before asking for more"


def test_non_format_ids_are_kept_as_written() -> None:
    stream = load([{"event_id": "Not-The_Format!", "timestamp": TS, "type": "chat_request", "content": "x"}])
    assert stream.entries[0].event_id == "Not-The_Format!"
    assert not stream.entries[0].transient_id
    assert raw(stream)[0]["event_id"] == "Not-The_Format!"


@pytest.mark.parametrize("written", [None, ""])
def test_missing_or_empty_ids_are_assigned_at_load_and_marked_transient(written: str | None) -> None:
    entry = {"timestamp": TS, "type": "chat_request", "content": "x"}
    if written is not None:
        entry["event_id"] = written
    stream = load([entry])
    assert stream.entries[0].event_id == "e000001"
    assert stream.entries[0].id_origin == "assigned"
    assert raw(stream)[0]["event_id"] == "e000001"


def test_a_legacy_file_gets_fresh_ids_on_every_load_until_saved() -> None:
    entries = [{"timestamp": TS, "type": "turn_start"}, {"timestamp": TS, "type": "chat_request", "content": "x"}]
    first = load(entries, ids_from_random_bytes(__import__("os").urandom))
    second = load(entries, ids_from_random_bytes(__import__("os").urandom))
    assert [e.event_id for e in first.entries] != [e.event_id for e in second.entries]
    saved = load(raw(first))
    assert [e.event_id for e in saved.entries] == [e.event_id for e in first.entries]
    assert not any(entry.transient_id for entry in saved.entries)


def test_duplicates_are_repaired_on_the_later_occurrence_and_remembered() -> None:
    entries = [
        {"event_id": "aaaaaaa", "timestamp": TS, "type": "chat_request", "content": "first"},
        {"event_id": "bbbbbbb", "timestamp": TS, "type": "chat_response", "message": "m"},
        {"event_id": "aaaaaaa", "timestamp": TS, "type": "chat_request", "content": "copy"},
    ]
    stream = load(entries)
    assert [e.event_id for e in stream.entries] == ["aaaaaaa", "bbbbbbb", "e000001"]
    assert stream.entries[2].id_origin == "repaired"
    assert stream.duplicated_ids == frozenset({"aaaaaaa"})
    assert stream.id_repairs == ((2, "aaaaaaa"),)
    reloaded = load(raw(stream))
    assert reloaded.duplicated_ids == frozenset()
    assert len({e.event_id for e in reloaded.entries}) == 3


def test_an_assigned_id_never_collides_with_an_id_written_later_in_the_file() -> None:
    entries = [
        {"timestamp": TS, "type": "chat_request", "content": "no id"},
        {"event_id": "e000001", "timestamp": TS, "type": "chat_response", "message": "m"},
    ]
    stream = load(entries, sequential_ids())
    assert [e.event_id for e in stream.entries] == ["e000002", "e000001"]
    assert stream.duplicated_ids == frozenset()


def test_fresh_id_retries_on_collision() -> None:
    assert fresh_id(from_list(["taken01", "", "taken01", "free001"]), {"taken01"}.__contains__) == "free001"


def test_fresh_id_gives_up_on_a_source_that_never_yields_an_unused_id() -> None:
    with pytest.raises(IdSourceExhausted):
        fresh_id(lambda: "same", {"same"}.__contains__)


def test_live_insertion_never_exposes_a_duplicate_id() -> None:
    stream = stream_of(TurnStart(TS), new_id=from_list(["aaaaaaa", "aaaaaaa", "bbbbbbb", "aaaaaaa", "ccccccc"]))
    stream = stream.push(ChatRequest(TS, "x")).push(message())
    assert [e.event_id for e in stream.entries] == ["aaaaaaa", "bbbbbbb", "ccccccc"]


def test_ids_supplied_on_new_entries_are_ignored() -> None:
    loaded = load([{"event_id": "keepme1", "timestamp": TS, "type": "chat_request", "content": "x"}])
    copied = stream_of(request()).push(loaded.entries[0])
    assert copied.entries[1].event_id != "keepme1"
    assert copied.entries[1].id_origin == "inserted"


def test_plan_reports_what_load_did() -> None:
    plan = plan_loaded_ids(["a", None, "a", "b", "b"], sequential_ids("x"))
    assert plan.ids == ("a", "x000001", "x000002", "b", "x000003")
    assert plan.origins == ("file", "assigned", "repaired", "file", "repaired")
    assert plan.duplicated == frozenset({"a", "b"})
    assert plan.repairs == ((2, "a"), (4, "b"))


def test_ids_inside_the_raw_fields_of_a_new_payload_are_dropped() -> None:
    from turnmark.core.payloads import ConfigDelta, Unknown

    stream = stream_of(TurnStart(TS))
    stream = stream.push(
        ConfigDelta({"event_id": "e000001", "request_id": "x", "type": "config_delta", "timestamp": TS})
    )
    stream = stream.push(Unknown({"event_id": "e000001", "type": "future", "timestamp": TS}))
    written = [entry["event_id"] for entry in raw(stream)]
    assert written == [entry.event_id for entry in stream.entries]
    assert len(set(written)) == 3
    assert "request_id" not in raw(stream)[1]


def test_a_legacy_format_file_gets_ids_assigned_at_load() -> None:
    import msgspec

    from turnmark.core.stream import ConversationStream

    head = {"type": "config_delta", "timestamp": TS, "delta": {}}
    data = msgspec.json.encode(
        [head, {"timestamp": TS, "type": "turn_start"}, {"timestamp": TS, "type": "chat_request", "content": "x"}]
    )
    stream = ConversationStream.from_json(data, None, new_id=sequential_ids()).unwrap()
    assert stream.is_legacy
    assert [(e.event_id, e.id_origin) for e in stream.entries] == [("e000001", "assigned"), ("e000002", "assigned")]
    assert "event_id" not in raw(stream)[0], "the base config head is not an entry"


def test_a_new_id_never_equals_a_dangling_request_id() -> None:
    loaded = load(
        [{"event_id": "r1", "request_id": "e000001", "timestamp": TS, "type": "chat_response", "message": "m"}]
    )
    pushed = loaded.push(request())
    assert pushed.entries[1].event_id == "e000002"
