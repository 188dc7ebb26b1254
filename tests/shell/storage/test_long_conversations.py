"""A long conversation (bench/huge.py's generator) read and saved through the storage layer."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest

from bench.huge import CONVERSATION_ID, generate_long_conversation
from turnmark.core.stream import conversation_stream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_document import decode_document, encode_document
from turnmark.core.stream.payloads import ToolCallResponse
from turnmark.shell.errors import SaveRefused
from turnmark.shell.storage import conversations
from turnmark.shell.storage.conversations import LoadedConversation, edit_conversation, read_conversation
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.workspace import ConversationRef

TURNS = 40


@pytest.fixture(params=["whole", "entry by entry", "in pieces"])
def long_session(
    request: pytest.FixtureRequest, tmp_path: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> ConversationRef:
    """The generated conversation, read whole or (as a big file is) in pieces of small chunks, or entry by entry
    from its whole bytes (a big file not laid out as JP writes it)."""
    if request.param != "whole":
        monkeypatch.setattr(conversation_stream, "WHOLE_FILE", 0)
        monkeypatch.setattr(conversations, "CHUNK", 8192)
    generate_long_conversation(tmp_path, turns=TURNS)
    if request.param == "entry by entry":
        _compact(tmp_path)
    return pick_conversation(tmp_path, str(CONVERSATION_ID))


def _compact(root: Path) -> None:
    """The conversation's ``events.json`` on one line (not JP's layout: it is not read in pieces)."""
    [events] = root.glob(".jp/conversations/*/events.json")
    events.write_bytes(json.dumps(json.loads(events.read_bytes()), ensure_ascii=False).encode())


def test_the_generator_writes_what_jp_writes(tmp_path: Path, user_data: Path) -> None:
    generate_long_conversation(tmp_path, turns=TURNS)
    long_session = pick_conversation(tmp_path, str(CONVERSATION_ID))
    data = (long_session.directories[0] / "events.json").read_bytes()
    assert encode_document(decode_document(data, "events.json")) == data
    loaded = read_conversation(long_session, sequential_ids())
    assert len(loaded.stream.turns()) == TURNS
    assert loaded.stream.is_legacy


def test_a_read_keeps_no_bytes_and_hashes_them_only_when_asked(long_session: ConversationRef) -> None:
    data = (long_session.directories[0] / "events.json").read_bytes()
    loaded = read_conversation(long_session, sequential_ids())
    assert not any(isinstance(getattr(loaded, name), bytes) for name in LoadedConversation.__slots__)
    assert loaded.events_sha256 is None
    hashed = read_conversation(long_session, sequential_ids(), digest=True)
    assert hashed.events_sha256 == hashlib.sha256(data).hexdigest()


def test_a_save_writes_unread_outputs_as_stored_and_ids_for_every_entry(long_session: ConversationRef) -> None:
    before = decode_document((long_session.directories[0] / "events.json").read_bytes(), "events.json")
    stream, written = edit_conversation(long_session, lambda s: s, sequential_ids(), persist_ids=True)
    assert written.files
    outputs = [entry.payload for entry in stream.entries if isinstance(entry.payload, ToolCallResponse)]
    assert all(payload.stored is not None for payload in outputs)
    after = decode_document((long_session.directories[0] / "events.json").read_bytes(), "events.json")
    assert [entry.get("content") for entry in after] == [entry.get("content") for entry in before[1:]]
    assert all(entry["event_id"] for entry in after)


def test_a_key_written_twice_deep_in_a_long_file_is_found_at_load_and_refused(long_session: ConversationRef) -> None:
    path = long_session.directories[0] / "events.json"
    data = path.read_bytes()
    marker = b'"name": "cargo_check",'
    position = data.rindex(marker)
    path.write_bytes(data[:position] + marker + b"\n    " + data[position:])
    loaded = read_conversation(long_session, sequential_ids())
    [doubled] = loaded.stream.doubled_keys
    assert doubled.key == "name"
    with pytest.raises(SaveRefused, match=f"entry {doubled.index}: key 'name' is written twice"):
        edit_conversation(long_session, lambda s: s, sequential_ids(), persist_ids=True)


def test_a_big_files_bytes_are_let_go_of_before_its_ids_are_settled(
    tmp_path: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Peak memory: the file's bytes and its entries as read are never held while the stream is made (a big file
    not in JP's layout, read whole)."""
    monkeypatch.setattr(conversation_stream, "WHOLE_FILE", 0)
    monkeypatch.setattr(conversations, "CHUNK", 8192)
    generate_long_conversation(tmp_path, turns=400)
    _compact(tmp_path)
    ref = pick_conversation(tmp_path, str(CONVERSATION_ID))
    size = (ref.directories[0] / "events.json").stat().st_size
    read_json, from_read = (
        conversation_stream.ConversationStream.read_json,
        conversation_stream.ConversationStream.from_read,
    )
    held: dict[str, int] = {}

    def measured_read(events: bytes, base_config: bytes | None = None, **options: bool) -> object:
        result = read_json(events, base_config, **options)
        held["after the read"] = tracemalloc.get_traced_memory()[0]
        return result

    def measured_settle(read: conversation_stream.ReadFile, **options: object) -> object:
        held["settling"] = tracemalloc.get_traced_memory()[0]
        return from_read(read, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(conversation_stream.ConversationStream, "read_json", staticmethod(measured_read))
    monkeypatch.setattr(conversation_stream.ConversationStream, "from_read", staticmethod(measured_settle))
    tracemalloc.start()
    try:
        loaded = read_conversation(ref, sequential_ids())
    finally:
        tracemalloc.stop()
    assert len(loaded.stream.turns()) == 400
    assert held["after the read"] - held["settling"] > 0.9 * size


def test_a_big_file_in_jp_s_layout_is_never_held_whole(
    tmp_path: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Peak memory of a read in pieces: what is kept, and about a chunk more, not the file's bytes beside it."""
    monkeypatch.setattr(conversation_stream, "WHOLE_FILE", 0)
    monkeypatch.setattr(conversations, "CHUNK", 64 * 1024)
    generate_long_conversation(tmp_path, turns=400)
    ref = pick_conversation(tmp_path, str(CONVERSATION_ID))
    size = (ref.directories[0] / "events.json").stat().st_size
    peaks = {}
    for way in ("in pieces", "whole"):
        if way == "whole":
            _compact(tmp_path)
        tracemalloc.start()
        try:
            loaded = read_conversation(ref, sequential_ids(), digest=True)
            kept, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(loaded.stream.turns()) == 400
        peaks[way] = peak - kept
        del loaded
    assert peaks["in pieces"] < 0.5 * size < peaks["whole"]
