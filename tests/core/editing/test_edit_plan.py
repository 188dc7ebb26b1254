"""D21 Phases 2-4 as values: the plan, its parsing, validation, and the rebuild under RFD 126's contract."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import FIXTURES, corpus_files, corpus_params
from tests.support.streams import call, load, message, request, result, stream_of, turn
from turnmark.core.editing.edit_files import parse_event
from turnmark.core.editing.edit_plan import annotate, dropped_unsaid, parse_plan, rebuild, render_session
from turnmark.core.links.check import check_report
from turnmark.core.links.projection import project
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.payloads import TurnStart
from turnmark.core.stream.turns import turn_indices

NOW = "2026-07-01 12:00:00.0"


def fixture(conversation: str) -> ConversationStream:
    directory = next((FIXTURES / ".jp" / "conversations").glob(f"{conversation}*"))
    base = directory / "base_config.json"
    return ConversationStream.from_json(
        (directory / "events.json").read_bytes(),
        base.read_bytes() if base.exists() else None,
        new_id=sequential_ids("n"),
        conversation=f"jp-c{conversation}",
    ).unwrap()


def raw(stream: ConversationStream) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = msgspec.json.decode(stream.to_json())
    return entries


def starts(stream: ConversationStream) -> dict[str, dict[str, object]]:
    return {str(entry["event_id"]): entry for entry in raw(stream) if entry["type"] == "turn_start"}


def name_of(line: str) -> str:
    """The file a plan line lists (its ``#`` comment dropped)."""
    return line.split("  # ", 1)[0].strip()


def plan_without(plan: str, *names: str) -> str:
    return "\n".join(line for line in plan.splitlines() if name_of(line) not in names) + "\n"


def test_the_plan_shows_each_turn_with_its_summary(snapshot: SnapshotAssertion) -> None:
    session = render_session(fixture("17800000040"))
    assert "# Turn 0 (a0turn0): Explore the workspace layout" in session.plan
    assert "# Turn 1 (a1turn0): ~ And the locks?" in session.plan
    assert session.plan == snapshot
    assert sorted(session.files) == [name for _, name in parse_plan(session.plan)]


def test_an_identity_edit_gives_back_the_stream_itself() -> None:
    stream = fixture("17800000040")
    session = render_session(stream)
    assert rebuild(stream, session, session.plan, dict(session.files), NOW).unwrap() is stream


def test_an_empty_plan_aborts() -> None:
    stream = fixture("17800000040")
    session = render_session(stream)
    assert rebuild(stream, session, "# all gone\n", dict(session.files), NOW).unwrap() is None


def test_deleting_a_whole_turn_keeps_the_other_turn_starts_byte_for_byte() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    turn_1 = [name for name in session.files if session.positions[name] >= 12]
    edited = rebuild(stream, session, plan_without(session.plan, *turn_1), dict(session.files), NOW).unwrap()
    assert edited is not None
    assert list(starts(edited)) == ["k3m9x2a"]
    assert starts(edited)["k3m9x2a"] == starts(stream)["k3m9x2a"]
    assert check_report(edited).ok


def test_editing_a_tool_result_clears_that_turns_summary_only() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    files = dict(session.files)
    result = next(name for name in files if "tool-result" in name)
    files[result] = files[result].replace("\n---\n", "\n---\nEDITED ", 1)
    edited = rebuild(stream, session, session.plan, files, NOW).unwrap()
    assert edited is not None
    before, after = starts(stream), starts(edited)
    assert "summary" in before["k3m9x2a"]
    assert "summary" not in after["k3m9x2a"]
    assert after["p8q2r4b"] == before["p8q2r4b"]
    changed = next(e for e in raw(edited) if e["type"] == "tool_call_response" and e["event_id"] == "o4p5a6s")
    assert changed["request_id"] == "r1a2b3c"


def test_reordering_two_turns_keeps_both_turn_starts_and_links() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    lines = session.plan.splitlines()
    first = [line for line in lines if line and not line.startswith("#") and session.positions[name_of(line)] < 11]
    second = [line for line in lines if line and not line.startswith("#") and session.positions[name_of(line)] >= 11]
    edited = rebuild(stream, session, "\n".join(second + first) + "\n", dict(session.files), NOW).unwrap()
    assert edited is not None
    assert [t.id() for t in edited.turns()] == ["p8q2r4b", "k3m9x2a"]
    assert check_report(edited).ok


def test_a_new_clarifying_request_gets_a_fresh_id_a_turn_and_a_link() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    files = dict(session.files)
    files["100-request.md"] = "---\ntype: request\n---\nAlso check the docs.\n"
    files["101-message.md"] = "---\ntype: message\n---\nThe docs are fine.\n"
    plan = session.plan + "100-request.md\n101-message.md\n"
    edited = rebuild(stream, session, plan, files, NOW).unwrap()
    assert edited is not None
    last = edited.turns()[-1]
    request, answer = last.events()[1:]
    assert isinstance(last.events()[0].payload, TurnStart)
    assert answer.request_id == request.event_id
    assert request.event_id not in stream.taken
    assert starts(edited)["p8q2r4b"] == starts(stream)["p8q2r4b"], "the turn before keeps its turn_start"


def test_breaking_a_tool_pair_is_reported_with_its_line_and_annotated() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    listed = parse_plan(session.plan)
    call = next((line, name) for line, name in listed if "tool-call" in name)
    plan = plan_without(session.plan, call[1])
    errors = rebuild(stream, session, plan, dict(session.files), NOW).failure()
    result = next(name for name in session.files if "tool-result" in name)
    assert any(error.startswith(f"tool result {result} (line ") for error in errors), errors
    assert not any("toolu_" in error for error in errors), errors
    annotated = annotate(plan, errors)
    assert annotated.startswith("# ERROR: ")
    assert "# Fix the errors above and save, or clear this file to abort." in annotated
    assert annotate(annotated, errors).count("# ERROR:") == len(errors), "annotating again replaces the errors"
    assert [name for _, name in parse_plan(annotated)] == [name for _, name in parse_plan(plan)]


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (lambda plan: "000-request.md\n000-request.md\n", "listed twice"),
        (lambda plan: "000-request.md\n999-missing.md\n", "no file 999-missing.md"),
    ],
)
def test_plan_errors(edit: object, error: str) -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    assert callable(edit)
    errors = rebuild(stream, session, edit(session.plan), dict(session.files), NOW).failure()
    assert any(error in message for message in errors)


