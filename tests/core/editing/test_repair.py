"""``turnmark repair`` and ``turnmark strip`` on fixtures built for each problem (fixtures/repair-workspace)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tests.conftest import REPO
from tests.core.links.test_projection_properties import hand_edited
from tests.support.optional_tools import needs
from tests.support.terminal import wait_for
from turnmark.core.editing.repair import RepairPlan, apply_repairs, plan_repairs
from turnmark.core.links.check import check_report
from turnmark.core.links.exclusion import exclude_unresolved, tool_pairs
from turnmark.core.links.projection import project
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_document import encode_document
from turnmark.core.stream.json_value import Json
from turnmark.shell.cli.main import Settings, app

REPAIR_FIXTURES = REPO / "fixtures" / "repair-workspace"
ENV = {"COLUMNS": "200", "TERMINAL_WIDTH": "200", "NO_COLOR": "1"}


@pytest.fixture
def repairs(tmp_path: Path, user_data: Path) -> Path:
    root = tmp_path / "repairs"
    shutil.copytree(REPAIR_FIXTURES, root)
    return root


def run(workspace: Path, *args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), *args], obj=Settings(new_id=sequential_ids()), env=ENV
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result.stdout, result.stderr


def test_the_plan_as_text_and_json(repairs: Path, snapshot: SnapshotAssertion) -> None:
    text, _ = run(repairs, "repair", "--all", "--backfill", code=1)
    assert text == snapshot
    data, _ = run(repairs, "repair", "--all", "--backfill", "--format", "json", code=1)
    assert json.loads(data)["conversations"][0]["fixes"][0]["kind"] == "relink"
    assert data == snapshot


def test_a_copied_request_is_relinked_and_the_conversation_saves_again(repairs: Path) -> None:
    _, err = run(repairs, "summary", "set", "17810000010", "0", "x", code=2)
    assert "refusing to save" in err
    out, _ = run(repairs, "repair", "17810000010", "--apply")
    assert out.startswith("jp-c17810000010  applied: 1 fix, 1 link to the original of a copied request kept")
    check, _ = run(repairs, "check", "17810000010")
    assert check.startswith("jp-c17810000010  ok")
    run(repairs, "summary", "set", "17810000010", "0", "Fix the flaky test")


def test_apply_then_check_reports_nothing_for_the_fixed_problems(workspace: Path) -> None:
    run(workspace, "repair", "17800000040", "--apply")
    check, _ = run(workspace, "check", "17800000040")
    assert check.startswith("jp-c17800000040  ok")
    assert "turnmark repair" not in check


def test_backfill_links_one_request_turns_and_clears_their_summaries(repairs: Path) -> None:
    out, _ = run(repairs, "repair", "17810000040", "--backfill", "--apply")
    assert "1 turn with several requests left unlinked" in out
    events = json.loads(next((repairs / ".jp/conversations").glob("17810000040*/events.json")).read_text())
    assert events[2]["request_id"] == "r1ddddd"
    assert "request_id" not in events[6], "a turn with two requests is left alone"
    assert events[3].get("summary") == "Ask about two things", "an unchanged turn keeps its summary"


def test_check_ends_with_the_repair_command(workspace: Path) -> None:
    out, _ = run(workspace, "check", "17800000030", code=1)
    assert out.rstrip().splitlines()[-1] == (
        "  to fix: turnmark repair jp-c17800000030 (shows the plan; --apply or -i makes it)"
    )


@needs(shutil.which("tmux") is not None, "tmux")
def test_interactive_repair_in_a_real_terminal(repairs: Path, tmp_path: Path) -> None:
    session = f"turnmark-repair-{time.monotonic_ns()}"
    turnmark = Path(sys.executable).parent / "turnmark"
    command = f"{turnmark} --workspace {repairs} repair 17810000030 -i; echo EXIT=$?; sleep 30"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "50", command], check=True)
    try:
        screen = wait_for(session, "choice [1-4")
        assert "1) relink to r1ccccc (default)" in screen
        assert "2) relink to r2ccccc" in screen
        subprocess.run(["tmux", "send-keys", "-t", session, "2", "Enter"], check=True)
        screen = wait_for(session, "EXIT=")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    assert "EXIT=0" in screen
    assert "applied: 1 fix" in screen
    events = json.loads(next((repairs / ".jp/conversations").glob("17810000030*/events.json")).read_text())
    assert events[3]["request_id"] == "r2ccccc"


def test_interactive_repair_needs_a_terminal(repairs: Path) -> None:
    _, err = run(repairs, "repair", "17810000030", "-i", code=2)
    assert "-i asks on the terminal" in err


def test_strip_gives_an_older_jp_its_file_back(workspace: Path) -> None:
    directory = next((workspace / ".jp/conversations").glob("17790000000*"))
    original = msgspec.json.decode((directory / "events.json").read_bytes())
    run(workspace, "summarize", "17790000000", "--model", "builtin/extractive")
    run(workspace, "summary", "set", "17790000000", "1", "Thanks")
    out, _ = run(workspace, "strip", "17790000000", code=1)
    assert out == "jp-c17790000000  would be stripped: 10 event_ids and 2 turn summaries would go (--apply writes it)\n"
    out, _ = run(workspace, "strip", "17790000000", "--apply")
    assert out.startswith("jp-c17790000000  stripped: 10 event_ids and 2 turn summaries removed (`turnmark edit --undo")
    stripped = msgspec.json.decode((directory / "events.json").read_bytes())
    inserted = [entry for entry in stripped if entry == {"timestamp": original[1]["timestamp"], "type": "turn_start"}]
    assert len(inserted) == 1, "the plain turn_start catch-up inserted (JP writes it itself)"
    expected = list(original[1:])
    expected.insert(stripped.index(inserted[0]), inserted[0])
    assert (directory / "events.json").read_bytes() == encode_document(expected)
    assert msgspec.json.decode((directory / "base_config.json").read_bytes()) == original[0]["delta"]
    assert run(workspace, "strip", "17790000000")[0] == "jp-c17790000000  nothing to strip\n"


def load(entries: list[Json]) -> ConversationStream:
    return ConversationStream.from_json(msgspec.json.encode(entries), b"{}", new_id=sequential_ids()).unwrap()


@settings(max_examples=150, deadline=None)
@given(hand_edited())
def test_repair_never_reveals_what_it_did_not_address_never_touches_sound_events_and_is_idempotent(
    entries: list[Json],
) -> None:
    stream = load(entries)
    plan = plan_repairs(stream)
    repaired = apply_repairs(stream, plan.fixes)
    before = {stream.entries[p].event_id for p in exclude_unresolved(stream.entries, stream.duplicated_ids).positions}
    fixed = {fix.position for fix in plan.fixes}
    partners = tool_pairs(stream.entries)
    addressed = {stream.entries[p].event_id for p in fixed | {partners[p] for p in fixed if p in partners}}
    visible = {event.event_id for event in project(repaired).view.events}
    assert (visible & before) <= addressed
    touched = {stream.entries[p].event_id for p in fixed}
    after = {entry.event_id: entry for entry in repaired.entries}
    for entry in stream.entries:
        if entry.event_id in touched or entry.type_tag == "turn_start":
            continue
        assert after[entry.event_id] == entry
    if repaired.ambiguous_links():
        assert plan.problems, "a save is refused only while a decision is pending"
        return
    saved = ConversationStream.from_json(repaired.to_json(), b"{}", new_id=sequential_ids("z")).unwrap()
    assert plan_repairs(saved).fixes == (), "a second run plans nothing"


@settings(max_examples=150, deadline=None)
@given(hand_edited())
def test_check_reports_the_orphaned_tool_halves_repair_asks_about(entries: list[Json]) -> None:
    stream = load(entries)
    report = check_report(stream)
    orphans = [
        (stream.file_index(problem.position), problem.event_id, problem.type_tag, problem.why)
        for problem in plan_repairs(stream).problems
        if {"relink", "unlink"}.isdisjoint(choice.kind for choice in problem.choices)
    ]
    found = [(half["index"], half["event_id"], half["type"], half["why"]) for half in report.orphaned_tool_halves]
    assert found == orphans
    if orphans:
        assert not report.ok


def test_strip_json(workspace: Path, snapshot: SnapshotAssertion) -> None:
    out, _ = run(workspace, "strip", "--all", "--format", "json", code=1)
    assert json.loads(out)["ok"] is True
    assert out == snapshot


def summarized_turn_with_problems() -> ConversationStream:
    ts = "2026-06-01 10:00:00.0"
    return load(
        [
            {"event_id": "t000001", "timestamp": ts, "type": "turn_start", "summary": "Old label"},
            {"event_id": "r000001", "timestamp": ts, "type": "chat_request", "content": "Read it"},
            {"event_id": "c000001", "request_id": "r000001", "timestamp": ts, "type": "tool_call_request",
             "id": "read_0", "name": "fs_read_file", "arguments": {}},
            {"event_id": "o000009", "request_id": "r000001", "timestamp": ts, "type": "tool_call_response",
             "id": "other", "content": "eA==", "is_error": False},
            {"event_id": "m000001", "request_id": "gone000", "timestamp": ts, "type": "chat_response",
             "message": "Done."},
        ]
    )  # fmt: skip


def test_a_changed_turn_loses_its_summary_and_orphans_are_answered_or_deleted() -> None:
    stream = summarized_turn_with_problems()
    plan = plan_repairs(stream)
    assert [(fix.kind, fix.event_id, fix.request_id) for fix in plan.fixes] == [("relink", "m000001", "r000001")]
    call, result = plan.problems
    assert [choice.kind for choice in call.choices] == ["answer_call", "delete"]
    assert [choice.kind for choice in result.choices] == ["delete"]
    repaired = apply_repairs(stream, [*plan.fixes, call.choices[0], result.choices[0]])
    assert repaired.turns()[0].summary() is None
    kinds = [(entry.type_tag, getattr(entry.payload, "content", None)) for entry in repaired.entries]
    assert kinds[2:4] == [("tool_call_request", None), ("tool_call_response", "Tool call was interrupted.")]
    assert all(entry.event_id != "o000009" for entry in repaired.entries)
    assert repaired.entries[3].request_id == "r000001"
    assert plan_repairs(repaired) == RepairPlan((), ())


def test_repair_and_strip_can_be_undone(workspace: Path) -> None:
    directory = next((workspace / ".jp/conversations").glob("17800000040*"))
    before = (directory / "events.json").read_bytes()
    run(workspace, "repair", "17800000040", "--apply")
    assert (directory / "events.json").read_bytes() != before
    run(workspace, "edit", "--undo", "17800000040")
    assert (directory / "events.json").read_bytes() == before
    run(workspace, "strip", "17800000040", "--apply")
    run(workspace, "edit", "--undo", "17800000040")
    assert (directory / "events.json").read_bytes() == before
