"""Independent work over many conversations on several cores: a pool of worker processes.

Used where each conversation's work needs nothing from the others: reading the conversations a cold
workspace cache lacks, and ``summarize --all`` with the offline summarizer. Workers are started fresh
(``spawn``: a watcher's threads are never forked), each takes its conversation's lock itself as a
single process would, and results come back in the order of the items; the caller writes the cache.
Few items, or one job, run in this process: starting workers costs more than they save.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

WORTH_A_WORKER = 16
"""Fewer items per worker than this run in this process (a worker's start-up is about 0.2 s)."""


def default_jobs() -> int:
    """One job per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def workers_for(items: int, jobs: int | None) -> int:
    """How many worker processes ``items`` deserve with ``jobs`` allowed (0: run in this process)."""
    allowed = default_jobs() if jobs is None else jobs
    useful = min(allowed, items // WORTH_A_WORKER)
    return useful if useful > 1 else 0


def each(work: Callable[[T], R], items: Sequence[T], jobs: int | None) -> Generator[R, None, None]:
    """``work`` of every item, in order, spread over worker processes when that pays.

    ``work`` must be a module-level function and items and results picklable. Closing the iterator
    early (or Ctrl-C) cancels what has not started; a worker's exception is raised here.
    """
    workers = workers_for(len(items), jobs)
    if workers == 0:
        yield from map(work, items)
        return
    chunk = max(1, min(64, len(items) // (workers * 8)))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            yield from pool.map(work, items, chunksize=chunk)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
