"""``summarize --all --dry-run`` with the offline summarizer: a plan is made again exactly when what it was made
from changed (the conversation, its base config, the configuration, the options, a running jp's lock)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnmark.core.search import freshness
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.legacy_upgrade import LegacyUpgrade
from turnmark.shell import version
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.storage.cache_db import cache_path
from turnmark.shell.storage.locking import try_lock
from turnmark.shell.storage.workspace import list_conversations, require_workspace
from turnmark.shell.usecases import catchup_report, summarize

OLD = 1_700_000_000
PLAN = ["summarize", "--all", "--dry-run", "--model", "builtin/extractive"]


@pytest.fixture
def settled(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    for path in (workspace / ".jp" / "conversations").rglob("*.json"):
        os.utime(path, (OLD, OLD))
    return workspace


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The conversations each run planned (read), in order."""
    seen: list[str] = []
    real = summarize.catch_up

    def counting(ref, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(ref.display_id)
        return real(ref, *args, **kwargs)

    monkeypatch.setattr(summarize, "catch_up", counting)
    return seen


def plan(workspace: Path, *extra: str) -> str:
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), "--jobs", "1", *extra, *PLAN], obj=Settings(new_id=sequential_ids())
    )
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def listed(workspace: Path) -> None:
    """A listing, which stores a fresh row of each changed conversation (a dry run then looks its plan up by it)."""
    result = CliRunner().invoke(app, ["--workspace", str(workspace), "conversations"], obj=Settings())
    assert result.exit_code in (0, 1), result.output


def waiting_events(workspace: Path) -> Path:
    """The events of a conversation whose plan is not empty."""
    text = plan(workspace)
    first = next(line.split()[0] for line in text.splitlines() if "to summarize" in line and " 0 turns" not in line)
    ref = next(ref for ref in list_conversations(require_workspace(workspace)) if ref.display_id == first)
    return ref.directories[0] / "events.json"


def again(workspace: Path, planned: list[str], *extra: str) -> tuple[str, list[str]]:
    """Another dry run: what it printed, and the conversations it planned."""
    planned.clear()
    printed = plan(workspace, *extra)
    return printed, list(planned)


def test_a_second_dry_run_plans_nothing_and_says_the_same(settled: Path, planned: list[str]) -> None:
    first = plan(settled)
    assert planned
    assert again(settled, planned) == (first, [])


def test_a_changed_conversation_is_planned_again_alone(settled: Path, planned: list[str]) -> None:
    events = waiting_events(settled)
    planned.clear()
    entries = json.loads(events.read_bytes())
    entries += [
        {"timestamp": "2026-03-12 09:00:00.0", "type": "turn_start"},
        {"timestamp": "2026-03-12 09:00:00.0", "type": "chat_request", "content": "Add a changelog entry"},
        {"timestamp": "2026-03-12 09:00:01.0", "type": "chat_response", "message": "Added."},
    ]
    events.write_text(json.dumps(entries, indent=2))
    after = plan(settled)
    assert len(planned) == 1
    planned.clear()
    shutil.rmtree(cache_path(require_workspace(settled)).parent)
    assert plan(settled) == after


def test_other_configuration_or_a_held_lock_plans_again(settled: Path, planned: list[str]) -> None:
    first = plan(settled)
    events = waiting_events(settled)
    smaller, read = again(settled, planned, "--cfg", "conversation.turn_summary.generate.batch_size=1")
    assert read
    assert smaller != first
    printed, read = again(settled, planned)
    assert printed == first
    assert read
    assert again(settled, planned) == (first, [])
    ref = next(ref for ref in list_conversations(require_workspace(settled)) if events.parent in ref.directories)
    lock = try_lock(ref)
    assert lock is not None
    try:
        plan(settled)
    finally:
        lock.release()
    assert planned == [ref.display_id]


def test_a_damaged_plan_table_costs_one_slow_run(settled: Path, planned: list[str]) -> None:
    first = plan(settled)
    with sqlite3.connect(cache_path(require_workspace(settled))) as connection:
        connection.execute("DROP TABLE plans")
    printed, read = again(settled, planned)
    assert printed == first
    assert read
    assert again(settled, planned) == (first, [])


def test_a_rewritten_base_config_plans_again(settled: Path, planned: list[str]) -> None:
    events = waiting_events(settled)
    base_config = events.parent / "base_config.json"
    if not base_config.exists():
        base_config.write_text("{}")
    plan(settled)
    planned.clear()
    base_config.write_bytes(base_config.read_bytes())
    os.utime(base_config, (OLD + 1, OLD + 1))
    plan(settled)
    assert len(planned) == 1


