"""The workspace cache, ``find``'s index and stored dry-run plans against no cache at all, and one process
against two.

Each view a user sees (``conversations``, ``check --all``, ``find``, ``summarize --all --dry-run``) is taken
cold (no cache file), warm (the cache the cold run left, stored plans included) and without any cache (the
database cannot be opened: the long way), then again after each kind of change the cache must notice; all
must agree. Then ``--jobs 1`` and ``--jobs 2`` (with the reading really spread over worker processes).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.agreement.cli import Cli, workers_forced
from tests.agreement.test_runs import user_data_dir
from tests.agreement.workspaces import (
    FIXTURE_WORKSPACES,
    OLD,
    WORDS,
    ConversationShape,
    conversation_folders,
    copy_corpus,
    copy_fixture,
    first_difference,
    workspace_shapes,
    write_hand_edited,
    write_workspace,
)
from tests.support.hand_edits import Drawn, hand_edited
from turnmark.core.search import freshness
from turnmark.shell.errors import FileFault
from turnmark.shell.storage import cache_db

View = dict[str, object]
DRY_RUN = ("summarize", "--all", "--dry-run", "--model", "builtin/extractive")


def views(cli: Cli, words: tuple[str, ...]) -> dict[str, View]:
    """What each command shows, per conversation (``find``: per word, the hits in order)."""
    listing = cli.json("conversations")["conversations"]
    checked = cli.json("check", "--all")["conversations"]
    planned = cli.json(*DRY_RUN)["conversations"]
    found: View = {}
    for word in words:
        hits = cli.json("find", word, "--limit", "500")["hits"]
        assert isinstance(hits, list)
        found[word] = [{**hit, "score": round(float(hit["score"]), 6)} for hit in hits]
    return {
        "conversations": {str(row["id"]): row for row in _rows(listing)},
        "check --all": {str(row["id"]): row for row in _rows(checked)},
        "summarize --all --dry-run": {str(row["conversation"]): row for row in _rows(planned)},
        "find": found,
    }


def _rows(value: object) -> list[dict[str, object]]:
    assert isinstance(value, list)
    return value


@contextmanager
def no_cache() -> Iterator[None]:
    """The cache database cannot be opened: every command takes the long way (and says so on stderr)."""
    real = cache_db.open_cache

    def refuse(*args: object, **kwargs: object) -> None:
        raise FileFault("no cache in this run (the agreement tests' long way)")

    cache_db.open_cache = refuse
    try:
        yield
    finally:
        cache_db.open_cache = real


def agree(what: str, cli: Cli, words: tuple[str, ...], warm: dict[str, View] | None = None) -> dict[str, View]:
    """The views with the cache as it is (``warm`` when given: what it showed before) equal the long way's."""
    shown = views(cli, words)
    with no_cache():
        long_way = views(cli, words)
    for view in long_way:
        difference = first_difference(f"{what}, {view}, cached vs no cache", shown[view], long_way[view])
        assert difference is None, difference
    again = views(cli, words)
    for view in long_way:
        difference = first_difference(f"{what}, {view}, warm vs no cache", again[view], long_way[view])
        assert difference is None, difference
    return long_way


def _events(root: Path, index: int) -> Path:
    folders = [folder for folder in conversation_folders(root) if (folder / "events.json").is_file()]
    return folders[index % len(folders)] / "events.json"


def append_a_turn(root: Path) -> None:
    events = _events(root, 0)
    entries = json.loads(events.read_bytes())
    ts = "2026-11-12 09:00:00.0"
    entries += [
        {"event_id": "n1turn0", "timestamp": ts, "type": "turn_start"},
        {"event_id": "n1req00", "timestamp": ts, "type": "chat_request", "content": "One more lock question"},
        {"event_id": "n1msg00", "request_id": "n1req00", "timestamp": ts, "type": "chat_response", "message": "Yes."},
    ]
    events.write_text(json.dumps(entries, indent=2))