def test_a_call_left_without_its_result_gets_jps_error_result() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    result = next(name for name in session.files if "tool-result" in name)
    edited = rebuild(stream, session, plan_without(session.plan, result), dict(session.files), NOW).unwrap()
    assert edited is not None
    results = [e for e in raw(edited) if e["type"] == "tool_call_response"]
    assert any(e["is_error"] is True for e in results)


def test_a_request_following_a_request_is_refused() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    listed = [name for _, name in parse_plan(session.plan)]
    requests = [name for name in listed if name.split("-", 1)[1] == "request.md"]
    plan = "\n".join([requests[0], requests[1], *[n for n in listed if n not in requests]]) + "\n"
    errors = rebuild(stream, session, plan, dict(session.files), NOW).failure()
    assert any("follows the request" in error for error in errors)


@pytest.mark.parametrize("directory", corpus_params())
def test_every_real_event_round_trips_through_its_file_and_an_identity_edit_is_a_no_op(directory: Path) -> None:
    events, base = corpus_files(directory)
    stream = ConversationStream.from_json(events, base, new_id=sequential_ids()).unwrap()
    session = render_session(stream)
    for name, text in session.files.items():
        assert parse_event(name, text, NOW).unwrap() == stream.entries[session.positions[name]].payload, name
    assert rebuild(stream, session, session.plan, dict(session.files), NOW).unwrap() is stream


