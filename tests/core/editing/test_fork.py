"""``fork`` as values: kept turns, overlays re-indexed through JP's sanitize."""

from __future__ import annotations

import msgspec

from turnmark.core.editing.fork import fork_metadata, fork_stream, kept_turns
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids

TS = "2026-01-02 10:00:00.0"


def test_an_overlay_follows_its_turn_when_sanitize_drops_a_leading_turn() -> None:
    stream = ConversationStream.from_json(
        msgspec.json.encode(
            [
                {"event_id": "t000000", "timestamp": TS, "type": "turn_start"},
                {"event_id": "r000000", "timestamp": TS, "type": "chat_request", "content": "first"},
                {"event_id": "m000000", "request_id": "r000000", "timestamp": TS, "type": "chat_response",
                 "message": "a"},
                {"event_id": "t000001", "timestamp": TS, "type": "turn_start"},
                {"event_id": "m000001", "timestamp": TS, "type": "chat_response", "message": "no request"},
                {"event_id": "t000002", "timestamp": TS, "type": "turn_start"},
                {"event_id": "r000002", "timestamp": TS, "type": "chat_request", "content": "third"},
                {"event_id": "m000002", "request_id": "r000002", "timestamp": TS, "type": "chat_response",
                 "message": "c"},
                {"event_id": "c000002", "timestamp": TS, "type": "compaction", "from_turn": 2, "to_turn": 2,
                 "reasoning": "strip"},
            ]
        ),
        b"{}",
        new_id=sequential_ids(),
    ).unwrap()  # fmt: skip
    fork = fork_stream(stream, kept_turns(stream, first=None, last=2, until=None))
    turns = fork.stream.turns()
    assert [turn.id() for turn in turns] == ["t000002"]
    [overlay] = [entry.payload for entry in fork.stream.entries if entry.type_tag == "compaction"]
    assert (overlay.from_turn, overlay.to_turn) == (0, 0)  # type: ignore[union-attr]
    assert fork.dropped_overlays == ()


def test_fork_metadata_is_cloned_as_jp_clones_it_plus_lineage() -> None:
    source = {"title": "T", "last_activated_at": TS, "expires_at": TS, "pinned_at": TS}
    now = "2026-02-02 00:00:00.0"
    assert fork_metadata(source, "jp-c1", "t000002", now) == {
        "title": "T",
        "last_activated_at": now,
        "pinned_at": TS,
        "forked_from": {"conversation": "jp-c1", "turn": "t000002"},
    }
    assert fork_metadata(None, "jp-c1", None, now) == {
        "last_activated_at": now,
        "forked_from": {"conversation": "jp-c1", "turn": None},
    }
