"""A big ``events.json`` is read entry by entry: the same stream, errors and keys written twice as a whole read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from returns.result import Success

from tests.conftest import FIXTURES, corpus_params
from tests.core.links.test_projection_properties import hand_edited
from turnmark.core.stream import conversation_stream
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.duplicate_keys import duplicate_keys
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_value import Json

BASE = b'{"assistant": {"model": {"id": "ollama/x"}}}'


def both_ways(events: bytes, base_config: bytes | None = BASE) -> tuple[object, object]:
    """What a whole read and an entry-by-entry read make of the same bytes (streams, or the errors said)."""
    results = []
    whole = conversation_stream.WHOLE_FILE
    for limit in (whole, 0):
        conversation_stream.WHOLE_FILE = limit
        try:
            loaded = ConversationStream.from_json(events, base_config, new_id=sequential_ids(), conversation="jp-c1")
        finally:
            conversation_stream.WHOLE_FILE = whole
        results.append(
            (loaded.unwrap(), loaded.unwrap().doubled_keys, loaded.unwrap().to_json())
            if isinstance(loaded, Success)
            else loaded.failure().describe()
        )
    return results[0], results[1]


@pytest.mark.parametrize(
    "events",
    [
        b'[{"type": "turn_start",',
        b'[\n  {"type": }\n]',
        b'[{"type": "turn_start", "timestamp": "2026-01-01 00:00:00.0"},\n ["\xff"]]',
        b'{"type": "turn_start"}',
        b'["x"]',
        b"[" * 5000 + b"]" * 5000,
        b'[{"type": "turn_start", "timestamp": "2026-01-01 00:00:00.0", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}]",
    ],
)
def test_bad_input_says_the_same_read_either_way(events: bytes) -> None:
    whole, by_entry = both_ways(events)
    assert isinstance(whole, str)
    assert by_entry == whole


@settings(max_examples=150, deadline=None)
@given(hand_edited())
def test_a_hand_edited_stream_reads_the_same_either_way(entries: list[Json]) -> None:
    events = json.dumps(entries, indent=2).encode()
    doubled = events.replace(b'"type": "chat_request",', b'"type": "chat_request",\n    "type": "chat_request",', 1)
    for data in (events, doubled):
        whole, by_entry = both_ways(data)
        assert by_entry == whole
        if isinstance(whole, tuple):
            assert whole[1] == duplicate_keys(data)


def test_the_fixtures_read_the_same_either_way() -> None:
    for events in sorted((FIXTURES / ".jp" / "conversations").glob("*/events.json")):
        base = events.with_name("base_config.json")
        whole, by_entry = both_ways(events.read_bytes(), base.read_bytes() if base.exists() else None)
        assert by_entry == whole, events


@pytest.mark.parametrize("directory", corpus_params())
def test_the_corpus_reads_the_same_either_way(directory: Path) -> None:
    base = directory / "base_config.json"
    whole, by_entry = both_ways((directory / "events.json").read_bytes(), base.read_bytes() if base.exists() else None)
    assert not isinstance(whole, str)
    assert by_entry == whole
