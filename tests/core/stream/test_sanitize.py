"""sanitize: JP's seven repairs in order (jp-format §4.8, §6.3-6.5), turn_starts kept with their turns."""

from tests.support.streams import TS, answer, ask, call, load, message, request, result, stream_of, turn
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.payloads import ConfigDelta, TurnStart
from turnmark.core.stream.sanitize import INTERRUPTED, normalize_turn_starts, sanitize


def kinds(stream: ConversationStream) -> list[str]:
    return [entry.type_tag for entry in stream.entries]


def test_leading_non_user_events_are_dropped_but_turn_starts_and_globals_kept() -> None:
    delta = ConfigDelta({"type": "config_delta", "timestamp": TS, "delta": {}})
    stream = stream_of(turn("kept"), message(), result(), delta, request(), message())
    assert kinds(sanitize(stream)) == ["turn_start", "config_delta", "chat_request", "chat_response"]
    assert sanitize(stream).turns()[0].summary() == "kept"


def test_a_fork_cutting_through_a_tool_call_is_repaired() -> None:
    stream = stream_of(call("a"), result("a"), message(), turn(), request(), message())
    assert kinds(sanitize(stream)) == ["turn_start", "chat_request", "chat_response"]


def test_orphaned_responses_are_removed_globally() -> None:
    stream = stream_of(turn(), request(), result("nobody"), message())
    assert kinds(sanitize(stream)) == ["turn_start", "chat_request", "chat_response"]


def test_synthetic_responses_go_directly_after_their_request() -> None:
    stream = stream_of(turn(), request(), call("a"), call("b"), result("b"), message())
    repaired = sanitize(stream)
    assert kinds(repaired) == [
        "turn_start",
        "chat_request",
        "tool_call_request",
        "tool_call_response",
        "tool_call_request",
        "tool_call_response",
        "chat_response",
    ]
    synthetic = repaired.entries[3].payload
    assert synthetic == result("a", INTERRUPTED, is_error=True)
    assert synthetic.timestamp == stream.entries[2].payload.timestamp


def test_unanswered_inquiries_and_orphaned_answers_are_removed() -> None:
    stream = stream_of(turn(), request(), call(), ask("q1"), result(), answer("q2"), message())
    assert kinds(sanitize(stream)) == [
        "turn_start",
        "chat_request",
        "tool_call_request",
        "tool_call_response",
        "chat_response",
    ]


def test_after_an_interrupted_turn_the_orphaned_turn_start_is_removed() -> None:
    stream, _ = stream_of(turn(), request(), message(), turn(), request()).pop()
    assert kinds(sanitize(stream)) == ["turn_start", "chat_request", "chat_response"]


def test_piled_up_leading_turn_starts_collapse_to_the_last() -> None:
    stream = stream_of(turn("a"), turn("b"), turn("c"), request())
    repaired = sanitize(stream)
    assert kinds(repaired) == ["turn_start", "chat_request"]
    assert repaired.turns()[0].summary() == "c"
    assert repaired.entries[0].event_id == stream.entries[2].event_id


def test_a_turn_start_is_inserted_before_the_first_request_with_its_timestamp() -> None:
    stream = load([{"timestamp": "2026-03-03 03:03:03.3", "type": "chat_request", "content": "x"}])
    repaired = sanitize(stream)
    assert kinds(repaired) == ["turn_start", "chat_request"]
    assert repaired.entries[0].payload == TurnStart("2026-03-03 03:03:03.3")
    assert repaired.entries[0].id_origin == "inserted"


def test_middle_and_empty_turns_are_never_removed() -> None:
    stream = stream_of(turn(), request(), turn(), turn(), request())
    assert kinds(sanitize(stream)) == kinds(stream)


def test_a_stream_without_requests_is_kept() -> None:
    stream = stream_of(message(), message())
    assert kinds(sanitize(stream)) == ["turn_start", "chat_response", "chat_response"]
    assert kinds(normalize_turn_starts(sanitize(stream))) == ["turn_start", "chat_response", "chat_response"]


def test_compactions_survive() -> None:
    entries = [
        {"type": "compaction", "timestamp": TS, "from_turn": 0, "to_turn": 0, "reasoning": "strip"},
        {"timestamp": TS, "type": "chat_request", "content": "x"},
    ]
    assert kinds(sanitize(load(entries))) == ["compaction", "turn_start", "chat_request"]


def test_sanitize_ignores_request_ids() -> None:
    entries = [
        {"event_id": "t", "timestamp": TS, "type": "turn_start"},
        {"event_id": "r", "timestamp": TS, "type": "chat_request", "content": "x"},
        {"event_id": "m", "request_id": "gone", "timestamp": TS, "type": "chat_response", "message": "m"},
    ]
    stream = load(entries)
    assert sanitize(stream) == stream
