"""turnmark's own folders (issue 39): never inside a workspace it works on, and those of workspaces that are gone
pruned now and then, never one whose workspace still exists."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import REPO
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.storage import pruning, state_dirs

ENV = {"COLUMNS": "200", "NO_COLOR": "1"}
DAY = 24 * 3600


def tm(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--workspace", str(root), *args], obj=Settings(new_id=sequential_ids()), env=ENV)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        str(path.relative_to(root)): path.read_bytes() if path.is_file() else None
        for path in sorted(root.rglob("*"))
        if "locks" not in path.parts
    }


@pytest.fixture(autouse=True)
def fresh_process_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_dirs, "_outside", set())
    monkeypatch.setattr(state_dirs, "_claimed", set())
    monkeypatch.setattr(pruning, "_looked", [])


@pytest.fixture
def legacy(tmp_path: Path, user_data: Path) -> Path:
    root = tmp_path / "legacy"
    shutil.copytree(REPO / "fixtures" / "legacy-workspace", root)
    return root


@pytest.mark.parametrize(
    ("variable", "command"),
    [
        ("TURNMARK_CACHE_DIR", ("conversations",)),
        ("XDG_CACHE_HOME", ("find", "lock")),
        ("TURNMARK_STATE_DIR", ("summarize", "--all", "--model", "builtin/extractive")),
        ("XDG_STATE_HOME", ("summarize", "--all", "--model", "builtin/extractive")),
    ],
)
def test_a_home_inside_the_workspace_is_refused_and_nothing_is_written(
    variable: str, command: tuple[str, ...], legacy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if variable.startswith("XDG"):
        monkeypatch.delenv(variable.replace("XDG_", "TURNMARK_").replace("_HOME", "_DIR"))
    monkeypatch.setenv(variable, str(legacy / ".jp" / "shipped"))
    before = snapshot(legacy)
    code, out, err = tm(legacy, *command)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith(f"error: {legacy / '.jp' / 'shipped'}")
    assert f"${variable}" in line
    assert "inside the workspace" in line
    assert out == ""
    assert snapshot(legacy) == before


def test_a_link_into_the_workspace_is_seen_through(
    legacy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = tmp_path / "looks-elsewhere"
    link.symlink_to(legacy / ".jp")
    monkeypatch.setenv("TURNMARK_CACHE_DIR", str(link / "cache"))
    before = snapshot(legacy)
    code, _, err = tm(legacy, "conversations")
    assert code == 2
    assert "inside the workspace" in err
    assert snapshot(legacy) == before


def test_a_workspace_that_is_the_home_directory_keeps_its_folders_there(
    legacy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(legacy))
    monkeypatch.setenv("TURNMARK_CACHE_DIR", str(legacy / ".cache" / "turnmark"))
    code, _, err = tm(legacy, "conversations")
    assert code == 0, err
    assert (legacy / ".cache" / "turnmark").is_dir()


def test_each_folder_records_its_workspace(workspace: Path) -> None:
    code, _, _ = tm(workspace, "conversations")
    assert code == 0
    folder = state_dirs.cache_home() / state_dirs.workspace_key(workspace)
    recorded = (folder / state_dirs.MARKER).read_bytes()
    assert recorded == os.fsencode(os.path.realpath(workspace)) + b"\n"


def folder_for(home: Path, root: Path, *, marker: bytes | None = None, age: float = 0) -> Path:
    folder = home / state_dirs.workspace_key(root)
    folder.mkdir(parents=True)
    (folder / "cache.sqlite3").write_bytes(b"")
    if marker is not None:
        (folder / state_dirs.MARKER).write_bytes(marker)
    then = time.time() - age
    for path in (*folder.iterdir(), folder):
        os.utime(path, (then, then), follow_symlinks=False)
    return folder


def record(root: Path) -> bytes:
    return os.fsencode(os.path.realpath(root)) + b"\n"


def test_pruning_removes_only_the_folders_of_workspaces_that_are_gone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    alive = tmp_path / "alive"
    (alive / ".jp").mkdir(parents=True)
    gone = tmp_path / "gone"
    kept_alive = folder_for(home, alive, marker=record(alive), age=400 * DAY)
    removed = folder_for(home, gone, marker=record(gone), age=2 * DAY)
    just_gone = folder_for(home, tmp_path / "gone-today", marker=record(tmp_path / "gone-today"), age=3600)
    unknown_old = folder_for(home, tmp_path / "older", age=100 * DAY)
    unknown_recent = folder_for(home, tmp_path / "recent", age=10 * DAY)
    forged = folder_for(home, tmp_path / "forged", marker=record(gone), age=10 * DAY)
    other = home / "notes"
    other.mkdir()
    os.utime(other, (0, 0))
    (home / "linked-0123456789abcdef").symlink_to(tmp_path / "gone")
    assert pruning.prune(home, time.time(), 90) == [removed, unknown_old]
    assert not removed.exists()
    assert not unknown_old.exists()
    assert all(folder.is_dir() for folder in (kept_alive, just_gone, unknown_recent, forged, other))
    assert (home / "linked-0123456789abcdef").is_symlink()
    assert pruning.prune(home, time.time(), 0) == []
    assert pruning.prune(home, time.time() + 20 * DAY, 0) == [just_gone]
    assert forged.is_dir()


def test_pruning_runs_once_a_day_over_both_homes(workspace: Path, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    cache_folder = folder_for(state_dirs.cache_home(), gone, marker=record(gone), age=3 * DAY)
    state_folder = folder_for(state_dirs.state_home(), gone, marker=record(gone), age=3 * DAY)
    code, _, _ = tm(workspace, "conversations")
    assert code == 0
    assert not cache_folder.exists()
    assert not state_folder.exists()
    assert (state_dirs.cache_home() / state_dirs.workspace_key(workspace)).is_dir()
    again = folder_for(state_dirs.cache_home(), gone, marker=record(gone), age=3 * DAY)
    pruning._looked.clear()
    assert pruning.now_and_then() == []
    assert again.is_dir()
    os.utime(state_dirs.cache_home() / pruning.STAMP, (0, 0))
    pruning._looked.clear()
    assert pruning.now_and_then() == [again]
