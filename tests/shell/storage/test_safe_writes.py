"""Writes never leave the conversation folder, and every filesystem fault is one line.

Real faults where root can make them: a read-only bind mount (EROFS), a tiny
tmpfs (ENOSPC), ``chattr +i`` (EPERM). The rest by fault injection at
``files.os_write``, the one call through which bytes reach a file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.errors import FileFault
from turnmark.shell.storage import files
from turnmark.shell.storage.files import write_if_changed
from turnmark.shell.storage.locking import is_locked, lock_path, try_lock
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.undo import undo_root

LEGACY = "17790000000"
CLEAN = "17800000010"
EDITED = "17800000040"


def conversation_dir(workspace: Path, conversation: str) -> Path:
    return next((workspace / ".jp" / "conversations").glob(f"{conversation}*"))


def files_of(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (lock files and the workspace cache aside), by relative path."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and not path.is_symlink()
        and "locks" not in path.parts
        and not path.name.startswith("cache.sqlite3")
    }


def run(workspace: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), *args], obj=Settings(new_id=sequential_ids()), env={"COLUMNS": "200"}
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    path = tmp_path / "outside.txt"
    path.write_bytes(b"canary\n")
    return path


@pytest.mark.parametrize("name", ["events.json.tmp", "base_config.json.tmp"])
def test_a_leftover_tmp_that_is_a_link_is_never_written_through(workspace: Path, canary: Path, name: str) -> None:
    directory = conversation_dir(workspace, LEGACY)
    (directory / name).symlink_to(canary)
    code, out, _ = run(workspace, "summarize", LEGACY, "--model", "builtin/extractive")
    assert code == 0
    assert "2 summarized" in out
    assert canary.read_bytes() == b"canary\n"
    assert not list(directory.glob("*.tmp"))


def test_a_leftover_tmp_that_is_a_directory_is_sidestepped(workspace: Path) -> None:
    directory = conversation_dir(workspace, LEGACY)
    (directory / "events.json.tmp").mkdir()
    (directory / "events.json.tmp" / "keep").write_text("x")
    code, _, err = run(workspace, "summary", "set", LEGACY, "1", "Thanks")
    assert code == 0, err
    assert "Thanks" in (directory / "events.json").read_text()
    assert (directory / "events.json.tmp" / "keep").read_text() == "x"
    assert [path.name for path in directory.glob("*.tmp")] == ["events.json.tmp"]


def test_a_lock_file_that_is_a_link_is_refused_even_by_a_dry_run(workspace: Path, canary: Path) -> None:
    ref = pick_conversation(workspace, CLEAN, lambda _: None)
    path = lock_path(ref)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(canary)
    for args in (["summarize", CLEAN, "--dry-run"], ["summary", "set", CLEAN, "0", "x"], ["summarize", "--all"]):
        code, _, err = run(workspace, *args)
        assert code in (1, 2)
        assert f"{path}: not used as a lock: it is a symbolic link" in err
        assert len([line for line in err.splitlines() if "symbolic link" in line]) == 1
    assert canary.read_bytes() == b"canary\n"
    assert path.is_symlink()
    with pytest.raises(FileFault):
        is_locked(ref)


def test_a_lock_file_that_is_a_directory_is_refused(workspace: Path) -> None:
    ref = pick_conversation(workspace, CLEAN, lambda _: None)
    lock_path(ref).mkdir(parents=True)
    with pytest.raises(FileFault, match="cannot open the lock: is a directory"):
        try_lock(ref)


def test_a_locks_folder_that_is_a_link_is_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (workspace / ".jp" / "locks").symlink_to(outside)
    code, _, err = run(workspace, "summary", "set", CLEAN, "0", "x")
    assert code == 2
    assert "symbolic link" in err
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("name", ["events.json", "base_config.json", "metadata.json"])
def test_a_conversation_whose_files_are_links_is_read_but_never_written(workspace: Path, name: str) -> None:
    directory = conversation_dir(workspace, CLEAN)
    target = workspace.parent / f"real-{name}"
    shutil.move(directory / name, target)
    (directory / name).symlink_to(target)
    before = target.read_bytes()
    assert run(workspace, "turns", CLEAN)[0] == 0
    code, _, err = run(workspace, "summary", "set", CLEAN, "1", "Mine")
    assert code == 2
    assert (
        err.strip()
        == f"error: {directory / name}: not written: it is a symbolic link, and turnmark never writes through links"
    )
    assert (directory / name).is_symlink()
    assert target.read_bytes() == before


def test_a_conversation_folder_that_is_a_link_is_never_written(workspace: Path, tmp_path: Path) -> None:
    directory = conversation_dir(workspace, CLEAN)
    moved = tmp_path / "moved-away"
    shutil.move(directory, moved)
    directory.symlink_to(moved)
    before = files_of(moved)
    code, _, err = run(workspace, "summary", "set", CLEAN, "1", "Mine")
    assert code == 2
    assert "symbolic link" in err
    assert files_of(moved) == before


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (errno.ENOSPC, "no space left on device"),
        (errno.EROFS, "read-only file system"),
        (errno.EACCES, "permission denied"),
        (errno.EIO, "input/output error"),
    ],
)
def test_an_injected_write_fault_is_one_line_and_leaves_nothing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, error: int, reason: str
) -> None:
    def failing(fd: int, data: bytes) -> int:
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(files, "os_write", failing)
    before = files_of(workspace)
    code, _, err = run(workspace, "summary", "set", LEGACY, "1", "Thanks")
    assert code == 2
    assert err.count("\n") == 1
    assert reason in err
    assert any(f"{name}: cannot write: {reason}" in err for name in ("base_config.json", "events.json", "command"))
    assert files_of(workspace) == before
    assert not list(workspace.rglob("*.tmp"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="the file written is found through /proc/self/fd")
def test_a_failed_legacy_upgrade_takes_back_its_base_config(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The upgrade's undo step is written first; the conversation's second file fails, and nothing stays."""
    written: list[int] = []

    def second_write_fails(fd: int, data: bytes) -> int:
        if os.environ["TURNMARK_STATE_DIR"] not in os.readlink(f"/proc/self/fd/{fd}"):
            written.append(fd)
        if len(written) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return os.write(fd, data)

    monkeypatch.setattr(files, "os_write", second_write_fails)
    directory = conversation_dir(workspace, LEGACY)
    before = files_of(directory)
    code, _, err = run(workspace, "summary", "set", LEGACY, "1", "Thanks")
    assert code == 2
    assert f"{directory / 'events.json'}: cannot write: no space left on device" in err
    assert files_of(directory) == before
    assert not any(undo_root(pick_conversation(workspace, LEGACY, lambda _: None)).rglob("*.json"))


