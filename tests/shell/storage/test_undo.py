"""Undo survives a kill: a real ``turnmark edit -i`` process is SIGKILLed at the rename of ``events.json``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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
