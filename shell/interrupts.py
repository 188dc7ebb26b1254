"""Ctrl-C held for a moment, or noted instead of raised.

``interrupts_held``: SIGINT blocked in this thread, and in every process it starts meanwhile (a signal mask
survives fork and exec), then delivered when the hold ends. ``interrupts_noted``: SIGINT handled by noting it,
so that nothing is raised where it cannot be caught or would leave work half done; the code acts on it where it
chooses, or has the next one raised (``NotedInterrupts.raising``) where raising is what stops the work.
"""

from __future__ import annotations

import signal
import threading
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


class NotedInterrupts:
    """What ``interrupts_noted`` saw: ``seen`` once Ctrl-C came; while ``raising`` is set, the next one is also
    raised as ``KeyboardInterrupt`` (and ``raising`` cleared, so that a second one is only noted)."""

    def __init__(self) -> None:
        self.seen = False
        self.raising = False

    def take(self) -> bool:
        """Whether Ctrl-C came since the last ``take``."""
        seen, self.seen = self.seen, False
        return seen

    def _note(self, signum: int, frame: object) -> None:
        self.seen = True
        if self.raising:
            self.raising = False
            raise KeyboardInterrupt


@contextmanager
def interrupts_noted() -> Iterator[NotedInterrupts]:
    """SIGINT noted, not raised, until the block ends (in the main thread, the only one Python gives signals to;
    elsewhere nothing changes and nothing is noted)."""
    noted = NotedInterrupts()
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return
    previous = signal.signal(signal.SIGINT, noted._note)
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, previous)
