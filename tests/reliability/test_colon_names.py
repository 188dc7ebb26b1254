"""A conversation folder whose name holds a colon is named by its whole name, and as ``CONV:TURN`` (issue 34,
finding 11): ``17800000099-a:b`` was split at its colon and taken for turn ``b`` of ``17800000099-a``."""

from __future__ import annotations

from pathlib import Path

from tests.reliability.processes import isolated_env, run_turnmark

PROBE = (
    "names: a folder `17800000099-a:b` named whole and as `CONV:TURN` (issue 34, finding 11)",
    "{cases} command runs",
    "the folder found by its whole name first, and with a turn",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""


FOLDER = "17800000099-a:b"


def renamed(workspace: Path) -> Path:
    conversations = workspace / ".jp" / "conversations"
    (conversations / "17800000010-add-retry-backoff-to-the-stream-handler").rename(conversations / FOLDER)
    return workspace


def test_a_folder_with_a_colon_is_named_by_its_whole_name(workspace: Path, tmp_path: Path) -> None:
    result = run_turnmark(renamed(workspace), isolated_env(tmp_path / "home"), ("turns", FOLDER), 60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("k3m9x2a ")


def test_a_folder_with_a_colon_is_named_with_a_turn(workspace: Path, tmp_path: Path) -> None:
    args = ("transcript", "--turn", f"{FOLDER}:p8q2r4b")
    result = run_turnmark(renamed(workspace), isolated_env(tmp_path / "home"), args, 60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith('<turn id="p8q2r4b">')
