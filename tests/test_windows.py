"""retain and the turn windows (jp-format §4.5-4.6)."""

from turnmark.core.entries import Entry
from turnmark.core.payloads import ChatResponse, Compaction, TurnStart
from turnmark.core.stream import ConversationStream
from turnmark.core.windows import retain, retain_first_and_last_turns, retain_first_turns, retain_last_turns

from .streams import TS, load, request, stream_of, turn


def contents(stream: ConversationStream) -> list[str]:
    out = []
    for entry in stream.entries:
        payload = entry.payload
        out.append(getattr(payload, "content", None) or entry.type_tag)
    return out


def three_turns() -> ConversationStream:
    return stream_of(
        request("zero"), turn("one"), request("one"), turn("two"), request("two"), turn("three"), request("three")
    )


def test_retain_last_turns_drops_the_implicit_turn() -> None:
    assert contents(retain_last_turns(three_turns(), 2)) == ["turn_start", "two", "turn_start", "three"]
    assert retain_last_turns(three_turns(), 3) == three_turns()
    assert contents(retain_last_turns(three_turns(), 0)) == []


def test_retain_first_turns() -> None:
    assert contents(retain_first_turns(three_turns(), 1)) == ["turn_start", "one"]
    assert contents(retain_first_turns(three_turns(), 0)) == []


def test_retain_first_and_last_turns() -> None:
    assert contents(retain_first_and_last_turns(three_turns(), 1, 1)) == ["turn_start", "one", "turn_start", "three"]
    assert retain_first_and_last_turns(three_turns(), 2, 1) == three_turns()
    assert contents(retain_first_and_last_turns(stream_of(request("a")), 1, 1)) == []


def test_windows_keep_turn_starts_with_their_summaries() -> None:
    kept = retain_last_turns(three_turns(), 1)
    assert [t.summary() for t in kept.turns()] == ["three"]


def test_retain_keeps_globals_and_compactions_before_the_first_removed_turn() -> None:
    entries = [
        {"timestamp": TS, "type": "turn_start"},
        {"timestamp": TS, "type": "chat_request", "content": "a"},
        {"timestamp": TS, "type": "turn_start", "summary": "second"},
        {"timestamp": TS, "type": "chat_request", "content": "b"},
        {"timestamp": TS, "type": "chat_response", "message": "drop me"},
        {"type": "compaction", "timestamp": TS, "from_turn": 0, "to_turn": 0, "reasoning": "strip"},
        {"type": "compaction", "timestamp": TS, "from_turn": 0, "to_turn": 1, "reasoning": "strip"},
        {"type": "config_delta", "timestamp": TS, "delta": {}},
    ]
    stream = load(entries)
    kept = retain(stream, lambda entry: not isinstance(entry.payload, ChatResponse))
    compactions = [e.payload for e in kept.entries if isinstance(e.payload, Compaction)]
    assert [c.to_turn for c in compactions] == [0]
    assert kept.entries[-1].type_tag == "config_delta"
    assert kept.turns()[1].summary() is None, "a turn that lost events no longer matches its summary"
    assert retain(stream, lambda entry: True) is stream


def test_retain_removing_a_whole_turn_keeps_other_summaries() -> None:
    stream = stream_of(turn("a"), request("a"), turn("b"), request("b"))

    def second_turn(entry: Entry) -> bool:
        payload = entry.payload
        return (isinstance(payload, TurnStart) and payload.summary == "b") or getattr(payload, "content", None) == "b"

    kept = retain(stream, second_turn)
    assert [t.summary() for t in kept.turns()] == ["b"]
