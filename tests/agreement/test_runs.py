"""Whole-workspace runs against one conversation at a time, and workers against one process.

``summarize --all`` must write what ``summarize CONV`` writes for each conversation, byte for byte;
``watch --once`` and ``watch``'s start-up pass what ``summarize --all`` writes; ``--jobs 2`` (with the
work really spread over two worker processes) what ``--jobs 1`` writes and prints. On the fixtures, the
corpus, and generated workspaces.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.agreement.cli import Cli, conversation_names, workers_forced
from tests.agreement.workspaces import (
    FIXTURE_WORKSPACES,
    ConversationShape,
    conversation_files,
    copy_corpus,
    copy_fixture,
    first_difference,
    workspace_shapes,
    write_workspace,
)
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.storage.workspace import require_workspace
from turnmark.shell.usecases.catchup_report import CatchupOptions
from turnmark.shell.usecases.watcher import Watcher, WatchOptions

OFFLINE = ("--model", "builtin/extractive")


def summarized_each(root: Path) -> dict[str, dict[str, bytes]]:
    cli = Cli(root)
    for name in conversation_names(cli):
        cli("summarize", name, *OFFLINE)
    return conversation_files(root)


def summarized_all(root: Path, *extra: str) -> dict[str, dict[str, bytes]]:
    Cli(root)(*extra, "summarize", "--all", *OFFLINE)
    return conversation_files(root)


def watched_once(root: Path, *extra: str) -> dict[str, dict[str, bytes]]:
    Cli(root)(*extra, "watch", "--once", "--settle", "0", *OFFLINE)
    return conversation_files(root)


def files_between_writes(root: Path) -> dict[str, dict[str, bytes]] | None:
    """``conversation_files`` while the watcher writes; ``None`` when a file went away as it was read."""
    try:
        return conversation_files(root)
    except FileNotFoundError:
        return None


def watched_from_start(root: Path, expected: dict[str, dict[str, bytes]]) -> dict[str, object]:
    """What ``watch``'s start-up pass has written once it wrote ``expected`` (or after 60 s)."""
    options = WatchOptions(settle=0, catchup=CatchupOptions(model="builtin/extractive"))
    watcher = Watcher([require_workspace(root)], options, sequential_ids("w"), lambda event: None)
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and files_between_writes(root) != expected:
            time.sleep(0.1)
    finally:
        watcher.stop()
        thread.join(timeout=10)
    return dict(conversation_files(root))


def agree_on_catch_up(make: Iterator[Path], *, start_up: bool = True) -> None:
    """Every way of catching up the workspace ``make`` copies writes the same files."""
    each = summarized_each(next(make))
    whole = summarized_all(next(make), "--jobs", "1")
    assert (difference := first_difference("summarize --all vs summarize CONV", whole, each)) is None, difference
    once = watched_once(next(make))
    assert (difference := first_difference("watch --once vs summarize --all", once, whole)) is None, difference
    if start_up:
        started = watched_from_start(next(make), whole)
        assert (difference := first_difference("watch's start-up vs summarize --all", started, whole)) is None, (
            difference
        )
    with workers_forced():
        two = summarized_all(next(make), "--jobs", "2")
        watched_two = watched_once(next(make), "--jobs", "2")
    assert (difference := first_difference("summarize --all --jobs 2 vs --jobs 1", two, whole)) is None, difference
    assert (difference := first_difference("watch --once --jobs 2 vs --jobs 1", watched_two, whole)) is None, difference


@contextmanager
def user_data_dir(path: Path) -> Iterator[Path]:
    before = os.environ.get("JP_USER_DATA_DIR")
    os.environ["JP_USER_DATA_DIR"] = str(path)
    try:
        yield path
    finally:
        if before is None:
            os.environ.pop("JP_USER_DATA_DIR", None)
        else:
            os.environ["JP_USER_DATA_DIR"] = before


@pytest.mark.parametrize("fixture", FIXTURE_WORKSPACES)
def test_every_way_of_catching_up_a_fixture_workspace_writes_the_same_files(
    fixture: str, tmp_path: Path, user_data: Path
) -> None:
    copies = (copy_fixture(fixture, tmp_path / f"copy{n}") for n in range(9))
    agree_on_catch_up(copies)


def test_every_way_of_catching_up_the_corpus_writes_the_same_files(tmp_path: Path, user_data: Path) -> None:
    copies = (copy_corpus(tmp_path / f"copy{n}") for n in range(9))
    agree_on_catch_up(copies)


def test_summarize_all_summarizes_every_legacy_corpus_conversation_that_summarize_conv_does(
    tmp_path: Path, user_data: Path
) -> None:
    root = copy_corpus(tmp_path / "corpus")
    before = conversation_files(root)
    legacy = sorted(name for name, files in before.items() if "base_config.json" not in files)
    assert legacy, "the corpus holds legacy conversations"
    after = summarized_all(root)
    assert [name for name in legacy if after[name] == before[name]] == []


@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=workspace_shapes)
def test_every_way_of_catching_up_a_generated_workspace_writes_the_same_files(
    shapes: list[ConversationShape],
) -> None:
    with tempfile.TemporaryDirectory() as scratch, user_data_dir(Path(scratch)) as data:

        def copies() -> Iterator[Path]:
            for n in range(9):
                os.environ["JP_USER_DATA_DIR"] = str(data / f"user-data{n}")
                yield write_workspace(data / f"copy{n}", shapes, data / f"user-data{n}")

        agree_on_catch_up(copies(), start_up=False)
