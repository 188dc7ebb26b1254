"""The worker processes behind ``parallel.each``: loaded only when a run has enough work for them.

Workers are forked where this process runs no other thread (they start at once, with the modules it has
loaded), else started fresh (``spawn``: a thread's held locks, a watcher's, are never copied into a worker).
They ignore Ctrl-C from their first instruction and take SIGTERM and SIGHUP as a fresh process does: they
are started with SIGINT blocked (a signal mask survives fork and exec, and Python never unblocks it), so a
Ctrl-C to the process group while they start cannot kill one half-started. The parent notes it (a SIGINT that
came while it was blocked is delivered when the workers are up; it is never raised inside the pool's own
calls), hands out no more work, waits for the few items already handed out (at most ``AHEAD`` hand-outs per
worker: 4 items, or 4 chunks of a caller's ``chunk``), each of which a worker finishes whole, as a single
process would, gives their results back, and raises it once the pool is gone. After an error too, those items
are waited for, never cancelled: on CPython before 3.11.3 (Debian 12's 3.11.2) a cancelled item can leave the
pool's shutdown waiting for ever (python/cpython#94440).
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import traceback
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import resource_tracker
from typing import TypeVar

from turnmark.shell.errors import WorkerDied
from turnmark.shell.interrupts import interrupts_held

T = TypeVar("T")
R = TypeVar("R")

AHEAD = 4
"""Hand-outs (an item, or ``chunk`` items) given each worker ahead of the one being waited for (what still runs
after Ctrl-C)."""


def start_method() -> str:
    """``fork`` while only this thread runs (where the system forks), else ``spawn``."""
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


def _worker_signals() -> None:
    """A worker's signals: Ctrl-C ignored, the others as a fresh process has them (a forked worker would
    otherwise keep the handlers of this process: a SIGTERM from the pool must end it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for other in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(other, signal.SIG_DFL)


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT blocked in this thread (and so in every process it starts) until the block ends."""
    resource_tracker.ensure_running()  # started now: it unblocks SIGINT when it starts
    with interrupts_held():
        yield


@contextmanager
def _interrupts_noted(noted: list[int]) -> Iterator[None]:
    """Ctrl-C appended to ``noted`` instead of raised, while the pool runs: raised inside the pool's own calls (a
    submit, its shutdown) it can leave the shutdown waiting for ever. Only the main thread hears signals; in
    another ``noted`` stays empty."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _each_of(work: Callable[[T], R], items: Sequence[T]) -> tuple[list[R], Exception | None]:
    """``work`` of each item up to the first that fails, and that failure (its traceback as a note: a worker's
    traceback does not travel): the items done before it still come back."""
    done: list[R] = []
    for item in items:
        try:
            done.append(work(item))
        except Exception as error:
            error.add_note(traceback.format_exc())
            return done, error
    return done, None


def results(work: Callable[[T], R], items: Sequence[T], workers: int, chunk: int = 1) -> Generator[R, None, None]:
    """``work`` of every item on ``workers`` processes, in the order of the items, handed out ``chunk`` items at
    a time (for quick items: the pool's own cost per hand-out is about 0.1 ms). After a Ctrl-C nothing more is
    handed out; the items already handed out are finished and come back (their work is done: a catch-up's files
    are written), then it is raised as ``KeyboardInterrupt`` once the pool is gone."""
    context = multiprocessing.get_context(start_method())
    noted: list[int] = []
    try:
        with (
            _interrupts_noted(noted),
            ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_signals) as pool,
        ):
            waiting: deque[Future[tuple[list[R], Exception | None]]] = deque()
            rest: Iterator[Sequence[T]] = (items[start : start + chunk] for start in range(0, len(items), chunk))

            def hand_out(count: int) -> None:
                for _, some in zip(range(count), rest, strict=False):
                    waiting.append(pool.submit(_each_of, work, some))

            try:
                with _interrupts_held():  # the first submission starts every worker
                    hand_out(workers * AHEAD)
                while waiting:
                    done, failed = waiting.popleft().result()
                    if not noted:
                        hand_out(1)
                    yield from done
                    if failed is not None:
                        raise failed
            except BrokenProcessPool as error:
                raise WorkerDied(
                    f"a worker process ended before its conversation was done ({error}); "
                    "run again, with --jobs 1 if it keeps happening"
                ) from None
            finally:
                wait(waiting)
    finally:
        if noted:
            raise KeyboardInterrupt  # a Ctrl-C outranks what ended the run: an error, a close
