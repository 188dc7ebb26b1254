"""Long text for a terminal through a pager, as ``git log`` does.

Only when stdout is a terminal and the text is taller than it. The pager is ``$PAGER`` (split as
a shell would, run without a shell), else ``less``; ``LESS`` defaults to ``FRX`` (quit when one
screen is enough, pass colours through, leave the screen as it is). ``PAGER=cat`` or an empty
``PAGER`` turns it off, and a pager that cannot start is skipped. Ctrl-C while the pager shows is the pager's,
as under git: the text stops where it is, the pager keeps what it has until it is quit, and only then does the
command end (interrupted, 130).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import IO

from turnmark.shell.interrupts import NotedInterrupts, interrupts_noted
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


def page_chunks(chunks: Iterable[str], environ: Mapping[str, str] | None = None) -> None:
    """Write ``chunks`` (already safe for a terminal) to stdout as they come: through the pager once they
    are taller than the terminal (the first screen shows while the rest is still being made)."""
    environ = os.environ if environ is None else environ
    command = pager_command(environ)
    if command is None or not sys.stdout.isatty():
        for chunk in chunks:
            write_prepared(chunk)
        return
    height = shutil.get_terminal_size().lines
    held: list[str] = []
    lines = 0
    rest = iter(chunks)
    for chunk in rest:
        held.append(chunk)
        lines += chunk.count("\n")
        if lines >= height:
            break
    else:
        write_prepared("".join(held))
        return
    _through_pager(command, environ, held, rest)


def _through_pager(command: list[str], environ: Mapping[str, str], held: list[str], rest: Iterator[str]) -> None:
    """``held`` then ``rest`` into the pager. Ctrl-C from the pager's start to its end is noted, never raised where
    it would leave the pager behind; only while the text is written is it raised too, to stop the writing (unbuffered,
    so it is seen between two writes). Once the writing stops (Ctrl-C, the pager quit), ``rest`` is closed (a child
    making chunks ends), the pager keeps what it was given, and after Ctrl-C ``KeyboardInterrupt`` is raised once
    the pager has ended."""
    sys.stdout.flush()
    with interrupts_noted() as interrupts:
        try:
            pager = subprocess.Popen(command, stdin=subprocess.PIPE, bufsize=0, env={"LESS": "FRX", **environ})
        except OSError:
            pager = None
        if pager is not None:
            _feed(pager, held, rest, interrupts)
    if interrupts.seen:
        raise KeyboardInterrupt
    if pager is None:
        for chunk in itertools.chain(held, rest):
            write_prepared(chunk)


def _feed(pager: subprocess.Popen[bytes], held: list[str], rest: Iterator[str], interrupts: NotedInterrupts) -> None:
    stdin = pager.stdin
    assert stdin is not None
    try:
        interrupts.raising = not interrupts.seen
        if interrupts.raising:
            with contextlib.suppress(BrokenPipeError):
                for chunk in itertools.chain(held, rest):
                    _write_all(stdin, chunk.encode("utf-8"))
    except KeyboardInterrupt:
        pass
    finally:
        interrupts.raising = False
        try:
            close = getattr(rest, "close", None)
            if close is not None:
                close()
        finally:
            with contextlib.suppress(BrokenPipeError):
                stdin.close()
            pager.wait()


def _write_all(stdin: IO[bytes], data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = stdin.write(view)
        assert written is not None, "a pipe that blocks"
        view = view[written:]
