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


def _name(command: typer.models.CommandInfo) -> str:
    return command.name or (command.callback.__name__ if command.callback else "").replace("_", "-")


def _group_name(group: typer.models.TyperInfo) -> str | None:
    name = group.name if isinstance(group.name, str) else None
    return name or (group.typer_instance.info.name if group.typer_instance else None)


@contextmanager
def _only_named(words: Sequence[str]) -> Iterator[None]:
    """The app with only the commands ``words`` name (typer builds every registered command's parameters on
    each run, a tenth of a short run's start-up); with all of them when none is named (``--help``, a mistyped
    name: the usage error lists them), when ``demo`` is (it runs the others) or a shell asks for completions."""
    commands, groups = list(app.registered_commands), list(app.registered_groups)
    named = set(words)
    kept = [command for command in commands if _name(command) in named]
    if not kept or "demo" in named or any(key.endswith("_COMPLETE") for key in os.environ):
        yield
        return
    app.registered_commands[:] = kept
    app.registered_groups[:] = [group for group in groups if _group_name(group) in named]
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
