"""The save rule holds on every path that writes ``events.json``: label, summarize, strip, repair, fork, edit -i.

What ``check`` says cannot be saved (a key written twice, a link to a copied request) is refused by each
command with the same line, naming the file, the entry and the key, and nothing is written anywhere.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app

DOUBLED = "17800000040"
"""Has a fix for ``repair --apply``, unsummarized turns and keys ``strip`` removes: every command would write."""
COPIED = "17800000030"
"""A ``request_id`` names an ID two entries carried (``check``: save blocked); ``repair --apply`` cannot decide
which copy it meant, so it is refused too (``repair -i`` asks)."""


def editor(tmp_path: Path) -> str:
    script = tmp_path / "editor.py"
    script.write_text(f"#!{sys.executable}\nraise SystemExit('the editor must not open')\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def commands(conversation: str) -> dict[str, tuple[str, ...]]:
    return {
        "label": ("summary", "set", conversation, "1", "Mine"),
        "summarize": ("summarize", conversation, "--model", "builtin/extractive"),
        "strip": ("strip", conversation, "--apply"),
        "repair": ("repair", conversation, "--apply"),
        "fork": ("fork", conversation),
        "edit": ("edit", "-i", conversation, "--no-summary"),
    }


def run(workspace: Path, tmp_path: Path, *args: str) -> tuple[int, str]:
    environ = {**os.environ, "EDITOR": editor(tmp_path)}
    result = CliRunner().invoke(
        app,
        ["--workspace", str(workspace), *args],
        obj=Settings(new_id=sequential_ids("s"), environ=environ),
        env={"COLUMNS": "300"},
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stderr


def folder(workspace: Path, conversation: str) -> Path:
    return next((workspace / ".jp" / "conversations").glob(f"{conversation}-*"))


def state(workspace: Path) -> dict[str, bytes]:
    root = workspace / ".jp" / "conversations"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def says(err: str, message: str) -> bool:
    """One line of ``err`` is ``error: [CONV: ]MESSAGE`` (summarize names the conversation first)."""
    return any(line.startswith("error: ") and line.endswith(message) for line in err.splitlines())


@pytest.mark.parametrize("command", list(commands(DOUBLED)))
def test_a_key_written_twice_is_refused_by_every_writing_command(workspace: Path, tmp_path: Path, command: str) -> None:
    events = folder(workspace, DOUBLED) / "events.json"
    events.write_bytes(
        events.read_bytes().replace(
            b'"content": "Where do conversations live on disk?"',
            b'"content": "Where do they live?",\n    "content": "Where do conversations live on disk?"',
        )
    )
    before = state(workspace)
    code, err = run(workspace, tmp_path, *commands(DOUBLED)[command])
    assert code != 0
    message = (
        f"{events}: refusing to save: entry 1: key 'content' is written twice, and a save keeps only the last value; "
        "to fix: remove one of them from events.json by hand"
    )
    assert says(err, message), err
    assert state(workspace) == before
    assert b'"content": "Where do they live?"' in events.read_bytes()


@pytest.mark.parametrize("command", list(commands(COPIED)))
def test_a_link_to_a_copied_request_is_refused_with_the_same_line_everywhere(
    workspace: Path, tmp_path: Path, command: str
) -> None:
    events = folder(workspace, COPIED) / "events.json"
    before = state(workspace)
    code, err = run(workspace, tmp_path, *commands(COPIED)[command])
    assert code != 0
    message = (
        f"{events}: refusing to save: request_id points at an event_id that more than one entry had: entry 13 "
        f"(event_id m4ddddd) -> c4ddddd; to fix: turnmark repair -i jp-c{COPIED} (it asks which request each answers)"
    )
    assert says(err, message), err
    assert state(workspace) == before
