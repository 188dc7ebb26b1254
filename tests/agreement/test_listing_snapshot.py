"""The listing's snapshot against the long way (issue 40): ``conversations`` prints the same bytes, in text and in
JSON, on stdout and stderr, with the same exit, whether every row comes from the snapshot, some do (after each
kind of change a hand edit, JP or another turnmark makes), or there is no cache at all; on every fixture
workspace, the corpus, generated workspaces (with JP's user-local copies) and hand-edited conversations."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from tests.agreement.cli import Cli
from tests.agreement.test_cache import CHANGES, _events, no_cache, settle
from tests.agreement.test_runs import user_data_dir
from tests.agreement.workspaces import (
    FIXTURE_WORKSPACES,
    OLD,
    ConversationShape,
    conversation_folders,
    copy_corpus,
    copy_fixture,
    workspace_shapes,
    write_hand_edited,
    write_workspace,
)
from tests.support.hand_edits import Drawn, hand_edited
from turnmark.core.search import freshness
from turnmark.shell.storage import workspace_cache
from turnmark.shell.storage.cache_db import cache_path
from turnmark.shell.storage.listing_snapshot import Kept
from turnmark.shell.storage.workspace import require_workspace

Printed = tuple[tuple[int, str, str], tuple[int, str, str]]


def printed(cli: Cli) -> Printed:
    """``conversations`` in text and in JSON: exit, stdout, stderr (its notes left out: the long way says that
    it has no cache)."""
    shown = []
    for options in ((), ("--format", "json")):
        code, out = cli(*options, "conversations")
        errors = "".join(line for line in cli.stderr.splitlines(keepends=True) if not line.startswith("note: "))
        shown.append((code, out, errors))
    return shown[0], shown[1]


@contextmanager
def rows_read() -> Iterator[list[str]]:
    """How each listing in the block fetched the cache's rows: ``all``, or ``some`` (one by one)."""
    fetches: list[str] = []
    real = workspace_cache.stored

    def counted(connection: sqlite3.Connection, only: str | None = None, **kwargs: object) -> object:
        if only is None:
            fetches.append("some" if kwargs.get("among") is not None else "all")
        return real(connection, only, **kwargs)  # type: ignore[arg-type]

    workspace_cache.stored = counted  # type: ignore[assignment]
    try:
        yield fetches
    finally:
        workspace_cache.stored = real


def agree(what: str, cli: Cli, *, unseen: bool = False) -> None:
    """The listing as the cache has it, then again (every row from the snapshot, no row fetched; with ``unseen``,
    a file that cannot be looked at keeps its conversation's row looked up), equals the long way's."""
    with no_cache():
        long_way = printed(cli)
    assert printed(cli) == long_way, f"{what}: with the cache, not as the long way"
    with rows_read() as fetches:
        assert printed(cli) == long_way, f"{what}: from the snapshot, not as the long way"
    if unseen:
        assert fetches == ["some", "some"], f"{what}: the conversation that cannot be looked at is looked up"
    else:
        assert fetches == [], f"{what}: the second listing fetched rows ({fetches}) instead of using the snapshot"