def test_a_tool_result_moved_above_its_call_is_refused_with_its_line() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    lines = session.plan.splitlines()
    call = next(i for i, line in enumerate(lines) if name_of(line).endswith("tool-call-fs_read_file.md"))
    result = next(i for i, line in enumerate(lines) if i > call and "tool-result-" in line)
    lines[call], lines[result] = lines[result], lines[call]
    errors = rebuild(stream, session, "\n".join(lines) + "\n", dict(session.files), NOW).failure()
    assert any(
        " comes before its tool call " in error and "tool-call-fs_read_file.md (line" in error for error in errors
    )


def test_an_orphaned_inquiry_response_is_refused() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    asked = next(name for name in session.files if name.endswith("inquiry-request.md"))
    errors = rebuild(stream, session, plan_without(session.plan, asked), dict(session.files), NOW).failure()
    answer = next(name for name in session.files if name.endswith("inquiry-response.md"))
    assert any(error.startswith(f"inquiry response {answer} (line ") for error in errors), errors


def test_a_broken_event_file_is_refused_with_its_name_and_line() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    files = dict(session.files)
    name = next(iter(files))
    files[name] = "no frontmatter at all"
    errors = rebuild(stream, session, session.plan, files, NOW).failure()
    assert errors[0].startswith(f"{name}: it must start with a --- frontmatter line (line ")


def test_every_file_of_the_directory_as_the_editor_sees_it(snapshot: SnapshotAssertion) -> None:
    session = render_session(fixture("17800000010"))
    assert session.files == snapshot


def test_an_edit_the_codec_would_refuse_is_reported_not_saved() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    files = dict(session.files)
    name = next(n for n in files if n.endswith("-message.md"))
    files[name] = files[name].replace("timestamp: '", "timestamp: 'yesterday", 1)
    errors = rebuild(stream, session, session.plan, files, NOW).failure()
    assert errors[0].startswith("the result would not load: ")
    assert "timestamp" in errors[0]


def test_a_bad_schema_is_one_line() -> None:
    assert (
        "must be a JSON object"
        in parse_event("0-request.md", "---\ntype: request\nschema: '{bad'\n---\nx\n", NOW).failure()
    )


def test_moving_an_implicit_first_turn_keeps_two_turns() -> None:
    stream = fixture("17790000000")
    session = render_session(stream)
    lines = session.plan.splitlines()
    turn_1 = next(i for i, line in enumerate(lines) if line.startswith("# Turn 1"))
    first = next(i for i, line in enumerate(lines) if line.startswith("# Turn 0"))
    moved = [*lines[:first], *lines[turn_1:], *lines[first:turn_1]]
    edited = rebuild(stream, session, "\n".join(moved) + "\n", dict(session.files), NOW).unwrap()
    assert edited is not None
    assert len(edited.turns()) == 2


def test_untouched_adjacent_requests_stay_valid_when_another_turn_is_edited() -> None:
    stream = load(
        [
            {"event_id": "t000001", "timestamp": NOW, "type": "turn_start"},
            {"event_id": "r000001", "timestamp": NOW, "type": "chat_request", "content": "interrupted"},
            {"event_id": "t000002", "timestamp": NOW, "type": "turn_start"},
            {"event_id": "r000002", "timestamp": NOW, "type": "chat_request", "content": "again"},
            {
                "event_id": "m000002",
                "request_id": "r000002",
                "timestamp": NOW,
                "type": "chat_response",
                "message": "ok",
            },
        ]
    )
    session = render_session(stream)
    files = dict(session.files)
    last = max(files)
    files[last] = files[last].replace("ok", "okay")
    assert rebuild(stream, session, session.plan, files, NOW).unwrap() is not None


def test_a_summary_with_a_line_break_stays_on_its_header_line() -> None:
    stream = fixture("17800000010")
    turn_id = stream.turns()[0].id()
    assert turn_id is not None
    broken = stream.set_turn_summary(turn_id, "first").unwrap()
    position = broken.find(turn_id)
    assert position is not None
    entry = broken.entries[position]
    assert isinstance(entry.payload, TurnStart)
    broken = broken.with_entries(
        [*broken.entries[:position], replace(entry, payload=replace(entry.payload, summary="first\nsecond line")),
         *broken.entries[position + 1 :]]
    )  # fmt: skip
    session = render_session(broken)
    assert "# Turn 0 (k3m9x2a): first second line" in session.plan
    assert rebuild(broken, session, session.plan, dict(session.files), NOW).unwrap() is broken


