"""Ctrl-C held for a moment: SIGINT blocked in this thread, and in every process it starts meanwhile (a signal
mask survives fork and exec), then delivered when the hold ends."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_held() -> Iterator[None]:
    """SIGINT blocked until the block ends (one that came meanwhile is raised then)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
