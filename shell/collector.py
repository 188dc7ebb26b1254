"""Python's cycle collector, paused while turnmark builds or walks a conversation.

Loading, planning, labelling and saving a conversation allocate millions of objects that hold no
reference cycles; each full collection the collector makes meanwhile walks every one of them, so a
conversation of 10x the turns cost 25x the time with it and 12x without. Pauses are counted across
threads: the first turns the collector off, the last one to end restores it as it was. A forked child (a
worker) starts with no pause and the collector on, as a fresh process does.
"""

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


class _Collector:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pauses = 0
        self._was_enabled = False

    def forked(self) -> None:
        """In a forked child: no pause (the parent's do not go on here), the collector on."""
        self._lock = threading.Lock()
        self._pauses = 0
        gc.enable()

    @contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            if self._pauses == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._pauses += 1
        try:
            yield
        finally:
            with self._lock:
                self._pauses -= 1
                if self._pauses == 0 and self._was_enabled:
                    gc.enable()


_COLLECTOR = _Collector()
os.register_at_fork(after_in_child=_COLLECTOR.forked)


def collector_paused() -> AbstractContextManager[None]:
    """The cycle collector off inside (for work that makes no cycles: not a network call, which does)."""
    return _COLLECTOR.paused()


def promote() -> None:
    """Move every object alive now to the oldest generation: what a load made while the collector was
    paused would otherwise be walked by the next young collections, all of it, once per generation."""
    gc.freeze()
    gc.unfreeze()
