"""One ordered stream of chunks made on several cores: blocks of it by forked children, written in order here.

``show`` of a long conversation makes one chunk per turn, each from that turn alone; on a machine with
cores to spare, every other block of turns (every third with two children…) is made by a child forked from
this process, which has the conversation read already. Each child sends its chunks back through a pipe as
it makes them, and this process writes them in their place, so the output is the same bytes as made here
alone. Whatever goes wrong in a child (an error, a signal, a pipe cut) only ends it: this process makes
what the child did not send itself, so an error is raised here, after the chunks before it, exactly where
making them here alone would raise it (this process makes its own blocks at the depth of stack it would make
them alone: nesting too deep for one is too deep for both). Children ignore Ctrl-C (this process stops them),
keep no descriptor but their pipe (stdin, stdout and stderr are /dev/null), and leave by ``os._exit`` (no
buffer of this process is flushed twice); when the stream is closed early (``| head``, a pager quit), they
are killed and reaped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import struct
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from turnmark.shell.interrupts import interrupts_held

Make = Callable[[int, int], Iterator[str]]
"""``make(a, b)``: the chunks of items ``a`` to ``b - 1``, one chunk per item, in order."""

_LENGTH = struct.Struct("<Q")
PIPE_BYTES = 1 << 20
"""How much a child may have sent ahead of this process (the pipe's size, where the system allows it)."""


def can_fork() -> bool:
    """This process may fork children that make chunks: the system forks, and no other thread runs here (a
    thread's held lock would be copied held)."""
    return hasattr(os, "fork") and threading.active_count() == 1


def forked_chunks(make: Make, count: int, block: int, children: int) -> Generator[str, None, None]:
    """``make``'s chunks of items ``0`` to ``count - 1``, in order, blocks of ``block`` items made in turn by
    this process and ``children`` forked ones (block ``k`` by process ``k % (children + 1)``, 0 being this)."""
    bounds = [(start, min(start + block, count)) for start in range(0, count, block)]
    if children < 1 or len(bounds) < 2 or not can_fork():
        yield from make(0, count)
        return
    processes = min(children, len(bounds) - 1) + 1
    helpers: list[_Child] = []
    try:
        for number in range(1, processes):
            with interrupts_held():  # a child is never started without being kept
                helper = _fork(make, bounds[number::processes])
                if helper is not None:
                    helpers.append(helper)
            if helper is None:
                break
        for index, (start, stop) in enumerate(bounds):
            number = index % processes
            helper = helpers[number - 1] if 0 < number <= len(helpers) else None
            got = start
            if helper is not None:
                for chunk in helper.chunks(stop - start):
                    yield chunk
                    got += 1
            if got < stop:
                yield from make(got, stop)
    finally:
        with interrupts_held():  # nor left unreaped by a second Ctrl-C while the others stop
            for helper in helpers:
                helper.stop()


@dataclass
class _Child:
    pid: int
    pipe: BinaryIO
    alive: bool = True

    def chunks(self, wanted: int) -> Iterator[str]:
        """Up to ``wanted`` chunks from the child, fewer once it has ended (it sends nothing more after)."""
        for _ in range(wanted):
            if not self.alive:
                return
            head = self.pipe.read(_LENGTH.size)
            size = _LENGTH.unpack(head)[0] if len(head) == _LENGTH.size else -1
            data = self.pipe.read(size) if size >= 0 else b""
            if size < 0 or len(data) != size:
                self.alive = False
                return
            yield data.decode("utf-8", "surrogatepass")

    def stop(self) -> None:
        """Kill the child (when it is still making chunks nobody will read) and reap it."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        self.pipe.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _fork(make: Make, blocks: list[tuple[int, int]]) -> _Child | None:
    """A child making ``blocks``; ``None`` when the system cannot start one (this process makes them)."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    with contextlib.suppress(OSError, AttributeError):
        import fcntl

        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # pragma: no cover - the child; its chunks are checked by the parent's output
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            _alone(write_end)
            _send(make, blocks, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    return _Child(pid, os.fdopen(read_end, "rb"))


def _alone(pipe: int) -> None:
    """In the child: no descriptor but its pipe, and /dev/null for stdin, stdout and stderr. What reads this
    process's output, or another child's pipe, sees its end when this process and that child are gone, whatever
    this child is doing."""
    null = os.open(os.devnull, os.O_RDWR)
    for standard in (0, 1, 2):
        os.dup2(null, standard)
    os.closerange(3, pipe)
    os.closerange(pipe + 1, max(pipe + 1, os.sysconf("SC_OPEN_MAX")))


def _send(make: Make, blocks: list[tuple[int, int]], pipe: int) -> None:
    """In the child: each block's chunks, framed by their length; the first error ends it."""
    with contextlib.suppress(BaseException):
        for start, stop in blocks:
            for chunk in make(start, stop):
                data = chunk.encode("utf-8", "surrogatepass")
                _write_all(pipe, _LENGTH.pack(len(data)))
                _write_all(pipe, data)


def _write_all(pipe: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(pipe, view) :]
