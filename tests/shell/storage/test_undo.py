"""Undo survives a kill: a real ``turnmark edit -i`` process is SIGKILLed at the rename of ``events.json``."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from turnmark.shell.errors import ConversationError
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.undo import undo, undo_root

CONV = "17800000010"
EDITOR = """\
import pathlib, sys
given = pathlib.Path(sys.argv[-1])
folder = given if given.is_dir() else given.parent
request = sorted(folder.glob("*-request.md"))[0]
request.write_text(request.read_text().rstrip("\\n") + " (edited)\\n")
"""
KILLED_TURNMARK = """\
import os, signal, sys

phase = sys.argv[1]
real = os.replace


def replace(source, target, *args, src_dir_fd=None, dst_dir_fd=None):
    folder = os.readlink(f"/proc/self/fd/{dst_dir_fd}") if dst_dir_fd is not None else ""
    conversation = target == "events.json" and os.environ["TURNMARK_STATE_DIR"] not in folder
    if conversation and phase == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    real(source, target, *args, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
    if conversation and phase == "after":
        os.kill(os.getpid(), signal.SIGKILL)


os.replace = replace
from turnmark.shell.cli.main import main

sys.argv = ["turnmark", *sys.argv[2:]]
main()
"""


def events(workspace: Path) -> bytes:
    return (pick_conversation(workspace, CONV).directories[0] / "events.json").read_bytes()


def edit(workspace: Path, tmp_path: Path, phase: str | None) -> subprocess.CompletedProcess[str]:
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR)
    runner = tmp_path / "killed.py"
    runner.write_text(KILLED_TURNMARK)
    environ = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "TMPDIR": str(tmp_path)}
    command = ["--workspace", str(workspace), "edit", "-i", CONV, "--no-summary"]
    return subprocess.run(
        [sys.executable, str(runner), phase or "none", *command],
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="the kill point is found through /proc/self/fd")
@pytest.mark.parametrize("phase", ["before", "after"])
def test_an_edit_killed_at_the_rename_leaves_a_usable_undo(workspace: Path, tmp_path: Path, phase: str) -> None:
    """Finding 5 of issue 20: killed after the rename, before the undo record, undo refused for good."""
    original = events(workspace)
    assert edit(workspace, tmp_path, None).returncode == 0
    once = events(workspace)
    killed = edit(workspace, tmp_path, phase)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    ref = pick_conversation(workspace, CONV)
    if phase == "after":
        assert events(workspace) != once
        assert undo(ref) == f"jp-c{CONV}: restored the copy kept before edit -i; 1 more to undo"
        assert events(workspace) == once
    else:
        assert events(workspace) == once
    said = undo(ref)
    assert said.startswith(f"jp-c{CONV}: restored the copy kept before edit -i; 0 more to undo")
    assert ("(edit -i had been interrupted before it saved)" in said) == (phase == "before")
    assert events(workspace) == original
    assert not any(undo_root(ref).iterdir())


def test_a_killed_edits_folder_is_removed_by_the_next_run(workspace: Path, tmp_path: Path) -> None:
    """Finding 5 of issue 20: every killed edit left a full copy of the conversation in /tmp."""
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    living = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = tmp_path / f"turnmark-edit-{ended.stdout.strip()}-{CONV}-abc123"
        alive = tmp_path / f"turnmark-edit-{living.pid}-{CONV}-def456"
        for folder in (dead, alive):
            folder.mkdir()
            (folder / "CONVERSATION").write_text("kept")
        linked = tmp_path / f"turnmark-edit-{ended.stdout.strip()}-{CONV}-link"
        linked.symlink_to(alive)
        assert edit(workspace, tmp_path, None).returncode == 0
        assert not dead.exists()
        assert (alive / "CONVERSATION").read_text() == "kept"
        assert linked.is_symlink()
    finally:
        living.kill()
        living.wait()
    assert sorted(path.name for path in tmp_path.glob("turnmark-edit-*")) == sorted([alive.name, linked.name])


def test_the_summary_step_and_the_edit_are_undone_one_at_a_time(workspace: Path, tmp_path: Path) -> None:
    original = events(workspace)
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR)
    environ = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "TMPDIR": str(tmp_path)}
    extractive = ("--cfg", "conversation.turn_summary.generate.model.id=builtin/extractive")
    turnmark = Path(sys.executable).parent / "turnmark"
    command = [str(turnmark), "--workspace", str(workspace), *extractive, "edit", "-i", CONV]
    assert subprocess.run(command, env=environ, capture_output=True, check=False).returncode == 0
    ref = pick_conversation(workspace, CONV)
    assert undo(ref) == f"jp-c{CONV}: restored the copy kept before edit -i; 1 more to undo"
    assert b"(edited)" not in events(workspace)
    assert events(workspace) != original
    assert (
        undo(ref) == f"jp-c{CONV}: restored the copy kept before edit -i's summary of the newest turn; 0 more to undo"
    )
    assert events(workspace) == original


def test_without_a_kept_step_undo_says_there_is_nothing(workspace: Path) -> None:
    with pytest.raises(ConversationError, match="nothing to undo"):
        undo(pick_conversation(workspace, CONV))


LEGACY = Path(__file__).resolve().parents[3] / "fixtures" / "legacy-workspace"
LEGACY_CONV = "17400000000"


def _upgraded(root: Path, also_named: Path | None = None) -> tuple[Path, os.stat_result, bytes]:
    """Save a legacy conversation of a copy of the legacy fixture (the upgrade keeps an undo step): its folder,
    how its ``events.json`` stood before (given the second name ``also_named`` first) and the bytes it held."""
    from turnmark.core.stream.event_ids import sequential_ids
    from turnmark.shell.storage.conversations import edit_conversation

    shutil.copytree(LEGACY, root)
    ref = pick_conversation(root, LEGACY_CONV)
    folder = ref.directories[0]
    if also_named is not None:
        os.link(folder / "events.json", also_named)
    before, data = (folder / "events.json").stat(), (folder / "events.json").read_bytes()
    _, saved = edit_conversation(ref, lambda stream: stream, sequential_ids("t"), persist_ids=True, command="test")
    assert saved.upgrade is not None
    return folder, before, data


def _step(root: Path) -> Path:
    (step,) = undo_root(pick_conversation(root, LEGACY_CONV)).iterdir()
    return step


def test_the_undo_step_keeps_the_old_file_by_a_hard_link(tmp_path: Path, user_data: Path) -> None:
    """Issue 40: no byte of the old conversation is read or written to keep it; the save's rename leaves the old
    inode to the step alone, and the conversation's new file has one name."""
    root = tmp_path / "legacy"
    folder, before, data = _upgraded(root)
    kept = (_step(root) / "events.json").stat()
    assert (kept.st_dev, kept.st_ino) == (before.st_dev, before.st_ino)
    assert kept.st_nlink == 1
    now = (folder / "events.json").stat()
    assert now.st_ino != before.st_ino
    assert now.st_nlink == 1
    assert not (_step(root) / "base_config.json").exists(), "a legacy conversation had none"
    assert undo(pick_conversation(root, LEGACY_CONV)).startswith(f"jp-c{LEGACY_CONV}: restored the copy kept before")
    assert (folder / "events.json").read_bytes() == data
    assert not (folder / "base_config.json").exists()


def test_on_another_file_system_the_undo_step_is_a_copy(
    tmp_path: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared_memory = Path("/dev/shm")
    if not shared_memory.is_dir() or shared_memory.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("no second file system (/dev/shm) to keep the state folder on")
    state = Path(tempfile.mkdtemp(dir=shared_memory))
    try:
        monkeypatch.setenv("TURNMARK_STATE_DIR", str(state))
        root = tmp_path / "legacy"
        folder, before, data = _upgraded(root)
        kept = _step(root) / "events.json"
        assert kept.stat().st_dev != before.st_dev
        assert kept.read_bytes() == data
        undo(pick_conversation(root, LEGACY_CONV))
        assert (folder / "events.json").read_bytes() == data
    finally:
        shutil.rmtree(state)


def test_a_file_with_another_name_is_copied_not_linked(tmp_path: Path, user_data: Path) -> None:
    """A file the user also keeps under another name may be written in place through it: the step must not
    share its inode."""
    other = tmp_path / "mine.json"
    folder, before, data = _upgraded(tmp_path / "legacy", also_named=other)
    kept = _step(tmp_path / "legacy") / "events.json"
    assert kept.stat().st_ino != before.st_ino
    other.write_bytes(b"[]\n")
    assert kept.read_bytes() == data
    undo(pick_conversation(tmp_path / "legacy", LEGACY_CONV))
    assert (folder / "events.json").read_bytes() == data
