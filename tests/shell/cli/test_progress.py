"""The bar shown while many conversations are read: only when there are many, closed at the end."""

from __future__ import annotations

import pytest

from turnmark.shell.cli import progress


class Bar:
    def __init__(self) -> None:
        self.task_ids: list[int] = []
        self.shown: list[tuple[int, int]] = []
        self.running = False

    def start(self) -> None:
        self.running = True

    def stop(self) -> None:
        self.running = False

    def add_task(self, description: str, total: int) -> int:
        self.task_ids.append(len(self.task_ids))
        return self.task_ids[-1]

    def update(self, task: int, completed: int, total: int) -> None:
        self.shown.append((completed, total))


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> list[Bar]:
    made: list[Bar] = []

    def make() -> Bar:
        made.append(Bar())
        return made[-1]

    monkeypatch.setattr(progress, "progress_bar", make)
    return made


def test_a_few_conversations_to_read_show_no_bar(bars: list[Bar]) -> None:
    with progress.reading("reading conversations") as on_read:
        for done in range(progress.WORTH_A_BAR):
            on_read(done, progress.WORTH_A_BAR - 1)
    assert bars == []


def test_many_show_one_bar_that_counts_and_goes_away(bars: list[Bar]) -> None:
    total = progress.WORTH_A_BAR
    with progress.reading("reading conversations") as on_read:
        for done in range(total + 1):
            on_read(done, total)
        assert [bar.running for bar in bars] == [True]
    assert len(bars) == 1
    assert bars[0].shown == [(done, total) for done in range(total + 1)]
    assert not bars[0].running
