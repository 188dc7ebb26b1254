"""Provider projection: exclusion closed over tool pairs (RFD 098 Phase 2) and compaction as JP's code does it."""

from tests.support.streams import TS, call, load, message, reasoning, request, result, stream_of, turn
from turnmark.core.links.compaction import SUMMARY_REQUEST, apply_compactions
from turnmark.core.links.exclusion import exclude_unresolved, tool_pairs
from turnmark.core.links.projection import project
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.payloads import Compaction, ToolCallsPolicy


def ids_in_view(stream: ConversationStream) -> list[str]:
    return [event.event_id for event in project(stream).view.events]


def entry(event_id: str, kind: str, request_id: str | None = None, **fields: object) -> JsonObject:
    out: JsonObject = {"event_id": event_id}
    if request_id:
        out["request_id"] = request_id
    out.update({"timestamp": TS, "type": kind, **fields})
    return out


def tool_call(event_id: str, request_id: str | None, call_id: str = "c1") -> JsonObject:
    return entry(event_id, "tool_call_request", request_id, id=call_id, name="fs_read_file", arguments={})


def tool_result(event_id: str, request_id: str | None, call_id: str = "c1") -> JsonObject:
    return entry(event_id, "tool_call_response", request_id, id=call_id, content="b2s=", is_error=False)


def test_deleting_a_request_excludes_its_whole_answer() -> None:
    stream = load(
        [
            entry("t1", "turn_start"),
            entry("r1", "chat_request", content="kept"),
            entry("m1", "chat_response", "r1", message="kept answer"),
            entry("t2", "turn_start"),
            # chat_request r2 deleted by hand
            entry("x2", "chat_response", "r2", reasoning="thinking"),
            tool_call("c2", "r2"),
            tool_result("o2", "r2"),
            entry("m2", "chat_response", "r2", message="orphaned answer"),
            entry("t3", "turn_start"),
            entry("r3", "chat_request", content="next"),
        ]
    )
    projection = project(stream)
    assert [event.event_id for event in projection.view.events] == ["r1", "m1", "r3"]
    [diagnostic] = projection.diagnostics
    assert (diagnostic.request_id, diagnostic.reason) == ("r2", "missing_target")
    assert [(e.event_id, e.by_closure) for e in diagnostic.excluded] == [
        ("x2", False),
        ("c2", False),
        ("o2", False),
        ("m2", False),
    ]


def test_a_pair_split_across_linked_and_unlinked_halves_is_excluded_whole() -> None:
    stream = load(
        [
            entry("t1", "turn_start"),
            entry("r1", "chat_request", content="x"),
            tool_call("c1", "gone"),
            tool_result("o1", None),
            entry("m1", "chat_response", "r1", message="answer"),
        ]
    )
    projection = project(stream)
    assert [event.event_id for event in projection.view.events] == ["r1", "m1"]
    assert [(e.event_id, e.by_closure) for e in projection.diagnostics[0].excluded] == [("c1", False), ("o1", True)]


def test_a_pair_split_across_divergent_request_ids_is_excluded_whole() -> None:
    stream = load(
        [
            entry("t1", "turn_start"),
            entry("r1", "chat_request", content="x"),
            tool_call("c1", "r1"),
            tool_result("o1", "t1"),
        ]
    )
    projection = project(stream)
    assert [event.event_id for event in projection.view.events] == ["r1"]
    [diagnostic] = projection.diagnostics
    assert diagnostic.reason == "wrong_kind"
    assert [(e.event_id, e.by_closure) for e in diagnostic.excluded] == [("c1", True), ("o1", False)]


def test_pairs_match_by_id_within_the_turn_and_count_by_count() -> None:
    stream = load(
        [
            entry("t1", "turn_start"),
            entry("r1", "chat_request", content="x"),
            tool_call("a", "r1", "same"),
            tool_result("b", "r1", "same"),
            tool_call("c", "gone", "same"),
            tool_result("d", "r1", "same"),
            entry("t2", "turn_start"),
            entry("r2", "chat_request", content="y"),
            tool_result("e", "r2", "same"),
        ]
    )
    assert tool_pairs(stream.entries) == {2: 3, 3: 2, 4: 5, 5: 4}
    assert ids_in_view(stream) == ["r1", "a", "b", "r2", "e"]


def test_unlinked_legacy_events_are_never_excluded() -> None:
    stream = load(
        [
            entry("r1", "chat_request", content="legacy"),
            tool_call("c1", None),
            tool_result("o1", None),
            entry("m1", "chat_response", message="legacy answer"),
            entry("m2", "chat_response", "deleted", message="linked and broken"),
        ]
    )
    assert ids_in_view(stream) == ["r1", "c1", "o1", "m1"]


