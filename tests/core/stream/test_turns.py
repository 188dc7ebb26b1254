"""Turns as JP defines them (§4.2) and RFD 126 Phase 1: turn summaries on turn_start."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.streams import TS, call, load, message, raw, request, result, stream_of, turn
from turnmark.core.stream import light
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.kinds import EVENT_TAGS
from turnmark.core.stream.payloads import TurnStart
from turnmark.core.stream.turns import mechanical_turn_summary, turn_numbers
from turnmark.core.text.summary_text import mechanical_summary, normalize_summary


def shape(stream: ConversationStream) -> list[list[str]]:
    return [[entry.type_tag for entry in t.events()] for t in stream.turns()]


def test_a_leading_turn_start_opens_turn_zero() -> None:
    assert shape(stream_of(turn(), request(), message(), turn(), request())) == [
        ["turn_start", "chat_request", "chat_response"],
        ["turn_start", "chat_request"],
    ]


def test_events_before_the_first_turn_start_form_an_implicit_turn_zero() -> None:
    stream = stream_of(request("legacy"), message(), request("second"), turn(), request())
    turns = stream.turns()
    assert [t.index for t in turns] == [0, 1]
    assert turns[0].id() is None
    assert turns[0].summary() is None
    assert len(turns[0].requests()) == 2


def test_two_consecutive_turn_starts_make_an_empty_turn() -> None:
    assert shape(stream_of(turn(), turn(), request())) == [["turn_start"], ["turn_start", "chat_request"]]


def test_a_stream_without_events_has_no_turns() -> None:
    assert stream_of().turns() == ()


def test_global_entries_never_open_a_turn() -> None:
    stream = load(
        [
            {"type": "config_delta", "timestamp": TS, "delta": {}},
            {"timestamp": TS, "type": "turn_start"},
            {"timestamp": TS, "type": "chat_request", "content": "x"},
            {"type": "future", "timestamp": TS},
            {"timestamp": TS, "type": "turn_start"},
        ]
    )
    turns = stream.turns()
    assert [len(t.entries) for t in turns] == [4, 1]


def test_turn_id_and_summary_come_from_the_turn_start() -> None:
    stream = stream_of(turn("Add retry backoff"), request())
    only = stream.turns()[0]
    assert only.id() == stream.entries[0].event_id
    assert only.summary() == "Add retry backoff"


def test_fallback_is_the_first_non_empty_line_of_the_first_request() -> None:
    stream = stream_of(turn(), request("\n\n   Fix   the\tbuild  \nsecond line"), request("later"))
    assert stream.turns()[0].fallback_summary() == "Fix the build"
    assert mechanical_turn_summary(stream.turns()[0]) == "Fix the build"


def test_fallback_lines_end_only_at_newline_as_in_jp() -> None:
    assert mechanical_summary("first\u2028still first\nsecond") == "first still first"


def test_fallback_is_cut_to_72_characters() -> None:
    fallback = mechanical_summary("x" * 100)
    assert fallback is not None
    assert len(fallback) == 72
    assert fallback.endswith("…")
    assert mechanical_summary("y" * 72) == "y" * 72


def test_a_turn_without_a_request_has_no_fallback() -> None:
    assert stream_of(turn()).turns()[0].fallback_summary() is None


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("  Add retry\nbackoff\t to  handler ", "Add retry backoff to handler"),
        ("\x1b[31mred\x1b[0m label", "red label"),
        ("title\x1b]0;pwned\x07 set", "title set"),
        ("bell\x07 and nul\x00", "bell and nul"),
        ("rtl \u202espoof", "rtl spoof"),
        ("emoji 👩‍💻 kept", "emoji 👩‍💻 kept"),
        ("a \x00 b", "a b"),
        ("a \u200b b", "a b"),
        ("   \n\t ", None),
        ("\x1b[2J", None),
    ],
)
def test_summaries_are_normalized_to_one_clean_line(text: str, stored: str | None) -> None:
    assert normalize_summary(text) == stored


def test_set_turn_summary_by_event_id() -> None:
    stream = stream_of(turn(), request(), turn(), request())
    second = stream.entries[2].event_id
    updated = stream.set_turn_summary(second, "Second\nturn").unwrap()
    assert [t.summary() for t in updated.turns()] == [None, "Second turn"]
    assert stream.turns()[1].summary() is None, "the original stream is unchanged"


def test_set_turn_summary_refuses_blank_text_and_unknown_or_non_turn_ids() -> None:
    stream = stream_of(turn(), request())
    assert stream.set_turn_summary(stream.entries[0].event_id, " \n ").failure().reason == "blank_summary"
    assert stream.set_turn_summary("missing", "x").failure().reason == "unknown_turn"
    assert stream.set_turn_summary(stream.entries[1].event_id, "x").failure().reason == "unknown_turn"


def test_clear_turn_summary() -> None:
    stream = stream_of(turn("label"), request())
    cleared = stream.clear_turn_summary(stream.entries[0].event_id).unwrap()
    assert cleared.turns()[0].summary() is None
    assert "summary" not in raw(cleared)[0]


def test_summary_serializes_only_when_present_and_after_the_type() -> None:
    entry = raw(stream_of(turn("label")))[0]
    assert list(entry) == ["event_id", "timestamp", "type", "summary"]
    assert list(raw(stream_of(turn()))[0]) == ["event_id", "timestamp", "type"]


def test_legacy_turn_start_loads_without_summary_and_round_trips() -> None:
    stream = load([{"timestamp": TS, "type": "turn_start"}])
    assert stream.turns()[0].summary() is None
    assert raw(stream)[0] == {"event_id": stream.entries[0].event_id, "timestamp": TS, "type": "turn_start"}


def test_summary_round_trips_with_metadata() -> None:
    entry = {
        "event_id": "k3m9x2a",
        "timestamp": TS,
        "type": "turn_start",
        "summary": "Label",
        "metadata": {"a": "Yg=="},
    }
    stream = load([entry])
    assert stream.entries[0].payload == TurnStart(TS, "Label", {"a": "b"})
    assert raw(stream) == [entry]


def test_pop_clears_the_trailing_turns_summary() -> None:
    stream = stream_of(turn("first"), request(), turn("second"), request(), message())
    popped, entry = stream.pop()
    assert entry is not None
    assert entry.type_tag == "chat_response"
    assert [t.summary() for t in popped.turns()] == ["first", None]


def test_popping_an_empty_turn_leaves_earlier_summaries() -> None:
    stream = stream_of(turn("first"), request(), turn("empty"))
    popped, entry = stream.pop()
    assert entry is not None
    assert isinstance(entry.payload, TurnStart)
    assert [t.summary() for t in popped.turns()] == ["first"]


def test_pop_keeps_trailing_global_entries() -> None:
    stream = load(
        [
            {"timestamp": TS, "type": "turn_start"},
            {"timestamp": TS, "type": "chat_request", "content": "x"},
            {"type": "compaction", "timestamp": TS, "from_turn": 0, "to_turn": 0, "reasoning": "strip"},
        ]
    )
    popped, entry = stream.pop()
    assert entry is not None
    assert entry.type_tag == "chat_request"
    assert [e.type_tag for e in popped.entries] == ["turn_start", "compaction"]


def test_pop_if_and_pop_while() -> None:
    stream = stream_of(turn(), request(), call(), result(), message(), message("again"))
    unchanged, nothing = stream.pop_if(lambda e: e.type_tag == "tool_call_response")
    assert nothing is None
    assert unchanged is stream
    trimmed, popped = stream.pop_while(lambda e: e.type_tag == "chat_response")
    assert [getattr(e.payload, "value", None) for e in popped] == ["again", "done"]
    assert trimmed.last_turn_event() == stream.entries[3]


def test_trim_chat_request_drops_passed_events_and_keeps_globals_at_the_end() -> None:
    stream = load(
        [
            {"event_id": "t1", "timestamp": TS, "type": "turn_start", "summary": "s"},
            {"event_id": "r1", "timestamp": TS, "type": "chat_request", "content": "x"},
            {"event_id": "m1", "request_id": "r1", "timestamp": TS, "type": "chat_response", "message": "m"},
            {"event_id": "d1", "type": "config_delta", "timestamp": TS, "delta": {}},
            {"event_id": "m2", "request_id": "r1", "timestamp": TS, "type": "chat_response", "message": "m"},
        ]
    )
    trimmed, popped = stream.trim_chat_request()
    assert popped is not None
    assert popped.event_id == "r1"
    assert [e.event_id for e in trimmed.entries] == ["t1", "d1"]
    assert trimmed.turns()[0].summary() is None


def test_trim_trailing_empty_turn_removes_at_most_one() -> None:
    stream = stream_of(turn(), request(), turn(), turn())
    assert [e.type_tag for e in stream.trim_trailing_empty_turn().entries] == [
        "turn_start",
        "chat_request",
        "turn_start",
    ]


def test_turn_indices_through_tool_calls() -> None:
    assert shape(stream_of(turn(), request(), call(), result())) == [
        ["turn_start", "chat_request", "tool_call_request", "tool_call_response"]
    ]


def test_a_summary_added_to_a_turn_start_with_metadata_goes_before_it() -> None:
    stream = load([{"event_id": "t1", "timestamp": TS, "type": "turn_start", "metadata": {"k": "dg=="}}])
    labelled = stream.set_turn_summary("t1", "Hello").unwrap()
    assert list(raw(labelled)[0]) == ["event_id", "timestamp", "type", "summary", "metadata"]


@given(st.lists(st.sampled_from([*EVENT_TAGS, "turn_start", "config_delta", "a_future_kind"]), max_size=40))
def test_the_light_readers_spans_are_jps_turns(tags: list[str]) -> None:
    """The light reader cuts turns where ``turn_numbers`` numbers them (JP's rule), and finds none without an
    event."""
    numbers = turn_numbers((tag in EVENT_TAGS, tag == "turn_start") for tag in tags)
    spans = light._spans(tags)
    assert [number for number, span in enumerate(spans) for _ in span] == (
        numbers if any(tag in EVENT_TAGS for tag in tags) else []
    )
