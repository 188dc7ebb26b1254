"""Issue 31, finding 2: ``edit -i`` on a conversation whose answers carry no request link (as every real one
does) saved a plan that deleted a request, and ``check`` still said ``ok``. Now ``edit -i`` offers to link them
first (``--backfill`` / ``--no-backfill``; asked on a terminal, not done without one), as its own undo step
saved before the plan opens, so the edit the user saves is checkable.

Real temporary workspaces, the editor an ``EDITOR`` script, the terminal a real pseudo-terminal.
"""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.reliability.processes import TURNMARK, run_turnmark

PROBE = (
    "`edit -i` on an unlinked conversation: a request deleted in the plan, with `--backfill`, without a "
    "terminal, with `--no-backfill`, an aborted edit after the links, a linked conversation, and Enter, "
    "`y` and `n` typed at the offer in a real pseudo-terminal (issue 31, finding 2)",
    "{cases} cases: `edit -i` processes with an `EDITOR` script (3 through a pseudo-terminal), then "
    "`check` and `edit --undo` twice",
    "with the links, `check` exits 1 naming the deleted request; `edit --undo` takes back the edit, then "
    "the links, to the original bytes; without a terminal or with `--no-backfill` nothing is linked (a "
    "note names `--backfill`); the offer is asked once, Enter and `y` link, `n` does not",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""

CONV = "17800000010"
DELETE_SECOND_REQUEST = """
lines = plan_file.read_text().split("\\n")
requests = [i for i, line in enumerate(lines) if line.split("  #")[0].partition("-")[2] == "request.md"]
del lines[requests[1]]
plan_file.write_text("\\n".join(lines))
"""
CLEAR_PLAN = 'plan_file.write_text("")\n'


def events_file(workspace: Path) -> Path:
    return next((workspace / ".jp" / "conversations").glob(f"{CONV}-*")) / "events.json"


@pytest.fixture
def unlinked(workspace: Path) -> Path:
    """The fixture workspace with ``CONV``'s answers unlinked, as JP wrote conversations before request links."""
    path = events_file(workspace)
    entries = json.loads(path.read_text())
    for entry in entries:
        entry.pop("request_id", None)
    path.write_text(json.dumps(entries, indent=2) + "\n")
    return workspace


def editor(tmp_path: Path, body: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text(f"#!{sys.executable}\nimport sys, pathlib\nplan_file = pathlib.Path(sys.argv[-1])\n{body}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def turnmark(workspace: Path, *args: str, editor_command: str = "true") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EDITOR": editor_command, "TMPDIR": str(workspace.parent)}
    return run_turnmark(workspace, env, args, 60)


def linked(workspace: Path) -> int:
    return sum(1 for entry in json.loads(events_file(workspace).read_text()) if "request_id" in entry)


def test_with_backfill_a_deleted_request_is_found_by_check(unlinked: Path, tmp_path: Path) -> None:
    original = events_file(unlinked).read_bytes()
    done = turnmark(
        unlinked,
        "edit",
        "-i",
        CONV,
        "--no-summary",
        "--backfill",
        "--yes",
        editor_command=editor(tmp_path, DELETE_SECOND_REQUEST),
    )
    assert done.returncode == 0, done.stderr
    assert "note: linked 9 answers to their turns' requests (its own undo step)" in done.stderr
    assert "request_id 'a7s8d9f' does not resolve" in done.stderr
    check = turnmark(unlinked, "check", CONV)
    assert check.returncode == 1
    assert "request_id 'a7s8d9f' does not resolve (missing_target" in check.stdout

    first = turnmark(unlinked, "edit", "--undo", CONV)
    assert "restored the copy kept before edit -i; 1 more to undo" in first.stdout
    assert turnmark(unlinked, "check", CONV).returncode == 0
    assert linked(unlinked) == 9, "the first undo takes the edit back, not the links"
    second = turnmark(unlinked, "edit", "--undo", CONV)
    assert "restored the copy kept before edit -i's request links (backfill); 0 more to undo" in second.stdout
    assert events_file(unlinked).read_bytes() == original


def test_without_a_terminal_nothing_is_linked_and_a_note_names_the_flag(unlinked: Path, tmp_path: Path) -> None:
    done = turnmark(
        unlinked, "edit", "-i", CONV, "--no-summary", "--yes", editor_command=editor(tmp_path, DELETE_SECOND_REQUEST)
    )
    assert done.returncode == 0, done.stderr
    assert (
        "note: jp-c17800000010: 9 answers carry no request link (written before JP linked answers to requests), "
        "so a request this edit deletes or moves cannot be detected; --backfill links them first "
        "(--no-backfill: not asked)\n"
    ) in done.stderr
    assert linked(unlinked) == 0
    quiet = turnmark(unlinked, "edit", "-i", CONV, "--no-summary", "--no-backfill")
    assert quiet.returncode == 0
    assert "request link" not in quiet.stderr


def test_an_aborted_edit_after_the_backfill_says_what_was_saved_and_json_counts_it(
    unlinked: Path, tmp_path: Path
) -> None:
    done = turnmark(
        unlinked, "edit", "-i", CONV, "--no-summary", "--backfill", editor_command=editor(tmp_path, CLEAR_PLAN)
    )
    assert done.returncode == 1
    assert done.stderr.endswith(
        "aborted: the plan is empty; the edit wrote nothing, but the request links of 9 answers were saved before "
        "the editor opened (`turnmark edit --undo jp-c17800000010` removes them)\n"
    )
    assert linked(unlinked) == 9
    again = turnmark(unlinked, "edit", "-i", CONV, "--no-summary", "--backfill", "--format", "json")
    assert json.loads(again.stdout)["backfilled"] == 0, "a linked conversation is not offered the backfill again"
    assert "request link" not in again.stderr


def test_a_linked_conversation_is_not_offered_anything(workspace: Path) -> None:
    done = turnmark(workspace, "edit", "-i", CONV, "--no-summary", "--format", "json")
    assert (done.returncode, json.loads(done.stdout)["backfilled"]) == (0, 0)
    assert "request link" not in done.stderr


def on_a_terminal(workspace: Path, answer: bytes) -> tuple[int, str]:
    """``edit -i`` in a real pseudo-terminal, typing ``answer`` once the offer shows; its status and screen."""
    leader, follower = pty.openpty()
    env = {**os.environ, "EDITOR": "true", "TMPDIR": str(workspace.parent), "TERM": "dumb"}
    args = [TURNMARK, "--workspace", str(workspace), "edit", "-i", CONV, "--no-summary"]
    process = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    screen = b""
    answered = False
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                screen += chunk
            if not answered and b"[Y/n]: " in screen:
                os.write(leader, answer)
                answered = True
            if process.poll() is not None and not ready:
                break
        code = process.wait(timeout=60)
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
    return code, screen.decode("utf-8", "replace")


@pytest.mark.parametrize(("answer", "links"), [(b"\n", 9), (b"y\n", 9), (b"n\n", 0)], ids=["enter", "yes", "no"])
def test_on_a_terminal_the_user_is_asked_first(unlinked: Path, answer: bytes, links: int) -> None:
    code, screen = on_a_terminal(unlinked, answer)
    assert code == 0, screen
    offer = textwrap.dedent(
        """\
        jp-c17800000010: 9 answers carry no request link (written before JP linked answers to requests), so a \
request this edit deletes or moves cannot be detected.
        Link them to their request first (its own undo step; 1 summary cleared)? [Y/n]: """
    )
    assert offer.replace("\n", "\r\n") in screen
    assert linked(unlinked) == links
