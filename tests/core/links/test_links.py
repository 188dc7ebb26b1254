"""Link resolution (unlinked / resolved / unresolved with a reason) and the check report."""

from tests.support.streams import TS, load, message, request, stream_of, turn
from turnmark.core.links.check import check_report
from turnmark.core.links.resolution import count_links, resolve_links
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.summaries.failures import turn_rows


def hand_edited() -> ConversationStream:
    return load(
        [
            {"event_id": "t1", "timestamp": TS, "type": "turn_start"},
            {"event_id": "r1", "timestamp": TS, "type": "chat_request", "content": "kept"},
            {"event_id": "m1", "request_id": "r1", "timestamp": TS, "type": "chat_response", "message": "ok"},
            {"event_id": "m2", "request_id": "deleted", "timestamp": TS, "type": "chat_response", "message": "?"},
            {"event_id": "m3", "request_id": "t1", "timestamp": TS, "type": "chat_response", "message": "?"},
            {"event_id": "r2", "timestamp": TS, "type": "chat_request", "content": "copy"},
            {"event_id": "r2", "timestamp": TS, "type": "chat_request", "content": "copy"},
            {"event_id": "m4", "request_id": "r2", "timestamp": TS, "type": "chat_response", "message": "?"},
            {"timestamp": TS, "type": "chat_response", "message": "legacy"},
        ]
    )


def test_each_entry_resolves_to_one_state() -> None:
    stream = hand_edited()
    states = [(link.event_id, link.state, link.reason) for link in resolve_links(stream.entries, stream.duplicated_ids)]
    assert states[2:5] == [
        ("m1", "resolved", None),
        ("m2", "unresolved", "missing_target"),
        ("m3", "unresolved", "wrong_kind"),
    ]
    assert states[7] == ("m4", "unresolved", "duplicated_target")
    assert states[8][1] == "unlinked"


def test_counts() -> None:
    stream = hand_edited()
    counts = count_links(resolve_links(stream.entries, stream.duplicated_ids))
    assert (counts.linked, counts.resolved, counts.unresolved, counts.unlinked) == (4, 1, 3, 5)
    assert counts.by_reason == {"duplicated_target": 1, "missing_target": 1, "wrong_kind": 1}


def test_a_link_to_a_duplicated_id_blocks_saving() -> None:
    stream = hand_edited()
    assert [(link.event_id, link.request_id) for link in stream.ambiguous_links()] == [("m4", "r2")]
    report = check_report(stream)
    assert not report.ok
    assert report.save_blocked_by == ({"index": 7, "event_id": "m4", "request_id": "r2"},)
    assert report.duplicated_ids == ({"event_id": "r2", "entries": [5, 6]},)


def test_a_stamped_stream_is_fully_resolved() -> None:
    report = check_report(stream_of(turn(), request(), message(), turn(), request(), message()))
    assert report.ok
    assert report.links["resolved"] == 2
    assert report.links["unresolved"] == 0


def test_turn_rows_mark_transient_ids_and_fallbacks() -> None:
    rows = turn_rows(
        load([{"timestamp": TS, "type": "turn_start"}, {"timestamp": TS, "type": "chat_request", "content": "hi"}])
    )
    assert [(row.id_transient, row.label, row.label_source) for row in rows] == [(True, "hi", "fallback")]
