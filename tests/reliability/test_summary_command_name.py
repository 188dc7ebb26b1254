"""Issue 31, finding 8: ``turnmark label`` set a turn's summary, while JP's ``jp conversation label`` sets
``key=value`` labels on a conversation. The command is ``turnmark summary set`` / ``summary clear`` now;
``label`` still works, hidden, and says the new name on stderr. Real processes on a temporary workspace."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.reliability.processes import TURNMARK

PROBE = (
    "`turnmark summary set` / `clear` and the hidden `label` alias (issue 31, finding 8)",
    "{cases} cases: `summary set` (JSON), `summary clear`, `label` and `label --clear` and a bad turn, "
    "and the help of four commands",
    "the same JSON as before; `label` behaves and exits as `summary set`/`clear` with one stderr line "
    "naming the new form; no help names `turnmark label`, and the command list does not show it",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""

CONV = "17800000010"


def turnmark(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TURNMARK, "--workspace", str(workspace), *args], capture_output=True, text=True, check=False, timeout=60
    )


def test_summary_set_and_clear_store_and_remove_a_turns_summary(workspace: Path) -> None:
    done = turnmark(workspace, "summary", "set", CONV, "1", "Cap the backoff at 2 s", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == {
        "conversation": f"jp-c{CONV}",
        "turn": "p8q2r4b",
        "summary": "Cap the backoff at 2 s",
        "by": "user",
        "upgraded": False,
        "upgrade": None,
    }
    assert "p8q2r4b  Cap the backoff at 2 s" in turnmark(workspace, "turns", CONV).stdout
    cleared = turnmark(workspace, "summary", "clear", CONV, "p8q2r4b")
    assert (cleared.returncode, cleared.stdout, cleared.stderr) == (0, "p8q2r4b  (summary cleared)\n", "")


def test_label_is_a_hidden_alias_that_names_the_new_form(workspace: Path) -> None:
    note = (
        "note: 'turnmark label' is now 'turnmark summary set CONV TURN TEXT' ('summary clear CONV TURN' for --clear)\n"
    )
    done = turnmark(workspace, "label", CONV, "1", "Cap the backoff at 2 s")
    assert (done.returncode, done.stdout, done.stderr) == (0, "p8q2r4b  Cap the backoff at 2 s\n", note)
    cleared = turnmark(workspace, "label", CONV, "1", "--clear")
    assert (cleared.returncode, cleared.stdout, cleared.stderr) == (0, "p8q2r4b  (summary cleared)\n", note)
    wrong = turnmark(workspace, "label", CONV, "9", "x")
    assert wrong.returncode == 2
    assert wrong.stderr.endswith("see `turnmark turns`)\n")
    listing = turnmark(workspace, "--help").stdout
    assert "  summary " in listing
    assert "label" not in listing.split("Summaries:")[1].split("\n\n")[0]


def test_no_help_or_hint_names_the_old_command() -> None:
    helps = [turnmark(Path.cwd(), *words, "--help").stdout for words in ([], ["summarize"], ["summary"], ["edit"])]
    assert not [text for text in helps if "turnmark label" in text]
