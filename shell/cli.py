"""The ``turnmark`` command line (typer): the app, with every command registered."""

import sys

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


GLOBAL_VALUE_OPTIONS = ("--workspace", "-w", "--cfg", "-c", "--format", "-F")
OWN_OPTIONS = {
    "watch": {"--workspace", "-w"},
    **{
        command: {"--format", "-F"}
        for command in (
            "conversations", "turns", "check", "project", "summarize", "transcript", "repair", "strip", "fork",
        )
    },
}  # fmt: skip
"""The global options a command defines itself (its own meaning wins where it is given)."""


def global_options_first(argv: list[str]) -> list[str]:
    """``argv`` with the global options given after the command moved before it, as users type them
    (``turnmark summarize CONV --cfg k=v``); options the command defines itself stay where they are."""
    position = 0
    while position < len(argv) and argv[position].startswith("-"):
        position += 2 if argv[position] in GLOBAL_VALUE_OPTIONS else 1
    if position >= len(argv):
        return argv
    command, before, rest = argv[position], argv[: position + 1], argv[position + 1 :]
    own = OWN_OPTIONS.get(command, set())
    moved: list[str] = []
    kept: list[str] = []
    index = 0
    while index < len(rest):
        token = rest[index]
        if token == "--":
            kept += rest[index:]
            break
        name = token.split("=", 1)[0]
        if name in GLOBAL_VALUE_OPTIONS and name not in own:
            takes_value = "=" not in token and index + 1 < len(rest)
            moved += rest[index : index + 2] if takes_value else [token]
            index += 2 if takes_value else 1
            continue
        kept.append(token)
        index += 1
    return [*before[:-1], *moved, command, *kept]


def main() -> None:
    app(args=global_options_first(sys.argv[1:]))


if __name__ == "__main__":
    main()