def test_turn_starts_and_requests_are_never_excluded_even_with_a_bad_link() -> None:
    stream = load([entry("t1", "turn_start", "nope"), entry("r1", "chat_request", "nope", content="x")])
    assert exclude_unresolved(stream.entries, stream.duplicated_ids).positions == frozenset()
    assert ids_in_view(stream) == ["r1"]


def test_a_link_to_a_duplicated_id_is_excluded_even_though_the_id_exists() -> None:
    stream = load(
        [
            entry("r1", "chat_request", content="x"),
            entry("r1", "chat_request", content="x"),
            entry("m1", "chat_response", "r1", message="which one?"),
        ]
    )
    projection = project(stream)
    assert projection.diagnostics[0].reason == "duplicated_target"
    assert [event.payload.type_tag for event in projection.view.events] == ["chat_request", "chat_request"]


def test_a_summary_over_an_excluded_answer_still_projects() -> None:
    stream = load(
        [
            entry("t1", "turn_start"),
            entry("m1", "chat_response", "deleted", message="excluded"),
            entry("t2", "turn_start"),
            entry("r2", "chat_request", content="next"),
            {"type": "compaction", "timestamp": TS, "from_turn": 0, "to_turn": 0, "summary": {"summary": "S"}},
        ]
    )
    projection = project(stream)
    kinds = [(event.payload.type_tag, event.synthetic) for event in projection.view.events]
    assert kinds == [("chat_request", True), ("chat_response", True), ("chat_request", False)]
    assert projection.view.events[1].payload.value == "S"  # type: ignore[union-attr]
    assert len(projection.diagnostics) == 1


def test_a_stream_with_no_links_and_no_overlays_projects_to_its_visible_events() -> None:
    stream = load(
        [
            entry("t1", "turn_start"),
            entry("r1", "chat_request", content="x"),
            entry("q1", "inquiry_request", id="q", source={"source": "user"}, question={"text": "?"}),
            entry("a1", "inquiry_response", id="q", answer=True),
            {"event_id": "d1", "type": "config_delta", "timestamp": TS, "delta": {}},
            {"event_id": "u1", "type": "future", "timestamp": TS},
            entry("m1", "chat_response", reasoning="r"),
        ]
    )
    assert ids_in_view(stream) == ["r1", "m1"]
    assert project(stream).diagnostics == ()


# Compaction (jp-format §6 items 8-9, §7.4) -------------------------------------------------------------


def compacted(*compactions: Compaction, turns: int = 4) -> ConversationStream:
    stream = stream_of()
    for index in range(turns):
        stream = stream.extend(
            [turn(), request(f"q{index}"), reasoning(f"r{index}"), call(f"c{index}"), result(f"c{index}")]
        )
        stream = stream.push(message(f"a{index}"))
    return stream.extend(compactions)


def view_of(stream: ConversationStream) -> list[tuple[int, str, str]]:
    out: list[tuple[int, str, str]] = []
    for event in project(stream).view.events:
        payload = event.payload
        text = getattr(payload, "content", None) or str(getattr(payload, "value", "")) or getattr(payload, "name", "")
        out.append((event.turn, payload.type_tag, str(text)))
    return out


def test_mechanical_policies_affect_exactly_their_covered_turns() -> None:
    stream = compacted(
        Compaction.new(TS, 1, 1, reasoning_strip=True),
        Compaction.new(TS, 2, 2, tool_calls=ToolCallsPolicy("omit")),
        Compaction.new(TS, 3, 9, tool_calls=ToolCallsPolicy("strip", request=True, response=True)),
    )
    view = view_of(stream)
    by_turn = {t: [(kind, text) for turn_, kind, text in view if turn_ == t] for t in range(4)}
    assert ("chat_response", "r0") in by_turn[0]
    assert ("chat_response", "r1") not in by_turn[1]
    assert [kind for kind, _ in by_turn[2]] == ["chat_request", "chat_response", "chat_response"]
    assert ("tool_call_response", "[compacted] fs_read_file: success") in by_turn[3]
    arguments = [
        e.payload for e in project(stream).view.events if e.turn == 3 and e.payload.type_tag == "tool_call_request"
    ]
    assert arguments[0].arguments == {}  # type: ignore[union-attr]
    assert ("tool_call_response", "ok") in by_turn[0]


def test_a_summary_replaces_its_run_with_one_synthetic_turn() -> None:
    stream = compacted(Compaction.new(TS, 0, 2, summary="first three"))
    view = view_of(stream)
    assert view[:2] == [(0, "chat_request", SUMMARY_REQUEST), (0, "chat_response", "first three")]
    assert all(turn_ == 3 for turn_, _, _ in view[2:])