def rewrite_in_place_keeping_size_and_mtime(root: Path) -> None:
    events = _events(root, 1)
    data = events.read_bytes()
    at = data.find(b'"content": "') + len(b'"content": "')
    changed = data[:at] + (b"X" if data[at : at + 1] != b"X" else b"Y") + data[at + 1 :]
    stat = events.stat()
    with open(events, "r+b") as handle:
        handle.write(changed)
    os.utime(events, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def rename_a_conversation(root: Path) -> None:
    folder = _events(root, 2).parent
    number, _, rest = folder.name.partition("-")
    folder.rename(folder.with_name(f"{int(number) + 5}-{rest or 'renamed'}"))


def delete_a_conversation(root: Path) -> None:
    shutil.rmtree(_events(root, 3).parent)


def copy_other_bytes_with_the_same_mtime(root: Path) -> None:
    events = _events(root, 0)
    copy = events.with_name("events.copy")
    data = events.read_bytes()
    copy.write_bytes(data.replace(b'"content": "', b'"content": "Z', 1))
    stat = events.stat()
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(copy, events)


def summarize_one(root: Path) -> None:
    Cli(root)("summarize", _events(root, 1).parent.name.split("-")[0], "--model", "builtin/extractive")


CHANGES: tuple[Callable[[Path], None], ...] = (
    append_a_turn,
    rewrite_in_place_keeping_size_and_mtime,
    copy_other_bytes_with_the_same_mtime,
    summarize_one,
    rename_a_conversation,
    delete_a_conversation,
)


def agree_through_changes(root: Path, words: tuple[str, ...]) -> None:
    cli = Cli(root)
    agree("cold", cli, words)
    for change in CHANGES:
        if not conversation_folders(root):
            break
        change(root)
        agree(f"after {change.__name__}", cli, words)


def agree_on_jobs(make: Callable[[str], Path], words: tuple[str, ...]) -> None:
    one = views(Cli(make("one"), "--jobs", "1"), words)
    with workers_forced():
        two = views(Cli(make("two"), "--jobs", "2"), words)
    for view in one:
        difference = first_difference(f"{view}, --jobs 2 vs --jobs 1", two[view], one[view])
        assert difference is None, difference


@pytest.fixture(autouse=True)
def trusted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Identities are trusted as soon as they are taken, so that the same-size, same-mtime changes below are
    caught only by what the cache must look at (the change time, the bytes), never by their youth."""
    monkeypatch.setattr(freshness, "RACY_NS", 0)


def settle(root: Path) -> Path:
    for path in root.rglob("*.json"):
        os.utime(path, (OLD, OLD))
    return root


@pytest.mark.parametrize("fixture", FIXTURE_WORKSPACES)
def test_a_fixture_workspace_shows_the_same_with_and_without_the_cache(
    fixture: str, tmp_path: Path, user_data: Path
) -> None:
    agree_through_changes(settle(copy_fixture(fixture, tmp_path / "ws")), ("lock", "build", "test"))


@pytest.mark.parametrize("fixture", FIXTURE_WORKSPACES)
def test_a_fixture_workspace_shows_the_same_on_one_process_and_two(
    fixture: str, tmp_path: Path, user_data: Path
) -> None:
    agree_on_jobs(lambda name: settle(copy_fixture(fixture, tmp_path / name)), ("lock", "build"))


def test_the_corpus_shows_the_same_with_and_without_the_cache_and_on_two_processes(
    tmp_path: Path, user_data: Path
) -> None:
    root = copy_corpus(tmp_path / "corpus")
    words = ("prefill", "lock", "approaches")
    agree_through_changes(settle(root), words)

    agree_on_jobs(lambda name: settle(copy_corpus(tmp_path / name)), words)


@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=workspace_shapes)
def test_a_generated_workspace_shows_the_same_with_and_without_the_cache_and_on_two_processes(
    shapes: list[ConversationShape],
) -> None:
    with tempfile.TemporaryDirectory() as scratch, user_data_dir(Path(scratch) / "user-data") as data:
        words = WORDS[:3]
        agree_through_changes(write_workspace(Path(scratch) / "ws", shapes, data), words)
        agree_on_jobs(lambda name: write_workspace(Path(scratch) / name, shapes, data / name), words)


@pytest.mark.parametrize("listings", [False, True])
def test_a_stored_plan_is_shown_only_while_it_is_the_fresh_plan(
    tmp_path: Path, user_data: Path, listings: bool
) -> None:
    """The second dry run reads plans from the cache; after each change they are the plans made afresh (with
    ``listings``, a listing first: its rows hold no hash of the files it read, so no plan is looked up by them)."""
    root = settle(copy_fixture("workspace", tmp_path / "ws"))
    cli = Cli(root)
    if listings:
        cli.json("conversations")
        cli.json(*DRY_RUN)
    else:
        first = cli.json(*DRY_RUN)
        assert cli.json(*DRY_RUN) == first
    for change in CHANGES[:4]:
        change(root)
        if listings:
            cli.json("conversations")
        stored = cli.json(*DRY_RUN)
        with no_cache():
            fresh = cli.json(*DRY_RUN)
        assert (difference := first_difference(f"after {change.__name__}", stored, fresh)) is None, difference


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(drawn=st.lists(hand_edited(), min_size=1, max_size=4))
def test_hand_edited_conversations_show_the_same_with_and_without_the_cache(drawn: list[Drawn]) -> None:
    """Odd fields (issue 39) through every cached view: cold, warm and the long way agree, and every change the
    cache must notice is noticed."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "ws"
        write_hand_edited(root, drawn)
        agree_through_changes(settle(root), ("fix", "thing"))
