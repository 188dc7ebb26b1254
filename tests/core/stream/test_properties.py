"""Property tests: random insertion sequences and random streams."""

from hypothesis import given, settings
from hypothesis import strategies as st

from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import from_list, sequential_ids
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    Compaction,
    ConfigDelta,
    InquiryRequest,
    InquiryResponse,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    TurnStart,
    Unknown,
    is_linkable,
)

text = st.text(max_size=30)
timestamps = st.sampled_from(["2026-01-01 00:00:00.0", "2026-04-10 17:04:20.531233", "2026-04-10 17:04:20.123456789"])
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), text)
json_values = st.recursive(
    json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=8
)
objects = st.dictionaries(text, json_values, max_size=3)
call_ids = st.sampled_from(["call_1", "call_2", "fs_read_file_0"])

payloads: st.SearchStrategy[Payload] = st.one_of(
    st.builds(TurnStart, timestamps, st.none() | text.filter(str.strip), st.none() | objects),
    st.builds(ChatRequest, timestamps, text, st.none() | objects, st.none() | text),
    st.builds(ChatResponse, timestamps, st.sampled_from(["message", "reasoning"]), text, st.none() | objects),
    st.builds(ChatResponse, timestamps, st.just("data"), json_values),
    st.builds(ToolCallRequest, timestamps, call_ids, text, st.none() | objects, st.none() | objects),
    st.builds(ToolCallResponse, timestamps, call_ids, text, st.booleans()),
    st.builds(InquiryRequest, timestamps, call_ids, objects, st.fixed_dictionaries({"text": text})),
    st.builds(InquiryResponse, timestamps, call_ids, json_values),
    st.builds(lambda ts, d: ConfigDelta({"type": "config_delta", "timestamp": ts, "delta": d}), timestamps, objects),
    st.builds(
        lambda ts, a, b: Compaction.new(ts, min(a, b), max(a, b), reasoning_strip=True),
        timestamps,
        st.integers(0, 5),
        st.integers(0, 5),
    ),
    st.builds(lambda ts, d: Unknown({"type": "future_kind", "timestamp": ts, **d}), timestamps, objects),
)
sequences = st.lists(payloads, max_size=40)


@given(sequences, st.lists(st.sampled_from(["aaaaaaa", "bbbbbbb", "ccccccc"]), max_size=20))
def test_random_insertions_keep_ids_unique(sequence: list[Payload], collisions: list[str]) -> None:
    ids = iter([*collisions, *(f"x{n:06d}" for n in range(1000))])
    stream = ConversationStream.empty({}, new_id=lambda: next(ids))
    for payload in sequence:
        stream = stream.push(payload)
    identifiers = [entry.event_id for entry in stream.entries]
    assert len(identifiers) == len(set(identifiers)) == len(sequence)


@given(st.lists(st.lists(payloads, max_size=8), max_size=6))
def test_links_are_turn_scoped(batches: list[list[Payload]]) -> None:
    stream = ConversationStream.empty({}, new_id=sequential_ids())
    for batch in batches:
        stream = stream.extend(batch)
    for turn in stream.turns():
        requests_so_far: list[str] = []
        for entry in turn.entries:
            if isinstance(entry.payload, ChatRequest):
                requests_so_far.append(entry.event_id)
            if is_linkable(entry.payload):
                expected = requests_so_far[-1] if requests_so_far else None
                assert entry.request_id == expected
            else:
                assert entry.request_id is None


@settings(max_examples=200)
@given(sequences)
def test_any_stream_survives_to_json_and_from_json(sequence: list[Payload]) -> None:
    stream = ConversationStream.empty({}, new_id=sequential_ids()).extend(sequence)
    data = stream.to_json()
    reloaded = ConversationStream.from_json(data, stream.base_config_json(), new_id=from_list([])).unwrap()
    assert reloaded == stream
    assert reloaded.to_json() == data
