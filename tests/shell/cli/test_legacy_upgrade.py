"""A save that upgrades a conversation from JP's older (legacy) format says so, and `edit --undo` takes it back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tests.conftest import REPO, corpus_conversations
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app

ENV = {"COLUMNS": "100", "TERMINAL_WIDTH": "100", "NO_COLOR": "1"}
LEGACY = "17400000000"
OTHER = "17400001000"
OFFLINE = ("--model", "builtin/extractive")
UPGRADED = "upgraded this conversation from JP's older format"
WOULD = "a real run would upgrade this conversation from JP's older format"
CORPUS = "17653152345"


def run(workspace: Path, *args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), *args], obj=Settings(new_id=sequential_ids()), env=ENV
    )
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result.stdout, result.stderr


def upgrade_keys(document: dict[str, object]) -> dict[str, object]:
    return {"upgraded": document["upgraded"], "upgrade": document["upgrade"]}


@pytest.fixture
def legacy(tmp_path: Path, user_data: Path) -> Path:
    """A copy of ``fixtures/legacy-workspace``: legacy conversations whose first turn has no ``turn_start``."""
    root = tmp_path / "legacy-ws"
    shutil.copytree(REPO / "fixtures" / "legacy-workspace", root)
    return root


def folder(workspace: Path, conversation: str) -> Path:
    [found] = (workspace / ".jp" / "conversations").glob(f"{conversation}-*")
    return found


def files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir()) if path.is_file()}


def test_the_first_summarize_says_it_upgraded_and_undo_gives_the_legacy_bytes_back(legacy: Path) -> None:
    directory = folder(legacy, LEGACY)
    before = files(directory)
    assert "base_config.json" not in before
    out, _ = run(legacy, "summarize", LEGACY, *OFFLINE)
    assert f"  {UPGRADED} (base_config.json split out, 7 event IDs stamped, a turn_start inserted" in out
    assert f"`turnmark edit --undo jp-c{LEGACY}` takes it back" in out
    assert (directory / "base_config.json").is_file()
    said, _ = run(legacy, "edit", "--undo", LEGACY)
    assert said == (
        f"jp-c{LEGACY}: restored the copy kept before summarize, in JP's older format (events.json as it was, "
        "base_config.json removed); 0 more to undo\n"
    )
    assert files(directory) == before


def test_summarize_json_says_it_upgraded_and_a_second_save_says_nothing(
    legacy: Path, snapshot: SnapshotAssertion
) -> None:
    out, _ = run(legacy, "summarize", LEGACY, *OFFLINE, "--format", "json")
    [report] = json.loads(out)["conversations"]
    assert report["written"]
    assert upgrade_keys(report) == snapshot
    again, _ = run(legacy, "summary", "set", LEGACY, "1", "My own words", "--format", "json")
    assert upgrade_keys(json.loads(again)) == {"upgraded": False, "upgrade": None}
    text, _ = run(legacy, "summary", "set", LEGACY, "0", "Mine too")
    assert "older format" not in text


def test_the_dry_run_says_the_save_would_upgrade_and_writes_nothing(legacy: Path, snapshot: SnapshotAssertion) -> None:
    directory = folder(legacy, LEGACY)
    before = files(directory)
    out, _ = run(legacy, "summarize", LEGACY, *OFFLINE, "--dry-run")
    assert out.splitlines()[1] == (
        f"  {WOULD} (base_config.json split out, 7 event IDs stamped, a turn_start inserted before the first turn)"
    )
    dry, _ = run(legacy, "summarize", LEGACY, *OFFLINE, "--dry-run", "--format", "json")
    [report] = json.loads(dry)["conversations"]
    assert upgrade_keys(report) == snapshot
    assert files(directory) == before


def test_summarize_all_reports_each_upgrade_and_its_dry_run_each_one_it_would_make(legacy: Path) -> None:
    dry, _ = run(legacy, "summarize", "--all", *OFFLINE, "--dry-run")
    assert dry.count(WOULD) == 6
    again, _ = run(legacy, "summarize", "--all", *OFFLINE, "--dry-run", "--format", "json")
    reports = json.loads(again)["conversations"]
    assert [report["upgraded"] for report in reports] == [False] * 6
    assert all(report["upgrade"]["config_split_out"] for report in reports)
    out, _ = run(legacy, "summarize", "--all", *OFFLINE, "--format", "json")
    reports = json.loads(out)["conversations"]
    assert [report["upgraded"] for report in reports] == [True] * 6
    assert all(report["upgrade"]["ids_stamped"] > 0 for report in reports)
    text, _ = run(legacy, "summarize", "--all", *OFFLINE, "--dry-run")
    assert "older format" not in text


def test_summary_set_says_it_upgraded_and_undo_takes_it_back(legacy: Path, snapshot: SnapshotAssertion) -> None:
    directory = folder(legacy, LEGACY)
    before = files(directory)
    out, _ = run(legacy, "summary", "set", LEGACY, "0", "Chase the flaky lock test", "--format", "json")
    assert upgrade_keys(json.loads(out)) == snapshot
    said, _ = run(legacy, "edit", "--undo", LEGACY)
    assert said.startswith(f"jp-c{LEGACY}: restored the copy kept before summary set, in JP's older format")
    assert files(directory) == before
    text, _ = run(legacy, "summary", "set", LEGACY, "0", "Chase the flaky lock test")
    assert text.splitlines()[1].startswith(f"  {UPGRADED} (base_config.json split out, ")


def test_repair_says_it_would_upgrade_then_that_it_did_and_undo_takes_it_back(
    legacy: Path, snapshot: SnapshotAssertion
) -> None:
    directory = folder(legacy, OTHER)
    before = files(directory)
    plan, _ = run(legacy, "repair", OTHER, "--backfill", code=1)
    assert f"  {WOULD} (base_config.json split out, 7 event IDs stamped)" in plan
    planned, _ = run(legacy, "repair", OTHER, "--backfill", "--format", "json", code=1)
    [row] = json.loads(planned)["conversations"]
    assert upgrade_keys(row) == snapshot
    assert files(directory) == before
    out, _ = run(legacy, "repair", OTHER, "--backfill", "--apply", "--format", "json")
    [row] = json.loads(out)["conversations"]
    assert row["applied"]
    assert upgrade_keys(row) == snapshot
    said, _ = run(legacy, "edit", "--undo", OTHER)
    assert said.startswith(f"jp-c{OTHER}: restored the copy kept before repair, in JP's older format")
    assert files(directory) == before
    text, _ = run(legacy, "repair", OTHER, "--backfill", "--apply")
    assert f"  {UPGRADED} (base_config.json split out, 7 event IDs stamped); `turnmark edit --undo" in text
    assert "older format" not in run(legacy, "repair", OTHER, "--backfill")[0]


def test_a_conversation_already_current_says_nothing_about_an_upgrade(workspace: Path) -> None:
    out, _ = run(workspace, "summarize", "17800000040", *OFFLINE, "--format", "json")
    [report] = json.loads(out)["conversations"]
    assert upgrade_keys(report) == {"upgraded": False, "upgrade": None}
    assert "older format" not in run(workspace, "summary", "set", "17800000040", "1", "Mine")[0]


@pytest.mark.skipif(
    not any(path.name.startswith(CORPUS) for path in corpus_conversations()), reason=f"corpus {CORPUS}… not found"
)
def test_a_real_legacy_conversation_is_upgraded_said_and_given_back_byte_for_byte(
    tmp_path: Path, user_data: Path
) -> None:
    [source] = [path for path in corpus_conversations() if path.name.startswith(CORPUS)]
    workspace = tmp_path / "corpus-ws"
    shutil.copytree(source, workspace / ".jp" / "conversations" / source.name)
    directory = workspace / ".jp" / "conversations" / source.name
    before = files(directory)
    assert "base_config.json" not in before
    dry, _ = run(workspace, "summarize", CORPUS, *OFFLINE, "--dry-run", "--format", "json")
    [planned] = json.loads(dry)["conversations"]
    assert planned["upgraded"] is False
    assert planned["upgrade"]["config_split_out"] is True
    out, _ = run(workspace, "summarize", CORPUS, *OFFLINE, "--format", "json")
    [report] = json.loads(out)["conversations"]
    assert report["upgraded"] is True
    assert report["upgrade"] == planned["upgrade"]
    assert report["upgrade"]["ids_stamped"] == len(json.loads(before["events.json"])) - 1
    assert (directory / "base_config.json").is_file()
    said, _ = run(workspace, "edit", "--undo", CORPUS)
    assert "in JP's older format (events.json as it was, base_config.json removed)" in said
    assert files(directory) == before
