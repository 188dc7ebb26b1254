"""What ``repair`` says: fixes grouped by turn and cause, links already right not listed as changes
(the JSON keeps every fix), and ``-i`` saying why it asks again."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import REPO
from turnmark.core.editing.repair import plan_repairs
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli import repairing
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.storage import conversations
from turnmark.shell.storage import workspace as workspace_files

COPIED = "17810000010-copied-request"
ANSWERS = 45


@pytest.fixture
def copied(tmp_path: Path, user_data: Path) -> Path:
    """The copied-request fixture with 45 answers in the copy's turn and 3 in the original's."""
    root = tmp_path / "ws"
    shutil.copytree(REPO / "fixtures" / "repair-workspace", root)
    events_file = root / ".jp" / "conversations" / COPIED / "events.json"
    events = json.loads(events_file.read_text())
    first, second = events[:3], events[3:5]
    answer = events[5]
    more = [{**answer, "event_id": f"a{n:06d}"} for n in range(ANSWERS)]
    early = [{**events[2], "event_id": f"b{n:06d}"} for n in range(2)]
    events_file.write_text(json.dumps([*first, *early, *second, *more], indent=2))
    return root


def run(workspace: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), *args], obj=Settings(new_id=sequential_ids()), env={"COLUMNS": "200"}
    )
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result.stdout


def test_fixes_are_grouped_by_turn_and_cause_and_no_op_fixes_are_not_listed(copied: Path) -> None:
    lines = run(copied, "repair", "17810000010", code=1).splitlines()
    assert lines[0] == (
        "jp-c17810000010  would apply: 45 fixes, 3 links to the original of a copied request kept as they are"
    )
    assert len(lines) == 2
    assert lines[1].startswith(f"  turn 1: relink {ANSWERS} answers to request ")
    copy = lines[1].split()[7]
    assert lines[1].endswith(f"(entries 7-51); request r1aaaaa was copied, and {copy} is the copy in this turn")
    fixes = json.loads(run(copied, "repair", "17810000010", "--format", "json", code=1))["conversations"][0]["fixes"]
    assert len(fixes) == ANSWERS + 3, "the JSON keeps every fix, the confirmations too"
    assert run(copied, "repair", "17810000010", "--apply").startswith("jp-c17810000010  applied: 45 fixes")
    assert run(copied, "check", "17810000010").startswith("jp-c17810000010  ok")


def test_interactive_repair_says_why_it_asks_again(
    tmp_path: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(REPO / "fixtures" / "repair-workspace", root)
    ref = workspace_files.conversation_at(root / ".jp" / "conversations" / "17810000020-orphaned-tool-halves")
    assert ref is not None
    stream = conversations.read_conversation(ref, sequential_ids()).stream
    problems = plan_repairs(stream).problems
    monkeypatch.setattr("sys.stdin", io.StringIO("7\nyes\n\ns\n"))
    decided = repairing._ask(stream, problems)
    err = capsys.readouterr().err
    assert [fix.kind for fix in decided] == ["answer_call"]
    assert "choice [1-2, Enter = 1, s skip, q stop]: " in err
    assert "choice [1, Enter = 1, s skip, q stop]: " in err
    assert "'7' is not one of the choices: type 1 to 2, s or q" in err
    assert "'yes' is not one of the choices" in err
