"""The worker processes behind ``parallel.each``: loaded only when a run has enough work for them.

Workers are started fresh (``spawn``: a watcher's threads are never forked) and ignore Ctrl-C from their
first instruction: they are started with SIGINT blocked (a signal mask survives fork and exec, and Python
never unblocks it), so a Ctrl-C to the process group while they start cannot kill one half-started. The
parent hears it (a SIGINT that came while it was blocked is delivered when the workers are up), hands out no
more work and waits for the few items already handed out (at most ``AHEAD`` per worker), each of which a
worker finishes whole, as a single process would. So does an error. Those items are waited for, never
cancelled: on CPython before 3.11.3 (Debian 12's 3.11.2) a cancelled item can leave the pool's shutdown
waiting for ever (python/cpython#94440).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import resource_tracker
from typing import TypeVar

from turnmark.shell.errors import WorkerDied

T = TypeVar("T")
R = TypeVar("R")

AHEAD = 4
"""Items handed to each worker ahead of the one being waited for (what still runs after Ctrl-C)."""


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT blocked in this thread (and so in every process it starts) until the block ends."""
    resource_tracker.ensure_running()  # started now: it unblocks SIGINT when it starts
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def results(work: Callable[[T], R], items: Sequence[T], workers: int) -> Generator[R, None, None]:
    """``work`` of every item on ``workers`` processes, in the order of the items."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_ignore_interrupts) as pool:
        waiting: deque[Future[R]] = deque()
        rest: Iterator[T] = iter(items)

        def hand_out(count: int) -> None:
            for _, item in zip(range(count), rest, strict=False):
                waiting.append(pool.submit(work, item))

        try:
            with _interrupts_held():  # the first submission starts every worker
                hand_out(workers * AHEAD)
            while waiting:
                done = waiting.popleft().result()
                hand_out(1)
                yield done
        except BrokenProcessPool as error:
            raise WorkerDied(
                f"a worker process ended before its conversation was done ({error}); "
                "run again, with --jobs 1 if it keeps happening"
            ) from None
        finally:
            wait(waiting)
