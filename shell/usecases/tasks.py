"""Background tasks with a shutdown budget (RFD 107 / draft D40, as JP's ``TaskHandler`` does it).

A task's ``run`` works off the main thread and watches a cancellation
token; its ``sync`` runs on the main thread after the command released its
lock. At exit the handler waits up to 10 s for the runs, then cancels them
and gives them 2 s more, then abandons what is left; then it syncs every
finished task in the order they finished. On a terminal, after 1 s of
waiting, stderr shows ``⏱ Finishing background tasks… N.Ns``. Ctrl-C during
the wait cancels at once (``⏱ Cancelling background tasks…``); a second
Ctrl-C exits. A task's failure is reported and never fails the command.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TextIO

from turnmark.shell.clock import monotonic
from turnmark.shell.interrupts import NotedInterrupts, interrupts_noted
from turnmark.shell.output import chrome

SOFT_TIMEOUT = 10.0
GRACE = 2.0
TIMER_DELAY = 1.0
TIMER_INTERVAL = 0.1


class CancelToken:
    """A flag a task's ``run`` checks; set when the handler gives up waiting."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


class Task(Protocol):
    name: str

    def run(self, token: CancelToken) -> None:
        """The slow part, off the main thread; results are kept on the task."""

    def sync(self) -> None:
        """Commit the results, on the main thread, after the command's lock was released."""


@dataclass
class DrainReport:
    """What the drain did: tasks synced, failed, and abandoned (still running after the grace)."""

    synced: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)
    cancelled: bool = False
    waited: float = 0.0


class TaskHandler:
    def __init__(
        self,
        soft_timeout: float = SOFT_TIMEOUT,
        grace: float = GRACE,
        stream: TextIO | None = None,
        show_timer: bool | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.soft_timeout = soft_timeout
        self.grace = grace
        self.token = CancelToken()
        self._stream = stream or sys.stderr
        self._show_timer = self._stream.isatty() if show_timer is None else show_timer
        self._log = log or (lambda message: chrome(message, self._stream))
        self._done: queue.Queue[tuple[Task, BaseException | None]] = queue.Queue()
        self._running: dict[int, Task] = {}
        self._interrupts = NotedInterrupts()
        """Ctrl-C while draining, acted on between two waits for a task (the main thread's only): raised inside
        the queue's wait, it could leave the queue's lock released twice."""

    def spawn(self, task: Task) -> None:
        """Start ``task.run`` now, on its own daemon thread (abandoned threads never block exit)."""

        def work() -> None:
            try:
                task.run(self.token)
            except BaseException as error:
                self._done.put((task, error))
            else:
                self._done.put((task, None))

        thread = threading.Thread(target=work, name=f"turnmark-{task.name}", daemon=True)
        self._running[id(task)] = task
        thread.start()

    def _timer(self, text: str, seconds: float) -> None:
        if self._show_timer:
            self._stream.write(f"\r\x1b[K⏱ {text} {seconds:.1f}s")
            self._stream.flush()

    def _collect(
        self, deadline: float, started: float, finished: list[Task], report: DrainReport, *, countdown: bool
    ) -> None:
        label = "Cancelling background tasks…" if countdown else "Finishing background tasks…"
        while self._running and monotonic() < deadline:
            if self._interrupts.take():
                raise KeyboardInterrupt
            try:
                task, error = self._done.get(timeout=TIMER_INTERVAL)
            except queue.Empty:
                elapsed = monotonic() - started
                if countdown or elapsed >= TIMER_DELAY:
                    self._timer(label, max(deadline - monotonic(), 0.0) if countdown else elapsed)
                continue
            self._running.pop(id(task), None)
            if error is None:
                finished.append(task)
            else:
                report.failed.append(task.name)
                self._log(f"warning: background task {task.name} failed: {error}")

    def drain(self) -> DrainReport:
        """Wait within the budget, cancel, sync what finished; never raises for a task."""
        report = DrainReport()
        if not self._running:
            return report
        with interrupts_noted() as self._interrupts:
            return self._drain(report)

    def _drain(self, report: DrainReport) -> DrainReport:
        started = monotonic()
        finished: list[Task] = []
        try:
            self._collect(started + self.soft_timeout, started, finished, report, countdown=False)
        except KeyboardInterrupt:
            report.cancelled = True
        if self._running:
            self.token.cancel()
            report.cancelled = True
            grace_started = monotonic()
            try:
                self._collect(grace_started + self.grace, grace_started, finished, report, countdown=True)
            except KeyboardInterrupt:
                self._clear()
                raise SystemExit(130) from None
        self._clear()
        report.abandoned = [task.name for task in self._running.values()]
        for name in report.abandoned:
            self._log(f"warning: background task {name} did not stop in time; its results are dropped")
        for task in finished:
            try:
                task.sync()
                report.synced.append(task.name)
            except Exception as error:
                report.failed.append(task.name)
                self._log(f"warning: background task {task.name} could not save its results: {error}")
        report.waited = monotonic() - started
        return report

    def _clear(self) -> None:
        if self._show_timer:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
