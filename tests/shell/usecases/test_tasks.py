"""The task handler: runs off the main thread, syncs in completion order, within a budget."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import threading
import time

from turnmark.shell.usecases.tasks import CancelToken, TaskHandler


class Recorder:
    def __init__(self, name: str, delay: float, log: list[str], fail: str = "") -> None:
        self.name, self.delay, self.log, self.fail = name, delay, log, fail
        self.main_thread_sync = False

    def run(self, token: CancelToken) -> None:
        deadline = time.monotonic() + self.delay
        while time.monotonic() < deadline:
            if token.cancelled:
                self.log.append(f"{self.name} cancelled")
                return
            time.sleep(0.01)
        if self.fail == "run":
            raise RuntimeError("model exploded")
        self.log.append(f"{self.name} ran")

    def sync(self) -> None:
        self.main_thread_sync = threading.current_thread() is threading.main_thread()
        if self.fail == "sync":
            raise RuntimeError("disk full")
        self.log.append(f"{self.name} synced")


def test_finished_tasks_sync_on_the_main_thread_in_completion_order() -> None:
    log: list[str] = []
    slow, fast = Recorder("slow", 0.3, log), Recorder("fast", 0.05, log)
    handler = TaskHandler(stream=io.StringIO())
    handler.spawn(slow)
    handler.spawn(fast)
    report = handler.drain()
    assert report.synced == ["fast", "slow"]
    assert log == ["fast ran", "slow ran", "fast synced", "slow synced"]
    assert slow.main_thread_sync
    assert fast.main_thread_sync
    assert not report.cancelled


def test_a_task_over_budget_is_cancelled_and_syncs_what_it_has_as_jp_does() -> None:
    log: list[str] = []
    handler = TaskHandler(soft_timeout=0.1, grace=1.0, stream=io.StringIO())
    handler.spawn(Recorder("slow", 5.0, log))
    report = handler.drain()
    assert report.cancelled
    assert report.abandoned == []
    assert log == ["slow cancelled", "slow synced"]


class Stubborn:
    name = "stubborn"

    def run(self, token: CancelToken) -> None:
        time.sleep(3)

    def sync(self) -> None:
        raise AssertionError("an abandoned task must never sync")


def test_a_task_that_ignores_cancellation_is_abandoned_after_the_grace() -> None:
    handler = TaskHandler(soft_timeout=0.1, grace=0.2, stream=io.StringIO())
    handler.spawn(Stubborn())
    report = handler.drain()
    assert report.abandoned == ["stubborn"]
    assert report.waited < 2.5


def test_failures_are_reported_and_never_raise() -> None:
    log: list[str] = []
    messages: list[str] = []
    handler = TaskHandler(stream=io.StringIO(), log=messages.append)
    handler.spawn(Recorder("a", 0.0, log, fail="run"))
    handler.spawn(Recorder("b", 0.0, log, fail="sync"))
    report = handler.drain()
    assert sorted(report.failed) == ["a", "b"]
    assert any("background task a failed: model exploded" in m for m in messages)
    assert any("background task b could not save its results: disk full" in m for m in messages)


def test_the_timer_appears_only_after_a_second_on_a_terminal() -> None:
    quick, waiting = io.StringIO(), io.StringIO()
    for stream, delay in ((quick, 0.2), (waiting, 1.4)):
        handler = TaskHandler(stream=stream, show_timer=True)
        handler.spawn(Recorder("t", delay, []))
        handler.drain()
    assert "Finishing background tasks" not in quick.getvalue()
    assert "\u23f1 Finishing background tasks\u2026 1." in waiting.getvalue()


def test_nothing_to_wait_for_returns_at_once() -> None:
    assert TaskHandler(stream=io.StringIO()).drain().waited == 0.0


DRAIN_UNDER_SIGNALS = """
import io, sys, time
from turnmark.shell.usecases.tasks import TaskHandler

class Task:
    name = "summary"
    def __init__(self, stop_on_cancel):
        self.stop_on_cancel = stop_on_cancel
    def run(self, token):
        print("running", flush=True)
        while not (self.stop_on_cancel and token.cancelled):
            time.sleep(0.01)
        print("saw the cancellation", flush=True)
    def sync(self):
        print("synced", flush=True)

handler = TaskHandler(soft_timeout=30.0, grace=30.0, stream=io.StringIO())
handler.spawn(Task(stop_on_cancel=sys.argv[1] == "cooperative"))
report = handler.drain()
print(f"drained cancelled={report.cancelled} synced={report.synced}", flush=True)
"""


def drain_in_a_process(kind: str, interrupts: int) -> tuple[int, list[str], float]:
    """Run a drain in a real process, press Ctrl-C ``interrupts`` times; exit status, output lines, seconds."""
    process = subprocess.Popen([sys.executable, "-c", DRAIN_UNDER_SIGNALS, kind], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    lines = [process.stdout.readline().strip()]
    time.sleep(0.3)
    started = time.monotonic()
    for _ in range(interrupts):
        process.send_signal(signal.SIGINT)
        time.sleep(0.3)
    try:
        rest, _ = process.communicate(timeout=15)
    finally:
        process.kill()
    return process.returncode, lines + rest.split(), time.monotonic() - started


def test_ctrl_c_during_the_drain_cancels_at_once_and_syncs_what_stopped() -> None:
    status, lines, seconds = drain_in_a_process("cooperative", 1)
    assert status == 0
    assert " ".join(lines) == "running saw the cancellation synced drained cancelled=True synced=['summary']"
    assert seconds < 10, "the 30 s budget was not waited out"


def test_a_second_ctrl_c_during_the_grace_exits_130_without_syncing() -> None:
    status, lines, seconds = drain_in_a_process("stubborn", 2)
    assert status == 130
    assert lines == ["running"]
    assert seconds < 10, "neither the budget nor the grace was waited out"
