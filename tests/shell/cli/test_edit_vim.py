"""``turnmark edit -i`` with a real vim in a real terminal (tmux): one ``:g`` command on the plan drops every
``fs_read_file`` call and its result, and the saved conversation checks clean."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import FIXTURES, corpus_conversations, corpus_root
from tests.support.optional_tools import needs
from tests.support.terminal import wait_for
from turnmark.shell.cli.main import Settings, app

pytestmark = needs(shutil.which("tmux") is not None and shutil.which("vim") is not None, "vim or tmux")
TURNMARK = Path(sys.executable).parent / "turnmark"
CORPUS = "17738399468"
FIXTURE = "17800000010"


def source(which: str) -> Path:
    if which == "fixture":
        return next((FIXTURES / ".jp" / "conversations").glob(f"{FIXTURE}*"))
    found = [path for path in corpus_conversations() if path.name.startswith(CORPUS)]
    if not found:
        pytest.skip(f"corpus conversation {CORPUS} not found under {corpus_root()} (set TURNMARK_CORPUS)")
    return found[0]


def turnmark(workspace: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--workspace", str(workspace), *args], obj=Settings())
    return result.exit_code, result.stdout


def tool_calls(workspace: Path, conversation: str) -> list[str]:
    code, out = turnmark(workspace, "project", conversation, "--format", "json")
    assert code == 0
    return [event["name"] for event in json.loads(out)["events"] if event["type"] == "tool_call_request"]


@pytest.mark.parametrize("which", ["corpus", "fixture"])
def test_vim_drops_every_fs_read_file_call_and_result_with_one_command(
    tmp_path: Path, user_data: Path, which: str
) -> None:
    folder = source(which)
    conversation = folder.name.split("-", 1)[0]
    workspace = tmp_path / "ws"
    shutil.copytree(folder, workspace / ".jp" / "conversations" / folder.name)
    (tmp_path / "tmp").mkdir()
    before = tool_calls(workspace, conversation)
    assert "fs_read_file" in before
    session = f"turnmark-vim-{time.monotonic_ns()}"
    command = (
        f"JP_USER_DATA_DIR={shlex.quote(str(user_data))} TMPDIR={shlex.quote(str(tmp_path / 'tmp'))} "
        f"EDITOR='vim -u NONE -N -n' {TURNMARK} --workspace {shlex.quote(str(workspace))} "
        f"edit -i {conversation} --no-summary --no-backfill; echo EXIT=$?; sleep 30"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "40", command], check=True)
    try:
        plan = wait_for(session, "# Conversation Edit Plan")
        assert "-tool-call-fs_read_file.md  # fs_read_file " in plan, "the plan opens, its lines say what they are"
        for keys in (":g/fs_read_file/d", ":wq"):
            subprocess.run(["tmux", "send-keys", "-t", session, keys, "Enter"], check=True)
            time.sleep(0.3)
        screen = wait_for(session, "EXIT=", timeout=60)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    assert "EXIT=0" in screen, screen
    assert f"jp-c{conversation}: saved (" in screen
    assert turnmark(workspace, "check", conversation)[0] == 0
    after = tool_calls(workspace, conversation)
    assert after == [name for name in before if name != "fs_read_file"]
    assert not list((tmp_path / "tmp").iterdir()), "the edit folder is removed"
