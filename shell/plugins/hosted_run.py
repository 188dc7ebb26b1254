"""One turnmark command run for ``jp``: the workspace, user-local copy and configuration ``init`` hands over,
the command's stdout sent as ``print`` messages and its stderr as ``log`` messages, ``shutdown`` taken as
Ctrl-C, and one ``exit`` at the end."""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from turnmark.shell.cli import entry
from turnmark.shell.cli.usage import GLOBAL_VALUE_OPTIONS
from turnmark.shell.errors import ProtocolError
from turnmark.shell.output import shown
from turnmark.shell.plugins.protocol import (
    Exit,
    HostLink,
    Init,
    LineReader,
    Log,
    Print,
    Shutdown,
    decode,
)
from turnmark.shell.storage import workspace as workspace_files

PRINT_CHUNK = 8192
"""Characters of output gathered into one ``print`` message (at a line's end), as a pipe's buffer would."""

TERMINAL_ONLY = {
    ("edit", "--interactive"): "opens your editor",
    ("edit", "-i"): "opens your editor",
    ("fork", "--edit"): "opens your editor",
    ("repair", "--interactive"): "asks its questions on the terminal",
    ("repair", "-i"): "asks its questions on the terminal",
}
"""Options that need the terminal ``jp`` keeps to itself: such a run says to use ``turnmark`` directly."""


class _Pipe(io.TextIOBase):
    """A text stream a command writes as it would a pipe: UTF-8, not a terminal."""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    @staticmethod
    def text_of(text: str | bytes) -> str:
        return text.decode("utf-8", "replace") if isinstance(text, bytes) else text


class PrintStream(_Pipe):
    """The command's stdout: its text, in ``print`` messages (a pipe, not a terminal: no colour, no pager),
    through the sanitizer once more (what turnmark printed is unchanged by it; click's own text is checked)."""

    def __init__(self, link: HostLink) -> None:
        self._link = link
        self._pending: list[str] = []
        self._size = 0

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "strict"

    def write(self, text: str | bytes) -> int:
        text = self.text_of(text)
        self._pending.append(text)
        self._size += len(text)
        if self._size >= PRINT_CHUNK and "\n" in text:
            whole = "".join(self._pending)
            cut = whole.rindex("\n") + 1
            self._link.send(Print(shown(whole[:cut])))
            self._pending, self._size = [whole[cut:]], len(whole) - cut
        return len(text)

    def flush(self) -> None:
        whole = "".join(self._pending)
        self._pending, self._size = [], 0
        if whole:
            self._link.send(Print(shown(whole)))


class LogStream(_Pipe):
    """The command's stderr: a ``log`` message per line; its last ``error:`` line is the run's reason."""

    def __init__(self, link: HostLink) -> None:
        self.link = link
        self.partial = ""
        self.reason: str | None = None
        self._lock = threading.Lock()

    def write(self, text: str | bytes) -> int:
        text = self.text_of(text)
        with self._lock:
            *lines, self.partial = (self.partial + text).split("\n")
        for line in lines:
            self._send(line)
        return len(text)

    def flush(self) -> None:
        with self._lock:
            rest, self.partial = self.partial, ""
        if rest:
            self._send(rest)

    def _send(self, line: str) -> None:
        line = shown(line)
        if not line.strip():
            return
        if line.startswith("error: "):
            self.reason = line.removeprefix("error: ")
            self.link.send(Log("error", self.reason))
        elif line.startswith("warning: "):
            self.link.send(Log("warn", line.removeprefix("warning: ")))
        elif line.startswith("note: "):
            self.link.send(Log("warn", line))
        else:
            self.link.send(Log("info", line))


def command_words(argv: Sequence[str]) -> list[str]:
    """``argv``'s words that are not options or the values of turnmark's global options."""
    words: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in GLOBAL_VALUE_OPTIONS:
            skip = True
        elif not word.startswith("-"):
            words.append(word)
    return words