def test_a_plan_is_kept_under_the_copy_its_catch_up_read(
    settled: Path, user_data: Path, planned: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conversation with a user-local copy B beside the workspace's A: when B becomes the newest between the
    run's lookup (the cache row of A) and the catch-up's read, the plan made from B is not kept under A's
    inputs, so once A is the newest again (and a listing has read it) its plan is made from A, not shown from B's."""
    events = next((settled / ".jp" / "conversations").glob("17800000010-*")) / "events.json"
    copy = user_data / "workspace" / "ws-fx001" / "conversations" / events.parent.name / "events.json"
    shutil.copytree(events.parent, copy.parent)
    copy.write_bytes(copy.read_bytes().replace(b"p8q2r4b", b"p8q2r4S"))

    def b_at(seconds: int) -> None:
        for path in copy.parent.iterdir():
            os.utime(path, (seconds, seconds))

    b_at(OLD - 100)
    assert "p8q2r4b" in plan(settled)
    real = summarize._read

    def b_made_newest(ref, *args, **kwargs):  # type: ignore[no-untyped-def]
        if ref.id == 17800000010:
            b_at(OLD + 100)
        return real(ref, *args, **kwargs)

    monkeypatch.setattr(summarize, "_read", b_made_newest)
    assert "p8q2r4S" in plan(settled, "--cfg", "conversation.turn_summary.generate.batch_size=1")
    monkeypatch.setattr(summarize, "_read", real)
    b_at(OLD - 100)
    listed(settled)
    printed = plan(settled, "--cfg", "conversation.turn_summary.generate.batch_size=1")
    assert "p8q2r4b" in printed
    assert "p8q2r4S" not in printed


def test_an_edit_in_place_that_keeps_size_and_mtime_plans_again(settled: Path, planned: list[str]) -> None:
    """A plan stored under a settled file's identity (not hashed) is not shown once the bytes change, even when
    the size and the modification time are put back: the change time moves."""
    events = next((settled / ".jp" / "conversations").glob("17800000010-*")) / "events.json"
    assert "p8q2r4b" in plan(settled)
    events.write_bytes(events.read_bytes().replace(b"p8q2r4b", b"p8q2r4X"))
    os.utime(events, (OLD, OLD))
    listed(settled)
    printed, read = again(settled, planned)
    assert read == ["jp-c17800000010"]
    assert "p8q2r4X" in printed


def test_a_base_config_rewritten_after_the_read_plans_again(
    settled: Path, planned: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan is keyed by the ``base_config.json`` its catch-up read, not by the file as it is when the plan is
    stored: one rewritten in between (settled by then) does not get the old file's plan (review, issue 40)."""
    events = next((settled / ".jp" / "conversations").glob("17800000040-*")) / "events.json"
    base_config = events.parent / "base_config.json"
    smaller = json.loads(base_config.read_bytes())
    smaller.setdefault("conversation", {})["turn_summary"] = {"generate": {"batch_size": 1}}
    real = summarize._read

    def rewritten_after(ref, *args, **kwargs):  # type: ignore[no-untyped-def]
        loaded = real(ref, *args, **kwargs)
        if ref.id == 17800000040:
            base_config.write_text(json.dumps(smaller))
            os.utime(base_config, (OLD + 1, OLD + 1))
        return loaded

    monkeypatch.setattr(summarize, "_read", rewritten_after)
    plan(settled)
    monkeypatch.setattr(summarize, "_read", real)
    listed(settled)
    printed, read = again(settled, planned)
    assert read == ["jp-c17800000040"]
    shutil.rmtree(cache_path(require_workspace(settled)).parent)
    assert plan(settled) == printed


def test_another_turnmark_plans_again(settled: Path, planned: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    first = plan(settled)
    monkeypatch.setattr(version, "installed", lambda: "99.0")
    printed, read = again(settled, planned)
    assert printed == first
    assert read


def test_a_stored_plan_says_again_that_a_real_run_would_upgrade_a_legacy_conversation(
    settled: Path, planned: list[str]
) -> None:
    first = plan(settled)
    assert "jp-c17790000000" in planned
    assert "a real run would upgrade this conversation from JP's older format" in first
    assert again(settled, planned) == (first, [])


def test_a_report_with_an_upgrade_comes_back_from_its_json() -> None:
    report = catchup_report.CatchupReport(
        "jp-c17790000000", model="builtin/extractive", upgrade=LegacyUpgrade(9, True, True), upgraded=True
    )
    stored = json.loads(json.dumps(report.to_json()))
    assert stored["upgraded"] is True
    assert stored["upgrade"] == {"ids_stamped": 9, "config_split_out": True, "turn_start_inserted": True}
    assert catchup_report.CatchupReport.from_json(stored) == report


def test_the_run_reads_the_shared_configuration_once(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's and workspace's files and the environment are read once per run, not once per conversation;
    each conversation's own config is still its own (issue 40)."""
    from turnmark.shell.storage import config_files

    config = workspace / ".jp" / "config.toml"
    config.write_text("[conversation.turn_summary.generate]\nbatch_size = 3\n")
    reads: list[Path] = []
    real = config_files._Reader.file_layers

    def counting(self: object, path: Path) -> object:
        reads.append(path)
        return real(self, path)  # type: ignore[arg-type]

    monkeypatch.setattr(config_files._Reader, "file_layers", counting)
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), "--jobs", "1", "summarize", "--all", "--model", "builtin/extractive"],
        obj=Settings(new_id=sequential_ids()),
    )
    assert result.exit_code in (0, 1), result.output
    assert len(list_conversations(require_workspace(workspace))) > 1
    assert reads.count(config) == 1
