"""Independent work over many conversations on several cores.

Used where each conversation's work needs nothing from the others: reading the conversations the
workspace cache or the ``find`` index lacks, and ``summarize --all`` with the offline summarizer. Each
worker takes a conversation's lock itself, as a single process would; results come back in the order of
the items and the caller writes the cache. Few items, or one job, run in this process: starting workers
costs more than they save (and a warm run never loads the pool, ``worker_pool.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from typing import TypeVar

from turnmark.shell.lazy import lazy_imports

with lazy_imports():
    from turnmark.shell.usecases import worker_pool

T = TypeVar("T")
R = TypeVar("R")
OnRead = Callable[[int, int], None]
"""``(done, total)`` after each conversation read, for a progress bar."""

WORTH_A_WORKER = 16
"""Fewer items per worker than this run in this process (a worker's start-up is about 0.2 s)."""


def no_progress(done: int, total: int) -> None:
    """An ``OnRead`` that shows nothing."""


def default_jobs() -> int:
    """One job per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def most_jobs() -> int:
    """The most processes ``--jobs`` may start: two per core."""
    return 2 * default_jobs()


def workers_for(items: int, jobs: int | None) -> int:
    """How many worker processes ``items`` deserve with ``jobs`` allowed (0: run in this process)."""
    allowed = default_jobs() if jobs is None else jobs
    useful = min(allowed, items // WORTH_A_WORKER)
    return useful if useful > 1 else 0


QUICK = 16
"""Items handed to a worker at a time when each takes about a millisecond (reading a conversation's facts or
its documents): the pool's own cost per hand-out is about a tenth of that."""


def each(work: Callable[[T], R], items: Sequence[T], jobs: int | None, chunk: int = 1) -> Generator[R, None, None]:
    """``work`` of every item, in order, spread over worker processes when that pays, ``chunk`` items a
    hand-out (``QUICK`` for quick items).

    ``work`` must be a module-level function (or a ``partial`` of one) and items and results picklable.
    Closing the generator hands out nothing more and waits for the few items already handed out; after a
    Ctrl-C those come back first, then ``KeyboardInterrupt``. A worker's exception is raised here (after the
    items before it), and a worker that died is ``WorkerDied``.
    """
    workers = workers_for(len(items), jobs)
    if workers == 0:
        yield from map(work, items)
    else:
        yield from worker_pool.results(work, items, workers, chunk)
