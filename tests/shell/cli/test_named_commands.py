"""A run builds only the commands its words name (typer builds every registered one's parameters otherwise): each
command still runs as before, one after another in one process, and ``--help``, a mistyped name, ``demo`` (it
runs the others; ``tests/shell/cli/test_demo.py`` runs it whole) and a shell's completion see them all."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main

from turnmark.shell.cli.entry import status
from turnmark.shell.cli.main import VALUE_OPTIONS, _command_word, app


def _names() -> list[object]:
    return [command.callback for command in app.registered_commands]


def test_commands_run_one_after_another_and_all_come_back(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    every = _names()
    for words in (["conversations"], ["turns", "17800000010"], ["summary", "--help"], ["find", "lock"]):
        assert status(["--workspace", str(workspace), *words]) == 0, words
        assert _names() == every
    assert "jp-c17800000010" in capsys.readouterr().out


def test_a_workspace_named_like_a_command_keeps_the_command(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    named = workspace.rename(tmp_path / "show")
    assert status(["--workspace", str(named), "conversations"]) == 0
    assert "jp-c17800000010" in capsys.readouterr().out


def test_help_and_a_mistyped_name_see_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert status(["--help"]) == 0
    shown = capsys.readouterr().out
    assert all(name in shown for name in ("conversations", "summarize", "summary", "watch", "mcp"))
    assert status(["conversationz"]) == 2
    assert "Did you mean 'conversations'?" in capsys.readouterr().err


def test_a_shell_asking_for_completions_sees_every_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("_TURNMARK_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "turnmark conv")
    monkeypatch.setenv("COMP_CWORD", "1")
    status(["watch"])
    assert "conversations" in capsys.readouterr().out, "every command completes, not only those named"


def test_the_options_that_take_a_value_are_the_app_s() -> None:
    built = typer.main.get_command(app)
    taking = {name for param in built.params if not getattr(param, "is_flag", False) for name in param.opts}
    assert taking == VALUE_OPTIONS


@pytest.mark.parametrize(
    ("words", "named"),
    [
        (["conversations"], "conversations"),
        (["--workspace", "find", "conversations"], "conversations"),
        (["-w", "show", "-F", "json", "--jobs", "2", "turns", "12"], "turns"),
        (["--workspace=show", "-wfind", "summary", "set"], "summary"),
        (["--help", "find"], None),
        (["-h", "conversations"], None),
        (["--workspace", "find", "--help"], None),
        (["conversatons", "find"], "conversatons"),
        (["--", "find"], None),
        ([], None),
    ],
)
def test_the_command_word_is_the_first_that_is_no_option_or_value(words: list[str], named: str | None) -> None:
    assert _command_word(words) == named


@pytest.mark.parametrize("words", [["--help", "find"], ["-h", "conversations"], ["--workspace", "find", "--help"]])
def test_help_asked_for_before_the_command_lists_every_command(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status(words)
    shown = capsys.readouterr().out
    assert all(name in shown for name in ("conversations", "summarize", "find", "show", "watch")), shown


def test_a_mistyped_name_before_another_command_is_still_suggested(capsys: pytest.CaptureFixture[str]) -> None:
    assert status(["conversatons", "find"]) == 2
    assert "Did you mean 'conversations'?" in capsys.readouterr().err
