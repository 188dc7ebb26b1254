"""A big ``events.json`` is read entry by entry, or in pieces from chunks of its bytes (never held whole): the
same stream, errors and keys written twice as a whole read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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


SIZES = (1, 7, 4096, 1 << 20)


def in_pieces(events: bytes, base_config: bytes | None, size: int) -> tuple[object, bool]:
    """What the shell makes of ``events`` given in chunks of ``size`` bytes (read whole again when the pieces
    cannot be read), and whether the pieces were read."""
    chunks = (events[start : start + size] for start in range(0, len(events), size))
    read = ConversationStream.read_json_chunks(chunks, base_config)
    taken = read is not None
    result = Success(read) if read is not None else ConversationStream.read_json(events, base_config)
    if not isinstance(result, Success):
        return result.failure().describe(), taken
    loaded = ConversationStream.from_read(result.unwrap(), new_id=sequential_ids(), conversation="jp-c1")
    return (loaded, loaded.doubled_keys, loaded.to_json()), taken


def every_way(events: bytes, base_config: bytes | None = BASE, sizes: tuple[int, ...] = SIZES) -> list[bool]:
    """``both_ways`` and ``in_pieces`` at each of ``sizes`` agree on ``events``; whether each read in pieces."""
    whole, by_entry = both_ways(events, base_config)
    assert by_entry == whole
    taken = []
    for size in sizes:
        pieced, read = in_pieces(events, base_config, size)
        assert pieced == whole, size
        taken.append(read)
    return taken


@pytest.mark.parametrize(
    "events",
    [
        b'[{"type": "turn_start",',
        b'[\n  {"type": }\n]',
        b'[{"type": "turn_start", "timestamp": "2026-01-01 00:00:00.0"},\n ["\xff"]]',
        b'{"type": "turn_start"}',
        b'["x"]',
        b"[null]",
        b'[null, {"type": "turn_start", "timestamp": "2026-01-01 00:00:00.0"}]',
        b"[" * 5000 + b"]" * 5000,
        b'[{"type": "turn_start", "timestamp": "2026-01-01 00:00:00.0", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}]",
    ],
)
def test_bad_input_says_the_same_read_either_way(events: bytes) -> None:
    whole, _by_entry = both_ways(events)
    assert isinstance(whole, str)
    every_way(events, sizes=(1, 3, 4096))


@settings(max_examples=150, deadline=None)
@given(hand_edited())
def test_a_hand_edited_stream_reads_the_same_either_way(entries: list[Json]) -> None:
    events = json.dumps(entries, indent=2).encode()
    doubled = events.replace(b'"type": "chat_request",', b'"type": "chat_request",\n    "type": "chat_request",', 1)
    last = events.rfind(b'"type": "chat_request",')
    doubled_last = events[:last] + b'"type": "chat_request",\n    "type": "chat_request",' + events[last + 23 :]
    for data in (events, doubled, doubled_last if last >= 0 else events):
        whole, _by_entry = both_ways(data)
        taken = every_way(data, sizes=(5, 64, 1 << 20))
        if isinstance(whole, tuple):
            assert whole[1] == duplicate_keys(data)
            assert all(taken) or not any(isinstance(entry, dict) for entry in entries), "JP's layout is read in pieces"


def test_the_fixtures_read_the_same_either_way() -> None:
    for events in sorted((FIXTURES / ".jp" / "conversations").glob("*/events.json")):
        base = events.with_name("base_config.json")
        assert all(every_way(events.read_bytes(), base.read_bytes() if base.exists() else None)), events


@pytest.mark.parametrize("directory", corpus_params())
def test_the_corpus_reads_the_same_either_way(directory: Path) -> None:
    base = directory / "base_config.json"
    events = (directory / "events.json").read_bytes()
    whole, _by_entry = both_ways(events, base.read_bytes() if base.exists() else None)
    assert not isinstance(whole, str)
    assert all(every_way(events, base.read_bytes() if base.exists() else None, sizes=(4096, 1 << 20)))


@settings(max_examples=150, deadline=None)
@given(hand_edited(), st.integers(0, 4), st.integers(1, 300))
def test_any_layout_reads_the_same_in_pieces_or_is_read_whole(entries: list[Json], indent: int, size: int) -> None:
    """Other indentations put the cut's bytes at other depths: the pieces then do not decode, and the whole file
    is read instead; never a different stream."""
    events = json.dumps(entries, indent=indent or None).encode()
    nested = json.dumps([{"a": [{"b": 1}, {"c": [{"d": 2}, {"e": 3}]}]}, *entries], indent=1).encode()
    for data in (events, nested, events.replace(b"\n  {", b"\n  \n  {")):
        every_way(data, sizes=(size,))


def test_a_file_with_no_cut_for_longer_than_a_piece_may_be_is_read_whole() -> None:
    entries = [{"type": "turn_start", "timestamp": "2026-01-01 00:00:00.0"}] * 50
    compact = json.dumps(entries).encode()
    laid_out = json.dumps(entries, indent=2).encode()
    chunks = [compact[start : start + 64] for start in range(0, len(compact), 64)]
    assert ConversationStream.read_json_chunks(chunks, BASE, most=1_000) is None
    assert ConversationStream.read_json_chunks(chunks, BASE, most=len(compact)) is not None
    chunks = [laid_out[start : start + 64] for start in range(0, len(laid_out), 64)]
    assert ConversationStream.read_json_chunks(chunks, BASE, most=1_000) is not None


@pytest.mark.parametrize("size", [1, 2, 5, 8, 9, 10, 17, 64, 4096])
def test_every_cut_is_found_whatever_the_chunks(size: int) -> None:
    """A chunk's last cut ends a piece, also one that begins in the chunks before (the entries here are longer
    than 64 bytes: every chunk up to that size holds at most one cut)."""
    entries = [{"type": "chat_request", "timestamp": "t", "content": "x" * (n * 7 % 23)} for n in range(40)]
    data = json.dumps(entries, indent=2).encode()
    chunks = [data[start : start + size] for start in range(0, len(data), size)]
    found = list(conversation_stream.pieces(chunks, most=len(data)))
    assert [entry for piece in found for entry in json.loads(piece)] == entries
    if size <= 64:
        assert len(found) == data.count(conversation_stream.PIECE_CUT) + 1 == len(entries), "each chunk's cut taken"
    else:
        assert 1 < len(found) <= len(chunks) + 1
