"""A new conversation (``fork``, ``query --new``) appears whole or not at all.

It is built in a hidden folder (``.turnmark-new-<pid>-<random>``) that neither JP nor turnmark lists, and
renamed into place in one step; build folders another run abandoned are removed by the next one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.shell.storage.test_safe_writes import mounted
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.storage import files

SOURCE = "17800000040"
HOUR = 3600


def run(workspace: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), *args], obj=Settings(new_id=sequential_ids("n")), env={"COLUMNS": "200"}
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def entries(workspace: Path) -> list[str]:
    return sorted(path.name for path in (workspace / ".jp" / "conversations").iterdir())


def assert_no_trace_of_the_fork(workspace: Path, before: list[str], code: int, err: str) -> None:
    assert code == 2
    assert err.count("\n") == 1, err
    assert "no space left on device" in err
    assert entries(workspace) == before
    listed, listing, _ = run(workspace, "conversations")
    assert listed == 0
    assert listing.count("jp-c") == 4
    picked, _, problem = run(workspace, "turns")
    assert picked == 0, problem


def test_a_full_disk_while_writing_the_forks_events_leaves_no_conversation(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = files.os_write

    def full_at_events(fd: int, data: bytes) -> int:
        if "events.json" in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return original(fd, data)

    monkeypatch.setattr(files, "os_write", full_at_events)
    before = entries(workspace)
    code, _, err = run(workspace, "fork", SOURCE)
    assert re.fullmatch(
        rf"error: {re.escape(str(workspace))}/\.jp/conversations/\d{{11}}: cannot create the conversation: "
        r"no space left on device\n",
        err,
    ), err
    assert_no_trace_of_the_fork(workspace, before, code, err)


@contextlib.contextmanager
def pages_left(root: Path, pages: int) -> Iterator[None]:
    """Fill the file system of ``root`` until only ``pages`` 4 KiB pages are free."""
    filler = root / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"x" * 4096)
        os.ftruncate(fd, os.fstat(fd).st_size - pages * 4096)
    finally:
        os.close(fd)
    yield


def test_a_really_full_disk_during_fork_leaves_no_conversation(tmp_path: Path, user_data: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    with mounted("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(small)):
        workspace = small / "ws"
        shutil.copytree(Path(__file__).parents[3] / "fixtures" / "workspace", workspace)
        before = entries(workspace)
        with pages_left(small, 2):
            code, _, err = run(workspace, "fork", SOURCE)
        assert_no_trace_of_the_fork(workspace, before, code, err)


def build_folder(workspace: Path, pid: int, age: float, tag: str) -> Path:
    folder = workspace / ".jp" / "conversations" / f".turnmark-new-{pid}-{tag}"
    folder.mkdir()
    (folder / "metadata.json").write_text('{"last_activated_at": "2099-01-01 00:00:00.0"}\n')
    when = os.stat(folder).st_mtime - age
    os.utime(folder, (when, when))
    return folder


def gone_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_build_folder_is_never_listed_nor_taken_as_the_most_recent(workspace: Path) -> None:
    most_recent = run(workspace, "turns")
    build_folder(workspace, os.getpid(), 0, "0a1b2c3d")
    code, listing, _ = run(workspace, "conversations")
    assert code == 0
    assert listing.count("jp-c") == 4
    assert run(workspace, "turns") == most_recent


def test_the_next_fork_removes_abandoned_build_folders_only(workspace: Path) -> None:
    dead = gone_pid()
    abandoned = build_folder(workspace, dead, HOUR, "0000000a")
    forgotten = build_folder(workspace, os.getpid(), 2 * 24 * HOUR, "0000000b")
    building = build_folder(workspace, os.getpid(), HOUR, "0000000c")
    just_started = build_folder(workspace, dead, 0, "0000000d")
    code, _, err = run(workspace, "fork", SOURCE)
    assert code == 0, err
    assert not abandoned.exists()
    assert not forgotten.exists()
    assert building.is_dir()
    assert just_started.is_dir()


def test_a_fork_is_complete_in_its_place_and_nothing_else_is_left(workspace: Path) -> None:
    before = entries(workspace)
    code, _, err = run(workspace, "fork", SOURCE)
    assert code == 0, err
    (new,) = set(entries(workspace)) - set(before)
    assert new.isdecimal()
    assert sorted(path.name for path in (workspace / ".jp" / "conversations" / new).iterdir()) == [
        "base_config.json",
        "events.json",
        "metadata.json",
    ]
    assert run(workspace, "turns", new)[0] == 0