def test_an_edited_event_keeps_its_metadata_types_when_the_frontmatter_kept_them() -> None:
    stream = load(
        [
            {"event_id": "t000001", "timestamp": NOW, "type": "turn_start"},
            {"event_id": "r000001", "timestamp": NOW, "type": "chat_request", "content": "hi"},
            {"event_id": "m000001", "request_id": "r000001", "timestamp": NOW, "type": "chat_response",
             "message": "hi there", "metadata": {"n": 3, "flag": True, "nothing": None, "list": [1, "a"]}},
        ]
    )  # fmt: skip
    session = render_session(stream)
    files = dict(session.files)
    name = next(n for n in files if n.endswith("-message.md"))
    files[name] = files[name].replace("hi there", "hi there!")
    edited = rebuild(stream, session, session.plan, files, NOW).unwrap()
    assert edited is not None
    assert raw(edited)[2]["metadata"] == raw(stream)[2]["metadata"]
    assert raw(edited)[2]["message"] == "hi there!"


def test_overlays_follow_their_turns_or_are_dropped_never_pointing_at_others() -> None:
    stream = fixture("17800000040")
    compactions = [e for e in raw(stream) if e["type"] == "compaction"]
    session = render_session(stream)
    lines = session.plan.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# Turn 1"))
    end = next(i for i, line in enumerate(lines) if line.startswith("# Turn 2"))
    edited = rebuild(stream, session, "\n".join(lines[:start] + lines[end:]) + "\n", dict(session.files), NOW).unwrap()
    assert edited is not None
    after = {e["event_id"]: (e["from_turn"], e["to_turn"]) for e in raw(edited) if e["type"] == "compaction"}
    for overlay in compactions:
        span = (int(str(overlay["from_turn"])), int(str(overlay["to_turn"])))
        if span[0] <= 1 <= span[1]:
            assert overlay["event_id"] not in after, "an overlay over the deleted turn is dropped"
        elif span[0] > 1:
            assert after[overlay["event_id"]] == (span[0] - 1, span[1] - 1), "a later overlay moves with its turns"
    assert project(edited).view.events


def test_a_request_moved_between_a_tool_call_and_its_result_is_refused() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    names = [name for _, name in parse_plan(session.plan)]
    call = names.index(next(n for n in names if n.endswith("tool-call-fs_read_file.md")))
    second_request = [n for n in names if n.split("-", 1)[1] == "request.md"][1]
    names.remove(second_request)
    names.insert(call + 1, second_request)
    errors = rebuild(stream, session, "\n".join(names) + "\n", dict(session.files), NOW).failure()
    assert any("is no longer in the turn of its tool call" in error and "-tool-result-" in error for error in errors)


def test_annotated_line_numbers_point_at_the_lines_they_name() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    plan = session.plan
    for _ in range(2):
        lines = plan.splitlines()
        call = next(i for i, line in enumerate(lines) if name_of(line).endswith("tool-call-fs_read_file.md"))
        result = next(i for i, line in enumerate(lines) if i > call and "tool-result-" in line)
        lines[call], lines[result] = lines[result], lines[call]
        plan = "\n".join(lines) + "\n"
        errors = rebuild(stream, session, plan, dict(session.files), NOW).failure()
        plan = annotate(plan, errors)
        shown = next(line for line in plan.splitlines() if "comes before its tool call" in line)
        result_line, call_line = (int(number) for number in re.findall(r"\(line (\d+)\)", shown))
        assert plan.splitlines()[result_line - 1].startswith("003-tool-result-"), shown
        assert name_of(plan.splitlines()[call_line - 1]).endswith("tool-call-fs_read_file.md"), shown
        assert "\n\n\n" not in plan, "no blank line piles up round after round"


