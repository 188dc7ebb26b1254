"""Every real conversation in the corpus loads and saves back byte for byte."""

from pathlib import Path

import msgspec
import pytest

from tests.conftest import corpus_files, corpus_params
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids


@pytest.mark.parametrize("directory", corpus_params())
def test_round_trip_is_byte_exact(directory: Path) -> None:
    events, base_config = corpus_files(directory)
    stream = ConversationStream.from_json(events, base_config, new_id=sequential_ids()).unwrap()
    written = stream.to_json()
    without_ids = msgspec.json.decode(written)
    for entry in without_ids:
        entry.pop("event_id", None)
    assert msgspec.json.format(msgspec.json.encode(without_ids), indent=2) + b"\n" == events
    assert stream.base_config_json() == base_config
    reloaded = ConversationStream.from_json(written, base_config, new_id=sequential_ids("z")).unwrap()
    assert reloaded.to_json() == written, "once IDs are saved, a save changes nothing"
    assert reloaded == stream


@pytest.mark.parametrize("directory", corpus_params())
def test_only_event_id_keys_are_added_and_they_come_first(directory: Path) -> None:
    events, base_config = corpus_files(directory)
    stream = ConversationStream.from_json(events, base_config, new_id=sequential_ids()).unwrap()
    original = msgspec.json.decode(events)
    written = msgspec.json.decode(stream.to_json())
    head = 1 if stream.is_legacy else 0
    assert written[:head] == original[:head]
    for before, after in zip(original[head:], written[head:], strict=True):
        assert list(after) == ["event_id", *before]
        assert {key: value for key, value in after.items() if key != "event_id"} == before


@pytest.mark.parametrize("directory", corpus_params())
def test_corpus_turns_match_jp(directory: Path) -> None:
    events, base_config = corpus_files(directory)
    stream = ConversationStream.from_json(events, base_config, new_id=sequential_ids()).unwrap()
    raw_turn_starts = events.count(b'"type": "turn_start"')
    turns = stream.turns()
    assert len(turns) in (raw_turn_starts, raw_turn_starts + 1)
    assert all(turn.fallback_summary() is None or len(turn.fallback_summary() or "") <= 72 for turn in turns)
