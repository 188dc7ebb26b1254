"""Issue 31, finding 9: ``edit -i``'s errors named ``toolu_011oBB…`` (a tool call's ID, seen nowhere in the plan)
instead of the event file the user sees and must fix. Every plan error now names the file and its line:
plain values for each rule, and one real session whose editor is an ``EDITOR`` script."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES
from tests.reliability.processes import TURNMARK
from turnmark.core.editing.edit_plan import parse_plan, rebuild, render_session
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids

PROBE = (
    "`edit -i`'s plan errors: a tool result without its call, a result above its call, an inquiry "
    "response without its request, a request between a call and its result, and a real session (issue 31,"
    " finding 9)",
    "{cases} cases: plans rebuilt from the fixture (core, plain values) and one `edit -i` process with an"
    " `EDITOR` script",
    "every error names the event file and its line in the plan (both files for a pair), never a tool or inquiry ID",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""

NOW = "2026-07-01 12:00:00.0"
CONV = "17800000010"


def stream() -> ConversationStream:
    folder = next((FIXTURES / ".jp" / "conversations").glob(f"{CONV}-*"))
    events, base = (folder / "events.json").read_bytes(), (folder / "base_config.json").read_bytes()
    return ConversationStream.from_json(events, base, new_id=sequential_ids("n")).unwrap()


def errors_after(edit: str) -> tuple[str, ...]:
    """The errors of the fixture's plan with ``edit`` applied (``drop:NAME``, ``swap:A,B`` or ``move:NAME``)."""
    original = stream()
    session = render_session(original)
    names = [name for _, name in parse_plan(session.plan)]
    kind, _, what = edit.partition(":")
    pick = {part: next(n for n in names if n.endswith(part)) for part in what.split(",")}
    if kind == "drop":
        names.remove(pick[what])
    elif kind == "swap":
        first, second = (names.index(pick[part]) for part in what.split(","))
        names[first], names[second] = names[second], names[first]
    else:
        names.remove(pick[what])
        names.insert(names.index(next(n for n in names if n.endswith("tool-call-fs_read_file.md"))) + 1, pick[what])
    return rebuild(original, session, "\n".join(names) + "\n", dict(session.files), NOW).failure()


def test_an_orphaned_tool_result_is_named_by_its_file_and_line() -> None:
    errors = errors_after("drop:tool-call-fs_read_file.md")
    assert errors == (
        "tool result 003-tool-result-fs_read_file.md (line 3) has no tool call in the plan "
        "(its call's line was deleted?)",
    )


def test_a_result_above_its_call_names_both_files() -> None:
    errors = errors_after("swap:tool-call-fs_read_file.md,tool-result-fs_read_file.md")
    assert errors == (
        "tool result 003-tool-result-fs_read_file.md (line 3) comes before its tool call "
        "002-tool-call-fs_read_file.md (line 4)",
    )


def test_an_orphaned_inquiry_response_and_a_split_pair_name_their_files() -> None:
    assert errors_after("drop:inquiry-request.md") == (
        "inquiry response 006-inquiry-response.md (line 6) has no inquiry request in the plan",
    )
    [split] = errors_after("move:010-request.md")
    assert split == (
        "tool result 003-tool-result-fs_read_file.md (line 5) is no longer in the turn of its tool call "
        "002-tool-call-fs_read_file.md (line 3) (a request is between them)"
    )


def test_a_real_session_writes_the_file_name_at_the_top_of_the_plan(workspace: Path, tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    script = tmp_path / "editor.py"
    script.write_text(
        f"#!{sys.executable}\nimport sys, pathlib\nplan = pathlib.Path(sys.argv[-1])\ntext = plan.read_text()\n"
        f"if text.startswith('# ERROR'):\n    pathlib.Path({str(seen)!r}).write_text(text)\n    plan.write_text('')\n"
        "else:\n    plan.write_text('\\n'.join(l for l in text.split('\\n') if 'tool-call-fs_read_file' not in l))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "EDITOR": str(script), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [TURNMARK, "--workspace", str(workspace), "edit", "-i", CONV, "--no-summary"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1
    first = seen.read_text().splitlines()[0]
    assert first.startswith("# ERROR: tool result 003-tool-result-fs_read_file.md (line ")
    assert "toolu_" not in seen.read_text().split("# Conversation Edit Plan")[0]
