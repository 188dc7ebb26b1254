"""Durability per batch: which syncs a commit makes inside and outside ``batched``, on real files (every new
file durable before its rename, either way), and the file-system syncs an offline ``summarize --all`` makes
instead of the files' and the folders'."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.errors import FileFault
from turnmark.shell.storage import conversations, durability, files
from turnmark.shell.storage.workspace import list_conversations, require_workspace


def _synced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What ``os.fsync`` is called on from now: ``folder`` or ``file``, in order."""
    calls: list[str] = []
    real = os.fsync

    def recording(fd: int) -> None:
        calls.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return calls


def _two_files(tmp_path: Path) -> list[tuple[Path, bytes | None]]:
    for name in ("a", "b"):
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / "f.json").write_bytes(b"old")
    return [(tmp_path / "a" / "f.json", b"new a"), (tmp_path / "b" / "f.json", b"new b")]


def test_a_commit_syncs_its_files_then_its_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    changes = _two_files(tmp_path)
    calls = _synced(monkeypatch)
    files.write_together(changes, lambda path: tmp_path)
    assert calls == ["file", "file", "folder", "folder"]
    assert (tmp_path / "a" / "f.json").read_bytes() == b"new a"


def _steps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """What is written, synced and renamed from now, in order: ``("write", temporary)``, ``("fsync", file or
    folder)``, ``("syncfs", "")``, ``("rename", temporary)``."""
    steps: list[tuple[str, str]] = []
    real_write, real_fsync, real_replace, real_syncfs = files._write_all, os.fsync, os.replace, durability._syncfs

    def writing(fd: int, data: bytes) -> None:
        steps.append(("write", os.readlink(f"/proc/self/fd/{fd}")))
        real_write(fd, data)

    def fsyncing(fd: int) -> None:
        steps.append(("fsync", "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def renaming(source: str, target: str, **kwargs: int) -> None:
        steps.append(("rename", source))
        real_replace(source, target, **kwargs)

    def syncing(fd: int) -> None:
        steps.append(("syncfs", ""))
        real_syncfs(fd)

    monkeypatch.setattr(files, "_write_all", writing)
    monkeypatch.setattr(os, "fsync", fsyncing)
    monkeypatch.setattr(os, "replace", renaming)
    monkeypatch.setattr(durability, "_syncfs", syncing)
    return steps


def _durable_before_renamed(steps: list[tuple[str, str]]) -> None:
    """Each file written was synced (its own ``fsync``, or a ``syncfs`` after it) before any rename."""
    first_rename = next(index for index, (kind, _) in enumerate(steps) if kind == "rename")
    for index, (kind, written) in enumerate(steps[:first_rename]):
        if kind == "write":
            later = steps[index + 1 : first_rename]
            assert ("fsync", written) in later or ("syncfs", "") in later, steps


def test_a_commit_makes_every_new_file_durable_before_its_first_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changes = _two_files(tmp_path)
    steps = _steps(monkeypatch)
    files.write_together(changes, lambda path: tmp_path)
    _durable_before_renamed(steps)
    assert [kind for kind, _ in steps].count("fsync") == 4
    assert ("syncfs", "") not in steps


def test_a_batched_commit_syncs_its_new_files_together_and_leaves_its_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changes = _two_files(tmp_path)
    steps = _steps(monkeypatch)
    with durability.batched():
        assert not durability.per_file()
        files.write_together(changes, lambda path: tmp_path)
    _durable_before_renamed(steps)
    assert [kind for kind, _ in steps] == ["write", "write", "syncfs", "rename", "rename"]
    assert durability.per_file()
    assert [(path.read_bytes()) for path, _ in changes] == [b"new a", b"new b"]


def test_a_batched_commit_that_cannot_sync_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    changes = _two_files(tmp_path)

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(durability, "_syncfs", failing)
    with durability.batched(), pytest.raises(FileFault, match=r"a/f\.json: cannot write: input/output error"):
        files.write_together(changes, lambda path: tmp_path)
    assert [path.read_bytes() for path, _ in changes] == [b"old", b"old"]
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["a", "b", "f.json", "f.json"]


@pytest.mark.parametrize("batched", [False, True], ids=["alone", "in a batch"])
def test_an_undo_step_is_durable_before_the_conversation_changes(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, batched: bool
) -> None:
    """The kept files' second names, and the step's command and record, renamed before the conversation."""
    steps = _steps(monkeypatch)
    with durability.batched() if batched else contextlib.nullcontext():
        _upgrade_legacy(workspace)
    _durable_before_renamed(steps)
    events = next(index for index, (kind, name) in enumerate(steps) if kind == "rename" and "events" in name)
    before = [name for kind, name in steps[:events] if kind == "rename"]
    assert any("command" in name for name in before), steps
    assert any("after" in name for name in before), steps
    assert [kind for kind, _ in steps].count("syncfs") == (1 if batched else 0)


def test_a_batch_ends_with_an_error_too(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), durability.batched():
        raise RuntimeError("boom")
    assert durability.per_file()


def test_each_file_system_is_synced_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(durability, "_syncfs", lambda fd: synced.append(os.fstat(fd).st_dev))
    places = [tmp_path / "a", tmp_path / "b", tmp_path / "gone", Path("/dev/shm")]
    for place in places[:2]:
        place.mkdir()
    count = durability.sync_file_systems(places)
    assert count == len(set(synced)) == len(synced)
    assert sorted(synced) == sorted({tmp_path.stat().st_dev, Path("/dev/shm").stat().st_dev})


def test_a_real_syncfs_runs(tmp_path: Path) -> None:
    assert durability.sync_file_systems([tmp_path]) == 1


def _summarize_all(workspace: Path, monkeypatch: pytest.MonkeyPatch, *, deferred: bool) -> tuple[list[str], int]:
    """An offline ``summarize --all`` in this process: the ``fsync`` calls (``commit`` for a folder synced by a
    commit of ``write_together``), and the commits."""
    if not deferred:
        monkeypatch.setattr(durability, "batched", contextlib.nullcontext)
    calls = _synced(monkeypatch)
    commits: list[int] = []
    real = files.write_together

    def committing(*args, **kwargs):  # type: ignore[no-untyped-def]
        commits.append(len(calls))
        try:
            return real(*args, **kwargs)
        finally:
            calls[commits[-1] :] = ["commit" if call == "folder" else call for call in calls[commits[-1] :]]

    monkeypatch.setattr(conversations, "write_together", committing)
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), "--jobs", "1", "summarize", "--all", "--model", "builtin/extractive"],
        obj=Settings(new_id=sequential_ids()),
    )
    assert result.exit_code in (0, 1), result.output
    return calls, len(commits)


