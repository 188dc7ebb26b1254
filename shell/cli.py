"""The ``turnmark`` command line (typer): the app, with every command registered."""

from . import cli_demo, cli_inspect, cli_query, cli_summaries
from .cli_common import Settings, app

__all__ = ["Settings", "app", "cli_demo", "cli_inspect", "cli_query", "cli_summaries", "main"]


def main() -> None:
    app()
