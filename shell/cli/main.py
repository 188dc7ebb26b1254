"""The ``turnmark`` command line (typer): the app, with every command registered (a run builds those it names)."""

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import typer

from turnmark.shell.cli import demo as cli_demo
from turnmark.shell.cli import finding as cli_find
from turnmark.shell.cli import querying as cli_query
from turnmark.shell.cli import reading as cli_inspect
from turnmark.shell.cli import repairing as cli_repair
from turnmark.shell.cli import rewriting as cli_edit
from turnmark.shell.cli import serving as cli_serve
from turnmark.shell.cli import showing as cli_show
from turnmark.shell.cli import summarizing as cli_summaries
from turnmark.shell.cli import watching as cli_watch
from turnmark.shell.cli.common import Settings, app

__all__ = [
    "Settings",
    "app",
    "cli_demo",
    "cli_edit",
    "cli_find",
    "cli_inspect",
    "cli_query",
    "cli_repair",
    "cli_serve",
    "cli_show",
    "cli_summaries",
    "cli_watch",
    "main",
]


VALUE_OPTIONS = frozenset({"--workspace", "-w", "--cfg", "-c", "--format", "-F", "--jobs", "-j"})
"""The app's own options that take the next word as their value (``tests/shell/cli/test_named_commands.py``
holds them to the app's)."""


def _command_word(words: Sequence[str]) -> str | None:
    """The word that names the command: the first that is neither an option nor an option's value (``None``
    when there is none, or help is asked for before it)."""
    value_next = False
    for word in words:
        if value_next:
            value_next = False
        elif word in ("--help", "-h", "--"):
            return None
        elif word.startswith("-"):
            value_next = word in VALUE_OPTIONS
        else:
            return word
    return None


def _name(command: typer.models.CommandInfo) -> str:
    return command.name or (command.callback.__name__ if command.callback else "").replace("_", "-")


def _group_name(group: typer.models.TyperInfo) -> str | None:
    name = group.name if isinstance(group.name, str) else None
    return name or (group.typer_instance.info.name if group.typer_instance else None)


@contextmanager
def _only_named(words: Sequence[str]) -> Iterator[None]:
    """The app with only the command ``words`` name (typer builds every registered command's parameters on each
    run, a tenth of a short run's start-up); with all of them when it names none (``--help`` first, a mistyped
    name: the usage error lists them), when it is ``demo`` (it runs the others) or a shell asks for completions."""
    commands, groups = list(app.registered_commands), list(app.registered_groups)
    named = _command_word(words)
    kept = [command for command in commands if _name(command) == named]
    kept_groups = [group for group in groups if _group_name(group) == named]
    if not (kept or kept_groups) or named == "demo" or any(key.endswith("_COMPLETE") for key in os.environ):
        yield
        return
    app.registered_commands[:] = kept
    app.registered_groups[:] = kept_groups
    try:
        yield
    finally:
        app.registered_commands[:] = commands
        app.registered_groups[:] = groups


def main(argv: Sequence[str] | None = None) -> None:
    with _only_named(sys.argv[1:] if argv is None else argv):
        app(prog_name="turnmark", args=argv)


if __name__ == "__main__":
    main()
