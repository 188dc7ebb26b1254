"""The ``turnmark`` command line (typer): the app, with every command registered."""

from collections.abc import Sequence

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


def main(argv: Sequence[str] | None = None) -> None:
    app(prog_name="turnmark", args=argv)


if __name__ == "__main__":
    main()
