"""``turnmark demo``: offline, on a temporary copy, readable in 100 columns, and honest about what it touched."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.demo import WIDTH, relative, wrapped
from turnmark.shell.cli.main import Settings, app

ENV = {"COLUMNS": "100", "TERMINAL_WIDTH": "100", "NO_COLOR": "1"}

OPENING = (
    "JP is a command-line LLM assistant that keeps each conversation in `.jp/conversations/<id>-<title>/events.json`; "
    "turnmark keeps those conversations navigable and safe to edit by hand."
)
COMMANDS = [
    "$ turnmark conversations",
    "$ turnmark check 17800000030",
    "$ turnmark project 17800000040",
    "$ turnmark turns 17790000000",
    "$ turnmark summarize --all",
    "$ turnmark turns 17790000000",
    "$ turnmark turns 17800000040",
]


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_data: Path) -> Path:
    """Where the demo makes its copy: a folder of this test's own, so other runs cannot disturb it."""
    root = tmp_path / "temp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def demo(*args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(app, ["demo", *args], obj=Settings(new_id=sequential_ids()), env={**ENV, **(env or {})})
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def paragraphs(text: str) -> list[str]:
    return [" ".join(block.split("\n")) for block in text.split("\n\n")]


def test_the_demo_runs_offline_and_leaves_nothing_behind(temp_root: Path) -> None:
    result = demo()
    out, err = result.stdout, result.stderr
    assert [line for line in out.splitlines() if line.startswith("$ ")] == COMMANDS
    assert "== Catch-up: writing the missing summaries, offline" in out
    assert "[builtin/extractive]" in out
    assert "warning: request_id 'gone000' does not resolve" in err
    assert list(temp_root.iterdir()) == []


def test_every_line_of_the_demo_fits_in_100_columns(temp_root: Path) -> None:
    result = demo()
    too_wide = [line for line in result.output.splitlines() if len(line) > WIDTH]
    assert too_wide == []
    assert str(temp_root) not in result.output


def test_the_demo_opens_with_what_jp_and_turnmark_are(temp_root: Path) -> None:
    assert paragraphs(demo().stdout)[0] == OPENING


def test_the_demo_explains_its_words_before_the_output_uses_them(temp_root: Path) -> None:
    out = demo().stdout
    before_first_command = out[: out.index("$ turnmark conversations")]
    for word in ("turn summary", "`request_id`", "unresolved"):
        assert word in before_first_command
    assert out.index("information, not a problem") < out.index("$ turnmark check")
    assert out.index("the projection") < out.index("$ turnmark project")
    assert out.index("== Catch-up") < out.index("$ turnmark summarize")
    assert "catch-up" not in out[: out.index("== Catch-up")].lower()


def as_seen_in_a_terminal(temp_root: Path) -> str:
    """The demo run as a program, stdout and stderr on one pipe, as a terminal interleaves them."""
    result = subprocess.run(
        [sys.executable, "-m", "turnmark.shell.cli.main", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **ENV, "TMPDIR": str(temp_root)},
        timeout=120,
        check=True,
    )
    return result.stdout


def test_the_refused_save_is_announced_and_short(temp_root: Path) -> None:
    output = as_seen_in_a_terminal(temp_root)
    summarize = output.index("$ turnmark summarize --all")
    explanation = output[output.rindex("== ", 0, summarize) : summarize]
    assert "turnmark refuses to save that conversation" in " ".join(explanation.split())
    error = output.index("error: jp-c17800000030: ", summarize)
    assert output[summarize:error].strip() == "$ turnmark summarize --all"
    assert output[error:].startswith(
        "error: jp-c17800000030: .jp/conversations/17800000030-drop-a-digression/events.json: refusing to"
    )
    assert all(len(line) <= WIDTH for line in output.splitlines())
    assert list(temp_root.iterdir()) == []


def test_stderr_lines_appear_where_the_command_printed_them(temp_root: Path) -> None:
    output = as_seen_in_a_terminal(temp_root)
    project = output.index("$ turnmark project 17800000040")
    assert project < output.index("warning: request_id 'gone000'") < output.index("   0  request", project)


def test_the_demo_closes_with_what_it_touched_and_how_to_keep_the_copy(temp_root: Path) -> None:
    out = demo().stdout
    closing = out[out.rindex("== What was touched") :]
    assert "Nothing of yours was read or changed" in closing
    assert "temporary copy" in closing
    assert "nothing went over the network" in closing
    assert "`turnmark demo --keep` keeps it" in closing
    assert out.rstrip().endswith(closing.rstrip())


def test_with_keep_the_copy_is_where_the_demo_says(temp_root: Path) -> None:
    out = demo("--keep").stdout
    closing = out[out.rindex("== What was touched") :]
    assert "Nothing of yours was read or changed" in closing
    assert "(`--keep`)" in closing
    kept = Path(out.splitlines()[-1].strip())
    try:
        assert kept.parent == temp_root
        assert (kept / ".jp" / "conversations" / "17790000000-explain-the-build-script" / "events.json").is_file()
        assert sorted(path.name for path in kept.iterdir()) == [".jp"]
        assert (
            '"summary"'
            in (kept / ".jp" / "conversations" / "17790000000-explain-the-build-script" / "events.json").read_text()
        )
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def test_the_demo_ignores_the_users_jp_configuration(temp_root: Path, tmp_path: Path, user_data: Path) -> None:
    model = '[conversation.turn_summary.generate.model]\nid = "ollama/llama3.2:3b"\n'
    unreachable = '[providers.llm.ollama]\nbase_url = "http://127.0.0.1:9"\n'
    global_config = tmp_path / "global-config"
    global_config.mkdir()
    (global_config / "config.toml").write_text(model + unreachable)
    silo = user_data / "workspace" / "fixtures-fx001"
    silo.mkdir(parents=True)
    (silo / "config.toml").write_text(model + unreachable)
    before = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*") if temp_root not in path.parents)
    result = demo(
        env={
            "JP_GLOBAL_CONFIG_DIR": str(global_config),
            "JP_USER_DATA_DIR": str(user_data),
            "JP_CFG_CONVERSATION_TURN_SUMMARY_GENERATE_MODEL_ID": "ollama/llama3.2:3b",
        }
    )
    assert "jp-c17800000040  3 summarized with builtin/extractive" in result.stdout
    assert "ollama" not in result.output
    after = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*") if temp_root not in path.parents)
    assert after == before
    assert os.environ.get("JP_USER_DATA_DIR") == str(user_data)


def test_a_long_output_line_is_wrapped_under_its_own_indent() -> None:
    line = "    left out of what the model sees: " + ", ".join(
        f"entry {n} tool_call_request x{n}bbbbb" for n in range(9)
    )
    pieces = wrapped(line)
    assert len(pieces) > 1
    assert all(len(piece) <= WIDTH for piece in pieces)
    assert pieces[0].startswith("    left out")
    assert all(piece.startswith("        ") and not piece.startswith("         ") for piece in pieces[1:])
    assert " ".join(piece.strip() for piece in pieces) == line.strip()
    assert wrapped("   0  request     a2req00  Show me the lock code.") == [
        "   0  request     a2req00  Show me the lock code."
    ]


def test_paths_inside_the_copy_are_shown_relative_to_it(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / ".jp").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    line = f"error: {link}/.jp/a.json and {real}/.jp/b.json, not {tmp_path}/other"
    assert relative(line, link) == f"error: .jp/a.json and .jp/b.json, not {tmp_path}/other"
