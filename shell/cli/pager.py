"""Long text for a terminal through a pager, as ``git log`` does.

Only when stdout is a terminal and the text is taller than it. The pager is ``$PAGER`` (split as
a shell would, run without a shell), else ``less``; ``LESS`` defaults to ``FRX`` (quit when one
screen is enough, pass colours through, leave the screen as it is). ``PAGER=cat`` or an empty
``PAGER`` turns it off, and a pager that cannot start is skipped.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping

from turnmark.shell.output import write_prepared


def pager_command(environ: Mapping[str, str]) -> list[str] | None:
    """The pager to run, or ``None`` for none.

    >>> pager_command({}), pager_command({"PAGER": "more -s"}), pager_command({"PAGER": "cat"})
    (['less'], ['more', '-s'], None)
    """
    try:
        command = shlex.split(environ.get("PAGER", "less"))
    except ValueError:
        return None
    return command if command and command != ["cat"] else None


def page(text: str, environ: Mapping[str, str] | None = None) -> None:
    """Write ``text`` (already safe for a terminal) to stdout, paged when it is taller than the terminal."""
    environ = os.environ if environ is None else environ
    command = pager_command(environ)
    tall = text.count("\n") >= shutil.get_terminal_size().lines
    if command is None or not tall or not sys.stdout.isatty():
        write_prepared(text)
        return
    sys.stdout.flush()
    try:
        pager = subprocess.Popen(command, stdin=subprocess.PIPE, env={"LESS": "FRX", **environ})
    except OSError:
        write_prepared(text)
        return
    assert pager.stdin is not None
    with contextlib.suppress(BrokenPipeError):
        pager.stdin.write(text.encode("utf-8"))
    with contextlib.suppress(BrokenPipeError):
        pager.stdin.close()
    while True:
        try:
            pager.wait()
            return
        except KeyboardInterrupt:
            continue