def test_summarize_all_goes_on_after_a_conversation_that_cannot_be_written(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = conversation_dir(workspace, LEGACY)
    original = files.os_write

    def only_there(fd: int, data: bytes) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(broken)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return original(fd, data)

    monkeypatch.setattr(files, "os_write", only_there)
    before = files_of(broken)
    code, out, err = run(workspace, "summarize", "--all", "--model", "builtin/extractive")
    assert code == 1
    assert f"error: jp-c{LEGACY}: {broken}" in err
    assert "read-only file system" in err
    assert "Traceback" not in err
    assert files_of(broken) == before
    assert out.count("summarized with builtin/extractive") == 2
    assert "refusing to save" in err


@contextlib.contextmanager
def mounted(*command: str) -> Iterator[None]:
    result = subprocess.run(command, capture_output=True, check=False)
    if result.returncode != 0:
        pytest.skip(f"cannot mount here ({result.stderr.decode().strip()}); the injected faults cover this case")
    try:
        yield
    finally:
        target = command[-1]
        subprocess.run(["umount", target], check=False)


def test_a_read_only_mount_is_one_line_per_conversation(workspace: Path) -> None:
    conversations = workspace / ".jp" / "conversations"
    before = files_of(conversations)
    with (
        mounted("mount", "--bind", str(conversations), str(conversations)),
        mounted("mount", "-o", "remount,bind,ro", str(conversations), str(conversations)),
    ):
        code, _, err = run(workspace, "summarize", "--all", "--model", "builtin/extractive")
        label_code, _, label_err = run(workspace, "summary", "set", LEGACY, "1", "Thanks")
    assert code == 1
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 4, err
    assert sum("read-only file system" in line for line in errors) == 3
    assert sum("refusing to save" in line for line in errors) == 1
    assert label_code == 2
    assert "read-only file system" in label_err
    assert files_of(conversations) == before


def test_a_full_disk_is_one_line_and_the_file_is_intact(workspace: Path, tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    with mounted("mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", str(small)):
        shutil.copytree(conversation_dir(workspace, CLEAN), small / "conversation")
        target = small / "conversation" / "events.json"
        before = target.read_bytes()
        filler = small / "filler"
        with contextlib.suppress(OSError):
            filler.write_bytes(b"x" * 64 * 1024)
        with pytest.raises(FileFault, match="no space left on device"):
            write_if_changed(target, before + b" " * 8192, small)
        assert target.read_bytes() == before
        assert not list(small.rglob("*.tmp"))


def test_an_immutable_file_is_one_line(workspace: Path) -> None:
    directory = conversation_dir(workspace, CLEAN)
    if subprocess.run(["chattr", "+i", str(directory)], capture_output=True, check=False).returncode != 0:
        pytest.skip("chattr +i is not supported here; the injected faults cover this case")
    try:
        code, _, err = run(workspace, "summary", "set", CLEAN, "1", "Mine")
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=False)
    assert code == 2
    assert "operation not permitted" in err
    assert err.count("\n") == 1


def test_a_metadata_json_that_is_a_fifo_is_reported_not_raised(workspace: Path) -> None:
    """Choosing the most recent conversation reads every metadata.json; one that is a FIFO (or a device)
    is that conversation's problem, said in one line, and never blocks or ends the command."""
    metadata = conversation_dir(workspace, CLEAN) / "metadata.json"
    metadata.unlink()
    os.mkfifo(metadata)
    before = files_of(workspace)
    code, out, err = run(workspace, "check")
    assert code in (0, 1), err
    assert "Traceback" not in err
    code, out, err = run(workspace, "conversations")
    assert code == 2
    assert f"{metadata}: cannot read: it is not a regular file" in err
    assert "jp-c17800000010" in out
    assert files_of(workspace) == before
