"""The progress bar of long commands: on stderr, shown only on a terminal (rich is loaded when a bar is made)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from turnmark.shell.lazy import lazy_imports
from turnmark.shell.usecases import parallel

with lazy_imports():
    from rich import console as rich_console
    from rich import progress as rich_progress

if TYPE_CHECKING:
    from rich.progress import Progress


def progress_bar() -> Progress:
    """A bar per task (description, bar, done/total) that disappears when done."""
    console = rich_console.Console(stderr=True)
    return rich_progress.Progress(
        rich_progress.TextColumn("{task.description}"),
        rich_progress.BarColumn(),
        rich_progress.MofNCompleteColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )


WORTH_A_BAR = 50
"""Fewer conversations to read than this show no bar (they take a moment)."""


@contextmanager
def reading(description: str) -> Iterator[parallel.OnRead]:
    """A ``(done, total)`` callback for reading many conversations: a bar appears on a terminal once there are
    at least ``WORTH_A_BAR`` to read, and disappears at the end."""
    shown: list[Progress] = []

    def on_read(done: int, total: int) -> None:
        if not shown:
            if total < WORTH_A_BAR or done:
                return
            bar = progress_bar()
            bar.start()
            bar.add_task(description, total=total)
            shown.append(bar)
        shown[0].update(shown[0].task_ids[0], completed=done, total=total)

    try:
        yield on_read
    finally:
        for bar in shown:
            bar.stop()