def _upgrade_legacy(workspace: Path) -> None:
    """Save the legacy conversation as it is, its IDs written: the save upgrades it, with an undo step."""
    refs = list_conversations(require_workspace(workspace))
    (ref,) = [ref for ref in refs if ref.display_id == "jp-c17790000000"]
    conversations.edit_conversation(ref, lambda stream: stream, sequential_ids(), persist_ids=True)
    assert not (ref.directories[0] / "events.json").read_bytes().startswith(b'[\n  {\n    "type": "config_delta"')


def _ran(runs: list[list[Path]], places: Iterable[Path]) -> int:
    runs.append(list(places))
    return 1


def test_offline_summarize_all_syncs_the_file_systems_instead_of_the_folders(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(workspace, twin)
    runs: list[list[Path]] = []
    with monkeypatch.context() as patch:
        patch.setattr(durability, "sync_file_systems", lambda places: _ran(runs, places))
        patch.setattr(durability, "BATCH", 2)
        deferred, commits = _summarize_all(workspace, patch, deferred=True)
    assert commits >= 3
    assert 1 <= len(runs) <= (commits + 1) // 2
    assert all(workspace / ".jp" / "conversations" in places for places in runs)
    assert "commit" not in deferred
    with monkeypatch.context() as patch:
        synced_each, commits = _summarize_all(twin, patch, deferred=False)
    assert synced_each.count("commit") >= commits >= 3
