"""The plugin executables ``jp-turnmark``, ``jp-turns`` and ``jp-find``: ``describe`` or one command run.

Whatever happens (a line that is not the protocol, a version this plugin does not speak, a crash), ``jp``
gets protocol lines only and one ``exit`` with a one-line reason. Started from a terminal, a plugin prints
its help on stderr and says to run it through ``jp``.
"""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass

from turnmark.shell.cli import entry
from turnmark.shell.errors import ProtocolError
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, shown
from turnmark.shell.plugins import hosted_run
from turnmark.shell.plugins.protocol import (
    VERSION,
    Describe,
    Described,
    Exit,
    HostLink,
    Init,
    LineReader,
    Ready,
    decode,
)

with lazy_imports():
    from turnmark.shell import version


@dataclass(frozen=True)
class Plugin:
    """A ``jp-<name>`` executable: the turnmark command words its arguments follow."""

    name: str
    prefix: tuple[str, ...]
    description: str

    @property
    def usage(self) -> str:
        return f"jp {self.name}"


TURNMARK = Plugin("turnmark", (), "Any turnmark command inside jp: jp turnmark turns, jp turnmark show, ...")
TURNS = Plugin("turns", ("turns",), "One line per turn of a conversation: its event ID and summary (turnmark)")
FIND = Plugin("find", ("find",), "Search the turns of every conversation: summaries, requests, answers (turnmark)")
PLUGINS = (TURNMARK, TURNS, FIND)


def help_text(plugin: Plugin) -> str:
    """What ``turnmark <prefix> --help`` prints, its usage line and examples written as typed to ``jp``."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(io.StringIO()):
        entry.status([*plugin.prefix, "--help"])
    return as_typed_to_jp(text.getvalue(), plugin)


def as_typed_to_jp(help_text: str, plugin: Plugin) -> str:
    """``help_text`` with the command it documents named as the user types it to ``jp``: ``Usage: jp turns`` and
    ``$ jp turns 1772…`` for ``turnmark turns``.
    """
    command = " ".join(("turnmark", *plugin.prefix))
    for lead in ("Usage: ", "$ "):
        help_text = help_text.replace(f"{lead}{command}", f"{lead}{plugin.usage}")
    return help_text


def serve(plugin: Plugin) -> int:
    """Answer ``jp`` on this process's stdin and stdout; the status this process ends with."""
    if sys.stdin.isatty():
        chrome(help_text(plugin).rstrip("\n"))
        chrome(f"\nnote: jp-{plugin.name} is a JP command plugin: run it through jp, as `{plugin.usage} ...`")
        return 0
    link = HostLink.take_stdout()
    source = LineReader(0)
    ended = Exit(1, "jp-plugin ended before it ran anything")
    try:
        ended = _answer(plugin, link, source)
    except BaseException as error:
        ended = Exit(1, shown(f"jp-{plugin.name} failed: {type(error).__name__}: {error}".splitlines()[0]))
    finally:
        if link.is_open:
            link.send(ended)
    return ended.code


def _answer(plugin: Plugin, link: HostLink, stdin: LineReader) -> Exit:
    first = stdin.readline()
    if not first:
        return Exit(1, "jp sent nothing (expected init or describe)")
    try:
        message = decode(first)
    except ProtocolError as error:
        return Exit(1, shown(f"the first line from jp is {error}"))
    if isinstance(message, Describe):
        link.send(_described(plugin))
        link.close()
        return Exit(0)
    if not isinstance(message, Init):
        kind = type(message).__name__.lower() if message is not None else "a message of another type"
        return Exit(1, f"jp sent {kind} first (expected init or describe)")
    if message.version != VERSION:
        return Exit(
            2, f"jp speaks plugin protocol version {message.version}; this turnmark speaks {VERSION}: update one"
        )
    link.send(Ready())
    return hosted_run.run(link, message, plugin.prefix, stdin)


def _described(plugin: Plugin) -> Described:
    return Described(
        name=plugin.name,
        version=version.installed(),
        description=plugin.description,
        command=[plugin.name],
        help=help_text(plugin),
    )


def _main(plugin: Plugin) -> None:
    sys.exit(serve(plugin))


def turnmark_main() -> None:
    """``jp-turnmark``."""
    _main(TURNMARK)


def turns_main() -> None:
    """``jp-turns``."""
    _main(TURNS)


def find_main() -> None:
    """``jp-find``."""
    _main(FIND)
