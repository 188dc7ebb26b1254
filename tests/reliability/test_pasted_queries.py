"""``find`` takes what people paste (issue 31, finding 4): a pasted flag is a word, words given as separate
arguments get a hint to quote them, a line break in a snippet is never a literal ``\\n``, and the summaries
are searched with ``--in summaries`` (``labels`` is an old name, said once).

Real ``turnmark`` processes on a small workspace written here; the core's rules have plain-value tests in
``tests/core/search/``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.reliability.processes import isolated_env, run_turnmark
from tests.support.streams import message, request, stream_of, turn
from turnmark.core.stream.payloads import Payload, ToolCallRequest, ToolCallResponse

PROBE = (
    "pasted queries: `find 'jp --version'`, `find stack overflow windows`, a stray word with a line break"
    " and an escape sequence, a request and a tool's edit holding line breaks (text and JSON), `--in "
    "summaries` against `--in labels` (issue 31, finding 4)",
    "{cases} cases through the real CLI on a workspace of 3 conversations",
    "`--version` a word to look for, `-version` still a word to leave out; a stray word one line, exit 2,"
    " naming the quoted query; no literal `\\n` in a snippet (`⏎` in text, a line break in JSON); `labels`"
    " the same hits as `summaries`, with one note",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""

VERSION = "jp-c17990000001"
INIT = "jp-c17990000002"
EDIT = "jp-c17990000003"


def write(root: Path, folder: str, *payloads: Payload) -> None:
    directory = root / ".jp" / "conversations" / folder
    directory.mkdir(parents=True)
    (directory / "events.json").write_bytes(stream_of(*payloads).to_json())
    (directory / "base_config.json").write_text("{}\n")


@pytest.fixture
def pasted(tmp_path: Path) -> Path:
    """Three conversations: one about ``jp --version`` (with a summary), one about ``jp init``, one with a
    multi-line request and edit."""
    root = tmp_path / "ws"
    write(
        root,
        "17990000001-version",
        turn("Explain the missing build date"),
        request("Why does jp --version print no date?"),
        message("It did not."),
    )
    write(root, "17990000002-init", turn(), request("jp init fails on Linux"), message("The folder is missing."))
    arguments = {"path": "src/lib.rs", "old": "fn run() {\n    stack\noverflow()"}
    write(
        root,
        "17990000003-edit",
        turn(),
        request("Fix the recursion\nthat overflows the stack"),
        ToolCallRequest("2026-01-02 10:00:00.0", "call_1", "fs_modify_file", arguments),
        ToolCallResponse("2026-01-02 10:00:00.0", "call_1", "ok", False),
        message("Done."),
    )
    return root


def find(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_turnmark(root, isolated_env(home), ("find", *args), 60)


def test_a_pasted_flag_is_a_word_to_look_for(pasted: Path, tmp_path: Path) -> None:
    result = find(pasted, tmp_path / "home", "-o", "ids", "jp --version")
    assert result.returncode == 0, result.stderr
    assert [line.split(":")[0] for line in result.stdout.split()] == [VERSION]


def test_a_word_after_one_dash_still_leaves_turns_out(pasted: Path, tmp_path: Path) -> None:
    result = find(pasted, tmp_path / "home", "-o", "ids", "jp -version")
    assert result.returncode == 0, result.stderr
    assert [line.split(":")[0] for line in result.stdout.split()] == [INIT]


def test_words_given_as_arguments_are_told_to_be_quoted(pasted: Path, tmp_path: Path) -> None:
    result = find(pasted, tmp_path / "home", "stack", "overflow", "windows")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "error: no conversation 'overflow'; to search for all three words, quote them: "
        "turnmark find 'stack overflow windows'\n"
    )


def test_a_stray_word_is_echoed_back_safe_and_on_one_line(pasted: Path, tmp_path: Path) -> None:
    result = find(pasted, tmp_path / "home", "stack", "over\nflow\x1b[2J")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "\x1b" not in result.stderr
    assert "quote them: turnmark find 'stack over flow" in result.stderr


def test_a_line_break_in_a_snippet_is_shown_as_one_character(pasted: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    request_hit = find(pasted, home, "overflows", "--in", "requests")
    assert request_hit.returncode == 0, request_hit.stderr
    assert "    Fix the recursion⏎that [overflows] the stack\n" in request_hit.stdout
    tool_hit = find(pasted, home, "overflow", "--in", "tools")
    assert tool_hit.returncode == 0, tool_hit.stderr
    assert "\\n" not in tool_hit.stdout
    assert 'stack⏎[overflow]()"}' in tool_hit.stdout


def test_json_gives_a_snippet_with_its_line_breaks(pasted: Path, tmp_path: Path) -> None:
    result = find(pasted, tmp_path / "home", "overflows", "--in", "requests", "--format", "json")
    assert result.returncode == 0, result.stderr
    [hit] = json.loads(result.stdout)["hits"]
    assert hit["snippet"] == "Fix the recursion\nthat overflows the stack"
    start, end = hit["marks"][0]
    assert hit["snippet"][start:end] == "overflows"


def test_summaries_are_searched_as_summaries_and_labels_is_an_old_name(pasted: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    summaries = find(pasted, home, "date", "--in", "summaries", "--format", "json")
    assert summaries.returncode == 0, summaries.stderr
    document = json.loads(summaries.stdout)
    assert document["scopes"] == ["summaries"]
    assert [hit["scope"] for hit in document["hits"]] == ["summaries"]
    old = find(pasted, home, "date", "--in", "labels", "--format", "json")
    assert old.returncode == 0, old.stderr
    assert old.stdout == summaries.stdout
    assert (
        old.stderr == "note: --in labels is now --in summaries (in JP, labels are key=value labels on conversations)\n"
    )
