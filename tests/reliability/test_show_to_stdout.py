"""``show -o -`` writes to stdout, as ``-`` means for other tools, not to a file named ``-`` (issue 34, finding 11)."""

from __future__ import annotations

from pathlib import Path

from tests.reliability.processes import isolated_env, run_turnmark

PROBE = (
    "outputs: `show -o -` (issue 34, finding 11)",
    "{cases} command runs",
    "`-o -` writes stdout and no file named `-`",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""


def test_show_output_dash_is_stdout(workspace: Path, tmp_path: Path) -> None:
    result = run_turnmark(workspace, isolated_env(tmp_path / "home"), ("show", "-o", "-", "17800000010"), 60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Add retry backoff to the stream handler  jp-c17800000010")
    assert not (workspace / "-").exists()
