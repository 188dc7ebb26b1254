"""Durability per batch: which syncs a commit makes inside and outside ``folder_syncs_deferred``, on real files,
and the file-system syncs an offline ``summarize --all`` makes instead of the folders'."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.storage import conversations, durability, files


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


def test_a_deferred_commit_still_syncs_each_new_file_before_its_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changes = _two_files(tmp_path)
    calls = _synced(monkeypatch)
    with durability.folder_syncs_deferred():
        assert not durability.folders_synced_now()
        files.write_together(changes, lambda path: tmp_path)
    assert calls == ["file", "file"]
    assert durability.folders_synced_now()
    assert [(path.read_bytes()) for path, _ in changes] == [b"new a", b"new b"]


def test_a_deferral_ends_with_an_error_too(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), durability.folder_syncs_deferred():
        raise RuntimeError("boom")
    assert durability.folders_synced_now()


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
        monkeypatch.setattr(durability, "folder_syncs_deferred", contextlib.nullcontext)
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