def test_a_config_change_at_the_start_of_a_turn_stays_there_when_another_turn_is_edited() -> None:
    stream = load(
        [
            {"event_id": "t000001", "timestamp": NOW, "type": "turn_start"},
            {"event_id": "r000001", "timestamp": NOW, "type": "chat_request", "content": "one"},
            {"event_id": "m000001", "request_id": "r000001", "timestamp": NOW, "type": "chat_response",
             "message": "a"},
            {"event_id": "t000002", "timestamp": NOW, "type": "turn_start"},
            {"event_id": "d000002", "timestamp": NOW, "type": "config_delta", "delta": {"x": 1}},
            {"event_id": "r000002", "timestamp": NOW, "type": "chat_request", "content": "two"},
            {"event_id": "m000002", "request_id": "r000002", "timestamp": NOW, "type": "chat_response",
             "message": "b"},
        ]
    )  # fmt: skip
    session = render_session(stream)
    files = dict(session.files)
    first_message = sorted(n for n in files if n.endswith("-message.md"))[0]
    files[first_message] = files[first_message].replace("\na\n", "\nA\n")
    edited = rebuild(stream, session, session.plan, files, NOW).unwrap()
    assert edited is not None
    assert [e["event_id"] for e in raw(edited)] == [e["event_id"] for e in raw(stream)]


def test_an_empty_turn_stays_when_another_turn_is_edited() -> None:
    stream = load(
        [
            {"event_id": "t000001", "timestamp": NOW, "type": "turn_start", "summary": "One"},
            {"event_id": "r000001", "timestamp": NOW, "type": "chat_request", "content": "one"},
            {"event_id": "m000001", "request_id": "r000001", "timestamp": NOW, "type": "chat_response",
             "message": "a"},
            {"event_id": "t000002", "timestamp": NOW, "type": "turn_start", "summary": "Aborted"},
            {"event_id": "t000003", "timestamp": NOW, "type": "turn_start", "summary": "Three"},
            {"event_id": "r000003", "timestamp": NOW, "type": "chat_request", "content": "three"},
            {"event_id": "m000003", "request_id": "r000003", "timestamp": NOW, "type": "chat_response",
             "message": "c"},
            {"event_id": "c000001", "timestamp": NOW, "type": "compaction", "from_turn": 2, "to_turn": 2,
             "reasoning": "strip"},
        ]
    )  # fmt: skip
    session = render_session(stream)
    files = dict(session.files)
    first_message = sorted(n for n in files if n.endswith("-message.md"))[0]
    files[first_message] = files[first_message].replace("\na\n", "\nA\n")
    edited = rebuild(stream, session, session.plan, files, NOW).unwrap()
    assert edited is not None
    assert [e["event_id"] for e in raw(edited)] == [e["event_id"] for e in raw(stream)]
    assert raw(edited)[3] == raw(stream)[3]
    assert raw(edited)[7]["from_turn"] == 2


def test_each_plan_line_says_what_its_event_is_in_at_most_100_columns() -> None:
    """Finding 1 of issue 20: a plan of bare file names cannot be read."""
    lines = render_session(fixture("17800000010")).plan.splitlines()
    listed = {name_of(line): line for line in lines if line and not line.startswith("#")}
    call = next(line for name, line in listed.items() if "tool-call-fs_read_file" in name)
    assert call.endswith("  # fs_read_file crates/jp_llm/src/stream.rs")
    result = next(line for name, line in listed.items() if "tool-result-fs_read_file" in name)
    assert "  # ok, " in result
    assert result.endswith("B · fs_read_file crates/jp_llm/src/stream.rs")
    delta = next(line for name, line in listed.items() if "config-delta" in name)
    assert delta.endswith("  # sets assistant.model.id")
    assert all(len(line) <= 100 for line in lines)