def terminal_only(argv: Sequence[str]) -> str | None:
    """Why ``argv`` (a turnmark command line) cannot run inside ``jp``, if it needs the terminal."""
    command = next(iter(command_words(argv)), "")
    for word in argv:
        if word == "--":
            break
        flags = [word.split("=")[0]]
        if word.startswith("-") and not word.startswith("--"):
            flags += [f"-{letter}" for letter in word[1:]]
        for flag in flags:
            why = TERMINAL_ONLY.get((command, flag))
            if why is not None:
                return shown(f"`{command} {flag}` {why}: run it as `turnmark {' '.join(argv)}` in a terminal")
    return None


def host_workspace(init: Init) -> str | None:
    """Make ``init``'s workspace the one every look finds; the reason it cannot be, if so."""
    root = Path(init.workspace.root)
    if Path(init.workspace.storage).resolve() != (root / workspace_files.STORAGE_DIR).resolve():
        return (
            f"jp keeps this workspace's conversations in {init.workspace.storage}; turnmark reads only "
            f"{root / workspace_files.STORAGE_DIR}"
        )
    if init.paths.user_data:
        os.environ["JP_USER_DATA_DIR"] = init.paths.user_data
    user = Path(init.paths.user_workspace) if init.paths.user_workspace else None
    config = without_nulls(init.config) if isinstance(init.config, dict) else {}
    workspace_files.hand_over(workspace_files.Workspace(root, user, config))
    return None


def without_nulls(value: Any) -> Any:
    """JP's partial configuration with its unset (``null``) values left out, so they hide no lower layer."""
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    return value


class Listener:
    """Reads what ``jp`` sends during a run; ``shutdown`` interrupts the command as Ctrl-C does."""

    def __init__(self, stdin: LineReader, on_problem: Callable[[str], object]) -> None:
        self._stdin = stdin
        self._main = threading.main_thread().ident
        self._on_problem = on_problem
        self._lock = threading.Lock()
        self._running = True
        self.shutdown = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="jp-listener", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """The command has ended: a later ``shutdown`` interrupts nothing (``exit`` follows at once)."""
        with self._lock:
            self._running = False

    def _listen(self) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        for line in self._stdin:
            if not line.strip():
                continue
            try:
                message = decode(line)
            except ProtocolError as error:
                self._on_problem(f"ignored a line from jp: {error}")
                continue
            if isinstance(message, Shutdown):
                self._interrupt()

    def _interrupt(self) -> None:
        with self._lock:
            if self._running and not self.shutdown.is_set() and self._main is not None:
                self.shutdown.set()
                signal.pthread_kill(self._main, signal.SIGINT)


@contextmanager
def captured(link: HostLink) -> Iterator[LogStream]:
    """The command's stdin empty, its stdout and stderr sent to ``jp``; flushed when it ends."""
    saved = sys.stdin, sys.stdout, sys.stderr
    output, log = PrintStream(link), LogStream(link)
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(), output, log
    try:
        yield log
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        output.flush()
        log.flush()


def run(link: HostLink, init: Init, prefix: Sequence[str], stdin: LineReader) -> Exit:
    """The command ``prefix + init.args`` in ``init``'s workspace, its output sent over ``link``."""
    argv = [*prefix, *init.args]
    why = terminal_only(argv) or host_workspace(init)
    if why is not None:
        return Exit(2, why)
    with captured(link) as log:
        listener = Listener(stdin, lambda text: log.write(f"warning: {text}\n"))
        try:
            listener.start()
            where = ["--workspace", init.workspace.root] if argv else []
            code = entry.status([*where, *argv], afterwards=signal.SIG_IGN)
        except KeyboardInterrupt:
            code = entry.INTERRUPTED
        finally:
            listener.stop()
    if code == entry.INTERRUPTED or (listener.shutdown.is_set() and code != 0):
        return Exit(entry.INTERRUPTED, "interrupted by jp's shutdown; nothing was left half-written")
    if code == 0:
        return Exit(0)
    return Exit(min(max(code, 1), 255), log.reason or shown(f"`turnmark {' '.join(argv)}` ended with status {code}"))
