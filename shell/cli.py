"""The ``turnmark`` command line (typer): the app, with every command registered."""

from . import cli_demo, cli_edit, cli_inspect, cli_query, cli_repair, cli_summaries, cli_watch
from .cli_common import Settings, app

__all__ = [
    "Settings",
    "app",
    "cli_demo",
    "cli_edit",
    "cli_inspect",
    "cli_query",
    "cli_repair",
    "cli_summaries",
    "cli_watch",
    "main",
]


def main() -> None:
    app(prog_name="turnmark")


if __name__ == "__main__":
    main()
