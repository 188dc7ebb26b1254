"""The turn builder: all-or-nothing validation, count-aware and turn-scoped (jp-format §4.3, §6.1)."""

from tests.support.streams import answer, ask, call, message, request, result, stream_of, turn
from turnmark.core.stream.payloads import TurnStart


def test_a_valid_turn_is_flushed_in_order() -> None:
    stream = stream_of(turn(), request())
    built = stream.turn_builder().add(call()).add(result()).add(message()).build().unwrap()
    assert [e.type_tag for e in built.entries[2:]] == ["tool_call_request", "tool_call_response", "chat_response"]


def test_an_orphaned_response_flushes_nothing() -> None:
    stream = stream_of(turn(), request())
    error = stream.turn_builder().add(message()).add(result("nope")).build().failure()
    assert (error.kind, error.id, error.position) == ("orphaned_tool_call_response", "nope", 1)


def test_reused_tool_call_ids_are_count_aware() -> None:
    stream = stream_of(turn(), request())
    builder = stream.turn_builder().add(call("x")).add(result("x")).add(call("x")).add(result("x"))
    assert len(builder.build().unwrap().entries) == 6
    assert builder.add(result("x")).build().failure().kind == "duplicate_tool_call_response"


def test_a_request_in_a_previous_turn_does_not_satisfy_a_response() -> None:
    stream = stream_of(turn(), request(), call("x"), result("x"), turn(), request())
    assert stream.turn_builder().add(result("x")).build().failure().kind == "orphaned_tool_call_response"


def test_inquiries_follow_the_same_rules() -> None:
    stream = stream_of(turn(), request())
    assert stream.turn_builder().add(answer()).build().failure().kind == "orphaned_inquiry_response"
    twice = stream.turn_builder().add(ask()).add(answer()).add(answer())
    assert twice.build().failure().kind == "duplicate_inquiry_response"


def test_a_turn_start_given_to_the_builder_is_dropped_and_counted() -> None:
    builder = stream_of(turn(), request()).turn_builder().add(TurnStart("2026-01-01 00:00:00.0")).add(message())
    assert builder.dropped_turn_starts == 1
    assert [e.type_tag for e in builder.build().unwrap().entries] == ["turn_start", "chat_request", "chat_response"]


def test_a_stream_without_any_turn_start_gets_one_first() -> None:
    built = stream_of(request()).turn_builder().add(message()).build().unwrap()
    assert [e.type_tag for e in built.entries] == ["chat_request", "turn_start", "chat_response"]
    assert built.entries[2].request_id is None, "the new turn has no request yet"
