"""JP's command plugin protocol, version 1 (JP's RFD 072, crate ``jp_plugin``): its messages, read as JSON
lines from ``jp`` on stdin and written as JSON lines to ``jp`` on stdout.

Field names and defaults are JP's; a field JP adds later is ignored on reading. ``HostLink`` is the one
writer of the process's real stdout: it takes the file descriptor over when it opens, and points
descriptor 1 at stderr, so nothing else (a worker process, a library, a late warning) can put a line that
is not a protocol message where ``jp`` reads them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import msgspec

from turnmark.shell.errors import ProtocolError

VERSION = 1
"""The protocol version this plugin speaks (``init.version``)."""

LOG_LEVELS = ("trace", "debug", "info", "warn", "error")


class WorkspaceInfo(msgspec.Struct, frozen=True):
    root: str
    storage: str
    id: str


class PathsInfo(msgspec.Struct, frozen=True):
    user_data: str | None = None
    user_config: str | None = None
    user_workspace: str | None = None


# From jp to the plugin.


class Describe(msgspec.Struct, frozen=True, tag_field="type", tag="describe"):
    """``jp`` wants the plugin's metadata only (``jp -h``, ``jp <cmd> -h``)."""


class Init(msgspec.Struct, frozen=True, tag_field="type", tag="init"):
    """The first message of a run."""

    version: int
    workspace: WorkspaceInfo
    config: Any
    paths: PathsInfo = PathsInfo()
    options: dict[str, Any] = {}
    args: list[str] = []
    log_level: int = 0


class ConversationSummary(msgspec.Struct, frozen=True):
    id: str
    title: str | None
    last_activated_at: str
    events_count: int
    pinned_at: str | None = None


class Conversations(msgspec.Struct, frozen=True, tag_field="type", tag="conversations"):
    data: list[ConversationSummary]
    id: str | None = None


class Events(msgspec.Struct, frozen=True, tag_field="type", tag="events"):
    conversation: str
    data: list[Any]
    id: str | None = None


class Config(msgspec.Struct, frozen=True, tag_field="type", tag="config"):
    data: Any
    id: str | None = None
    path: str | None = None


class Error(msgspec.Struct, frozen=True, tag_field="type", tag="error"):
    message: str
    id: str | None = None
    request: str | None = None


class Shutdown(msgspec.Struct, frozen=True, tag_field="type", tag="shutdown"):
    """Ctrl-C or SIGTERM reached ``jp``: finish and send ``exit`` (``jp`` kills the plugin after about 5 s)."""


FromHost = Describe | Init | Conversations | Events | Config | Error | Shutdown


# From the plugin to jp.


class Ready(msgspec.Struct, frozen=True, tag_field="type", tag="ready", omit_defaults=True):
    pass


class ListConversations(msgspec.Struct, frozen=True, tag_field="type", tag="list_conversations", omit_defaults=True):
    id: str | None = None


class ReadEvents(msgspec.Struct, frozen=True, tag_field="type", tag="read_events", omit_defaults=True):
    conversation: str
    id: str | None = None


class ReadConfig(msgspec.Struct, frozen=True, tag_field="type", tag="read_config", omit_defaults=True):
    id: str | None = None
    path: str | None = None


class Print(msgspec.Struct, frozen=True, tag_field="type", tag="print", omit_defaults=True):
    """Text ``jp`` writes to its stdout exactly as given."""

    text: str
    channel: str = "content"
    format: str = "plain"
    language: str | None = None


class Log(msgspec.Struct, frozen=True, tag_field="type", tag="log", omit_defaults=True):
    level: str
    message: str
    fields: dict[str, Any] = {}


class Described(msgspec.Struct, frozen=True, tag_field="type", tag="describe", omit_defaults=True):
    """The answer to ``describe``."""

    name: str
    version: str
    description: str
    command: list[str] = []
    author: str | None = None
    help: str | None = None
    repository: str | None = None


class Exit(msgspec.Struct, frozen=True, tag_field="type", tag="exit", omit_defaults=True):
    """The run is over; ``jp`` exits with ``code`` and shows ``reason`` when it is not 0."""

    code: int
    reason: str | None = None


ToHost = Ready | ListConversations | ReadEvents | ReadConfig | Print | Log | Described | Exit


class _Typed(msgspec.Struct):
    type: str


_typed = msgspec.json.Decoder(_Typed)
_from_host = msgspec.json.Decoder(FromHost)
_encoder = msgspec.json.Encoder()


def decode(line: bytes) -> FromHost | None:
    """The message on ``line``; ``None`` for a type this version does not know (JP may add some)."""
    try:
        kind = _typed.decode(line).type
    except msgspec.DecodeError as error:
        raise ProtocolError(f"not a protocol message ({error})") from None
    if kind not in {"describe", "init", "conversations", "events", "config", "error", "shutdown"}:
        return None
    try:
        return _from_host.decode(line)
    except msgspec.DecodeError as error:
        raise ProtocolError(f"a {kind} message that does not fit protocol {VERSION} ({error})") from None


def encode(message: ToHost) -> bytes:
    return _encoder.encode(message) + b"\n"


class LineReader:
    """The lines ``jp`` writes on a file descriptor, read unbuffered by Python's file objects, so a thread still
    waiting for one when the process ends holds no lock the interpreter's shutdown needs."""

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor
        self._buffer = b""

    def readline(self) -> bytes:
        """The next line with its newline; what is left at the end; ``b""`` at the end."""
        while b"\n" not in self._buffer:
            chunk = os.read(self._descriptor, 65536)
            if not chunk:
                line, self._buffer = self._buffer, b""
                return line
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line + b"\n"

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line


class HostLink:
    """The JSON lines to ``jp``: the only writer of the process's real stdout, closed by ``exit``."""

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor
        self._lock = threading.Lock()
        self._open = True

    @classmethod
    def take_stdout(cls) -> HostLink:
        """A link on a copy of descriptor 1, which from now on writes to stderr."""
        copy = os.dup(1)
        os.set_inheritable(copy, False)
        os.dup2(2, 1)
        return cls(copy)

    @property
    def is_open(self) -> bool:
        return self._open

    def close(self) -> None:
        """Nothing more is written (the answer to ``describe`` is the last line)."""
        with self._lock:
            self._open = False

    def send(self, message: ToHost) -> None:
        """Write ``message``; after ``exit`` (or once ``jp`` stopped reading) nothing more is written."""
        data = memoryview(encode(message))
        with self._lock:
            if not self._open:
                return
            if isinstance(message, Exit):
                self._open = False
            try:
                while data:
                    data = data[os.write(self._descriptor, data) :]
            except OSError:
                self._open = False