def test_a_preview_is_one_sanitized_line_cut_at_a_word() -> None:
    hostile = "\n\x1b]0;owned\x07Fix the \u202ebuild " + "and then some more words " * 8 + "\nsecond line"
    stream = stream_of(turn(), request(hostile), message("done"), call(), result(is_error=True, content="boom\n"))
    lines = [line for line in render_session(stream).plan.splitlines() if line and not line.startswith("#")]
    assert lines[0].startswith("000-request.md  # Fix the build and then some more words and then")
    assert lines[0].endswith("…")
    assert len(lines[0]) <= 100
    assert not lines[0].endswith(" …")
    assert not any(char in lines[0] for char in "\x1b\x07\u202e")
    assert lines[3] == "003-tool-result-fs_read_file.md  # error: boom · fs_read_file src/lib.rs"


def test_a_line_whose_comment_was_edited_or_removed_still_parses() -> None:
    stream = fixture("17800000010")
    session = render_session(stream)
    lines = session.plan.splitlines()
    edited = [f"{name_of(line)}\t# my note # with hashes" if "-message.md" in line else line for line in lines]
    edited = [name_of(line) if "tool-call" in line else line for line in edited]
    assert rebuild(stream, session, "\n".join(edited) + "\n", dict(session.files), NOW).unwrap() is stream


@pytest.mark.parametrize("directory", corpus_params())
def test_a_real_plan_names_every_tool_calls_target(directory: Path) -> None:
    events, base = corpus_files(directory)
    stream = ConversationStream.from_json(events, base, new_id=sequential_ids()).unwrap()
    lines = render_session(stream).plan.splitlines()
    assert all(len(line) <= 100 for line in lines)
    calls = [line for line in lines if "-tool-call-" in name_of(line)]
    assert all("  # " in line for line in calls)


def turns_in_order(plan: str, order: list[int]) -> str:
    lines = plan.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("# Turn")] + [len(lines)]
    blocks = [lines[a:b] for a, b in itertools.pairwise(starts)]
    return "\n".join(lines[: starts[0]] + [line for n in order for line in blocks[n]]) + "\n"


@pytest.mark.parametrize(
    ("order", "kept", "dropped"),
    [
        ([1, 0, 2, 3], [("c0mpac1", 0, 1), ("c0mpac2", 3, 3)], []),
        ([0, 2, 1, 3], [("c0mpac2", 3, 3)], ["c0mpac1"]),
        ([0, 1, 3, 2], [("c0mpac1", 0, 1), ("c0mpac2", 2, 2)], []),
    ],
    ids=["swap-inside-the-range", "split-the-range", "move-a-one-turn-range"],
)
def test_compaction_overlays_follow_their_turns_or_are_named_as_dropped(
    order: list[int], kept: list[tuple[str, int, int]], dropped: list[str]
) -> None:
    stream = fixture("17800000040")
    session = render_session(stream)
    plan = turns_in_order(session.plan, order)
    edited = rebuild(stream, session, plan, dict(session.files), NOW).unwrap()
    assert edited is not None
    overlays = [e for e in raw(edited) if e["type"] == "compaction"]
    assert [(e["event_id"], e["from_turn"], e["to_turn"]) for e in overlays] == kept
    assert [d.event_id for d in dropped_unsaid(stream, session, plan, edited)] == dropped


def test_a_deleted_overlay_line_or_turn_is_not_named_but_a_merged_turns_start_is() -> None:
    stream = fixture("17800000040")
    session = render_session(stream)
    without_line = plan_without(session.plan, *(n for n in session.files if "compaction" in n))
    edited = rebuild(stream, session, without_line, dict(session.files), NOW).unwrap()
    assert edited is not None
    assert dropped_unsaid(stream, session, without_line, edited) == ()
    turn_1 = [name for name, position in session.positions.items() if turn_indices(stream.entries)[position] == 1]
    request = next(name for name in turn_1 if name.endswith("request.md"))
    merged = plan_without(session.plan, request)
    edited = rebuild(stream, session, merged, dict(session.files), NOW).unwrap()
    assert edited is not None
    said = dropped_unsaid(stream, session, merged, edited)
    assert [(d.type, d.event_id) for d in said] == [("turn_start", "a1turn0"), ("compaction", "c0mpac1")]
    assert (
        said[0].why == "turn 1's start: no turn of the edit begins with its request, so its events joined another turn"
    )
