"""Both copies of a conversation (JP's user-local copy and the workspace copy) change together or not at all.

Each writing command runs while the workspace copy cannot be written (bytes, rename, a read-only mount)
or the user-local copy's rename fails after the workspace copy's was done: the command fails with one
line, and both copies are exactly as they were; an earlier edit can still be undone.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.shell.storage.test_safe_writes import mounted
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.storage import files

TARGET = "17800000040"
"""Every writing command changes it: a repair fix, unsummarized turns, keys ``strip`` removes."""
RENAME = """
request = sorted(p for p in target.iterdir() if p.name.endswith("-request.md"))[0]
request.write_text(request.read_text().rstrip("\\n") + " (edited)\\n")
"""
COMMANDS = {
    "label": ("summary", "set", TARGET, "1", "Mine"),
    "summarize": ("summarize", TARGET, "--model", "builtin/extractive"),
    "strip --apply": ("strip", TARGET, "--apply"),
    "repair --apply": ("repair", TARGET, "--apply"),
    "edit -i": ("edit", "-i", TARGET, "--no-summary"),
}
"""The commands that rewrite a conversation, by name (``edit -i`` with an editor script that changes a request)."""


def editor(tmp_path: Path) -> str:
    """An ``EDITOR`` that appends `` (edited)`` to the first request."""
    script = tmp_path / "editor.py"
    script.write_text(f"#!{sys.executable}\nimport pathlib, sys\ntarget = pathlib.Path(sys.argv[-1]).parent\n{RENAME}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def run(workspace: Path, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), *args],
        obj=Settings(new_id=sequential_ids("c"), environ={**os.environ, "EDITOR": editor(tmp_path)}),
        env={"COLUMNS": "200"},
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def user_local_copy(workspace: Path, user_data: Path) -> tuple[Path, Path]:
    """The workspace copy and JP's user-local copy of ``TARGET``, equal, the user-local one a little older."""
    shared = next((workspace / ".jp" / "conversations").glob(f"{TARGET}-*"))
    local = user_data / "workspace" / "ws-fx001" / "conversations" / shared.name
    shutil.copytree(shared, local)
    for path in local.iterdir():
        os.utime(path, ns=(path.stat().st_mtime_ns - 10**9,) * 2)
    return shared, local


@pytest.fixture
def copies(workspace: Path, user_data: Path) -> tuple[Path, Path]:
    return user_local_copy(workspace, user_data)


def contents(*folders: Path) -> dict[str, bytes]:
    return {f"{folder}/{path.name}": path.read_bytes() for folder in folders for path in sorted(folder.iterdir())}


def folder_of(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


def failing_write_in(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = files.os_write

    def write(fd: int, data: bytes) -> int:
        if str(Path(folder_of(fd)).parent) == str(folder):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return original(fd, data)

    monkeypatch.setattr(files, "os_write", write)


def failing_rename_into(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = os.replace

    def replace(src: str, dst: str, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None) -> None:
        if dst_dir_fd is not None and folder_of(dst_dir_fd) == str(folder) and not src.endswith(".kept.tmp"):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        original(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(os, "replace", replace)


FAULTS: dict[str, Callable[[tuple[Path, Path], pytest.MonkeyPatch], None]] = {
    "workspace-bytes": lambda copies, patch: failing_write_in(copies[0], patch),
    "workspace-rename": lambda copies, patch: failing_rename_into(copies[0], patch),
    "user-local-rename": lambda copies, patch: failing_rename_into(copies[1], patch),
}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_failed_write_leaves_both_copies_as_they_were(
    workspace: Path,
    tmp_path: Path,
    copies: tuple[Path, Path],
    command: str,
    fault: str,
) -> None:
    before = contents(*copies)
    with pytest.MonkeyPatch.context() as patch:
        FAULTS[fault](copies, patch)
        code, _, err = run(workspace, tmp_path, *COMMANDS[command])
    assert code != 0
    assert [line for line in err.splitlines() if line.startswith("error:")], err
    assert "Traceback" not in err
    assert contents(*copies) == before
    assert run(workspace, tmp_path, "edit", "--undo", TARGET)[2].endswith(
        "nothing to undo (edit -i, repair --apply, strip --apply and an upgrade from JP's older format keep copies)\n"
    )


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_read_only_workspace_copy_leaves_the_user_local_copy_alone(
    workspace: Path, tmp_path: Path, copies: tuple[Path, Path], command: str
) -> None:
    before = contents(*copies)
    shared = str(copies[0])
    with mounted("mount", "--bind", shared, shared), mounted("mount", "-o", "remount,bind,ro", shared, shared):
        code, _, err = run(workspace, tmp_path, *COMMANDS[command])
    assert code != 0
    assert "read-only file system" in err
    assert contents(*copies) == before


def test_an_edit_that_cannot_be_written_keeps_the_earlier_edit_undoable(
    workspace: Path, tmp_path: Path, copies: tuple[Path, Path]
) -> None:
    original = contents(*copies)
    assert run(workspace, tmp_path, *COMMANDS["edit -i"])[0] == 0
    edited = contents(*copies)
    assert edited != original
    with pytest.MonkeyPatch.context() as patch:
        failing_write_in(copies[0], patch)
        code, _, err = run(workspace, tmp_path, *COMMANDS["edit -i"])
    assert code == 2, err
    assert contents(*copies) == edited
    code, out, err = run(workspace, tmp_path, "edit", "--undo", TARGET)
    assert code == 0, err
    assert out.startswith(f"jp-c{TARGET}: restored the copy kept before edit -i; 0 more to undo")
    assert contents(*copies) == original


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_write_that_works_changes_both_copies_alike(
    workspace: Path, tmp_path: Path, copies: tuple[Path, Path], command: str
) -> None:
    before = contents(*copies)
    code, _, err = run(workspace, tmp_path, *COMMANDS[command])
    assert code == 0, err
    shared, local = copies
    assert contents(shared) != {f"{shared}/{name.rsplit('/', 1)[1]}": data for name, data in before.items()}
    assert {path.name: path.read_bytes() for path in shared.iterdir()} == {
        path.name: path.read_bytes() for path in local.iterdir()
    }


def no_hard_links(src: str, dst: str, **kwargs: object) -> None:
    raise OSError(errno.EPERM, os.strerror(errno.EPERM))


def test_where_hard_links_fail_the_old_files_are_copied_aside_and_put_back(
    workspace: Path, tmp_path: Path, copies: tuple[Path, Path]
) -> None:
    before = contents(*copies)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "link", no_hard_links)
        failing_rename_into(copies[1], patch)
        code, _, err = run(workspace, tmp_path, *COMMANDS["label"])
    assert code == 2, err
    assert contents(*copies) == before
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "link", no_hard_links)
        code, _, err = run(workspace, tmp_path, *COMMANDS["label"])
    assert code == 0, err
    shared, local = copies
    assert b'"summary": "Mine"' in (shared / "events.json").read_bytes()
    assert _names(shared) == _names(local) == ["base_config.json", "events.json", "metadata.json"]
    assert (shared / "events.json").read_bytes() == (local / "events.json").read_bytes()


def _names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())
