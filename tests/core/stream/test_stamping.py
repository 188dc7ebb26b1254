"""RFD 098 Phase 1: request links stamped at every insertion path."""

from tests.support.streams import TS, answer, ask, call, load, message, raw, reasoning, request, result, stream_of, turn
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.payloads import ChatRequest, ConfigDelta, Unknown
from turnmark.core.stream.sanitize import sanitize


def links(stream: ConversationStream) -> list[tuple[str, str | None]]:
    return [(entry.type_tag, entry.request_id) for entry in stream.entries]


def test_the_five_answering_families_link_to_the_originating_request() -> None:
    stream = stream_of(turn(), request(), reasoning(), call(), ask(), answer(), result(), message())
    request_id = stream.entries[1].event_id
    assert [entry.request_id for entry in stream.entries[2:]] == [request_id] * 6


def test_non_linkable_kinds_stay_unlinked() -> None:
    stream = stream_of(turn(), request(), ConfigDelta({"type": "config_delta", "timestamp": TS, "delta": {}}))
    stream = stream.push(Unknown({"type": "future_kind", "timestamp": TS})).push(turn()).push(request())
    assert all(entry.request_id is None for entry in stream.entries)


def test_an_answer_before_the_turns_first_request_stays_unlinked_even_after_an_earlier_turn() -> None:
    stream = stream_of(turn(), request(), message(), turn(), message())
    assert stream.entries[2].request_id == stream.entries[1].event_id
    assert stream.entries[4].request_id is None


def test_an_implicit_first_turn_without_a_request_is_unlinked() -> None:
    assert stream_of(message()).entries[0].request_id is None


def test_interrupt_replies_link_later_events_to_the_newest_request() -> None:
    stream = stream_of(turn(), request("first"), message("partial"), request("interrupt"), call(), result(), message())
    first, newest = stream.entries[1].event_id, stream.entries[3].event_id
    assert stream.entries[2].request_id == first
    assert {entry.request_id for entry in stream.entries[4:]} == {newest}


def test_push_extend_and_start_turn_agree() -> None:
    pushed = stream_of()
    for payload in (turn(), request(), message()):
        pushed = pushed.push(payload)
    extended = stream_of(turn(), request(), message())
    started = stream_of().start_turn(request()).push(message())
    assert links(pushed) == links(extended) == links(started)
    assert started.entries[0].payload.timestamp == started.entries[1].payload.timestamp


def test_stamping_continues_a_loaded_turn() -> None:
    loaded = load(
        [
            {"event_id": "t000001", "timestamp": TS, "type": "turn_start"},
            {"event_id": "r000001", "timestamp": TS, "type": "chat_request", "content": "x"},
        ]
    )
    assert loaded.push(message()).entries[-1].request_id == "r000001"


def test_a_supplied_request_id_is_ignored() -> None:
    loaded = load(
        [
            {"event_id": "r000001", "timestamp": TS, "type": "chat_request", "content": "a"},
            {
                "event_id": "m000001",
                "request_id": "elsewhere",
                "timestamp": TS,
                "type": "chat_response",
                "message": "m",
            },
        ]
    )
    stream = stream_of(turn(), request()).push(loaded.entries[1])
    assert stream.entries[-1].request_id == stream.entries[1].event_id


def test_the_turn_builder_flush_stamps() -> None:
    stream = stream_of(turn(), request())
    built = stream.turn_builder().add(call()).add(result()).add(message()).build().unwrap()
    assert {entry.request_id for entry in built.entries[2:]} == {stream.entries[1].event_id}


def test_sanitize_synthetic_responses_are_stamped_and_get_fresh_ids() -> None:
    stream = stream_of(turn(), request(), call("lost"), message())
    repaired = sanitize(stream)
    synthetic = repaired.entries[3]
    assert synthetic.payload == result("lost", "Tool call was interrupted.", is_error=True)
    assert synthetic.request_id == stream.entries[1].event_id
    assert synthetic.id_origin == "inserted"
    assert len({entry.event_id for entry in repaired.entries}) == len(repaired.entries)


def test_the_link_round_trips_byte_for_byte_and_is_written_second() -> None:
    stream = stream_of(turn(), request(), message())
    data = stream.to_json()
    assert list(raw(stream)[2])[:2] == ["event_id", "request_id"]
    assert "request_id" not in raw(stream)[1]
    from turnmark.core.stream.conversation_stream import ConversationStream

    reloaded = ConversationStream.from_json(data, b"{}\n", new_id=lambda: "unused0").unwrap()
    assert reloaded.to_json() == data
    assert links(reloaded) == links(stream)


def test_request_ids_are_kept_verbatim_on_load_even_when_they_do_not_resolve() -> None:
    loaded = load([{"event_id": "m1", "request_id": "gone", "timestamp": TS, "type": "chat_response", "message": "m"}])
    assert loaded.entries[0].request_id == "gone"
    assert raw(loaded)[0]["request_id"] == "gone"


def test_chat_requests_open_the_scope_even_without_turn_start() -> None:
    stream = stream_of(ChatRequest(TS, "legacy"), message())
    assert stream.entries[1].request_id == stream.entries[0].event_id