def _database(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(cache_path(require_workspace(root)), isolation_level=None)


def make_one_unreadable(root: Path) -> None:
    events = _events(root, 0)
    events.write_text("[{")
    os.utime(events, (OLD, OLD))


def break_a_metadata_file(root: Path) -> None:
    metadata = _events(root, 1).parent / "metadata.json"
    metadata.write_text("{")
    os.utime(metadata, (OLD, OLD))


def retitle_one(root: Path) -> None:
    metadata = _events(root, 2).parent / "metadata.json"
    metadata.write_text(json.dumps({"title": "A new title", "last_activated_at": "2027-01-01 00:00:00.0"}))


def touch_without_a_change(root: Path) -> None:
    os.utime(_events(root, 3), (OLD + 60, OLD + 60))


def add_a_conversation(root: Path) -> None:
    source = _events(root, 0).parent
    shutil.copytree(source, source.with_name(f"{int(source.name.split('-')[0]) + 3}-added"))


def add_a_base_config(root: Path) -> None:
    (_events(root, 1).parent / "base_config.json").write_text('{"assistant": {"name": "X"}}')


def forget_the_rows(root: Path) -> None:
    with _database(root) as connection:
        connection.execute("DELETE FROM conversations")


def garble_the_snapshot(root: Path) -> None:
    with _database(root) as connection:
        connection.execute("UPDATE listing SET rows = x'92c0', text = NULL")


def snapshot_of_another_layout(root: Path) -> None:
    with _database(root) as connection:
        connection.execute("UPDATE listing SET layout = 'another'")


def rows_of_another_shape(root: Path) -> None:
    """A snapshot whose rows decode but whose values are not the layout's (a crafted file)."""
    with _database(root) as connection:
        (blob,) = connection.execute("SELECT rows FROM listing").fetchone()
        kept = msgspec.msgpack.decode(blob, type=list[Kept])
        cut = [Kept(item.folder, item.look, replace(item.row, values=item.row.values[:5])) for item in kept]
        connection.execute("UPDATE listing SET rows = ?, text = NULL", (msgspec.msgpack.encode(cut),))


def loop_a_link_where_a_file_is_absent(root: Path) -> bool:
    """A link to itself where a legacy conversation has no ``base_config.json``: not absent, unreadable (``True``:
    such a conversation was found)."""
    for folder in conversation_folders(root):
        if (folder / "events.json").is_file() and not os.path.lexists(folder / "base_config.json"):
            (folder / "base_config.json").symlink_to("base_config.json")
            return True
    return False


MORE_CHANGES: tuple[Callable[[Path], object], ...] = (
    retitle_one,
    touch_without_a_change,
    add_a_conversation,
    add_a_base_config,
    forget_the_rows,
    garble_the_snapshot,
    rows_of_another_shape,
    snapshot_of_another_layout,
    make_one_unreadable,
    break_a_metadata_file,
    loop_a_link_where_a_file_is_absent,
)


def agree_through_changes(root: Path) -> None:
    cli = Cli(root)
    agree("cold", cli)
    for change in (*CHANGES, *MORE_CHANGES):
        if not conversation_folders(root):
            break
        unseen = change(root)
        agree(f"after {change.__name__}", cli, unseen=unseen is True)


@pytest.fixture(autouse=True)
def trusted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file is trusted by its identity as soon as it is looked at, so that the second listing after a change
    takes every row from the snapshot (a young file's row holds for no look: ``test_a_young_file``)."""
    monkeypatch.setattr(freshness, "RACY_NS", 0)


@pytest.mark.parametrize("fixture", FIXTURE_WORKSPACES)
def test_a_fixture_workspace_lists_the_same_from_the_snapshot(fixture: str, tmp_path: Path, user_data: Path) -> None:
    agree_through_changes(settle(copy_fixture(fixture, tmp_path / "ws")))


def test_the_corpus_lists_the_same_from_the_snapshot(tmp_path: Path, user_data: Path) -> None:
    agree_through_changes(settle(copy_corpus(tmp_path / "corpus")))


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(shapes=workspace_shapes)
def test_a_generated_workspace_lists_the_same_from_the_snapshot(shapes: list[ConversationShape]) -> None:
    with tempfile.TemporaryDirectory() as scratch, user_data_dir(Path(scratch) / "user-data") as data:
        agree_through_changes(write_workspace(Path(scratch) / "ws", shapes, data))


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(drawn=st.lists(hand_edited(), min_size=1, max_size=4))
def test_hand_edited_conversations_list_the_same_from_the_snapshot(drawn: list[Drawn]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "ws"
        write_hand_edited(root, drawn)
        agree_through_changes(settle(root))


def test_after_one_change_only_that_conversation_is_looked_up(tmp_path: Path, user_data: Path) -> None:
    root = settle(copy_corpus(tmp_path / "corpus"))
    cli = Cli(root)
    printed(cli)
    retitle_one(root)
    with rows_read() as fetches:
        after = printed(cli)
    assert fetches == ["some"], "the changed conversation's row alone, then the snapshot"
    with no_cache():
        assert printed(cli) == after


def test_a_young_file_is_verified_by_the_long_way_until_it_settles(
    tmp_path: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file changed within ``RACY_NS`` of the look proves nothing by its identity: its row holds for no look,
    so each listing looks it up (and hashes it) until it is old enough."""
    monkeypatch.setattr(freshness, "RACY_NS", 10**18)
    root = settle(copy_fixture("workspace", tmp_path / "ws"))
    cli = Cli(root)
    first = printed(cli)
    for _ in range(2):
        with rows_read() as fetches:
            assert printed(cli) == first
        assert fetches, "a row that holds for no look is looked up again"
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    printed(cli)
    with rows_read() as fetches:
        assert printed(cli) == first
    assert fetches == []


def test_a_folder_name_that_is_not_utf8_lists_the_long_way(tmp_path: Path, user_data: Path) -> None:
    """No snapshot holds a path that does not encode; the listing is the long way's every time."""
    root = settle(copy_fixture("workspace", tmp_path / "ws"))
    folder = _events(root, 0).parent
    os.rename(folder, os.fsencode(folder.parent) + b"/" + os.fsencode(folder.name).replace(b"-", b"-\xff", 1))
    cli = Cli(root)
    with no_cache():
        long_way = printed(cli)
    for _ in range(2):
        with rows_read() as fetches:
            assert printed(cli) == long_way
        assert fetches == ["all", "all"], "text and JSON, each the long way"


def test_an_unreadable_conversation_s_user_local_folder_renamed_is_named_where_it_is_now(
    tmp_path: Path, user_data: Path
) -> None:
    """An unreadable conversation is listed by its folder's name (the user-local copy's when there is one): a
    rename of that folder changes no look of the copy read, but the folders are part of a row's key."""
    root = tmp_path / "ws"
    folder = root / ".jp" / "conversations" / "17800000030-work"
    folder.mkdir(parents=True)
    (root / ".jp" / ".id").write_text("w1\n")
    (folder / "events.json").write_text("{broken")
    (folder / "metadata.json").write_text('{"title": "t"}')
    local = user_data / "workspace" / "ws-w1" / "conversations" / "17800000030-local"
    local.mkdir(parents=True)
    settle(root)
    cli = Cli(root)
    agree("both copies", cli)
    local.rename(local.with_name("17800000030-renamed"))
    agree("the user-local folder renamed", cli)
    assert "17800000030-renamed" in printed(cli)[0][1]


def test_a_workspace_whose_path_is_not_utf8_lists_the_long_way(tmp_path: Path, user_data: Path) -> None:
    root = Path(os.fsdecode(os.fsencode(tmp_path) + b"/ws\xff"))
    (root / ".jp" / "conversations").mkdir(parents=True)
    cli = Cli(root)
    with no_cache():
        long_way = printed(cli)
    assert long_way[0][0] == 0
    assert printed(cli) == printed(cli) == long_way
    copy_fixture("workspace", tmp_path / "fixture")
    shutil.copytree(tmp_path / "fixture" / ".jp" / "conversations", root / ".jp" / "conversations", dirs_exist_ok=True)
    settle(root)
    with no_cache():
        long_way = printed(cli)
    assert printed(cli) == printed(cli) == long_way