def test_identical_text_in_adjacent_distinct_compactions_stays_two_synthetic_turns() -> None:
    stream = compacted(Compaction.new(TS, 0, 1, summary="same"), Compaction.new(TS, 2, 3, summary="same"))
    assert [text for _, kind, text in view_of(stream) if kind == "chat_response"] == ["same", "same"]


def test_a_newer_summary_nested_in_an_older_one_splits_it() -> None:
    stream = compacted(
        Compaction.new("2026-01-01 00:00:00.0", 0, 3, summary="older"),
        Compaction.new("2026-01-02 00:00:00.0", 1, 2, summary="newer"),
    )
    answers = [(turn_, text) for turn_, kind, text in view_of(stream) if kind == "chat_response"]
    assert answers == [(0, "older"), (1, "newer"), (3, "older")]
    runs = [e.summary_run for e in project(stream).view.events if e.payload.type_tag == "chat_request"]
    assert [(run.from_turn, run.to_turn) for run in runs if run] == [(0, 0), (1, 2), (3, 3)]


def test_timestamp_ties_go_to_the_later_entry_and_later_timestamps_win() -> None:
    tie = compacted(Compaction.new(TS, 0, 3, summary="first"), Compaction.new(TS, 0, 3, summary="second"))
    assert [text for _, kind, text in view_of(tie) if kind == "chat_response"] == ["second"]
    newer_first = compacted(
        Compaction.new("2026-02-01 00:00:00.0", 0, 3, summary="newer"),
        Compaction.new("2026-01-01 00:00:00.0", 0, 3, summary="older"),
    )
    assert [text for _, kind, text in view_of(newer_first) if kind == "chat_response"] == ["newer"]


def test_a_summary_wins_over_a_newer_mechanical_policy() -> None:
    stream = compacted(
        Compaction.new("2026-01-01 00:00:00.0", 0, 1, summary="A"),
        Compaction.new("2026-02-01 00:00:00.0", 0, 2, tool_calls=ToolCallsPolicy("strip", response=True)),
    )
    view = view_of(stream)
    assert (0, "chat_response", "A") in view
    assert (2, "tool_call_response", "[compacted] fs_read_file: success") in view


def test_ranges_past_the_end_are_clamped_or_ignored() -> None:
    assert len(view_of(compacted(Compaction.new(TS, 9, 12, summary="nothing")))) == len(view_of(compacted()))
    assert [kind for _, kind, _ in view_of(compacted(Compaction.new(TS, 2, 99, summary="tail")))][-2:] == [
        "chat_request",
        "chat_response",
    ]


def test_overlays_are_consumed_and_projecting_again_changes_nothing() -> None:
    stream = compacted(Compaction.new(TS, 0, 1, summary="S"), Compaction.new(TS, 2, 3, reasoning_strip=True))
    once = apply_compactions(stream.entries)
    assert not any(isinstance(entry.payload, Compaction) for entry in once.entries)
    twice = apply_compactions(once.entries)
    assert twice.entries == once.entries


def test_unknown_entries_pass_through_and_are_not_counted() -> None:
    stream = load([entry("r1", "chat_request", content="x"), {"type": "future", "timestamp": TS}])
    assert len(stream) == 1
    assert [entry.type_tag for entry in apply_compactions(stream.entries).entries] == ["chat_request", "future"]


def test_a_summary_still_projects_when_every_event_of_its_first_turn_is_excluded() -> None:
    stream = load(
        [
            entry("m0", "chat_response", "gone", message="excluded, alone in the implicit turn 0"),
            entry("t1", "turn_start"),
            entry("r1", "chat_request", content="q1"),
            entry("a1", "chat_response", "r1", message="a1"),
            entry("t2", "turn_start"),
            entry("r2", "chat_request", content="q2"),
            {"type": "compaction", "timestamp": TS, "from_turn": 0, "to_turn": 1, "summary": {"summary": "S"}},
        ]
    )
    events = project(stream).view.events
    assert [(e.payload.type_tag, e.synthetic, e.turn) for e in events] == [
        ("chat_request", True, 0),
        ("chat_response", True, 0),
        ("chat_request", False, 2),
    ]


def test_overlay_turns_do_not_shift_when_the_implicit_turn_is_excluded() -> None:
    stream = load(
        [
            entry("m0", "chat_response", "gone", message="excluded"),
            entry("t1", "turn_start"),
            entry("r1", "chat_request", content="q1"),
            entry("s1", "chat_response", "r1", reasoning="kept: turn 1 is not covered"),
            {"type": "compaction", "timestamp": TS, "from_turn": 0, "to_turn": 0, "reasoning": "strip"},
        ]
    )
    assert ids_in_view(stream) == ["r1", "s1"]
