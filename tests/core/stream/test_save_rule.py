"""The save rule on plain values: what it refuses, the line it says, and that ``check`` agrees with it."""

from __future__ import annotations

import json

from hypothesis import given, settings
from returns.result import Success

from tests.conftest import FIXTURES
from tests.core.links.test_projection_properties import hand_edited
from turnmark.core.links.check import check_report
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.duplicate_keys import duplicate_keys
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_value import Json
from turnmark.core.stream.save_rule import refusal, save_blockers

BASE = b'{"assistant": {"model": {"id": "ollama/x"}}}'


def stream_of(events: bytes) -> ConversationStream:
    return ConversationStream.from_json(events, BASE, new_id=sequential_ids()).unwrap()


def copied_request() -> bytes:
    entries: list[Json] = [
        {"event_id": "t0turn0", "timestamp": "2026-06-01 10:00:00.0", "type": "turn_start"},
        {"event_id": "r0req00", "timestamp": "2026-06-01 10:00:00.1", "type": "chat_request", "content": "a"},
        {"event_id": "r0req00", "timestamp": "2026-06-01 10:00:00.2", "type": "chat_request", "content": "b"},
        {
            "event_id": "m0msg00",
            "request_id": "r0req00",
            "timestamp": "2026-06-01 10:00:01.0",
            "type": "chat_response",
            "message": "c",
        },
    ]
    return json.dumps(entries, indent=2).encode()


def test_a_key_written_twice_is_refused_and_repair_is_not_offered() -> None:
    events = copied_request().replace(b'"content": "b"', b'"content": "x",\n    "content": "b"')
    stream = stream_of(events)
    blockers = save_blockers(stream, stream)
    assert [(b.index, b.key, b.repairable) for b in blockers] == [(2, "content", False), (3, "request_id", True)]
    assert refusal(blockers, "jp-c1", decide=False) == (
        "refusing to save: entry 2: key 'content' is written twice, and a save keeps only the last value "
        "(1 more: turnmark check jp-c1); to fix: remove one of them from events.json by hand"
    )


def test_a_link_to_a_copied_request_names_repair_and_the_entry_in_the_file_as_read() -> None:
    events = copied_request()
    read = stream_of(events)
    shifted = read.with_entries(read.entries[1:])
    blockers = save_blockers(read, shifted)
    assert refusal(blockers, "jp-c1", decide=False) == (
        "refusing to save: request_id points at an event_id that more than one entry had: entry 3 (event_id m0msg00) "
        "-> r0req00; to fix: turnmark repair jp-c1 --apply (it links each to the copy in its own turn)"
    )
    assert refusal(blockers, "jp-c1", decide=True).endswith(
        "to fix: turnmark repair -i jp-c1 (it asks which request each answers)"
    )


def test_a_nested_key_says_where() -> None:
    events = copied_request().replace(b'"content": "a"', b'"content": "a", "metadata": {"k": "1", "k": "2"}')
    blockers = save_blockers(stream_of(events), stream_of(events))
    assert refusal(blockers, "jp-c1", decide=False).startswith(
        "refusing to save: entry 1: key 'k' is written twice (in metadata), and a save keeps only the last value"
    )


def test_a_stream_that_no_longer_links_to_the_copies_may_be_saved() -> None:
    events = copied_request()
    read = stream_of(events)
    assert save_blockers(read, read.with_entries(read.entries[:3])) == ()


def agrees_with_check(events: bytes) -> bool:
    stream = stream_of(events)
    report = check_report(stream, duplicate_keys(events))
    says_blocked = bool(report.save_blocked_by or report.duplicated_keys)
    return says_blocked == bool(save_blockers(stream, stream))


def test_check_and_the_rule_agree_on_the_fixtures() -> None:
    for events in sorted((FIXTURES / ".jp" / "conversations").glob("178*/events.json")):
        data = events.read_bytes()
        assert agrees_with_check(data), events
        doubled = data.replace(b'"type": "chat_request",', b'"type": "chat_request",\n    "type": "chat_request",', 1)
        assert duplicate_keys(doubled), events
        assert agrees_with_check(doubled), events
    assert agrees_with_check(copied_request())


@settings(max_examples=200, deadline=None)
@given(hand_edited())
def test_check_and_the_rule_agree_on_hand_edited_streams(entries: list[Json]) -> None:
    events = json.dumps(entries, indent=2).encode()
    if isinstance(ConversationStream.from_json(events, BASE, new_id=sequential_ids()), Success):
        assert agrees_with_check(events)
