"""Every command's help answers a newcomer: each option it takes is listed, ``-h`` and ``--version``
work everywhere, bare ``turnmark`` lists the commands, and no internal document name is left in."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from typer.core import TyperGroup, TyperOption
from typer.main import get_command
from typer.testing import CliRunner

from turnmark.shell.cli.common import EDITING_HELP
from turnmark.shell.cli.help import COMMAND_GROUPS
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.cli.usage import GLOBAL_FLAGS, GLOBAL_VALUE_OPTIONS

TURNMARK = str(Path(sys.executable).with_name("turnmark"))
GROUP = get_command(app)
assert isinstance(GROUP, TyperGroup)
SUBCOMMANDS = {
    name: command
    for top, group in GROUP.commands.items()
    if not group.hidden
    for name, command in [(top, group), *((f"{top} {sub}", c) for sub, c in getattr(group, "commands", {}).items())]
}
COMMANDS = sorted(SUBCOMMANDS)
"""Every command a user is shown (the hidden ``label`` alias is not), with ``summary set`` and ``summary clear``."""
INTERNAL_NAMES = re.compile(r"RFD ?\d|\(D\d+\)|\bD\d{2}\b|\bissue \d")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), obj=Settings(), env={"COLUMNS": "100", "NO_COLOR": "1"})
    return result.exit_code, result.stdout, result.stderr


def accepted_options(command: str) -> set[str]:
    """Every option name ``turnmark COMMAND`` takes: its own, and the global ones it may be given."""
    own = {
        name
        for param in SUBCOMMANDS[command].params
        if isinstance(param, TyperOption)
        for name in (*param.opts, *param.secondary_opts)
    }
    return own | {"-h", "--help", *GLOBAL_VALUE_OPTIONS, *GLOBAL_FLAGS}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_a_command_accepts_is_in_its_help(command: str) -> None:
    code, out, _ = run(*command.split(), "--help")
    assert code == 0
    listed = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", out.split("\nExamples:\n")[0]))
    missing = accepted_options(command) - listed
    assert not missing, f"turnmark {command} --help does not list {sorted(missing)}"


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_dash_h_is_help_and_names_no_internal_document(command: str) -> None:
    words = command.split()
    long_help = run(*words, "--help")
    assert run(*words, "-h") == long_help
    assert not INTERNAL_NAMES.search(long_help[1]), INTERNAL_NAMES.findall(long_help[1])


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_version_on_every_command_comes_from_the_package_metadata(command: str) -> None:
    code, out, _ = run(*command.split(), "--version")
    assert (code, out) == (0, f"turnmark {metadata.version('turnmark')}\n")


def test_bare_turnmark_lists_the_grouped_commands_and_exits_0() -> None:
    done = subprocess.run([TURNMARK], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stderr == ""
    for group, names in COMMAND_GROUPS:
        assert f"\n{group}:\n" in done.stdout
        for name in names:
            assert re.search(rf"^  {name} ", done.stdout, re.MULTILINE), name


def test_query_is_not_a_background_task() -> None:
    groups = dict(COMMAND_GROUPS)
    assert not any("query" in names for group, names in groups.items() if "Background" in group)
    assert "watch" not in next(names for names in groups.values() if "query" in names)


def test_check_and_project_point_at_repair_and_do_not_repeat_each_other() -> None:
    check_help, project_help = (" ".join(run(command, "--help")[1].split()) for command in ("check", "project"))
    assert "turnmark repair" in check_help
    assert "turnmark repair" in project_help
    assert "by hand" not in check_help.split("turnmark repair")[0]
    sentences = " ".join(EDITING_HELP.split()).split(". ")
    assert sentences
    assert not [sentence for sentence in sentences if sentence in project_help]


def test_every_help_listed_in_one_place(snapshot: SnapshotAssertion) -> None:
    """Every help text the CLI prints, in one snapshot a reviewer reads from top to bottom."""
    texts = {command or "turnmark": run(*command.split(), "--help")[1] for command in ["", *COMMANDS]}
    assert texts == snapshot
